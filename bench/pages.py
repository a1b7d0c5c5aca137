"""Each page's server time, and the weight and draw time of the heaviest pages:
``uv run python bench/pages.py [--part server|weight|both] [--repeat N]``.

Both parts set up a throwaway SQLite database in a temporary folder (migrate, ``load_catalog``:
the demo catalog with its quotes) and sign in with Django's test client.

``server``: a superuser requests each page ``N`` times after one warm-up. Prints per page the
median wall time and the median CPU time of this process (the server's work: routing, queries,
engine, charts, templates; no network, no browser). Then finishes a 100 000-path run of
``bench/uncertain-h100-fleet.json`` in this process and times the scenario and run pages of it
(the run page: stored result and cost curves, every figure and table, key figures, assumptions;
its charts are cached after the first view, which is timed apart), its downloads, and the charts
alone. Target: under 300 ms a page.

``weight``: an analyst asks the 70B question (``costapp.ask.presets.EXAMPLE_QUESTION``: fine-tune
a 70B model, then serve it at 20 M tokens a day) and the 8B question (the second of
``costapp.ask.presets.LEAD_QUESTIONS``: 2 B tokens a day growing 50 % a year over 60 months, 14
options and a mix sized jointly, the heaviest run page) through ``POST /ask/``; for each, its
answer page, the run page of its run, the run's read-only link and its scenario's builder page
are then weighed (the bytes of their HTML) and drawn in headless Chromium (``/usr/bin/chromium``,
driven by Playwright) at 1440 px against a threaded WSGI server of the app in this process: the
time from the navigation's start until every chart is drawn and fitted (``static/js/charts.js``
marks each ``data-settled``; the builder page, which has none, until it has loaded), the median
of ``N`` loads (at least 3) after one warm-up. Targets: under 300 KB of HTML, drawn in under 2 s.
Each figure is printed with its target, met or missed."""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))


def _timed(action: Callable[[], object], repeat: int) -> tuple[float, float]:
    """Median wall and CPU seconds of ``action`` over ``repeat`` calls after one warm-up."""
    action()
    walls, cpus = [], []
    for _ in range(repeat):
        wall, cpu = time.perf_counter(), time.process_time()
        action()
        walls.append(time.perf_counter() - wall)
        cpus.append(time.process_time() - cpu)
    return statistics.median(walls), statistics.median(cpus)


