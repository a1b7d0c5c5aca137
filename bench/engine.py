"""Benchmark of the Monte Carlo engine: ``uv run python bench/engine.py``.

Scenario: ``bench/uncertain-h100-fleet.json`` (5 options, 36 months, three uncertain inputs), or
the one ``--scenario`` names, such as ``bench/served-and-trained.json`` (format 1.2: a 70B model
served lightly, so its resident replica binds, a fine-tune whose goodput falls under failures,
an ``api`` option, four uncertain inputs) or ``bench/uncertain-h100-fleet-mix.json`` (format 1.3:
the same fleet with a mix of owned, leased and committed layers and a rest as a sixth option).
Measures, on one thread (``OMP_NUM_THREADS``, ``OPENBLAS_NUM_THREADS``, ``MKL_NUM_THREADS`` = 1,
set before numpy is imported; threadpoolctl as well when installed):

- wall time of :func:`costapp.tco.montecarlo.run` (draws, per-path costs, statistics), the median
  of 5 runs after one warm-up, at 10 000 and 100 000 paths;
- peak memory of one run, two ways: the ``tracemalloc`` peak (Python and numpy allocations made
  during the run), and the peak resident set size of the whole process (``VmHWM``, reset just
  before the run) in a fresh child process that builds the plan and does one run; the 400 MB
  target is judged on the latter;
- the same 10 000-path job through a plain Python loop (``bench/loop.py``: one path and one month
  at a time, same draws, same summary statistics), timed once, after checking that its per-path
  totals and NPVs equal the vectorized ones to 1e-9 relative.
"""

from __future__ import annotations

import os

THREAD_VARIABLES = ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS")
for _name in THREAD_VARIABLES:
    os.environ[_name] = "1"

import argparse  # noqa: E402
import json  # noqa: E402
import resource  # noqa: E402
import statistics  # noqa: E402
import subprocess  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402
import tracemalloc  # noqa: E402
from contextlib import AbstractContextManager, nullcontext  # noqa: E402
from pathlib import Path  # noqa: E402
from typing import Any, cast  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

import numpy as np  # noqa: E402

from bench.loop import loop_costs  # noqa: E402
from costapp.tco import GpuFigures, Plan, normalize, plan_build  # noqa: E402
from costapp.tco import montecarlo as mc  # noqa: E402  (its steps timed: see pyproject.toml)
from hardware.gpu_table import engine_figures, read_gpu_table  # noqa: E402

SCENARIO = Path(__file__).resolve().parent / "uncertain-h100-fleet.json"
_CHOSEN: list[Path] = []


def scenario_path() -> Path:
    """The scenario benchmarked: ``--scenario``, else :data:`SCENARIO`."""
    return _CHOSEN[0] if _CHOSEN else SCENARIO


SIZES = (10_000, 100_000)
REPEATS = 5
LOOP_PATHS = 10_000
RELATIVE = 1e-9
TARGET_10K_S = 0.100
TARGET_RATIO = 50.0
TARGET_100K_S = 1.0
TARGET_100K_MB = 400.0


def thread_limit() -> tuple[AbstractContextManager[Any], str]:
    """threadpoolctl's one-thread limit when installed, else nothing more than the variables."""
    try:
        from threadpoolctl import threadpool_limits  # type: ignore[import-not-found]
    except ImportError:
        return nullcontext(), "threadpoolctl not installed: environment variables only"
    return threadpool_limits(limits=1), "threadpoolctl limits=1"


def build() -> tuple[Plan, dict[str, Any], dict[str, Any], dict[str, GpuFigures]]:
    """The benchmark scenario's plan, simulation settings, normalised inputs and GPU figures."""
    # The catalog cannot name the engine's type; engine_figures gives exactly its keys.
    gpus = {row.slug: cast(GpuFigures, engine_figures(row)) for row in read_gpu_table()}
    document = json.loads(scenario_path().read_text(encoding="utf-8"))
    inputs = normalize(document, gpus).document
    plan = plan_build(inputs, gpus)
    return plan, dict(inputs["simulation"]), inputs, gpus


def with_paths(simulation: dict[str, Any], paths: int) -> dict[str, Any]:
    return {**simulation, "paths": paths}


