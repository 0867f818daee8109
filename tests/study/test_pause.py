"""A stop is a pause: a stopped trial keeps its checkpoint, a repeat of its configuration trains
on from it (real engine, tiny digits, cost in samples), and the sampler is told a right-censored
value, never below the cost the trial spent."""

from __future__ import annotations

from pathlib import Path

import optuna
import pytest
from specs import digits_spec

from convtune.config.record import TrialRecord
from convtune.scaling import trial_points
from convtune.study import Objective, make_sampler, penalty
from convtune.study.withheld import StopsWithheld

SPACE = {
    "peak_lr": {"low": 1.0e-3, "high": 1.0e-1, "log": True},
    "horizon_samples": 4096,
    "schedule": "cosine",
    "micro_batch_size": 32,
    "optimizer": "adamw",
}


class StopTrialZeroAt(optuna.pruners.BasePruner):
    """Stops trial 0 at its first report at or past ``step`` (a stand-in for any pruner's stop)."""

    def __init__(self, step: int) -> None:
        self.step = step

    def prune(self, study: optuna.Study, trial: optuna.trial.FrozenTrial) -> bool:
        return trial.number == 0 and max(trial.intermediate_values, default=0) >= self.step


def run_at(study: optuna.Study, objective: Objective, lr: float) -> optuna.trial.FrozenTrial:
    # A sampled trial (an enqueued one always trains) that lands on ``lr``.
    study.sampler = optuna.samplers.PartialFixedSampler({"peak_lr": lr}, optuna.samplers.RandomSampler(0))
    study.optimize(objective, n_trials=1)
    return study.trials[-1]


@pytest.mark.filterwarnings("ignore::optuna.exceptions.ExperimentalWarning")
def test_a_repeat_of_a_stopped_configuration_trains_on_from_its_checkpoint(tmp_path: Path) -> None:
    spec = digits_spec(
        SPACE,
        target="accuracy>=0.99",  # not reached in 4,096 samples: every run goes to its end
        max_cost=4096,
        eval_every={"samples": 1024},
        checkpoint_dir=str(tmp_path / "checkpoints"),
    )
    study = optuna.create_study(storage=f"sqlite:///{tmp_path / 's.db'}", pruner=StopTrialZeroAt(2048))
    objective = Objective(spec)
    first = run_at(study, objective, 0.01)
    stopped = TrialRecord.of(first)
    assert stopped.status == "stopped"
    assert sorted(first.intermediate_values) == [1024, 2048]
    # Right-censored, not a verdict: at least the 2,048 samples it spent, below any penalty.
    assert first.value is not None and 2048 <= first.value < penalty(spec, 0.0)
    assert stopped.attrs["censored_at"] == 2048
    assert (tmp_path / "checkpoints" / study.study_name / "trial-0" / "checkpoint.pt").is_file()

    # Within duplicate_tolerance of the stopped trial: not its value again, but a run resumed there.
    second = run_at(study, objective, 0.01 * 1.05)
    repeat = TrialRecord.of(second)
    assert repeat.status != "duplicate" and repeat.attrs["resumed_from"] == 0
    assert repeat.attrs["resumed_from_checkpoint"] is True and repeat.attrs["resumed_at"] == 2048
    # One curve: the stopped trial's reports, then the rest of the run.
    curve = second.intermediate_values
    assert sorted(curve) == [1024, 2048, 3072, 4096]
    assert {s: curve[s] for s in (1024, 2048)} == first.intermediate_values
    assert repeat.attrs["samples"] == 4096
    assert not (tmp_path / "checkpoints" / study.study_name / "trial-0").exists()  # taken over
    # The scaling fits count the configuration once: the repeat carries the stopped run on.
    assert [point.number for point in trial_points(study, "samples")] == [second.number]

    # It continued the stopped run: the same curve as one run of that configuration unstopped.
    whole = optuna.create_study(storage=f"sqlite:///{tmp_path / 'w.db'}")
    unstopped = run_at(whole, objective, 0.01)
    assert list(unstopped.intermediate_values.values()) == pytest.approx(list(curve.values()), abs=1e-6)

    # A third repeat is a duplicate of the resumed trial (its outcome), not of the stopped one.
    third = TrialRecord.of(run_at(study, objective, 0.01))
    assert third.status == "duplicate" and third.attrs["duplicate_of"] == second.number


class StopTrialAt(optuna.pruners.BasePruner):
    """Stops trial ``number`` at its report at ``step`` (a stand-in for any pruner's stop)."""

    def __init__(self, number: int, step: int) -> None:
        self.number, self.step = number, step

    def prune(self, study: optuna.Study, trial: optuna.trial.FrozenTrial) -> bool:
        return trial.number == self.number and max(trial.intermediate_values, default=0) >= self.step


