from __future__ import annotations

import math
import warnings
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np
from optuna.pruners import BasePruner
from optuna.trial import FrozenTrial, TrialState
from scipy.special import ndtr, ndtri

from convtune.config.record import SCHEDULE_ATTR, TrialRecord, TrialStatus, write_stored_trial
from convtune.config.target import Target
from convtune.curves import (
    CurveFit,
    CurvePrior,
    Forecast,
    LRSchedule,
    ReferenceRun,
    fit_curve,
    forecast_time_to_target,
    noise_scale,
    shift_probability,
    study_offset,
    time_to_target,
)

if TYPE_CHECKING:
    import optuna

LR_SCHEDULE_ATTR = SCHEDULE_ATTR
"""The trial user attr holding its planned LR schedule (kept on :mod:`convtune.config.record`)."""
STOP_PROBABILITY_ATTR = "stop_probability"
"""User attr set on every trial the pruner stops: the probability the stop was decided on."""
STOP_THRESHOLD_ATTR = "stop_threshold"
"""User attr set beside it: the per-rung threshold that probability fell below."""
DISTRUSTED_ATTR = "forecast_distrusted"
"""User attr set on a trial that ``self_check`` kept from a forecast stop: the probability."""
SLOWER_THAN_MEASURED_BEST = "slower-than-measured-best"
"""The :class:`PruneDecision` reason of the stop that needs no forecast: the trial has spent the
measured best's time (and ``exact_margin``) without reaching the target."""
DEFAULT_EPSILON = 0.01
"""The whole-life probability budget of a trial: the safest setting, which leave-one-workload-out
replays over the 11 corpus workloads fall back to in 9 folds, where no setting kept every other
workload's hits and near-best share (docs/benchmarks.md)."""
DEFAULT_EXACT_MARGIN = 0.2
"""How far past the measured best's time-to-target the stop that needs no forecast waits: that
time is one seed's, and configurations measured within 20% of it are the runners-up
``convtune study confirm --measured`` re-runs. Adopted by a check pre-registered in
docs/benchmarks.md (replays with the confirm step on seeds 20-39 of the 11 corpus workloads)."""
DEFAULT_EPSILON_BEHIND = 0.1
"""The second whole-life budget, for trials behind the finished trials' median at equal cost.
Adopted by a check pre-registered in docs/benchmarks.md (replays with the confirm step on
seeds 100-119 of the 11 corpus workloads): as many workloads within one seed of no pruning's
hits as without it, 144 hits after confirm against 131, none of 271 near-best configurations
stopped by a forecast, and 0.72-0.96x the median cost-to-10% where both hit in most seeds."""
DEFAULT_REQUIRE_BEHIND = True
"""Once a trial has reached the target, a forecast stop also needs the finished trials' median at
equal cost against the trial. Adopted by a check pre-registered in docs/benchmarks.md (session
24) and judged on a fifth batch of workloads recorded after it: near-best configurations stopped
by a forecast 3 of 274 against the earlier default's 160 of 290, hits after confirm at least the
earlier default's less one seed on each, and on the 14 seen workloads the same hits (one more on
one of them) at 1.01x the cost. Without it the one-forecast stop against the incumbent stopped 209
of 397 near-best configurations on the 15 workloads recorded after its settings were chosen."""
DEFAULT_COMEBACK_VETO = True
"""The equal-cost stop holds back for a trial no farther from the target than a finished trial that
still reached it in time once stood at the same cost. Adopted by a check pre-registered in
docs/benchmarks.md (session 31, "A finished trial that came back"): on the 27 workloads of batches
1-7 no workload lost more than one hit, stopped more near-best configurations or cost over 1.1x,
and on batch 8, recorded after the check was written, near-best configurations stopped by a
forecast fell from 3 to 2 with hits and cost unchanged."""
DEFAULT_BEHIND_NOISE = 0.0
"""How many evaluation-noise units a trial must stand behind the finished trials' median at equal
cost before the equal-cost rule counts it as behind (0: any distance counts). Not adopted by the
check pre-registered in docs/benchmarks.md (session 32, "Behind by more than the noise"): at 2 it
stopped 1 near-best configuration by a forecast where the default stopped 8 on batches 1-8, but the
trials it kept spent the budget and hits after confirm fell (400 -> 389; 27 of 31 seen workloads
and 3 of 4 of batch 9 passed its bars)."""
# Whether forecasts read the study's finished trials on a plateau prefix (see the option).
DEFAULT_PLATEAU_REFERENCES = False
DEFAULT_PAUSE_BEHIND = False
"""Whether a trial behind the finished trials' median at equal cost is paused at any report once
a trial has reached the target, with no forecast asked (see the option). Not adopted by the check
pre-registered in docs/benchmarks.md (session 35, "Pause the trials behind"): pooled over 39 seen
workloads it found the winner more often (253 -> 265 of 390 studies) and more cheaply, but on a
held-out workload it paused near-best configurations for good and lost three of 20 (the bar: two).
Nor by check Q (session 36, "Pause behind, then promote"), with ``behind_noise`` 1 and promotions:
175 against 152 hits on 47 seen workloads, but 7 against 11 of 20 on a held-out one."""
DEFAULT_PAUSE_PHASE = False
"""Whether ``pause_behind`` compares a trial only with finished trials no further into their LR
decay (see the option). Off: explored on seen workloads after check Q, it found no more winners
(docs/benchmarks.md, "Check Q's result"); no check adopted it."""
DEFAULT_PAUSE_RANK = 0.0
"""The rank agreement ``pause_behind`` asks of the study's own finished runs before it pauses (see
the option); 0: none asked. Explored on seen workloads after check Q (docs/benchmarks.md,
"Evidence for a pause"): with Q's settings at 0.5 it found 19 winners of 30 where the default found
21, so no check was written for it."""
RANK_QUORUM = 5
"""Finished trials, run to their planned end past the cost in question, that ``pause_rank`` needs
before it measures their rank agreement there (fewer: no pause). Fixed, not tuned."""
DEFAULT_PAUSE_WINNERS = False
"""Whether ``pause_behind`` waits for the study's own winners to vouch for its rule (see the
option). Off: explored beside ``pause_rank``, 18 winners of 30 where the default found 21."""
DEFAULT_BEHIND_REPORTS = 1
"""At how many last reports in a row a trial must stand behind the finished trials' median at
equal cost before the equal-cost rule counts it as behind (see the option). Not adopted by the
check pre-registered in docs/benchmarks.md (session 39, "Check S"): at 2 it stopped 1 near-best
configuration by a forecast where the default stopped 6 on 55 seen workloads (gan_ring 11 of 27 ->
0 at 20 seeds), with hits unchanged pooled and on a held-out fifteenth batch, but the trials it kept
cost more than 1.1x on 3 of the 55 (the bar allowed 2)."""
DEFAULT_JUMP_VETO = True
"""Whether the equal-cost rule holds back at a report where the trial moved away from the target,
unless it stood behind the median at its previous report too (see the option). Adopted by a check
pre-registered in docs/benchmarks.md (session 39, "Check U") and judged on a sixteenth batch
recorded before it: on 57 of 59 seen workloads it passed (the two known to fail, sparse_parity and
poisson_counts, as under ``behind_reports = 2``), 194 hits against 192, near-best configurations
stopped by a forecast 6 -> 1 (gan_ring 11 of 27 -> 0 at 20 seeds); batch 16 unchanged (4 of 4)."""
DEFAULT_STUDY_SHIFT = False
"""Whether the probability a forecast stop reads is moved by the study's own bias (see the
option). Not adopted by the check pre-registered in docs/benchmarks.md (session 45, "Check N"):
on vit_digits, whose runs sit at chance and then fall, it stopped 3 of 106 near-best
configurations where the default stopped 16, but where the default stopped none it kept trials
that did not win and cost 1.14-1.21x on 4 of 16 workloads, two of four on a held-out batch."""
DEFAULT_STUDY_SHIFT_Z = 0.0
"""How many posterior sds from 0 ``study_shift``'s offset must stand before it is applied (see the
option). 0: always applied, as in check N. At 2, the check pre-registered in docs/benchmarks.md
(session 46, "Check O") passed on 16 of 16 seen workloads (N: 12) and kept vit_digits' near-best
configurations, but on a held-out twenty-seventh batch found 18 winners against 20 on one."""
DEFAULT_REACH_TREES = False
"""Whether the forecasts a stop reads take their chance of reaching within the run from the
calibration's reach trees (see the option). Off: the stop rules were measured on the maps'
probability (issue 17's replays). Not adopted by the check pre-registered in docs/benchmarks.md
(session 48, "Check AB2"): on two held-out batches it found 142 winners against 140 and stopped 4
near-best configurations by a forecast against 10, but two fewer winners on ground_state_vmc."""
WINNERS_QUORUM = 2
"""Finished trials that reached the target by the bar that ``pause_winners`` needs before it
pauses (fewer: no pause). Fixed, not tuned."""
PHASE_TOLERANCE = 0.1
"""How much further into its LR decay (1 - LR / peak) a finished trial may be than the trial judged
and still count under ``pause_phase``: about the LR a compressed stored schedule can be off by
where it bends. Fixed, not tuned."""
DEFAULT_PLATEAU_WAIT = 0.0
"""What share of the time to beat (the incumbent's × (1 + margin)) a trial still on its first
plateau must have spent before the equal-cost rule may stop it (see the option). 0: no wait (the
rule as measured since session 31). Not adopted by the check pre-registered in docs/benchmarks.md
("Check AJ"): on seen data 0.5 kept speaker verification's near-best runs, but on two held-out
batches it found 107 winners against 108 (bar: at least as many) at 1.02x the cost."""
DEFAULT_PLATEAU_STRETCH = 0.0
"""How many times longer than a finished winner's first plateau a trial's may last before the
equal-cost rule may stop it on it (see the option). 0: off; tried beside check AJ's candidate on
seen workloads (docs/benchmarks.md, session 57), and no cheaper than it."""
PLATEAU_CLOSED = 0.1
"""A trial that has closed less than this share of its first report's distance to the target is
still on its first plateau (``plateau_wait``). Fixed, not tuned."""
DEFAULT_MARGIN = 0.1
"""Relative slack on the incumbent's time-to-target: a trial is judged on reaching before
``incumbent * (1 + margin)``. The incumbent's time is one seed's, and one configuration's seeds
differ by about this much (the median over the corpus workloads of their median deviation from
the configuration's median: 10%; ``benchmarks/corpus_facts.py``). Without it a lucky incumbent got a third of the trials of
near-best configurations stopped on a held-out workload at epsilon = 0.03; with it none
(docs/benchmarks.md)."""

