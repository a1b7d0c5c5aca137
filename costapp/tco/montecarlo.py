"""Monte Carlo uncertainty: the `simulation` section of scenario-format.md.

Each path draws every distribution of the simulation once (the value holds for all its months) and
every option is costed on that same future by :func:`costapp.tco.core.plan_cost`. Paths come in
blocks of :data:`BLOCK_PATHS`; block ``b`` holds paths ``b * BLOCK_PATHS … (b + 1) * BLOCK_PATHS - 1``
(the last block may be partial).

Random streams
--------------
Every (block, distribution) pair has its own stream, a child of the block's ``SeedSequence``::

    np.random.SeedSequence([seed, block_index]).spawn(len(DISTRIBUTIONS))[k]

built directly as ``SeedSequence(entropy=[seed, block_index], spawn_key=(k,))`` (the same object),
where ``k`` is the distribution's fixed position in :data:`DISTRIBUTIONS`. A stream feeds a
``Generator(PCG64(...))`` that always draws a full block of :data:`BLOCK_PATHS` values, of which a
partial last block keeps the first ones. So a path's future depends only on the seed, its own index
and its own distribution: never on how paths are grouped into workers, on the number of paths, or
on which other distributions the document gives.

Splitting a run
---------------
:func:`blocks_compute` costs any set of blocks; :func:`blocks_merge` puts the results of any
grouping back together (sorted by block index) and summarises them, so a run split among workers
equals :func:`run` in one process bit for bit (:func:`block_results_to_payload` and
:func:`block_results_from_payload` carry results between tasks as bytes, exactly). Every
block is costed by its own ``plan_cost`` call on exactly :data:`BLOCK_PATHS` (or, last block, the
remaining) paths, so a block's numbers never depend on what else is computed with it.

Units: money in USD, ``*_usd`` arrays are nominal totals or NPVs per path; months index ``0 … H``.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import NDArray

from . import schema
from .core import Futures, Plan, plan_cost
from .finance import ceil_tolerant
from .payload import arrays_pack, arrays_unpack
from .risk import RiskFigures, commitments_unused, leader_counts, plan_commitments, risk_figures

Array = NDArray[np.float64]
Mask = NDArray[np.bool_]

BLOCK_PATHS = 1000
"""Paths per block; each block has its own random streams."""

CUMULATIVE_PATHS = 10_000
"""Only the first ``min(paths, CUMULATIVE_PATHS)`` paths keep their months (for the fan charts)."""

PERCENTILES = (10.0, 50.0, 90.0)
"""The percentiles reported, linear interpolation (numpy's default method)."""

DISTRIBUTIONS: tuple[str, ...] = schema.SIMULATED_QUANTITIES
"""The uncertain inputs, in the fixed order that numbers their random streams."""

CLIP_LOW: Mapping[str, float] = schema.SIMULATED_CLIP_LOW
"""Lower bound each drawn value is clipped to (the contract's "clipped at ≥ …")."""


# --------------------------------------------------------------------------------------------
# Blocks and draws
# --------------------------------------------------------------------------------------------


def block_count(paths: int) -> int:
    """Number of blocks holding ``paths`` paths (the last one possibly partial)."""
    if paths < 0:
        raise ValueError(f"paths must be >= 0, got {paths}")
    return -(-paths // BLOCK_PATHS)


def block_size(paths: int, block_index: int) -> int:
    """Paths in block ``block_index`` of a run of ``paths`` paths."""
    if not 0 <= block_index < block_count(paths):
        raise ValueError(f"block {block_index} is outside a run of {paths} paths")
    return min(BLOCK_PATHS, paths - block_index * BLOCK_PATHS)


def block_stream(seed: int, block_index: int, distribution: str) -> np.random.Generator:
    """The random stream of one distribution in one block.

    ``SeedSequence(entropy=[seed, block_index], spawn_key=(k,))`` is the ``k``-th child of
    ``SeedSequence([seed, block_index])`` (``k`` = position in :data:`DISTRIBUTIONS`).
    """
    k = DISTRIBUTIONS.index(distribution)
    sequence = np.random.SeedSequence(entropy=[int(seed), int(block_index)], spawn_key=(k,))
    return np.random.Generator(np.random.PCG64(sequence))


def draw(spec: Mapping[str, Any], rng: np.random.Generator, n: int) -> Array:
    """``n`` draws of one distribution, float64 array of shape ``(n,)``, before clipping.

    ``spec`` is ``{"dist": "triangular", "low", "mode", "high"}``, ``{"dist": "normal", "mean",
    "sd"}`` or ``{"dist": "uniform", "low", "high"}``, in the unit of the input it describes. A
    distribution with zero spread gives exactly its value on every path (numpy's triangular would
    reject ``low == high``).
    """
    kind = spec["dist"]
    if kind == "triangular":
        low, mode, high = float(spec["low"]), float(spec["mode"]), float(spec["high"])
        if not low <= mode <= high:
            raise ValueError(f"triangular needs low <= mode <= high, got {low}, {mode}, {high}")
        if low == high:
            return np.full(n, low)
        return rng.triangular(low, mode, high, size=n)
    if kind == "normal":
        mean, sd = float(spec["mean"]), float(spec["sd"])
        if sd < 0:
            raise ValueError(f"normal needs sd >= 0, got {sd}")
        if sd == 0:
            return np.full(n, mean)
        return rng.normal(mean, sd, size=n)
    if kind == "uniform":
        low, high = float(spec["low"]), float(spec["high"])
        if not low <= high:
            raise ValueError(f"uniform needs low <= high, got {low}, {high}")
        if low == high:
            return np.full(n, low)
        return rng.uniform(low, high, size=n)
    raise ValueError(f"unknown distribution {kind!r}")


def block_draws(simulation: Mapping[str, Any], block_index: int) -> dict[str, Array]:
    """The clipped per-path values of block ``block_index``: distribution name → ``(n,)`` array.

    Only the distributions the simulation gives are present. ``n`` is the block's size in a run of
    ``simulation["paths"]`` paths; the values are the first ``n`` of a full block's draws.
    """
    paths = int(simulation.get("paths") or 0)
    seed = int(simulation.get("seed") or 0)
    n = block_size(paths, block_index)
    values: dict[str, Array] = {}
    for name in DISTRIBUTIONS:
        spec = simulation.get(name)
        if spec is None:
            continue
        drawn = draw(spec, block_stream(seed, block_index, name), BLOCK_PATHS)[:n]
        values[name] = np.maximum(drawn, CLIP_LOW[name])
    return values


def block_futures(simulation: Mapping[str, Any], block_index: int) -> Futures:
    """The :class:`Futures` of one block (``None`` where the document's own value holds)."""
    values = block_draws(simulation, block_index)
    return Futures(**{name: values.get(name) for name in DISTRIBUTIONS})


# --------------------------------------------------------------------------------------------
# Computing and merging blocks
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True, eq=False)
class BlockResults:
    """Per-path results of a set of blocks, in ascending block order.

    Attributes
    ----------
    block_indices : the blocks, ascending, each once.
    block_paths : paths in each of those blocks.
    total_usd : (O, n) nominal total per option and path [USD], ``n = sum(block_paths)``.
    npv_usd : (O, n) discounted total per option and path [USD].
    feasible : (O, n) bool, True where the option has no shortfall on the path.
    cumulative_usd : (O, H + 1, k) running sum of the monthly cost [USD] of those paths whose
        index in the run is below :data:`CUMULATIVE_PATHS` (``k`` of them, in path order). Months
        come before paths so that each month's percentiles run over a contiguous row.
    cumulative_percentiles_usd : None, or (3, O, H + 1): the :data:`PERCENTILES` of the
        cumulative cost per month over all the run's months-keeping paths [USD], when these
        results hold every block with such paths and have summarised them already
        (:func:`blocks_reduce`); ``cumulative_usd`` is then empty (``k = 0``).
    cheapest_counts : None, or (O,) on how many of these paths each option is the cheapest
        feasible one (see :func:`summarize`), when :func:`blocks_reduce` counted them already;
        ``feasible`` is then empty (``n = 0`` columns).
    leader_counts, unused_gpu_hours, unused_usd : None, or the risk figures of these paths
        (:mod:`costapp.tco.risk`), with ``risk``: (O, H + 1) on how many paths each option has
        cost least so far by each month, and (K, n) each commitment's unused committed GPU-hours
        and what they cost [GPU-h, USD].
    """

    block_indices: tuple[int, ...]
    block_paths: tuple[int, ...]
    total_usd: Array
    npv_usd: Array
    feasible: Mask
    cumulative_usd: Array
    cumulative_percentiles_usd: Array | None = None
    cheapest_counts: NDArray[np.int64] | None = None
    leader_counts: NDArray[np.int64] | None = None
    unused_gpu_hours: Array | None = None
    unused_usd: Array | None = None


RISK_ARRAYS = ("leader_counts", "unused_gpu_hours", "unused_usd")
"""The optional arrays of :class:`BlockResults` that :func:`blocks_compute` adds with ``risk``."""


def block_results_to_payload(results: BlockResults) -> bytes:
    """:class:`BlockResults` as bytes (``costapp.tco.payload``), exact to the bit: for the task
    queue's storage between a block task and the merge."""
    arrays: dict[str, Any] = {
        "block_indices": np.asarray(results.block_indices, dtype=np.int64),
        "block_paths": np.asarray(results.block_paths, dtype=np.int64),
        "total_usd": results.total_usd,
        "npv_usd": results.npv_usd,
        "feasible": results.feasible,
        "cumulative_usd": results.cumulative_usd,
    }
    if results.cumulative_percentiles_usd is not None:
        arrays["cumulative_percentiles_usd"] = results.cumulative_percentiles_usd
    if results.cheapest_counts is not None:
        arrays["cheapest_counts"] = results.cheapest_counts
    for name in RISK_ARRAYS:
        if getattr(results, name) is not None:
            arrays[name] = getattr(results, name)
    return arrays_pack(arrays)


def block_results_from_payload(payload: bytes) -> BlockResults:
    """The :class:`BlockResults` of :func:`block_results_to_payload`'s bytes (its arrays are
    read-only views of them)."""
    arrays = arrays_unpack(payload)
    return BlockResults(
        block_indices=tuple(int(b) for b in arrays["block_indices"]),
        block_paths=tuple(int(n) for n in arrays["block_paths"]),
        total_usd=arrays["total_usd"],
        npv_usd=arrays["npv_usd"],
        feasible=arrays["feasible"],
        cumulative_usd=arrays["cumulative_usd"],
        cumulative_percentiles_usd=arrays.get("cumulative_percentiles_usd"),
        cheapest_counts=arrays.get("cheapest_counts"),
        **{name: arrays.get(name) for name in RISK_ARRAYS},
    )


@dataclass(frozen=True, eq=False)
class Summary:
    """The statistics of a whole run.

    Attributes
    ----------
    paths : number of paths.
    p10_usd, p50_usd, p90_usd : (O,) percentiles of ``total_usd`` over all paths [USD].
    cumulative_p10_usd, cumulative_p50_usd, cumulative_p90_usd : (O, H + 1) percentiles of the
        cumulative cost per month over the first ``min(paths, CUMULATIVE_PATHS)`` paths [USD].
    probability_cheapest : (O,) share of paths on which the option has the lowest NPV among the
        options without shortfall on that path (ties to the first option) [fraction].
    mean_npv_usd, p90_npv_usd : (O,) mean and 90th percentile of the NPV over all paths [USD]
        (version 1.1), see :func:`npv_statistics`.
    """

    paths: int
    p10_usd: Array
    p50_usd: Array
    p90_usd: Array
    cumulative_p10_usd: Array
    cumulative_p50_usd: Array
    cumulative_p90_usd: Array
    probability_cheapest: Array
    mean_npv_usd: Array
    p90_npv_usd: Array
    tail_npv_usd: Array  # version 1.3: the mean NPV of the worst paths


def _kept_paths(block_index: int, n: int) -> int:
    """How many of block ``block_index``'s ``n`` paths keep their months (index < 10 000)."""
    return min(n, max(0, CUMULATIVE_PATHS - block_index * BLOCK_PATHS))


def blocks_compute(
    plan: Plan,
    simulation: Mapping[str, Any],
    block_indices: Iterable[int],
    *,
    risk: bool = False,
) -> BlockResults:
    """Cost the paths of the given blocks of the run described by ``simulation``.

    ``block_indices`` may come in any order and must not repeat; the result is in ascending block
    order. Each block is costed by its own ``plan_cost`` call on its own paths, so its numbers
    are the same whatever other blocks are computed with it. With ``risk``, the risk figures of
    the paths (:mod:`costapp.tco.risk`) come with them.
    """
    indices = sorted(int(b) for b in block_indices)
    if len(set(indices)) != len(indices):
        raise ValueError(f"block indices repeat: {indices}")
    paths = int(simulation.get("paths") or 0)
    sizes = [block_size(paths, b) for b in indices]
    kept = [_kept_paths(b, n) for b, n in zip(indices, sizes, strict=True)]
    n_options = len(plan.options)
    months = plan.horizon_months + 1
    total = np.empty((n_options, sum(sizes)))
    npv = np.empty((n_options, sum(sizes)))
    feasible = np.empty((n_options, sum(sizes)), dtype=bool)
    cumulative = np.empty((n_options, months, sum(kept)))
    commitments = plan_commitments(plan) if risk else []
    leaders = np.zeros((n_options, months), dtype=np.int64) if risk else None
    unused_hours = np.empty((len(commitments), sum(sizes)))
    unused_usd = np.empty((len(commitments), sum(sizes)))
    start = 0
    cumulative_start = 0
    for b, n, keep in zip(indices, sizes, kept, strict=True):
        futures = block_futures(simulation, b)
        costs = plan_cost(plan, futures, n)
        if leaders is not None:
            leaders += leader_counts(costs)
            hours, usd = commitments_unused(plan, futures, n, commitments)
            unused_hours[:, start : start + n] = hours
            unused_usd[:, start : start + n] = usd
        total[:, start : start + n] = costs.total_usd
        npv[:, start : start + n] = costs.npv_usd
        feasible[:, start : start + n] = ~(costs.shortfall_gpu_hours > 0.0)
        if keep:  # the months, month-major: their running sums are taken below
            np.copyto(
                cumulative[:, :, cumulative_start : cumulative_start + keep],
                costs.monthly_usd[:, :keep, :].transpose(0, 2, 1),
            )
        start += n
        cumulative_start += keep
    running_sums_in_place(cumulative)
    return BlockResults(
        block_indices=tuple(indices),
        block_paths=tuple(sizes),
        total_usd=total,
        npv_usd=npv,
        feasible=feasible,
        cumulative_usd=cumulative,
        leader_counts=leaders,
        unused_gpu_hours=unused_hours if risk else None,
        unused_usd=unused_usd if risk else None,
    )


def cumulative_blocks(paths: int) -> int:
    """How many blocks of a run of ``paths`` paths hold paths that keep their months: blocks
    ``0 …`` this ``- 1``."""
    return block_count(min(paths, CUMULATIVE_PATHS))


def blocks_reduce(
    results: BlockResults, paths: int, *, overwrite_input: bool = False
) -> BlockResults:
    """``results`` with what can be summarised of them before the merge done already, so less
    travels to it and it has less to do, with the same :class:`Summary` bit for bit:

    - the paths on which each option is the cheapest feasible one are counted
      (``cheapest_counts``; a path's winner depends on that path alone, and counts add up
      exactly), and ``feasible`` is dropped;
    - when they hold every block whose paths keep their months in a run of ``paths`` paths, the
      percentiles of the cumulative cost per month are taken (those :func:`summarize` takes of the
      whole run's ``cumulative_usd``: the same rows in the same path order, the same function), so
      ``3 × O × (H + 1)`` numbers travel instead of ``O × (H + 1) × 10 000``.

    ``results`` are left unchanged, unless ``overwrite_input`` lets the percentiles reorder their
    ``cumulative_usd`` in place (for a caller that drops them).
    """
    reduced = results
    if reduced.cheapest_counts is None:
        reduced = dataclasses.replace(
            reduced,
            cheapest_counts=cheapest_counts(reduced.npv_usd, reduced.feasible),
            feasible=reduced.feasible[:, :0],
        )
    needed = set(range(cumulative_blocks(paths)))
    if (
        reduced.cumulative_percentiles_usd is None
        and needed
        and needed <= set(reduced.block_indices)
    ):
        reduced = dataclasses.replace(
            reduced,
            cumulative_usd=reduced.cumulative_usd[:, :, :0],
            cumulative_percentiles_usd=row_percentiles(
                reduced.cumulative_usd, overwrite_input=overwrite_input
            ),
        )
    return reduced


def cheapest_counts(npv_usd: Array, feasible: Mask) -> NDArray[np.int64]:
    """(O,) on how many paths each option has the lowest NPV among the options without
    shortfall on that path (``argmin`` picks the first on a tie); a path with no feasible option
    counts for none. ``npv_usd`` and ``feasible`` are (O, n)."""
    winner = np.argmin(np.where(feasible, npv_usd, np.inf), axis=0)
    return np.bincount(winner[feasible.any(axis=0)], minlength=npv_usd.shape[0]).astype(np.int64)


def running_sums_in_place(cumulative_usd: Array) -> None:
    """Replace the monthly costs ``cumulative_usd`` (O, H + 1, n) [USD] by their running sum over
    the months (axis 1).

    Month by month, ``c[:, m] = c[:, m - 1] + c[:, m]``: the same additions in the same order as
    ``np.cumsum`` along the months (so the same numbers bit for bit), done a whole row of paths at
    a time instead of one path at a time, over every path of the result at once.
    """
    for month in range(1, cumulative_usd.shape[1]):
        np.add(cumulative_usd[:, month - 1], cumulative_usd[:, month], out=cumulative_usd[:, month])


def blocks_merge(results: Sequence[BlockResults], *, tail_fraction: float = 0.1) -> Summary:
    """Merge the block results of a whole run (any grouping, any order) and summarise them.

    The blocks together must be ``0 … B - 1``, each exactly once, all full but the last. The
    merge puts them in block order, so every grouping gives the same arrays and the same
    :class:`Summary` bit for bit. ``results`` are left unchanged.
    """
    (total, npv, cumulative), owned = _merged_arrays(results)
    reduced = [r.cumulative_percentiles_usd for r in results]
    cumulative_percentiles = next((p for p in reduced if p is not None), None)
    counts = np.add.reduce(
        [
            cheapest_counts(r.npv_usd, r.feasible)
            if r.cheapest_counts is None
            else r.cheapest_counts
            for r in results
        ],
        axis=0,
    )
    return summarize(
        total,
        npv,
        None,
        cumulative,
        overwrite_input=owned,
        cumulative_percentiles_usd=cumulative_percentiles,
        cheapest_counts=counts,
        tail_fraction=tail_fraction,
    )


def blocks_risk(plan: Plan, results: Sequence[BlockResults]) -> RiskFigures | None:
    """The risk figures (:mod:`costapp.tco.risk`) of a whole run from its block results (any
    grouping, any order, as :func:`blocks_merge`), the same bit for bit however the blocks were
    split; None when a result was computed without ``risk``."""
    if not results or any(r.leader_counts is None for r in results):
        return None
    pieces: list[tuple[int, int, BlockResults, int]] = []
    for result in results:
        start = 0
        for b, n in zip(result.block_indices, result.block_paths, strict=True):
            pieces.append((b, n, result, start))
            start += n
    pieces.sort(key=lambda piece: piece[0])
    if [piece[0] for piece in pieces] != list(range(len(pieces))):
        raise ValueError("the blocks of a run's risk figures must be 0 … B - 1, each once")

    def merged(name: str) -> Array:
        return np.concatenate([getattr(r, name)[:, s : s + n] for _, n, r, s in pieces], axis=1)

    leaders = np.add.reduce([r.leader_counts for r in results if r.leader_counts is not None])
    paths = sum(piece[1] for piece in pieces)
    return risk_figures(
        plan,
        paths,
        merged("total_usd"),
        leaders,
        merged("unused_gpu_hours"),
        merged("unused_usd"),
    )


def _merged_arrays(
    results: Sequence[BlockResults],
) -> tuple[tuple[Array, Array, Array], bool]:
    """The run's ``(total_usd, npv_usd, cumulative_usd)`` in block order, and whether they are
    new arrays (True) or those of the single result given (False)."""
    pieces: list[tuple[int, int, BlockResults, int, int]] = []
    for result in results:
        start = 0
        cumulative_start = 0
        for b, n in zip(result.block_indices, result.block_paths, strict=True):
            pieces.append((b, n, result, start, cumulative_start))
            start += n
            cumulative_start += _kept_paths(b, n)
    if not pieces:
        raise ValueError("no blocks to merge")
    pieces.sort(key=lambda piece: piece[0])
    indices = [piece[0] for piece in pieces]
    if indices != list(range(len(pieces))):
        raise ValueError(f"blocks must be 0 … {len(pieces) - 1}, each once; got {indices}")
    sizes = [piece[1] for piece in pieces]
    if any(n != BLOCK_PATHS for n in sizes[:-1]) or not 0 < sizes[-1] <= BLOCK_PATHS:
        raise ValueError(f"every block but the last must hold {BLOCK_PATHS} paths; got {sizes}")
    if sum(r.cumulative_percentiles_usd is not None for r in results) > 1:
        raise ValueError("the cumulative percentiles come from more than one block result")
    if len(results) == 1:
        # One result holding every block, in order: its arrays are the run's arrays.
        only = results[0]
        return (only.total_usd, only.npv_usd, only.cumulative_usd), False
    total = np.concatenate([r.total_usd[:, s : s + n] for _, n, r, s, _ in pieces], axis=1)
    npv = np.concatenate([r.npv_usd[:, s : s + n] for _, n, r, s, _ in pieces], axis=1)
    reduced = next((r for r in results if r.cumulative_percentiles_usd is not None), None)
    if reduced is not None:  # summarised already: no months to put together
        cumulative = reduced.cumulative_usd
    else:
        cumulative = np.concatenate(
            [
                r.cumulative_usd[:, :, c : c + _kept_paths(b, n)]
                for b, n, r, _, c in pieces
                if _kept_paths(b, n)
            ],
            axis=2,
        )
    return (total, npv, cumulative), True


def summarize(
    total_usd: Array,
    npv_usd: Array,
    feasible: Mask | None,
    cumulative_usd: Array,
    *,
    overwrite_input: bool = False,
    cumulative_percentiles_usd: Array | None = None,
    cheapest_counts: NDArray[np.int64] | None = None,
    tail_fraction: float = 0.1,
) -> Summary:
    """Statistics of the per-path results of a whole run (arrays as in :class:`BlockResults`).

    Percentiles use linear interpolation (numpy's default method); ``probability_cheapest``
    counts, per path, the option with the lowest NPV among the feasible ones (``argmin`` picks
    the first on a tie); a path with no feasible option counts for none. With
    ``overwrite_input`` the percentiles may reorder ``total_usd`` and ``cumulative_usd`` along the
    path axis instead of copying them (same values, less memory traffic).
    ``cumulative_percentiles_usd`` and ``cheapest_counts`` (from :func:`blocks_reduce`) stand
    for the percentiles of ``cumulative_usd`` and the counts of ``feasible``, which may then be
    empty (or None).
    """
    n_options, paths = total_usd.shape
    if paths == 0:
        raise ValueError("no paths to summarise")
    p10, p50, p90 = selected_linear_percentiles(
        total_usd, PERCENTILES, overwrite_input=overwrite_input
    )
    if cumulative_percentiles_usd is None:
        cumulative_percentiles_usd = row_percentiles(
            cumulative_usd, overwrite_input=overwrite_input
        )
    c10, c50, c90 = cumulative_percentiles_usd
    if cheapest_counts is None:
        if feasible is None:
            raise ValueError("summarize needs feasible or cheapest_counts")
        cheapest_counts = _cheapest_counts(npv_usd, feasible)
    if cheapest_counts.shape != (n_options,):
        raise ValueError(f"cheapest_counts must be ({n_options},), got {cheapest_counts.shape}")
    tail = tail_npv(npv_usd, tail_fraction)  # before the percentiles may reorder the rows
    mean_npv, p90_npv = npv_statistics(npv_usd, overwrite_input=overwrite_input)
    return Summary(
        paths=paths,
        p10_usd=p10,
        p50_usd=p50,
        p90_usd=p90,
        cumulative_p10_usd=c10,
        cumulative_p50_usd=c50,
        cumulative_p90_usd=c90,
        probability_cheapest=cheapest_counts / paths,
        mean_npv_usd=mean_npv,
        p90_npv_usd=p90_npv,
        tail_npv_usd=tail,
    )


_cheapest_counts = cheapest_counts  # summarize's keyword of that name hides the function


def npv_statistics(npv_usd: Array, *, overwrite_input: bool = False) -> tuple[Array, Array]:
    """The mean and the 90th percentile of each row of ``npv_usd`` (rows × paths) [USD].

    The mean is one running sum of the paths' NPVs in path order (``np.add.accumulate``, strictly
    left to right, no pairwise or per-block subtotals) divided by the number of paths, so it is the
    same bit for bit however the paths were split into blocks and workers. The percentile is
    numpy's linear interpolation. With ``overwrite_input`` the percentile may reorder the rows in
    place (after the mean has been taken).
    """
    paths = npv_usd.shape[-1]
    if paths == 0:
        raise ValueError("no paths to summarise")
    mean = np.add.accumulate(npv_usd, axis=-1)[..., -1] / paths
    (p90,) = selected_linear_percentiles(npv_usd, (90.0,), overwrite_input=overwrite_input)
    return mean, p90


def linear_percentiles(
    values: Array, percentiles: Sequence[float], *, overwrite_input: bool = False
) -> Array:
    """``percentiles`` of ``values`` along its last axis, shape ``(len(percentiles),
    *values.shape[:-1])``: ``np.percentile(values, percentiles, axis=-1)`` (linear
    interpolation, numpy's default method) bit for bit, a zero's sign aside
    (:func:`sorted_linear_percentiles`), by sorting each row once.

    numpy partitions each row around every index a percentile needs (two per percentile); its
    sort is vectorised and, here, faster than that partition: measured on 5 rows of 100 000
    paths, 4 ms to sort against 17 ms for ``np.percentile`` at 3 percentiles and 8 ms at one.
    With ``overwrite_input`` the rows are sorted in place instead of copied.
    """
    rows = values if overwrite_input else values.copy()
    rows.sort(axis=-1)
    return sorted_linear_percentiles(rows, percentiles)


def sorted_linear_percentiles(rows: Array, percentiles: Sequence[float]) -> Array:
    """:func:`linear_percentiles` of ``rows`` already sorted along their last axis (NaNs last,
    as ``np.sort`` puts them).

    The steps of numpy's ``percentile`` (numpy/lib/_function_base_impl.py, ``_quantile`` with
    method ``linear``), once the order statistics it reads are in place: the virtual index
    ``(n - 1) × q`` (``q`` = percentile / 100), its floor and the next index (both the last one
    from the last index on), the weight ``gamma`` = virtual index − floor, ``_lerp``'s
    interpolation ``a + (b − a) × gamma``, written from the upper end ``b − (b − a) × (1 − gamma)``
    where ``gamma`` ≥ 0.5, and NaN for a row holding a NaN. A test compares it with
    ``np.percentile`` over arrays of every shape, with ties, infinities and NaNs. One
    difference: a percentile that is zero is 0.0, never -0.0 (numpy's own sign there depends on
    how its partition ordered the two zeros).
    """
    n = rows.shape[-1]
    previous_index, following_index, gamma = _virtual_indices(n, percentiles)
    low = np.moveaxis(rows[..., previous_index], -1, 0)
    high = np.moveaxis(rows[..., following_index], -1, 0)
    return _interpolated(low, high, gamma, rows[..., -1])


def _virtual_indices(
    n: int, percentiles: Sequence[float]
) -> tuple[NDArray[np.intp], NDArray[np.intp], Array]:
    """The two order statistics each percentile reads in ``n`` values (a negative index counts
    from the end) and the weight ``gamma`` of the upper one, as numpy's ``percentile`` takes
    them (see :func:`sorted_linear_percentiles`)."""
    if n == 0:
        raise ValueError("no values to take percentiles of")
    q = np.true_divide(np.asarray(percentiles, dtype=np.float64), 100)
    virtual = (n - 1) * q
    previous = np.floor(virtual)
    following = previous + 1
    above = virtual >= n - 1
    previous[above] = -1
    following[above] = -1
    below = virtual < 0
    previous[below] = 0
    following[below] = 0
    previous_index = previous.astype(np.intp)
    following_index = following.astype(np.intp)
    return previous_index, following_index, virtual - previous_index


def _interpolated(low: Array, high: Array, gamma: Array, last: Array) -> Array:
    """The percentiles from the order statistics ``low`` and ``high`` each reads, shape
    ``(len(gamma), ...)``, and the largest value ``last`` of each row (NaN where it holds one):
    the interpolation of :func:`sorted_linear_percentiles`."""
    gamma = gamma.reshape((-1,) + (1,) * (low.ndim - 1))
    difference = high - low
    out: Array = np.add(low, difference * gamma)
    np.subtract(high, difference * (1 - gamma), out=out, where=gamma >= 0.5)
    with_nan = np.isnan(last)
    if with_nan.any():
        np.copyto(out, last, where=with_nan)
    # Where the values hold both -0.0 and 0.0 (equal, so in no set order), which one sits at an
    # index depends on the algorithm (numpy's partition, this sort, the CPU's vector unit): a
    # zero percentile is 0.0, whichever it met, so every machine gives the same bits.
    np.add(out, 0.0, out=out)
    return out


def selected_linear_percentiles(
    values: Array, percentiles: Sequence[float], *, overwrite_input: bool = False
) -> Array:
    """:func:`linear_percentiles` of ``values`` (``(..., n)``), reordered in place with
    ``overwrite_input`` (else a copy is): the order
    statistics each percentile reads are found by partitioning each row around them rather than
    by sorting it, which here takes about three quarters of the time of a sort at the three
    :data:`PERCENTILES` (numpy's partition is vectorised around one index at a time, so it is
    called once per index, each time on the part of the rows that holds it).

    An order statistic is a value, whichever algorithm places it (NaNs last, as a sort puts them;
    two zeros aside, which the interpolation makes 0.0): the percentiles are the same bits as
    :func:`linear_percentiles`'.
    """
    rows = values if overwrite_input else values.copy()
    n = rows.shape[-1]
    previous_index, following_index, gamma = _virtual_indices(n, percentiles)
    ranks = [int(k) % n for k in (*previous_index, *following_index)]
    found = _order_statistics(rows, sorted({*ranks, n - 1}))
    low = np.stack([found[int(k) % n] for k in previous_index])
    high = np.stack([found[int(k) % n] for k in following_index])
    return _interpolated(low, high, gamma, found[n - 1])


def _order_statistics(rows: Array, ranks: Sequence[int]) -> dict[int, Array]:
    """The values at ``ranks`` (ascending, each once) of the ascending order of each row of
    ``rows`` (NaNs last), rank → ``rows.shape[:-1]``, partitioning ``rows`` in place.

    Each step partitions the part ``[low, high)`` of the rows that holds exactly the ranks
    ``low … high − 1`` around its middle wanted rank, which splits it in two such parts; a part
    wanted at its first or last rank alone gives it as its minimum or maximum (a NaN in it makes
    that NaN, where the row then holds a NaN: see :func:`_interpolated`).
    """
    found: dict[int, Array] = {}
    pending = [(0, rows.shape[-1], list(ranks))]
    while pending:
        low, high, wanted = pending.pop()
        if not wanted:
            continue
        part = rows[..., low:high]
        if wanted == [low]:
            found[low] = part.min(axis=-1)
            continue
        if wanted == [high - 1]:
            found[high - 1] = part.max(axis=-1)
            continue
        middle = wanted[len(wanted) // 2]
        part.partition(middle - low, axis=-1)
        found[middle] = rows[..., middle].copy()
        pending.append((low, middle, [k for k in wanted if k < middle]))
        pending.append((middle + 1, high, [k for k in wanted if k > middle]))
    return found


ROW_HEAD = 64
"""Values of each row :func:`row_percentiles` looks at first to see that it varies."""


def row_percentiles(values: Array, *, overwrite_input: bool = False) -> Array:
    """:data:`PERCENTILES` of ``values`` along its last axis, shape ``(3, *values.shape[:-1])``.

    Equal to ``np.percentile(values, PERCENTILES, axis=-1)`` bit for bit (a zero's sign aside:
    :func:`sorted_linear_percentiles`), faster where many rows hold one value on every path (a
    fixed fee, month 0): such a row's percentiles are that value, and only the other rows are
    partitioned (:func:`selected_linear_percentiles`), run by run of consecutive rows; a row whose
    first :data:`ROW_HEAD` values differ is not read whole for its minimum and maximum first.
    With ``overwrite_input`` the rows may be reordered in place instead of copied.
    """
    rows = values.reshape(-1, values.shape[-1])
    # A row whose first values differ varies (min != max, NaN included): only the others are
    # read whole to tell whether they hold one value (the value their percentiles are).
    head = rows[:, :ROW_HEAD]
    low = np.zeros(len(rows))
    varying = np.ones(len(rows), dtype=bool)
    for first, stop in _runs(np.flatnonzero(head.min(axis=1) == head.max(axis=1))):
        low[first:stop] = rows[first:stop].min(axis=1) + 0.0  # a zero is 0.0, as sorted
        varying[first:stop] = low[first:stop] != rows[first:stop].max(axis=1)
    out = np.broadcast_to(low, (len(PERCENTILES), len(low))).copy()
    for first, stop in _runs(np.flatnonzero(varying)):
        out[:, first:stop] = selected_linear_percentiles(
            rows[first:stop], PERCENTILES, overwrite_input=overwrite_input
        )
    return out.reshape(len(PERCENTILES), *values.shape[:-1])


def _runs(indices: NDArray[np.intp]) -> list[tuple[int, int]]:
    """The runs of consecutive values of ascending ``indices``, as ``(first, stop)`` pairs."""
    if not len(indices):
        return []
    breaks = np.flatnonzero(np.diff(indices) != 1) + 1
    return [(int(run[0]), int(run[-1]) + 1) for run in np.split(indices, breaks)]


def run(plan: Plan, simulation: Mapping[str, Any]) -> dict[str, dict[str, Any]]:
    """The whole simulation in one process: option name → its uncertainty fields.

    Each option gets ``p10_usd``, ``p50_usd``, ``p90_usd`` [USD], ``cumulative_p10_usd``,
    ``cumulative_p50_usd``, ``cumulative_p90_usd`` (``H + 1`` floats each) [USD],
    ``probability_cheapest`` [fraction], ``mean_npv_usd`` and ``p90_npv_usd`` [USD], as plain
    Python numbers.
    """
    paths = int(simulation.get("paths") or 0)
    if paths <= 0:
        raise ValueError("a simulation needs paths > 0")
    results = blocks_compute(plan, simulation, range(block_count(paths)))
    # The arrays are this function's own: the percentiles may reorder them in place.
    summary = summarize(
        results.total_usd,
        results.npv_usd,
        results.feasible,
        results.cumulative_usd,
        overwrite_input=True,
        tail_fraction=tail_fraction(simulation),
    )
    return summary_fields(plan, summary)


def summary_fields(plan: Plan, summary: Summary) -> dict[str, dict[str, Any]]:
    """The result document's per-option uncertainty fields from a :class:`Summary`."""
    fields: dict[str, dict[str, Any]] = {}
    for o, name in enumerate(plan.option_names):
        fields[name] = {
            "p10_usd": float(summary.p10_usd[o]),
            "p50_usd": float(summary.p50_usd[o]),
            "p90_usd": float(summary.p90_usd[o]),
            "cumulative_p10_usd": summary.cumulative_p10_usd[o].tolist(),
            "cumulative_p50_usd": summary.cumulative_p50_usd[o].tolist(),
            "cumulative_p90_usd": summary.cumulative_p90_usd[o].tolist(),
            "probability_cheapest": float(summary.probability_cheapest[o]),
            "mean_npv_usd": float(summary.mean_npv_usd[o]),
            "p90_npv_usd": float(summary.p90_npv_usd[o]),
            "tail_npv_usd": float(summary.tail_npv_usd[o]),
        }
    return fields


def tail_fraction(simulation: Mapping[str, Any]) -> float:
    """``simulation.tail_fraction`` (version 1.3, default 0.1)."""
    value = simulation.get("tail_fraction")
    return 0.1 if value is None else float(value)


def tail_npv(npv_usd: Array, fraction: float) -> Array:
    """``tail_npv_usd`` of each row of ``npv_usd`` (rows × paths) [USD] (version 1.3): the mean
    NPV of the ``k = ceil(fraction × paths)`` paths with the highest NPV (``ceil`` with the
    tolerance of Conventions, at least 1), summed from the highest down, divided by ``k``."""
    paths = npv_usd.shape[-1]
    if paths == 0:
        raise ValueError("no paths to summarise")
    k = min(paths, max(1, int(ceil_tolerant(fraction * paths))))
    highest = -np.sort(-npv_usd, axis=-1)[..., :k]  # the highest first
    return np.asarray(np.add.accumulate(highest, axis=-1)[..., -1] / k, dtype=np.float64)
