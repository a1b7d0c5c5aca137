"""The builder keeps every click, in a real browser (headless Chromium): nothing moves between
the press and the release of a button. A field's change fires when it loses focus, on the press
of the next button, and a select whose list is open commits what was typed into it on that
press; what the change shows or hides, and an offer list arriving during a press, are put on the
page after the release. The mouse is pressed and released in two steps, and the button's box is
read before the press, at the press and at the release."""

import json
import re
from pathlib import Path

import pytest

from costapp.models import Scenario
from tests.browser.support import console_problems, log_in
from tests.costapp.runs_helpers import analyst

pytestmark = [pytest.mark.browser, pytest.mark.services, pytest.mark.django_db(transaction=True)]

SHOTS = Path("/tmp/shots-builder")
LAST = "api_price_change_per_year"
"""The last uncertain quantity of the Monte Carlo section: its fields are the section's last."""


def fill_scenario(page) -> None:
    """A valid scenario: one steady workload, one cloud option priced by hand, a simulation whose
    last quantity is triangular with its low and mode given (its high is typed by the test)."""
    page.fill("#id_name", "Rent at an uncertain token price")
    page.select_option("#id_workloads-0-type", "steady")
    page.fill("#id_workloads-0-name", "Fleet")
    page.fill("#id_workloads-0-gpus", "16")
    page.select_option("#id_options-0-type", "cloud")
    page.fill("#id_options-0-name", "Rent")
    page.fill("#id_options-0-usd_per_gpu_hour", "2.5")
    page.check("#id_simulate")
    page.fill("#id_paths", "1000")
    page.select_option(f"#id_{LAST}_dist", "triangular")
    page.fill(f"#id_{LAST}_low", "-0.3")
    page.fill(f"#id_{LAST}_mode", "-0.1")


RECORD = """(selector) => {
    const box = (name) => {
        const r = document.querySelector(selector).getBoundingClientRect();
        console.info('box ' + JSON.stringify({name, x: r.x, y: r.y, width: r.width, height: r.height}));
    };
    // at the moment the page gets the press and the release (before the click they make)
    window.addEventListener('mousedown', () => box('press'), {capture: true, once: true});
    window.addEventListener('mouseup', () => box('release'), {capture: true, once: true});
}"""


def record(page, selector: str) -> dict[str, dict]:
    """From now on the page notes the box of ``selector`` at the next press and release, into
    the mapping returned (by console messages: the click may have started a navigation by the
    time they are read)."""
    noted: dict[str, dict] = {}

    def note(message) -> None:
        if message.type == "info" and message.text.startswith("box "):
            box = json.loads(message.text[4:])
            noted[box.pop("name")] = box

    page.on("console", note)
    page.locator(selector).scroll_into_view_if_needed()
    page.evaluate(RECORD, selector)
    return noted


def press_and_release(page, selector: str, noted: dict, *, during_press=None) -> dict[str, dict]:
    """Press the mouse on the middle of ``selector`` (``noted`` by ``record``) and release it
    there, in two steps; the element's box (in the viewport) before the press, at the press and
    at the release, as the page saw it when each came, and as read after the press (and after
    ``during_press``, which runs while the button is held)."""
    button = page.locator(selector)
    before = button.bounding_box()
    page.mouse.move(before["x"] + before["width"] / 2, before["y"] + before["height"] / 2)
    page.mouse.down()
    boxes = {"before": before, "after press": button.bounding_box()}
    if during_press is not None:
        during_press()
        boxes["held"] = button.bounding_box()
    page.mouse.up()
    for _ in range(100):
        if len(noted) == 2:
            break
        page.wait_for_timeout(50)
    return {**boxes, **noted}


def wait_for(page, held: list, seconds: float = 30) -> None:
    """Until a request held at the route is in ``held`` (the route's handler runs while the
    test waits)."""
    for _ in range(int(seconds * 20)):
        if held:
            return
        page.wait_for_timeout(50)
    raise AssertionError("no request reached the route")


def same_box(boxes: dict[str, dict]) -> bool:
    first = boxes["before"]
    return all(
        all(abs(box[key] - first[key]) < 0.5 for key in ("x", "y", "width", "height"))
        for box in boxes.values()
    ) and {"press", "release"} <= set(boxes)


