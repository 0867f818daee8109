"""Forecast the cost at which a partial learning curve will cross its target.

Two stages. First an ensemble of curve families (after Domhan et al. 2015) is fitted to the
curve seen so far: the LR-annealing law when the trial's LR schedule is known, a power law and
an exponential always. Laplace draws of each family, mixed by weights that no family can take
whole, give a *raw* distribution of the crossing cost; a small share of draws spread
log-uniformly from the last cost to far beyond the planned run keeps every cost possible.
Second, the raw distribution is *calibrated* by a monotone map learned on recorded curves of
other workloads (:mod:`convtune.curves._calibration`), so that its probabilities are observed
frequencies: ``probability_before(t)`` is the chance that the curve's measured crossing comes
by cost ``t``.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, replace
from typing import Any, TypedDict, Unpack

import numpy as np

from convtune.config.target import Target
from convtune.curves import _reach
from convtune.curves._calibration import (
    CrossingCalibration,
    ahead,
    blend_estimates,
    default_calibration,
    situation,
)
from convtune.curves._measure import as_target, merge_repeats, time_to_target
from convtune.curves._models import (
    Basis,
    Fit,
    annealing_basis,
    blind_basis,
    fit_exp,
    fit_power,
    noise_scale,
    predict,
    sample_params,
)
from convtune.curves._prior import CurvePrior
from convtune.curves._reach import (
    CurveSummary,
    _two_point_crossing,
    reach_features,
    tree_features,
    within_features,
)
from convtune.curves._references import PLATEAU_NOISE, ReferenceRun, mix_crossings, moved, plateau_crossings
from convtune.curves._schedule import LRSchedule

_N_DRAWS = 240
_SEED = 20240601
# How far past the last point (or the planned end) the families look for a crossing.
_BLIND_REACH = 20.0
# Future evaluations simulated with observation noise (thinned beyond this many).
_MAX_NOISY_EVALS = 256
# Prior weights of the families before the data speak (Akaike weights) and the least weight
# each keeps after: no single family's plateau may decide that a curve never reaches.
_FAMILY_PRIOR = {"annealing": 2.0, "power": 1.0, "exp": 1.0}
_FAMILY_FLOOR = 0.15
# Share of draws spread log-uniformly over [last cost, _DEFENSIVE_REACH x the run]: the raw
# distribution then covers every cost, and calibration decides how much they weigh.
_DEFENSIVE_SHARE = 0.1
_DEFENSIVE_REACH = 40.0
# Share of draws from the recent trend (a line in log cost through the last _LOCAL_POINTS).
_LOCAL_SHARE = 0.25
_LOCAL_POINTS = 4
# Knots of the stored crossing distribution (cost, probability of having crossed by then).
_N_KNOTS = 20


@dataclass(frozen=True)
class Forecast:
    """Where a curve is forecast to cross its target, in the curve's cost unit.

    ``estimate`` is where the curve crosses given that it reaches within the planned run
    (without a horizon: at all) when that is likely enough (``probability`` at or above the
    calibration's reach threshold for the situation, fitted so that curves which do reach are
    rarely called "never"): a blend of the distribution's median given reach, the model draws'
    own and the two-point line's crossing (:meth:`RawForecast.estimates_given_reach`);
    otherwise the curve is called "not within the run" and ``estimate`` lies beyond the horizon
    (the median of the later crossings, ``math.inf`` if none); :meth:`quantile` gives any
    quantile of the unconditional distribution.
    ``low``/``high`` bound it with probability ``level`` (``high`` is often ``inf``),
    ``probability`` is the chance of reaching within the planned run (the horizon; without one,
    at all), ``reached`` means the curve already crossed (then ``estimate == low == high`` is
    the measured, interpolated crossing), and ``diverged`` flags non-finite values (or a loss
    that blew up, where the calibration has not measured how often those recover).
    ``model`` names what produced it (``measured``; ``annealing`` when the schedule was known;
    else the family that weighed most, ``power`` or ``exp``; ``trend`` from two points; ``none``
    when there were too few points to fit; ``blew-up`` for a curve that improved, then ended
    twice above its start: its probability is the measured share of such curves that recovered
    in time; ``diverged``);
    ``n_points`` is how many evaluations it used.

    ``cdf_costs`` / ``cdf_probs`` are knots of the calibrated crossing distribution: the
    probability that the measured crossing comes by each cost (non-decreasing; the mass left
    after the last knot is "never"). :meth:`probability_before` reads it; it survives
    :meth:`to_attrs` / :meth:`from_attrs`, so a stored forecast answers the same questions.

    Example:
        >>> f = Forecast(2000.0, 1200.0, 5000.0, False, 0.7, 0.8,
        ...              cdf_costs=(1000.0, 2000.0, 4000.0), cdf_probs=(0.0, 0.5, 0.7))
        >>> f.probability_before(3000.0)
        0.6
    """

    estimate: float
    low: float
    high: float
    reached: bool
    probability: float
    level: float
    diverged: bool = False
    model: str = "none"
    n_points: int = 0
    cdf_costs: tuple[float, ...] = ()
    cdf_probs: tuple[float, ...] = ()

    def probability_before(self, cost: float) -> float:
        """The calibrated probability that the curve's measured crossing comes by ``cost``.

        Non-decreasing in ``cost``; equals :attr:`probability` at the horizon the forecast was
        made with; beyond the last knot it stays at the share of "reaches at all". A pruner
        compares it with an incumbent's time-to-target.
        """
        cost = float(cost)
        if math.isnan(cost):
            return math.nan
        if self.reached:
            return 1.0 if cost >= self.estimate else 0.0
        if self.diverged:
            return 0.0
        costs, probs = self._knots()
        if costs.size == 0:
            return 0.0
        if cost < costs[0]:
            return 0.0
        if cost >= costs[-1]:
            return float(probs[-1])
        return float(np.interp(cost, costs, probs))

    def quantile(self, q: float) -> float:
        """The cost by which the crossing has come with probability ``q`` (``inf``: never)."""
        if self.reached:
            return self.estimate
        if self.diverged:
            return math.inf
        costs, probs = self._knots()
        return _inverse(costs, probs, q)

    def _knots(self) -> tuple[np.ndarray, np.ndarray]:
        if self.cdf_costs:
            return np.asarray(self.cdf_costs, dtype=float), np.asarray(self.cdf_probs, dtype=float)
        # Built by hand, without a distribution: read one off the interval.
        tail = 0.5 * (1.0 - self.level)
        pts = [
            (self.low, 0.0 if self.low == self.estimate else tail),
            (self.estimate, 0.5),
            (self.high, 1 - tail),
        ]
        pts = [(c, p) for c, p in pts if math.isfinite(c)]
        if not pts:
            return np.empty(0), np.empty(0)
        return np.array([c for c, _ in pts]), np.maximum.accumulate(np.array([p for _, p in pts]))

    def to_attrs(self, prefix: str = "forecast_") -> dict[str, Any]:
        """A JSON-able dict for Optuna user attrs; non-finite numbers become ``None``."""
        out: dict[str, Any] = {}
        for key, value in asdict(self).items():
            if isinstance(value, tuple):
                value = [float(f"{x:.7g}") for x in value]
            elif isinstance(value, float) and not math.isfinite(value):
                value = None
            out[prefix + key] = value
        return out

    @classmethod
    def from_attrs(cls, attrs: Mapping[str, Any], prefix: str = "forecast_") -> Forecast:
        """Rebuild a forecast from :meth:`to_attrs` output (``None`` numbers read as ``inf``)."""

        def num(key: str, missing: float = math.inf) -> float:
            value = attrs.get(prefix + key)
            return missing if value is None else float(value)

        return cls(
            estimate=num("estimate"),
            low=num("low"),
            high=num("high"),
            reached=bool(attrs.get(prefix + "reached", False)),
            probability=num("probability", math.nan),
            level=num("level", 0.8),
            diverged=bool(attrs.get(prefix + "diverged", False)),
            model=str(attrs.get(prefix + "model", "none")),
            n_points=int(attrs.get(prefix + "n_points", 0) or 0),
            cdf_costs=tuple(float(x) for x in attrs.get(prefix + "cdf_costs") or ()),
            cdf_probs=tuple(float(x) for x in attrs.get(prefix + "cdf_probs") or ()),
        )


def _inverse(costs: np.ndarray, probs: np.ndarray, q: float) -> float:
    """The first cost at which the piecewise-linear distribution reaches ``q``."""
    if costs.size == 0 or not probs[-1] >= q:
        return math.inf
    i = int(np.searchsorted(probs, q, side="left"))
    if i == 0:
        return float(costs[0])
    p0, p1 = float(probs[i - 1]), float(probs[i])
    frac = (q - p0) / (p1 - p0) if p1 > p0 else 1.0
    return float(costs[i - 1] + frac * (costs[i] - costs[i - 1]))


def point_estimate(
    costs: np.ndarray,
    probs: np.ndarray,
    probability: float,
    threshold: float,
    given_reach: float | None = None,
) -> float:
    """The point estimate of a crossing distribution (knots ``costs``, ``probs``).

    ``probability`` is the chance of crossing by the planned end (without one: at all). At or
    above ``threshold`` the curve is called reaching, and the estimate is where it comes if it
    comes (what a time-to-target is compared on): ``given_reach`` when the caller has one (see
    :meth:`RawForecast.calibrated`), else the median crossing given that it comes by then, read
    off the distribution. Below ``threshold`` the curve is called "not within the run" and the
    estimate is the median crossing given that it comes later, or ``inf`` when the distribution
    holds no later crossing.
    """
    if probability > 0 and probability >= threshold:
        if given_reach is not None and math.isfinite(given_reach):
            return given_reach
        return _inverse(costs, probs, 0.5 * probability)
    reach = float(probs[-1]) if probs.size else 0.0
    if not reach > probability:
        return math.inf
    return _inverse(costs, probs, 0.5 * (probability + reach))


# The model label of a blown-up curve (see RawForecast.blew_up); users see it in Forecast.model.
_BLEW_UP = "blew-up"


def _hopeless(level: float, n: int) -> Forecast:
    return Forecast(math.inf, math.inf, math.inf, False, 0.0, level, True, "diverged", n)


def _blew_up(y: np.ndarray, sigma: float) -> bool:
    """A curve that improved clearly, then ended twice in a row worse than where it started."""
    if y.size < 3:
        return False
    start, best = float(y[0]), float(np.min(y))
    if not start - best > 3.0 * sigma:
        return False
    return bool(y[-1] > start and y[-2] > start)


def _crossings(pred: np.ndarray, grid: np.ndarray, level: float) -> np.ndarray:
    """First crossing of ``level`` along ``grid`` for each row of ``pred`` (inf if none)."""
    hit = pred <= level
    found = hit.any(axis=1)
    first = hit.argmax(axis=1)
    out = np.full(pred.shape[0], math.inf)
    rows = np.flatnonzero(found)
    j = first[rows]
    at_start = j == 0
    out[rows[at_start]] = grid[0]
    r, j = rows[~at_start], j[~at_start]
    p0, p1 = pred[r, j - 1], pred[r, j]
    frac = np.clip((p0 - level) / np.where(p0 > p1, p0 - p1, 1.0), 0.0, 1.0)
    out[r] = grid[j - 1] + frac * (grid[j] - grid[j - 1])
    return out


def _first_noisy_crossings(
    pred: np.ndarray,
    grid: np.ndarray,
    level: float,
    evals: np.ndarray,
    sigma: float,
    rng: np.random.Generator,
    last: tuple[float, float],
) -> np.ndarray:
    """First evaluation (interpolated) at which a noisy observation of each row crosses ``level``.

    A measured time-to-target is where the *observed* metric first reaches the target, and an
    evaluation scatters around the curve by the noise ``sigma``: near a plateau close to the
    target, noise crosses it long before (or without) the mean curve. ``evals`` are the future
    evaluation costs inside ``grid``; ``inf`` where no observation crosses there. ``last`` is
    the last evaluation seen (cost, value): a crossing at the first future evaluation is
    interpolated from it, as :func:`time_to_target` will measure it (it was put at that
    evaluation itself, so a curve one evaluation from its target got no chance of crossing
    before the next one; ``convtune study forecasts`` found it on a confirm run).
    """
    out = np.full(pred.shape[0], math.inf)
    if evals.size == 0 or pred.shape[0] == 0:
        return out
    j = np.clip(np.searchsorted(grid, evals, side="right"), 1, grid.size - 1)
    w = (evals - grid[j - 1]) / np.maximum(grid[j] - grid[j - 1], 1e-300)
    at = pred[:, j - 1] * (1.0 - w) + pred[:, j] * w
    obs = at + sigma * rng.standard_normal(at.shape)
    hit = obs <= level
    found = hit.any(axis=1)
    first = hit.argmax(axis=1)
    rows = np.flatnonzero(found)
    k = first[rows]
    c_last, y_last = last
    before = np.concatenate(([c_last], evals))  # before[k]: the evaluation before evals[k]
    o0 = np.where(k > 0, obs[rows, np.maximum(k - 1, 0)], y_last)
    o1 = obs[rows, k]
    frac = np.clip((o0 - level) / np.where(o0 > o1, o0 - o1, 1.0), 0.0, 1.0)
    out[rows] = before[k] + frac * (evals[k] - before[k])
    return out


def _future_evals(c: np.ndarray, c_last: float, end: float) -> np.ndarray:
    """Evaluation costs after ``c_last`` up to ``end`` at the curve's own spacing (≤ 256 of them)."""
    if c.size < 2 or not end > c_last:
        return np.empty(0)
    spacing = float(np.median(np.diff(c)))
    if not spacing > 0:
        return np.empty(0)
    m = int(min((end - c_last) / spacing, 1e6))
    stride = max(1, math.ceil(m / _MAX_NOISY_EVALS))
    return c_last + spacing * np.arange(stride, m + 1, stride, dtype=float)


