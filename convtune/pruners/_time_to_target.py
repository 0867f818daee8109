from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any

import numpy as np
from optuna.pruners import BasePruner
from optuna.trial import FrozenTrial, TrialState

from convtune.config.target import Target
from convtune.curves import (
    CurveFit,
    CurvePrior,
    Forecast,
    LRSchedule,
    fit_curve,
    forecast_time_to_target,
    time_to_target,
)

if TYPE_CHECKING:
    import optuna

LR_SCHEDULE_ATTR = "lr_schedule"
STATUS_ATTR = "status"

_CacheKey = tuple[str, int, str]


@dataclass(frozen=True)
class PruneDecision:
    """Why :class:`TimeToTargetPruner` did (not) stop a trial at its latest report.

    ``reason`` is one of ``no-reports``, ``diverged``, ``max-cost``,
    ``slower-than-measured-best``, ``warm-up``, ``reached``, ``cannot-beat-incumbent``,
    ``cannot-reach-by-max-cost``, ``behind-the-field``, ``behind-at-equal-cost`` and
    ``may-beat-incumbent``.
    ``incumbent`` is the time-to-target to beat (``inf`` when there is none yet).
    """

    prune: bool
    reason: str
    forecast: Forecast | None
    incumbent: float


@dataclass(frozen=True)
class _Finished:
    """What one finished trial says; finished trials never change, so this is cached."""

    number: int
    time_to_target: float
    confident_by: float
    fit: CurveFit | None
    costs: np.ndarray
    gaps: np.ndarray  # distance to the target at each report (inf where non-finite)

    @property
    def final_gap(self) -> float:
        """The closest the trial came to the target."""
        return float(self.gaps.min()) if self.gaps.size else math.inf


