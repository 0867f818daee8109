"""How the forecaster did on this study's own trials (``convtune study forecasts``).

Every figure about the forecaster in the README was measured on workloads it was not fitted
on; none was measured on *yours*. A study holds the evidence that can be: trials that ran to the
target, or to the end of their run without reaching it, have a known outcome. Each is cut at
fixed shares of its planned run (never at a share of its own time-to-target, which leaks the
answer), forecast from that prefix as the pruner would have forecast it (the trial's schedule,
the prior from the study's *other* finished trials, the spec's pruner options), and scored
against how it really ended, as ``benchmarks/forecast.py`` scores the curve corpus: relative
error of the estimate, an estimate beyond twice the true crossing counted as "never", interval
coverage, and whether runs that did not reach were called "not within the run".

What it cannot show: the stops. A stopped trial's outcome is unknown, and those are the trials
the forecast judged; a forecast that wrongly called a winner "never" and had it stopped leaves no
evidence here. Studies with ``pruner: none`` and ``convtune study confirm`` runs (trained to
the target, unpruned) give it the most to check.

Example:
    >>> audit = audit_forecasts(study, spec)                              # doctest: +SKIP
    >>> audit.summary(0.25).median_error, audit.far_tail                  # doctest: +SKIP
    (0.18, [])
"""

from __future__ import annotations

import functools
import math
import statistics
import warnings
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from optuna.trial import FrozenTrial, TrialState

from convtune.config.record import TrialRecord, TrialStatus, cost_unit, step_scale
from convtune.curves import Forecast, LRSchedule, study_offset, time_to_target
from convtune.pruners import TimeToTargetPruner

if TYPE_CHECKING:
    import optuna

    from convtune.config.spec import StudySpec

CUTS: tuple[float, ...] = (0.1, 0.25, 0.5)
"""Shares of each trial's planned run at which its forecast is checked (the corpus benchmark's)."""

NEVER_FACTOR = 2.0
"""An estimate beyond this multiple of the true crossing counts as "never" (issue 16's rule)."""

WITHIN = 0.2
"""A forecast within this relative error of the true crossing counts as close."""


@dataclass(frozen=True)
class ForecastCheck:
    """One trial's forecast from the prefix up to ``cut`` of its planned run, against its outcome.

    ``seen`` is the cost of the last report the forecast used, ``end`` where the trial's run was
    to end (the nearer of its schedule's horizon and ``max_cost``), ``truth`` the measured
    crossing (``inf``: it did not reach by ``end``). Costs are in report steps (samples, or
    milliseconds of time), as the trial reported them; :meth:`ForecastAudit.to_dict` gives them
    in the study's unit.
    """

    trial: int
    cut: float
    seen: float
    end: float
    truth: float
    forecast: Forecast

    @property
    def reached(self) -> bool:
        """The trial went on to reach the target."""
        return math.isfinite(self.truth)

    @property
    def said_never(self) -> bool:
        """A trial that reached, forecast not to or beyond twice its true crossing (issue 16's
        "never", finite or not)."""
        return self.reached and not self.forecast.estimate <= NEVER_FACTOR * self.truth

    @property
    def probability_by_truth(self) -> float:
        """The probability the forecast gave of crossing by the time the trial really did."""
        return self.forecast.probability_before(self.truth) if self.reached else math.nan

    def in_far_tail(self, epsilon: float) -> bool:
        """The true crossing fell where the forecast gave it less than ``epsilon``: a pruner
        stopping at that probability (the default's ε) could have stopped this trial."""
        return self.reached and self.probability_by_truth < epsilon

    @property
    def error(self) -> float:
        """Relative error of the estimate for a trial that reached; "never" counts as 1."""
        if not self.reached:
            return math.nan
        if self.said_never:
            return 1.0
        return min(1.0, abs(self.forecast.estimate / self.truth - 1.0))

    @property
    def covered(self) -> bool:
        """The forecast's interval held the true crossing (trials that reached)."""
        return self.reached and self.forecast.low <= self.truth <= self.forecast.high

    @property
    def called_not_within(self) -> bool:
        """The forecast said the trial would not reach by the end of its run."""
        return not self.forecast.estimate <= self.end