def _warmup_end(schedule: LRSchedule) -> float:
    top = float(np.max(schedule.lrs))
    at_top = np.flatnonzero(schedule.lrs >= top * (1.0 - 1e-9))
    return float(schedule.costs[at_top[0]]) if at_top.size else 0.0


@dataclass(frozen=True)
class RawForecast:
    """The uncalibrated stage of a forecast: crossing draws of the fitted families.

    ``final`` is set when no calibration applies (already reached, diverged). ``draws`` are
    sorted crossing costs (``inf``: that draw does not cross within the modelled range);
    ``key`` is the calibration situation. Benchmarks use this to fit calibrations without
    refitting curves; everyone else calls :func:`forecast_time_to_target`.
    """

    final: Forecast | None
    draws: np.ndarray
    c_last: float
    horizon: float | None
    key: str
    model: str
    n_points: int
    level: float
    # Where the line through the last two points crosses the target (inf: not improving).
    line: float = math.inf
    # The curve prefix as the calibration's reach model reads it (None: the maps alone speak).
    summary: CurveSummary | None = None

    def cdf(self, costs: float | np.ndarray) -> np.ndarray:
        """Raw share of draws crossed by each cost."""
        if self.draws.size == 0:
            return np.zeros_like(np.asarray(costs, dtype=float))
        return np.searchsorted(self.draws, np.asarray(costs, dtype=float), side="right") / self.draws.size

    @property
    def blew_up(self) -> bool:
        """Whether the curve improved, then ended twice above its start: judged in
        :meth:`calibrated` from how often such curves recovered, not fitted."""
        return self.model == _BLEW_UP

    def median_within(self) -> float:
        """The median of the draws that cross by the planned end (without one: at all);
        ``inf`` when no draw crosses by then."""
        end = self.horizon if self.horizon is not None else math.inf
        inside = self.draws[(self.draws >= self.c_last) & (self.draws <= end)]
        return float(np.median(inside)) if inside.size else math.inf

    def estimates_given_reach(self, costs: np.ndarray, probs: np.ndarray, probability: float) -> np.ndarray:
        """Three estimates of where the curve crosses given that it does by the planned end.

        The median read off the calibrated distribution (knots ``costs``, ``probs``), the raw
        draws' own median (:meth:`median_within`), and the two-point line's crossing when it
        comes by then (else ``nan``). Calibration says *whether* a curve reaches in the run; for
        *when*, these three err differently (the maps, fitted per share of the run ahead, bend
        the distribution within it; the line sees only the recent pace), and a blend of them,
        weighted per situation by the calibration, errs least (held out over the corpus, see
        ``docs/benchmarks.md``).
        """
        end = self.horizon if self.horizon is not None else math.inf
        line = self.line if self.c_last < self.line <= end else math.nan
        conditional = _inverse(costs, probs, 0.5 * probability) if probability > 0 else math.inf
        return np.array([conditional, self.median_within(), line])

    def calibrated(
        self,
        calibration: CrossingCalibration | None = None,
        *,
        reach_max_lowering: float | None = None,
        references: Sequence[ReferenceRun] = (),
        reach_trees: bool = True,
    ) -> Forecast:
        """The forecast through ``calibration``'s maps and reach models (default: the shipped
        table), and its reach trees unless ``reach_trees`` is false (:meth:`_from_trees`).
        ``reach_max_lowering`` bounds how many times below the maps' probability a reach
        model may push it (default :data:`convtune.curves._reach.MAX_LOWERING`; ``inf``: no
        bound). ``references``: finished runs of the same study; on a plateau prefix, where
        those that stood on one too crossed is blended in (:mod:`convtune.curves._references`);
        elsewhere, where the calibration holds a within-the-run model, they set the chance of
        crossing by the planned end (:meth:`_within_the_run`)."""
        cal = default_calibration() if calibration is None else calibration
        if reach_max_lowering is None:
            reach_max_lowering = _reach.MAX_LOWERING
        if self.final is not None:
            return self._blown_up(cal) if self.blew_up else self.final
        m = self.draws.size
        finite = self.draws[np.isfinite(self.draws)]
        idx = np.unique(np.linspace(0, finite.size - 1, min(_N_KNOTS, finite.size)).round().astype(int))
        knot_costs = finite[idx] if finite.size else np.empty(0)
        raw_p = (idx + 1.0) / m if finite.size else np.empty(0)
        extra = [self.c_last]
        if self.horizon is not None and self.horizon > self.c_last:
            extra.append(self.horizon)
        extra_c = np.asarray(extra, dtype=float)
        extra_p = self.cdf(extra_c)
        extra_p[0] = 0.0  # not crossed by the last cost seen
        costs = np.concatenate((extra_c, knot_costs))
        raw = np.concatenate((extra_p, raw_p))
        order = np.argsort(costs, kind="stable")
        costs, raw = costs[order], np.maximum.accumulate(raw[order])
        costs, first = np.unique(costs, return_index=True)
        raw = np.maximum.reduceat(raw, first)
        # Each knot through the map of its situation and of how far ahead it lies; the running
        # maximum keeps the distribution non-decreasing where the maps join.
        mapped = np.array(
            [float(cal.apply(ahead(self.key, t, self.horizon), p)) for t, p in zip(costs, raw, strict=True)]
        )
        mapped = np.maximum.accumulate(mapped)
        probs = np.minimum(mapped, self._reach_caps(costs, cal))
        if reach_max_lowering is not None and math.isfinite(reach_max_lowering):
            probs = np.maximum(probs, mapped / reach_max_lowering)
        probs[0] = 0.0
        probs = self._within_the_run(costs, probs, cal, references)
        probs, threshold = self._from_trees(costs, probs, cal, reach_trees)
        if references and self.summary is not None:
            matched = plateau_crossings(self.summary.c, self.summary.y, references, self.horizon)
            if matched is not None:
                costs, probs = mix_crossings(costs, probs, matched)
        tail = 0.5 * (1.0 - self.level)
        if self.horizon is not None:
            probability = _by(self.horizon, costs, probs)
        else:
            probability = float(probs[-1])
        given_reach = blend_estimates(
            self.estimates_given_reach(costs, probs, probability), cal.blend(self.key)
        )
        estimate = point_estimate(costs, probs, probability, threshold, float(given_reach[0]))
        low = max(_inverse(costs, probs, tail), self.c_last)
        high = _inverse(costs, probs, 1.0 - tail)
        return Forecast(
            estimate=estimate,
            low=min(low, estimate),
            high=max(high, estimate),
            reached=False,
            probability=probability,
            level=self.level,
            diverged=False,
            # A schedule-aware ensemble is named by the law that makes it so.
            model="annealing"
            if self.key.startswith("sched") and self.model in ("power", "exp")
            else self.model,
            n_points=self.n_points,
            cdf_costs=tuple(float(c) for c in costs),
            cdf_probs=tuple(float(p) for p in probs),
        )

    def _blown_up(self, cal: CrossingCalibration) -> Forecast:
        """A curve that blew up, given the calibration's share of such curves that still reached
        within their planned run (:attr:`CrossingCalibration.blow_up`).

        Some do: under a cyclic or stepped LR the loss comes back down when the LR does. So the
        forecast is not "diverged" but a low probability spread evenly over the rest of the run
        (when the crossing comes, nothing in a blown-up prefix says), which a pruner weighs
        like any other. Without a measured share or a planned end, it stays ``diverged``.
        """
        assert self.final is not None
        rate = cal.blow_up
        if rate is None or self.horizon is None or not self.horizon > self.c_last:
            return self.final
        costs, probs = np.array([self.c_last, self.horizon]), np.array([0.0, rate])
        # Called reaching only when most such curves did: the thresholds were fitted on curves
        # whose prefix a model could read, and a blow-up's says nothing of when it recovers.
        estimate = point_estimate(costs, probs, rate, 0.5)
        low = max(_inverse(costs, probs, 0.5 * (1.0 - self.level)), self.c_last)
        return replace(
            self.final,
            estimate=estimate,
            low=min(low, estimate),
            high=max(_inverse(costs, probs, 0.5 * (1.0 + self.level)), estimate),
            probability=float(rate),
            diverged=False,
            cdf_costs=(float(self.c_last), float(self.horizon)),
            cdf_probs=(0.0, float(rate)),
        )

    def _within_the_run(
        self,
        costs: np.ndarray,
        probs: np.ndarray,
        cal: CrossingCalibration,
        references: Sequence[ReferenceRun],
    ) -> np.ndarray:
        """``probs`` scaled so that ``P(crossed by the planned end)`` is the calibration's
        within-the-run model's (:func:`convtune.curves._reach.within_features`), kept within
        :data:`convtune.curves._reach.WITHIN_MAX_FACTOR` of the maps'.

        Only where at least one of the study's finished runs counts (its outcome by the planned
        end known, not crossed by this curve's last cost): from the curve alone the model called
        steadily improving synthetic curves "never" (check R, docs/benchmarks.md), so without
        that evidence the maps speak. Not on a plateau prefix either: there the runs that stood
        on one too are blended in (:func:`convtune.curves._references.plateau_crossings`), and the
        model, reading all runs, raised a forecast whose plateau references had all failed.
        Unchanged also without a model, a horizon still ahead, or a chance left by the maps and
        reach caps."""
        model = cal.within_model(self.key)
        if not references or model is None or self.summary is None:
            return probs
        if self.horizon is None or not self.horizon > self.c_last:
            return probs
        by_end = _by(self.horizon, costs, probs)
        if not by_end > 0:
            return probs
        x = within_features(self.summary, float(self.cdf(self.horizon)), self.horizon, references)
        if not np.any(x[-2:] > 0):  # n_worse, n_better: no finished run counts
            return probs
        if not moved(self.summary.y) >= PLATEAU_NOISE:
            return probs  # a plateau: the runs that stood on one too speak (plateau_crossings)
        factor = _reach.WITHIN_MAX_FACTOR
        p = min(max(model.probability(x), by_end / factor), by_end * factor, 1.0)
        scaled = np.minimum(probs * (p / by_end), 1.0)
        scaled[0] = 0.0
        return np.maximum.accumulate(scaled)

    def _from_trees(
        self, costs: np.ndarray, probs: np.ndarray, cal: CrossingCalibration, reach_trees: bool = True
    ) -> tuple[np.ndarray, float]:
        """``probs`` scaled so that ``P(crossed by the planned end)`` is the calibration's
        :class:`convtune.curves.ReachTrees`' probability, and the trees' reach threshold; else
        ``probs`` and the situation's threshold.

        The trees speak only on a curve whose features all lie within the range they were fitted
        on (:meth:`~convtune.curves.ReachTrees.covers`): fitted on recorded curves, a model of
        the curve alone called smooth synthetic ones hopeless (check R, docs/benchmarks.md).
        Unchanged also without trees (or with ``reach_trees`` false), a horizon still ahead, or a
        chance left by the maps and reach caps (a distribution with nothing to scale)."""
        threshold = cal.threshold(self.key)
        trees = cal.reach_trees(self.key) if reach_trees else None
        if trees is None or self.summary is None or self.horizon is None or not self.horizon > self.c_last:
            return probs, threshold
        x = tree_features(self.summary)
        if not trees.covers(x):
            return probs, threshold
        by_end = _by(self.horizon, costs, probs)
        if not by_end > 0:
            return probs, threshold
        scaled = np.minimum(probs * (trees.probability(x) / by_end), 1.0)
        scaled[0] = 0.0
        return np.maximum.accumulate(scaled), trees.threshold(_bucket(self.key))

    def _reach_caps(self, costs: np.ndarray, cal: CrossingCalibration) -> np.ndarray:
        """Upper bounds on ``P(crossed by t)`` at each knot from the calibration's reach model.

        Where the model is confident (below :data:`convtune.curves._reach.TAIL`) that the curve
        will not have crossed by a knot within the planned run, that bounds this knot and every
        earlier one (a curve that has not crossed by ``t`` has not crossed before); elsewhere
        the bound is 1 and the maps stand. Without a horizon or a model: all 1.
        """
        caps = np.ones_like(costs)
        model = cal.reach_model(self.key)
        if model is None or self.summary is None or self.horizon is None:
            return caps
        for i, t in enumerate(costs):
            if self.c_last < t <= self.horizon:
                caps[i] = model.bound(reach_features(self.summary, float(self.cdf(t)), float(t)))
        return np.minimum.accumulate(caps[::-1])[::-1]


