"""Forecast the cost at which a partial learning curve will cross its target."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from typing import Any

import numpy as np

from convtune.config.target import Target
from convtune.curves._measure import as_target, time_to_target
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
from convtune.curves._schedule import LRSchedule

_N_DRAWS = 200
_SEED = 20240601
# How far past the last point (or the planned end) a schedule-blind forecast looks before it
# calls the target unreachable.
_BLIND_REACH = 20.0
# Future evaluations simulated with observation noise (thinned beyond this many).
_MAX_NOISY_EVALS = 256
_NOISY_CROSSINGS = True
# Without a prior, an interval needs this many more points than the model has parameters.
_MIN_DOF = 2


@dataclass(frozen=True)
class Forecast:
    """Where a curve is forecast to cross its target, in the curve's cost unit.

    ``estimate`` is the most likely crossing (``math.inf``: the model says it will not reach),
    ``low``/``high`` bound it with probability ``level``, ``probability`` is the chance of
    reaching within the planned run (the horizon; without one, at all), ``reached`` means the
    curve already crossed (then ``estimate == low == high`` is the measured, interpolated
    crossing), and ``diverged`` flags non-finite values or a loss that blew up. ``model``
    names what produced it (``measured``, ``annealing``, ``power``, ``exp``, ``none`` when there
    were too few points, ``diverged``); ``n_points`` is how many evaluations it used.
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

    def to_attrs(self, prefix: str = "forecast_") -> dict[str, Any]:
        """A JSON-able dict for Optuna user attrs; non-finite numbers become ``None``."""
        out: dict[str, Any] = {}
        for key, value in asdict(self).items():
            if isinstance(value, float) and not math.isfinite(value):
                value = None
            out[prefix + key] = value
        return out


