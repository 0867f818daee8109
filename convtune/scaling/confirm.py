"""Seeds, confirmations and the baseline: the workflow that runs chosen configurations and reads them back."""

from __future__ import annotations

import hashlib
import math
import warnings
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from convtune.config.recipe import Recipe
from convtune.config.record import (
    BASELINE_ATTR,
    CONFIRMATIONS_ATTR,
    TrialRecord,
    enqueued,
    records,
    set_study_attr,
    study_attr,
)
from convtune.scaling.model import Prediction, ScalingModel
from convtune.scaling.points import _spec_of, params_key

if TYPE_CHECKING:
    import optuna
    from optuna.trial import FrozenTrial

    from convtune.config.spec import StudySpec


# ---- seeds, confirmations, baseline -------------------------------------------------------------


def baseline_trial(study: optuna.Study) -> Any | None:
    """The trial enqueued from ``--baseline`` (user attr ``baseline: true``), if it ran."""
    from optuna.trial import TrialState

    for trial in study.get_trials(deepcopy=False, states=(TrialState.COMPLETE,)):
        if TrialRecord.of(trial).baseline:
            return trial
    return None


def baseline_time(study: optuna.Study) -> float | None:
    """The baseline's measured time-to-target, else its forecast; None without a baseline."""
    trial = baseline_trial(study)
    if trial is None:
        return None
    return TrialRecord.of(trial).time


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

    plans = study_attr(study, CONFIRMATIONS_ATTR) or []
    by_id: dict[str, list[TrialRecord]] = {}
    for record in records(study, states=(TrialState.COMPLETE,)):
        if record.confirmation and record.confirm_id:
            by_id.setdefault(record.confirm_id, []).append(record)
    out = []
    for plan in plans:
        trials = by_id.get(plan["id"], [])
        times = [t.time_to_target for t in trials]
        reached = [float(t) for t in times if t]
        entry = dict(plan)
        entry.update(
            trials=[t.number for t in trials],
            seeds=[t.seed for t in trials],
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
    plans = [
        {
            "params": pred.params,
            "recipe": pred.recipe.to_dict(),
            "predicted": pred.time_to_target,
            "interval": list(pred.interval),
            "level": pred.level,
        }
        for pred in preds
    ]
    _enqueue_plans(study, spec, plans, seeds)
    return preds


def enqueue_measured_confirmations(
    study: optuna.Study, trials: Sequence[FrozenTrial], spec: StudySpec | None = None, seeds: int = 2
) -> list[dict[str, Any]]:
    """Plan and enqueue ``convtune study confirm --measured``: the configurations of ``trials``
    (the measured best and its runners-up, :func:`convtune.report.best.runners_up`) re-run on
    ``seeds`` fresh seeds each.

    One seed each cannot tell configurations within seed noise apart: a runner-up's lucky seed
    beats a better configuration's run often enough to cost a study its winner (the replays in
    ``docs/benchmarks.md``). Each plan's ``predicted`` is the search's own measurement (its
    ``interval`` that one point, ``source: "measured"``); the rest is as
    :func:`enqueue_confirmations`.
    """
    spec = spec or _spec_of(study)
    plans = [
        {
            "params": dict(t.params),
            "recipe": dict(TrialRecord.of(t).recipe or {}),
            "predicted": float(t.value),
            "interval": [float(t.value), float(t.value)],
            "level": None,
            "source": "measured",
        }
        for t in trials
        if t.value is not None
    ]
    _enqueue_plans(study, spec, plans, seeds)
    return plans


def _enqueue_plans(study: optuna.Study, spec: StudySpec, plans: list[dict[str, Any]], seeds: int) -> None:
    """Add ``plans`` (one dict per configuration) to the study's ``confirmations`` plan, each
    under its :func:`confirm_id`, and enqueue each ``seeds`` times, marked ``confirm``, on seeds
    after the spec's and after any this configuration's confirm runs already took (training is
    seeded: confirming again on the same seeds would retrace the same runs)."""
    stored = list(study_attr(study, CONFIRMATIONS_ATTR) or [])
    taken: dict[str, int] = {}
    for trial in study.get_trials(deepcopy=False):
        cid = TrialRecord.of(trial).confirm_id
        if cid is not None:
            taken[cid] = taken.get(cid, 0) + 1
    for plan in plans:
        cid = confirm_id(plan["params"])
        if not any(p["id"] == cid for p in stored):
            stored.append({"id": cid, **plan})
        first = spec.seed + 1 + taken.get(cid, 0)
        for s in range(seeds):
            study.enqueue_trial(plan["params"], user_attrs=enqueued(confirm_id=cid, seed=first + s))
    set_study_attr(study, CONFIRMATIONS_ATTR, stored)


def best_confirmed(
    study: optuna.Study, confirmed: list[dict[str, Any]] | None = None
) -> dict[str, Any] | None:
    """The confirmed configuration with the lowest mean time whose every seed reached the target.

    ``confirmed``: :func:`confirmations` of ``study``, where the caller has them already.
    """
    confirmed = confirmations(study) if confirmed is None else confirmed
    done = [c for c in confirmed if c["trials"] and c["n_reached"] == len(c["trials"])]
    return min(done, key=lambda c: c["measured_mean"]) if done else None


def confirm_id(params: Mapping[str, Any]) -> str:
    """A short stable id for a configuration being confirmed."""
    return hashlib.sha1(params_key(params).encode()).hexdigest()[:10]


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
    if not study_attr(study, BASELINE_ATTR):
        study.enqueue_trial(params, user_attrs=enqueued(baseline=True), skip_if_exists=True)
        set_study_attr(study, BASELINE_ATTR, mine)
    return differs
