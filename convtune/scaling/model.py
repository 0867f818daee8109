"""Scaling curves across trials, and the configuration they predict reaches the target fastest.

Three parametric fits and one regression, each from what trials already record:

* **steps to target** against effective batch ``B`` and peak LR (:class:`StepsFit`):
  ``log S = log S_min + log(1 + B_noise/B) + k·(log lr − log lr*(B))²`` with
  ``lr*(B) = lr_ref·(B/B_ref)^α`` — McCandlish et al. (2018)'s critical batch (hence samples
  ``E = E_min·(1 + B/B_noise)``) and the LR-scaling exponent (α = 1 linear, ½ square-root) in one
  least-squares fit, so an LR left untuned at one batch does not bias ``B_noise``;
  :class:`CriticalBatchFit` is the batch-only fit on the best trial per batch (the plotted one);
* **cost per optimizer step** against micro-batch, accumulation, world size and precision
  (:class:`StepTimeFit`): ``accum·(a_p + b_p·micro) + o_w`` — accumulation multiplies compute,
  not communication or the optimizer step;
* a Gaussian process over every knob (:class:`ResidualGP`) on what the parametric fits leave
  unexplained (schedule, warmup, optimizer, horizon, …).

:class:`ScalingModel` combines them into a predicted time-to-target, in the study's cost, for any
configuration in the space; :func:`recommend` searches the space for its argmin.

Example:
    >>> study, spec = convtune.study.open_study("demo")            # doctest: +SKIP
    >>> rec = convtune.recommend(study)                            # doctest: +SKIP
    >>> rec.time_to_target, rec.interval, rec.supported_by         # doctest: +SKIP
    (11.8, (9.1, 15.3), ('critical_batch', 'lr_scaling', 'step_time', 'gp'))
"""

from __future__ import annotations

import hashlib
import json
import math
import warnings
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any

import numpy as np
from scipy import optimize, stats

from convtune.config.recipe import Recipe

if TYPE_CHECKING:
    import optuna

    from convtune.config.space import Param, SearchSpace
    from convtune.config.spec import StudySpec

LEVEL = 0.9
CONFIRMATIONS_ATTR = "confirmations"
# Log-scale noise of a measured time-to-target when nothing better is known (seed-to-seed spread
# of short runs is typically 5–15%); forecasts get their own, wider, interval.
_MEASURED_SIGMA = 0.1
_MIN_FORECAST_SIGMA = 0.2
# A forecast from fewer evaluations is mostly the curve prior (other trials' shape), not this
# configuration: the fits leave it out. With the halving pruner many trials stop after one or
# two evaluations; on the recorded-grid replays (benchmarks/recommend.py) fitting their forecasts
# made the recommendation worse than the best measured trial (digits, noisy: 22 against 31 of 60
# within 10%), and leaving them out made it match (31). The field pruner lost 3 of 100 on digits.
_MIN_FORECAST_POINTS = 3
# Selection is risk-averse by this many standard deviations (log scale): a candidate far from
# every trial needs a clearly better mean to beat one next to measured data, and a configuration
# no trial ran must beat the best measured one (scored by its measurement) by that margin too.
# On both recorded grids (benchmarks/recommend.py, 20 seeds, two pruner versions) 0.5, 1 and 2
# differed by a few points of regret either way; 0.5 was as good as any.
_RISK = 0.5
# Past this log-scale sd (a factor of ~3,700 at 90%) a prediction says nothing more.
_MAX_LOG_SD = 5.0
# Knobs the parametric fits model, so candidates may take values no trial tried.
_MODELLED = {"micro_batch_size", "grad_accum_steps", "global_batch_size", "world_size", "precision"}


def _z(level: float) -> float:
    return float(stats.norm.ppf(0.5 + level / 2))


# ---- what the trials recorded -----------------------------------------------------------------


@dataclass(frozen=True)
class TrialPoint:
    """One finished trial as the fits see it; ``time`` is in the study's cost unit."""

    number: int
    params: dict[str, Any]
    recipe: dict[str, Any]
    time: float  # measured or forecast time-to-target; inf when diverged/unknown
    sigma: float  # its log-scale uncertainty
    measured: bool
    step_cost: float  # cost per optimizer step (cost units)
    diverged: bool = False
    confirm: bool = False
    baseline: bool = False

    @property
    def batch(self) -> int:
        return int(self.recipe["effective_batch_size"])

    @property
    def lr(self) -> float:
        return float(self.recipe["peak_lr"])

    @property
    def steps(self) -> float:
        """Optimizer steps to the target."""
        return self.time / self.step_cost

    @property
    def usable(self) -> bool:
        return math.isfinite(self.time) and self.time > 0 and self.step_cost > 0


def step_cost_of(attrs: Mapping[str, Any], cost: str) -> float:
    """Measured cost per optimizer step of a trial: its batch in samples, else seconds per step."""
    recipe = attrs.get("recipe") or {}
    batch = float(recipe.get("effective_batch_size") or attrs.get("effective_batch_size") or 0)
    if cost == "samples":
        return batch
    steps, seconds = attrs.get("steps"), attrs.get("train_seconds")
    if not steps or not seconds:
        curve = attrs.get("curve") or {}
        steps = (curve.get("step") or [0])[-1]
        seconds = (curve.get("seconds") or [0.0])[-1]
    if not steps or not seconds:
        return math.nan
    per_step = float(seconds) / float(steps)
    return per_step * int(recipe.get("world_size", 1)) if cost == "device_seconds" else per_step


def trial_points(study: optuna.Study, cost: str) -> list[TrialPoint]:
    """Every COMPLETE convtune trial: reached (measured), forecast (from at least
    ``_MIN_FORECAST_POINTS`` evaluations), or unknown/diverged (time = inf)."""
    from optuna.trial import TrialState

    points = []
    for trial in study.get_trials(deepcopy=False, states=(TrialState.COMPLETE,)):
        attrs = trial.user_attrs
        if "recipe" not in attrs:
            continue
        status = attrs.get("status")
        time, sigma, measured = math.inf, math.inf, False
        if status == "reached" and attrs.get("time_to_target"):
            time, sigma, measured = float(attrs["time_to_target"]), _MEASURED_SIGMA, True
        elif (
            status in ("stopped", "budget")
            and attrs.get("predicted_time_to_target")
            and (attrs.get("forecast_n_points") or _MIN_FORECAST_POINTS) >= _MIN_FORECAST_POINTS
        ):
            time = float(attrs["predicted_time_to_target"])
            low, high = attrs.get("forecast_low"), attrs.get("forecast_high")
            spread = (
                math.log(high / low) / (2 * _z(attrs.get("forecast_level") or LEVEL)) if low and high else 1.0
            )
            sigma = max(_MIN_FORECAST_SIGMA, spread)
        points.append(
            TrialPoint(
                number=trial.number,
                params=dict(trial.params),
                recipe=dict(attrs["recipe"]),
                time=time,
                sigma=sigma,
                measured=measured,
                step_cost=step_cost_of(attrs, cost),
                diverged=status == "diverged",
                confirm=bool(attrs.get("confirm")),
                baseline=bool(attrs.get("baseline")),
            )
        )
    return points