_CacheKey = tuple[str, int, str]


@dataclass(frozen=True)
class PruneDecision:
    """Why :class:`TimeToTargetPruner` did (not) stop a trial at its latest report.

    ``reason`` is one of ``no-reports``, ``diverged``, ``max-cost``,
    ``slower-than-measured-best``, ``warm-up``, ``between-rungs``, ``reached``, ``no-bar``,
    ``cannot-beat-incumbent``, ``cannot-reach-by-max-cost``, ``behind-and-unlikely`` (with
    ``epsilon_behind``), ``behind-median`` (with ``pause_behind``) and ``may-beat-incumbent``.
    ``incumbent`` is the time-to-target to beat (``inf`` when there is none yet);
    ``probability`` the probability that the trial reaches the target before it (before
    ``max_cost`` without one; ``nan`` where none was computed) and ``threshold`` the
    per-rung bound it was compared with (under ``require_behind`` with an incumbent, the
    ``epsilon_behind`` bound, since no other forecast bound applies then).
    """

    prune: bool
    reason: str
    forecast: Forecast | None
    incumbent: float
    probability: float = math.nan
    threshold: float = math.nan


@dataclass(frozen=True)
class _Finished:
    """What one finished trial says; finished trials never change, so this is cached."""

    number: int
    time_to_target: float
    fit: CurveFit | None
    costs: np.ndarray
    gaps: np.ndarray  # distance to the target at each report (inf where non-finite)
    noise: float  # its evaluation noise (robust second differences of the finite gaps)
    reference: ReferenceRun | None  # its curve as a plateau's forecast reads it (plateau_references)
    schedule: LRSchedule | None = None  # its LR schedule as stored (pause_phase reads it)
    stopped: bool = False  # stopped or paused by the pruner: its curve ends before its plan did
    horizon: float = math.nan  # its planned end (its schedule's; max_cost without one)

    @property
    def final_gap(self) -> float:
        """The closest the trial came to the target."""
        return float(self.gaps.min()) if self.gaps.size else math.inf


