"""How a trial ends: its status and the value the sampler is told (the outcome table of
:mod:`convtune.study.objective`), the penalties that keep unreached trials above every measured
time, the right-censored value of a stopped trial, and the compact curve a trial stores.
"""

from __future__ import annotations

import math
import traceback
from pathlib import Path
from typing import Any

import optuna

from convtune.config.record import TrialRecord, TrialStatus, step_scale, write_trial
from convtune.config.spec import StudySpec
from convtune.curves import Forecast, LRSchedule, forecast_time_to_target, time_to_target
from convtune.training.engine import RunResult

# Penalised outcomes (no target, no usable forecast) take values in
# [PENALTY_FLOOR, PENALTY_CEILING] × max_cost: above every measured time (≤ max_cost) and every
# forecast kept as a value (< PENALTY_FLOOR × max_cost), yet close enough to the cap that
# optuna-dashboard's History, EDF and importance plots keep the region that matters readable.
PENALTY_FLOOR = 10.0
PENALTY_CEILING = 20.0
_UNBOUNDED_BASE = 1e12  # no cap (max_cost: inf): there is no scale to stay near


def penalty(spec: StudySpec, final_gap: float) -> float:
    """A value worse than any reachable one, growing with how far the trial stayed from the target.

    Every reached trial (value ≤ max_cost) and every forecast kept as a value (below
    :func:`penalty_base`) ranks above it; penalised trials rank among themselves by their final
    gap, monotonically, from ``PENALTY_FLOOR × max_cost`` (gap 0) to ``PENALTY_CEILING × max_cost`` (no
    finite metric at all).

    Example:
        >>> spec = StudySpec.from_dict({"workload": "digits", "space": {"peak_lr": 0.01},
        ...     "target": "accuracy>=0.9", "cost": "samples", "max_cost": 1000})
        >>> penalty(spec, 0.0), penalty(spec, 1.0), penalty(spec, math.inf)
        (10000.0, 15000.0, 20000.0)
    """
    return penalty_for_cap(spec.max_cost, final_gap)


def penalty_base(spec: StudySpec) -> float:
    """The lowest penalty, and the ceiling below which a forecast is kept as a trial's value."""
    return penalty_base_for_cap(spec.max_cost)


def penalty_for_cap(max_cost: float, final_gap: float) -> float:
    """:func:`penalty` for callers that know the cost cap but hold no spec (the Trainer and
    Lightning integrations' ``trial_value``): one penalty rule for every convtune trial."""
    base = penalty_base_for_cap(max_cost)
    gap = max(0.0, final_gap) if math.isfinite(final_gap) else math.inf
    share = 1.0 if math.isinf(gap) else gap / (1.0 + gap)  # 0 → 0, ∞ → 1, monotone
    return base * (1.0 + (PENALTY_CEILING / PENALTY_FLOOR - 1.0) * share)


def penalty_base_for_cap(max_cost: float) -> float:
    """:func:`penalty_base` for a cost cap (``inf``: no cap)."""
    return PENALTY_FLOOR * max_cost if math.isfinite(max_cost) else _UNBOUNDED_BASE


def stop_reason(rule: str) -> str:
    """The stored ``reason`` of a trial convtune's pruner stopped by ``rule`` (a
    :class:`~convtune.pruners.PruneDecision` reason)."""
    return f"pruned: {rule}"


def describe_error(exc: BaseException) -> str:
    """First line of the error and where it was raised (file:line in function)."""
    if isinstance(getattr(exc, "description", None), str):  # a rank's own error, described there
        return exc.description  # type: ignore[attr-defined]
    frames = traceback.extract_tb(exc.__traceback__)
    where = f" at {Path(frames[-1].filename).name}:{frames[-1].lineno} in {frames[-1].name}" if frames else ""
    first = str(exc).splitlines()[0] if str(exc) else ""
    return f"{type(exc).__name__}: {first}{where}"