@pytest.mark.parametrize("width", [1440, 390])
@pytest.mark.parametrize("last_field", ["number", "open-select"])
def test_save_stays_put_from_press_to_release_after_the_last_monte_carlo_field(
    page, live_server, catalog, width, last_field
):
    """Typed into the last Monte Carlo field, then Save pressed: the button's box is the same
    before the press, at the press and at the release, and one click saves the scenario. The last
    field is the triangular's high (its change fires at the press), or the distribution's select,
    its list open and "u" (uniform: low and high, the mode hidden) typed into it, committed by
    the press."""
    user = analyst("finance")
    problems = console_problems(page)
    page.set_default_timeout(60_000)
    page.set_viewport_size({"width": width, "height": 800})
    log_in(page, live_server, "finance", "pw-finance")
    page.goto(live_server.url + "/scenarios/new/")
    fill_scenario(page)
    page.click(f"#id_{LAST}_high")
    page.keyboard.type("0.2")
    SHOTS.mkdir(parents=True, exist_ok=True)
    noted = record(page, "#save-button")
    page.screenshot(path=str(SHOTS / f"builder-save-{last_field}-{width}.png"))
    expected = "triangular"
    if last_field == "open-select":
        page.click(f"#id_{LAST}_dist")  # its list opens; what is typed goes to the list
        page.keyboard.type("u")
        expected = "uniform"
    # the save is held at the server's door until the release has been measured
    held = []
    page.route(
        "**/scenarios/new/",
        lambda route: held.append(route) if route.request.method == "POST" else route.continue_(),
    )
    with page.expect_request(lambda r: r.method == "POST"):
        boxes = press_and_release(page, "#save-button", noted)
    assert same_box(boxes), boxes
    wait_for(page, held)
    assert len(held) == 1  # the one click sent the form
    held[0].continue_()
    page.wait_for_url(re.compile(r"/scenarios/\d+/$"))
    scenario = Scenario.objects.get(owner=user)
    drawn = scenario.document["simulation"][LAST]
    assert drawn["dist"] == expected and drawn["low"] == -0.3 and drawn["high"] == 0.2
    assert problems == []


@pytest.mark.parametrize("width", [1440, 390])
def test_an_offer_list_arriving_during_a_press_waits_for_the_release(
    page, live_server, catalog, width
):
    """The offer picker's answer comes while the mouse is held on "Add an option" below it: the
    list is put in place after the release, the button does not move under the pointer, and the
    click adds the option."""
    analyst("finance")
    problems = console_problems(page)
    page.set_default_timeout(60_000)
    page.set_viewport_size({"width": width, "height": 800})
    log_in(page, live_server, "finance", "pw-finance")
    page.goto(live_server.url + "/scenarios/new/")
    page.select_option("#id_workloads-0-type", "steady")
    page.fill("#id_workloads-0-gpus", "8")
    page.select_option("#id_options-0-type", "cloud")
    page.select_option("#id_options-0-gpu", "h100-sxm")
    held = []
    page.route("**/scenarios/offers/**", lambda route: held.append(route))
    page.evaluate(
        """() => document.addEventListener('htmx:beforeSwap',
             () => { window.offersCame = (window.offersCame || 0) + 1; })"""
    )
    page.click("fieldset.option >> nth=0 >> button.find-offers")
    wait_for(page, held)
    rows = page.locator("#options-rows > fieldset.row")
    count = rows.count()

    def answer() -> None:
        held[0].continue_()
        page.wait_for_function("() => window.offersCame === 1")
        page.evaluate("() => new Promise(r => requestAnimationFrame(() => setTimeout(r, 50)))")
        assert page.locator("#options-0-offers table").count() == 0  # not yet: still pressed

    noted = record(page, "button[data-add=options]")
    boxes = press_and_release(page, "button[data-add=options]", noted, during_press=answer)
    assert same_box(boxes), boxes
    page.locator("#options-0-offers table").wait_for()  # after the release
    assert rows.count() == count + 1  # the click was kept
    SHOTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(SHOTS / f"builder-offers-{width}.png"), full_page=True)
    assert problems == []