def _by(cost: float, costs: np.ndarray, probs: np.ndarray) -> float:
    """``P(crossed by cost)`` of a distribution with knots ``costs``, ``probs`` (its last value
    beyond the last knot)."""
    return float(np.interp(cost, costs, probs)) if costs[-1] >= cost else float(probs[-1])


def _bucket(key: str) -> int:
    """The bucket of the share of the run seen in a situation key (``"sched:2@1"`` → 2)."""
    part = key.split("@")[0].partition(":")[2]
    return int(part) if part.isdigit() else 0


def _defensive(c_last: float, reach: float, k: int) -> np.ndarray:
    """``k`` crossings evenly spread in log cost over ``(c_last, reach]`` (deterministic)."""
    lo = max(c_last, 1e-12)
    hi = max(reach, 2.0 * lo)
    return np.exp(np.linspace(math.log(lo), math.log(hi), k + 1)[1:])


def _local_trend_crossings(
    c: np.ndarray, y: np.ndarray, y_target: float, sigma: float, k: int, rng: np.random.Generator
) -> np.ndarray:
    """Crossings of the recent trend, a line in log cost through the last few points.

    It never levels off, so it stands for the curves that keep improving at their recent pace;
    with two points it is the only family that can be fitted.
    """
    cl, yl = c[-_LOCAL_POINTS:], y[-_LOCAL_POINTS:]
    x = np.log(cl / cl[-1])
    design = np.stack([np.ones_like(x), x], axis=1)
    coef, *_ = np.linalg.lstsq(design, yl, rcond=None)
    resid = yl - design @ coef
    dof = yl.size - 2
    scale = max(sigma, math.sqrt(float(resid @ resid) / dof)) if dof > 0 else sigma
    cov = scale**2 * np.linalg.pinv(design.T @ design)
    vals, vecs = np.linalg.eigh(0.5 * (cov + cov.T))
    theta = coef + rng.standard_normal((k, 2)) @ (vecs * np.sqrt(np.clip(vals, 0.0, None))).T
    a, b = theta[:, 0], theta[:, 1]
    out = np.full(k, math.inf)
    there = a <= y_target
    out[there] = cl[-1]
    going = ~there & (b < 0)
    with np.errstate(over="ignore"):
        out[going] = cl[-1] * np.exp(np.minimum((y_target - a[going]) / b[going], 700.0))
    return out


