"""What the trials recorded, as points the scaling fits read."""

from __future__ import annotations

import json
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np
from scipy import stats

from convtune.config.record import SPEC_ATTR, UNREACHED, TrialStatus, records, study_attr

if TYPE_CHECKING:
    import optuna

    from convtune.config.spec import StudySpec


LEVEL = 0.9
# Log-scale noise of a measured time-to-target when nothing better is known (seed-to-seed spread
# of short runs is typically 5–15%); forecasts get their own, wider, interval.
_MEASURED_SIGMA = 0.1
_MIN_FORECAST_SIGMA = 0.2
# A forecast from fewer evaluations is mostly the curve prior (other trials' shape), not this
# configuration: the fits leave it out. With the halving pruner many trials stop after one or
# two evaluations, and fitting their forecasts made the recommendation worse than the best
# measured trial on the recorded-grid replays (figures in docs/benchmarks.md).
_MIN_FORECAST_POINTS = 3


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
    ``_MIN_FORECAST_POINTS`` evaluations), or unknown/diverged (time = inf).

    A stopped trial that a finished repeat trained on from (``resumed_from``) is left out: the
    repeat's outcome is the same run, carried further, and one configuration must not count twice.
    """
    from optuna.trial import TrialState

    finished = records(study, states=(TrialState.COMPLETE,))
    carried_on = {record.attrs.get("resumed_from") for record in finished} - {None}
    points = []
    for record in finished:
        if "recipe" not in record.attrs or record.number in carried_on:
            continue
        status = record.status
        time, sigma, measured = math.inf, math.inf, False
        if status is TrialStatus.REACHED and record.time_to_target:
            time, sigma, measured = float(record.time_to_target), _MEASURED_SIGMA, True
        elif (
            status in UNREACHED
            and record.predicted_time_to_target
            and (record.forecast_n_points or _MIN_FORECAST_POINTS) >= _MIN_FORECAST_POINTS
        ):
            time = float(record.predicted_time_to_target)
            low, high = record.forecast_low, record.forecast_high
            spread = math.log(high / low) / (2 * _z(record.forecast_level or LEVEL)) if low and high else 1.0
            sigma = max(_MIN_FORECAST_SIGMA, spread)
        points.append(
            TrialPoint(
                number=record.number,
                params=dict(record.params),
                recipe=dict(record.recipe or {}),
                time=time,
                sigma=sigma,
                measured=measured,
                step_cost=step_cost_of(record.attrs, cost),
                diverged=status is TrialStatus.DIVERGED,
                confirm=record.confirmation,
                baseline=record.baseline,
            )
        )
    return points


def params_key(params: Mapping[str, Any]) -> str:
    """A stable identity for a set of params (floats rounded to 6 significant digits)."""

    def norm(v: Any) -> Any:
        return float(f"{v:.6g}") if isinstance(v, float) else v

    return json.dumps({k: norm(v) for k, v in sorted(params.items())}, sort_keys=True)


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


def _spec_of(study: optuna.Study) -> StudySpec:
    from convtune.config.spec import StudySpec

    raw = study_attr(study, SPEC_ATTR)
    if raw is None:
        raise ValueError(f"study {study.study_name!r} was not created by convtune (no spec)")
    return StudySpec.from_dict(raw, where=f"study {study.study_name}")