class TimeToTargetPruner(BasePruner):
    """Pruner that stops a trial only when it has almost no chance to reach the target first.

    Trials report the metric with the cost spent so far as the step
    (``trial.report(val_loss, step=samples_seen)``). A trial is judged at *rungs*, costs
    geometric in ``rung_ratio`` from its ``n_warmup_reports``-th report (at 2 evaluations of 20:
    a tenth, a fifth, two fifths and four fifths of the run), and only at the first report at or
    past each. There its curve is extrapolated to the target by
    :func:`convtune.curves.forecast_time_to_target`, and the trial is stopped when the calibrated
    probability that it reaches the target before the incumbent's time-to-target (the best
    measured among finished trials) plus ``margin`` (10%: the incumbent's time is one seed's),
    or before any trial reached it, before ``max_cost``, is below
    ``epsilon / n``, ``n`` being the number of rungs up to the nearer of its planned end and the
    incumbent's time. By a union bound over its rungs, ``epsilon`` bounds the chance that a trial
    which would have won is ever stopped by a forecast, however many reports it makes; with few
    rungs (a handful, geometric in cost, not one per report) that per-rung bound is one a
    calibrated forecast can fall below, so stops do fire. The probability is the forecast's
    calibrated ``probability_before(cost)``; a forecast without it gets one read off its
    interval and its probability of reaching within the run (:func:`reach_probability`).

    By default (``require_behind``) a forecast alone stops a trial only while no trial has
    reached the target; once one has, the stop also needs the trial to be behind the finished
    trials' median at equal cost (``epsilon_behind``'s rule). A forecast's low tail is
    calibrated on other workloads, and on workloads unlike them it called would-be winners
    hopeless; the equal-cost evidence is the study's own.

    Stops that need no forecast come at any report: a trial that reports a non-finite value or
    whose forecast says it diverged, one at ``max_cost``, and one that has spent the best
    measured time-to-target without reaching the target (it can no longer be the fastest). A
    loss that blew up (improved, then ended twice above its start) is no such stop: its forecast
    carries the measured chance that such curves recover, and the rule above judges it.
    Without an incumbent, a trial whose distance to the target fell at each of its last
    ``steady_reports`` reports, on a line that reaches the target by ``max_cost``, is not stopped
    for ``max_cost``: a forecast from a short prefix cannot rule out that it keeps falling.
    Without an incumbent and without a cap (no ``max_cost``, no planned run) there is nothing to
    be too slow for, and no forecast stops it.

    Every trial it stops gets the user attrs ``stop_probability`` (the probability the stop was
    decided on; 0 for the stops that need no forecast) and ``stop_threshold`` (the bound it fell
    below).

    Unlike rung-based pruners on equal-cost values it compares trials by *when they reach the
    target*, not by their values at equal steps, so a slow starter with a fast finish survives.

    If the trial has a user attr ``"lr_schedule"`` (:meth:`convtune.curves.LRSchedule.to_dict`,
    its LR over the whole planned run, as convtune studies set it), the forecast is
    schedule-aware and the run's end is known; curves of finished trials (two or more) then also
    give the curve model a prior.

    The pruner keeps no state that changes its decisions: what it learns from a finished
    trial (its time-to-target, its curve fit) is cached per trial, since a finished trial
    never changes, and the same storage contents give the same decision in every worker.

    Example:

        .. code::

            import optuna
            from convtune.pruners import TimeToTargetPruner


            def objective(trial):
                lr = trial.suggest_float("lr", 1e-3, 1e-1, log=True)
                for samples in range(1000, 20001, 1000):
                    val_loss = 1.5 + 4.0 * (lr * samples) ** -0.5
                    trial.report(val_loss, step=samples)
                    if val_loss <= 1.9:
                        return samples
                    if trial.should_prune():
                        raise optuna.TrialPruned()
                return float("inf")


            study = optuna.create_study(pruner=TimeToTargetPruner("val_loss<=1.9", max_cost=20000))
            study.optimize(objective, n_trials=20)

    Args:
        target:
            The quality target, e.g. ``"val_loss<=1.9"`` or ``"accuracy>=0.95"``; the trial
            reports this metric.
        epsilon:
            The probability budget of a trial's whole life: stop at a rung only below
            ``epsilon / n`` (``n`` rungs).
        n_warmup_reports:
            The first rung is this report (non-finite values, ``max_cost`` and the measured
            best's time-to-target stop before it).
        rung_ratio:
            Each rung's cost is this multiple of the previous one.
        margin:
            Relative slack on the incumbent: the probability is of reaching before
            ``incumbent * (1 + margin)`` (:data:`DEFAULT_MARGIN`: the spread between seeds).
        level:
            Probability of the forecast interval (used where the forecast has no
            ``probability_before``).
        max_cost:
            Per-trial cost cap: a trial is stopped once it reports a step at or past it, and
            before there is an incumbent, the probability is of reaching by it. ``None`` for no
            cap (the trial's planned run, from its ``lr_schedule``, stands in where known).
        prior_trials:
            At most this many finished trials (the fastest, then the closest to the target)
            inform the curve prior (none until two have curves to fit); 0 switches the prior
            off.
        steady_reports:
            Without an incumbent, a trial whose distance to the target fell at each of this
            many last reports, on a line reaching the target by ``max_cost``, is not stopped
            for ``max_cost``.
        epsilon_behind:
            A second whole-life budget, for trials *behind*: farther from the target at their
            latest report than the median of at least :data:`BEHIND_QUORUM` finished trials at
            the same cost (MedianPruner's evidence). Such a trial is also stopped at a rung
            below ``epsilon_behind / n`` (reason ``behind-and-unlikely``); 0 switches this
            off. The forecast vetoes the equal-cost verdict wherever it still gives the trial a
            fair chance. :data:`DEFAULT_EPSILON_BEHIND` (0.1) stopped no near-best
            configuration by a forecast in the corpus replays and made studies cheaper.
        epsilon_before_incumbent:
            The whole-life budget of the decisions taken before any trial has reached the
            target (reason ``cannot-reach-by-max-cost``), in place of ``epsilon``; ``None``
            (the default) uses ``epsilon``. Such a decision asks whether the trial can reach the
            target at all within ``max_cost``, and a near-best configuration reaches it far
            inside that, so its risk to the winner is smaller than a decision against the
            incumbent's time; trials that never reach and run to ``max_cost`` are where most of
            a pruned study's cost goes before its first success (docs/benchmarks.md).
        exact_margin:
            The stop that needs no forecast (``slower-than-measured-best``) waits until the
            trial has spent ``1 + exact_margin`` times the measured best's time-to-target. That
            time is one seed's and can be lucky: at 0 a better configuration is stopped as soon
            as it is slower than a runner-up's lucky run, and never measured, so ``convtune
            study confirm --measured`` (runners-up within 20%) cannot rescue it.
            :data:`DEFAULT_EXACT_MARGIN` (0.2) lets every configuration that would be such a
            runner-up finish.
        reach_max_lowering:
            How many times below the calibration maps' probability the reach model may push the
            forecast a stop reads (``None``: the forecaster's default,
            ``convtune.curves._reach.MAX_LOWERING``; ``inf``: no bound). On a workload unlike
            those it was fitted on, the unbounded model called a near-best run hopeless
            (docs/benchmarks.md, "Four more workloads").
        require_behind:
            Once a trial has reached the target, stop no trial on its forecast alone: the
            ``epsilon`` rule against the incumbent is skipped, and only ``behind-and-unlikely``
            (the forecast *and* the finished trials' median at equal cost against it) stops a
            trial that has not spent the measured best's time. Before any trial has reached,
            ``epsilon_before_incumbent`` still applies. On workloads unlike those the forecaster
            was calibrated on, nearly every near-best configuration it stopped was one forecast
            against the incumbent (docs/benchmarks.md, "Pruners on workloads they were not tuned
            on"). :data:`DEFAULT_REQUIRE_BEHIND` (on); ``False`` restores the one-forecast stop.
        self_check:
            Distrust the forecast on this study's own evidence: once a trial that reached the
            target is found where a forecast at one of its rungs (made as a decision then would
            have made it, with the prior from the other finished trials) gave its crossing less
            than ``epsilon``, no trial of the study is stopped by a forecast any more (reason
            ``forecast-distrusted``); the exact stops (``slower-than-measured-best``,
            ``max-cost``, ``diverged``) remain. Off by default; ``convtune study forecasts``
            reports the same evidence after the fact.
        comeback_veto:
            Hold the equal-cost verdict back where the study has seen a comeback: a trial is
            not stopped as ``behind-and-unlikely`` while a finished trial that reached the
            target by the bar (the incumbent's time × (1 + ``margin``)) stood at least as far
            from the target at the same cost. On a curve that sits at chance before it drops,
            being behind the median there is measurement noise, and the trials that reached
            first stood there too (docs/benchmarks.md, "A finished trial that came back").
            :data:`DEFAULT_COMEBACK_VETO` (on, since session 31); ``False`` restores the plain
            equal-cost verdict.
        behind_noise:
            How far behind the finished trials' median at equal cost a trial must stand, in units
            of the metric's evaluation noise, before the equal-cost rule counts it as behind. The
            noise is the median, over the finished trials counted, of each one's own noise
            (robust second differences of its distances to the target). At 0 any distance
            counts: on a curve at chance, two runs differ by the noise of the validation set, and
            a trial was stopped for standing 0.02 behind runs that stood there too before they
            dropped (docs/benchmarks.md, "Behind by more than the noise").
            :data:`DEFAULT_BEHIND_NOISE`.
        plateau_references:
            On a plateau prefix (moved under 3 noise units from its start), forecasts read the
            study's finished trials: where those that stood on a plateau at the same cost went
            on to cross is blended into the distribution, the calibrated forecast counting for 5
            trials (``references`` of :func:`convtune.curves.forecast_time_to_target`). Whether a
            plateau is stuck or waiting for a drop differs between workloads, and calibration
            fitted on others cannot tell (docs/benchmarks.md, "Plateau references").
            :data:`DEFAULT_PLATEAU_REFERENCES`.
        pause_behind:
            Once a trial has reached the target, pause any trial that stands farther from the
            target than the median of at least :data:`BEHIND_QUORUM` finished trials at the same
            cost, at any report, with no forecast asked (reason ``behind-median``; the
            ``comeback_veto`` still holds it back where a trial that reached in time once stood
            as far). This is MedianPruner's evidence without its verdict: in a study with
            ``checkpoint_dir`` a stop is a pause, the sampler is told a right-censored value,
            and a repeat resumes the trial. It breaks the ``epsilon`` promise for these stops
            (no probability is asked) to train more configurations in the same budget: the
            Optuna pruners, stopping so, found the winner more often than the forecast-guarded
            rules on the workloads recorded last (docs/benchmarks.md, "Pause the trials
            behind"). :data:`DEFAULT_PAUSE_BEHIND`.
        pause_phase:
            With ``pause_behind``, compare a trial only with the finished trials that were, at
            the same cost, no further into their LR decay (``1 - LR / peak``, within
            :data:`PHASE_TOLERANCE`), and never pause it before its own LR has reached its peak.
            A run still at its peak LR sits at a higher loss than one whose LR has already
            decayed and drops when its own decay comes (warmup-stable-decay and step schedules
            bloom late): standing behind the annealed runs is what its schedule predicts, not
            evidence. Trials without a stored schedule are compared with every finished trial,
            as without the option (docs/benchmarks.md, "Check Q's result").
            :data:`DEFAULT_PAUSE_PHASE`.
        pause_rank:
            With ``pause_behind``, pause at a cost only where the study's own runs show that
            standing at that cost foretells the outcome: among at least :data:`RANK_QUORUM`
            finished trials that ran their plan past that cost (none the pruner stopped), the
            Spearman correlation between their distance to the target there and their outcome
            (time-to-target, then the closest a non-reaching run came) must be at least
            ``pause_rank``. MedianPruner assumes early ranks hold; on workloads where the
            winners stand behind early (a metric measured against an attack made on the
            current model, ordinal levels under a held LR) that assumption paused them for
            good (docs/benchmarks.md, "Evidence for a pause"). 0 (:data:`DEFAULT_PAUSE_RANK`): no such
            evidence asked.
        pause_winners:
            With ``pause_behind``, pause at a cost only where the study's own winners say the
            rule would not have paused them: at least :data:`WINNERS_QUORUM` finished trials
            that ran their plan (none the pruner stopped) reached the target by the bar (the
            incumbent's time × (1 + ``margin``)), and none of them stood behind the median there
            as the rule counts it. One winner that would have been paused at this cost is
            evidence that standing behind there says little of the outcome; the
            ``comeback_veto`` asks only whether one stood as far back as the trial judged
            (docs/benchmarks.md, "Evidence for a pause"). :data:`DEFAULT_PAUSE_WINNERS`.
        behind_reports:
            The equal-cost rule (``behind-and-unlikely``) counts a trial as behind only where it
            stood behind the finished trials' median at each of its last ``behind_reports``
            reports. On a noisy metric (a GAN's energy) one evaluation can jump, and a near-best
            run was stopped at the one report where it did. :data:`DEFAULT_BEHIND_REPORTS` (1):
            the latest report alone; 2 failed its check on cost (docs/benchmarks.md, "Check S").
        jump_veto:
            Ask for the previous report too only where the trial moved away from the target at its
            latest one: a run that got worse at one evaluation is judged behind only if it stood
            behind the median before the jump as well; a run that improved and is still behind is
            judged as before. ``behind_reports = 2`` kept the near-best runs such a jump had
            stopped but cost more on workloads whose stops were right. :data:`DEFAULT_JUMP_VETO`
            (on, since session 39); ``False`` restores the one-report verdict.
        study_shift:
            Move the probability a forecast stop reads by the study's own bias: the finished
            trials that ran their planned run (none the pruner stopped), each forecast as a
            decision would have at its last report at or before the same share of its own run as
            the trial judged (those at the target there left out), give pairs of the forecast's
            probability of reaching within the run and whether the trial did;
            :func:`convtune.curves.study_offset` fits one logit offset to them and
            :func:`convtune.curves.shift_probability` applies it. The calibration is fitted
            pooling other workloads and runs low or high on a given one; on eight workloads it
            was not fitted on, the shift made ``probability`` better calibrated
            (docs/benchmarks.md, "Check M"). In the pruner it kept near-best runs where the
            forecasts ran low and cost more elsewhere (docs/benchmarks.md, "Check N").
            :data:`DEFAULT_STUDY_SHIFT` (off).
        study_shift_z:
            Under ``study_shift``, apply the offset only where it stands at least this many
            posterior sds from 0 (``min_z`` of :func:`convtune.curves.study_offset`): a study
            whose few finished trials came out a little off their forecasts is read as unbiased.
            :data:`DEFAULT_STUDY_SHIFT_Z` (0: every offset applied).
        reach_trees:
            Read the forecasts with the calibration's reach trees
            (:class:`convtune.curves.ReachTrees`), as :func:`convtune.curves.forecast_time_to_target`
            does by default; off, the pruner's forecasts are the maps' alone, as its stop rules
            were measured. :data:`DEFAULT_REACH_TREES` (off).
        plateau_wait:
            Hold the equal-cost verdict (``behind-and-unlikely``) back from a trial still on its
            first plateau (it has closed less than :data:`PLATEAU_CLOSED` of its first report's
            distance to the target) until it has spent ``plateau_wait`` times the time it must
            beat (the incumbent's time-to-target × (1 + ``margin``)). Before its drop a run on a plateau stands behind every run that has
            dropped, and its forecast, read from a flat prefix, cannot say when the drop comes;
            on speaker verification and seismic phase picking, runs that would have reached
            within 10% of the best were stopped there (docs/benchmarks.md, "Check AI"). A run
            still flat at half that time must cover the whole distance in the other half.
            :data:`DEFAULT_PLATEAU_WAIT` (0: no wait).
        plateau_stretch:
            Hold the equal-cost verdict back from a trial still on its first plateau (as for
            ``plateau_wait``) while a finished trial that reached the target by the bar (the
            incumbent's time × (1 + ``margin``)) left its own first plateau only at a cost at least
            the trial's cost / ``plateau_stretch``: a plateau up to that many times longer than
            a winner's is what the study has seen before a drop that still won. Unlike
            ``plateau_wait`` it holds nothing where the winners never sat on a plateau, and it
            asks the winners' plateau, not their standing at the same cost
            (``comeback_veto``). :data:`DEFAULT_PLATEAU_STRETCH` (0: off).
    """

    def __init__(
        self,
        target: Target | str,
        *,
        epsilon: float = DEFAULT_EPSILON,
        n_warmup_reports: int = 2,
        rung_ratio: float = 2.0,
        margin: float = DEFAULT_MARGIN,
        level: float = 0.8,
        max_cost: float | None = None,
        prior_trials: int = 20,
        steady_reports: int = 3,
        epsilon_behind: float = DEFAULT_EPSILON_BEHIND,
        exact_margin: float = DEFAULT_EXACT_MARGIN,
        epsilon_before_incumbent: float | None = None,
        reach_max_lowering: float | None = None,
        require_behind: bool = DEFAULT_REQUIRE_BEHIND,
        self_check: bool = False,
        comeback_veto: bool = DEFAULT_COMEBACK_VETO,
        behind_noise: float = DEFAULT_BEHIND_NOISE,
        plateau_references: bool = DEFAULT_PLATEAU_REFERENCES,
        pause_behind: bool = DEFAULT_PAUSE_BEHIND,
        pause_phase: bool = DEFAULT_PAUSE_PHASE,
        pause_rank: float = DEFAULT_PAUSE_RANK,
        pause_winners: bool = DEFAULT_PAUSE_WINNERS,
        behind_reports: int = DEFAULT_BEHIND_REPORTS,
        jump_veto: bool = DEFAULT_JUMP_VETO,
        study_shift: bool = DEFAULT_STUDY_SHIFT,
        study_shift_z: float = DEFAULT_STUDY_SHIFT_Z,
        reach_trees: bool = DEFAULT_REACH_TREES,
        plateau_wait: float = DEFAULT_PLATEAU_WAIT,
        plateau_stretch: float = DEFAULT_PLATEAU_STRETCH,
    ) -> None:
        if not 0.0 <= epsilon < 1.0:
            raise ValueError(f"epsilon must be in [0, 1), got {epsilon}")
        if n_warmup_reports < 0:
            raise ValueError(f"n_warmup_reports must be >= 0, got {n_warmup_reports}")
        if not rung_ratio > 1.0:
            raise ValueError(f"rung_ratio must be > 1, got {rung_ratio}")
        if margin < 0:
            raise ValueError(f"margin must be >= 0, got {margin}")
        if not 0.0 < level < 1.0:
            raise ValueError(f"level must be in (0, 1), got {level}")
        if max_cost is not None and not max_cost > 0:
            raise ValueError(f"max_cost must be positive, got {max_cost}")
        if not 0.0 <= epsilon_behind < 1.0:
            raise ValueError(f"epsilon_behind must be in [0, 1), got {epsilon_behind}")
        if exact_margin < 0:
            raise ValueError(f"exact_margin must be >= 0, got {exact_margin}")
        if epsilon_before_incumbent is not None and not 0.0 <= epsilon_before_incumbent < 1.0:
            raise ValueError(f"epsilon_before_incumbent must be in [0, 1), got {epsilon_before_incumbent}")
        self._target = Target.parse(target)
        self._epsilon = epsilon
        self._n_warmup_reports = n_warmup_reports
        self._rung_ratio = rung_ratio
        self._margin = margin
        self._level = level
        self._max_cost = max_cost
        self._prior_trials = prior_trials
        self._steady_reports = steady_reports
        self._epsilon_behind = epsilon_behind
        self._exact_margin = exact_margin
        self._epsilon_before_incumbent = (
            epsilon if epsilon_before_incumbent is None else epsilon_before_incumbent
        )
        if reach_max_lowering is not None and not reach_max_lowering >= 1.0:
            raise ValueError(f"reach_max_lowering must be >= 1, got {reach_max_lowering}")
        self._reach_max_lowering = reach_max_lowering
        if require_behind not in (True, False):  # a spec's option arrives as 1.0; 2 is a typo
            raise ValueError(f"require_behind must be true or false, got {require_behind!r}")
        self._require_behind = bool(require_behind)
        if self_check not in (True, False):
            raise ValueError(f"self_check must be true or false, got {self_check!r}")
        self._self_check = bool(self_check)
        if comeback_veto not in (True, False):
            raise ValueError(f"comeback_veto must be true or false, got {comeback_veto!r}")
        self._comeback_veto = bool(comeback_veto)
        if isinstance(plateau_wait, bool) or not (
            isinstance(plateau_wait, int | float) and 0.0 <= plateau_wait < math.inf
        ):
            raise ValueError(f"plateau_wait must be a finite number >= 0, got {plateau_wait!r}")
        self._plateau_wait = float(plateau_wait)
        if isinstance(plateau_stretch, bool) or not (
            isinstance(plateau_stretch, int | float) and 0.0 <= plateau_stretch < math.inf
        ):
            raise ValueError(f"plateau_stretch must be a finite number >= 0, got {plateau_stretch!r}")
        self._plateau_stretch = float(plateau_stretch)
        if not 0.0 <= behind_noise < math.inf:
            raise ValueError(f"behind_noise must be a finite number >= 0, got {behind_noise!r}")
        self._behind_noise = float(behind_noise)
        if plateau_references not in (True, False):
            raise ValueError(f"plateau_references must be true or false, got {plateau_references!r}")
        self._plateau_references = bool(plateau_references)
        if pause_behind not in (True, False):
            raise ValueError(f"pause_behind must be true or false, got {pause_behind!r}")
        self._pause_behind = bool(pause_behind)
        if pause_phase not in (True, False):
            raise ValueError(f"pause_phase must be true or false, got {pause_phase!r}")
        self._pause_phase = bool(pause_phase)
        if not 0.0 <= pause_rank <= 1.0:
            raise ValueError(f"pause_rank must be a rank correlation in [0, 1], got {pause_rank!r}")
        self._pause_rank = float(pause_rank)
        if pause_winners not in (True, False):
            raise ValueError(f"pause_winners must be true or false, got {pause_winners!r}")
        self._pause_winners = bool(pause_winners)
        whole = (
            isinstance(behind_reports, int | float)
            and not isinstance(behind_reports, bool)
            and math.isfinite(behind_reports)
            and behind_reports == int(behind_reports)  # a spec's 2 arrives as 2.0
        )
        if not whole or behind_reports < 1:
            raise ValueError(f"behind_reports must be a whole number >= 1, got {behind_reports!r}")
        self._behind_reports = int(behind_reports)
        if jump_veto not in (True, False):
            raise ValueError(f"jump_veto must be true or false, got {jump_veto!r}")
        self._jump_veto = bool(jump_veto)
        if study_shift not in (True, False):
            raise ValueError(f"study_shift must be true or false, got {study_shift!r}")
        self._study_shift = bool(study_shift)
        if isinstance(study_shift_z, bool) or not (
            isinstance(study_shift_z, int | float) and 0 <= study_shift_z < math.inf
        ):
            raise ValueError(f"study_shift_z must be a number >= 0, got {study_shift_z!r}")
        if study_shift_z > 0 and not study_shift:
            # Silently ignored, the gate would read as a setting that was measured and did nothing.
            raise ValueError("study_shift_z applies under study_shift only: set study_shift too")
        self._study_shift_z = float(study_shift_z)
        if reach_trees not in (True, False):
            raise ValueError(f"reach_trees must be true or false, got {reach_trees!r}")
        self._reach_trees = bool(reach_trees)
        self._prefix_forecasts: dict[tuple[Any, ...], Forecast] = {}
        self._finished: dict[_CacheKey, _Finished] = {}
        self._priors: dict[tuple[_CacheKey, ...], CurvePrior | None] = {}
        self.n_fits = 0
        """Finished trials analysed so far (cache misses); for tests and benchmarks."""

    @classmethod
    def for_spec(cls, spec: Any, **overrides: Any) -> TimeToTargetPruner:
        """The pruner a convtune study spec's ``pruner`` names, with ``overrides`` of its options.

        The spec's ``max_cost`` becomes the cap in report steps (samples, or milliseconds of
        time). ``time_to_target_field`` and ``time_to_target_halving`` are deprecated: they warn
        and build this default pruner (their equal-cost rules stopped 91-95% of the near-best
        configurations' trials on workloads they were not fitted on; docs/benchmarks.md).
        """
        if spec.pruner in ("time_to_target_field", "time_to_target_halving"):
            warnings.warn(
                f"pruner {spec.pruner!r} is deprecated and runs as 'time_to_target': its equal-cost "
                "rule stopped near-best configurations on held-out workloads (docs/benchmarks.md)",
                FutureWarning,
                stacklevel=2,
            )
        scale = 1 if spec.cost == "samples" else 1000
        max_cost = spec.max_cost * scale if math.isfinite(spec.max_cost) else None
        options: dict[str, Any] = {"max_cost": max_cost}
        options.update(overrides)
        for key in ("n_warmup_reports", "prior_trials", "steady_reports"):
            if key in options:
                options[key] = int(options[key])
        return cls(spec.target, **options)

    @property
    def target(self) -> Target:
        return self._target

    @property
    def epsilon(self) -> float:
        return self._epsilon

    def prune(self, study: optuna.study.Study, trial: FrozenTrial) -> bool:
        decision = self.decide(study, trial)
        if decision.reason == "forecast-distrusted":
            write_stored_trial(
                study._storage, trial._trial_id, {DISTRUSTED_ATTR: _json_float(decision.probability)}
            )
        if decision.prune:
            # The user attrs say on what each stop was decided (tests and audits read them).
            write_stored_trial(
                study._storage,
                trial._trial_id,
                {
                    STOP_PROBABILITY_ATTR: _json_float(decision.probability),
                    STOP_THRESHOLD_ATTR: _json_float(decision.threshold),
                },
            )
        return decision.prune

    def decide(self, study: optuna.study.Study, trial: FrozenTrial) -> PruneDecision:
        """The decision :meth:`prune` takes, with its reason, forecast and incumbent."""
        return self._decide(study.study_name, trial, self._finished_trials(study))

    def forecast_trial(self, study: optuna.study.Study, trial: FrozenTrial | optuna.trial.Trial) -> Forecast:
        """The forecast a decision on ``trial`` would use (e.g. to record on a stopped trial)."""
        frozen = _frozen(study, trial)
        summaries = self._summaries(study.study_name, self._finished_trials(study))
        others = [s for s in summaries if s.number != frozen.number]
        return self._forecast(frozen, self._prior(summaries), references=self._references(others))

    def forecast_prefix(
        self,
        study: optuna.study.Study,
        trial: FrozenTrial,
        cost: float,
        *,
        finished: Sequence[FrozenTrial] | None = None,
    ) -> Forecast:
        """The forecast a decision on ``trial`` would have used when its reports reached ``cost``.

        Its reports up to ``cost``, its schedule, and the prior from the study's finished trials
        (``finished``, else read from ``study``) *other than* ``trial``: a trial's own outcome
        never informs the forecast it is judged by. :func:`convtune.audit_forecasts`
        scores these against how trials really ended.
        """
        costs, values = _curve(trial)
        seen = int(np.count_nonzero(costs <= cost))
        if finished is None:
            finished = self._finished_trials(study)
        others = [s for s in self._summaries(study.study_name, finished) if s.number != trial.number]
        if trial.state is not TrialState.COMPLETE:
            return self._forecast(
                trial, self._prior(others), costs[:seen], values[:seen], self._references(others)
            )
        return self._finished_prefix_forecast(study.study_name, trial, seen, others)

    def _finished_prefix_forecast(
        self, study_name: str, trial: FrozenTrial, n: int, others: Sequence[_Finished]
    ) -> Forecast:
        """A finished trial's forecast from its first ``n`` reports, the prior from ``others``.

        Those and the prior's sources decide it, so it is kept: checking a growing study again
        (the dashboard note does, after every trial; ``self_check`` at each would-be stop)
        forecasts only what changed, and the same storage contents give the same answer in every
        worker.
        """
        key = (
            study_name,
            trial.number,
            str(trial.datetime_start),
            n,
            tuple(s.number for s in self._prior_sources(others)),
            tuple(s.number for s in others) if self._plateau_references else (),
        )
        if key not in self._prefix_forecasts:
            if len(self._prefix_forecasts) > 65536:
                self._prefix_forecasts.clear()
            costs, values = _curve(trial)
            self._prefix_forecasts[key] = self._forecast(
                trial, self._prior(others), costs[:n], values[:n], self._references(others)
            )
        return self._prefix_forecasts[key]

    def _forecasts_missed(self, study_name: str, finished: Sequence[FrozenTrial]) -> bool:
        """Whether a finished trial that reached the target did so where a forecast at one of its
        rungs gave that less than ``epsilon``."""
        summaries = self._summaries(study_name, finished)
        for trial, summary in zip(finished, summaries, strict=True):
            if not math.isfinite(summary.time_to_target):
                continue
            others = [s for s in summaries if s.number != trial.number]
            costs = summary.costs
            for n in range(max(self._n_warmup_reports, 1), costs.size + 1):
                if costs[n - 1] >= summary.time_to_target:
                    break
                if not self._at_rung(costs[:n]):
                    continue
                forecast = self._finished_prefix_forecast(study_name, trial, n, others)
                if reach_probability(forecast, summary.time_to_target) < self._epsilon:
                    return True
        return False

    def _finished_trials(self, study: optuna.study.Study) -> list[FrozenTrial]:
        return study.get_trials(deepcopy=False, states=(TrialState.COMPLETE,))

    def _decide(self, study_name: str, trial: FrozenTrial, finished: Sequence[FrozenTrial]) -> PruneDecision:
        costs, values = _curve(trial)
        if costs.size == 0:
            return PruneDecision(False, "no-reports", None, math.inf)
        if not np.all(np.isfinite(values)):
            return PruneDecision(True, "diverged", None, math.inf, 0.0, self._epsilon)
        if self._max_cost is not None and costs[-1] >= self._max_cost:
            return PruneDecision(True, "max-cost", None, math.inf, 0.0, self._epsilon)
        summaries = self._summaries(study_name, finished)
        incumbent = _measured(summaries)
        if costs[-1] >= incumbent * (1.0 + self._exact_margin) and not self._target.is_reached(
            float(values[-1])
        ):
            # Exact, so no warm-up: a trial that has spent what the measured best needed
            # (plus ``exact_margin``) without reaching the target can only reach it later, and
            # cannot be picked, nor be a runner-up within that margin for ``confirm``.
            return PruneDecision(True, SLOWER_THAN_MEASURED_BEST, None, incumbent, 0.0, self._epsilon)
        if (
            self._pause_behind
            and math.isfinite(incumbent)
            and self._behind_for_pause(summaries, costs, values, incumbent, _schedule(trial))
        ):
            return PruneDecision(True, "behind-median", None, incumbent)
        if costs.size < max(self._n_warmup_reports, 1):
            return PruneDecision(False, "warm-up", None, incumbent)
        if not self._at_rung(costs):
            return PruneDecision(False, "between-rungs", None, incumbent)

        forecast = self._forecast(trial, self._prior(summaries), costs, values, self._references(summaries))
        if forecast.reached:
            return PruneDecision(False, "reached", forecast, incumbent)
        if forecast.diverged:
            return PruneDecision(True, "diverged", forecast, incumbent, 0.0, self._epsilon)
        if math.isfinite(incumbent):
            bar, reason, epsilon = incumbent * (1.0 + self._margin), "cannot-beat-incumbent", self._epsilon
        else:
            bar, reason = self._cap(trial), "cannot-reach-by-max-cost"
            epsilon = self._epsilon_before_incumbent
        if not math.isfinite(bar):
            return PruneDecision(False, "no-bar", forecast, incumbent)
        rungs = self.n_rungs(trial, costs, bar)
        threshold = epsilon / rungs
        probability = reach_probability(forecast, bar)
        if self._study_shift:
            planned_end = self._planned_end(_schedule(trial))
            share = costs[-1] / planned_end if planned_end else math.nan
            probability = shift_probability(probability, self._study_offset(study_name, finished, share))
        steady = not math.isfinite(incumbent) and self._improving(costs, values, bar)
        alone = not (self._require_behind and math.isfinite(incumbent))
        behind_threshold = self._epsilon_behind / rungs
        stop_alone = probability < threshold and not steady and alone
        gap = self._target.gap(values[-1])
        stop_behind = (
            self._epsilon_behind > 0
            and not steady
            and probability < behind_threshold
            and self._behind_at_last_reports(summaries, costs, values)
            and not (self._comeback_veto and _came_back(summaries, costs[-1], gap, bar))
            and not self._plateau_waits(costs, values, incumbent)
            and not self._plateau_stretches(summaries, costs, values, bar)
        )
        if (stop_alone or stop_behind) and self._self_check and self._forecasts_missed(study_name, finished):
            return PruneDecision(False, "forecast-distrusted", forecast, incumbent, probability, 0.0)
        if stop_alone:
            return PruneDecision(True, reason, forecast, incumbent, probability, threshold)
        if stop_behind:
            return PruneDecision(
                True, "behind-and-unlikely", forecast, incumbent, probability, behind_threshold
            )
        if not alone:
            # The forecast-alone bound was not applied, so do not report it: the one a
            # probability was held to here is the equal-cost rule's (0 when that rule is off).
            threshold = behind_threshold
        return PruneDecision(False, "may-beat-incumbent", forecast, incumbent, probability, threshold)

    def _planned_end(self, schedule: LRSchedule | None) -> float | None:
        """A trial's planned end: its schedule's, else ``max_cost`` (``None``: unknown)."""
        return schedule.horizon if schedule is not None else self._max_cost

    def _study_offset(self, study_name: str, finished: Sequence[FrozenTrial], share: float) -> float:
        """The logit offset of ``study_shift``: how the forecasts of the finished trials that ran
        their plan, each at ``share`` of its own run, came out (0 where none can say)."""
        if not math.isfinite(share):
            return 0.0
        summaries = self._summaries(study_name, finished)
        probabilities, reached = [], []
        for trial, summary in zip(finished, summaries, strict=True):
            if summary.stopped or not math.isfinite(summary.horizon):
                continue
            n = int(np.searchsorted(summary.costs, share * summary.horizon, side="right"))
            if n < max(self._n_warmup_reports, 1) or summary.costs[n - 1] >= summary.time_to_target:
                continue
            others = [s for s in summaries if s.number != summary.number]
            forecast = self._finished_prefix_forecast(study_name, trial, n, others)
            if math.isnan(forecast.probability):
                continue
            probabilities.append(forecast.probability)
            reached.append(summary.time_to_target <= summary.horizon)
        return study_offset(probabilities, reached, min_z=self._study_shift_z)

    def _behind_at_last_reports(
        self, summaries: Sequence[_Finished], costs: np.ndarray, values: np.ndarray
    ) -> bool:
        """The equal-cost evidence: behind the finished trials' median at each of the trial's last
        ``behind_reports`` reports (all it has, if fewer), and under ``jump_veto`` at the previous
        report too where the latest one moved away from the target."""
        reports = self._behind_reports
        if self._jump_veto and costs.size >= 2:
            jumped = self._target.gap(float(values[-1])) > self._target.gap(float(values[-2]))
            reports = max(reports, 2) if jumped else reports
        last = range(1, min(reports, costs.size) + 1)
        return all(
            _behind_median(
                summaries, float(costs[-k]), self._target.gap(float(values[-k])), self._behind_noise
            )
            for k in last
        )

    def _plateau_waits(self, costs: np.ndarray, values: np.ndarray, incumbent: float) -> bool:
        """``plateau_wait``'s rule: the trial has closed under :data:`PLATEAU_CLOSED` of its first
        report's distance to the target and spent under ``plateau_wait`` × the time it must beat
        (the incumbent's × (1 + ``margin``))."""
        bar = incumbent * (1.0 + self._margin)
        if not (self._plateau_wait > 0 and float(costs[-1]) < self._plateau_wait * bar):
            return False
        return _on_first_plateau(
            np.array([self._target.gap(float(values[0])), self._target.gap(float(values[-1]))])
        )

    def _plateau_stretches(
        self, summaries: Sequence[_Finished], costs: np.ndarray, values: np.ndarray, bar: float
    ) -> bool:
        """``plateau_stretch``'s rule: the trial is on its first plateau, and a finished trial that
        reached by ``bar`` left its own only at or past the trial's cost / ``plateau_stretch``."""
        if not self._plateau_stretch > 0 or not _on_first_plateau(
            np.array([self._target.gap(float(v)) for v in values])
        ):
            return False
        cost = float(costs[-1])
        return any(
            s.time_to_target <= bar and _plateau_left(s.costs, s.gaps) * self._plateau_stretch >= cost
            for s in summaries
        )

    def _behind_for_pause(
        self,
        summaries: Sequence[_Finished],
        costs: np.ndarray,
        values: np.ndarray,
        incumbent: float,
        schedule: LRSchedule | None,
    ) -> bool:
        """``pause_behind``'s rule: behind the finished trials' median at this cost (under
        ``pause_phase``, of those no further into their LR decay), never having reached the
        target, and no comeback seen from as far back (under ``comeback_veto``)."""
        if any(self._target.is_reached(float(v)) for v in values):
            return False
        cost = float(costs[-1])
        peers: Sequence[_Finished] = summaries
        if self._pause_phase and schedule is not None:
            decay = _lr_decay(schedule, cost)
            if decay is None:
                return False  # still warming up: it has not trained at its peak LR yet
            peers = [
                s
                for s in summaries
                if s.schedule is not None and _decay_or_zero(s.schedule, cost) <= decay + PHASE_TOLERANCE
            ]
        gap = self._target.gap(float(values[-1]))
        if not _behind_median(peers, cost, gap, self._behind_noise):
            return False
        if self._pause_rank > 0 and not _ranks_hold(summaries, cost, self._pause_rank):
            return False
        bar = incumbent * (1.0 + self._margin)
        if self._pause_winners and not self._winners_vouch(peers, cost, bar):
            return False
        return not (self._comeback_veto and _came_back(summaries, float(costs[-1]), gap, bar))

    def _winners_vouch(self, peers: Sequence[_Finished], cost: float, bar: float) -> bool:
        """``pause_winners``' evidence: enough finished trials that ran their plan reached the
        target by ``bar``, and none stood behind ``peers``' median at ``cost`` as the pause rule
        counts it."""
        winners = [
            s
            for s in peers
            if not s.stopped and s.time_to_target <= bar and s.costs.size and s.costs[-1] >= cost
        ]
        if len(winners) < WINNERS_QUORUM:
            return False
        return not any(
            _behind_median(peers, cost, float(np.interp(cost, w.costs, w.gaps)), self._behind_noise)
            for w in winners
        )

    def _first_rung(self, costs: np.ndarray) -> float:
        return float(costs[max(self._n_warmup_reports, 1) - 1])

    def _rung_index(self, cost: float, first: float) -> int:
        if not first > 0:
            return 0
        return int(math.floor(math.log(max(cost, first) / first) / math.log(self._rung_ratio) + 1e-9))

    def _at_rung(self, costs: np.ndarray) -> bool:
        """Whether the latest report is the first at or past a rung (the first rung included)."""
        warm = max(self._n_warmup_reports, 1)
        if costs.size == warm:
            return True
        first = self._first_rung(costs)
        return self._rung_index(float(costs[-1]), first) > self._rung_index(float(costs[-2]), first)

    def n_rungs(self, trial: FrozenTrial, costs: np.ndarray, bar: float) -> int:
        """How many rungs the trial can be judged at: those up to the nearer of its planned end
        (schedule horizon, ``max_cost``) and ``bar`` (past the incumbent's time it is stopped
        without a forecast). As the incumbent only improves, this count only shrinks over a
        trial's life and never falls below the rungs already passed, so the thresholds
        ``epsilon / n`` of its decisions sum to at most ``epsilon``.
        """
        schedule = _schedule(trial)
        ends = [c for c in (self._max_cost, schedule.horizon if schedule is not None else None, bar) if c]
        end = min(ends) if ends else math.inf
        first = self._first_rung(costs)
        if not math.isfinite(end):
            return 1
        passed = self._rung_index(float(costs[-1]), first) + 1
        return max(passed, self._rung_index(end, first) + 1)

    def _cap(self, trial: FrozenTrial) -> float:
        """What a trial must reach the target by when no trial has: ``max_cost``, else its run."""
        if self._max_cost is not None:
            return self._max_cost
        schedule = _schedule(trial)
        return schedule.horizon if schedule is not None else math.inf

    def _improving(self, costs: np.ndarray, values: np.ndarray, cap: float) -> bool:
        """Whether the trial still closes in on the target steadily enough to reach it by ``cap``.

        Its distance to the target fell at each of the last ``steady_reports`` reports, and a
        straight line through those reports (distance against cost) reaches the target by
        ``cap``: what a two-point line, no worse a forecaster early on, would say.
        """
        n = self._steady_reports
        if n <= 0 or values.size < n + 1 or not math.isfinite(cap):
            return False
        x = costs[-(n + 1) :]
        gaps = np.array([self._target.gap(float(v)) for v in values[-(n + 1) :]])
        if not np.all(np.diff(gaps) < 0):
            return False
        slope, intercept = np.polyfit(x, gaps, 1)
        return bool(slope < 0 and -intercept / slope <= cap)

    def _forecast(
        self,
        trial: FrozenTrial,
        prior: CurvePrior | None,
        costs: np.ndarray | None = None,
        values: np.ndarray | None = None,
        references: Sequence[ReferenceRun] = (),
    ) -> Forecast:
        if costs is None or values is None:
            costs, values = _curve(trial)
        schedule = _schedule(trial)
        horizon = self._planned_end(schedule)
        return forecast_time_to_target(
            costs,
            values,
            self._target,
            schedule=schedule,
            prior=prior,
            horizon=horizon,
            level=self._level,
            reach_max_lowering=self._reach_max_lowering,
            references=references,
            reach_trees=self._reach_trees,
        )

    def _references(self, summaries: Sequence[_Finished]) -> list[ReferenceRun]:
        """The finished trials a plateau's forecast reads (none unless ``plateau_references``)."""
        return [s.reference for s in summaries if s.reference is not None]

    def _summaries(self, study_name: str, finished: Sequence[FrozenTrial]) -> list[_Finished]:
        out = []
        for t in finished:
            key = (study_name, t.number, str(t.datetime_start))
            summary = self._finished.get(key)
            if summary is None:
                summary = self._summarise(t)
                self._finished[key] = summary
            out.append(summary)
        return out

    def _summarise(self, trial: FrozenTrial) -> _Finished:
        # Depends on this trial alone (no prior from others), so every worker caches the
        # same summary whenever it first meets the trial.
        self.n_fits += 1
        costs, values = _curve(trial)
        ttt = time_to_target(costs, values, self._target)
        # A trial this pruner stopped (COMPLETE with a censored value, as convtune ends them)
        # has a truncated curve: its early-prefix fit must not become the prior (in replays
        # that made stopped trials stop the next ones).
        stopped = TrialRecord.of(trial).status is TrialStatus.STOPPED
        fit = None
        if self._prior_trials > 0 and costs.size and not stopped:
            fit = fit_curve(costs, values, self._target, _schedule(trial))
        gaps = np.array([self._target.gap(float(v)) for v in values])
        finite = gaps[np.isfinite(gaps)]
        noise = noise_scale(finite) if finite.size else math.inf
        # Read only where forecasts use it: the option is off by default.
        reference = ReferenceRun.of(costs, values, self._target) if self._plateau_references else None
        planned = _schedule(trial)
        horizon = self._planned_end(planned) or math.inf
        schedule = planned if self._pause_phase else None  # read only by that option
        return _Finished(trial.number, ttt, fit, costs, gaps, noise, reference, schedule, stopped, horizon)

    def _prior_sources(self, summaries: Sequence[_Finished]) -> list[_Finished]:
        """The finished trials the prior is fitted to (none: no prior)."""
        if self._prior_trials <= 0:
            return []
        usable = [s for s in summaries if s.fit is not None]
        if len(usable) < 2:
            # One curve says nothing of how curves differ between configurations: its spread is
            # only the floors, set by its own late wiggle. In a demo study a lone LAMB curve that
            # levelled off at 2.19 (±0.016) made the next trial, AdamW two evaluations from the
            # target, "never reach" it, and stopped it.
            return []
        usable.sort(key=lambda s: (s.time_to_target, s.final_gap, s.number))
        return usable[: self._prior_trials]

    def _prior(self, summaries: Sequence[_Finished]) -> CurvePrior | None:
        chosen = self._prior_sources(summaries)
        if not chosen:
            return None
        key = tuple((s.fit.kind, s.number, s.fit.params) for s in chosen)  # type: ignore[union-attr]
        if key not in self._priors:
            if len(self._priors) > 1024:
                self._priors.clear()
            self._priors[key] = CurvePrior.from_fits([s.fit for s in chosen])  # type: ignore[misc]
        return self._priors[key]