def _server(repeat: int) -> None:
    """Each page's server time (the ``server`` part)."""
    from django.contrib.auth import get_user_model
    from django.test import Client

    from costapp.reports.claims import CLAIMS
    from hardware.models import InstanceOffer

    user = get_user_model().objects.create_superuser("bench", password=None)
    client = Client()
    client.force_login(user)
    offer = InstanceOffer.objects.get(provider__slug="aws", instance_type="p5.48xlarge")
    pages = [
        "/",
        "/gpus/",
        "/prices/",
        "/prices/?gpu=h100-sxm&billing=spot&ordering=usd_per_gpu_hour",
        f"/offers/{offer.pk}/",
        "/quotes/",
        "/quotes/dedicated/new/",
        "/claims/",
        *(f"/claims/{claim.slug}/" for claim in CLAIMS),
    ]
    print(f"server time per page, median of {repeat} after a warm-up [ms]")
    print(f"{'page':<62} {'wall':>8} {'CPU':>8}")
    for url in pages:

        def get(url: str = url) -> None:
            response = client.get(url)
            if response.status_code != 200:
                raise SystemExit(f"{url} answered {response.status_code}")

        wall, cpu = _timed(get, repeat)
        print(f"{url:<62} {wall * 1000:>8.1f} {cpu * 1000:>8.1f}")

    import json

    from django.core.cache import cache

    from costapp import charts
    from costapp.models import Scenario
    from costapp.runs import pipeline

    document = json.loads((ROOT / "bench" / "uncertain-h100-fleet.json").read_text())
    document["simulation"]["paths"] = 100_000
    scenario = Scenario.objects.create(owner=user, name="bench: 100 000 paths", document=document)
    wall, cpu = time.perf_counter(), time.process_time()
    run = pipeline.run_create(scenario=scenario)  # in this process: no broker configured
    run_wall, run_cpu = time.perf_counter() - wall, time.process_time() - cpu
    if run.status != "succeeded":
        raise SystemExit(f"the 100 000-path run ended {run.status}: {run.error}")
    print(
        f"({'finishing the 100 000-path run, once':<60} {run_wall * 1000:>8.1f} {run_cpu * 1000:>8.1f})"
    )
    for url in (
        "/scenarios/",
        f"/scenarios/{scenario.pk}/",
        "/runs/",
        f"/runs/{run.pk}/",
        f"/runs/{run.pk}/status/",
        f"/runs/{run.pk}/run.xlsx",
        f"/runs/{run.pk}/result.json",
        f"/api/v1/runs/{run.pk}/monthly.csv",
    ):

        def get(url: str = url) -> None:
            response = client.get(url)
            if response.status_code != 200:
                raise SystemExit(f"{url} answered {response.status_code}")

        wall, cpu = _timed(get, repeat)
        print(f"{url + ' (100 000 paths)':<62} {wall * 1000:>8.1f} {cpu * 1000:>8.1f}")

    def build() -> None:
        assert run.result is not None
        charts.result_charts(run.result, run.cost_curves)

    wall, cpu = _timed(build, repeat)
    label = "charts of the run page alone (figures + tables, curves stored)"
    print(f"{label:<62} {wall * 1000:>8.1f} {cpu * 1000:>8.1f}")

    def first_view() -> None:
        cache.clear()
        response = client.get(f"/runs/{run.pk}/")
        if response.status_code != 200:
            raise SystemExit(f"/runs/{run.pk}/ answered {response.status_code}")

    wall, cpu = _timed(first_view, repeat)
    label = f"/runs/{run.pk}/ first view (charts not yet cached)"
    print(f"{label:<62} {wall * 1000:>8.1f} {cpu * 1000:>8.1f}")


KB = 1000
WEIGHT_TARGET_KB = 300.0
DRAW_TARGET_S = 2.0
DRAW_WIDTH = 1440


def _verdict(value: float, target: float) -> str:
    return "met" if value < target else "MISSED"


def _serve() -> tuple[str, Callable[[], None]]:
    """The app (static files included, by WhiteNoise) on a threaded WSGI server on a free local
    port, in a thread of this process: its origin, and how to stop it."""
    import threading
    from socketserver import ThreadingMixIn
    from wsgiref.simple_server import WSGIRequestHandler, WSGIServer, make_server

    from django.core.wsgi import get_wsgi_application

    class Quiet(WSGIRequestHandler):
        def log_message(self, format: str, *args: object) -> None:  # noqa: A002
            pass

    class Threaded(ThreadingMixIn, WSGIServer):
        daemon_threads = True

    server = make_server(
        "127.0.0.1", 0, get_wsgi_application(), server_class=Threaded, handler_class=Quiet
    )
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()

    def stop() -> None:
        server.shutdown()
        server.server_close()

    return f"http://127.0.0.1:{server.server_port}", stop


FITTED = """() => Array.from(document.querySelectorAll("[data-figure]")).every(el =>
  !el.getClientRects().length || el.dataset.settled)"""
"""JavaScript: every chart on the page drawn and fitted (``static/js/charts.js``)."""


def _main_thread_s(cdp: Any) -> float:
    """How long the page's main thread has been busy since the page's navigation [s] (Chromium's
    ``TaskDuration``): the drawing's own work, whatever else the machine is doing."""
    metrics = cdp.send("Performance.getMetrics")["metrics"]
    return float(next(m["value"] for m in metrics if m["name"] == "TaskDuration"))


