"""Oracle pruners for tuner replays: how cheap could a pruned study be, knowing the future?

Each is a :data:`convtune.replay.PrunerFactory`: it reads the run the replay executor is
replaying (``executor.last``) and so knows what no pruner can. Replayed through the same
executor, sampler and seeds as the shipped pruner and the Optuna baselines
(``replay_pruners.py --methods tpe/oracle:perfect-forecast``), they bound what a better
forecaster, or any pruner at all, could save:

* ``perfect-forecast``: the shipped :class:`convtune.pruners.TimeToTargetPruner` (its rungs,
  warm-up, margins, exact stop and options) whose forecast is the run's true crossing, so every
  probability it compares with its budget is 0 or 1. What the default's design would cost with
  a forecaster that is never wrong: the most that forecasts (issue 16) can buy pruning (issue 17).
* ``perfect-before-incumbent`` / ``perfect-after-incumbent``: the perfect forecast for one kind
  of decision only (while no trial has reached the target / against the incumbent's time), the
  shipped forecast for the other: which of the two the forecasts' cost comes from.
* ``clairvoyant``: stops every trial whose configuration is not near-best (true time-to-target
  within 10% of the grid's best) at its second report (convtune's first rung) and lets
  near-best ones run: the floor for any pruner that judges no trial before its second report.
* ``clairvoyant-1``: the same at the first report, as Optuna's MedianPruner
  (``n_warmup_steps=0``) and Hyperband (``min_resource=1``) may stop: the floor for any pruner.
* ``median-incumbent``: the shipped pruner, forecasts and all, except that each finished trial
  that reached the target counts with its configuration's median time-to-target over the
  recorded seeds, not the one seed's it measured: what the default would do if the incumbent's
  time were free of seed noise (a lucky seed set gan_ring's bar below every near-best median,
  docs/benchmarks.md, "Check T"). ``shipped-control`` is the same plumbing with the measured
  times kept: it must replay exactly as the default does.

Example:
    >>> from convtune.replay import load_grid, replay_spec, replay_study
    >>> grid = load_grid("tests/data/tiny_grid.jsonl")                        # doctest: +SKIP
    >>> spec = replay_spec(grid, {"target": "val_error<=0.2"})               # doctest: +SKIP
    >>> row = replay_study(grid, spec, seed=0, budget=6, pruner=ORACLES["clairvoyant"])  # doctest: +SKIP
"""

from __future__ import annotations

import dataclasses
import math
from typing import Any

import optuna
from optuna.trial import FrozenTrial

from convtune.config.record import step_scale
from convtune.config.spec import StudySpec
from convtune.curves import Forecast, time_to_target
from convtune.pruners import TimeToTargetPruner
from convtune.replay import PrunerFactory, ReplayExecutor, near_best


def _last(executor: ReplayExecutor) -> tuple[Any, int]:
    """The configuration and recorded seed of the run the executor is replaying."""
    if executor.last is None:
        raise RuntimeError("an oracle pruner was asked about a trial the executor is not replaying")
    return executor.last


def _replayed_run(executor: ReplayExecutor) -> Any:
    key, seed = _last(executor)
    return next(r for r in executor.grid.configurations[key] if r.seed == seed)


class PerfectForecastPruner(TimeToTargetPruner):
    """The shipped pruner with a forecast that is never wrong: the replayed run's true crossing.

    Everything else (rungs doubling from the second report, ``epsilon / rungs``, the second
    budget, the incumbent's margin, the exact stop at ``1 + exact_margin`` times the measured
    best's time) is the default's, so the difference to the default is what its forecasts cost.
    The "still improving steadily" veto is off: a perfect forecast needs no second opinion.
    """

    executor: ReplayExecutor
    cost: str
    # Which decisions get the perfect forecast: "all"; "before" (no trial has reached yet: can
    # it reach by max_cost?) or "after" (against the incumbent's time); the others the shipped one.
    decisions: str = "all"
    _has_incumbent: bool = False

    def _decide(self, study_name: str, trial: FrozenTrial, finished: Any) -> Any:
        summaries = self._summaries(study_name, finished)
        self._has_incumbent = math.isfinite(min((s.time_to_target for s in summaries), default=math.inf))
        return super()._decide(study_name, trial, finished)

    def _knows(self) -> bool:
        return self.decisions == "all" or (self.decisions == "after") == self._has_incumbent

    def _forecast(
        self, trial: FrozenTrial, prior: Any, costs: Any = None, values: Any = None, references: Any = ()
    ) -> Forecast:
        if not self._knows():
            return super()._forecast(trial, prior, costs, values, references)
        run = _replayed_run(self.executor)
        # Trials report in step units (milliseconds where cost is time), as the pruner reads them.
        crossing = step_scale(self.cost) * time_to_target(run.costs(self.cost), run.metric, self._target)
        reported = float(costs[-1]) if costs is not None and len(costs) else 0.0
        if crossing <= reported:
            return Forecast(crossing, crossing, crossing, True, 1.0, 0.8, model="measured")
        if not math.isfinite(crossing):
            return Forecast(math.inf, math.inf, math.inf, False, 0.0, 0.8, model="oracle")
        # One knot: the crossing comes by ``cost`` with probability 1 from ``crossing`` on, else 0.
        return Forecast(
            crossing,
            crossing,
            crossing,
            False,
            1.0,
            0.8,
            model="oracle",
            cdf_costs=(crossing,),
            cdf_probs=(1.0,),
        )

    def _improving(self, costs: Any, values: Any, cap: float) -> bool:
        return False if self._knows() else super()._improving(costs, values, cap)


