"""Every page an admin reaches from the dashboard, in a real browser (headless Chromium), with a
finished run and the comparison of two runs: no console error and no page error (a script or
style the Content-Security-Policy blocks is one), the policy's header on every page, no broken
link, a label on every form control; every page laid out to fit at 1440, 1280 and 390 px wide
(``tests/browser/layout.py``: nothing wider than its box outside the scroll containers, no text
of a chart overlapping another, leaving the chart or under its toolbar, no two labels of an axis
alike, no number in exponent form; a run's and an answer's key figures on a phone's first
screen); and full-page screenshots of the main pages
at 1440 and 390 px in ``artifacts/screenshots/``.

The crawl follows the links of each page (same site; downloads and the API left out) and visits
one address per kind of page: per URL route and set of query parameters (the admin's pages per
route alone), so a list of 500 offers costs one offer page, not 500.
"""

from dataclasses import dataclass, field
from urllib.parse import parse_qsl, urlsplit

import pytest
from django.contrib.auth.models import User
from django.urls import Resolver404, resolve

from costapp.csp import HEADER as CSP_HEADER
from costapp.models import Scenario
from costapp.runs import pipeline
from tests.browser.layout import (
    EXPONENTS,
    FIRST_SCREEN,
    FITTED,
    KEY_FIGURES,
    KEY_FIGURES_END,
    KEY_FIGURES_PAGES,
    OVERFLOWS,
    PLOT_TEXT,
    WIDTHS,
)
from tests.browser.support import PASSWORD, SCREENSHOTS, finished_run, log_in
from tests.conftest import tasks_run_in_process
from tests.costapp.test_pages import sourced_document

pytestmark = [pytest.mark.browser, pytest.mark.long, pytest.mark.django_db(transaction=True)]

SKIPPED_PREFIXES = ("/api/", "/logout/", "/admin/logout/", "/static/")
SKIPPED_SUFFIXES = (".csv", ".xlsx", ".json", "/delete/")
"""Downloads, and the admin's delete confirmations (a button only; one per model would cost
a quarter of the crawl)."""
SCREENSHOT_NAMES = {
    "home": "dashboard.png",
    "gpus": "gpus.png",
    "prices": "prices.png",
    "quotes": "quotes.png",
    "offer": "offer.png",
    "run": "run.png",
    "runs-compare": "compare.png",
    "coverage": "coverage.png",
}
"""The pages photographed, at 1440 px and at 390 px wide: URL name -> file (``-390`` before the
suffix for the phone's), taken on the first visit without a query (for the comparison: with
one)."""
SHOT_WIDTHS = (1440, 390)
PRICE_PAGES = ("home", "prices", "gpu-cheapest-page", "offer", "run", "token-prices")
"""The pages that show a catalog price (a run's, in its sources): each must show one at least.
On every page, each catalog price (``data-catalog-price``) says its confidence in words in its
row, and every cell of a price-per-hour column holding a figure is such a price."""
UNSAID = """() => {
  const words = /^(High|Medium|Low) confidence$/;
  const prices = Array.from(document.querySelectorAll("[data-catalog-price]"));
  const unsaid = prices.filter(el => {
    const row = el.closest("tr, li, p") || el.parentElement;
    return !Array.from(row.querySelectorAll(".confidence strong"))
      .some(s => words.test(s.textContent.trim()));
  }).map(el => "no confidence: " + (el.closest("tr, li, p") || el).innerText.slice(0, 120));
  // every figure of a price column is a catalog price (a dated market observation included)
  const columns = 'td[data-label="USD per GPU-hour"], td[data-label="USD/GPU-h"], '
    + 'td.usd-per-gpu-hour, td.usd-per-hour, td[data-label^="USD per million"]';
  const unmarked = Array.from(document.querySelectorAll(columns))
    .filter(td => td.textContent.includes("$"))
    .filter(td => !td.matches("[data-catalog-price]"))
    .map(td => "not marked: " + td.closest("tr").innerText.slice(0, 120));
  return {count: prices.length, problems: unsaid.concat(unmarked)};
}"""