BEHIND_QUORUM = 3
"""Finished trials that must have reached a cost before a trial is judged behind their median there
(MedianPruner's ``n_startup_trials`` in convtune's ``pruner: median``)."""


def _behind_median(summaries: Sequence[_Finished], cost: float, gap: float, noise_units: float = 0.0) -> bool:
    """Whether ``gap`` at ``cost`` is farther from the target than the median of the finished
    trials' distances at that cost (each interpolated between its reports; only trials that
    reported at or past ``cost`` count), by more than ``noise_units`` times their median
    evaluation noise."""
    counted = [
        s
        for s in summaries
        if s.costs.size and s.costs[-1] >= cost and np.all(np.isfinite(s.gaps[s.costs <= cost]))
    ]
    if len(counted) < BEHIND_QUORUM:
        return False
    median = float(np.median([np.interp(cost, s.costs, s.gaps) for s in counted]))
    tolerance = noise_units * float(np.median([s.noise for s in counted])) if noise_units > 0 else 0.0
    return gap > median + tolerance


def _ranks_hold(summaries: Sequence[_Finished], cost: float, least: float) -> bool:
    """Whether the finished trials that ran their plan past ``cost`` ranked there (by distance to
    the target, interpolated between reports) as they finished (by time-to-target, then by the
    closest a run that never reached came): a Spearman correlation of at least ``least`` over at
    least :data:`RANK_QUORUM` of them.

    Example:
        >>> def run(ttt, gaps):
        ...     g = np.array(gaps, dtype=float)
        ...     return _Finished(0, ttt, None, np.array([1.0, 2.0, 3.0]), g, 0.0, None)
        >>> held = [run(2.0, [1, 0, 0]), run(3.0, [2, 1, 0]), run(np.inf, [3, 2, 1]),
        ...         run(np.inf, [4, 3, 2]), run(np.inf, [5, 4, 3])]
        >>> late = [run(2.0, [5, 0, 0]), run(3.0, [4, 1, 0]), run(np.inf, [3, 2, 1]),
        ...         run(np.inf, [2, 2, 2]), run(np.inf, [1, 3, 3])]
        >>> _ranks_hold(held, 1.0, 0.5), _ranks_hold(late, 1.0, 0.5), _ranks_hold(held[:4], 1.0, 0.5)
        (True, False, False)
    """
    counted = [
        s
        for s in summaries
        if not s.stopped
        and s.costs.size
        and s.costs[-1] >= cost
        and np.all(np.isfinite(s.gaps[s.costs <= cost]))
    ]
    if len(counted) < RANK_QUORUM:
        return False
    from scipy.stats import spearmanr  # scipy.stats costs every process ~1 s to import: only here

    standing = [float(np.interp(cost, s.costs, s.gaps)) for s in counted]
    # Outcome order: sooner crossings first, then runs that never crossed, closest first.
    order = sorted(range(len(counted)), key=lambda i: (counted[i].time_to_target, counted[i].final_gap))
    outcome = np.empty(len(counted))
    outcome[order] = np.arange(len(counted))
    rho = spearmanr(standing, outcome).statistic
    return bool(np.isfinite(rho) and rho >= least)