class TimeToTargetPruner(BasePruner):
    """Pruner that stops a trial once its forecast time-to-target cannot beat the best one.

    Trials report the metric with the cost spent so far as the step
    (``trial.report(val_loss, step=samples_seen)``). At every report the trial's curve is
    extrapolated to the target by :func:`convtune.curves.forecast_time_to_target`, and the trial
    is pruned when the optimistic end (``low``) of that forecast cannot beat the incumbent:
    the best measured time-to-target among finished trials (or, before any reached it, the
    earliest cost by which a finished trial is confidently forecast to reach it). A trial
    whose optimistic end beats the incumbent is never pruned, however slow it looks so far:
    with a decaying learning rate most of the progress comes late. A trial that reports a
    non-finite value is pruned at once, and so is one that has spent the best measured
    time-to-target without reaching the target (it can no longer be the fastest).

    Unlike rung-based pruners it compares trials by *when they reach the target*, not by
    their values at equal steps, so a slow starter with a fast finish survives.

    With ``field_quantile`` set (a convtune spec's ``pruner: time_to_target_field`` sets 0.2),
    two weaker signals that agree also stop a trial: its central forecast (``estimate``, not
    ``low``) does not beat the incumbent (before there is one: does not reach the target by
    ``max_cost``), *and* at the cost it has spent it is further from the target than that
    quantile of finished trials were at the same cost. This relaxes the guarantee above: such a
    trial is stopped although its optimistic end may still beat the incumbent (a slow starter
    with a better floor than every finished trial is the case it gets wrong). Early forecasts
    rest on a prior from other configurations, so their intervals are wide; a trial that is both
    forecast to lose and behind the field is rarely the winner. On the recorded-curve replays
    it spent about a third less than the forecast rules alone, picking within 10% of the best in
    18 of 20 seeds against 19-20 (README, "Pruning and forecasts").

    With ``halving_quantile`` set (``pruner: time_to_target_halving`` sets ⅓), a trial is stopped,
    from its first report on, once it is further from the target than that quantile of finished
    trials were at the same cost, whatever its forecast: successive halving's equal-cost
    comparison, made at every report against every finished trial. It gives up the guarantee
    for a study that tries about twice as many configurations on the same budget: the best
    configurations lead the field from their first evaluations (on the recorded grids the
    fastest three ranked in the top 10 of 126 at the first). The forecast recorded for such a
    trial is floored at the incumbent plus ``margin``, where the forecast rules stop: the field
    says it is slower, whatever an extrapolation from a point or two says, and the sampler must
    not learn from it as from a trial that reached the target within the margin (floored at the
    incumbent itself, such trials tied with the best and TPE counted them among its best; on the
    recorded-grid replays the two floors picked alike within noise). Before any trial has
    reached the target the incumbent is
    infinite, so such a trial is recorded as not reaching it (a convtune study then scores it
    by its gap, like any unreached trial).

    If the trial has a user attr ``"lr_schedule"`` (:meth:`convtune.curves.LRSchedule.to_dict`,
    its LR over the whole planned run, as convtune studies set it), the forecast is
    schedule-aware; curves of finished trials (two or more) then also give the curve model a prior.

    The pruner keeps no state that changes its decisions: what it learns from a finished
    trial (its time-to-target, its curve fit) is cached per trial, since a finished trial
    never changes, and the same storage contents give the same decision in every worker.
    A decision refits nothing about finished trials it has seen before, and the prior uses at
    most ``prior_trials`` finished trials, so it costs about the same at trial 10 and 1,000.

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


            study = optuna.create_study(pruner=TimeToTargetPruner("val_loss<=1.9"))
            study.optimize(objective, n_trials=20)

    Args:
        target:
            The quality target, e.g. ``"val_loss<=1.9"`` or ``"accuracy>=0.95"``; the trial
            reports this metric.
        n_warmup_reports:
            No forecast-based decision before a trial has this many reports (non-finite
            values, ``max_cost`` and the measured best's time-to-target still prune). Two,
            since without a prior the forecaster needs three points anyway, and with one (from
            finished trials) two points were enough: on the recorded-curve replays
            (``benchmarks/pruning.py``) 2 spent 7% less than 3 for the same picks, and 1
            stopped many would-be winners.
        margin:
            Relative slack: prune only when ``low >= incumbent * (1 + margin)`` (or ``low`` beyond
            ``max_cost * (1 + margin)``). Larger is
            more patient.
        level:
            Probability of the forecast interval whose lower end is the optimistic end.
        max_cost:
            Per-trial cost cap: a trial is pruned once it reports a step at or past it, or
            when even its optimistic forecast lies beyond it. ``None`` for no cap.
        prior_trials:
            At most this many finished trials (the fastest, then the closest to the target)
            inform the curve prior (none until two have curves to fit); 0 switches the prior
            off.
        field_quantile:
            Also stop a trial not forecast to beat the incumbent whose distance to the target
            exceeds this quantile of the finished trials' distances at the same cost (each
            finished curve interpolated there; one that had reached counts as 0). ``None``
            (the default) keeps only the forecast rules.
        halving_quantile:
            Also stop a trial, at any report and whatever its forecast, whose distance to the
            target exceeds this quantile of the finished trials' distances at the same cost.
            ``None`` (the default) switches the rule off.
    """

    def __init__(
        self,
        target: Target | str,
        *,
        n_warmup_reports: int = 2,
        margin: float = 0.0,
        level: float = 0.8,
        max_cost: float | None = None,
        prior_trials: int = 20,
        field_quantile: float | None = None,
        halving_quantile: float | None = None,
    ) -> None:
        if n_warmup_reports < 0:
            raise ValueError(f"n_warmup_reports must be >= 0, got {n_warmup_reports}")
        if margin < 0:
            raise ValueError(f"margin must be >= 0, got {margin}")
        if not 0.0 < level < 1.0:
            raise ValueError(f"level must be in (0, 1), got {level}")
        if max_cost is not None and not max_cost > 0:
            raise ValueError(f"max_cost must be positive, got {max_cost}")
        if field_quantile is not None and not 0.0 <= field_quantile <= 1.0:
            raise ValueError(f"field_quantile must be in [0, 1], got {field_quantile}")
        if halving_quantile is not None and not 0.0 <= halving_quantile <= 1.0:
            raise ValueError(f"halving_quantile must be in [0, 1], got {halving_quantile}")
        self._target = Target.parse(target)
        self._n_warmup_reports = n_warmup_reports
        self._margin = margin
        self._level = level
        self._max_cost = max_cost
        self._prior_trials = prior_trials
        self._field_quantile = field_quantile
        self._halving_quantile = halving_quantile
        self._finished: dict[_CacheKey, _Finished] = {}
        self._priors: dict[tuple[_CacheKey, ...], CurvePrior | None] = {}
        self.n_fits = 0
        """Finished trials analysed so far (cache misses); for tests and benchmarks."""

    @property
    def target(self) -> Target:
        return self._target

    def prune(self, study: optuna.study.Study, trial: FrozenTrial) -> bool:
        return self.decide(study, trial).prune

    def decide(self, study: optuna.study.Study, trial: FrozenTrial) -> PruneDecision:
        """The decision :meth:`prune` takes, with its reason, forecast and incumbent."""
        return self._decide(study.study_name, trial, self._finished_trials(study))

    def forecast_trial(self, study: optuna.study.Study, trial: FrozenTrial | optuna.trial.Trial) -> Forecast:
        """The forecast a decision on ``trial`` would use (e.g. to record on a stopped trial)."""
        frozen = _frozen(study, trial)
        summaries = self._summaries(study.study_name, self._finished_trials(study))
        return self._forecast(frozen, self._prior(summaries))

    def _finished_trials(self, study: optuna.study.Study) -> list[FrozenTrial]:
        return study.get_trials(deepcopy=False, states=(TrialState.COMPLETE,))

    def _decide(self, study_name: str, trial: FrozenTrial, finished: Sequence[FrozenTrial]) -> PruneDecision:
        costs, values = _curve(trial)
        if costs.size == 0:
            return PruneDecision(False, "no-reports", None, math.inf)
        if not np.all(np.isfinite(values)):
            return PruneDecision(True, "diverged", None, math.inf)
        if self._max_cost is not None and costs[-1] >= self._max_cost:
            return PruneDecision(True, "max-cost", None, math.inf)
        summaries = self._summaries(study_name, finished)
        incumbent = _incumbent(summaries)
        if costs[-1] >= _measured(summaries) and not self._target.is_reached(float(values[-1])):
            # Exact, so no margin and no warm-up: a trial that has spent what the measured best
            # needed without reaching the target can only reach it later, and cannot be picked.
            return PruneDecision(True, "slower-than-measured-best", None, incumbent)
        gap = self._target.gap(float(values[-1]))
        if self._halving_quantile is not None and gap > self._field_at(
            summaries, float(costs[-1]), self._halving_quantile
        ):
            forecast = self._forecast(trial, self._prior(summaries), costs, values)
            # Floored where the forecast rules stop a trial (the incumbent plus the margin): the
            # sampler learns from the recorded value, and a trial the field put behind must not
            # rank with the incumbent or above a trial that reached within the margin. The floor
            # holds with no incumbent too (inf): behind the field, "never" is recorded.
            floor = incumbent * (1.0 + self._margin)
            if forecast.estimate < floor:
                forecast = replace(forecast, estimate=floor, high=max(forecast.high, floor))
            return PruneDecision(True, "behind-at-equal-cost", forecast, incumbent)
        if costs.size < self._n_warmup_reports:
            return PruneDecision(False, "warm-up", None, incumbent)

        forecast = self._forecast(trial, self._prior(summaries), costs, values)
        if forecast.reached:
            return PruneDecision(False, "reached", forecast, incumbent)
        if forecast.diverged:
            return PruneDecision(True, "diverged", forecast, incumbent)
        if math.isfinite(incumbent) and forecast.low >= incumbent * (1.0 + self._margin):
            return PruneDecision(True, "cannot-beat-incumbent", forecast, incumbent)
        # The same slack as against the incumbent: early forecasts lean on a prior from other
        # configurations, and a trial stopped wrongly here can never become the incumbent.
        if self._max_cost is not None and forecast.low > self._max_cost * (1.0 + self._margin):
            return PruneDecision(True, "cannot-reach-by-max-cost", forecast, incumbent)
        if self._field_quantile is not None:
            bar = incumbent if math.isfinite(incumbent) else (self._max_cost or math.inf)
            # The field is read only for a trial forecast to lose: most reports stop short of it.
            if forecast.estimate >= bar and gap > self._field_at(
                summaries, float(costs[-1]), self._field_quantile
            ):
                return PruneDecision(True, "behind-the-field", forecast, incumbent)
        return PruneDecision(False, "may-beat-incumbent", forecast, incumbent)

    def _forecast(
        self,
        trial: FrozenTrial,
        prior: CurvePrior | None,
        costs: np.ndarray | None = None,
        values: np.ndarray | None = None,
    ) -> Forecast:
        if costs is None or values is None:
            costs, values = _curve(trial)
        schedule = _schedule(trial)
        horizon = schedule.horizon if schedule is not None else self._max_cost
        return forecast_time_to_target(
            costs,
            values,
            self._target,
            schedule=schedule,
            prior=prior,
            horizon=horizon,
            level=self._level,
        )

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
        confident_by = ttt
        # A trial this pruner stopped (COMPLETE with an extrapolated value, as convtune ends
        # them) has a truncated curve: its forecast must not become the incumbent, nor its
        # early-prefix fit the prior (in replays that made stopped trials stop the next ones).
        stopped = trial.user_attrs.get(STATUS_ATTR) == "stopped"
        if not math.isfinite(ttt) and costs.size and not stopped:
            confident_by = self._forecast(trial, None, costs, values).high
        fit = None
        if self._prior_trials > 0 and costs.size and not stopped:
            fit = fit_curve(costs, values, self._target, _schedule(trial))
        gaps = np.array([self._target.gap(float(v)) for v in values])
        return _Finished(trial.number, ttt, confident_by, fit, costs, gaps)

    def _field_at(self, summaries: Sequence[_Finished], cost: float, quantile: float) -> float:
        """The ``quantile`` of the finished trials' distances to the target at ``cost``.

        Only finished trials whose curve got that far (or reached the target before it) count:
        the survivors of a study are its better trials, so the field gets no easier with cost.
        """
        field = []
        for s in summaries:
            if math.isfinite(s.time_to_target) and s.time_to_target <= cost:
                field.append(0.0)
            elif s.costs.size and s.costs[-1] >= cost:
                at = float(np.interp(cost, s.costs, s.gaps))
                field.append(at if not math.isnan(at) else math.inf)
        if not field:
            return math.inf
        return float(np.quantile(field, quantile))

    def _prior(self, summaries: Sequence[_Finished]) -> CurvePrior | None:
        if self._prior_trials <= 0:
            return None
        usable = [s for s in summaries if s.fit is not None]
        if len(usable) < 2:
            # One curve says nothing of how curves differ between configurations: its spread is
            # only the floors, set by its own late wiggle. In a demo study a lone LAMB curve that
            # levelled off at 2.19 (±0.016) made the next trial, AdamW two evaluations from the
            # target, "never reach" it, and stopped it.
            return None
        usable.sort(key=lambda s: (s.time_to_target, s.final_gap, s.number))
        chosen = usable[: self._prior_trials]
        key = tuple((s.fit.kind, s.number, s.fit.params) for s in chosen)  # type: ignore[union-attr]
        if key not in self._priors:
            if len(self._priors) > 1024:
                self._priors.clear()
            self._priors[key] = CurvePrior.from_fits([s.fit for s in chosen])  # type: ignore[misc]
        return self._priors[key]


def _measured(summaries: Sequence[_Finished]) -> float:
    return min((s.time_to_target for s in summaries), default=math.inf)


def _incumbent(summaries: Sequence[_Finished]) -> float:
    measured = _measured(summaries)
    if math.isfinite(measured):
        return measured
    return min((s.confident_by for s in summaries), default=math.inf)


def _curve(trial: FrozenTrial) -> tuple[np.ndarray, np.ndarray]:
    items = sorted(trial.intermediate_values.items())
    costs = np.array([float(step) for step, _ in items])
    values = np.array([float(v) if v is not None else math.nan for _, v in items])
    return costs, values


def _schedule(trial: FrozenTrial) -> LRSchedule | None:
    data: Any = trial.user_attrs.get(LR_SCHEDULE_ATTR)
    if not isinstance(data, dict):
        return None
    try:
        return LRSchedule.from_dict(data)
    except (KeyError, TypeError, ValueError):
        return None


def _frozen(study: optuna.study.Study, trial: FrozenTrial | optuna.trial.Trial) -> FrozenTrial:
    if isinstance(trial, FrozenTrial):
        return trial
    return study._storage.get_trial(trial._trial_id)