# ---- steps to target against batch (and LR) ----------------------------------------------------


def _mcc(log_batch: np.ndarray, log_s_min: float, log_b_noise: float) -> np.ndarray:
    return log_s_min + np.log1p(np.exp(log_b_noise - log_batch))


@dataclass(frozen=True)
class CriticalBatchFit:
    """``S = S_min·(1 + B_noise/B)`` fitted to the fastest trial at each effective batch.

    Example:
        >>> fit = CriticalBatchFit.fit([16, 32, 64, 128], [600, 350, 225, 162])
        >>> round(fit.b_noise), round(fit.s_min)
        (80, 100)
    """

    s_min: float
    b_noise: float
    b_noise_interval: tuple[float, float]
    level: float
    batches: tuple[float, ...]
    steps: tuple[float, ...]

    @property
    def e_min(self) -> float:
        """Fewest samples to the target (the small-batch limit): ``S_min·B_noise``."""
        return self.s_min * self.b_noise

    def steps_at(self, batch: Any) -> np.ndarray:
        return self.s_min * (1 + self.b_noise / np.asarray(batch, dtype=float))

    def samples_at(self, batch: Any) -> np.ndarray:
        return self.e_min * (1 + np.asarray(batch, dtype=float) / self.b_noise)

    @classmethod
    def fit(
        cls, batch: Sequence[float], steps: Sequence[float], *, level: float = LEVEL
    ) -> CriticalBatchFit | None:
        """Fit on the envelope (fewest steps per batch); None with fewer than 3 batch sizes."""
        best: dict[float, float] = {}
        for b, s in zip(batch, steps, strict=True):
            if math.isfinite(s) and s > 0:
                best[float(b)] = min(s, best.get(float(b), math.inf))
        if len(best) < 3:
            return None
        b = np.array(sorted(best))
        s = np.array([best[x] for x in b])
        lb = np.log(b)
        p0 = (math.log(s.min()) - 0.3, math.log(np.median(b)))
        bounds = ([-np.inf, lb.min() - 7], [np.inf, lb.max() + 7])
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", optimize.OptimizeWarning)
            popt, pcov = optimize.curve_fit(_mcc, lb, np.log(s), p0=p0, bounds=bounds)
        sd = math.sqrt(pcov[1, 1]) if np.isfinite(pcov[1, 1]) else math.inf
        z = _z(level)
        interval = (math.exp(popt[1] - z * sd), math.exp(popt[1] + z * sd) if sd < 50 else math.inf)
        return cls(math.exp(popt[0]), math.exp(popt[1]), interval, level, tuple(b), tuple(s))


_STEP_PARAMS = ("log_s_min", "log_b_noise", "curvature", "log_lr_ref", "lr_exponent")