def _lr_decay(schedule: LRSchedule, cost: float) -> float | None:
    """How far into its LR decay a run is at ``cost``: ``1 - LR / peak`` once the LR has first
    reached (within 1%) its peak, None before that (in warm-up).

    Example:
        >>> s = LRSchedule(np.array([10.0, 20.0, 100.0]), np.array([0.5, 1.0, 0.0]))
        >>> _lr_decay(s, 15.0) is None, _lr_decay(s, 20.0), round(_lr_decay(s, 60.0), 2)
        (True, 0.0, 0.5)
    """
    peak = schedule.peak
    if not peak > 0:
        return None
    reached = schedule.costs[schedule.lrs >= 0.99 * peak]
    if not reached.size or cost < float(reached[0]):
        return None
    return float(1.0 - schedule.lr_at(cost) / peak)


def _decay_or_zero(schedule: LRSchedule, cost: float) -> float:
    decay = _lr_decay(schedule, cost)
    return 0.0 if decay is None else decay  # a run in warm-up has not decayed at all


def _came_back(summaries: Sequence[_Finished], cost: float, gap: float, bar: float) -> bool:
    """Whether a finished trial that reached the target by ``bar`` stood at least ``gap`` from it
    at ``cost`` (interpolated between its reports): being that far behind there did not keep it
    from reaching in time."""
    for s in summaries:
        if not s.time_to_target <= bar or not s.costs.size or s.costs[-1] < cost:
            continue
        if float(np.interp(cost, s.costs, s.gaps)) >= gap:
            return True
    return False


