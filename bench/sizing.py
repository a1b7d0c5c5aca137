"""Benchmark of a sizing sweep: ``uv run python bench/sizing.py``.

Scenario: ``bench/size-the-fleet-sweep.json`` (``size-the-fleet`` with a simulation of 10 000
paths × 36 months and one sweep of 64 commitments, 0 … 252 GPUs by 4, objective ``mean_npv``), or
the one ``--scenario`` names, such as ``bench/served-and-trained-sweep.json`` (format 1.2: 64
commitments of a lightly served 70B model whose resident replica binds, a fine-tune whose goodput
falls under failures, an ``api`` option).
Measures, on one thread (``OMP_NUM_THREADS``, ``OPENBLAS_NUM_THREADS``, ``MKL_NUM_THREADS`` = 1,
set before numpy is imported; threadpoolctl as well when installed):

- the sweep: :func:`costapp.tco.sizing.run` on the built plan (every candidate on every path, the
  figures on the document's own values, mean, P90, shortfall share, best), the median of 5 runs
  after one warm-up, wall and CPU time;
- the same 64 answers the slow way: 64 separate engine runs (:func:`costapp.tco.engine.simulate`
  of the document with each size written in and no sweep), timed once, wall and CPU time; their
  figures are checked against the sweep's (NPV, mean and P90 of the NPV to 1e-9 relative) before
  any figure is printed.

Targets: the sweep under 1 s, and at least 10× faster than the 64 separate runs; each is judged
on wall time and, since other work on a shared machine stretches wall time, on CPU time as well.

Then (format 1.3) a joint sizing of a three-layer mix, ``bench/mix-joint-sizing.json``: own 0 … 9
servers, lease 0 … 3, commit to 0 … 72 GPUs by 8, rent the rest, 400 combinations × 10 000 paths
× 60 months, objective ``tail_npv``: :func:`costapp.tco.sizing.run`, the median of 3 runs after a
warm-up, wall and CPU time, against the target of 4 s on one core; five of its combinations are
checked first against plain engine runs of the mix at those sizes (NPV, mean, P90 and tail of the
NPV to 1e-9 relative). ``--mix-only`` runs this part alone.
"""

from __future__ import annotations

import os

THREAD_VARIABLES = ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS")
for _name in THREAD_VARIABLES:
    os.environ[_name] = "1"

import argparse  # noqa: E402
import copy  # noqa: E402
import json  # noqa: E402
import math  # noqa: E402
import statistics  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402
from contextlib import AbstractContextManager, nullcontext  # noqa: E402
from pathlib import Path  # noqa: E402
from typing import Any, cast  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

import numpy as np  # noqa: E402

from costapp.tco import (  # noqa: E402
    GpuFigures,
    normalize,
    plan_build,
    simulate,
    sizing,  # noqa: E402  (timed on its own: see the contract in pyproject.toml)
)
from hardware.gpu_table import engine_figures, read_gpu_table  # noqa: E402

SCENARIO = Path(__file__).resolve().parent / "size-the-fleet-sweep.json"
MIX_SCENARIO = Path(__file__).resolve().parent / "mix-joint-sizing.json"
MIX_REPEATS = 3
MIX_TARGET_S = 4.0
REPEATS = 5
RELATIVE = 1e-9
TARGET_S = 1.0
TARGET_RATIO = 10.0


def thread_limit() -> tuple[AbstractContextManager[Any], str]:
    """threadpoolctl's one-thread limit when installed, else nothing more than the variables."""
    try:
        from threadpoolctl import threadpool_limits  # type: ignore[import-not-found]
    except ImportError:
        return nullcontext(), "threadpoolctl not installed: environment variables only"
    return threadpool_limits(limits=1), "threadpoolctl limits=1"


def load_text() -> str:
    """The 1-minute load average and CPU count: other work on the machine slows every timing."""
    return f"load average {os.getloadavg()[0]:.2f} on {os.cpu_count()} CPUs"


def verdict(ok: bool) -> str:
    return "met" if ok else "MISSED"


def separate_runs(
    document: dict[str, Any], gpus: dict[str, GpuFigures], sweep: dict[str, Any]
) -> list[dict[str, Any]]:
    """The swept option's figures in one plain engine run per candidate (size written in)."""
    figures = []
    for size in sweep["candidates"]:
        sized = copy.deepcopy(document)
        sized["sizing"] = None
        for option in sized["options"]:
            if option["name"] == sweep["option"]:
                option[sweep["field"]] = size
        result = simulate(sized, gpus)
        figures.append(next(o for o in result["options"] if o["name"] == sweep["option"]))
    return figures


