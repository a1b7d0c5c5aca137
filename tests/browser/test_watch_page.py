"""The budget watch page in a real browser: a plan watched from its form, then a price refresh
that moves its price; the event shows, newest first, linking both runs side by side, and the
page fits at every width."""

import pytest

from costapp.models import WatchEvent
from costapp.runs import pipeline
from hardware.refresh.pipeline import price_refresh
from tests.browser.layout import OVERFLOWS, WIDTHS
from tests.browser.support import PASSWORD, SCREENSHOTS, log_in
from tests.conftest import tasks_run_in_process
from tests.costapp.factories import ScenarioFactory
from tests.costapp.runs_helpers import analyst
from tests.costapp.watch.test_budget_watch import OFFER, lambda_feed
from tests.tco.helpers import scenario

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def test_a_plan_watched_from_the_page_shows_its_event(page, live_server, catalog, tmp_path):
    owner = analyst("lead")
    owner.set_password(PASSWORD)
    owner.save()
    document = scenario("serve-70b-host-or-api")
    option = document["options"][0]
    option.pop("usd_per_gpu_hour")
    option["offer"] = OFFER
    saved = ScenarioFactory(owner=owner, name="Serve 70B", document=document)
    with tasks_run_in_process():
        run = pipeline.run_create(scenario=saved)
    assert run.status == "succeeded", run.error
    log_in(page, live_server, "lead")
    page.goto(f"{live_server.url}/watch/", timeout=120_000)
    page.select_option("#watch-scenario", str(saved.pk))
    page.select_option("#watch-option", option["name"])
    page.fill("#watch-budget", "1,000,000")
    page.fill("#watch-years", "300000 300000 300000")
    page.click("#watch-button")
    page.locator("#watches-table").wait_for()
    with tasks_run_in_process():
        price_refresh(source="skypilot", paths=[lambda_feed(tmp_path, "26.00")], provider="lambda")
    event = WatchEvent.objects.get()
    assert event.status == "priced", event.message
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    for width in WIDTHS:
        page.set_viewport_size({"width": width, "height": 900})
        page.goto(f"{live_server.url}/watch/", timeout=120_000)
        item = page.locator(f"#watch-event-{event.pk}")
        assert "was $" in item.inner_text()
        assert page.evaluate(OVERFLOWS) == [], width
        page.screenshot(path=str(SCREENSHOTS / f"watch-{width}.png"), full_page=True)
    page.locator(f"#watch-event-{event.pk} a").click()
    page.wait_for_url(f"{live_server.url}/runs/compare/*")
    assert f"a={event.old_run_id}" in page.url and f"b={event.new_run_id}" in page.url
