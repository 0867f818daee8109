"""What finished trials teach the curve model: a Gaussian prior on its absolute parameters."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from convtune.config.target import Target
from convtune.curves._measure import as_target
from convtune.curves._models import PriorTerms, annealing_basis, blind_basis, fit_power, noise_scale
from convtune.curves._schedule import LRSchedule

_PARAMS = ("L0", "log_A", "alpha", "C")
# Floors on the prior's spread: trials differ (batch size, peak LR), so even identical fits
# must not pin a new trial's curve. alpha and log A in absolute terms, L0 and C relative.
_FLOOR_ALPHA = 0.05
_FLOOR_LOG_A = 0.3
_FLOOR_L0_REL = 0.1
_FLOOR_C_REL = 0.2


@dataclass(frozen=True)
class CurveFit:
    """One finished curve's fitted parameters in absolute units (``C`` is NaN when unknown).

    ``kind`` is ``"annealing"`` (fitted against the trial's LR schedule) or ``"power"`` (against
    cost); ``span`` is the range the curve covered (sets the scale of the ``L0`` floor);
    ``noise`` the scatter of its evaluations around the trend.
    """

    kind: str
    params: tuple[float, float, float, float]
    span: float
    c_scale: float = math.nan
    noise: float = math.nan


@dataclass(frozen=True)
class CurvePrior:
    """Mean and spread of the curve parameters over finished trials of one study.

    Parameters are in absolute units and in the target's "lower is better" orientation (a
    ``>=`` target's metric is negated): ``L0`` (the floor the metric tends to), ``log_A``,
    ``alpha`` (how fast it gets there) and ``C`` (how much annealing the LR helps, per unit of
    annealing area; ``nan`` when no finished trial annealed). ``kind`` says whether they were
    fitted against LR schedules (``annealing``) or against cost (``power``); a forecast of the
    other kind uses only ``L0`` and ``alpha``. ``noise`` is the median scatter of an
    evaluation around its curve's trend (the evaluation set's, shared by every trial of a
    study): a forecast from fewer points than can show their own noise uses it.

    Example:
        >>> prior = CurvePrior("power", (1.5, 2.0, 0.5, math.nan), (0.1, 0.5, 0.1, math.nan), 3)
        >>> CurvePrior.from_dict(prior.to_dict()) == prior
        True
    """

    kind: str
    mean: tuple[float, float, float, float]
    std: tuple[float, float, float, float]
    n_curves: int
    noise: float = math.nan

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, CurvePrior):
            return NotImplemented
        same = np.allclose(self.mean, other.mean, equal_nan=True) and np.allclose(
            self.std, other.std, equal_nan=True
        )
        noise = self.noise == other.noise or (math.isnan(self.noise) and math.isnan(other.noise))
        return self.kind == other.kind and self.n_curves == other.n_curves and bool(same) and noise

    def __hash__(self) -> int:
        return hash((self.kind, self.n_curves))

    def terms(self, kind: str) -> PriorTerms:
        mean = np.array(self.mean, dtype=float)
        std = np.array(self.std, dtype=float)
        weight = np.where(np.isfinite(std) & (std > 0), 1.0 / np.where(std > 0, std, 1.0), 0.0)
        weight = np.where(np.isfinite(mean), weight, 0.0)
        if kind != self.kind:
            weight[[1, 3]] = 0.0
        return PriorTerms(mean=np.nan_to_num(mean), weight=weight)

    def to_dict(self) -> dict[str, Any]:
        def clean(xs: Sequence[float]) -> list[float | None]:
            return [float(x) if math.isfinite(x) else None for x in xs]

        return {
            "kind": self.kind,
            "mean": clean(self.mean),
            "std": clean(self.std),
            "n_curves": self.n_curves,
            "noise": float(self.noise) if math.isfinite(self.noise) else None,
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> CurvePrior:
        def unclean(xs: Sequence[float | None]) -> tuple[float, float, float, float]:
            vals = [math.nan if x is None else float(x) for x in xs]
            return (vals[0], vals[1], vals[2], vals[3])

        return cls(
            kind=str(data["kind"]),
            mean=unclean(data["mean"]),
            std=unclean(data["std"]),
            n_curves=int(data["n_curves"]),
            noise=math.nan if data.get("noise") is None else float(data["noise"]),
        )

    @classmethod
    def from_fits(cls, fits: Sequence[CurveFit]) -> CurvePrior | None:
        """Combine per-curve fits (those of the majority kind), with floors on the spread."""
        fits = [f for f in fits if f is not None]
        if not fits:
            return None
        noises = [f.noise for f in fits if math.isfinite(f.noise)]
        noise = float(np.median(noises)) if noises else math.nan
        kinds = [f.kind for f in fits]
        kind = max(sorted(set(kinds)), key=kinds.count)
        chosen = [f for f in fits if f.kind == kind]
        params = np.array([f.params for f in chosen], dtype=float)
        span = float(np.median([f.span for f in chosen]))
        c_scales = [f.c_scale for f in chosen if math.isfinite(f.c_scale)]
        c_scale = float(np.median(c_scales)) if c_scales else 0.0
        floors = np.array([_FLOOR_L0_REL * span, _FLOOR_LOG_A, _FLOOR_ALPHA, math.nan])
        mean, std = [], []
        for j in range(4):
            col = params[:, j][np.isfinite(params[:, j])]
            if col.size == 0:
                mean.append(math.nan)
                std.append(math.nan)
                continue
            m = float(np.mean(col))
            floor = floors[j] if j != 3 else _FLOOR_C_REL * abs(m) + 0.05 * c_scale
            if not floor > 0:
                mean.append(math.nan)
                std.append(math.nan)
                continue
            s = float(np.std(col)) if col.size > 1 else 0.0
            mean.append(m)
            std.append(math.sqrt(s * s + floor * floor))
        return cls(kind, tuple(mean), tuple(std), len(chosen), noise)  # type: ignore[arg-type]


def fit_curve(
    costs: Sequence[float] | np.ndarray,
    values: Sequence[float] | np.ndarray,
    target: Target | str,
    schedule: LRSchedule | None = None,
) -> CurveFit | None:
    """Fit one (finished) curve for a prior; ``None`` when it is too short or not finite."""
    tgt = as_target(target)
    c = np.asarray(costs, dtype=float).reshape(-1)
    y = np.asarray(values, dtype=float).reshape(-1)
    n = min(c.size, y.size)
    c, y = c[:n], y[:n]
    ok = np.isfinite(c) & np.isfinite(y) & (c > 0)
    if not np.all(np.isfinite(y)):
        return None  # a diverged curve says nothing about healthy ones
    c, y = c[ok], y[ok]
    if c.size < 4:
        return None
    order = np.argsort(c, kind="stable")
    c, y = c[order], (y[order] if tgt.lower_is_better else -y[order])
    sigma = noise_scale(y)
    if schedule is not None:
        basis = annealing_basis(c, schedule, float(c[-1]))
        kind = "annealing"
    else:
        basis = blind_basis(c, float(c[-1]), 2.0 * float(c[-1]), "power")
        kind = "power"
    fit = fit_power(basis, y, sigma)
    th = fit.theta
    log_a = math.log(max(float(th[1]), 1e-300)) + float(th[2]) * math.log(basis.ref1)
    c_abs = float(th[3]) / basis.ref2 if th.size > 3 else math.nan
    late = y[y.size // 2 :]
    span = float(np.max(late) - np.min(late))
    c_scale = span / basis.ref2 if th.size > 3 else math.nan
    return CurveFit(kind, (float(th[0]), log_a, float(th[2]), c_abs), span, c_scale, sigma)


def fit_prior(
    curves: Sequence[tuple[Sequence[float], Sequence[float], LRSchedule | None]],
    target: Target | str,
) -> CurvePrior | None:
    """A prior from finished curves ``(costs, values, schedule or None)``; ``None`` if none fit.

    Example:
        >>> import numpy as np
        >>> c = np.linspace(100, 2000, 20)
        >>> prior = fit_prior([(c, 1.5 + 3.0 * c**-0.5, None)], "val_loss<=1.6")
        >>> prior.kind, round(prior.mean[2], 2)
        ('power', 0.5)
    """
    return CurvePrior.from_fits([fit_curve(c, v, target, s) for c, v, s in curves])