def _family_weights(fits: list[tuple[str, Basis, Fit]], n: int) -> np.ndarray:
    aic = np.array([n * math.log(max(f.sse, 1e-300) / n) + 2.0 * f.n_params for _, _, f in fits])
    prior = np.array([_FAMILY_PRIOR.get(name, 1.0) for name, _, _ in fits])
    w = prior * np.exp(-0.5 * (aic - aic.min()))
    w = w / w.sum()
    w = np.maximum(w, _FAMILY_FLOOR)
    return w / w.sum()


def raw_forecast(
    costs: Sequence[float] | np.ndarray,
    values: Sequence[float] | np.ndarray,
    target: Target | str,
    *,
    schedule: LRSchedule | None = None,
    prior: CurvePrior | None = None,
    horizon: float | None = None,
    level: float = 0.8,
) -> RawForecast:
    """The first, uncalibrated stage of :func:`forecast_time_to_target` (same arguments)."""
    tgt = as_target(target)
    if not 0.0 < level < 1.0:
        raise ValueError(f"level must be in (0, 1), got {level}")
    c, v, n = _sorted_points(costs, values)
    if horizon is None and schedule is not None:
        horizon = schedule.horizon
    if horizon is not None and not (math.isfinite(horizon) and horizon > 0):
        horizon = None
    empty = np.empty(0)

    def done(f: Forecast) -> RawForecast:
        return RawForecast(f, empty, 0.0, horizon, "", f.model, n, level)

    measured = time_to_target(c, v, tgt)
    nonfinite = bool(np.any(~np.isfinite(v)))
    if math.isfinite(measured):
        return done(Forecast(measured, measured, measured, True, 1.0, level, nonfinite, "measured", n))
    if nonfinite:
        return done(_hopeless(level, n))
    c_last = max(float(c[-1]), 0.0) if c.size else 0.0
    progress = c_last / horizon if horizon is not None else None
    key = situation(schedule is not None, progress)
    sign = 1.0 if tgt.lower_is_better else -1.0
    y, y_target = sign * v, sign * tgt.value

    c, y = merge_repeats(c, y)
    if _blew_up(y, noise_scale(y) if y.size else 0.0):
        # Judged in the calibrated stage, from how often such curves recovered (see calibrated).
        blown = replace(_hopeless(level, n), model=_BLEW_UP)
        return RawForecast(blown, empty, c_last, horizon, key, blown.model, n, level)

    span = max(c_last, horizon or 0.0, 1e-12)
    n_def = max(1, int(round(_DEFENSIVE_SHARE * _N_DRAWS)))
    defensive = _defensive(c_last, _DEFENSIVE_REACH * span, n_def)

    def unknown() -> RawForecast:
        return RawForecast(
            None,
            np.sort(_defensive(c_last, _DEFENSIVE_REACH * span, _N_DRAWS)),
            c_last,
            horizon,
            key,
            "none",
            n,
            level,
        )

    use = c > 0
    if schedule is not None:
        after_warmup = use & (c >= _warmup_end(schedule))
        if np.count_nonzero(after_warmup) >= 3:
            use = after_warmup
    cf, yf = c[use], y[use]
    if c_last <= 0 or np.count_nonzero(c > 0) < 2 and (prior is None or cf.size < 1):
        return unknown()
    sigma = noise_scale(yf if yf.size >= 2 else y[c > 0])
    if yf.size < 4 and prior is not None and math.isfinite(prior.noise):
        # Too few points to show their own scatter (noise_scale guesses a share of their span,
        # tiny when two evaluations happen to agree): the study's finished curves know it.
        sigma = max(sigma, prior.noise)
    rng = np.random.default_rng(_SEED)

    fits = _fit_families(cf, yf, sigma, c_last, horizon, schedule, prior)
    pos = c > 0
    n_local = 0
    if np.count_nonzero(pos) >= 2:
        n_local = (_N_DRAWS - n_def) if not fits else int(round(_LOCAL_SHARE * (_N_DRAWS - n_def)))
    draws = [defensive]
    if n_local:
        draws.append(_local_trend_crossings(c[pos], y[pos], y_target, sigma, n_local, rng))
    line = _two_point_crossing(c[pos], y[pos], y_target)
    if not fits:
        if not n_local:
            return unknown()
        return RawForecast(
            None, np.sort(np.concatenate(draws)), c_last, horizon, key, "trend", n, level, line
        )

    weights = _family_weights(fits, int(cf.size))
    end = horizon if horizon is not None else 2.0 * c_last
    n_model = _N_DRAWS - n_def - n_local
    draws += _family_crossings(fits, weights, n_model, c, c_last, float(y[-1]), end, y_target, sigma, rng)
    model = fits[int(np.argmax(weights))][0]
    return RawForecast(None, np.sort(np.concatenate(draws)), c_last, horizon, key, model, n, level, line)