def median_wall_s(plan: Plan, simulation: dict[str, Any]) -> tuple[float, list[float], float]:
    """Median and all of :data:`REPEATS` wall times of ``run`` [s], after one warm-up run, and
    the median CPU time of this process over the same runs [s] (less sensitive to other work on
    the machine; the targets are judged on wall time)."""
    mc.run(plan, simulation)
    times: list[float] = []
    cpu: list[float] = []
    for _ in range(REPEATS):
        start, start_cpu = time.perf_counter(), time.process_time()
        mc.run(plan, simulation)
        times.append(time.perf_counter() - start)
        cpu.append(time.process_time() - start_cpu)
    return statistics.median(times), times, statistics.median(cpu)


def tracemalloc_peak_mb(plan: Plan, simulation: dict[str, Any]) -> float:
    """Peak of the memory traced by ``tracemalloc`` during one run [MB = 1e6 bytes]."""
    tracemalloc.start()
    tracemalloc.reset_peak()
    mc.run(plan, simulation)
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    return peak / 1e6


def child_rss(paths: int) -> dict[str, float]:
    """Memory of a fresh process doing one run [MB]: see :func:`rss_mode`."""
    output = subprocess.run(
        [
            sys.executable,
            str(Path(__file__).resolve()),
            "--rss",
            str(paths),
            "--scenario",
            str(scenario_path()),
        ],
        check=True,
        capture_output=True,
        text=True,
    ).stdout
    return json.loads(output.strip().splitlines()[-1])


def _status_mb(field: str) -> float:
    """A ``VmRSS``/``VmHWM`` line of ``/proc/self/status`` [MB = 2**20 bytes]."""
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith(field + ":"):
            return int(line.split()[1]) / 1024
    raise LookupError(field)


def rss_mode(paths: int) -> None:
    """In the child: after imports and the plan, reset the peak RSS (Linux ``clear_refs`` 5),
    do one run, and print as JSON the RSS before the run and the peak RSS of the process during
    the run [MB]. Falls back to ``ru_maxrss`` (the peak since start) where the reset is refused."""
    plan, simulation, _, _ = build()
    limit, _ = thread_limit()
    with limit:
        before = _status_mb("VmRSS")
        try:
            Path("/proc/self/clear_refs").write_text("5")
            reset = True
        except OSError:
            reset = False
        mc.run(plan, with_paths(simulation, paths))
        if reset:
            peak = _status_mb("VmHWM")
        else:
            peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(json.dumps({"before_run_mb": before, "peak_mb": peak, "peak_reset": reset}))


def loop_run(
    inputs: dict[str, Any],
    gpus: dict[str, GpuFigures],
    simulation: dict[str, Any],
) -> tuple[np.ndarray, np.ndarray, np.ndarray, mc.Summary]:
    """The plain-loop job: same draws, per-path loop, same statistics. Returns totals, NPVs,
    feasibility (each (O, P)) and the summary."""
    paths = int(simulation["paths"])
    draws: list[dict[str, float]] = []
    for b in range(mc.block_count(paths)):
        block = {name: values.tolist() for name, values in mc.block_draws(simulation, b).items()}
        n = mc.block_size(paths, b)
        draws.extend({name: values[i] for name, values in block.items()} for i in range(n))
    totals, npvs, shortfalls, months = loop_costs(inputs, gpus, draws)
    total = np.array(totals)
    npv = np.array(npvs)
    feasible = ~(np.array(shortfalls) > 0.0)
    cumulative = np.swapaxes(np.cumsum(np.array(months), axis=2), 1, 2).copy()
    summary = mc.summarize(total, npv, feasible, cumulative)
    return total, npv, feasible, summary


def load_text() -> str:
    """The 1-minute load average and CPU count: other work on the machine slows every timing."""
    return f"load average {os.getloadavg()[0]:.2f} on {os.cpu_count()} CPUs"


def max_relative(a: np.ndarray, b: np.ndarray) -> float:
    return float(np.max(np.abs(a - b) / np.maximum(np.abs(b), 1.0)))


def verdict(ok: bool) -> str:
    return "met" if ok else "MISSED"


