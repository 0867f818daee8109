"""The recommender: the configuration the scaling model predicts reaches the target fastest."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from convtune.config.recipe import Recipe
from convtune.config.record import TrialRecord
from convtune.scaling.confirm import baseline_time, baseline_trial, best_confirmed, speedup
from convtune.scaling.model import Prediction, ScalingModel
from convtune.scaling.points import LEVEL, _spec_of, params_key

if TYPE_CHECKING:
    import optuna

    from convtune.config.spec import StudySpec


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
        >>> rec = convtune.recommend(study)                              # doctest: +SKIP
        >>> print(rec.recipe.peak_lr, rec.time_to_target, rec.interval)  # doctest: +SKIP
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
    from convtune.config.record import cost_unit

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
        else {
            "trial": base.number,
            "status": TrialRecord.of(base).stored_status,
            "time_to_target": base_time,
        },
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
