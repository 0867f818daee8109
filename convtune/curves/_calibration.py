"""Calibration of forecast crossing distributions, learned from recorded learning curves.

A curve model's own spread (Laplace draws of a handful of parameters fitted to a few points)
says little about how far off an extrapolation really is: families level off short of a target
the curve later reaches, and schedules change the curve in ways no prefix shows. So the raw
crossing distribution ``F`` (the share of model draws that cross by a cost ``t``) is mapped
through a monotone function ``g`` learned on recorded curves: ``P(crossed by t) = g(F(t))``
(distribution calibration, Kuleshov et al. 2018, by isotonic regression). Because ``g`` is
non-decreasing, ``g(F(t))`` is still a distribution over ``t``.

One map is learned per *situation*: whether the LR schedule is known, and how much of the
planned run has been seen (a tenth of a run says less than half of one). Each situation also
has a *reach threshold*: below it a forecast calls the curve "not within the run" (see
:func:`fit_threshold`), and a *reach model* (:class:`convtune.curves.ReachModel`) that reads the
curve itself and caps the distribution where it is confident the curve will not have crossed
(the maps' floor is too high for a pruner's budget late in a run). The shipped table,
``calibration.json`` beside this module, is regenerated on the recorded curve corpus by::

    python benchmarks/forecast.py --write-calibration convtune/curves/calibration.json

and a table may also hold reach trees (:class:`convtune.curves.ReachTrees`: "reaches within the
run" from the curve's own features, check AA in docs/benchmarks.md), added to it by::

    python benchmarks/reach_frontier.py --data benchmarks/data/corpus* --write-trees OUT

numpy/scipy only.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from functools import lru_cache
from pathlib import Path
from typing import Any

import numpy as np
from scipy.optimize import isotonic_regression

from convtune.curves._reach import ReachModel
from convtune.curves._trees import ReachTrees

DEFAULT_PATH = Path(__file__).with_name("calibration.json")
# Edges of the "share of the planned run seen" buckets; each bucket has its own map.
PROGRESS_EDGES = (0.15, 0.35, 0.6)
# Edges of the "how far ahead is the cost asked about" buckets, as a share of the planned run:
# a model's spread means something else at the next evaluation than at the end of the run.
AHEAD_EDGES = (0.5, 1.0 - 1e-9)
# Raw probabilities are pooled into at most this many bins before the isotonic fit: it keeps
# the shipped table small and the map smooth where data are sparse.
_MAX_BINS = 40
# A forecast calls a curve "not within the run" when its calibrated chance of reaching by the
# planned end is below a threshold, fitted per situation as the largest one under which at most
# this share of the fitting curves that do reach later were called "never" (issue 16: "never"
# only when the data say so). Without a fitted threshold, DEFAULT_THRESHOLD applies.
MAX_NEVER = 0.05
DEFAULT_THRESHOLD = 0.3
# A curve called reaching gets as its estimate a geometric blend of three estimates of where it
# crosses given that it does within the run: the calibrated distribution's median, the model
# draws' own median (``RawForecast.median_within``) and the line through the last two points
# (``RawForecast.line``, when it crosses within the run). A blend is the pair of weights
# (draws, line), the calibrated median taking the rest, chosen per situation on the fitting
# workloads from BLEND_GRID; without a fitted one, DEFAULT_BLEND.
Blend = tuple[float, float]
DEFAULT_BLEND: Blend = (0.5, 0.0)
_STEPS = (0.0, 0.25, 0.5, 0.75, 1.0)
BLEND_GRID: tuple[Blend, ...] = tuple((a, b) for a in _STEPS for b in _STEPS if a + b <= 1.0 and b < 1.0)
_THRESHOLD_GRID = np.round(np.arange(0.0, 0.605, 0.01), 2)


def situation(schedule_known: bool, progress: float | None) -> str:
    """The calibration key of a forecast: ``"sched:1"`` = schedule known, second progress bucket.

    ``progress`` is the share of the planned run seen (``None`` when there is no horizon).
    """
    head = "sched" if schedule_known else "blind"
    if progress is None or not math.isfinite(progress):
        return f"{head}:all"
    return f"{head}:{int(np.searchsorted(PROGRESS_EDGES, progress, side='right'))}"


def ahead(key: str, cost: float, horizon: float | None) -> str:
    """``key`` refined by where ``cost`` lies in the planned run (``"sched:1@2"``: at or past its end).

    Without a horizon every cost is read as "by the end of the run": the question asked is
    whether the curve gets there at all.
    """
    if horizon is None or not horizon > 0:
        return f"{key}@{len(AHEAD_EDGES)}"
    return f"{key}@{int(np.searchsorted(AHEAD_EDGES, cost / horizon, side='right'))}"


@dataclass(frozen=True)
class CrossingCalibration:
    """Monotone maps from a raw crossing probability to a calibrated one, per situation.

    ``maps[key] = (x, y)``: knots of a non-decreasing piecewise-linear function on ``[0, 1]``.
    A key with no map (a situation never seen in fitting) falls back to the situation without
    its ``@`` part (see :func:`ahead`), then to ``"<head>:all@<part>"`` and ``"<head>:all"``,
    then to the identity.

    Example:
        >>> cal = CrossingCalibration({"sched:all": (np.array([0.0, 1.0]), np.array([0.1, 0.7]))})
        >>> float(cal.apply("sched:2@1", 0.5))
        0.4
    """

    maps: Mapping[str, tuple[np.ndarray, np.ndarray]] = field(default_factory=dict)
    fitted_on: tuple[str, ...] = ()
    thresholds: Mapping[str, float] = field(default_factory=dict)
    blends: Mapping[str, Blend] = field(default_factory=dict)
    reach: Mapping[str, ReachModel] = field(default_factory=dict)
    # The share of curves called blown up (improved, then ended twice above their start) that
    # still reached within their planned run; None: not measured (a blow-up is then "diverged").
    blow_up: float | None = None
    # Per situation, the within-the-run model (:func:`convtune.curves._reach.within_features`):
    # "crossed by the planned end" from the curve and the study's finished runs. Empty: the
    # maps alone give ``probability`` (docs/benchmarks.md, check R).
    within: Mapping[str, ReachModel] = field(default_factory=dict)
    # Per head ("sched", "blind"), gradient-boosted trees of "reaches within the run" from the
    # curve's own features (:class:`convtune.curves.ReachTrees`; check AA, docs/benchmarks.md).
    # Empty: the maps give ``probability``.
    trees: Mapping[str, ReachTrees] = field(default_factory=dict)

    def reach_trees(self, key: str) -> ReachTrees | None:
        """The trees of situation ``key``'s head (``"sched:1@2"`` → ``"sched"``), or ``None``."""
        return self.trees.get(key.split(":")[0])

    def within_model(self, key: str) -> ReachModel | None:
        """The within-the-run model of situation ``key``, looked up like :meth:`threshold`;
        ``None`` when none was fitted."""
        return _lookup(self.within, key, None)

    def reach_model(self, key: str) -> ReachModel | None:
        """The "crossed by t" model of situation ``key`` (:mod:`convtune.curves._reach`), looked
        up like :meth:`threshold`; ``None`` when none was fitted (then the maps alone speak)."""
        return _lookup(self.reach, key, None)

    def blend(self, key: str) -> Blend:
        """The weights (model draws' median, two-point line) of the estimate in situation ``key``.

        Looked up like :meth:`threshold`; :data:`DEFAULT_BLEND` when none was fitted.
        """
        return _lookup(self.blends, key, DEFAULT_BLEND)

    def threshold(self, key: str) -> float:
        """The reach threshold of situation ``key``: below it the forecast says "not within the run".

        Its own; for a share of the run never seen in fitting (the last bucket: the benchmark
        cuts at most half-way), that of the nearest earlier share (a forecast knows no less
        later in a run); else its head's ``:all``; else :data:`DEFAULT_THRESHOLD`.
        """
        return float(_lookup(self.thresholds, key, DEFAULT_THRESHOLD))

    def apply(self, key: str, p: float | np.ndarray) -> np.ndarray:
        knots = None
        bare, _, at = key.partition("@")
        head = bare.split(":")[0]
        for k in (key, bare, f"{head}:all@{at}", f"{head}:all"):
            knots = self.maps.get(k)
            if knots is not None:
                break
        p = np.clip(np.asarray(p, dtype=float), 0.0, 1.0)
        if knots is None:
            return p
        x, y = knots
        return np.interp(p, x, y)

    def to_dict(self) -> dict[str, Any]:
        return {
            "fitted_on": list(self.fitted_on),
            "thresholds": {k: round(float(v), 4) for k, v in sorted(self.thresholds.items())},
            "blends": {k: [round(float(w), 4) for w in v] for k, v in sorted(self.blends.items())},
            "progress_edges": list(PROGRESS_EDGES),
            "ahead_edges": list(AHEAD_EDGES),
            "reach": {k: m.to_dict() for k, m in sorted(self.reach.items())},
            "blow_up": None if self.blow_up is None else round(float(self.blow_up), 4),
            **({"within": {k: m.to_dict() for k, m in sorted(self.within.items())}} if self.within else {}),
            **({"trees": {k: m.to_dict() for k, m in sorted(self.trees.items())}} if self.trees else {}),
            "maps": {
                k: {"x": [round(float(a), 5) for a in x], "y": [round(float(b), 5) for b in y]}
                for k, (x, y) in sorted(self.maps.items())
            },
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> CrossingCalibration:
        maps = {
            str(k): (np.asarray(v["x"], dtype=float), np.asarray(v["y"], dtype=float))
            for k, v in data.get("maps", {}).items()
        }
        thresholds = {str(k): float(v) for k, v in data.get("thresholds", {}).items()}
        blends = {str(k): _as_blend(v) for k, v in data.get("blends", {}).items()}
        reach = {str(k): ReachModel.from_dict(v) for k, v in data.get("reach", {}).items()}
        within = {str(k): ReachModel.from_dict(v) for k, v in data.get("within", {}).items()}
        trees = {str(k): ReachTrees.from_dict(v) for k, v in data.get("trees", {}).items()}
        blow_up = data.get("blow_up")
        return cls(
            maps,
            tuple(data.get("fitted_on", ())),
            thresholds,
            blends,
            reach,
            None if blow_up is None else float(blow_up),
            within,
            trees,
        )

    def save(self, path: str | Path) -> None:
        Path(path).write_text(json.dumps(self.to_dict(), indent=1) + "\n")

    @classmethod
    def load(cls, path: str | Path) -> CrossingCalibration:
        return cls.from_dict(json.loads(Path(path).read_text()))

    @classmethod
    def fit(
        cls,
        keys: Sequence[str],
        raw: Sequence[float] | np.ndarray,
        outcome: Sequence[float] | np.ndarray,
        weight: Sequence[float] | np.ndarray | None = None,
        *,
        fitted_on: Sequence[str] = (),
    ) -> CrossingCalibration:
        """Fit one map per key (and a pooled ``"<head>:all"`` map per head).

        Each record is a raw probability ``F(t)`` that a curve had crossed by some cost ``t``,
        and whether it had (1) or not (0). ``weight`` lets each workload count equally.
        """
        keys_arr = np.asarray(keys)
        p = np.clip(np.asarray(raw, dtype=float), 0.0, 1.0)
        y = np.asarray(outcome, dtype=float)
        w = np.ones_like(p) if weight is None else np.asarray(weight, dtype=float)
        maps: dict[str, tuple[np.ndarray, np.ndarray]] = {}
        keys_str = keys_arr.astype(str)
        groups: dict[str, np.ndarray] = {str(k): keys_str == k for k in np.unique(keys_str)}
        bare = np.array([k.split("@")[0] for k in keys_str]) if keys_str.size else keys_str
        for k in np.unique(bare):
            groups[str(k)] = bare == k
        heads = np.array([k.split(":")[0] for k in keys_str]) if keys_str.size else keys_str
        ats = np.array([k.partition("@")[2] for k in keys_str]) if keys_str.size else keys_str
        for head in np.unique(heads):
            groups[f"{head}:all"] = heads == head
            for at in np.unique(ats[heads == head]):
                if at:
                    groups[f"{head}:all@{at}"] = (heads == head) & (ats == at)
        for key, sel in groups.items():
            if np.count_nonzero(sel) >= 50:
                maps[str(key)] = _isotonic_map(p[sel], y[sel], w[sel])
        return cls(maps, tuple(fitted_on))


def fit_blow_up(reached: Sequence[bool], min_curves: int = 10) -> float | None:
    """The chance that a curve called blown up still reaches within its planned run.

    One record per forecast that called a curve blown up: whether it reached later. The
    estimate is the posterior mean under a Jeffreys prior, ``(k + 1/2) / (n + 1)``: with the
    few blow-ups a corpus holds, the raw share of 0 recoveries would say "never" on no evidence.
    ``None`` with fewer than ``min_curves`` records.

    Example:
        >>> round(fit_blow_up([True] * 4 + [False] * 31), 3)
        0.125
    """
    n = len(reached)
    if n < min_curves:
        return None
    return (sum(bool(r) for r in reached) + 0.5) / (n + 1.0)


def _as_blend(value: Any) -> Blend:
    """A stored blend: a pair, or (an older table) the draws' weight alone."""
    if isinstance(value, int | float):
        return (float(value), 0.0)
    draws, line = value
    return (float(draws), float(line))


def _lookup(table: Mapping[str, Any], key: str, default: Any) -> Any:
    """``table``'s value for situation ``key``: its own; for a share of the run never seen in
    fitting, that of the nearest earlier share; else its head's ``:all``; else ``default``."""
    bare = key.partition("@")[0]
    head, _, bucket = bare.partition(":")
    keys = [bare]
    if bucket.isdigit():
        keys += [f"{head}:{i}" for i in range(int(bucket) - 1, -1, -1)]
    for k in (*keys, f"{head}:all"):
        if k in table:
            return table[k]
    return default


def fit_blend(
    estimates: np.ndarray,
    truth: Sequence[float] | np.ndarray,
    workload: Sequence[str],
) -> Blend:
    """The blend from :data:`BLEND_GRID` whose estimates err least on the fitting curves.

    One row of ``estimates`` per forecast of a curve that reached later in its planned run:
    (calibrated median, draws' median, two-point line; ``nan`` where one has none), with the
    measured crossing in ``truth``. The score is the mean over workloads of each workload's
    median relative error (an estimate beyond twice the crossing counts as 1; the benchmark
    reports their median, which jumps from one fold to the next); ties go to the blend nearer
    :data:`DEFAULT_BLEND`.
    """
    e = np.asarray(estimates, dtype=float).reshape(-1, 3)
    t = np.asarray(truth, dtype=float)
    names = np.asarray(workload)
    if e.shape[0] == 0:
        return DEFAULT_BLEND
    groups = [names == n for n in np.unique(names)]
    best, best_score = DEFAULT_BLEND, math.inf

    def distance(b: Blend) -> float:
        return abs(b[0] - DEFAULT_BLEND[0]) + abs(b[1] - DEFAULT_BLEND[1])

    for b in sorted(BLEND_GRID, key=distance):
        est = blend_estimates(e, b)
        err = np.where(est <= 2.0 * t, np.minimum(1.0, np.abs(est / t - 1.0)), 1.0)
        score = float(np.mean([np.median(err[g]) for g in groups]))
        if score < best_score - 1e-9:
            best, best_score = b, score
    return best


def blend_estimates(estimates: np.ndarray, blend: Blend) -> np.ndarray:
    """Geometric blend of each row (calibrated median, draws' median, two-point line).

    Weights ``(1 - draws - line, draws, line)``; an estimate that is missing (``nan``, ``inf``,
    not positive) gives its weight to the others in proportion; a row with none is ``inf``.
    """
    e = np.atleast_2d(np.asarray(estimates, dtype=float))
    w = np.array([1.0 - blend[0] - blend[1], blend[0], blend[1]])
    ok = np.isfinite(e) & (e > 0)
    wk = np.where(ok, w, 0.0)
    total = wk.sum(axis=1)
    # A row whose weighted estimates are all missing falls back to its estimates unweighted.
    fallback = ok & (total[:, None] <= 0)
    wk = np.where(total[:, None] > 0, wk, fallback.astype(float))
    total = wk.sum(axis=1)
    logs = np.log(np.where(ok, e, 1.0))
    with np.errstate(invalid="ignore", divide="ignore"):
        out = np.exp((wk * logs).sum(axis=1) / total)
    return np.where(total > 0, out, math.inf)


def fit_threshold(
    prob: Sequence[float] | np.ndarray,
    never_if_called: Sequence[bool] | np.ndarray,
    never_otherwise: Sequence[bool] | np.ndarray,
    weight: Sequence[float] | np.ndarray | None = None,
    *,
    max_never: float = MAX_NEVER,
) -> float:
    """The largest reach threshold under which at most ``max_never`` of reaching curves get "never".

    One record per forecast of a curve that reached later in its planned run: its calibrated
    ``prob`` of reaching by the planned end, and whether its point estimate would count as
    "never" (beyond twice the true crossing) if it were called "not within the run"
    (``prob < threshold``) or otherwise. ``weight`` lets each workload count equally (a pooled
    share: it came out ahead of a median over workloads, which let the threshold climb until
    half of the workloads were at the limit; measured leave-one-workload-out).
    """
    p = np.asarray(prob, dtype=float)
    a = np.asarray(never_if_called, dtype=float)
    b = np.asarray(never_otherwise, dtype=float)
    w = np.ones_like(p) if weight is None else np.asarray(weight, dtype=float)
    total = float(np.sum(w))
    if p.size == 0 or not total > 0:
        return DEFAULT_THRESHOLD
    for tau in _THRESHOLD_GRID[::-1]:
        if float(np.sum(w * np.where(p < tau, a, b))) / total <= max_never:
            return float(tau)
    return 0.0


def _isotonic_map(p: np.ndarray, y: np.ndarray, w: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    order = np.argsort(p, kind="stable")
    p, y, w = p[order], y[order], w[order]
    # Equal-weight bins, with every exact tie (raw 0 and raw 1 are common) in one bin.
    cum = np.cumsum(w) / max(float(np.sum(w)), 1e-300)
    bins = np.minimum((cum * _MAX_BINS).astype(int), _MAX_BINS - 1)
    _, first = np.unique(p, return_index=True)
    tie_bin = bins[first][np.searchsorted(p[first], p, side="right") - 1]
    bins = tie_bin
    ids, inverse = np.unique(bins, return_inverse=True)
    bw = np.bincount(inverse, weights=w)
    bx = np.bincount(inverse, weights=w * p) / bw
    by = np.bincount(inverse, weights=w * y) / bw
    fitted = isotonic_regression(by, weights=bw, increasing=True).x
    x = np.concatenate(([0.0], bx, [1.0]))
    yy = np.concatenate(([fitted[0]], fitted, [fitted[-1]]))
    # np.interp needs increasing x; merge knots that coincide.
    x, keep = np.unique(x, return_index=True)
    return x, np.clip(yy[keep], 0.0, 1.0)


def without_trees(calibration: CrossingCalibration) -> CrossingCalibration:
    """``calibration`` with its reach trees left out: ``probability`` from the maps alone."""
    return replace(calibration, trees={}) if calibration.trees else calibration


@lru_cache(maxsize=1)
def default_calibration() -> CrossingCalibration:
    """The shipped table (identity maps if it is missing)."""
    if DEFAULT_PATH.exists():
        return CrossingCalibration.load(DEFAULT_PATH)
    return CrossingCalibration()