@dataclass(frozen=True)
class StepsFit:
    """Steps to target against effective batch and peak LR, fitted jointly over all trials.

    ``log S = log S_min + log(1 + B_noise/B) + k·(log lr − log lr_ref − α·log(B/B_ref))²``.
    Parameters the data cannot identify stay fixed: ``B_noise`` (and the batch term) with fewer
    than two batch sizes, ``α = 0`` likewise, the LR term with fewer than three LRs.

    Example:
        >>> fit = StepsFit.fit(batch, lr, steps)          # doctest: +SKIP
        >>> fit.b_noise, fit.lr_exponent                  # doctest: +SKIP
        (64.2, 0.49)
    """

    theta: tuple[float, ...]
    cov: tuple[tuple[float, ...], ...]
    free: tuple[str, ...]
    b_ref: float
    level: float
    residual_sigma: float
    n_points: int

    def _get(self, name: str) -> float:
        return self.theta[_STEP_PARAMS.index(name)]

    @property
    def s_min(self) -> float:
        return math.exp(self._get("log_s_min"))

    @property
    def b_noise(self) -> float | None:
        return math.exp(self._get("log_b_noise")) if "log_b_noise" in self.free else None

    @property
    def lr_exponent(self) -> float | None:
        return self._get("lr_exponent") if "lr_exponent" in self.free else None

    def _interval(self, name: str, transform: Any = float) -> tuple[float, float] | None:
        if name not in self.free:
            return None
        i = self.free.index(name)
        sd = math.sqrt(self.cov[i][i]) if math.isfinite(self.cov[i][i]) else math.inf
        mid, z = self._get(name), _z(self.level)
        if not math.isfinite(sd):
            return (-math.inf if transform is float else 0.0, math.inf)  # unidentified
        return (transform(mid - z * sd), transform(mid + z * sd))

    @property
    def b_noise_interval(self) -> tuple[float, float] | None:
        return self._interval("log_b_noise", lambda v: math.exp(min(v, 700.0)))

    @property
    def lr_exponent_interval(self) -> tuple[float, float] | None:
        return self._interval("lr_exponent")

    def best_lr(self, batch: Any) -> np.ndarray:
        """The peak LR with the fewest steps at ``batch``."""
        log_b = np.log(np.asarray(batch, dtype=float) / self.b_ref)
        return np.exp(self._get("log_lr_ref") + self._get("lr_exponent") * log_b)

    def log_steps(self, batch: Any, lr: Any, theta: np.ndarray | None = None) -> np.ndarray:
        t = np.asarray(self.theta if theta is None else theta, dtype=float)
        return _steps_model(np.log(np.asarray(batch, float)), np.log(np.asarray(lr, float)), self.b_ref, t)

    def log_steps_sd(self, batch: Any, lr: Any) -> np.ndarray:
        """Standard deviation of ``log S`` from the parameters' covariance (delta method).

        Linearised, so a direction the data cannot pin down (``B_noise`` far outside the tried
        batches) adds uncertainty only where the prediction actually depends on it.
        """
        cov = np.array(self.cov, dtype=float)
        if not np.all(np.isfinite(cov)):
            return np.full(np.shape(batch), 1.0)
        base = self.log_steps(batch, lr)
        jac = []
        for name in self.free:
            theta = np.array(self.theta)
            i = _STEP_PARAMS.index(name)
            theta[i] += 1e-5
            jac.append((self.log_steps(batch, lr, theta) - base) / 1e-5)
        j = np.stack(jac, axis=-1)
        return np.sqrt(np.maximum(np.einsum("...i,ij,...j->...", j, cov, j), 0.0))

    @classmethod
    def fit(
        cls,
        batch: Sequence[float],
        lr: Sequence[float],
        steps: Sequence[float],
        *,
        sigma: Sequence[float] | None = None,
        level: float = LEVEL,
    ) -> StepsFit | None:
        """Least squares on ``log S`` (``sigma``: each point's log-scale uncertainty)."""
        b, r, s = (np.asarray(x, dtype=float) for x in (batch, lr, steps))
        ok = np.isfinite(s) & (s > 0) & (b > 0) & (r > 0)
        b, r, s = b[ok], r[ok], s[ok]
        w = np.ones_like(s) if sigma is None else np.asarray(sigma, dtype=float)[ok]
        n_b, n_r = len(np.unique(b)), len(np.unique(np.round(np.log(r), 6)))
        free = ["log_s_min"]
        if n_b >= 2:
            free.append("log_b_noise")
        if n_r >= 3:
            free += ["curvature", "log_lr_ref"]
            if n_b >= 2:
                free.append("lr_exponent")
        if len(s) < len(free) + 2:
            return None
        lb, lr_log, ls = np.log(b), np.log(r), np.log(s)
        b_ref = float(np.exp(np.mean(np.unique(lb))))
        # Start from the best trial: its LR as the optimum, a critical batch mid-range.
        best = int(np.argmin(ls))
        theta0 = np.array([ls.min() - 0.3, float(np.median(lb)), 0.3, lr_log[best], 0.5 if n_b >= 2 else 0.0])
        if "log_b_noise" not in free:
            theta0[1] = -np.inf
        if "curvature" not in free:
            theta0[2] = 0.0
        lower = {
            "log_s_min": -np.inf,
            "log_b_noise": lb.min() - 5,
            "curvature": 0.0,
            "log_lr_ref": lr_log.min() - 3,
            "lr_exponent": -1.0,
        }
        upper = {
            "log_s_min": np.inf,
            "log_b_noise": lb.max() + 5,
            "curvature": 20.0,
            "log_lr_ref": lr_log.max() + 3,
            "lr_exponent": 2.0,
        }
        idx = [_STEP_PARAMS.index(n) for n in free]

        def model(_x: Any, *p: float) -> np.ndarray:
            theta = theta0.copy()
            theta[idx] = p
            return _steps_model(lb, lr_log, b_ref, theta)

        p0 = np.clip(theta0[idx], [lower[n] + 1e-9 for n in free], [upper[n] - 1e-9 for n in free])
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                popt, pcov = optimize.curve_fit(
                    model,
                    np.zeros_like(ls),
                    ls,
                    p0=p0,
                    sigma=w,
                    bounds=([lower[n] for n in free], [upper[n] for n in free]),
                    method="trf",
                    max_nfev=2000,
                )
        except (RuntimeError, ValueError):
            return None
        theta = theta0.copy()
        theta[idx] = popt
        residuals = ls - _steps_model(lb, lr_log, b_ref, theta)
        dof = max(1, len(ls) - len(free))
        return cls(
            theta=tuple(float(t) for t in theta),
            cov=tuple(tuple(float(c) for c in row) for row in np.atleast_2d(pcov)),
            free=tuple(free),
            b_ref=b_ref,
            level=level,
            residual_sigma=float(np.sqrt(np.sum(residuals**2) / dof)),
            n_points=len(ls),
        )


def _steps_model(log_b: np.ndarray, log_lr: np.ndarray, b_ref: float, theta: np.ndarray) -> np.ndarray:
    log_s_min, log_b_noise, curvature, log_lr_ref, alpha = theta
    batch_term = np.log1p(np.exp(log_b_noise - log_b)) if np.isfinite(log_b_noise) else 0.0
    lr_term = curvature * (log_lr - log_lr_ref - alpha * (log_b - math.log(b_ref))) ** 2
    return log_s_min + batch_term + lr_term


# ---- cost per optimizer step ---------------------------------------------------------------------


@dataclass(frozen=True)
class StepTimeFit:
    """Cost per optimizer step ``accum·(a_p + b_p·micro) + o_w`` from measured throughput.

    ``a_p``/``b_p`` per precision (compute per micro-step), ``o_w`` per world size (the optimizer
    step and the gradient all-reduce, paid once per optimizer step whatever the accumulation).
    A precision or world size no trial ran borrows the nearest measured one. For ``cost:
    samples`` a step costs exactly its batch, and no fit is needed.

    Example:
        >>> fit = StepTimeFit.fit(points, cost="wallclock")     # doctest: +SKIP
        >>> fit.predict(micro=64, accum=2, world=1, precision="bf16")  # doctest: +SKIP
    """

    cost: str
    compute: dict[str, tuple[float, float]] = field(default_factory=dict)
    overhead: dict[int, float] = field(default_factory=dict)
    log_sigma: float = 0.0

    def predict(self, micro: int, accum: int, world: int, precision: str) -> float:
        if self.cost == "samples":
            return float(micro * accum * world)
        a, b = self.compute.get(precision) or next(iter(self.compute.values()))
        near = min(self.overhead, key=lambda w: abs(math.log(w) - math.log(world)))
        seconds = accum * (a + b * micro) + self.overhead[near]
        return seconds * world if self.cost == "device_seconds" else seconds

    @classmethod
    def fit(cls, points: Sequence[TrialPoint], *, cost: str) -> StepTimeFit | None:
        if cost == "samples":
            return cls(cost)
        rows = [p for p in points if math.isfinite(p.step_cost) and p.step_cost > 0]
        if len(rows) < 2:
            return None
        precisions = sorted({p.recipe.get("precision", "fp32") for p in rows})
        worlds = sorted({int(p.recipe.get("world_size", 1)) for p in rows})
        x, y = [], []
        for p in rows:
            world = int(p.recipe.get("world_size", 1))
            seconds = p.step_cost / world if cost == "device_seconds" else p.step_cost
            accum, micro = int(p.recipe["grad_accum_steps"]), int(p.recipe["micro_batch_size"])
            row = np.zeros(2 * len(precisions) + len(worlds))
            k = precisions.index(p.recipe.get("precision", "fp32"))
            row[2 * k], row[2 * k + 1] = accum, accum * micro
            row[2 * len(precisions) + worlds.index(world)] = 1.0
            # Rows divided by the measurement: least squares on relative error.
            x.append(row / seconds)
            y.append(1.0)
        sol = optimize.lsq_linear(np.array(x), np.array(y), bounds=(0, np.inf))
        coef = sol.x
        fitted = np.array(x) @ coef
        log_sigma = float(np.sqrt(np.mean(np.log(np.maximum(fitted, 1e-9)) ** 2)))
        compute = {p: (float(coef[2 * k]), float(coef[2 * k + 1])) for k, p in enumerate(precisions)}
        overhead = {w: float(coef[2 * len(precisions) + j]) for j, w in enumerate(worlds)}
        return cls(cost, compute, overhead, log_sigma)