def _sorted_points(
    costs: Sequence[float] | np.ndarray, values: Sequence[float] | np.ndarray
) -> tuple[np.ndarray, np.ndarray, int]:
    """The points with a finite cost, in cost order (a stable sort keeps repeats' order), and how
    many pairs were given."""
    c = np.asarray(costs, dtype=float).reshape(-1)
    v = np.asarray(values, dtype=float).reshape(-1)
    n = min(c.size, v.size)
    c, v = c[:n], v[:n]
    ok = np.isfinite(c)
    c, v = c[ok], v[ok]
    order = np.argsort(c, kind="stable")
    return c[order], v[order], n


def _fit_families(
    cf: np.ndarray,
    yf: np.ndarray,
    sigma: float,
    c_last: float,
    horizon: float | None,
    schedule: LRSchedule | None,
    prior: CurvePrior | None,
) -> list[tuple[str, Basis, Fit]]:
    """Each curve family the points support, fitted: the schedule-aware law, a power law and an
    exponential in blind cost; none when the fits fail numerically."""
    fits: list[tuple[str, Basis, Fit]] = []
    extent = _BLIND_REACH * max(c_last, horizon or 0.0)
    try:
        if schedule is not None:
            basis = annealing_basis(cf, schedule, c_last)
            terms = prior.terms("annealing") if prior is not None else None
            fits.append(("annealing", basis, fit_power(basis, yf, sigma, terms)))
        if cf.size >= 3:
            basis = blind_basis(cf, c_last, extent, "power")
            terms = prior.terms("power") if prior is not None and schedule is None else None
            fits.append(("power", basis, fit_power(basis, yf, sigma, terms)))
        if cf.size >= 4:
            fits.append(("exp", basis, fit_exp(basis, yf, sigma)))
    except (ValueError, np.linalg.LinAlgError, FloatingPointError):
        return []
    return fits


