"""Each role in a real browser (headless Chromium): a catalog editor and an admin open the admin
from the navigation and make an edit of their role, and cannot make one outside it; a viewer reads
a shared run, downloads its CSV, and cannot start a run (page and API: 403); an anonymous holder
of a run's read-only link sees that run only, no quote vendor, and nothing once the link is
revoked or has expired."""

import csv
import re
from datetime import timedelta
from decimal import Decimal

import pytest
from django.contrib.auth.models import Group, User
from django.utils import timezone

from accounts.roles import ADMIN, ANALYST, CATALOG_EDITOR, VIEWER
from costapp.models import RunLink, SimulationRun
from hardware.models import DedicatedQuote
from tests.browser.support import PASSWORD, log_in
from tests.costapp.runs_helpers import quoted_run

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def member(username: str, role: str) -> User:
    user = User.objects.create_user(username, password=PASSWORD)
    user.groups.add(Group.objects.get_or_create(name=role)[0])
    return user


def test_a_catalog_editor_edits_a_quote_in_the_admin_and_nothing_outside_the_catalog(
    page, live_server, catalog
):
    member("eddie", CATALOG_EDITOR)
    quote = DedicatedQuote.objects.order_by("id").first()
    assert quote is not None
    log_in(page, live_server, "eddie")
    page.get_by_role("navigation", name="Main").get_by_role("link", name="Admin").click()
    page.wait_for_url(live_server.url + "/admin/")
    assert page.get_by_role("link", name="Dedicated quotes").count() >= 1
    assert page.get_by_role("link", name="Refresh runs").count() == 0
    assert page.get_by_role("link", name="Users").count() == 0
    page.goto(f"{live_server.url}/admin/hardware/dedicatedquote/{quote.pk}/change/")
    page.fill("#id_usd_per_server_month", "12345.67")
    page.click("input[name=_save]")
    page.wait_for_url(live_server.url + "/admin/hardware/dedicatedquote/")
    quote.refresh_from_db()
    assert quote.usd_per_server_month == Decimal("12345.67")
    assert quote.history.first().history_user.username == "eddie"
    for path in ("/admin/hardware/refreshrun/", "/admin/auth/user/", "/admin/auth/user/add/"):
        assert page.goto(live_server.url + path).status == 403, path


def test_an_admin_gives_a_role_in_the_admin_and_cannot_make_a_superuser(page, live_server, catalog):
    member("ada", ADMIN)
    vic = member("vic", VIEWER)
    log_in(page, live_server, "ada")
    page.get_by_role("navigation", name="Main").get_by_role("link", name="Admin").click()
    page.wait_for_url(live_server.url + "/admin/")
    assert page.get_by_role("link", name="Refresh runs").count() >= 1
    assert page.get_by_role("link", name="Users").count() >= 1
    page.goto(f"{live_server.url}/admin/auth/user/{vic.pk}/change/")
    assert page.locator("#id_is_superuser").count() == 0  # shown, not editable
    assert page.locator("#id_is_staff").count() == 0
    analyst = Group.objects.get(name=ANALYST)
    viewer = Group.objects.get(name=VIEWER)
    editor = Group.objects.get(name=CATALOG_EDITOR)
    page.select_option("#id_groups_from", value=str(editor.pk))
    page.click("#id_groups_add")
    page.select_option("#id_groups_to", value=str(viewer.pk))
    page.click("#id_groups_remove")
    page.click("input[name=_save]")
    page.wait_for_url(live_server.url + "/admin/auth/user/")
    vic.refresh_from_db()
    assert set(vic.groups.all()) == {editor} and vic.is_staff  # staff by the role
    assert analyst not in vic.groups.all() and not vic.is_superuser
    # the roles themselves (groups and their permissions) are read-only to an admin
    assert page.goto(live_server.url + "/admin/auth/group/add/").status == 403
    page.goto(f"{live_server.url}/admin/auth/group/{viewer.pk}/change/")
    assert page.locator("input[name=_save]").count() == 0