@dataclass(frozen=True)
class CutSummary:
    """The checks at one cut, summed up: what ``convtune study forecasts`` prints per row."""

    cut: float
    n_reached: int
    median_error: float
    within: int
    covered: int
    said_never: int
    far_tail: list[int]
    late_ratio: float
    n_not_reached: int
    called: int
    # What the forecasts said of reaching within the run (mean ``probability``) against the
    # share that did, and the logit offset that would correct the gap (``study_offset``):
    # this study's own bias, which a calibration fitted on other workloads cannot know.
    mean_probability: float = math.nan
    study_offset: float = 0.0

    @property
    def reached_share(self) -> float:
        """The share of the checked trials that reached within their run."""
        n = self.n_reached + self.n_not_reached
        return self.n_reached / n if n else math.nan

    def to_dict(self) -> dict[str, Any]:
        return {
            "cut": self.cut,
            "reached": self.n_reached,
            "median_error": None if math.isnan(self.median_error) else round(self.median_error, 4),
            f"within_{round(WITHIN * 100)}pct": self.within,
            "interval_covered": self.covered,
            "said_never": self.said_never,
            "far_tail": self.far_tail,
            "median_estimate_over_truth": None if math.isnan(self.late_ratio) else round(self.late_ratio, 4),
            "not_reached": self.n_not_reached,
            "called_not_within_run": self.called,
            "mean_probability": None
            if math.isnan(self.mean_probability)
            else round(self.mean_probability, 4),
            "study_offset": round(self.study_offset, 4),
        }


@dataclass(frozen=True)
class ForecastAudit:
    """Every check of a study's forecasts, and what could not be checked.

    ``trained`` counts the trials that trained (reached, stopped, budget, diverged, out of
    memory), ``checked`` those with a known outcome that gave at least one check, ``stopped``
    the stopped trials (outcome unknown), ``no_plan`` finished trials with neither a schedule
    nor ``max_cost`` (no planned run to cut at a share of). ``epsilon`` is the pruner's: a
    reaching trial whose true crossing a forecast gave less than that is in its far tail.
    """

    checks: list[ForecastCheck]
    cuts: tuple[float, ...]
    epsilon: float
    trained: int
    checked: int
    stopped: int
    no_plan: int = 0
    level: float = 0.8
    notes: list[str] = field(default_factory=list)
    cost: str = "samples"

    def summary(self, cut: float) -> CutSummary:
        at = [c for c in self.checks if c.cut == cut]
        reached = [c for c in at if c.reached]
        errors = [c.error for c in reached]
        ratios = [c.forecast.estimate / c.truth for c in reached if c.truth > 0]
        said = [(c.forecast.probability, c.reached) for c in at if not math.isnan(c.forecast.probability)]
        return CutSummary(
            cut=cut,
            n_reached=len(reached),
            median_error=statistics.median(errors) if errors else math.nan,
            within=sum(c.error <= WITHIN for c in reached),
            covered=sum(c.covered for c in reached),
            said_never=sum(c.said_never for c in reached),
            far_tail=sorted({c.trial for c in reached if c.in_far_tail(self.epsilon)}),
            late_ratio=statistics.median(ratios) if ratios else math.nan,
            n_not_reached=len(at) - len(reached),
            called=sum(c.called_not_within for c in at if not c.reached),
            mean_probability=statistics.mean(p for p, _ in said) if said else math.nan,
            study_offset=study_offset([p for p, _ in said], [r for _, r in said]),
        )

    @property
    def far_tail(self) -> list[int]:
        """Trials that reached the target where a forecast, at some cut, gave their true crossing
        less than ``epsilon``: where a pruned study on this workload may lose its winner."""
        return sorted({c.trial for c in self.checks if c.in_far_tail(self.epsilon)})

    def verdict(self) -> str:
        """One sentence on what the checks say, for people."""
        if not self.checked:
            return (
                "nothing to check yet: no trial has reached the target or run to its end "
                "(a stopped trial's outcome is unknown)"
            )
        if self.far_tail:
            listed = ", ".join(str(n) for n in self.far_tail)
            return (
                f"trial(s) {listed} reached the target where a forecast from their first reports gave "
                f"that less than {self.epsilon:g}: on this workload the pruner may stop a winner; "
                "`pruner: none` with `convtune study confirm` is the safe setting"
            )
        return (
            f"no trial that reached did so where a forecast gave that less than {self.epsilon:g} "
            f"(the pruner's ε; {self.checked} trial(s) checked)"
        )

    def to_dict(self) -> dict[str, Any]:
        """The document ``convtune study forecasts --json`` prints; costs in the study's unit
        (samples, or seconds), ``null`` for never."""
        scale = step_scale(self.cost)

        def in_unit(cost: float) -> float | None:
            return cost / scale if math.isfinite(cost) else None

        return {
            "cost_unit": cost_unit(self.cost),
            "trained": self.trained,
            "checked": self.checked,
            "stopped_unknown": self.stopped,
            "no_planned_run": self.no_plan,
            "interval_level": self.level,
            "epsilon": self.epsilon,
            "cuts": [self.summary(cut).to_dict() for cut in self.cuts],
            "far_tail": self.far_tail,
            "verdict": self.verdict(),
            "checks": [
                {
                    "trial": c.trial,
                    "cut": c.cut,
                    "seen": in_unit(c.seen),
                    "end": in_unit(c.end),
                    "truth": in_unit(c.truth),
                    "estimate": in_unit(c.forecast.estimate),
                    "low": in_unit(c.forecast.low),
                    "high": in_unit(c.forecast.high),
                    "probability": None if math.isnan(c.forecast.probability) else c.forecast.probability,
                    "probability_by_truth": None
                    if math.isnan(c.probability_by_truth)
                    else c.probability_by_truth,
                }
                for c in self.checks
            ],
        }


