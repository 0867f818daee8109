"""Curve models and their fits. numpy/scipy only.

Two families, both fitted by bounded least squares on a handful of parameters:

* ``annealing`` (schedule-aware): the LR-annealing law of Tissue et al. 2024,
  ``L = L0 + A * S1**-alpha - C * S2``, where ``S1`` is the LR area so far (the integral of the
  LR over cost) and ``S2`` the annealing area (the integral of a momentum of past LR drops,
  which decays with a memory of ``ANNEAL_MEMORY`` of the planned run). With a constant LR this
  is the power law below, so one code path serves both.
* ``power`` / ``exp`` (schedule-blind, after Domhan et al. 2015): ``L0 + A * c**-alpha`` and
  ``L0 + A * exp(-b c)``, used when the trial's schedule is unknown.

Parameters are fitted in scaled units (``S1``, ``S2`` and cost divided by a per-trial
reference) so that one parameter box suits every curve; a prior is stated in absolute units
(``L0``, ``log(A * ref1**alpha)``, ``alpha``, ``C / ref2``) so that it transfers between trials
whose schedules differ.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np
from scipy.optimize import least_squares
from scipy.signal import lfilter

from convtune.curves._schedule import LRSchedule

# Memory of the annealing momentum, as a fraction of the planned run. Tissue et al. use a
# per-step decay of 0.999 (1,000 steps) on runs of tens of thousands of steps.
ANNEAL_MEMORY = 0.05
_N_BASE_GRID = 2048
_N_FUTURE = 256
_ALPHA_BOUNDS = (0.02, 4.0)
_ALPHA_GRID = np.array([0.1, 0.2, 0.35, 0.5, 0.75, 1.0, 1.5, 2.5])
_EXP_BOUNDS = (1e-3, 60.0)
_EXP_GRID = np.array([0.1, 0.3, 1.0, 3.0, 10.0])
# A weak default belief on the exponent keeps the fit well posed on 3-4 points and is
# negligible against informative data (data residuals are in units of the noise).
_WEAK_ALPHA = (0.5, 1.0)
# Iterations of each bounded least-squares fit: the grid start is close, and the ensemble and
# its calibration absorb what more iterations would refine.
_MAX_NFEV = 20
# Laplace draws are truncated to the parameter box by rejection from this many times more.
_OVERSAMPLE = 4


@dataclass(frozen=True)
class PriorTerms:
    """Gaussian beliefs on the absolute parameters (``L0, log A_abs, alpha, C_abs``).

    ``weight`` is ``1 / std`` per parameter; 0 switches that belief off.
    """

    mean: np.ndarray
    weight: np.ndarray


@dataclass(frozen=True)
class Basis:
    """A curve's features: time-like ``u`` (and annealing ``v``) at observations and ahead."""

    kind: str
    u_obs: np.ndarray
    v_obs: np.ndarray | None
    grid: np.ndarray
    u_grid: np.ndarray
    v_grid: np.ndarray | None
    ref1: float
    ref2: float


@dataclass(frozen=True)
class Fit:
    kind: str
    theta: np.ndarray
    cov: np.ndarray
    lower: np.ndarray
    upper: np.ndarray
    sse: float
    n: int

    @property
    def n_params(self) -> int:
        return int(self.theta.size)