def main(scenario: Path = SCENARIO) -> None:
    # The catalog cannot name the engine's type; engine_figures gives exactly its keys.
    gpus = {row.slug: cast(GpuFigures, engine_figures(row)) for row in read_gpu_table()}
    document = json.loads(scenario.read_text(encoding="utf-8"))
    plan = plan_build(normalize(document, gpus).document, gpus)
    paths = int(plan.inputs["simulation"]["paths"])
    limit, limit_text = thread_limit()
    with limit:
        [sweep] = sizing.run(plan)  # warm-up
        candidates = len(sweep["candidates"])
        print(
            f"scenario {scenario.name}: one sweep of {candidates} sizes of "
            f'"{sweep["option"]}" ({sweep["field"]}) over {paths} paths x '
            f"{plan.horizon_months} months, {len(plan.options)} options; one thread "
            f"({', '.join(f'{v}=1' for v in THREAD_VARIABLES)}; {limit_text}); "
            f"numpy {np.__version__}, Python {sys.version.split()[0]}; {load_text()}"
        )
        walls: list[float] = []
        cpus: list[float] = []
        for _ in range(REPEATS):
            start, start_cpu = time.perf_counter(), time.process_time()
            [again] = sizing.run(plan)
            walls.append(time.perf_counter() - start)
            cpus.append(time.process_time() - start_cpu)
            assert again == sweep, "the sweep must give the same result every time"
        wall, cpu = statistics.median(walls), statistics.median(cpus)
        start, start_cpu = time.perf_counter(), time.process_time()
        plain = separate_runs(document, gpus, sweep)
        plain_wall = time.perf_counter() - start
        plain_cpu = time.process_time() - start_cpu
    worst = 0.0
    for i, option in enumerate(plain):
        for key in ("npv_usd", "mean_npv_usd", "p90_npv_usd"):
            got, want = sweep[key][i], option[key]
            if not math.isclose(got, want, rel_tol=RELATIVE, abs_tol=0.0):
                raise SystemExit(f"size {sweep['candidates'][i]}: {key} {got!r} != {want!r}")
            worst = max(worst, abs(got - want) / max(abs(want), 1.0))
    print(
        f"sweep: median of {REPEATS} runs {wall * 1e3:.0f} ms "
        f"(runs {', '.join(f'{t * 1e3:.0f}' for t in walls)} ms; median CPU time "
        f"{cpu * 1e3:.0f} ms); best {sweep['best']} GPUs, mean NPV "
        f"{sweep['best_objective_usd']:,.0f} USD"
    )
    ratio, cpu_ratio = plain_wall / wall, plain_cpu / cpu
    print(
        f"{candidates} separate engine runs, run once: {plain_wall:.2f} s (CPU {plain_cpu:.2f} s); "
        f"the sweep is {ratio:.1f}x faster in wall time ({cpu_ratio:.1f}x in CPU time); "
        f"sweep vs separate runs: NPV, mean and P90 of NPV {worst:.1e} max relative difference"
    )
    print(f"after the runs: {load_text()}")
    print(
        f"targets: sweep < {TARGET_S:.0f} s: {verdict(wall < TARGET_S)} "
        f"(CPU time: {verdict(cpu < TARGET_S)}); "
        f">= {TARGET_RATIO:.0f}x faster than {candidates} separate runs: "
        f"{verdict(ratio >= TARGET_RATIO)} (CPU time: {verdict(cpu_ratio >= TARGET_RATIO)})"
    )


def mix_joint_sizing(scenario: Path = MIX_SCENARIO) -> None:
    """The joint sizing of a mix (format 1.3): timed, and checked against plain runs."""
    gpus = {row.slug: cast(GpuFigures, engine_figures(row)) for row in read_gpu_table()}
    document = json.loads(scenario.read_text(encoding="utf-8"))
    plan = plan_build(normalize(document, gpus).document, gpus)
    paths = int(plan.inputs["simulation"]["paths"])
    limit, limit_text = thread_limit()
    with limit:
        [sweep] = sizing.run(plan)  # warm-up
        print(
            f"\nscenario {scenario.name}: a joint sizing of {len(sweep['candidates'])} "
            f"combinations of the {len(sweep['candidates'][0])} layers of "
            f'"{sweep["option"]}" over {paths} paths x {plan.horizon_months} months, '
            f"{len(plan.options)} options, objective {sweep['objective']}; one thread "
            f"({limit_text}); {load_text()}"
        )
        worst = 0.0
        picks = [0, 57, 133, 271, len(sweep["candidates"]) - 1]
        for i in picks:
            sized = copy.deepcopy(document)
            sized["sizing"] = None
            for option in sized["options"]:
                if option["name"] == sweep["option"]:
                    for layer, size in zip(option["layers"], sweep["candidates"][i], strict=True):
                        layer["size"] = size
            own = next(o for o in simulate(sized, gpus)["options"] if o["name"] == sweep["option"])
            for key in ("npv_usd", "mean_npv_usd", "p90_npv_usd", "tail_npv_usd"):
                got, want = sweep[key][i], own[key]
                if not math.isclose(got, want, rel_tol=RELATIVE, abs_tol=0.0):
                    raise SystemExit(f"sizes {sweep['candidates'][i]}: {key} {got!r} != {want!r}")
                worst = max(worst, abs(got - want) / max(abs(want), 1.0))
        walls: list[float] = []
        cpus: list[float] = []
        for _ in range(MIX_REPEATS):
            start, start_cpu = time.perf_counter(), time.process_time()
            [again] = sizing.run(plan)
            walls.append(time.perf_counter() - start)
            cpus.append(time.process_time() - start_cpu)
            assert again == sweep, "the joint sizing must give the same result every time"
    wall, cpu = statistics.median(walls), statistics.median(cpus)
    print(
        f"joint sizing: median of {MIX_REPEATS} runs {wall:.2f} s (runs "
        f"{', '.join(f'{t:.2f}' for t in walls)} s; median CPU time {cpu:.2f} s); best "
        f"{sweep['best']}, worst-tenth NPV {sweep['best_objective_usd']:,.0f} USD; "
        f"{len(picks)} combinations against plain engine runs: {worst:.1e} max relative difference"
    )
    print(f"after the runs: {load_text()}")
    print(
        f"target: joint sizing < {MIX_TARGET_S:.0f} s: {verdict(wall < MIX_TARGET_S)} "
        f"(CPU time: {verdict(cpu < MIX_TARGET_S)})"
    )


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--scenario",
        type=Path,
        default=SCENARIO,
        help="a scenario with one sweep and a simulation (format 1.2: bench/served-and-trained-sweep.json)",
    )
    parser.add_argument(
        "--mix-only", action="store_true", help="only the joint sizing of a mix (format 1.3)"
    )
    arguments = parser.parse_args()
    if not arguments.mix_only:
        main(arguments.scenario.resolve())
    mix_joint_sizing()
