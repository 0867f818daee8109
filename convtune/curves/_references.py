"""A plateau's chances, read from the study's own finished runs.

A prefix that has not moved from its start (a plateau) says nothing of whether a drop is coming:
on some workloads such curves are stuck (an LR too low), on others they wait for one (a
decay, a grokking-like jump). Measured held out, the calibration's probability for plateau
prefixes is off in *opposite* directions on different workloads (0.38 forecast where 0.19
reached on the eleven corpus workloads, 0.16 where 0.38 reached on batch 9; ``by_moved`` in
``benchmarks/forecast.py``), so no calibration fitted on other workloads can know which. The
study's own finished runs can: those that stood on a plateau at the same cost show how often
such runs went on to reach.

:func:`plateau_crossings` picks those runs (:class:`ReferenceRun`, one per finished run) and
:func:`mix_crossings` blends where they crossed into a forecast's crossing distribution, the
forecast weighing :data:`REFERENCE_WEIGHT` runs: a few runs nudge it, many take over. Moving
prefixes are left alone: there the calibration held on every workload.

The study's finished runs also show how far the calibration, fitted pooling workloads, is off on
*this* one: :func:`study_offset` fits one logit offset to how their own forecasts came out, and
:func:`shift_probability` applies it (check M, docs/benchmarks.md: on eight workloads it was not
fitted on, the Brier score of ``probability`` at a quarter of the run fell from 0.153 to 0.130).

numpy only.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from convtune.config.target import Target
from convtune.curves._measure import as_target, time_to_target
from convtune.curves._models import noise_scale
from convtune.curves._reach import CurveSummary

# A prefix that moved less than this many noise units from its first value is on a plateau.
PLATEAU_NOISE = 3.0
# How many reference runs the calibrated forecast counts for in the blend.
REFERENCE_WEIGHT = 5.0
# The sd of the normal prior on a study's logit offset: a few runs nudge it, many move it.
STUDY_OFFSET_PRIOR_SD = 1.0


def moved(y: np.ndarray) -> float:
    """How far a curve (lower is better) moved from its first value toward the better, in units
    of its own evaluation noise (:func:`convtune.curves.noise_scale`); ``nan`` under two points."""
    y = np.asarray(y, dtype=float)
    if y.size < 2:
        return math.nan
    return (float(y[0]) - float(np.min(y))) / max(noise_scale(y), 1e-12)


@dataclass(frozen=True)
class ReferenceRun:
    """A finished run of the same study, as a plateau's forecast reads it.

    ``c``/``y``: its finite evaluations (cost order, repeats averaged, lower is better);
    ``crossing``: where it reached the target (``inf``: not within what was recorded);
    ``observed_to``: the cost up to which its outcome is known (its last evaluation; ``inf``
    for a run that diverged, which never reaches).

    Example:
        >>> ref = ReferenceRun.of([100, 200, 300, 400], [2.0, 2.0, 1.99, 1.2], "val_loss<=1.5")
        >>> ref.crossing > 300, ref.observed_to
        (True, 400.0)
    """

    c: np.ndarray
    y: np.ndarray
    crossing: float
    observed_to: float

    @classmethod
    def of(
        cls, costs: Sequence[float] | np.ndarray, values: Sequence[float] | np.ndarray, target: Target | str
    ) -> ReferenceRun:
        tgt = as_target(target)
        v = np.asarray(values, dtype=float).reshape(-1)
        crossing = time_to_target(costs, values, tgt) if v.size else math.inf
        seen = CurveSummary.of(costs, values, tgt)  # the finite points, oriented lower-is-better
        if not np.all(np.isfinite(v)) and not math.isfinite(crossing):
            observed_to = math.inf
        else:
            observed_to = seen.c_last
        return cls(seen.c, seen.y, float(crossing), observed_to)


def plateau_crossings(
    c: np.ndarray, y: np.ndarray, references: Sequence[ReferenceRun], horizon: float | None
) -> np.ndarray | None:
    """Where the references that stood on a plateau at this prefix's last cost crossed.

    ``c``/``y``: the prefix (lower is better). ``None`` when the prefix is not a plateau (moved
    :data:`PLATEAU_NOISE` noise units or more, or under two points). Otherwise one entry per
    reference that was recorded to at least the prefix's last cost, had not reached by then,
    stood on a plateau there too, and whose outcome is known: its crossing, or ``inf`` when it
    was recorded to ``horizon`` (or diverged) without reaching. A run stopped early without
    reaching tells nothing and is left out. Empty when no reference matches.
    """
    m = moved(y)
    if math.isnan(m) or m >= PLATEAU_NOISE:
        return None
    c_last = float(c[-1])
    out = []
    for ref in references:
        if ref.observed_to < c_last or ref.crossing <= c_last:
            continue
        seen = ref.y[ref.c <= c_last]
        m_ref = moved(seen)
        if math.isnan(m_ref) or m_ref >= PLATEAU_NOISE:
            continue
        if math.isfinite(ref.crossing):
            out.append(ref.crossing)
        elif horizon is not None and ref.observed_to >= horizon:
            out.append(math.inf)
    return np.array(out, dtype=float)


def mix_crossings(
    costs: np.ndarray, probs: np.ndarray, crossings: np.ndarray, weight: float = REFERENCE_WEIGHT
) -> tuple[np.ndarray, np.ndarray]:
    """A crossing distribution (knots ``costs``, ``probs``) blended with the references'.

    ``P(crossed by t) = (weight * F(t) + #{references crossed by t}) / (weight + n)``: each
    reference a step at its crossing (``inf``: never). Still non-decreasing, starting at the
    first knot.

    Example:
        >>> c, p = mix_crossings(np.array([10.0, 20.0]), np.array([0.0, 0.2]), np.array([15.0, np.inf]), 2.0)
        >>> [round(float(x), 3) for x in p]
        [0.0, 0.05, 0.3, 0.35]
    """
    if crossings.size == 0:
        return costs, probs
    steps = np.sort(crossings[np.isfinite(crossings) & (crossings > costs[0])])
    # Each step as two knots, so the piecewise-linear reading keeps it a step.
    grid = np.unique(np.concatenate((costs, steps * (1.0 - 1e-9), steps)))
    base = np.interp(grid, costs, probs, left=0.0, right=float(probs[-1]))
    counted = np.searchsorted(steps, grid, side="right")
    mixed = (weight * base + counted) / (weight + crossings.size)
    return grid, np.maximum.accumulate(mixed)


def study_offset(
    probabilities: Sequence[float],
    reached: Sequence[bool],
    prior_sd: float = STUDY_OFFSET_PRIOR_SD,
    min_z: float = 0.0,
) -> float:
    """The logit offset that best fits how a study's forecasts came out.

    ``probabilities``: what the forecaster gave finished runs of the study (at the same share of
    their runs) of reaching within their planned run; ``reached``: whether each did. The offset
    ``b`` maximises the likelihood of the outcomes under ``σ(logit p + b)`` with a normal prior
    of sd ``prior_sd`` on ``b`` (a convex problem, solved by Newton's method); 0 with no runs.
    With ``min_z > 0`` the offset is kept only where it stands at least ``min_z`` posterior sds
    (the Laplace approximation at ``b``) from 0, else 0: a few runs that came out a little
    differently from their forecasts say little about the study's bias.

    Example:
        >>> round(study_offset([0.2, 0.3, 0.25, 0.2], [True, True, False, True]), 2)  # ran low
        1.09
        >>> study_offset([0.2, 0.3, 0.25, 0.2], [True, True, False, True], min_z=2.0)  # 1.5 sds
        0.0
        >>> study_offset([], [])
        0.0
    """
    z = _logit(np.asarray(probabilities, dtype=float))
    y = np.asarray(reached, dtype=float)
    if z.size != y.size:
        raise ValueError(f"{z.size} probabilities but {y.size} outcomes")
    precision = 1.0 / prior_sd**2
    b = 0.0
    for _ in range(50):
        q = 1.0 / (1.0 + np.exp(-(z + b)))
        step = (float(np.sum(q - y)) + precision * b) / (float(np.sum(q * (1.0 - q))) + precision)
        b -= step
        if abs(step) < 1e-10:
            break
    if min_z > 0.0:
        q = 1.0 / (1.0 + np.exp(-(z + b)))
        posterior_sd = 1.0 / np.sqrt(float(np.sum(q * (1.0 - q))) + precision)
        if abs(b) < min_z * posterior_sd:
            return 0.0
    return float(np.clip(b, -10.0, 10.0))


def shift_probability(probability: float, offset: float) -> float:
    """``probability`` moved by a logit ``offset`` (:func:`study_offset`).

    Example:
        >>> round(shift_probability(0.25, 1.09), 3), shift_probability(0.25, 0.0)
        (0.498, 0.25)
    """
    if offset == 0.0:
        return float(probability)
    return float(1.0 / (1.0 + np.exp(-(float(_logit(np.array([probability]))[0]) + offset))))


def _logit(p: np.ndarray) -> np.ndarray:
    # Forecasts of exactly 0 or 1 (a blow-up, a curve at its floor) would pin the fit.
    p = np.clip(p, 1e-4, 1.0 - 1e-4)
    return np.log(p / (1.0 - p))
