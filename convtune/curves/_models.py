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

from convtune.curves._schedule import LRSchedule

# Memory of the annealing momentum, as a fraction of the planned run. Tissue et al. use a
# per-step decay of 0.999 (1,000 steps) on runs of tens of thousands of steps.
ANNEAL_MEMORY = 0.05
_N_BASE_GRID = 2048
_N_FUTURE = 256
_ALPHA_BOUNDS = (0.02, 4.0)
# The nonlinear parameter (exponent or rate) is profiled over a log-spaced grid with the linear
# parameters solved exactly for every grid value at once (variable projection, Golub & Pereyra
# 1973), then refined by a parabola through the best three: a global answer for one batched
# solve, where a local least-squares search from a coarse start took ~20 Python-level
# iterations per fit (most of a forecast's time).
_N_PROFILE = 40
_ALPHA_GRID = np.geomspace(0.03, 3.5, _N_PROFILE)
_EXP_BOUNDS = (1e-3, 60.0)
_EXP_GRID = np.geomspace(2e-3, 50.0, _N_PROFILE)
# A weak default belief on the exponent keeps the fit well posed on 3-4 points and is
# negligible against informative data (data residuals are in units of the noise).
_WEAK_ALPHA = (0.5, 1.0)
# Iterations of the bounded least-squares refinement, run only when a prior's belief on the
# amplitude (not linear in it) leaves the profiled optimum inexact: the start is close.
_MAX_NFEV = 8
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
    # Imported here: scipy.signal costs ~0.5 s at import, paid by every process that imports
    # convtune.curves (each worker, the CLI) and needed only by schedule-aware fits.
    from scipy.signal import lfilter

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

    # Linear parts of the prior (on L0 and C) enter the profiled solves as extra rows; the
    # exponent's and the amplitude's are in each candidate's cost.
    rows, vals = [], []
    if pw[0] > 0:
        rows.append(np.eye(p - 1)[0] * pw[0])
        vals.append(pm[0] * pw[0])
    if with_c and pw[3] > 0:
        rows.append(np.eye(p - 1)[2] * pw[3] / r2)
        vals.append(pm[3] * pw[3])
    prior_rows = (np.array(rows), np.array(vals)) if rows else None
    args = (u, v, y, w, pm, pw, lnr1, r2)

    def design_at(alphas: np.ndarray) -> np.ndarray:
        ones = np.ones((alphas.size, u.size))
        cols = [ones, np.power(u[None, :], -alphas[:, None])]
        if with_c:
            cols.append(-v[None, :] * ones)
        return np.stack(cols, axis=2)

    def full_cost(theta: np.ndarray) -> np.ndarray:
        r = _power_residuals_batch(theta, *args)
        return np.sum(r * r, axis=1)

    best = _Profile(y, w, lower, upper, prior_rows, full_cost, span).best(design_at, _ALPHA_GRID)
    if best is None:
        best = _clip_inside(np.array([float(np.mean(y)), 1e-6 * span, _WEAK_ALPHA[0], 0.0][:p]), lower, upper)
    if pw[1] > 0:
        res = _solve(_power_residuals, best, _power_jacobian, lower, upper, args)
        theta, resid, jac = res.x, res.fun[: y.size], res.jac
    else:
        theta = best
        resid = _power_residuals(theta, *args)[: y.size]
        jac = _power_jacobian(theta, *args)
    sse = float(np.sum(resid**2))
    cov = _covariance(jac, y.size, sse, p)
    return Fit("power", theta, cov, lower, upper, sse, int(y.size))


def _batched_lstsq(design: np.ndarray, rhs: np.ndarray) -> np.ndarray:
    """Least-squares solutions of ``design[i] @ x = rhs[i]`` for a stack of small systems."""
    return np.einsum("kpn,kn->kp", np.linalg.pinv(design, rcond=1e-10), rhs)