def test_a_viewer_reads_a_shared_run_downloads_its_csv_and_cannot_run_it(
    page, live_server, catalog
):
    owner = member("olive", ANALYST)
    run, _ = quoted_run(owner, shared=True)
    member("vera", VIEWER)
    log_in(page, live_server, "vera")
    page.locator("#recent-runs").get_by_role("link", name=f"Run {run.pk}").click()
    page.wait_for_url(f"{live_server.url}/runs/{run.pk}/")
    assert "leased" in page.locator("#key-figures").inner_text()
    with page.expect_download() as download_info:
        page.locator("#downloads").get_by_role("link", name="monthly CSV").click()
    with open(download_info.value.path(), newline="") as file:
        header, *rows = list(csv.reader(file))
    assert header[:2] == ["option", "month"] and {r[0] for r in rows} == {"rent", "leased"}
    assert page.locator("#link-button, #cancel-button").count() == 0
    page.goto(f"{live_server.url}/scenarios/{run.scenario_id}/")
    for control in ("#run-button", "#edit-link", "#share-button", "#duplicate-button"):
        assert page.locator(control).count() == 0, control
    assert page.locator("#read-only").count() == 1
    csrf = next(c["value"] for c in page.context.cookies() if c["name"] == "csrftoken")
    headers = {"X-CSRFToken": csrf, "Referer": live_server.url + "/"}
    refused = page.request.post(f"{live_server.url}/scenarios/{run.scenario_id}/", headers=headers)
    assert refused.status == 403
    api = page.request.post(
        f"{live_server.url}/api/v1/scenarios/{run.scenario_id}/runs/",
        headers={**headers, "Content-Type": "application/json"},
        data="{}",
    )
    assert api.status == 403 and api.json()["errors"]
    assert SimulationRun.objects.count() == 1


def test_an_anonymous_link_holder_sees_that_run_only_until_revoked_or_expired(
    page, live_server, catalog
):
    owner = member("olive", ANALYST)
    run, quote = quoted_run(owner)
    other, _ = quoted_run(owner)
    log_in(page, live_server, "olive")
    page.goto(f"{live_server.url}/runs/{run.pk}/")
    page.click("#link-button")
    message = page.locator(".messages").inner_text()
    address = re.search(r"(http://\S+/shared/[\w-]+/)", message)[1]
    page.click("#link-button")  # a second link, to expire
    second = re.search(r"(http://\S+/shared/[\w-]+/)", page.locator(".messages").inner_text())[1]
    page.context.clear_cookies()  # now without an account

    response = page.goto(address)
    assert response.status == 200
    assert page.locator("#key-figures").count() == 1
    assert page.locator("#chart-cumulative .main-svg").count() >= 1
    assert "a quote" in page.locator("#sources-table").inner_text()
    html = page.content()
    assert quote.vendor not in html and quote.reference not in html
    hrefs = page.eval_on_selector_all("a[href]", "links => links.map(a => a.pathname)")
    assert sorted(hrefs) == sorted(f"{address.split(live_server.url)[1]}{name}"
                                   for name in ("monthly.csv", "run.xlsx", "result.json"))  # fmt: skip
    with page.expect_download() as download_info:
        page.locator("#downloads").get_by_role("link", name="monthly CSV").click()
    assert download_info.value.suggested_filename == f"run-{run.pk}-monthly.csv"
    for path in (f"/runs/{run.pk}/", f"/runs/{other.pk}/", "/quotes/"):
        page.goto(live_server.url + path)
        assert "/login/" in page.url, path

    made = RunLink.objects.filter(run=run, expires__lte=timezone.now() + timedelta(days=31))
    assert made.count() == 2 and {link.created_by for link in made} == {owner}
    log_in(page, live_server, "olive")
    page.goto(f"{live_server.url}/runs/{run.pk}/")
    page.locator("#links-table button").first.click()
    assert "revoked" in page.locator(".messages").inner_text()
    RunLink.objects.filter(revoked__isnull=True).update(
        expires=timezone.now() - timedelta(seconds=1)
    )
    page.context.clear_cookies()
    for gone in (address, second):
        assert page.goto(gone).status == 404, gone
        assert quote.vendor not in page.content()