def _family_crossings(
    fits: list[tuple[str, Basis, Fit]],
    weights: np.ndarray,
    n_model: int,
    c: np.ndarray,
    c_last: float,
    y_last: float,
    end: float,
    y_target: float,
    sigma: float,
    rng: np.random.Generator,
) -> list[np.ndarray]:
    """Crossing draws from each family's posterior, as many as its weight's share of ``n_model``
    (``y_last``: the last evaluation's value, oriented so that lower is better)."""
    draws: list[np.ndarray] = []
    with np.errstate(all="ignore"):
        for (_name, b, f), w in zip(fits, weights, strict=True):
            k = int(round(n_model * w))
            if k == 0:
                continue
            theta = sample_params(f, k, rng)
            pred = predict(f.kind, theta, b.u_grid, b.v_grid)
            mean_crossing = _crossings(pred, b.grid, y_target)
            # Within the planned run, the crossing that will be measured is that of noisy
            # evaluations; beyond it, that of the curve.
            evals = _future_evals(c, c_last, min(float(b.grid[-1]), end))
            noisy = _first_noisy_crossings(pred, b.grid, y_target, evals, sigma, rng, (c_last, y_last))
            draws.append(np.where(np.isfinite(noisy), noisy, mean_crossing))
    return draws


class ForecastOptions(TypedDict, total=False):
    """What a forecast may know besides the curve (keywords of :func:`forecast_time_to_target`
    and :func:`raw_forecast`)."""

    schedule: LRSchedule | None
    prior: CurvePrior | None
    horizon: float | None
    level: float


