"""Server time of each page: ``uv run python bench/pages.py [--repeat N]``.

Sets up a throwaway SQLite database in a temporary folder (migrate, ``load_catalog``: the demo
catalog with its quotes), signs in a superuser with Django's test client, and requests each page
``N`` times after one warm-up. Prints per page the median wall time and the median CPU time of
this process (the server's work: routing, queries, engine, charts, templates; no network, no
browser). Then finishes a 100 000-path run of ``bench/uncertain-h100-fleet.json`` in this process
and times the scenario and run pages of it (the run page: stored result and cost curves, every
figure and table, key figures, assumptions; its charts are cached after the first view, which is
timed apart), its downloads, and the charts alone. Target: under
300 ms a page.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path

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


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=5, help="timed requests per page")
    args = parser.parse_args()

    from bench.throwaway import throwaway_django

    throwaway_django("gpu-tco-bench-")
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
    print(f"server time per page, median of {args.repeat} after a warm-up [ms]")
    print(f"{'page':<62} {'wall':>8} {'CPU':>8}")
    for url in pages:

        def get(url: str = url) -> None:
            response = client.get(url)
            if response.status_code != 200:
                raise SystemExit(f"{url} answered {response.status_code}")

        wall, cpu = _timed(get, args.repeat)
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

        wall, cpu = _timed(get, args.repeat)
        print(f"{url + ' (100 000 paths)':<62} {wall * 1000:>8.1f} {cpu * 1000:>8.1f}")

    def build() -> None:
        assert run.result is not None
        charts.result_charts(run.result, run.cost_curves)

    wall, cpu = _timed(build, args.repeat)
    label = "charts of the run page alone (figures + tables, curves stored)"
    print(f"{label:<62} {wall * 1000:>8.1f} {cpu * 1000:>8.1f}")

    def first_view() -> None:
        cache.clear()
        response = client.get(f"/runs/{run.pk}/")
        if response.status_code != 200:
            raise SystemExit(f"/runs/{run.pk}/ answered {response.status_code}")

    wall, cpu = _timed(first_view, args.repeat)
    label = f"/runs/{run.pk}/ first view (charts not yet cached)"
    print(f"{label:<62} {wall * 1000:>8.1f} {cpu * 1000:>8.1f}")


if __name__ == "__main__":
    main()