def _unknown(c_last: float, level: float, n: int) -> Forecast:
    return Forecast(math.inf, c_last, math.inf, False, math.nan, level, False, "none", n)


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
) -> np.ndarray:
    """First evaluation (interpolated) at which a noisy observation of each row crosses ``level``.

    A measured time-to-target is where the *observed* metric first reaches the target, and an
    evaluation scatters around the curve by the noise ``sigma``: near a plateau close to the
    target, noise crosses it long before (or without) the mean curve. ``evals`` are the future
    evaluation costs inside ``grid``; ``inf`` where no observation crosses there.
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
    out[rows] = evals[k]
    later = k > 0
    r, k = rows[later], k[later]
    o0, o1 = obs[r, k - 1], obs[r, k]
    frac = np.clip((o0 - level) / np.where(o0 > o1, o0 - o1, 1.0), 0.0, 1.0)
    out[r] = evals[k - 1] + frac * (evals[k] - evals[k - 1])
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


def _quantile(sorted_vals: np.ndarray, q: float) -> float:
    # No interpolation: the draws hold inf, and inf arithmetic gives nan.
    idx = min(sorted_vals.size - 1, max(0, int(math.floor(q * sorted_vals.size))))
    return float(sorted_vals[idx])


def _warmup_end(schedule: LRSchedule) -> float:
    top = float(np.max(schedule.lrs))
    at_top = np.flatnonzero(schedule.lrs >= top * (1.0 - 1e-9))
    return float(schedule.costs[at_top[0]]) if at_top.size else 0.0


def forecast_time_to_target(
    costs: Sequence[float] | np.ndarray,
    values: Sequence[float] | np.ndarray,
    target: Target | str,
    *,
    schedule: LRSchedule | None = None,
    prior: CurvePrior | None = None,
    horizon: float | None = None,
    level: float = 0.8,
) -> Forecast:
    """Forecast the cost at which a curve seen up to now will reach ``target``.

    With the trial's ``schedule`` (its LR over the whole planned run) the curve is modelled by
    the LR-annealing law, ``L = L0 + A * S1**-alpha - C * S2`` (Tissue et al. 2024): the loss
    drop that a decaying LR brings late in the run is predicted from the schedule, which no
    curve family fitted to the high-LR prefix can see. Without one, a power law and an
    exponential (Domhan et al. 2015) are fitted to the metric against cost and mixed by their
    Akaike weights. ``prior`` (from :func:`fit_prior`) pulls poorly identified parameters toward
    what finished trials showed. The interval comes from 200 parameter draws of the fit's
    Laplace approximation; draws use a fixed seed, so the same input gives the same forecast
    in every process. A call takes ~3 ms with a schedule (one fit) and ~5 ms without (two
    fits), measured on one idle core of the 2-core dev box; a reached curve costs ~0.05 ms.

    Never raises on bad curves: with fewer than 3 usable points and no prior the forecast is
    ``estimate=inf``, ``low`` = the last cost, ``high=inf``; non-finite values or a blow-up
    give ``diverged=True`` with everything at ``inf``.

    Example:
        >>> import numpy as np
        >>> c = np.linspace(100, 1000, 10)
        >>> f = forecast_time_to_target(c, 1.5 + 20.0 * c**-0.5, "val_loss<=1.9")
        >>> f.reached, round(f.estimate, -2)
        (False, 2500.0)
    """
    tgt = as_target(target)
    if not 0.0 < level < 1.0:
        raise ValueError(f"level must be in (0, 1), got {level}")
    c = np.asarray(costs, dtype=float).reshape(-1)
    v = np.asarray(values, dtype=float).reshape(-1)
    n = min(c.size, v.size)
    c, v = c[:n], v[:n]
    ok = np.isfinite(c)
    c, v = c[ok], v[ok]
    order = np.argsort(c, kind="stable")
    c, v = c[order], v[order]
    if horizon is None and schedule is not None:
        horizon = schedule.horizon

    measured = time_to_target(c, v, tgt)
    nonfinite = bool(np.any(~np.isfinite(v)))
    if math.isfinite(measured):
        return Forecast(measured, measured, measured, True, 1.0, level, nonfinite, "measured", n)
    if nonfinite:
        return _hopeless(level, n)
    c_last = float(c[-1]) if c.size else 0.0
    sign = 1.0 if tgt.lower_is_better else -1.0
    y, y_target = sign * v, sign * tgt.value

    # Repeated costs: one point at their mean, so the fit never sees a vertical jump.
    uc, inverse = np.unique(c, return_inverse=True)
    y = np.bincount(inverse, weights=y) / np.bincount(inverse)
    c = uc
    if _blew_up(y, noise_scale(y)):
        return _hopeless(level, n)

    use = c > 0
    if schedule is not None:
        after_warmup = use & (c >= _warmup_end(schedule))
        if np.count_nonzero(after_warmup) >= 3:
            use = after_warmup
    cf, yf = c[use], y[use]
    need = 1 if prior is not None else 3
    if cf.size < need or c_last <= 0:
        return _unknown(c_last, level, n)
    sigma = noise_scale(yf)
    rng = np.random.default_rng(_SEED)

    fits: list[tuple[Basis, Fit, float]] = []
    try:
        if schedule is not None:
            basis = annealing_basis(cf, schedule, c_last)
            terms = prior.terms("annealing") if prior is not None else None
            fits.append((basis, fit_power(basis, yf, sigma, terms), 1.0))
        else:
            extent = _BLIND_REACH * max(c_last, horizon or 0.0)
            basis = blind_basis(cf, c_last, extent, "power")
            terms = prior.terms("power") if prior is not None else None
            fits.append((basis, fit_power(basis, yf, sigma, terms), 0.0))
            if cf.size >= 4:
                fits.append((basis, fit_exp(basis, yf, sigma), 0.0))
            aic = np.array([cf.size * math.log(max(f.sse, 1e-300) / cf.size) for _, f, _ in fits])
            weights = np.exp(-0.5 * (aic - aic.min()))
            weights /= weights.sum()
            fits = [(b, f, float(w)) for (b, f, _), w in zip(fits, weights, strict=True)]
    except (ValueError, np.linalg.LinAlgError, FloatingPointError):
        return _unknown(c_last, level, n)

    basis, best, _ = max(fits, key=lambda item: item[2])
    kind = "annealing" if schedule is not None else best.kind
    with np.errstate(all="ignore"):
        map_curve = predict(best.kind, best.theta, basis.u_grid, basis.v_grid)
        estimate = float(_crossings(map_curve[None, :], basis.grid, y_target)[0])
        draws = []
        for b, f, w in fits:
            k = int(round(_N_DRAWS * w))
            if k == 0:
                continue
            theta = sample_params(f, k, rng)
            pred = predict(f.kind, theta, b.u_grid, b.v_grid)
            mean_crossing = _crossings(pred, b.grid, y_target)
            # Within the planned run, the crossing that will be measured is that of noisy
            # evaluations; beyond it, that of the curve.
            end = min(float(b.grid[-1]), horizon if horizon is not None else 2.0 * c_last)
            evals = _future_evals(c, c_last, end) if _NOISY_CROSSINGS else np.empty(0)
            noisy = _first_noisy_crossings(pred, b.grid, y_target, evals, sigma, rng)
            draws.append(np.where(np.isfinite(noisy), noisy, mean_crossing))
    crossing = np.sort(np.concatenate(draws)) if draws else np.array([estimate])
    if not math.isfinite(estimate) and draws:
        # The best-fit curve stays short of the target, yet most noisy evaluations reach it
        # (a plateau within noise of the target): the median measured crossing is the estimate.
        estimate = _quantile(crossing, 0.5)
    tail = 0.5 * (1.0 - level)
    low = min(_quantile(crossing, tail), estimate)
    high = max(_quantile(crossing, 1.0 - tail), estimate)
    low = max(low, c_last)
    if prior is None and cf.size < best.n_params + _MIN_DOF:
        # As many points as parameters (or one more): the fit interpolates them, the Laplace
        # spread means nothing, and the optimistic end is unknown (seen on recorded charlm
        # curves: 3-5 points gave low = inf or several times the true crossing).
        low = c_last
    if horizon is not None:
        probability = float(np.mean(crossing <= horizon))
    else:
        probability = float(np.mean(np.isfinite(crossing)))
    return Forecast(estimate, low, high, False, probability, level, False, kind, n)