def forecast_time_to_target(
    costs: Sequence[float] | np.ndarray,
    values: Sequence[float] | np.ndarray,
    target: Target | str,
    *,
    calibration: CrossingCalibration | None = None,
    reach_max_lowering: float | None = None,
    references: Sequence[ReferenceRun] = (),
    reach_trees: bool = True,
    **options: Unpack[ForecastOptions],
) -> Forecast:
    """Forecast the cost at which a curve seen up to now will reach ``target``.

    Keywords (:class:`ForecastOptions`, all optional): ``schedule``, ``prior``, ``horizon`` and
    ``level`` (of the interval ``low``..``high``, default 0.8), as below.

    With the trial's ``schedule`` (its LR over the whole planned run) the ensemble includes
    the LR-annealing law, ``L = L0 + A * S1**-alpha - C * S2`` (Tissue et al. 2024): the loss
    drop that a decaying LR brings late in the run is predicted from the schedule, which no
    curve family fitted to the high-LR prefix can see. A power law and an exponential are
    always in the ensemble. ``prior`` (from :func:`fit_prior`) pulls poorly identified
    parameters of the law toward what finished trials showed. ``horizon`` is the planned end
    of the run (the schedule's, by default) or a cost cap; ``probability`` is the chance of
    reaching by it. The crossing distribution is calibrated by ``calibration`` (default: the
    table shipped with convtune, learned on recorded curves), so ``probability`` and
    :meth:`Forecast.probability_before` are frequencies, not model beliefs. Draws use a fixed
    seed: the same input gives the same forecast in every process.

    ``reach_max_lowering`` bounds how far the calibration's reach model may pull a probability
    below what the maps give (see :meth:`RawForecast.calibrated`). Where the calibration holds
    reach trees (:class:`convtune.curves.ReachTrees`), they set the chance of reaching within
    the run from the curve's own features; ``reach_trees=False`` leaves it to the maps.

    ``references`` (:class:`ReferenceRun`, one per finished run of the same study) speak where
    the curve alone cannot: on a plateau prefix (moved under 3 noise units), whether a drop is
    coming differs between workloads, so the crossings of the references that stood on a
    plateau at the same cost are blended into the distribution, the calibrated forecast
    counting for 5 runs (:mod:`convtune.curves._references`). Moving prefixes are unchanged
    unless ``calibration`` holds a within-the-run model (the shipped table does not; check R′,
    docs/benchmarks.md): then the runs that stood worse or better at the same cost set the
    chance of crossing by the planned end.

    Never raises on bad curves: with fewer than 3 usable points and no prior the forecast
    rests on calibration alone (wide, rarely "never"); non-finite values give ``diverged=True``
    with everything at ``inf``; a blow-up (improved, then ended twice above its start) gets the
    calibration's measured chance that such a curve still reaches within the run, spread over
    the rest of it (``model="blew-up"``; ``diverged`` without a horizon or a measured chance).

    Example:
        >>> import numpy as np
        >>> c = np.linspace(100, 1000, 10)
        >>> f = forecast_time_to_target(c, 1.5 + 20.0 * c**-0.5, "val_loss<=1.9", horizon=4000)
        >>> f.reached, f.low < 2500 < f.high, f.estimate <= 4000, 0.3 < f.probability < 0.9
        (False, True, True, True)
    """
    raw = raw_forecast(costs, values, target, **options)
    if raw.final is None:
        summary = CurveSummary.of(costs, values, target, options.get("schedule"), raw.horizon)
        raw = replace(raw, summary=summary)
    return raw.calibrated(
        calibration, reach_max_lowering=reach_max_lowering, references=references, reach_trees=reach_trees
    )