def _planned_end(record: TrialRecord, max_cost: float) -> float:
    """Where the trial's run was to end, in report steps: its schedule's horizon, capped by
    ``max_cost`` (``inf`` when neither is known)."""
    schedule = LRSchedule.from_record(record.schedule)
    return max_cost if schedule is None else min(max_cost, float(schedule.horizon))


def _curve(trial: FrozenTrial) -> tuple[list[float], list[float]]:
    items = sorted((float(k), float(v)) for k, v in trial.intermediate_values.items() if v is not None)
    return [c for c, _ in items], [v for _, v in items]


@functools.lru_cache(maxsize=8)
def _pruner(
    target: str, cost: str, max_cost: float, options: tuple[tuple[str, float], ...], name: str
) -> TimeToTargetPruner:
    """The pruner a spec names, kept between calls: it caches what it learned from each finished
    trial, so the dashboard note, which checks the forecasts after every trial, fits each finished
    curve once, not once per trial."""
    from convtune.config.spec import StudySpec

    spec = StudySpec.model_construct(target=target, cost=cost, max_cost=max_cost, pruner=name)
    with warnings.catch_warnings():
        # A spec naming a deprecated pruner was warned about when its study ran; `best` and the
        # dashboard note, which call this, should not repeat it.
        warnings.simplefilter("ignore", FutureWarning)
        return TimeToTargetPruner.for_spec(spec, **dict(options))


def audit_forecasts(study: optuna.Study, spec: StudySpec, cuts: Sequence[float] = CUTS) -> ForecastAudit:
    """Check the forecasts the pruner would have made on the trials whose outcome is known.

    Trials that reached the target or ended their run (status ``reached`` or ``budget``,
    confirmation runs included) are cut at each share in ``cuts`` of their planned run and
    forecast from what they had reported by then; cuts past a trial's crossing, or before its
    first report, are skipped (nothing to forecast). Never trains anything; a few ms per check.
    """
    pruner = _pruner(
        spec.target, spec.cost, spec.max_cost, tuple(sorted(spec.pruner_options.items())), spec.pruner
    )
    max_cost = spec.max_cost * step_scale(spec.cost) if math.isfinite(spec.max_cost) else math.inf
    finished = study.get_trials(deepcopy=False, states=(TrialState.COMPLETE,))
    checks: list[ForecastCheck] = []
    trained = stopped = checked = no_plan = 0
    for trial in finished:
        record = TrialRecord.of(trial)
        if record.status in (TrialStatus.DUPLICATE, None):
            continue
        trained += 1
        if record.status is TrialStatus.STOPPED:
            stopped += 1
        if record.status not in (TrialStatus.REACHED, TrialStatus.BUDGET):
            continue
        end = _planned_end(record, max_cost)
        if not math.isfinite(end):
            no_plan += 1
            continue
        costs, values = _curve(trial)
        truth = time_to_target(costs, values, pruner.target)
        if not truth <= end:
            truth = math.inf
        before = len(checks)
        for cut in cuts:
            seen = [c for c in costs if c <= cut * end]
            if not seen or seen[-1] >= truth:
                continue
            forecast = pruner.forecast_prefix(study, trial, cut * end, finished=finished)
            checks.append(ForecastCheck(trial.number, cut, seen[-1], end, truth, forecast))
        checked += len(checks) > before
    notes = []
    if stopped:
        notes.append(
            f"{stopped} stopped trial(s) cannot be checked: their outcome is unknown, and a wrong "
            '"never" that stopped a winner leaves no evidence here'
        )
    if no_plan:
        notes.append(f"{no_plan} trial(s) had no planned run (no schedule reported, no max_cost)")
    return ForecastAudit(
        checks=checks,
        cuts=tuple(cuts),
        epsilon=pruner.epsilon,
        trained=trained,
        checked=checked,
        stopped=stopped,
        no_plan=no_plan,
        level=checks[0].forecast.level if checks else 0.8,
        cost=spec.cost,
        notes=notes,
    )