def _on_first_plateau(gaps: np.ndarray) -> bool:
    """Whether a curve's latest report (distances to the target) has closed less than
    :data:`PLATEAU_CLOSED` of its first report's distance (and not reached)."""
    return bool(gaps.size) and 0 < gaps[-1] and gaps[-1] > (1.0 - PLATEAU_CLOSED) * gaps[0]


def _plateau_left(costs: np.ndarray, gaps: np.ndarray) -> float:
    """The cost of a curve's first report off its first plateau, where it sat there for two
    reports or more (0: it left at its second report, never left, or its first report was at the
    target or not finite)."""
    if not gaps.size or not 0 < gaps[0] < math.inf:
        return 0.0
    for i in range(1, gaps.size):
        if gaps[i] <= (1.0 - PLATEAU_CLOSED) * gaps[0]:
            return float(costs[i]) if i >= 2 else 0.0
    return 0.0


def _measured(summaries: Sequence[_Finished]) -> float:
    return min((s.time_to_target for s in summaries), default=math.inf)


def _curve(trial: FrozenTrial) -> tuple[np.ndarray, np.ndarray]:
    items = sorted(trial.intermediate_values.items())
    costs = np.array([float(step) for step, _ in items])
    values = np.array([float(v) if v is not None else math.nan for _, v in items])
    return costs, values