@pytest.mark.filterwarnings("ignore::optuna.exceptions.ExperimentalWarning")
def test_stop_value_after_reached_ranks_a_stop_after_every_trial_that_reached(tmp_path: Path) -> None:
    # stop_value: after_reached tells a stopped trial its right-censored forecast but never a
    # value sooner than the slowest trial that reached, so a sampler ranking by value puts it
    # after them (as Optuna's TPE ranks pruned trials after complete ones); still below the
    # penalty of a trial that ran out without reaching.
    values = {}
    for stop_value in ("forecast", "after_reached"):
        spec = digits_spec(
            SPACE,
            target="accuracy>=0.93",
            max_cost=4096,
            eval_every={"samples": 512},
            checkpoint_dir=str(tmp_path / stop_value),
            stop_value=stop_value,
        )
        study = optuna.create_study(pruner=StopTrialAt(1, 1024))
        objective = Objective(spec)
        reached = run_at(study, objective, 0.01)  # reaches at 2,550 samples
        stopped = run_at(study, objective, 0.03)  # stopped at 1,024: told sooner
        assert TrialRecord.of(reached).status == "reached", TrialRecord.of(reached).attrs
        assert TrialRecord.of(stopped).status == "stopped"
        values[stop_value] = (reached.value, stopped.value)
    (reached_value, censored), (reached_again, floored) = values["forecast"], values["after_reached"]
    assert reached_value == reached_again  # cost in samples: the same run both times
    assert censored < reached_value, values  # its forecast: sooner than the trial that reached
    assert floored == max(censored, reached_value)
    assert reached_value <= floored < penalty(spec, 0.0)


class ShownTrials(optuna.samplers.RandomSampler):
    """A random sampler that notes which finished trials each sampling call was shown."""

    def __init__(self) -> None:
        super().__init__(seed=0)
        self.shown: list[list[int]] = []

    def sample_independent(self, study, trial, param_name, param_distribution):  # type: ignore[no-untyped-def]
        finished = study.get_trials(deepcopy=False, states=(optuna.trial.TrialState.COMPLETE,))
        self.shown.append([t.number for t in finished])
        return super().sample_independent(study, trial, param_name, param_distribution)


@pytest.mark.filterwarnings("ignore::optuna.exceptions.ExperimentalWarning")
def test_stop_value_withheld_hides_stopped_trials_from_the_sampler(tmp_path: Path) -> None:
    # stop_value: withheld stores a stopped trial's censored forecast as usual (the dashboard and
    # `study best` read it) but the sampler samples as if the stopped trial had not run.
    spec = digits_spec(
        SPACE,
        target="accuracy>=0.93",
        max_cost=4096,
        eval_every={"samples": 512},
        checkpoint_dir=str(tmp_path),
        stop_value="withheld",
    )
    sampler = make_sampler(spec)
    assert isinstance(sampler, StopsWithheld)
    assert not isinstance(make_sampler(spec.model_copy(update={"stop_value": "forecast"})), StopsWithheld)

    shown = ShownTrials()
    study = optuna.create_study(sampler=StopsWithheld(shown), pruner=StopTrialAt(0, 1024))
    objective = Objective(spec)
    study.optimize(objective, n_trials=3)
    records = [TrialRecord.of(t) for t in study.trials]
    assert records[0].status == "stopped" and study.trials[0].value is not None  # stored, censored
    assert all(r.status != "stopped" for r in records[1:]), [r.status for r in records]
    # Trial 0 was shown nothing; trial 1, sampled after trial 0's stop, nothing either; trial 2
    # only trial 1.
    assert shown.shown == [[], [], [1]], shown.shown


@pytest.mark.parametrize(
    ("reach", "forecast_value", "survival_value"),
    [
        # Reaches at all with chance 0.4: the median given it reaches is 5,000; "never" is the
        # likelier outcome, so the survival median is the cap.
        ((0.0, 0.1, 0.2, 0.4), 5000.0, 10000.0),
        # Reaches with chance 0.9: both are finite, the survival median later (it counts the
        # tenth that never reaches).
        ((0.0, 0.1, 0.5, 0.9), 4000.0, 4 * 1000.0 + 4000.0 * (0.55 - 0.5) / 0.4),
    ],
)
def test_stop_value_censored_median_counts_never_as_an_outcome(
    reach: tuple[float, ...], forecast_value: float, survival_value: float
) -> None:
    from convtune.curves import Forecast
    from convtune.study.outcome import censored_value

    forecast = Forecast(
        3000.0,
        1500.0,
        8000.0,
        False,
        reach[-1],
        0.8,
        cdf_costs=(1000.0, 2000.0, 4000.0, 8000.0),
        cdf_probs=reach,
    )
    spec = digits_spec(SPACE, target="accuracy>=0.9", max_cost=10000)
    assert censored_value(forecast, 2000.0, spec) == pytest.approx(forecast_value)
    survival = spec.model_copy(update={"stop_value": "censored_median"})
    assert censored_value(forecast, 2000.0, survival) == pytest.approx(survival_value)
    assert censored_value(forecast, 2000.0, survival) >= censored_value(forecast, 2000.0, spec)
