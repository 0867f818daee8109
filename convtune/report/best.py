"""The best trials of a study and the document behind ``convtune study best --json``."""

from __future__ import annotations

import math
import shlex
from typing import Any

import optuna
from optuna.trial import FrozenTrial, TrialState

from convtune import pruners
from convtune.config.record import UNREACHED, TrialRecord, TrialStatus, cost_unit
from convtune.config.spec import StudySpec
from convtune.report.forecasts import audit_forecasts
from convtune.scaling import params_key, scaling_report
from convtune.study.outcome import stop_reason

# Each measured time-to-target is one seed's, and one configuration's seeds lie about 10% from
# its median (the curve corpus: ``benchmarks/corpus_facts.py``, "Seed spread"), so two
# configurations within 20% of each other can swap places on one seed each: the runner-up's
# lucky seed then beats the better configuration (replays: docs/benchmarks.md).
RUNNER_UP_MARGIN = 0.2


def measured_best(study: optuna.Study) -> FrozenTrial | None:
    """The fastest trial that reached the target (extrapolated values never count here)."""
    reached = [
        t
        for t in study.get_trials(deepcopy=False, states=(TrialState.COMPLETE,))
        if TrialRecord.of(t).status is TrialStatus.REACHED
    ]
    return min(reached, key=lambda t: t.value) if reached else None


def runners_up(study: optuna.Study, best: FrozenTrial, margin: float = RUNNER_UP_MARGIN) -> list[FrozenTrial]:
    """The fastest reached trial of each *other* configuration measured within ``margin`` of
    ``best``'s time, fastest first: configurations one seed each cannot tell apart from the
    best, which ``convtune study confirm`` re-runs on fresh seeds.
    """
    own = params_key(best.params)
    fastest: dict[str, FrozenTrial] = {}
    for t in study.get_trials(deepcopy=False, states=(TrialState.COMPLETE,)):
        if TrialRecord.of(t).status is not TrialStatus.REACHED or t.value is None:
            continue
        key = params_key(t.params)
        if key != own and t.value <= best.value * (1.0 + margin):
            if key not in fastest or t.value < fastest[key].value:
                fastest[key] = t
    return sorted(fastest.values(), key=lambda t: t.value)


SLOWER_THAN_MEASURED_BEST = stop_reason(pruners.SLOWER_THAN_MEASURED_BEST)
"""The ``reason`` of a trial stopped because it had spent the measured best's time (and its
margin) without reaching the target: a stop judged against one seed's time."""


def confirm_candidates(
    study: optuna.Study,
    confirmed: list[dict[str, Any]],
    margin: float = RUNNER_UP_MARGIN,
    *,
    stopped: int = 0,
) -> list[FrozenTrial]:
    """What the next confirm round runs: the fastest reached search trial of each configuration
    not confirmed yet whose one-seed time lies within ``margin`` of the confirmed fastest's mean,
    fastest first. When no configuration is confirmed on every seed (none yet, or those
    confirmed missed the target on a seed), the window is drawn around the fastest configuration
    not confirmed yet instead: before any round that is the measured best and its runners-up.

    The measured best is the fastest of many one-seed draws, so its time is biased low: a
    configuration whose seed made it the pick confirms slower, or misses the target on another
    seed, and configurations the search measured within ``margin`` of that *confirmed* outcome
    were never compared with it (the runner-up window was drawn around the lucky seed).
    ``convtune study confirm --measured --rounds`` confirms them in the next round.

    With ``stopped`` > 0 (an option under test, off: docs/benchmarks.md, "bearing_range_tracking:
    a lucky incumbent"), once a configuration is confirmed the round also takes up to that many
    configurations whose trials were stopped as slower than the measured best
    (:data:`SLOWER_THAN_MEASURED_BEST`) before the window's far edge: the stop was judged against
    the lucky time the confirmation withdrew, so they never got a measured time to compare. They
    come after the measured ones, those that stood closest to the target when stopped first.
    """
    from convtune.scaling import best_confirmed

    done = {params_key(c["params"]) for c in confirmed}
    searched = [
        (t, record)
        for t in study.get_trials(deepcopy=False, states=(TrialState.COMPLETE,))
        if not (record := TrialRecord.of(t)).confirmation
    ]
    fastest: dict[str, FrozenTrial] = {}
    for t, record in searched:
        if record.status is not TrialStatus.REACHED or t.value is None:
            continue
        key = params_key(t.params)
        if key not in done and (key not in fastest or t.value < fastest[key].value):
            fastest[key] = t
    leader = best_confirmed(study, confirmed)
    if not fastest and leader is None:
        return []
    anchor = float(leader["measured_mean"]) if leader is not None else min(t.value for t in fastest.values())
    window = sorted(
        (t for t in fastest.values() if t.value <= anchor * (1.0 + margin)), key=lambda t: t.value
    )
    if stopped <= 0 or leader is None:
        return window
    # One trial per configuration never measured: the one that came closest to the target.
    closest: dict[str, tuple[float, FrozenTrial]] = {}
    for t, record in searched:
        if record.reason != SLOWER_THAN_MEASURED_BEST:
            continue
        key, spent = params_key(t.params), float(record.attrs.get("censored_at") or 0.0)
        if key in done or key in fastest or spent >= anchor * (1.0 + margin):
            continue
        gap = record.attrs.get("final_gap")
        gap = float(gap) if gap is not None else math.inf
        if key not in closest or gap < closest[key][0]:
            closest[key] = (gap, t)
    return window + [t for _, t in sorted(closest.values(), key=lambda pair: pair[0])[:stopped]]


def confirm_command(study_name: str, n_runners_up: int) -> str:
    """The command that re-runs the measured best and its runners-up on fresh seeds."""
    return f"convtune study confirm {shlex.quote(study_name)} --measured --top {min(n_runners_up + 1, 5)} --seeds 2"


def best_forecast(study: optuna.Study) -> FrozenTrial | None:
    """The unreached trial with the best forecast, for studies where nothing reached yet."""
    candidates = [
        t
        for t in study.get_trials(deepcopy=False, states=(TrialState.COMPLETE,))
        if (record := TrialRecord.of(t)).status in UNREACHED and record.predicted_time_to_target
    ]
    return min(candidates, key=lambda t: t.value) if candidates else None


def trial_summary(trial: FrozenTrial) -> dict[str, Any]:
    """One trial as ``best --json`` and ``show`` print it."""
    return TrialRecord.of(trial).summary()


def best_report(study: optuna.Study, spec: StudySpec) -> dict[str, Any]:
    """The document behind ``convtune study best --json`` (schema in the README)."""
    trials = study.get_trials(deepcopy=False)
    best = measured_best(study)
    forecast = best_forecast(study)
    statuses = [TrialRecord.of(t).status for t in trials]
    report: dict[str, Any] = {
        "study": study.study_name,
        "target": spec.target,
        "cost": spec.cost,
        "cost_unit": cost_unit(spec.cost),
        "n_trials": len(trials),
        "n_reached": statuses.count(TrialStatus.REACHED),
        "measured": trial_summary(best) if best else None,
        "runners_up": [
            {"trial": t.number, "time_to_target": t.value} for t in (runners_up(study, best) if best else [])
        ],
        "best_forecast": trial_summary(forecast) if forecast else None,
    }
    audit = audit_forecasts(study, spec)
    report["forecasts"] = {"checked": audit.checked, "far_tail": audit.far_tail, "verdict": audit.verdict()}
    report.update(scaling_report(study, spec, report["measured"]))
    return report