def _question_pages(client: Any, user: Any, name: str, data: dict) -> dict[str, str]:
    """Asks a question and waits for its answer: its pages to weigh, by label."""
    from bench.ask import _ask
    from costapp.runs.links import run_link_create

    _wall, question = _ask(client, data)
    run = question.run  # type: ignore[attr-defined]
    _link, key = run_link_create(run=run, user=user)
    return {
        f"the {name} question's answer page": f"/ask/{question.pk}/",  # type: ignore[attr-defined]
        f"the {name} question's run page": f"/runs/{run.pk}/",
        f"the {name} question's run's read-only link": f"/shared/{key}/",
        f"the {name} question's scenario in the builder": f"/scenarios/{run.scenario_id}/edit/",
    }


def _weight(repeat: int) -> None:
    """The 70B and 8B questions' answer pages, their runs' pages and read-only links and their
    scenarios' builder pages: weight and draw time (the ``weight`` part)."""
    import os

    os.environ.setdefault("DJANGO_ALLOW_ASYNC_UNSAFE", "true")  # Playwright's loop, this thread
    from django.contrib.auth import get_user_model
    from django.contrib.auth.models import Group
    from django.test import Client
    from playwright.sync_api import sync_playwright

    from costapp.ask.presets import EXAMPLE_QUESTION, LEAD_QUESTIONS

    user = get_user_model().objects.create_user("bench-analyst")
    user.groups.add(Group.objects.get(name="analyst"))
    client = Client()
    client.force_login(user)
    eight_b = next(q for label, q in LEAD_QUESTIONS.items() if "8B" in label)
    pages = {
        **_question_pages(client, user, "70B", EXAMPLE_QUESTION),
        **_question_pages(client, user, "8B", eight_b),
    }
    origin, stop = _serve()
    try:
        with sync_playwright() as playwright:
            browser = playwright.chromium.launch(
                executable_path="/usr/bin/chromium",
                headless=True,
                args=["--no-sandbox", "--disable-gpu", "--no-first-run"],
            )
            context = browser.new_context(viewport={"width": DRAW_WIDTH, "height": 900})
            session = client.cookies["sessionid"].value
            context.add_cookies([{"name": "sessionid", "value": session, "url": origin}])
            page = context.new_page()
            page.set_default_timeout(120_000)
            cdp = context.new_cdp_session(page)
            cdp.send("Performance.enable")
            for label, url in pages.items():
                response = client.get(url)
                if response.status_code != 200:
                    raise SystemExit(f"{url} answered {response.status_code}")
                kb = len(response.content) / KB
                charts = response.content.count(b"data-figure=")
                draws, busy = [], []
                for _ in range(max(repeat, 3) + 1):  # the first a warm-up
                    page.goto(origin + url)
                    page.wait_for_function(FITTED)
                    draws.append(page.evaluate("() => performance.now()") / 1000)
                    busy.append(_main_thread_s(cdp))
                draw, main = statistics.median(draws[1:]), statistics.median(busy[1:])
                print(f"{label} ({url.split('/')[1]}, {charts} charts)")
                print(f"  HTML: {kb:.1f} KB; target < {WEIGHT_TARGET_KB:g} KB: "
                      f"{_verdict(kb, WEIGHT_TARGET_KB)}")  # fmt: skip
                print(f"  drawn in Chromium at {DRAW_WIDTH} px: {draw:.2f} s (median of "
                      f"{len(draws) - 1}, navigation to every chart fitted); target < "
                      f"{DRAW_TARGET_S:g} s: {_verdict(draw, DRAW_TARGET_S)}; the page's main "
                      f"thread busy {main:.2f} s of it")  # fmt: skip
            browser.close()
    finally:
        stop()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--part", choices=("server", "weight", "both"), default="both")
    parser.add_argument("--repeat", type=int, default=5, help="timed requests (loads) per page")
    args = parser.parse_args()

    from bench.throwaway import throwaway_django

    throwaway_django("gpu-tco-bench-")
    import logging

    logging.disable(logging.INFO)
    if args.part in ("server", "both"):
        _server(args.repeat)
    if args.part in ("weight", "both"):
        _weight(args.repeat)


if __name__ == "__main__":
    main()
