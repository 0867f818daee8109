"""The parametric fits (steps to target against batch and LR, cost per step) and the residual GP."""

from __future__ import annotations

import json
import math
import warnings
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np
from scipy import optimize

from convtune.scaling.points import LEVEL, TrialPoint, _z

if TYPE_CHECKING:
    import optuna


# ---- steps to target against batch (and LR) ----------------------------------------------------


def _mcc(log_batch: np.ndarray, log_s_min: float, log_b_noise: float) -> np.ndarray:
    return log_s_min + np.log1p(np.exp(log_b_noise - log_batch))


@dataclass(frozen=True)
class CriticalBatchFit:
    """``S = S_min·(1 + B_noise/B)`` fitted to the fastest trial at each effective batch.

    Example:
        >>> fit = CriticalBatchFit.fit([16, 32, 64, 128], [600, 350, 225, 162.5])
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