def perfect_forecast(
    executor: ReplayExecutor, spec: StudySpec, decisions: str = "all"
) -> optuna.pruners.BasePruner:
    """The default pruner, as ``spec`` builds it, with a perfect forecast for ``decisions``.

    A forecast that is never wrong needs no equal-cost evidence beside it, so it stops on the
    forecast alone (``require_behind`` off, as the default did when session 20 measured these)
    unless the spec's ``pruner_options`` say otherwise.
    """
    options = {"require_behind": False, **spec.pruner_options}
    pruner = PerfectForecastPruner.for_spec(spec, **options)
    pruner.executor, pruner.cost, pruner.decisions = executor, spec.cost, decisions
    return pruner


def perfect_before_incumbent(executor: ReplayExecutor, spec: StudySpec) -> optuna.pruners.BasePruner:
    """A perfect forecast only while no trial has reached the target (can it reach by max_cost?)."""
    return perfect_forecast(executor, spec, "before")


def perfect_after_incumbent(executor: ReplayExecutor, spec: StudySpec) -> optuna.pruners.BasePruner:
    """A perfect forecast only once a trial has reached (can it beat the incumbent's time?)."""
    return perfect_forecast(executor, spec, "after")


class ClairvoyantPruner(optuna.pruners.BasePruner):
    """Stops, at its ``report``-th report, every trial whose configuration is not near-best."""

    def __init__(self, executor: ReplayExecutor, spec: StudySpec, report: int) -> None:
        self._executor = executor
        self._near_best = near_best(executor.grid.true_time_to_target(spec.target_spec, spec.cost))
        self._report = report

    def prune(self, study: optuna.study.Study, trial: FrozenTrial) -> bool:
        if len(trial.intermediate_values) < self._report:
            return False
        key, _ = self._executor.last or (None, None)
        return key not in self._near_best


def clairvoyant(executor: ReplayExecutor, spec: StudySpec) -> optuna.pruners.BasePruner:
    """Stops every trial of a configuration that is not near-best at its second report."""
    return ClairvoyantPruner(executor, spec, report=2)


def clairvoyant_first_report(executor: ReplayExecutor, spec: StudySpec) -> optuna.pruners.BasePruner:
    """Stops every trial of a configuration that is not near-best at its first report."""
    return ClairvoyantPruner(executor, spec, report=1)


class MedianIncumbentPruner(TimeToTargetPruner):
    """The shipped pruner that reads each finished trial's time-to-target as its configuration's
    median over the recorded seeds (where the trial reached the target; ``inf`` where most seeds
    do not). The sampler is still told the measured time: only the pruner's bar changes."""

    executor: ReplayExecutor
    cost: str
    truth: dict[Any, float]
    keys: dict[int, Any]
    medians: bool = True

    def _decide(self, study_name: str, trial: FrozenTrial, finished: Any) -> Any:
        # The replay trains one trial at a time, so the run replayed now is this trial's.
        self.keys.setdefault(trial.number, _last(self.executor)[0])
        return super()._decide(study_name, trial, finished)

    def _summarise(self, trial: FrozenTrial) -> Any:
        summary = super()._summarise(trial)
        key = self.keys.get(trial.number)
        if not self.medians or key is None or not math.isfinite(summary.time_to_target):
            return summary
        return dataclasses.replace(summary, time_to_target=step_scale(self.cost) * self.truth[key])


def median_incumbent(
    executor: ReplayExecutor, spec: StudySpec, medians: bool = True
) -> optuna.pruners.BasePruner:
    """The default pruner, as ``spec`` builds it, judging against configurations' median times."""
    pruner = MedianIncumbentPruner.for_spec(spec, **spec.pruner_options)
    pruner.executor, pruner.cost, pruner.medians, pruner.keys = executor, spec.cost, medians, {}
    pruner.truth = executor.grid.true_time_to_target(spec.target_spec, spec.cost)
    return pruner


def shipped_control(executor: ReplayExecutor, spec: StudySpec) -> optuna.pruners.BasePruner:
    """``median-incumbent``'s plumbing with the measured times kept: replays as the default."""
    return median_incumbent(executor, spec, medians=False)


ORACLES: dict[str, PrunerFactory] = {
    "perfect-forecast": perfect_forecast,
    "perfect-before-incumbent": perfect_before_incumbent,
    "perfect-after-incumbent": perfect_after_incumbent,
    "clairvoyant": clairvoyant,
    "clairvoyant-1": clairvoyant_first_report,
    "median-incumbent": median_incumbent,
    "shipped-control": shipped_control,
}
"""The oracles by the name ``replay_pruners.py`` takes after ``oracle:``."""
