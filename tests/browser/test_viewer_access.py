"""A viewer in a real browser (headless Chromium): no link to what a viewer may not do, and
every edit page (a quote's form, the scenario builder, the admin) answers 403 or sends the viewer
to a login page; the shared scenarios and runs are read, never another user's private ones
(docs/api.md: 404)."""

import re

import pytest
from django.contrib.auth.models import Group, User

from hardware.models import DedicatedQuote, PurchaseQuote
from tests.browser.support import PASSWORD, finished_run, log_in
from tests.costapp.runs_helpers import analyst

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def test_a_viewer_cannot_reach_edit_pages(page, live_server, catalog):
    owner = analyst("owner")
    run = finished_run(owner)
    run.scenario.shared = True
    run.scenario.save(update_fields=["shared"])
    viewer = User.objects.create_user("vic", password=PASSWORD)
    viewer.groups.add(Group.objects.get_or_create(name="viewer")[0])
    dedicated = DedicatedQuote.objects.first()
    purchase = PurchaseQuote.objects.first()
    assert dedicated and purchase  # the demonstration quotes load_catalog ships
    log_in(page, live_server, "vic")

    nav = page.get_by_role("navigation", name="Main")
    assert nav.get_by_role("link", name="Quotes").count() == 1
    for shown in ("Scenarios", "Runs"):
        assert nav.get_by_role("link", name=shown, exact=True).count() == 1, shown
    assert nav.get_by_role("link", name="Admin", exact=True).count() == 0
    page.goto(live_server.url + "/quotes/")
    assert page.get_by_role("link", name=re.compile(r"^New .* quote$")).count() == 0
    assert page.get_by_role("link", name="Edit").count() == 0

    forbidden = [
        "/quotes/dedicated/new/",
        "/quotes/purchase/new/",
        f"/quotes/dedicated/{dedicated.pk}/edit/",
        f"/quotes/purchase/{purchase.pk}/edit/",
        "/scenarios/new/",
        f"/scenarios/{run.scenario_id}/edit/",
        "/admin/",
        "/admin/hardware/dedicatedquote/",
        f"/admin/hardware/dedicatedquote/{dedicated.pk}/change/",
    ]
    outcomes = {}
    for path in forbidden:
        response = page.goto(live_server.url + path)
        outcomes[path] = (
            response.status if "/login/" not in page.url else f"login: {page.url}",
            page.locator(
                "form#quote-form, #run-button, #changelist, form#dedicatedquote_form, #builder-form"
            ).count(),
        )
    for path, (outcome, forms) in outcomes.items():
        assert outcome == 403 or str(outcome).startswith("login: "), (path, outcome)
        assert forms == 0, path
    # the admin sends a non-staff user to its own login page
    assert str(outcomes["/admin/"][0]).startswith(f"login: {live_server.url}/admin/login/")
    assert DedicatedQuote.objects.get(pk=dedicated.pk).usd_per_server_month == (
        dedicated.usd_per_server_month
    )
    # the shared run reads, with no Run button; a private one is not found
    page.goto(f"{live_server.url}/scenarios/{run.scenario_id}/")
    assert page.locator("#run-button").count() == 0 and page.locator("#read-only").count() == 1
    assert page.goto(f"{live_server.url}/runs/{run.pk}/").status == 200
    run.scenario.shared = False
    run.scenario.save(update_fields=["shared"])
    assert page.goto(f"{live_server.url}/runs/{run.pk}/").status == 404