def shot_file(name: str, width: int) -> str:
    file = SCREENSHOT_NAMES[name]
    return file if width == 1440 else file.replace(".png", f"-{width}.png")


UNLABELLED = """() => Array.from(document.querySelectorAll("input, select, textarea"))
  .filter(el => !["hidden", "submit", "reset", "button", "image"].includes(el.type))
  .filter(el => el.getClientRects().length > 0)  // not rendered (display: none): not on the page
  .filter(el => {
    if (el.labels && el.labels.length) return false;  // label[for] or a wrapping label
    if ((el.getAttribute("aria-label") || "").trim()) return false;
    const ids = (el.getAttribute("aria-labelledby") || "").split(/\\s+/).filter(Boolean);
    return !(ids.length && ids.every(id => document.getElementById(id)));
  })
  .map(el => el.outerHTML.slice(0, 160))"""


def page_kind(url: str) -> tuple[str, str, tuple[str, ...]] | None:
    """What makes two addresses the same kind of page (None: not crawled): the URL route, and
    outside the admin the names of the query parameters."""
    parts = urlsplit(url)
    path = parts.path
    if path.startswith(SKIPPED_PREFIXES) or path.endswith(SKIPPED_SUFFIXES):
        return None
    try:
        match = resolve(path)
    except Resolver404:
        return ("unresolved", path, ())  # visited, to be reported as broken
    if path.startswith("/admin/"):
        return (match.route, match.view_name, ())
    keys = tuple(sorted({key for key, _value in parse_qsl(parts.query, keep_blank_values=True)}))
    return (match.route, match.view_name, keys)


@dataclass
class Crawl:
    """What a crawl found: the addresses visited and every problem, by kind."""

    visited: list[str] = field(default_factory=list)
    kinds: set = field(default_factory=set)
    errors: list[str] = field(default_factory=list)
    broken: list[str] = field(default_factory=list)
    without_policy: list[str] = field(default_factory=list)
    unsaid: list[str] = field(default_factory=list)
    unlabelled: dict[str, list[str]] = field(default_factory=dict)
    misfits: dict[str, list[str]] = field(default_factory=dict)
    screenshots: dict[str, str] = field(default_factory=dict)

    def assert_clean(self) -> None:
        assert self.errors == [], self.errors
        assert self.broken == [], self.broken
        assert self.without_policy == [], self.without_policy
        assert self.unsaid == [], self.unsaid
        assert self.unlabelled == {}, "\n".join(f"{u}: {m}" for u, m in self.unlabelled.items())
        assert self.misfits == {}, "\n".join(f"{w}: {found}" for w, found in self.misfits.items())


