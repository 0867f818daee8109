"""Promotion of paused trials: the second half of asynchronous successive halving.

A pruner that stops at equal cost (``pruner: median``, ``pruner: hyperband``) judges a trial
against the trials that happened to report before it: early in a study, against few and
perhaps lucky ones, so a configuration that would have won can be stopped for good. In a study
with ``checkpoint_dir`` a stop is a pause (the trial keeps its checkpoint, and a repeat of its
configuration trains on from it), so the decision can be revisited. Before each new trial,
:func:`promotion_candidate` judges every paused trial again, against *every* trial that has
trained at least as far, and names one whose distance to the target at its stop ranks in the
best ``1 / eta`` of them; the study then resumes that configuration instead of sampling a new
one. ASHA (Li et al., 2020) promotes the same way, from the highest rung down.

Example:

    >>> import optuna
    >>> from convtune.config.target import Target
    >>> study = optuna.create_study()
    >>> promotion_candidate(study, Target.parse("val_loss<=1.0")) is None   # nothing paused
    True
"""

from __future__ import annotations

import bisect
import math

import optuna
from optuna.trial import FrozenTrial, TrialState

from convtune.config.record import TrialRecord, TrialStatus
from convtune.config.target import Target
from convtune.study.objective import PROMOTED_FROM_ATTR, resumed_numbers


def promotion_candidate(study: optuna.Study, target: Target, eta: float = 3.0) -> FrozenTrial | None:
    """The paused trial to resume next, or None.

    A trial is paused when the pruner stopped it (status ``stopped``) and no later trial has
    resumed it or is queued to. Its *peers* are the trials whose curve reaches at least its stop
    cost (itself included; a stopped trial that a later one resumed counts once, as the later
    one). It is promotable when at least ``eta`` peers exist and fewer than ``len(peers) / eta``
    of them were strictly closer to the target at that cost (each peer read at its last report
    at or before it). Of the promotable trials the one stopped latest goes first (ASHA's highest
    rung), then the best-ranked.
    """
    trials = study.get_trials(deepcopy=False)
    records = {t.number: TrialRecord.of(t) for t in trials}
    # Stopped trials already resumed, or queued to be.
    taken = resumed_numbers(trials) | {
        int(r.attrs[PROMOTED_FROM_ATTR])
        for r in records.values()
        if r.attrs.get(PROMOTED_FROM_ATTR) is not None
    }
    curves: list[tuple[list[int], list[float]]] = []
    paused: list[tuple[FrozenTrial, int, float]] = []
    for t in trials:
        if t.state == TrialState.WAITING or t.number in taken or not t.intermediate_values:
            continue
        steps = sorted(t.intermediate_values)
        gaps = [target.gap(float(t.intermediate_values[s])) for s in steps]
        curves.append((steps, gaps))
        if t.state == TrialState.COMPLETE and records[t.number].status is TrialStatus.STOPPED:
            paused.append((t, steps[-1], gaps[-1]))
    best: tuple[tuple[float, float, int], FrozenTrial] | None = None
    for trial, stop, gap in paused:
        if not math.isfinite(gap):
            continue
        peers = [g[bisect.bisect_right(s, stop) - 1] for s, g in curves if s[-1] >= stop]
        if len(peers) < eta:
            continue
        ahead = sum(1 for g in peers if g < gap)
        if ahead < len(peers) / eta:
            key = (-float(stop), ahead / len(peers), trial.number)
            if best is None or key < best[0]:
                best = (key, trial)
    return None if best is None else best[1]


def promote(study: optuna.Study, target: Target, eta: float = 3.0) -> int | None:
    """Queue the :func:`promotion_candidate`'s configuration (its repeat resumes it from its
    checkpoint, in :class:`convtune.study.objective.Objective`); the paused trial's number."""
    trial = promotion_candidate(study, target, eta)
    if trial is None:
        return None
    study.enqueue_trial(trial.params, user_attrs={PROMOTED_FROM_ATTR: trial.number}, skip_if_exists=False)
    return trial.number


__all__ = ["PROMOTED_FROM_ATTR", "promote", "promotion_candidate"]