def record_outcome(
    trial: optuna.Trial,
    spec: StudySpec,
    result: RunResult,
    step_costs: list[float],
    values: list[float],
    pruned: bool,
) -> float:
    """Set the trial's attributes by the outcome table and return its objective value."""
    target = spec.target_spec
    scale = step_scale(spec.cost)
    measured = time_to_target(step_costs, values, target) / scale if step_costs else math.inf
    finite = [v for v in values if math.isfinite(v)]
    final_gap = target.gap(finite[-1]) if finite else math.inf
    attrs: dict[str, Any] = {
        "steps": result.steps,
        "samples": result.samples,
        "train_seconds": round(result.seconds, 3),
        "samples_per_second": round(result.samples_per_second, 2),
        "samples_per_second_per_rank": round(result.samples_per_second / spec.world_size, 2),
        "peak_memory_mb": round(result.peak_memory_bytes / 2**20, 1),
        "backend": result.backend,
        "rank_samples_per_second": result.rank_samples_per_second,
        "rank_peak_memory_mb": [round(m / 2**20, 1) for m in result.rank_peak_memory_bytes],
        "data_wait_share": None if result.data_wait_share is None else round(result.data_wait_share, 4),
        "comm_share": None if result.comm_share is None else round(result.comm_share, 4),
        "final_metric": finite[-1] if finite else None,
        "final_gap": final_gap if math.isfinite(final_gap) else None,
        "curve": compact_curve(result.history, target.metric),
    }
    infeasible = oom = 0.0
    if result.status == "oom":  # over the memory cap, or out of device memory
        status, value, oom = "oom", penalty(spec, final_gap), 1.0
        attrs["reason"] = result.reason
        attrs["extrapolated"] = False
    elif math.isfinite(measured):
        status, value = "reached", measured
        attrs["time_to_target"] = measured
        attrs["extrapolated"] = False
    elif result.status == "diverged":
        status, value, infeasible = "diverged", penalty(spec, final_gap), 1.0
        attrs["reason"] = result.reason
        attrs["extrapolated"] = False
    else:
        status = "stopped" if pruned else "budget"
        forecast, why = _forecast_unreached(trial, spec, step_costs, values)
        attrs.update(forecast.to_attrs())
        estimate = forecast.estimate / scale
        spent = step_costs[-1] / scale if step_costs else 0.0
        if pruned:
            # A stop is a pause, not a verdict: the sampler is told a right-censored value.
            value = censored_value(forecast, spent * scale, spec) / scale
            if spec.stop_value == "after_reached":
                value = max(value, slowest_reached(trial.study))
            attrs["censored_at"] = shown(spent)
        else:
            beyond = estimate > spent
            value = (
                estimate
                if math.isfinite(estimate) and beyond and estimate < penalty_base(spec)
                else penalty(spec, final_gap)
            )
        attrs["predicted_time_to_target"] = estimate if math.isfinite(estimate) else None
        attrs["extrapolated"] = True
        attrs["reason"] = why if pruned else result.reason or "finished its planned run"
    attrs["status"] = status
    if result.warnings:  # e.g. a rank crashed after the stop: the outcome stands
        attrs["warnings"] = result.warnings
    for key in ("time_to_target", "predicted_time_to_target"):
        if attrs.get(key) is not None:
            attrs[key] = shown(attrs[key])
    write_trial(trial, attrs)
    trial.set_constraint("diverged", infeasible)
    trial.set_constraint("oom", oom)
    return shown(float(value))


def slowest_reached(study: optuna.Study) -> float:
    """The largest objective value of the study's trials that reached the target (``-inf`` when
    none has): where ``stop_value: after_reached`` puts a stopped trial in the sampler's order."""
    reached = [
        float(t.value)
        for t in study.get_trials(deepcopy=False, states=(optuna.trial.TrialState.COMPLETE,))
        if t.value is not None and TrialRecord.of(t).status is TrialStatus.REACHED
    ]
    return max(reached, default=-math.inf)