def main() -> None:
    plan, simulation, inputs, gpus = build()
    limit, limit_text = thread_limit()
    print(
        f"scenario {scenario_path().name}: {len(plan.options)} options x {plan.horizon_months} months; "
        f"one thread ({', '.join(f'{v}=1' for v in THREAD_VARIABLES)}; {limit_text}); "
        f"numpy {np.__version__}, Python {sys.version.split()[0]}; {load_text()}"
    )
    figures: dict[int, dict[str, float]] = {}
    with limit:
        for paths in SIZES:
            sim = with_paths(simulation, paths)
            wall, times, cpu = median_wall_s(plan, sim)
            traced = tracemalloc_peak_mb(plan, sim)
            rss = child_rss(paths)
            figures[paths] = {"wall_s": wall, "cpu_s": cpu, "traced_mb": traced, **rss}
            print(
                f"{paths:>7} paths: median of {REPEATS} runs {wall * 1e3:.1f} ms "
                f"(runs {', '.join(f'{t * 1e3:.1f}' for t in times)} ms; "
                f"median CPU time {cpu * 1e3:.1f} ms); "
                f"tracemalloc peak {traced:.1f} MB; "
                f"peak RSS of a fresh process during one run {rss['peak_mb']:.1f} MB "
                f"(RSS after imports and plan, before the run: {rss['before_run_mb']:.1f} MB"
                f"{'' if rss['peak_reset'] else '; peak since start: the reset was refused'})"
            )

        sim = with_paths(simulation, LOOP_PATHS)
        vectorized = mc.blocks_compute(plan, sim, range(mc.block_count(LOOP_PATHS)))
        start, start_cpu = time.perf_counter(), time.process_time()
        total, npv, feasible, loop_summary = loop_run(inputs, gpus, sim)
        loop_s = time.perf_counter() - start
        loop_cpu_s = time.process_time() - start_cpu
    total_error = max_relative(total, vectorized.total_usd)
    npv_error = max_relative(npv, vectorized.npv_usd)
    if total_error > RELATIVE or npv_error > RELATIVE:
        raise SystemExit(
            f"the loop disagrees with the engine: totals {total_error:.2e}, NPVs {npv_error:.2e}"
        )
    if not np.array_equal(feasible, vectorized.feasible):
        raise SystemExit("the loop disagrees with the engine on feasibility")
    engine_summary = mc.blocks_merge([vectorized])
    p50_error = max_relative(loop_summary.p50_usd, engine_summary.p50_usd)
    ratio = loop_s / figures[LOOP_PATHS]["wall_s"]
    cpu_ratio = loop_cpu_s / figures[LOOP_PATHS]["cpu_s"]
    print(
        f"plain Python loop, {LOOP_PATHS} paths (one path and one month at a time, same draws, "
        f"same statistics), run once: {loop_s:.2f} s (CPU {loop_cpu_s:.2f} s); vectorized is {ratio:.1f}x "
        f"faster in wall time ({cpu_ratio:.1f}x in CPU time); "
        f"loop vs engine: totals {total_error:.1e}, NPVs {npv_error:.1e}, P50 {p50_error:.1e} "
        "max relative difference"
    )
    print(f"after the runs: {load_text()}")
    ten, hundred = figures[10_000], figures[100_000]
    print(
        "targets: "
        f"10 000 paths <= {TARGET_10K_S * 1e3:.0f} ms: {verdict(ten['wall_s'] <= TARGET_10K_S)}; "
        f">= {TARGET_RATIO:.0f}x the loop: {verdict(ratio >= TARGET_RATIO)}; "
        f"100 000 paths <= {TARGET_100K_S:.0f} s: {verdict(hundred['wall_s'] <= TARGET_100K_S)}; "
        f"<= {TARGET_100K_MB:.0f} MB (peak RSS of the whole process): "
        f"{verdict(hundred['peak_mb'] <= TARGET_100K_MB)}"
    )


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rss", type=int, metavar="PATHS", help=argparse.SUPPRESS)
    parser.add_argument("--scenario", type=Path, help="a scenario with a simulation")
    arguments = parser.parse_args()
    if arguments.scenario is not None:
        _CHOSEN.append(arguments.scenario.resolve())
    if arguments.rss is not None:
        rss_mode(arguments.rss)
    else:
        main()
