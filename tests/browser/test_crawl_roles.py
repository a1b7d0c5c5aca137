"""Every page each role reaches from the dashboard, in a real browser, with runs made before and
after format 1.3 and the risk figures (a run stored by engine 1.2.0 without them, a run of
today's engine, and a run of a mix with its joint sizing), all shared by their owner: each page
renders, with no console error, no broken link, a label on every form control, and nothing
overlapping or leaving its box or chart at 1440 and 390 px
(``tests/browser/test_crawl.py``'s checks; the admin's own pages are crawled there)."""

from urllib.parse import urlsplit

import pytest
from django.contrib.auth.models import User

from tests.browser.support import PASSWORD, finished_run, log_in, run_before_format_1_3
from tests.browser.test_crawl import crawl
from tests.roles import user_with_role

pytestmark = [pytest.mark.browser, pytest.mark.long, pytest.mark.django_db(transaction=True)]

ROLES = ("viewer", "analyst", "catalog-editor", "admin")


@pytest.mark.parametrize("role", ROLES)
def test_every_role_reads_every_page_with_runs_before_and_after_format_1_3(
    page, live_server, catalog, role
):
    owner = user_with_role("owner", "analyst", password=PASSWORD)
    before = run_before_format_1_3(owner, shared=True)
    after = finished_run(owner, "today", shared=True)
    mix = finished_run(owner, "mix", shared=True)
    if role == "admin":
        User.objects.create_superuser("reader", password=PASSWORD)
    else:
        user_with_role("reader", role, password=PASSWORD)
    page.set_default_timeout(60_000)
    log_in(page, live_server, "reader")
    origin = live_server.url
    start = [
        origin + "/",
        f"{origin}/runs/{before.pk}/",
        f"{origin}/runs/{after.pk}/?budget=2.5M",
        f"{origin}/runs/{mix.pk}/",
        f"{origin}/runs/compare/?a={before.pk}&b={after.pk}",
    ]
    found = crawl(
        page,
        origin,
        start,
        photograph=False,
        skip=("/admin/",),
        widths=(1440, 390),
        price_pages=("home", "prices", "offer"),
    )
    found.assert_clean()
    paths = {urlsplit(url).path for url in found.visited}
    assert {f"/runs/{before.pk}/", f"/runs/{mix.pk}/", "/runs/compare/"} <= paths
    # the run pages themselves: before, the risk panel without the stored figures; after, whole
    page.goto(f"{origin}/runs/{before.pk}/")
    assert page.locator("#risk-not-stored").count() == 1
    page.goto(f"{origin}/runs/{mix.pk}/")
    assert page.locator("#risk-unused tbody tr").count() == 2
    assert page.locator("#chart-risk-leader").count() == 1