# ---- everything the parametric fits leave out --------------------------------------------------


class Encoder:
    """Params → numbers for the regression: ranges scaled to [0, 1] (log where the space is
    log), categoricals one-hot; an inactive conditional parameter sits mid-range."""

    def __init__(self, distributions: Mapping[str, optuna.distributions.BaseDistribution]):
        from optuna.distributions import CategoricalDistribution

        self.columns: list[tuple[str, Any]] = []
        self.distributions = dict(sorted(distributions.items()))
        for name, dist in self.distributions.items():
            if isinstance(dist, CategoricalDistribution):
                self.columns += [(name, json.dumps(c)) for c in dist.choices]
            else:
                self.columns.append((name, None))

    def encode(self, params: Mapping[str, Any]) -> np.ndarray:
        out = np.full(len(self.columns), 0.5)
        for i, (name, choice) in enumerate(self.columns):
            dist, value = self.distributions[name], params.get(name)
            if choice is not None:
                out[i] = 1.0 if value is not None and json.dumps(value) == choice else 0.0
            elif value is not None:
                low, high = float(dist.low), float(dist.high)
                if getattr(dist, "log", False):
                    low, high, value = math.log(low), math.log(high), math.log(max(float(value), 1e-300))
                out[i] = 0.5 if high == low else (float(value) - low) / (high - low)
        return out


