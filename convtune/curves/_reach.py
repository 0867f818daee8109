"""A logistic model of whether a curve will have crossed its target by a cost ``t``.

The isotonic maps of :mod:`convtune.curves._calibration` see one number per forecast, the
share of model draws that cross by ``t``. Late in a run that number sits at 0 for curves that
will never reach *and* for a few that will, so the map's floor stays where those few put it
(0.4-1% at half the run), far above the per-decision budget of a pruner that must not stop a
winner (``epsilon / rungs``, about 0.002). What separates the two is in the curve itself: how
far the target is against the progress made so far and against the noise, whether the last
points turned back up, how fast the recent trend would get there, and, with the schedule, how
much learning rate is still to come. This model reads those and is fitted per situation on
the recorded corpus, leave-one-workload-out in the benchmark, like the maps.

It only ever *lowers* a forecast's probability, and only below :data:`TAIL`: where it is
confident a curve cannot get there in time, the calibrated distribution is capped by it (see
:meth:`convtune.curves.RawForecast.calibrated`), by at most :data:`MAX_LOWERING` times the
maps' value; elsewhere the maps stand.

numpy only at run time (the coefficients are JSON numbers in ``calibration.json``); the
benchmark fits them with scikit-learn.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from convtune.config.target import Target
from convtune.curves._measure import as_target, merge_repeats
from convtune.curves._models import noise_scale
from convtune.curves._schedule import LRSchedule

# Probabilities of the model above this are not used: the maps are calibrated there.
TAIL = 0.01
# How many times lower than the maps' probability the model may push it, at most (``None``: no
# limit). The model exists to take the maps' floor late in a run (0.4-1%) below a pruner's
# per-decision budget (about 0.002); a tenfold cut does that. Without a limit, on a workload
# unlike those it was fitted on, it turned maps' 0.18-0.39 into 0.001 for a run that crossed
# the target 1,000 samples later (docs/benchmarks.md, "Four more workloads"). Off by default:
# at 10 it failed both pre-registered checks (it spared most such runs but lost another winner).
MAX_LOWERING: float | None = None
FEATURES = (
    "raw_logit",  # logit of the share of model draws crossed by t
    "log_ahead",  # log(t / cost seen)
    "progress",  # share of the planned run seen
    "t_share",  # t as a share of the planned run
    "log_left_over_made",  # log(distance left to the target / distance covered so far)
    "log_left_over_noise",  # log(distance left / noise level)
    "rebound",  # how far the last two points lie above the best, over the distance left
    "log_trend_over_t",  # log(crossing of the last points' trend in log cost / t)
    "log_line_over_t",  # log(crossing of the line through the last two points / t)
)
SCHEDULE_FEATURES = (
    "lr_area_ahead",  # log1p(LR area from now to t / LR area so far)
    "lr_drop",  # log(lowest LR between now and t / LR now)
)
# What the study's finished runs say of a curve at its last cost (the within-the-run model only).
REFERENCE_FEATURES = (
    "worse_reached",  # log-odds of "reached" among finished runs that stood no better at this cost
    "better_failed",  # log-odds of "did not reach" among those that stood better
    "n_worse",  # log1p(how many stood no better)
    "n_better",  # log1p(how many stood better)
)
# How many times above or below the maps' probability the within-the-run model may put it: a
# model fitted on many workloads claimed near-certainty on smooth curves unlike them (checks C
# and Z, docs/benchmarks.md), so it may move a forecast, not overrule it.
WITHIN_MAX_FACTOR = 10.0
_CLIP = 5.0
_TREND_POINTS = 4


def feature_names(schedule_known: bool) -> tuple[str, ...]:
    return FEATURES + SCHEDULE_FEATURES if schedule_known else FEATURES


def within_feature_names(schedule_known: bool) -> tuple[str, ...]:
    """The features of the within-the-run model: :func:`feature_names` at the horizon, then
    :data:`REFERENCE_FEATURES`."""
    return feature_names(schedule_known) + REFERENCE_FEATURES


@dataclass(frozen=True)
class CurveSummary:
    """What the features need of a curve prefix, computed once per forecast.

    ``y`` is oriented so that lower is better and ``y_target`` likewise; ``c`` the costs (all
    positive, increasing).
    """

    c: np.ndarray
    y: np.ndarray
    y_target: float
    horizon: float | None
    schedule: LRSchedule | None
    shape: tuple[float, float, float, float, float] = (0.0, 0.0, 0.0, math.inf, math.inf)

    @property
    def c_last(self) -> float:
        return float(self.c[-1]) if self.c.size else 0.0

    @classmethod
    def of(
        cls,
        costs: Sequence[float] | np.ndarray,
        values: Sequence[float] | np.ndarray,
        target: Target | str,
        schedule: LRSchedule | None = None,
        horizon: float | None = None,
    ) -> CurveSummary:
        """The finite points at positive cost, in cost order, repeats averaged, lower is better."""
        tgt = as_target(target)
        c = np.asarray(costs, dtype=float).reshape(-1)
        v = np.asarray(values, dtype=float).reshape(-1)
        n = min(c.size, v.size)
        c, v = c[:n], v[:n]
        ok = np.isfinite(c) & np.isfinite(v) & (c > 0)
        c, v = c[ok], v[ok]
        sign = 1.0 if tgt.lower_is_better else -1.0
        c, v = merge_repeats(c, v)
        if horizon is None and schedule is not None:
            horizon = schedule.horizon
        y, y_target = sign * v, sign * tgt.value
        return cls(c, y, y_target, horizon, schedule, _shape(c, y, y_target))


def reach_features(summary: CurveSummary, raw_share: float, t: float) -> np.ndarray:
    """The feature vector of "crossed by ``t``" (see :data:`FEATURES`), clipped to ±5."""
    c_last = summary.c_last
    horizon = summary.horizon if summary.horizon else max(t, c_last, 1e-12)
    p = min(max(raw_share, 1e-3), 1.0 - 1e-3)
    left_over_made, left_over_noise, rebound, trend, line = summary.shape
    x = [
        math.log(p / (1.0 - p)),
        math.log(max(t, 1e-12) / max(c_last, 1e-12)),
        c_last / horizon,
        t / horizon,
        left_over_made,
        left_over_noise,
        rebound,
        _log_ratio(trend, t),
        _log_ratio(line, t),
    ]
    if summary.schedule is not None:
        x += _schedule_features(summary.schedule, c_last, t)
    return np.clip(np.nan_to_num(np.array(x, dtype=float), nan=0.0), -_CLIP, _CLIP)


def reference_features(summary: CurveSummary, references: Sequence[Any], horizon: float) -> np.ndarray:
    """:data:`REFERENCE_FEATURES` of a curve prefix against the study's finished runs.

    ``references`` are :class:`convtune.curves.ReferenceRun` (duck-typed: ``c``, ``y``,
    ``crossing``, ``observed_to``, oriented lower-is-better like ``summary``). A run counts
    when its outcome by ``horizon`` is known (recorded to it, or diverged) and it had not
    reached by this prefix's last cost; it stood *no better* when its best by that cost is at
    least this prefix's best. Half a count is added to each share, so no runs give 0 (even odds)
    and one run cannot say "certainly".

    Example:
        >>> s = CurveSummary.of([1, 2], [1.0, 0.8], "loss<=0.5", horizon=4)
        >>> from convtune.curves import ReferenceRun
        >>> worse = ReferenceRun.of([1, 2, 3, 4], [1.0, 0.9, 0.6, 0.4], "loss<=0.5")
        >>> [round(float(v), 3) for v in reference_features(s, [worse], 4.0)]
        [1.099, 0.0, 0.693, 0.0]
    """
    if not summary.y.size:
        return np.zeros(len(REFERENCE_FEATURES))
    c_last = summary.c_last
    best = float(np.min(summary.y))
    counts = {(True, True): 0, (True, False): 0, (False, True): 0, (False, False): 0}
    for ref in references:
        if ref.crossing <= c_last or not ref.observed_to >= horizon:
            continue
        seen = ref.y[ref.c <= c_last]
        if not seen.size:
            continue
        counts[(float(np.min(seen)) >= best, bool(ref.crossing <= horizon))] += 1
    worse_reached, worse_failed = counts[(True, True)], counts[(True, False)]
    better_reached, better_failed = counts[(False, True)], counts[(False, False)]
    return np.array(
        [
            math.log((worse_reached + 0.5) / (worse_failed + 0.5)),
            math.log((better_failed + 0.5) / (better_reached + 0.5)),
            math.log1p(worse_reached + worse_failed),
            math.log1p(better_reached + better_failed),
        ]
    )


def within_features(
    summary: CurveSummary, raw_share: float, horizon: float, references: Sequence[Any] = ()
) -> np.ndarray:
    """The feature vector of "crossed by the planned end" (:func:`within_feature_names`)."""
    x = np.concatenate(
        (reach_features(summary, raw_share, horizon), reference_features(summary, references, horizon))
    )
    return np.clip(x, -_CLIP, _CLIP)


def shape_features(summary: CurveSummary) -> list[float]:
    """Three numbers of the curve's shape that :func:`reach_features` does not read: how much of
    the distance left the latest half of the curve covered, how many evaluations there are, and
    how far the curve has moved over its whole range against the distance left."""
    y, tiny = summary.y, 1e-12
    if not y.size:
        return [-_CLIP, 0.0, -_CLIP]
    left = max(float(np.min(y)) - summary.y_target, tiny)
    half = min(max(2, y.size // 2), y.size)
    recent = float(y[-half]) - float(np.min(y[-half:]))
    return [math.log(max(recent, tiny) / left), float(y.size), math.log(max(float(np.ptp(y)), tiny) / left)]


def tree_features(summary: CurveSummary) -> np.ndarray:
    """The features of :class:`convtune.curves.ReachTrees`: :func:`reach_features` at the planned
    end without the raw forecast's share (the trees read the curve, not a model's draws), then
    :func:`shape_features`, each clipped to ±5."""
    horizon = summary.horizon if summary.horizon else summary.c_last
    x = reach_features(summary, 0.5, horizon)[1:]
    return np.concatenate([x, np.clip(shape_features(summary), -_CLIP, _CLIP)])


def _shape(c: np.ndarray, y: np.ndarray, y_target: float) -> tuple[float, float, float, float, float]:
    """The parts of the features that do not depend on ``t``."""
    if not y.size:
        return (_CLIP, _CLIP, 0.0, math.inf, math.inf)
    tiny = 1e-12
    best = float(np.min(y))
    left = max(best - y_target, tiny)
    made = max(float(y[0]) - best, tiny)
    sigma = max(noise_scale(y), tiny)
    return (
        math.log(left / made),
        math.log(left / sigma),
        (float(np.mean(y[-2:])) - best) / left,
        _trend_crossing(c, y, y_target),
        _two_point_crossing(c, y, y_target),
    )


def _log_ratio(crossing: float, t: float) -> float:
    if not math.isfinite(crossing) or not t > 0:
        return _CLIP
    return math.log(max(crossing, 1e-12) / t)


def _trend_crossing(c: np.ndarray, y: np.ndarray, y_target: float) -> float:
    """Where a line through the last few points, against log cost, reaches the target."""
    k = min(_TREND_POINTS, c.size)
    if k < 2:
        return math.inf
    lc = np.log(np.maximum(c[-k:], 1e-12))
    if not np.ptp(lc) > 0:
        return math.inf
    slope, intercept = np.polyfit(lc, y[-k:], 1)
    if not slope < 0:
        return math.inf
    return float(np.exp(min((y_target - intercept) / slope, 700.0)))


def _two_point_crossing(c: np.ndarray, y: np.ndarray, y_target: float) -> float:
    """Where the line through the last two points (lower is better) reaches ``y_target``."""
    if c.size < 2 or not c[-1] > c[-2]:
        return math.inf
    slope = (y[-1] - y[-2]) / (c[-1] - c[-2])
    if not slope < 0:
        return math.inf
    return float(c[-1] + (y_target - y[-1]) / slope)


def _schedule_features(schedule: LRSchedule, c_last: float, t: float) -> list[float]:
    grid = np.asarray(schedule.costs, dtype=float)
    lrs = np.asarray(schedule.lrs, dtype=float)
    start = float(grid[0])
    done = _area(grid, lrs, start, c_last)
    ahead = _area(grid, lrs, c_last, t)
    now = float(np.interp(c_last, grid, lrs))
    inside = (grid > c_last) & (grid <= t)
    lowest = min([now, float(np.interp(t, grid, lrs)), *lrs[inside].tolist()])
    return [
        math.log1p(ahead / max(done, 1e-300)) if done > 0 else _CLIP,
        math.log(max(lowest, 1e-300) / now) if now > 0 else 0.0,
    ]


def _area(grid: np.ndarray, lrs: np.ndarray, a: float, b: float) -> float:
    """The integral of the piecewise-linear LR from ``a`` to ``b`` (0 when ``b <= a``)."""
    if not b > a:
        return 0.0
    inner = grid[(grid > a) & (grid < b)]
    xs = np.concatenate(([a], inner, [b]))
    ys = np.interp(xs, grid, lrs)
    return float(np.sum(0.5 * (ys[1:] + ys[:-1]) * np.diff(xs)))


@dataclass(frozen=True)
class ReachModel:
    """Logistic regression on standardized :func:`reach_features`: ``P(crossed by t)``.

    Example:
        >>> m = ReachModel(np.zeros(9), np.ones(9), np.zeros(9), -3.0)
        >>> round(m.probability(np.zeros(9)), 4)
        0.0474
    """

    mean: np.ndarray
    scale: np.ndarray
    coef: np.ndarray
    intercept: float

    def probability(self, features: np.ndarray) -> float:
        z = float(np.dot((np.asarray(features, dtype=float) - self.mean) / self.scale, self.coef))
        z += self.intercept
        return float(1.0 / (1.0 + math.exp(-z))) if z > -700 else 0.0

    def bound(self, features: np.ndarray) -> float:
        """:meth:`probability` where it is below :data:`TAIL`, else 1 (no bound)."""
        q = self.probability(features)
        return q if q < TAIL else 1.0

    def to_dict(self) -> dict[str, Any]:
        return {
            "mean": [round(float(v), 6) for v in self.mean],
            "scale": [round(float(v), 6) for v in self.scale],
            "coef": [round(float(v), 6) for v in self.coef],
            "intercept": round(float(self.intercept), 6),
        }

    @classmethod
    def fit(
        cls,
        features: np.ndarray,
        crossed: np.ndarray,
        weight: np.ndarray | None = None,
        *,
        strength: float = 1.0,
    ) -> ReachModel:
        """L2-regularised logistic regression (scikit-learn's, ``C = strength``) on standardized
        features; ``weight`` lets each workload count equally."""
        from sklearn.linear_model import LogisticRegression

        x = np.asarray(features, dtype=float)
        y = np.asarray(crossed, dtype=float)
        w = np.ones(y.size) if weight is None else np.asarray(weight, dtype=float)
        w = w * (y.size / max(float(np.sum(w)), 1e-300))
        mean = x.mean(axis=0)
        scale = x.std(axis=0)
        # A feature constant in the fitting data (the share of the run seen, within one situation,
        # where every recorded run was cut at the same share) keeps scale 1 and gets no weight; a
        # spread of float noise (1e-9) would be rounded to 0 in the JSON and divide by it.
        scale[scale <= 1e-6 * np.maximum(1.0, np.abs(mean))] = 1.0
        model = LogisticRegression(C=strength, max_iter=2000).fit((x - mean) / scale, y, sample_weight=w)
        return cls(mean, scale, model.coef_[0].copy(), float(model.intercept_[0]))

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> ReachModel:
        return cls(
            np.asarray(data["mean"], dtype=float),
            np.asarray(data["scale"], dtype=float),
            np.asarray(data["coef"], dtype=float),
            float(data["intercept"]),
        )