@dataclass(frozen=True)
class _Profile:
    """A fit by variable projection: for each value of the nonlinear parameter ``g`` (an
    exponent or a rate) the linear ones ``(L0, A[, C])`` are solved exactly, for all values at
    once. ``full_cost`` scores rows of parameters ``(L0, A, g[, C])`` (data and prior terms);
    ``prior_rows`` are the prior's linear beliefs as extra least-squares rows."""

    y: np.ndarray
    w: float
    lower: np.ndarray
    upper: np.ndarray
    prior_rows: tuple[np.ndarray, np.ndarray] | None
    full_cost: Any
    span: float

    def candidates(self, design: np.ndarray, grid: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """For each ``grid[k]``: the best feasible ``(L0, A, g[, C])`` and its cost (``inf``: none).

        ``design[k]`` holds the columns multiplying ``(L0, A[, C])`` at ``grid[k]``. Each value
        is solved freely, with ``C`` at its bound 0, and with ``L0`` at its lower bound (the
        bounds that bind in practice: a floor far below the data is how a nearly log-linear
        curve is fitted).
        """
        y, w, lower, upper = self.y, self.w, self.lower, self.upper
        k, n, n_lin = design.shape
        with_c = n_lin == 3
        variants = [(f, c) for f in (False, True) for c in ((False, True) if with_c else (False,))]
        thetas = []
        for fix_l0, no_c in variants:
            keep = [j for j in range(n_lin) if not (fix_l0 and j == 0) and not (no_c and j == 2)]
            d = design[:, :, keep] * w
            rhs = np.broadcast_to(((y - lower[0]) if fix_l0 else y) * w, (k, n))
            if self.prior_rows is not None:
                pr, pv = self.prior_rows
                pv = pv - pr[:, 0] * lower[0] if fix_l0 else pv
                pr = pr[:, keep]
                used = np.any(pr != 0, axis=1)
                if used.any():
                    d = np.concatenate([d, np.broadcast_to(pr[used], (k, *pr[used].shape))], axis=1)
                    rhs = np.concatenate([rhs, np.broadcast_to(pv[used], (k, int(used.sum())))], axis=1)
            full = np.zeros((k, n_lin))
            full[:, keep] = _batched_lstsq(d, rhs)
            if fix_l0:
                full[:, 0] = lower[0]
            thetas.append(np.column_stack([full[:, 0], full[:, 1], grid] + ([full[:, 2]] if with_c else [])))
        theta = np.stack(thetas)  # (variants, k, p)
        tol = 1e-9 * max(self.span, 1e-300)
        ok = np.all(np.isfinite(theta), axis=2) & (theta[:, :, 1] > tol)
        ok &= np.all((theta >= lower - tol) & (theta <= upper + tol), axis=2)
        placeholder = (lower + np.minimum(upper, lower + 1.0)) / 2
        theta = _clip_inside(np.where(ok[:, :, None], theta, placeholder), lower, upper)
        cost = np.where(ok, self.full_cost(theta.reshape(-1, theta.shape[2])).reshape(ok.shape), np.inf)
        pick = np.argmin(cost, axis=0)
        cols = np.arange(k)
        return theta[pick, cols], cost[pick, cols]

    def best(self, design_at: Any, grid: np.ndarray) -> np.ndarray | None:
        """The best parameters with ``g`` on ``grid``, refined between grid points by a parabola
        in ``log g``; ``None`` when no grid value gives a feasible fit."""
        theta, cost = self.candidates(design_at(grid), grid)
        i = int(np.argmin(cost))
        if not math.isfinite(float(cost[i])):
            return None
        best = theta[i]
        if 0 < i < grid.size - 1 and np.all(np.isfinite(cost[i - 1 : i + 2])):
            x, c = np.log(grid[i - 1 : i + 2]), cost[i - 1 : i + 2]
            curvature = c[0] - 2.0 * c[1] + c[2]
            if curvature > 0:
                at = x[1] + 0.5 * (x[1] - x[0]) * (c[0] - c[2]) / curvature
                g = np.exp(np.clip([at], x[0], x[2]))
                t2, c2 = self.candidates(design_at(g), g)
                if c2[0] < cost[i]:
                    best = t2[0]
        return best


def _solve(fun: Any, x0: np.ndarray, jac: Any, lower: np.ndarray, upper: np.ndarray, args: tuple = ()) -> Any:
    """Bounded least squares from a close start: a few evaluations at most, since a forecast is
    fitted on every report of every trial."""
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


def _power_residuals_batch(th, u, v, y, w, pm, pw, lnr1, r2):  # noqa: ANN001, ANN202
    """:func:`_power_residuals` for rows of parameters ``th`` of shape ``(k, p)``."""
    pred = th[:, :1] + th[:, 1:2] * np.power(u[None, :], -th[:, 2:3])
    if v is not None:
        pred = pred - th[:, 3:4] * v[None, :]
    abs_params = [th[:, 0], np.log(np.maximum(th[:, 1], 1e-300)) + th[:, 2] * lnr1, th[:, 2]]
    if v is not None:
        abs_params.append(th[:, 3] / r2)
    prior = (np.stack(abs_params, axis=1) - pm[None, :]) * pw[None, :]
    return np.concatenate([(pred - y[None, :]) * w, prior], axis=1)


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

    def design_at(rates: np.ndarray) -> np.ndarray:
        return np.stack([np.ones((rates.size, u.size)), np.exp(-rates[:, None] * u[None, :])], axis=2)

    def full_cost(theta: np.ndarray) -> np.ndarray:
        r = (_exp_predict(theta, u) - y[None, :]) * w
        return np.sum(r * r, axis=1)

    theta = _Profile(y, w, lower, upper, None, full_cost, span).best(design_at, _EXP_GRID)
    if theta is None:
        theta = _clip_inside(np.array([float(np.mean(y)), 1e-6 * span, 1.0]), lower, upper)
    e = np.exp(-theta[2] * u)
    resid = (theta[0] + theta[1] * e - y) * w
    jac = np.stack([np.ones_like(u), e, -theta[1] * u * e], axis=1) * w
    sse = float(np.sum(resid**2))
    cov = _covariance(jac, y.size, sse, 3)
    return Fit("exp", theta, cov, lower, upper, sse, int(y.size))


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