def censored_value(forecast: Forecast, spent: float, spec: StudySpec) -> float:
    """The value a stopped trial tells the sampler: its time-to-target, right-censored at ``spent``.

    What is known of a stopped trial is that it had not reached the target by the cost it spent;
    its value is the forecast's median crossing *given* that (and given that it reaches at all;
    under ``stop_value: censored_median`` with "never" counted as an outcome, so the cap when not
    reaching is at least as likely), never below ``spent``. Where the forecast holds no crossing
    after ``spent`` the value is the cap (``max_cost``, or ``spent`` without one): "not before its
    planned end", never a penalty, which would mark a configuration no one ran to its end as
    hopeless. Costs in report steps.

    Example:
        >>> f = Forecast(3000.0, 1500.0, 8000.0, False, 0.8, 0.8,
        ...              cdf_costs=(1000.0, 2000.0, 4000.0, 8000.0), cdf_probs=(0.0, 0.2, 0.5, 0.8))
        >>> spec = StudySpec.from_dict({"workload": "digits", "space": {"peak_lr": 0.01},
        ...     "target": "accuracy>=0.9", "cost": "samples", "max_cost": 10000})
        >>> censored_value(f, 2000.0, spec), censored_value(f, 9000.0, spec)
        (4000.0, 10000.0)
    """
    cap = spec.max_cost * step_scale(spec.cost) if math.isfinite(spec.max_cost) else spent
    so_far = forecast.probability_before(spent)
    ever = forecast.probability_before(math.inf)
    median = math.inf
    # Under ``stop_value: censored_median`` "never" is one of the outcomes: the median is the
    # survival median, infinite (the cap) when the trial is as likely never to reach as to reach.
    total = 1.0 if spec.stop_value == "censored_median" else ever
    if math.isfinite(so_far) and math.isfinite(ever) and ever - so_far > 1e-6:
        level = so_far + 0.5 * (total - so_far)
        if level <= ever:
            median = forecast.quantile(level)
    if not math.isfinite(median):
        median = max(cap, spent)
    return float(max(spent, min(median, penalty_base(spec) * step_scale(spec.cost) * 0.999)))


# A trial's curve as stored: at most this many evaluations, so every reader on every node has it
# from the storage without a trial page (or a storage row) growing with the run's length.
CURVE_POINTS = 64


def shown(value: float, digits: int = 4) -> float:
    """``value`` to ``digits`` significant digits: what the dashboard and the CLI show.

    Used for values only people read (times, penalties): measured times carry timing noise far
    above 0.1%, and the map is monotone, so the sampler's ranking keeps its order.

    Example:
        >>> shown(6.098148604410597), shown(25641.02564), shown(math.inf)
        (6.098, 25640.0, inf)
    """
    if not math.isfinite(value) or value == 0:
        return value
    return float(f"{value:.{digits}g}")


def compact_curve(history: list[Any], metric: str, points: int = CURVE_POINTS) -> dict[str, list[Any]]:
    """The stored curve: at most ``points`` evaluations, evenly spread, first and last kept.

    Measured time-to-target and forecasts are computed from every evaluation before this
    thinning; the stored curve is for plots, scaling fits (its last point) and people.

    Example:
        >>> len(compact_curve([], "accuracy")["step"])
        0
    """
    n = len(history)
    if n > points:
        keep = sorted({round(i * (n - 1) / (points - 1)) for i in range(points)})
        history = [history[i] for i in keep]
    return {
        "step": [p.step for p in history],
        "samples": [p.samples for p in history],
        "seconds": [round(p.seconds, 4) for p in history],
        "metric": [p.metrics.get(metric) for p in history],
        "train_loss": [_maybe_shown(p.train_loss) for p in history],
        # Exact: an export is checked step for step against the LR the trial recorded.
        "lr": [p.lr for p in history],
    }


def _maybe_shown(value: Any) -> Any:
    return shown(float(value)) if isinstance(value, int | float) else value


def _forecast_unreached(
    trial: optuna.Trial, spec: StudySpec, step_costs: list[float], values: list[float]
) -> tuple[Forecast, str]:
    """The forecast to record on an unreached trial, and why the pruner stopped it (if it did).

    With convtune's pruner this is the very forecast it decided on (prior from finished trials).
    """
    from convtune.pruners import TimeToTargetPruner

    pruner = trial.study.pruner
    if isinstance(pruner, TimeToTargetPruner):
        frozen = trial.study._storage.get_trial(trial._trial_id)  # as Trial.should_prune does
        decision = pruner.decide(trial.study, frozen)
        forecast = decision.forecast or pruner.forecast_trial(trial.study, frozen)
        return forecast, stop_reason(decision.reason)
    schedule = LRSchedule.from_record(TrialRecord.of(trial).schedule)
    # The maps' forecast, as convtune's pruner reads it by default: the value the sampler is told
    # was measured with it in issue 17's replays (the reach trees are not, checks AB and AB2).
    forecast = forecast_time_to_target(
        step_costs, values, spec.target_spec, schedule=schedule, reach_trees=False
    )
    return forecast, f"pruned by {type(pruner).__name__}"
