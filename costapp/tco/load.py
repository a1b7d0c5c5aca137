"""The busiest hours (scenario-format.md, version 1.3): each workload's load over a month in two
levels, and the work a capacity of ``C`` GPUs cannot do, ``over(C)``.

For an option, month ``m`` and path, a workload active in ``m`` holds ``h_w`` GPUs for its busiest
``d_w`` hours and ``l_w`` GPUs for the other ``hpm − d_w`` hours, and cannot run at all on fewer
than ``u_w`` GPUs (its unit). With ``μ`` the path's demand multiplier (or the break-even scale):

- steady: ``u = 0``; ``h = l = μ × busy × r / (t × hpm)``, ``d = hpm``;
- training: ``u = W = max(ceil(cluster_gpus × r / t), fit(O))``; with ``b = μ × busy × r / (t ×
  g)``: ``h = max(W, b / hpm)``, ``d = b / h`` (0 where ``h`` is 0), ``l = 0``;
- inference: ``u = fit(O)``; with ``a = μ × busy × r / (t × hpm)``, ``D = peak_hours_per_day ×
  hpm / 24`` and ``ρ = resident(O)``: ``h = max(peak_to_average × a, ρ)``, ``d = D``,
  ``l = max(b, ρ)`` with ``b = (a × hpm − peak_to_average × a × D) / (hpm − D)`` (``a`` where
  ``D = hpm``).

A workload's supply is the area of its load, ``s = h × d + l × (hpm − d)``. A capacity ``C``
runs no part of a workload whose unit exceeds it; the others share it, their busiest hours at the
same time: ``L(x) = Σ (h if x < d else l)`` and ``over(C) = Σ_{u > C} s + ∫ max(0, L(x) − C) dx``
over ``[0, hpm)`` [GPU-h/month]. ``done(C) = (supply_o − over(C)) × busy_o / supply_o`` is the work
it does.

Where every workload's load is flat (``h = l``) and no unit exceeds the capacity, ``over(C)`` is
version 1.2's ``max(0, supply_o − C × hpm)``: the callers then keep version 1.2's arithmetic
exactly (:meth:`LoadOnPaths.flat`), so such documents keep their figures bit for bit. Arrays are
over months ``0 … H`` (month 0 zero) with a leading path axis where they depend on the path.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike, NDArray

Array = NDArray[np.float64]
Mask = NDArray[np.bool_]


@dataclass(frozen=True, eq=False)
class WorkloadLoad:
    """One workload's load on one option, at the document's own demand (version 1.3).

    ``work`` is ``busy × r / (t × g)`` [GPU-h/month], months ``0 … H`` (month 0 zero), and
    scales with the demand multiplier; ``unit`` ``u_w`` [GPUs]; ``resident`` ``ρ`` [GPUs] in the
    active months (``active``, months ``0 … H``); ``peak_hours`` ``D`` [h/month]."""

    kind: str  # "steady", "training" or "inference"
    work: Array
    unit: float
    active: Mask
    peak_to_average: float = 1.0
    peak_hours: float = 0.0
    resident: float = 0.0

    def statically_flat(self, hours_per_month: float) -> bool:
        """True when the load is flat on every path: steady work, training without a unit,
        inference at ``peak_to_average`` 1 (or whose busiest hours last the whole month)."""
        if self.kind == "steady":
            return True
        if self.kind == "training":
            return self.unit <= 0.0
        return self.peak_to_average == 1.0 or self.peak_hours >= hours_per_month

    def resident_hours(self, hours_per_month: float) -> Array:
        """``resident(O) × hours_per_month`` in the active months, 0 elsewhere [GPU-h/month]."""
        return np.where(self.active, self.resident * hours_per_month, 0.0)


@dataclass(frozen=True, eq=False)
class Levels:
    """A workload's two levels on some paths: ``h`` GPUs for ``d`` hours, then ``l`` GPUs; its
    supply ``s`` [GPU-h/month]; each broadcastable to ``(P, H + 1)``. ``flat`` where ``h = l``
    on every element."""

    high: Array
    hours: Array
    low: Array
    supply: Array
    flat: bool


def workload_levels(load: WorkloadLoad, multiplier: Array | None, hours_per_month: float) -> Levels:
    """The two levels of ``load`` on the paths of ``multiplier`` ``(P,)`` (None: the document's
    own demand, one row) [GPUs, h, GPU-h/month]."""
    hpm = hours_per_month
    work = load.work[np.newaxis, :]
    if multiplier is not None:
        work = multiplier[:, np.newaxis] * work
    if load.kind == "steady":
        level = work / hpm
        return Levels(level, np.full_like(level, hpm), level, work, True)
    if load.kind == "training":
        unit = load.unit
        level = work / hpm
        if unit <= 0.0:
            return Levels(level, np.full_like(level, hpm), level, work, True)
        high = np.maximum(unit, level)
        safe = np.where(high > 0.0, high, 1.0)
        hours = np.where(high > 0.0, work / safe, 0.0)
        zero = np.zeros_like(high)
        flat = bool(np.all((level >= unit) | ~load.active[np.newaxis, :]))
        if flat:
            return Levels(level, np.full_like(level, hpm), level, work, True)
        return Levels(high, hours, zero, work, False)
    # inference
    resident = np.where(load.active, load.resident, 0.0)[np.newaxis, :]
    held = load.resident_hours(hpm)[np.newaxis, :]
    average = work / hpm
    supply_12 = np.maximum(work, held)
    if load.statically_flat(hpm):
        level = np.maximum(average, resident)
        return Levels(level, np.full_like(level, hpm), level, supply_12, True)
    p = load.peak_to_average
    busiest = load.peak_hours
    peak = p * average
    off_peak = (average * hpm - peak * busiest) / (hpm - busiest)
    high = np.maximum(peak, resident)
    low = np.maximum(off_peak, resident)
    between = (resident > off_peak) & (resident < peak)
    if np.any(between):
        area = high * busiest + low * (hpm - busiest)
        supply = np.where(between, area, supply_12)
    else:
        supply = supply_12
    return Levels(high, np.full_like(high, busiest), low, supply, False)


def load_holds(
    loads: Sequence[WorkloadLoad],
    top_multiplier: float | None,
    capacity_gpus: float,
    hours_per_month: float,
    tolerance_gpu_hours: float,
) -> bool:
    """True when ``over(capacity_gpus)`` is within ``tolerance_gpu_hours`` in every month and
    path whose multiplier is at most ``top_multiplier`` (None: the document's own demand):
    no active unit exceeds the capacity and the sum of the workloads' highest levels, at the
    largest multiplier, stays within it (every level grows with the multiplier)."""
    multiplier = None if top_multiplier is None else np.array([top_multiplier])
    peak = np.zeros((1, 1))
    for load in loads:
        if np.any(load.active) and load.unit > capacity_gpus:
            return False
        peak = peak + workload_levels(load, multiplier, hours_per_month).high
    top = float(np.max(peak, initial=0.0))
    return (top - capacity_gpus) * hours_per_month <= tolerance_gpu_hours


class LoadOnPaths:
    """The levels of an option's workloads on one set of paths, made once, and ``over(C)`` for
    any capacity ``C`` and unit limit (a mix judges units against its whole capacity while its
    layers serve bands of the load)."""

    def __init__(
        self,
        loads: Sequence[WorkloadLoad],
        multiplier: Array | None,
        hours_per_month: float,
    ) -> None:
        self.loads = tuple(loads)
        self.multiplier = multiplier
        self.hours_per_month = hours_per_month
        self.active_units = [load.unit if bool(np.any(load.active)) else 0.0 for load in self.loads]
        self._levels: list[Levels] | None = None
        self._profiles: dict[tuple[bytes, ...], Profile] = {}
        self._over: dict[tuple[float, tuple[bytes, ...]], Array] = {}

    @property
    def levels(self) -> list[Levels]:
        """Each workload's :class:`Levels` on the paths, made when first asked for."""
        if self._levels is None:
            self._levels = [
                workload_levels(load, self.multiplier, self.hours_per_month) for load in self.loads
            ]
        return self._levels

    def all_flat(self) -> bool:
        """True when every workload's load is flat on every path (decided without the levels
        where the workload's kind settles it)."""
        hpm = self.hours_per_month
        if all(load.statically_flat(hpm) for load in self.loads):
            return True
        if any(load.kind == "inference" and not load.statically_flat(hpm) for load in self.loads):
            return False
        return all(level.flat for level in self.levels)

    def flat(self, unit_limit: float) -> bool:
        """True when version 1.2's rule gives ``over``: every load flat and no active unit
        above ``unit_limit`` (a scalar)."""
        return self.all_flat() and all(unit <= unit_limit for unit in self.active_units)

    def supply(self) -> Array:
        """``supply_o = Σ s_w`` on the paths [GPU-h/month]."""
        total = np.zeros((1, 1))
        for level in self.levels:
            total = total + level.supply
        return total

    def over(self, capacity: ArrayLike, unit_limit: ArrayLike | None = None) -> Array:
        """``over(C)`` [GPU-h/month] with ``C`` = ``capacity`` [GPUs] (a scalar or months
        ``(H + 1,)``), units judged against ``unit_limit`` (``capacity`` when None).

        ``L(x)`` is a step function that falls at each non-flat workload's ``d_w``: its levels,
        longest-lasting step first, are made once per set of workloads left out (the
        :class:`Profile`), and ``over`` once per capacity value, so a capacity over months (an
        owned fleet before and after its lead time, a mix's bands) takes each month from the
        value it holds there: the same arithmetic, element by element."""
        cap = np.asarray(capacity, dtype=np.float64)
        limit = cap if unit_limit is None else np.asarray(unit_limit, dtype=np.float64)
        key = self.mask_key(limit)
        if cap.ndim == 0:
            return self._over_at(float(cap), key, limit)
        values = np.unique(cap)
        if len(values) == 1:
            return self._over_at(float(values[0]), key, limit)
        total = self._over_at(float(values[0]), key, limit)
        for value in values[1:]:
            total = np.where(cap == value, self._over_at(float(value), key, limit), total)
        return np.asarray(total, dtype=np.float64)

    def mask_key(self, limit: Array) -> tuple[bytes, ...]:
        """Which workloads a unit limit (a scalar or months ``(H + 1,)``) leaves out, as a key:
        ``over`` depends on the limit through this alone."""
        outs = [np.asarray(load.unit > limit) for load in self.loads]
        return tuple(out.tobytes() + bytes(out.shape) for out in outs)

    def _over_at(self, capacity: float, key: tuple[bytes, ...], limit: Array) -> Array:
        """``over`` at one capacity value, cached by that value and the workloads left out."""
        found = self._over.get((capacity, key))
        if found is None:
            profile = self.profile(limit, key)
            total = profile.excluded + profile.tail_hours * np.maximum(profile.base - capacity, 0.0)
            for length, level in zip(profile.lengths, profile.levels, strict=True):
                total = total + length * np.maximum(level - capacity, 0.0)
            found = np.asarray(total, dtype=np.float64)
            self._over[(capacity, key)] = found
        return found

    def profile(self, limit: Array, key: tuple[bytes, ...] | None = None) -> Profile:
        """The :class:`Profile` of the workloads whose units are within ``limit``, cached by
        which workloads are left out."""
        key = self.mask_key(limit) if key is None else key
        found = self._profiles.get(key)
        if found is None:
            found = self._profile([load.unit > limit for load in self.loads])
            self._profiles[key] = found
        return found

    def _profile(self, outs: Sequence[Mask | np.bool_]) -> Profile:
        hpm = self.hours_per_month
        excluded = np.zeros((1, 1))
        base = np.zeros((1, 1))
        steps: list[tuple[Array, Array]] = []
        for out, level in zip(outs, self.levels, strict=True):
            if np.any(out):
                excluded = excluded + np.where(out, level.supply, 0.0)
                keep = ~out
            else:
                keep = None
            if level.flat:
                part = level.supply / hpm
                base = base + (part if keep is None else np.where(keep, part, 0.0))
            else:
                low = level.low if keep is None else np.where(keep, level.low, 0.0)
                rise = level.high - level.low
                base = base + low
                steps.append((rise if keep is None else np.where(keep, rise, 0.0), level.hours))
        if not steps:
            return Profile(excluded, base, np.asarray(hpm), (), ())
        if len(steps) == 1:
            rise, hours = steps[0]
            return Profile(excluded, base, hpm - hours, (hours,), (base + rise,))
        rises = np.stack(np.broadcast_arrays(*(rise for rise, _ in steps)))
        spans = np.stack(np.broadcast_arrays(*(hours for _, hours in steps)))
        shape = np.broadcast_shapes(rises.shape, spans.shape)
        rises, spans = np.broadcast_to(rises, shape), np.broadcast_to(spans, shape)
        order = np.argsort(-spans, axis=0, kind="stable")
        spans = np.take_along_axis(spans, order, axis=0)  # longest first
        levels = base + np.cumsum(np.take_along_axis(rises, order, axis=0), axis=0)
        lengths = tuple(
            spans[k] - (spans[k + 1] if k + 1 < len(steps) else 0.0) for k in range(len(steps))
        )
        return Profile(excluded, base, hpm - spans[0], lengths, tuple(levels))


@dataclass(frozen=True, eq=False)
class Profile:
    """``L(x)`` of the workloads a capacity runs, on some paths: ``base`` GPUs for the last
    ``tail_hours`` of the month, ``levels[k]`` GPUs for ``lengths[k]`` hours each before (the
    busiest last), and the supply of those it cannot run, ``excluded`` [GPU-h/month]; so
    ``over(C) = excluded + tail_hours × max(0, base − C) + Σ lengths[k] × max(0, levels[k] − C)``."""

    excluded: Array
    base: Array
    tail_hours: Array
    lengths: tuple[Array, ...]
    levels: tuple[Array, ...]


def done_gpu_hours(busy: Array, supply: Array, over: Array) -> Array:
    """``done(C) = (supply_o − over(C)) × busy_o / supply_o``, 0 where ``supply_o`` is 0
    [GPU-h/month]: the share of the served hours that is work rather than idle replicas;
    ``busy_o`` itself where ``over(C)`` is 0."""
    safe = np.where(supply > 0.0, supply, 1.0)
    done = np.where(supply > 0.0, (supply - over) * busy / safe, 0.0)
    # where the capacity does it all, the work itself (as version 1.2 took it, bit for bit)
    return np.where(over > 0.0, done, busy)