def _schedule(trial: FrozenTrial) -> LRSchedule | None:
    return LRSchedule.from_record(TrialRecord.of(trial).schedule)


def _frozen(study: optuna.study.Study, trial: FrozenTrial | optuna.trial.Trial) -> FrozenTrial:
    if isinstance(trial, FrozenTrial):
        return trial
    return study._storage.get_trial(trial._trial_id)


def reach_probability(forecast: Forecast, cost: float) -> float:
    """The probability that the forecast curve reaches its target by ``cost``.

    A forecast that carries its own calibrated ``probability_before`` answers; for one that
    does not, the answer is read off what it has: its interval (``low`` and ``high`` as the
    ``(1 ∓ level) / 2`` quantiles of the crossing, ``estimate`` as the median), interpolated on
    the normal-quantile scale against log cost, and capped by its probability of reaching
    within the run. ``nan`` where the forecast knows nothing (too few points).

    Example:
        >>> f = Forecast(2000.0, 1000.0, 4000.0, False, 0.9, 0.8, model="power")
        >>> round(reach_probability(f, 2000.0), 2), reach_probability(f, 1000.0) < 0.11
        (0.5, True)
    """
    if forecast.reached:
        return 1.0 if cost >= forecast.estimate else 0.0
    if forecast.diverged:
        return 0.0
    if forecast.model == "none" or math.isnan(forecast.probability):
        return math.nan
    own = getattr(forecast, "probability_before", None)
    if callable(own):
        return float(own(cost))
    tail = (1.0 - forecast.level) / 2.0
    points = [
        (math.log(c), float(ndtri(q)))
        for c, q in ((forecast.low, tail), (forecast.estimate, 0.5), (forecast.high, 1.0 - tail))
        if math.isfinite(c) and c > 0
    ]
    cap = forecast.probability
    if not points or not cost > 0:
        return 0.0 if not points else cap
    x = math.log(cost)
    if len(points) == 1:
        (x0, z0) = points[0]
        z = z0 + (x - x0) / 0.5  # one quantile known: a log-spread of 0.5 around it
    else:
        xs, zs = zip(*sorted(points), strict=True)
        if x <= xs[0]:
            slope = (zs[1] - zs[0]) / max(xs[1] - xs[0], 1e-9)
            z = zs[0] + (x - xs[0]) * slope
        elif x >= xs[-1]:
            slope = (zs[-1] - zs[-2]) / max(xs[-1] - xs[-2], 1e-9)
            z = zs[-1] + (x - xs[-1]) * slope
        else:
            z = float(np.interp(x, xs, zs))
    return float(min(ndtr(z), cap))


def _json_float(value: float) -> float | None:
    return float(value) if math.isfinite(value) else None
