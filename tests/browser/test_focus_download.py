"""The FOCUS plan's download on the run page and through its read-only link, in a real browser:
the form fits at every width, and choosing an option, P90 and Parquet downloads that plan."""

import pyarrow.parquet as pq
import pytest

from costapp.runs import links
from tests.browser.layout import OVERFLOWS, WIDTHS
from tests.browser.support import PASSWORD, SCREENSHOTS, finished_run, log_in
from tests.costapp.runs_helpers import analyst

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def test_the_plan_downloads_from_the_run_page_and_the_link(page, live_server, catalog):
    owner = analyst("lead")
    owner.set_password(PASSWORD)
    owner.save()
    run = finished_run(owner)
    log_in(page, live_server, "lead")
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    for width in WIDTHS:
        page.set_viewport_size({"width": width, "height": 900})
        page.goto(f"{live_server.url}/runs/{run.pk}/", timeout=120_000)
        form = page.locator("#focus-form")
        form.wait_for()
        assert page.evaluate(OVERFLOWS) == [], width
        form.screenshot(path=str(SCREENSHOTS / f"focus-form-{width}.png"))
    names = [o["name"] for o in run.result["options"]]
    cheapest = names.index(run.result["cheapest"]) + 1
    assert page.locator("#focus-option").input_value() == str(cheapest)
    page.select_option("#focus-option", "2")
    page.select_option("#focus-percentile", "P90")
    page.select_option("#focus-format", "parquet")
    with page.expect_download() as download_info:
        page.click("#focus-download")
    download = download_info.value
    assert download.suggested_filename == f"run-{run.pk}-option-2-p90-focus.parquet"
    table = pq.read_table(download.path())
    assert set(table.column("x_OptionName").to_pylist()) == {names[1]}
    assert set(table.column("x_Percentile").to_pylist()) == {"P90"}

    _link, key = links.run_link_create(run=run, user=owner)
    page.goto(f"{live_server.url}/shared/{key}/")
    with page.expect_download() as download_info:
        page.click("#focus-download")
    assert download_info.value.suggested_filename == (
        f"run-{run.pk}-option-{cheapest}-deterministic-focus.csv"
    )