@dataclass
class ResidualGP:
    """A Gaussian process on log time-to-target minus the parametric prediction, over all knobs.

    Far from every trial it falls back to the parametric fits (zero mean); near trials it learns
    what they miss. Seeded, so the same study gives the same prediction.
    """

    encoder: Encoder
    gp: Any
    offset: float

    @classmethod
    def fit(
        cls, encoder: Encoder, x: np.ndarray, y: np.ndarray, noise: np.ndarray, *, seed: int = 0
    ) -> ResidualGP | None:
        if len(y) < 4:
            return None
        from sklearn.gaussian_process import GaussianProcessRegressor
        from sklearn.gaussian_process.kernels import ConstantKernel, Matern, WhiteKernel

        offset = float(np.mean(y))
        kernel = ConstantKernel(0.1, (1e-3, 10.0)) * Matern(0.5, (0.05, 20.0), nu=2.5) + WhiteKernel(
            0.01, (1e-4, 1.0)
        )
        gp = GaussianProcessRegressor(
            kernel, alpha=np.maximum(noise, 1e-4) ** 2, n_restarts_optimizer=2, random_state=seed
        )
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            gp.fit(x, y - offset)
        return cls(encoder, gp, offset)

    def predict(self, x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        mean, sd = self.gp.predict(x, return_std=True)
        return mean + self.offset, sd


# ---- the combined model ------------------------------------------------------------------------


@dataclass(frozen=True)
class Prediction:
    """Predicted time-to-target of one configuration (cost units) with a ``level`` interval."""

    params: dict[str, Any]
    recipe: Recipe
    log_mean: float
    log_sd: float
    level: float

    @property
    def time_to_target(self) -> float:
        return math.exp(self.log_mean)

    @property
    def interval(self) -> tuple[float, float]:
        z = _z(self.level)
        return (math.exp(self.log_mean - z * self.log_sd), math.exp(self.log_mean + z * self.log_sd))


class ScalingModel:
    """The fits of one study, combined: ``T = S(B, lr) · cost_per_step(config) · exp(GP residual)``.

    Example:
        >>> model = ScalingModel.from_study(study, spec)                 # doctest: +SKIP
        >>> model.predict([{"peak_lr": 3e-3, "micro_batch_size": 32}])   # doctest: +SKIP
    """

    def __init__(
        self,
        space: SearchSpace,
        cost: str,
        points: list[TrialPoint],
        *,
        seed_sigma: float | None = None,
        level: float = LEVEL,
        seed: int = 0,
    ):
        self.space, self.cost, self.level, self.seed = space, cost, level, seed
        self.points = points
        self.usable = [p for p in points if p.usable]
        self.seed_sigma = seed_sigma
        self.steps_fit = StepsFit.fit(
            [p.batch for p in self.usable],
            [p.lr for p in self.usable],
            [p.steps for p in self.usable],
            sigma=[p.sigma for p in self.usable],
            level=level,
        )
        envelope = [p for p in self.usable if p.measured] or self.usable
        self.critical_batch = CriticalBatchFit.fit(
            [p.batch for p in envelope], [p.steps for p in envelope], level=level
        )
        self.step_time = StepTimeFit.fit(points, cost=cost)
        self.encoder = Encoder(space.distributions())
        self.gp: ResidualGP | None = None
        self.residual_const = (0.0, 1.0)
        if self.usable:
            x = np.stack([self.encoder.encode(p.params) for p in self.usable])
            y = np.log([p.time for p in self.usable]) - self._parametric(
                [Recipe.from_dict(p.recipe) for p in self.usable]
            )
            noise = np.array([p.sigma for p in self.usable])
            self.gp = ResidualGP.fit(self.encoder, x, y, noise, seed=seed)
            # Too few points for the GP: the residual is a constant (their weighted mean) whose
            # spread is the points' own, never zero (a bare fit predicted one sample).
            weights = 1 / np.maximum(noise, _MEASURED_SIGMA) ** 2
            mean = float(np.sum(weights * y) / np.sum(weights))
            spread = float(np.std(y, ddof=1)) if len(y) >= 2 else 1.0
            self.residual_const = (mean, max(spread, 0.5))
        # LRs past the lowest one that diverged (scaled to each batch by the fitted exponent) are
        # not predicted: no curve says how fast a run that blows up is.
        self.diverged_scaled_lr = min(
            (self._scaled_lr(p.batch, p.lr) for p in points if p.diverged), default=math.inf
        )

    @classmethod
    def from_study(cls, study: optuna.Study, spec: StudySpec | None = None, **kwargs: Any) -> ScalingModel:
        spec = spec or _spec_of(study)
        points = trial_points(study, spec.cost)
        kwargs.setdefault("seed_sigma", seed_spread(study, points))
        return cls(spec.search_space, spec.cost, points, **kwargs)

    @property
    def supported_by(self) -> tuple[str, ...]:
        fits = []
        if self.steps_fit and self.steps_fit.b_noise is not None:
            fits.append("critical_batch")
        if self.steps_fit and self.steps_fit.lr_exponent is not None:
            fits.append("lr_scaling")
        elif self.steps_fit and "curvature" in self.steps_fit.free:
            fits.append("lr_optimum")
        if self.step_time is not None:
            fits.append("step_time")
        if self.gp is not None:
            fits.append("gp")
        return tuple(fits)

    def _scaled_lr(self, batch: float, lr: float) -> float:
        alpha = (self.steps_fit.lr_exponent if self.steps_fit else None) or 0.0
        return lr / batch**alpha

    def _step_costs(self, recipes: Sequence[Recipe]) -> np.ndarray:
        if self.step_time is None:
            scale = float(np.median([p.step_cost / p.batch for p in self.usable])) if self.usable else 1.0
            return np.array([r.effective_batch_size * scale for r in recipes])
        return np.array(
            [
                self.step_time.predict(r.micro_batch_size, r.grad_accum_steps, r.world_size, r.precision)
                for r in recipes
            ]
        )

    def _parametric(self, recipes: Sequence[Recipe]) -> np.ndarray:
        """log T from the parametric fits alone (0 where there are none: the GP then holds it all)."""
        if self.steps_fit is None:
            return np.zeros(len(recipes))
        batch = np.array([r.effective_batch_size for r in recipes], dtype=float)
        lr = np.array([r.peak_lr for r in recipes])
        return self.steps_fit.log_steps(batch, lr) + np.log(np.maximum(self._step_costs(recipes), 1e-12))

    def recipe_of(self, params: Mapping[str, Any]) -> Recipe:
        import optuna

        return self.space.recipe(optuna.trial.FixedTrial(dict(params)))

    def predict(self, params_list: Sequence[Mapping[str, Any]]) -> list[Prediction]:
        """Predicted time-to-target (with interval) of each configuration, in the study's cost."""
        if not self.usable:
            raise ValueError("no trial reached the target or has a forecast yet")
        recipes = [self.recipe_of(p) for p in params_list]
        log_mean = self._parametric(recipes)
        var = np.zeros(len(recipes))
        if self.steps_fit is not None:
            batch = np.array([r.effective_batch_size for r in recipes], dtype=float)
            var += self.steps_fit.log_steps_sd(batch, np.array([r.peak_lr for r in recipes])) ** 2
        if self.step_time is not None:
            var += self.step_time.log_sigma**2
        if self.gp is not None:
            x = np.stack([self.encoder.encode(p) for p in params_list])
            residual, sd = self.gp.predict(x)
            log_mean = log_mean + residual
            var = var + sd**2
        elif self.usable:
            log_mean = log_mean + self.residual_const[0]
            var = var + self.residual_const[1] ** 2
        var += (self.seed_sigma if self.seed_sigma is not None else _MEASURED_SIGMA) ** 2
        # An unidentified fit (a covariance of 1e16) says nothing beyond "any factor": cap it.
        var = np.minimum(var, _MAX_LOG_SD**2)
        return [
            Prediction(dict(p), r, float(m), float(math.sqrt(v)), self.level)
            for p, r, m, v in zip(params_list, recipes, log_mean, var, strict=True)
        ]

    # ---- search ----------------------------------------------------------------------------

    def candidates(self, n: int = 2000, *, seed: int = 0) -> list[dict[str, Any]]:
        """Samples from the space's distributions, every trial's params, and their neighbourhoods."""
        rng = np.random.default_rng(seed)
        out: list[dict[str, Any]] = [dict(p.params) for p in self.points if not p.diverged]
        ranked = sorted(self.usable, key=lambda p: p.time)[:5]
        for p in ranked:
            for _ in range(n // 10):
                out.append(_perturb(self.space, p.params, rng))
        while len(out) < n + len(self.points) + len(ranked) * (n // 10):
            out.append(sample_params(self.space, rng))
        seen, unique = set(), []
        tried = self._tried_categoricals()
        lr_ranges = self._lr_ranges()
        for params in out:
            key = params_key(params)
            if key in seen or self._categoricals(params) not in tried:
                continue
            seen.add(key)
            unique.append(params)
        # LR stays within 2× of what trials of the same optimizer ran (scaled to the batch by the
        # fitted exponent): the optimum LR is optimizer-specific (Lion's is ~5× below AdamW's),
        # and the shared LR fit cannot know that from a few trials.
        if lr_ranges:
            recipes = [self.recipe_of(p) for p in unique]
            unique = [
                p
                for p, r in zip(unique, recipes, strict=True)
                if (bounds := lr_ranges.get(r.optimizer_name)) is not None
                and bounds[0] / 2 <= self._scaled_lr(r.effective_batch_size, r.peak_lr) <= bounds[1] * 2
            ]
        return unique

    def _as_measured(self, preds: list[Prediction]) -> list[Prediction]:
        """A configuration that trials ran to the target is predicted by what they measured.

        Its mean is theirs and its sd the seed-to-seed spread over √n, so a configuration no
        trial ran must beat it by its own uncertainty (``risk`` sd's) to be recommended.
        """
        runs: dict[str, list[float]] = {}
        for p in self.points:
            if p.measured:
                runs.setdefault(params_key(p.params), []).append(math.log(p.time))
        sigma = self.seed_sigma if self.seed_sigma is not None else _MEASURED_SIGMA
        out = []
        for pred in preds:
            logs = runs.get(params_key(pred.params))
            if logs:
                pred = replace(pred, log_mean=float(np.mean(logs)), log_sd=sigma / math.sqrt(len(logs)))
            out.append(pred)
        return out

    def _lr_ranges(self) -> dict[str, tuple[float, float]]:
        """Per optimizer, the lowest and highest batch-scaled LR a non-diverged trial ran."""
        out: dict[str, tuple[float, float]] = {}
        for p in self.points:
            if p.diverged:
                continue
            lr = self._scaled_lr(p.batch, p.lr)
            low, high = out.get(p.recipe.get("optimizer", "adamw"), (lr, lr))
            out[p.recipe.get("optimizer", "adamw")] = (min(low, lr), max(high, lr))
        return out

    def _categoricals(self, params: Mapping[str, Any]) -> str:
        """The choices no parametric fit models (schedule, optimizer, warm-up choices, clipping …)."""
        from optuna.distributions import CategoricalDistribution

        return json.dumps(
            {
                k: params.get(k)
                for k, d in self.encoder.distributions.items()
                if isinstance(d, CategoricalDistribution) and k.split(".")[-1] not in _MODELLED
            },
            sort_keys=True,
            default=str,
        )

    def _tried_categoricals(self) -> set[str]:
        """Combinations of unmodelled choices that some trial reached the target with.

        Batch, LR, precision and world size move freely (the fits say how they scale); a
        schedule or optimizer no reached trial used is never recommended on the regression's
        extrapolation alone — with a handful of trials that guess is the commonest bad pick.
        """
        measured = [p for p in self.usable if p.measured] or self.usable
        return {self._categoricals(p.params) for p in measured}

    def top(
        self,
        k: int = 1,
        *,
        n_candidates: int = 2000,
        seed: int = 0,
        min_distance: float = 0.1,
        risk: float | None = None,
    ) -> list[Prediction]:
        """The ``k`` best candidates by mean + ½ sd (log scale), fastest first.

        Each pick lies at least ``min_distance`` (encoded space, ranges scaled to [0, 1]) from
        the ones before it, so ``confirm --top 3`` runs three configurations, not one three times.
        Raises ``ValueError`` before any trial reached the target.
        """
        if not any(p.measured for p in self.points):
            # Forecasts alone extrapolate from prefixes; scaled again they predicted nonsense
            # (about one second on the charlm demo), so a prediction needs a measured crossing.
            raise ValueError("no trial reached the target yet: nothing to scale from")
        candidates = self.candidates(n_candidates, seed=seed)
        preds = [
            p
            for p in self.predict(candidates)
            if self._scaled_lr(p.recipe.effective_batch_size, p.recipe.peak_lr) < self.diverged_scaled_lr
        ]
        preds = self._as_measured(preds)
        risk = _RISK if risk is None else risk
        preds.sort(key=lambda p: p.log_mean + risk * p.log_sd)
        chosen: list[Prediction] = []
        codes: list[np.ndarray] = []
        for pred in preds:
            code = self.encoder.encode(pred.params)
            if all(np.sqrt(np.sum((code - c) ** 2)) >= min_distance for c in codes):
                chosen.append(pred)
                codes.append(code)
                if len(chosen) == k:
                    break
        return chosen


def params_key(params: Mapping[str, Any]) -> str:
    """A stable identity for a set of params (floats rounded to 6 significant digits)."""

    def norm(v: Any) -> Any:
        return float(f"{v:.6g}") if isinstance(v, float) else v

    return json.dumps({k: norm(v) for k, v in sorted(params.items())}, sort_keys=True)


def _draw(param: Param, rng: np.random.Generator, out: dict[str, Any]) -> None:
    if param.is_fixed:
        value = param.value
    elif param.choices is not None:
        value = param.choices[int(rng.integers(len(param.choices)))]
        out[param.optuna_name] = value
    else:
        value = _draw_range(param, rng.random())
        out[param.optuna_name] = value
    for child in param.children.get(value, ()):
        _draw(child, rng, out)


def _draw_range(param: Param, u: float) -> float | int:
    low, high = float(param.low), float(param.high)  # type: ignore[arg-type]
    value = (
        math.exp(math.log(low) + u * (math.log(high) - math.log(low)))
        if param.log
        else low + u * (high - low)
    )
    if param.step:
        value = low + round((value - low) / float(param.step)) * float(param.step)
    value = min(max(value, low), high)
    return int(round(value)) if param.is_int else float(value)


def sample_params(space: SearchSpace, rng: np.random.Generator) -> dict[str, Any]:
    """One configuration drawn uniformly (log-uniformly where the space says log)."""
    out: dict[str, Any] = {}
    for param in space.params:
        _draw(param, rng, out)
    return out


def _perturb(space: SearchSpace, params: Mapping[str, Any], rng: np.random.Generator) -> dict[str, Any]:
    """A neighbour: ranges moved by ~10% of their (log) width, a choice switched now and then."""
    out: dict[str, Any] = {}

    def walk(param: Param) -> None:
        if param.is_fixed:
            value = param.value
        elif param.choices is not None:
            value = params.get(param.optuna_name, param.choices[0])
            if rng.random() < 0.15 or value not in param.choices:
                value = param.choices[int(rng.integers(len(param.choices)))]
            out[param.optuna_name] = value
        else:
            current = params.get(param.optuna_name)
            if current is None:
                u = rng.random()
            else:
                low, high, x = float(param.low), float(param.high), float(current)  # type: ignore[arg-type]
                if param.log:
                    low, high, x = math.log(low), math.log(high), math.log(x)
                u = (x - low) / (high - low) if high > low else 0.5
                u = float(np.clip(u + rng.normal(0, 0.1), 0, 1))
            value = _draw_range(param, u)
            out[param.optuna_name] = value
        for child in param.children.get(value, ()):
            walk(child)

    for param in space.params:
        walk(param)
    return out


# ---- seeds, confirmations, baseline -------------------------------------------------------------


def seed_spread(study: optuna.Study, points: Sequence[TrialPoint] | None = None) -> float | None:
    """Pooled log-scale standard deviation of measured time-to-target across repeats of one config.

    Repeats are trials with the same params (``confirm`` runs with several seeds); None if none.
    """
    groups: dict[str, list[float]] = {}
    for p in points if points is not None else []:
        if p.measured:
            groups.setdefault(params_key(p.params), []).append(math.log(p.time))
    sq, dof = 0.0, 0
    for logs in groups.values():
        if len(logs) >= 2:
            sq += float(np.sum((np.array(logs) - np.mean(logs)) ** 2))
            dof += len(logs) - 1
    return math.sqrt(sq / dof) if dof else None


def baseline_trial(study: optuna.Study) -> Any | None:
    """The trial enqueued from ``--baseline`` (user attr ``baseline: true``), if it ran."""
    from optuna.trial import TrialState

    for trial in study.get_trials(deepcopy=False, states=(TrialState.COMPLETE,)):
        if trial.user_attrs.get("baseline"):
            return trial
    return None


def baseline_time(study: optuna.Study) -> float | None:
    """The baseline's measured time-to-target, else its forecast; None without a baseline."""
    trial = baseline_trial(study)
    if trial is None:
        return None
    attrs = trial.user_attrs
    return attrs.get("time_to_target") or attrs.get("predicted_time_to_target")


def speedup(baseline: float | None, time: float | None) -> float | None:
    """How many times faster than the baseline (``baseline / time``)."""
    if not baseline or not time or not math.isfinite(time):
        return None
    return round(baseline / time, 3)


def confirmations(study: optuna.Study) -> list[dict[str, Any]]:
    """Confirmed configurations, predicted against measured, updated from the confirm trials.

    The plan (``confirm_id`` → params and prediction) lives in the study's ``confirmations``
    attr; measured times come from the trials with ``confirm: true`` and that ``confirm_id``.
    """
    from optuna.trial import TrialState

    plans = study.user_attrs.get(CONFIRMATIONS_ATTR) or []
    by_id: dict[str, list[Any]] = {}
    for trial in study.get_trials(deepcopy=False, states=(TrialState.COMPLETE,)):
        cid = trial.user_attrs.get("confirm_id")
        if trial.user_attrs.get("confirm") and cid:
            by_id.setdefault(cid, []).append(trial)
    out = []
    for plan in plans:
        trials = by_id.get(plan["id"], [])
        times = [t.user_attrs.get("time_to_target") for t in trials]
        reached = [float(t) for t in times if t]
        entry = dict(plan)
        entry.update(
            trials=[t.number for t in trials],
            seeds=[t.user_attrs.get("seed") for t in trials],
            times=[float(t) if t else None for t in times],
            n_reached=len(reached),
            measured_mean=float(np.mean(reached)) if reached else None,
            measured_min=min(reached) if reached else None,
            measured_max=max(reached) if reached else None,
            seed_sd_log=float(np.std(np.log(reached), ddof=1)) if len(reached) >= 2 else None,
        )
        out.append(entry)
    return out


def enqueue_confirmations(
    study: optuna.Study, spec: StudySpec | None = None, top: int = 3, seeds: int = 2
) -> list[Prediction]:
    """Plan what ``convtune study confirm --top K --seeds N`` runs and enqueue its trials.

    The ``top`` predicted-fastest configurations (:meth:`ScalingModel.top`) join the study's
    ``confirmations`` plan (each with its prediction and interval), and each is enqueued
    ``seeds`` times with the seeds after the spec's (whose run the search already made), marked
    ``confirm``. Running them, unpruned, is the caller's: :func:`convtune.study.run_study` with
    a ``NopPruner``. Raises ``ValueError`` before any trial reached the target.
    """
    spec = spec or _spec_of(study)
    preds = ScalingModel.from_study(study, spec).top(top)
    plans = list(study.user_attrs.get(CONFIRMATIONS_ATTR) or [])
    for pred in preds:
        cid = confirm_id(pred.params)
        if not any(p["id"] == cid for p in plans):
            plans.append(
                {
                    "id": cid,
                    "params": pred.params,
                    "recipe": pred.recipe.to_dict(),
                    "predicted": pred.time_to_target,
                    "interval": list(pred.interval),
                    "level": pred.level,
                }
            )
        for s in range(seeds):
            study.enqueue_trial(
                pred.params,
                user_attrs={"confirm": True, "confirmed": True, "confirm_id": cid, "seed": spec.seed + 1 + s},
            )
    study.set_user_attr(CONFIRMATIONS_ATTR, plans)
    return preds


def best_confirmed(
    study: optuna.Study, confirmed: list[dict[str, Any]] | None = None
) -> dict[str, Any] | None:
    """The confirmed configuration with the lowest mean time whose every seed reached the target.

    ``confirmed``: :func:`confirmations` of ``study``, where the caller has them already.
    """
    confirmed = confirmations(study) if confirmed is None else confirmed
    done = [c for c in confirmed if c["trials"] and c["n_reached"] == len(c["trials"])]
    return min(done, key=lambda c: c["measured_mean"]) if done else None


# ---- recommend --------------------------------------------------------------------------------


@dataclass(frozen=True)
class Recommendation:
    """The predicted fastest configuration: what it is, how fast, how sure, and on what grounds.

    ``time_to_target`` and ``interval`` are in ``cost_unit``; the interval accounts for the fits'
    uncertainty, the regression's and the seed-to-seed spread. ``measured_trial`` is a trial that
    ran these very params and reached the target (None: a configuration no trial ran);
    ``nearest_trial`` is the closest trial in the encoded space.

    Example:
        >>> rec = convtune.recommend(study)                  # doctest: +SKIP
        >>> rec.recipe.peak_lr, rec.time_to_target           # doctest: +SKIP
    """

    params: dict[str, Any]
    recipe: Recipe
    time_to_target: float
    interval: tuple[float, float]
    level: float
    cost_unit: str
    measured_trial: int | None
    measured_time: float | None
    nearest_trial: int | None
    supported_by: tuple[str, ...]
    fits: dict[str, Any]
    speedup_over_baseline: float | None = None
    alternatives: tuple[Prediction, ...] = ()

    def to_dict(self) -> dict[str, Any]:
        return {
            "params": self.params,
            "recipe": self.recipe.to_dict(),
            "time_to_target": self.time_to_target,
            "interval": list(self.interval),
            "level": self.level,
            "cost_unit": self.cost_unit,
            "measured_trial": self.measured_trial,
            "measured_time": self.measured_time,
            "nearest_trial": self.nearest_trial,
            "supported_by": list(self.supported_by),
            "fits": self.fits,
            "speedup_over_baseline": self.speedup_over_baseline,
        }


def fits_summary(model: ScalingModel) -> dict[str, Any]:
    """The fitted scaling parameters as plain data (for ``best --json`` and the plots)."""
    out: dict[str, Any] = {"n_trials_used": len(model.usable), "seed_sd_log": model.seed_sigma}
    sf = model.steps_fit
    if sf is not None:
        out["b_noise"] = sf.b_noise
        out["b_noise_interval"] = list(sf.b_noise_interval) if sf.b_noise_interval else None
        out["s_min"] = sf.s_min
        out["lr_exponent"] = sf.lr_exponent
        out["lr_exponent_interval"] = list(sf.lr_exponent_interval) if sf.lr_exponent_interval else None
        out["steps_fit_residual_sd_log"] = sf.residual_sigma
    cb = model.critical_batch
    if cb is not None:
        out["envelope_b_noise"] = cb.b_noise
        out["envelope_b_noise_interval"] = list(cb.b_noise_interval)
    if model.step_time is not None and model.cost != "samples":
        out["step_time"] = {
            "compute": {
                p: {"per_micro_step": a, "per_sample": b} for p, (a, b) in model.step_time.compute.items()
            },
            "per_step_overhead": {str(w): o for w, o in model.step_time.overhead.items()},
            "sd_log": model.step_time.log_sigma,
        }
    return out


def recommend(
    study: optuna.Study,
    spec: StudySpec | None = None,
    *,
    top: int = 1,
    n_candidates: int = 2000,
    level: float = LEVEL,
    seed: int = 0,
    risk: float | None = None,
) -> Recommendation:
    """The configuration the study's scaling fits predict reaches the target fastest.

    Searches ``n_candidates`` configurations (the space's distributions plus the neighbourhoods
    of the best trials; seeded, so deterministic) and returns the best by predicted time, with
    ``top - 1`` runners-up in ``alternatives``. Raises ``ValueError`` when no trial reached the
    target yet.

    Example:
        >>> rec = convtune.recommend(study)
        >>> print(rec.recipe.peak_lr, rec.time_to_target, rec.interval)
    """
    spec = spec or _spec_of(study)
    model = ScalingModel.from_study(study, spec, level=level, seed=seed)
    best = model.top(max(1, top), n_candidates=n_candidates, seed=seed, risk=risk)
    if not best:
        raise ValueError("every candidate lies in the diverged region")
    pick = best[0]
    key = params_key(pick.params)
    same = [p for p in model.points if p.measured and params_key(p.params) == key]
    x = model.encoder.encode(pick.params)
    nearest = min(
        (p for p in model.points if not p.diverged),
        key=lambda p: float(np.sum((model.encoder.encode(p.params) - x) ** 2)),
        default=None,
    )
    from convtune.study import cost_unit

    base = baseline_time(study)
    return Recommendation(
        params=pick.params,
        recipe=pick.recipe,
        time_to_target=pick.time_to_target,
        interval=pick.interval,
        level=level,
        cost_unit=cost_unit(spec.cost),
        measured_trial=same[0].number if same else None,
        measured_time=float(np.mean([p.time for p in same])) if same else None,
        nearest_trial=nearest.number if nearest else None,
        supported_by=model.supported_by,
        fits=fits_summary(model),
        speedup_over_baseline=speedup(base, pick.time_to_target),
        alternatives=tuple(best[1:]),
    )


def confirm_id(params: Mapping[str, Any]) -> str:
    """A short stable id for a configuration being confirmed."""
    return hashlib.sha1(params_key(params).encode()).hexdigest()[:10]


def _spec_of(study: optuna.Study) -> StudySpec:
    from convtune.config.spec import StudySpec
    from convtune.study import SPEC_ATTR

    raw = study.user_attrs.get(SPEC_ATTR)
    if raw is None:
        raise ValueError(f"study {study.study_name!r} was not created by convtune (no spec)")
    return StudySpec.from_dict(raw, where=f"study {study.study_name}")


def scaling_report(study: optuna.Study, spec: StudySpec, measured: dict[str, Any] | None) -> dict[str, Any]:
    """The keys ``best_report`` adds: ``predicted``, ``confirmed``, ``baseline`` and ``best``.

    ``best`` names what to trust first: ``confirmed`` (every seed reached the target) over
    ``measured``. Every time also appears as a speed-up over the baseline when there is one.
    """
    base_time = baseline_time(study)
    base = baseline_trial(study)
    out: dict[str, Any] = {
        "baseline": None
        if base is None
        else {"trial": base.number, "status": base.user_attrs.get("status"), "time_to_target": base_time},
        "confirmed": None,
        "predicted": None,
    }
    if measured is not None:
        measured["speedup_over_baseline"] = speedup(base_time, measured.get("time_to_target"))
    confirmed = best_confirmed(study)
    if confirmed is not None:
        confirmed["speedup_over_baseline"] = speedup(base_time, confirmed["measured_mean"])
        out["confirmed"] = confirmed
    try:
        out["predicted"] = recommend(study, spec).to_dict()
    except ValueError as exc:
        out["predicted_unavailable"] = str(exc)
    out["best"] = "confirmed" if confirmed else "measured" if measured else None
    return out


def enqueue_baseline(study: optuna.Study, spec: StudySpec, recipe: Recipe) -> list[str]:
    """Enqueue the user's current ``recipe`` as the study's first trial (``baseline: true``).

    Returns the recipe fields the space fixes to other values (those run as the space says).
    Idempotent: creating the same study again does not enqueue it twice.
    """
    import optuna

    space = spec.search_space
    params = space.params_from_recipe(recipe)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # a baseline may lie outside the searched ranges
        ran = space.recipe(optuna.trial.FixedTrial(params))
    mine, theirs = recipe.to_dict(), ran.to_dict()
    differs = sorted(
        k for k in mine if mine[k] != theirs.get(k) and k not in ("effective_batch_size", "total_steps")
    )
    if not study.user_attrs.get("baseline"):
        study.enqueue_trial(params, user_attrs={"baseline": True}, skip_if_exists=True)
        study.set_user_attr("baseline", mine)
    return differs