def crawl(
    page,
    origin: str,
    start: list[str],
    *,
    photograph: bool = True,
    skip=(),
    widths=WIDTHS,
    price_pages=PRICE_PAGES,
) -> Crawl:
    """Visit every kind of page reachable from ``start`` (signed in already), checking each at
    every width; each address of ``start`` is visited whatever its kind. ``skip``: path prefixes
    left out besides the usual ones; ``price_pages``: the kinds of page that must show a catalog
    price (each price on any page says its confidence)."""
    found = Crawl()
    page.on(
        "console",
        lambda m: (
            m.type == "error"
            and found.errors.append(f"{page.url}: {m.text} ({m.location.get('url')})")
        ),
    )
    page.on("pageerror", lambda e: found.errors.append(f"{page.url}: {e}"))
    queue = list(start)
    always = {url.split("#")[0] for url in start}
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    while queue:
        url = queue.pop(0).split("#")[0]
        kind = page_kind(url)
        if not url.startswith(origin) or kind is None:
            continue
        if kind in found.kinds and url not in always:
            continue
        always.discard(url)
        if urlsplit(url).path.startswith(tuple(skip)):
            continue
        found.kinds.add(kind)
        response = page.goto(url)
        found.visited.append(url)
        if response is None or response.status >= 400:
            found.broken.append(f"{url}: {response.status if response else 'no response'}")
            continue
        if response.header_value("content-security-policy") != CSP_HEADER:
            found.without_policy.append(url)
        missing = page.evaluate(UNLABELLED)
        if missing:
            found.unlabelled[url] = missing
        name = kind[1]
        has_query = bool(urlsplit(url).query)
        shoot = (
            photograph
            and name in SCREENSHOT_NAMES
            and name not in found.screenshots
            and has_query == (name == "runs-compare")
        )
        for width in widths:
            page.set_viewport_size({"width": width, "height": 900})
            page.wait_for_function(FITTED)
            problems = page.evaluate(OVERFLOWS) + page.evaluate(PLOT_TEXT)
            if width == widths[0]:
                problems += page.evaluate(EXPONENTS)
            if (
                width == 390
                and name in KEY_FIGURES_PAGES
                and page.locator("#key-figures, #answer-sentence").count()
            ):
                end = page.evaluate(KEY_FIGURES_END, KEY_FIGURES)
                if end is None or end > FIRST_SCREEN:
                    problems.append(
                        f"the key figures end {end} px down, beyond a phone's first screen"
                    )
            if problems:
                found.misfits[f"{url} at {width} px"] = problems
            if shoot and width in SHOT_WIDTHS:
                page.screenshot(path=str(SCREENSHOTS / shot_file(name, width)), full_page=True)
        if shoot:
            found.screenshots[name] = url
        said = page.evaluate(UNSAID)
        found.unsaid.extend(f"{url}: {problem}" for problem in said["problems"])
        if name in price_pages and not said["count"]:
            found.unsaid.append(f"{url}: no catalog price on a page of prices")
        links = page.eval_on_selector_all("a[href]", "els => els.map(e => e.href)")
        queue.extend(link for link in links if link.startswith(origin))
    return found


def test_every_page_from_the_dashboard_is_clean_and_labelled(page, live_server, catalog):
    admin = User.objects.create_superuser("root", password=PASSWORD)
    run_a = finished_run(admin, "today")
    run_b = finished_run(admin, "cheaper-cloud")
    sourced_scenario = Scenario.objects.create(
        owner=admin, name="sourced", document=sourced_document()
    )
    with tasks_run_in_process():
        sourced = pipeline.run_create(scenario=sourced_scenario)
    assert sourced.status == "succeeded" and sourced.sources, sourced.error
    page.set_default_timeout(60_000)  # heavy pages on a busy machine
    log_in(page, live_server, "root")
    origin = live_server.url
    # the comparison is reached through the "Compare with…" form, not a link; the run page
    # visited is the one whose figures came from the catalog
    start = [
        origin + "/",
        f"{origin}/runs/{sourced.pk}/",
        f"{origin}/runs/compare/?a={run_a.pk}&b={run_b.pk}",
    ]
    found = crawl(page, origin, start)
    # the builder's offer picker, loaded into the page by a button
    page.goto(f"{origin}/scenarios/new/")
    page.select_option("#id_options-0-type", "cloud")
    page.select_option("#id_options-0-gpu", "h100-sxm")
    page.locator("fieldset.option").first.locator("button.find-offers").click()
    page.locator("#options-0-offers button.use-offer").first.wait_for()
    said = page.evaluate(UNSAID)
    assert said["count"] > 10, said
    found.unsaid.extend(f"offer picker: {problem}" for problem in said["problems"])
    found.assert_clean()
    seen_kinds, visited, screenshots = found.kinds, found.visited, found.screenshots
    assert set(PRICE_PAGES) <= {kind[1] for kind in seen_kinds}
    assert set(screenshots) == set(SCREENSHOT_NAMES), set(SCREENSHOT_NAMES) - set(screenshots)
    for name in SCREENSHOT_NAMES:
        for width in SHOT_WIDTHS:
            assert (SCREENSHOTS / shot_file(name, width)).stat().st_size > 20_000, (name, width)
    # the crawl did reach the pages it should
    paths = {urlsplit(url).path for url in visited}
    for expected in ("/", "/gpus/", "/prices/", "/quotes/", "/claims/", "/scenarios/", "/runs/",
                     "/admin/"):  # fmt: skip
        assert expected in paths, expected
    assert any(path.startswith("/offers/") for path in paths)
    assert f"/runs/{sourced.pk}/" in paths