def annealing_areas(
    schedule: LRSchedule, extent: float, *, memory: float = ANNEAL_MEMORY
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(grid, S1, S2)`` on a uniform cost grid over ``[0, extent]``.

    LR rises before the first decrease are the warm-up and do not count as (negative)
    annealing; later rises (cycles, restarts) do, which is how the law explains the loss
    going back up when a cyclic LR climbs.
    """
    grid = np.linspace(0.0, extent, _N_BASE_GRID)
    lr = schedule.lr_at(grid)
    step = grid[1] - grid[0]
    s1 = np.concatenate(([0.0], np.cumsum(0.5 * (lr[1:] + lr[:-1]) * step)))
    drop = np.concatenate(([0.0], lr[:-1] - lr[1:]))
    tol = 1e-9 * max(float(np.max(np.abs(lr))), 1e-300)
    first_decrease = np.flatnonzero(drop > tol)
    end_warmup = int(first_decrease[0]) if first_decrease.size else drop.size
    drop[:end_warmup] = 0.0
    tau = max(memory * schedule.horizon, 1e-12)
    lam = math.exp(-step / tau)
    momentum = lfilter([1.0], [1.0, -lam], drop)
    s2 = np.cumsum(momentum) * step
    return grid, s1, s2


def _future_grid(base: np.ndarray, c_last: float) -> np.ndarray:
    ahead = base[base > c_last]
    if ahead.size > _N_FUTURE - 1:
        idx = np.linspace(0, ahead.size - 1, _N_FUTURE - 1).round().astype(int)
        ahead = ahead[idx]
    return np.concatenate(([c_last], ahead))


def annealing_basis(costs: np.ndarray, schedule: LRSchedule, c_last: float) -> Basis:
    horizon = schedule.horizon
    extent = max(2.0 * horizon, 1.05 * c_last, 1e-12)
    base, s1, s2 = annealing_areas(schedule, extent)
    grid = _future_grid(base, c_last)
    at_end = min(horizon, extent) if horizon > 0 else extent
    ref1 = float(np.interp(at_end, base, s1))
    if not ref1 > 0:
        ref1 = float(s1[-1]) if s1[-1] > 0 else 1.0
    ref2 = float(np.max(np.abs(s2[base <= max(at_end, base[1])])))
    has_annealing = ref2 > 1e-9 * max(ref1, 1e-300)
    u_obs = np.interp(costs, base, s1) / ref1
    u_grid = np.interp(grid, base, s1) / ref1
    v_obs = v_grid = None
    if has_annealing:
        v_obs = np.interp(costs, base, s2) / ref2
        v_grid = np.interp(grid, base, s2) / ref2
    return Basis(
        kind="annealing",
        u_obs=u_obs,
        v_obs=v_obs,
        grid=grid,
        u_grid=u_grid,
        v_grid=v_grid,
        ref1=ref1,
        ref2=ref2 if has_annealing else 1.0,
    )


def blind_basis(costs: np.ndarray, c_last: float, extent: float, kind: str) -> Basis:
    grid = np.concatenate(([c_last], np.geomspace(c_last, extent, _N_FUTURE)[1:]))
    return Basis(
        kind=kind,
        u_obs=costs / c_last,
        v_obs=None,
        grid=grid,
        u_grid=grid / c_last,
        v_grid=None,
        ref1=c_last,
        ref2=1.0,
    )


def _power_predict(theta: np.ndarray, u: np.ndarray, v: np.ndarray | None) -> np.ndarray:
    """Vectorised over parameter rows: ``theta`` is ``(p,)`` or ``(k, p)``."""
    th = np.atleast_2d(theta)
    out = th[:, :1] + th[:, 1:2] * np.power(u[None, :], -th[:, 2:3])
    if v is not None and th.shape[1] > 3:
        out = out - th[:, 3:4] * v[None, :]
    return out if theta.ndim == 2 else out[0]


def _exp_predict(theta: np.ndarray, u: np.ndarray) -> np.ndarray:
    th = np.atleast_2d(theta)
    out = th[:, :1] + th[:, 1:2] * np.exp(-th[:, 2:3] * u[None, :])
    return out if theta.ndim == 2 else out[0]


def predict(kind: str, theta: np.ndarray, u: np.ndarray, v: np.ndarray | None) -> np.ndarray:
    if kind == "exp":
        return _exp_predict(theta, u)
    return _power_predict(theta, u, v)


def _clip_inside(x: np.ndarray, lo: np.ndarray, hi: np.ndarray) -> np.ndarray:
    span = np.where(np.isfinite(hi - lo), hi - lo, 1.0)
    pad = 1e-9 * np.maximum(span, 1e-12)
    return np.minimum(np.maximum(x, lo + pad), hi - pad)


def _level_bounds(y: np.ndarray) -> tuple[float, float, float]:
    lo, hi = float(np.min(y)), float(np.max(y))
    span = max(hi - lo, 1e-6 * max(abs(hi), 1.0))
    return lo - 10.0 * span, hi + span, span


def _covariance(jac: np.ndarray, n_data: int, sse_data: float, n_params: int) -> np.ndarray:
    info = jac.T @ jac
    cov = np.linalg.pinv(info, rcond=1e-12)
    dof = n_data - n_params
    if dof >= 2:
        # Scale up when the residuals say the noise estimate was too small (or the model is
        # off); never scale down: extrapolation error is larger than the in-sample fit shows.
        cov = cov * max(1.0, sse_data / dof)
    return cov


def fit_power(basis: Basis, y: np.ndarray, sigma: float, prior: PriorTerms | None = None) -> Fit:
    """Fit ``L0 + A u**-alpha [- C v]`` (MAP with ``prior``); returns the fit and covariance."""
    u, v = basis.u_obs, basis.v_obs
    with_c = v is not None
    p = 4 if with_c else 3
    lnr1 = math.log(basis.ref1) if basis.ref1 > 0 else 0.0
    lvl_lo, lvl_hi, span = _level_bounds(y)
    lower = np.array([lvl_lo, 0.0, _ALPHA_BOUNDS[0], 0.0][:p])
    upper = np.array([lvl_hi, np.inf, _ALPHA_BOUNDS[1], np.inf][:p])
    w = 1.0 / sigma
    if prior is not None:
        pm, pw = prior.mean, prior.weight
    else:
        pm = np.array([0.0, 0.0, _WEAK_ALPHA[0], 0.0])
        pw = np.array([0.0, 0.0, 1.0 / _WEAK_ALPHA[1], 0.0])
    if not with_c:
        pm, pw = pm[:3], pw[:3]
    r2 = basis.ref2

    # Start from the best exponent on a grid, solving the linear parameters exactly (with the
    # linear parts of the prior as extra rows): robust without multi-start.
    best_x0, best_cost = None, math.inf
    for alpha in _ALPHA_GRID:
        cols = [np.ones_like(u), np.power(u, -alpha)]
        if with_c:
            cols.append(-v)
        design = np.stack(cols, axis=1) * w
        rhs = y * w
        n_lin = design.shape[1]
        rows, vals = [], []
        if pw[0] > 0:
            rows.append(np.eye(n_lin)[0] * pw[0])
            vals.append(pm[0] * pw[0])
        if with_c and pw[3] > 0:
            rows.append(np.eye(n_lin)[2] * pw[3] / r2)
            vals.append(pm[3] * pw[3])
        if rows:
            design = np.vstack([design, np.stack(rows)])
            rhs = np.concatenate([rhs, vals])
        lin, *_ = np.linalg.lstsq(design, rhs, rcond=None)
        x0 = np.array([lin[0], max(lin[1], 1e-6 * span), alpha] + ([max(lin[2], 0.0)] if with_c else []))
        x0 = _clip_inside(x0, lower, upper)
        cost = float(np.sum(_power_residuals(x0, u, v, y, w, pm, pw, lnr1, r2) ** 2))
        if cost < best_cost:
            best_x0, best_cost = x0, cost

    res = _solve(_power_residuals, best_x0, _power_jacobian, lower, upper, (u, v, y, w, pm, pw, lnr1, r2))
    theta = res.x
    resid = res.fun[: y.size]
    sse = float(np.sum(resid**2))
    cov = _covariance(res.jac, y.size, sse, p)
    return Fit("power", theta, cov, lower, upper, sse, int(y.size))


def _solve(fun: Any, x0: np.ndarray, jac: Any, lower: np.ndarray, upper: np.ndarray, args: tuple = ()) -> Any:
    """Bounded least squares as both curve models run it: a few dozen evaluations at most,
    since a forecast is fitted on every report of every trial."""
    return least_squares(
        fun,
        x0,
        jac=jac,
        bounds=(lower, upper),
        method="trf",
        x_scale="jac",
        max_nfev=_MAX_NFEV,
        ftol=1e-6,
        xtol=1e-6,
        args=args,
    )


def _power_residuals(th, u, v, y, w, pm, pw, lnr1, r2):  # noqa: ANN001, ANN202
    l0, a, alpha = th[0], th[1], th[2]
    pred = l0 + a * np.power(u, -alpha)
    if v is not None:
        pred = pred - th[3] * v
    abs_params = [l0, math.log(max(a, 1e-300)) + alpha * lnr1, alpha]
    if v is not None:
        abs_params.append(th[3] / r2)
    prior = (np.asarray(abs_params) - pm) * pw
    return np.concatenate([(pred - y) * w, prior])


def _power_jacobian(th, u, v, y, w, pm, pw, lnr1, r2):  # noqa: ANN001, ANN202
    a, alpha = th[1], th[2]
    ua = np.power(u, -alpha)
    cols = [np.ones_like(u), ua, -a * ua * np.log(u)]
    if v is not None:
        cols.append(-v)
    data = np.stack(cols, axis=1) * w
    p = th.size
    prior = np.zeros((p, p))
    prior[0, 0] = pw[0]
    prior[1, 1] = pw[1] / max(a, 1e-300)
    prior[1, 2] = pw[1] * lnr1
    prior[2, 2] = pw[2]
    if v is not None:
        prior[3, 3] = pw[3] / r2
    return np.vstack([data, prior])


def fit_exp(basis: Basis, y: np.ndarray, sigma: float) -> Fit:
    """Fit ``L0 + A exp(-b u)`` (schedule-blind alternative to the power law)."""
    u = basis.u_obs
    lvl_lo, lvl_hi, span = _level_bounds(y)
    lower = np.array([lvl_lo, 0.0, _EXP_BOUNDS[0]])
    upper = np.array([lvl_hi, np.inf, _EXP_BOUNDS[1]])
    w = 1.0 / sigma
    best_x0, best_cost = None, math.inf
    for b in _EXP_GRID:
        design = np.stack([np.ones_like(u), np.exp(-b * u)], axis=1)
        lin, *_ = np.linalg.lstsq(design, y, rcond=None)
        x0 = _clip_inside(np.array([lin[0], max(lin[1], 1e-6 * span), b]), lower, upper)
        cost = float(np.sum((_exp_predict(x0, u) - y) ** 2))
        if cost < best_cost:
            best_x0, best_cost = x0, cost

    def resid(th: np.ndarray) -> np.ndarray:
        return (th[0] + th[1] * np.exp(-th[2] * u) - y) * w

    def jac(th: np.ndarray) -> np.ndarray:
        e = np.exp(-th[2] * u)
        return np.stack([np.ones_like(u), e, -th[1] * u * e], axis=1) * w

    res = _solve(resid, best_x0, jac, lower, upper)
    sse = float(np.sum(res.fun**2))
    cov = _covariance(res.jac, y.size, sse, 3)
    return Fit("exp", res.x, cov, lower, upper, sse, int(y.size))


def sample_params(fit: Fit, k: int, rng: np.random.Generator) -> np.ndarray:
    """``k`` parameter draws from the Laplace approximation, truncated to the bounds.

    Draws outside the bounds are rejected rather than clipped: poorly identified curves have
    strongly correlated parameters (a floor far below the data, a tiny exponent, a large
    amplitude: a nearly log-linear curve), and clipping each coordinate on its own breaks
    that correlation into curves the data rule out (flat ones, mostly), which made the
    interval lie almost entirely on the pessimistic side of the best fit. Only when too few
    draws fall inside are the rest clipped.
    """
    if k <= 0:
        return np.empty((0, fit.n_params))
    cov = 0.5 * (fit.cov + fit.cov.T)
    vals, vecs = np.linalg.eigh(cov)
    root = vecs * np.sqrt(np.clip(vals, 0.0, None))
    draws = fit.theta + rng.standard_normal((max(1, _OVERSAMPLE) * k, fit.n_params)) @ root.T
    if _OVERSAMPLE <= 0:  # the old behaviour, kept for benchmarks' A/B comparisons
        return np.clip(draws, fit.lower, fit.upper)
    inside = np.all((draws >= fit.lower) & (draws <= fit.upper), axis=1)
    kept = draws[inside][:k]
    if kept.shape[0] < k:
        rest = np.clip(draws[~inside][: k - kept.shape[0]], fit.lower, fit.upper)
        kept = np.concatenate([kept, rest])
    return kept


def noise_scale(y: np.ndarray) -> float:
    """Robust noise level from second differences (a smooth trend barely shows in them)."""
    span = float(np.max(y) - np.min(y)) if y.size else 0.0
    level = float(np.median(np.abs(y))) if y.size else 1.0
    floor = 1e-4 * max(span, 1e-3 * max(level, 1e-12), 1e-12)
    if y.size < 4:
        return max(0.05 * span, floor)
    d2 = np.diff(y, 2)
    mad = float(np.median(np.abs(d2 - np.median(d2))))
    return max(mad / 0.6745 / math.sqrt(6.0), floor)
