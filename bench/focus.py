"""Benchmark of the FOCUS forward plan's export: ``uv run python bench/focus.py [--paths 10000]``.

On a throwaway SQLite database with the shipped catalog, runs in-process a 120-month scenario of
10 options (on-demand elastic and kept running, spot, three commitments, dedicated servers, two
bought fleets, one financed) over ``--paths`` paths, then streams through
``GET /api/v1/runs/{id}/focus/`` every option as CSV and as Parquet, on the document's own values
and at P90, each chunk dropped as soon as it arrives (after one export untimed, so that the
modules an export imports are loaded). For each export it prints the rows, bytes,
wall time and peak memory: the ``tracemalloc`` peak of Python's and numpy's allocations during
the export plus the most the Arrow memory pool has held since the process began (pyarrow allocates
outside Python's allocator; an upper bound for each export). Target: under 100 MB for every export.
"""

from __future__ import annotations

import argparse
import copy
import json
import sys
import time
import tracemalloc
from collections.abc import Iterator
from pathlib import Path
from typing import cast

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

MB = 1_000_000
TARGET_MB = 100.0


def plan_document(paths: int) -> dict:
    """The 120-month, 10-option scenario."""
    base = json.loads((ROOT / "bench" / "uncertain-h100-fleet.json").read_text())
    by_type = {(o["type"], o.get("billing")): o for o in base["options"]}
    on_demand = by_type[("cloud", "on_demand")]
    committed = by_type[("cloud", "committed")]
    dedicated = by_type[("dedicated", None)]
    on_prem = by_type[("on_prem", None)]
    options = [
        {**on_demand, "name": "On-demand, elastic"},
        {**on_demand, "name": "On-demand, kept running", "scaling": "fixed"},
        {**on_demand, "name": "Spot", "billing": "spot", "interruption_overhead": 0.15},
    ]
    for gpus, term in ((32, 12), (48, 36), (64, 36)):
        options.append(
            {
                **committed,
                "name": f"Commit {gpus} GPUs, {term} months",
                "committed_gpus": gpus,
                "term_months": term,
            }
        )
    options.append({**dedicated, "name": "Dedicated servers"})
    options.append({**on_prem, "name": "Bought"})
    options.append(
        {**on_prem, "name": "Bought, financed", "financing": {"apr": 0.07, "term_months": 36}}
    )
    options.append({**dedicated, "name": "Dedicated servers, twice as many", "servers": 16})
    document = copy.deepcopy(base)
    document["name"] = "Ten options over ten years"
    document["horizon_months"] = 120
    document["options"] = options
    document["simulation"] = {**document["simulation"], "paths": paths}
    return document


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--paths", type=int, default=10_000)
    args = parser.parse_args()

    from bench.throwaway import throwaway_django

    throwaway_django("gpu-tco-focus-bench-")
    import pyarrow as pa
    from django.contrib.auth import get_user_model
    from django.contrib.auth.models import Group
    from django.http import StreamingHttpResponse
    from django.test import Client

    from costapp.models import Scenario
    from costapp.runs import pipeline

    user = get_user_model().objects.create_user("bench-focus")
    user.groups.add(Group.objects.get(name="analyst"))
    scenario = Scenario.objects.create(
        owner=user, name="focus bench", document=plan_document(args.paths)
    )
    started = time.perf_counter()
    run = pipeline.run_create(scenario=scenario)
    run.refresh_from_db()
    assert run.status == "succeeded", run.error
    print(
        f"run: 120 months x {len(run.result['options'])} options x {args.paths} paths "
        f"in {time.perf_counter() - started:.1f} s"
    )
    client = Client()
    client.force_login(user)
    warm_up = client.get(f"/api/v1/runs/{run.pk}/focus/", {"format": "parquet"})
    b"".join(
        cast(Iterator[bytes], cast(StreamingHttpResponse, warm_up).streaming_content)
    )  # the modules an export imports, loaded once untimed
    pool = pa.default_memory_pool()
    worst = 0.0
    for option in range(1, len(run.result["options"]) + 1):
        for percentile in ("", "P90"):
            for file_format in ("csv", "parquet"):
                tracemalloc.start()
                began = time.perf_counter()
                response = client.get(
                    f"/api/v1/runs/{run.pk}/focus/",
                    {"option": str(option), "percentile": percentile, "format": file_format},
                )
                assert response.status_code == 200, response.content
                size = 0
                for chunk in cast(
                    Iterator[bytes], cast(StreamingHttpResponse, response).streaming_content
                ):
                    size += len(chunk)
                _current, peak = tracemalloc.get_traced_memory()
                tracemalloc.stop()
                seconds = time.perf_counter() - began
                arrow = pool.max_memory() or 0  # the most it ever held: an upper bound
                peak_mb = (peak + arrow) / MB
                worst = max(worst, peak_mb)
                print(
                    f"option {option:2d} {percentile or 'own values':10s} {file_format:7s} "
                    f"{size / MB:7.2f} MB out in {seconds:5.2f} s, peak {peak_mb:6.1f} MB"
                )
    verdict = "met" if worst < TARGET_MB else "missed"
    print(f"largest export peak: {worst:.1f} MB (target < {TARGET_MB:.0f} MB): target {verdict}")


if __name__ == "__main__":
    main()
