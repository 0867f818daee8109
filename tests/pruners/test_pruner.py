"""TimeToTargetPruner in real Optuna studies, on synthetic curves (no training)."""

from __future__ import annotations

import copy
import json
import math
import multiprocessing
import time
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import optuna
import pytest
from optuna.storages import JournalStorage
from optuna.storages.journal import JournalFileBackend
from optuna.trial import FrozenTrial, TrialState

from convtune.curves import LRSchedule, time_to_target
from convtune.pruners import LR_SCHEDULE_ATTR, PruneDecision, TimeToTargetPruner

optuna.logging.set_verbosity(optuna.logging.WARNING)

TARGET = "val_loss<=1.9"
EVERY = 1000


def curve(speed: float, cost: int, floor: float = 1.5) -> float:
    """Power-law loss: reaches 1.9 at cost 100 / speed when floor is 1.5."""
    return floor + 4.0 * (speed * cost) ** -0.5


def make_objective(n_reports: int = 40, nan_at: int | None = None, pause: float = 0.0):  # noqa: ANN201
    def objective(trial: optuna.Trial) -> float:
        speed = trial.suggest_float("speed", 1e-3, 1e-1, log=True)
        floor = trial.suggest_float("floor", 1.0, 2.5)
        costs, values = [], []
        for i in range(1, n_reports + 1):
            cost = i * EVERY
            value = math.nan if nan_at == i and speed < 0.01 else curve(speed, cost, floor)
            costs.append(cost)
            values.append(value)
            trial.report(value, step=cost)
            time.sleep(pause)  # lets concurrent workers interleave their reports
            if value <= 1.9:
                return time_to_target(costs, values, TARGET)
            if trial.should_prune():
                raise optuna.TrialPruned()
        return 1e9

    return objective


def run(pruner: TimeToTargetPruner, params: list[dict[str, float]], **kw: object) -> optuna.Study:
    study = optuna.create_study(pruner=pruner, sampler=optuna.samplers.RandomSampler(seed=0))
    for p in params:
        study.enqueue_trial(p)
    study.optimize(make_objective(**kw), n_trials=len(params))  # type: ignore[arg-type]
    return study


def last_step(t: FrozenTrial) -> int:
    return max(t.intermediate_values)


def test_diverged_trial_is_pruned_at_once() -> None:
    pruner = TimeToTargetPruner(TARGET, n_warmup_reports=5)
    study = run(pruner, [{"speed": 0.005, "floor": 1.5}], nan_at=1)
    (trial,) = study.trials
    assert trial.state == TrialState.PRUNED and last_step(trial) == EVERY


def test_hopeless_trial_is_pruned_early_and_fast_ones_survive() -> None:
    pruner = TimeToTargetPruner(TARGET)
    # Incumbent reaches at 100 / 0.05 = 2000; a 20x slower trial and one that plateaus above
    # the target are stopped soon after warm-up; a faster one is never stopped.
    study = run(
        pruner,
        [
            {"speed": 0.05, "floor": 1.5},
            {"speed": 0.0025, "floor": 1.5},
            {"speed": 0.05, "floor": 2.2},
            {"speed": 0.1, "floor": 1.5},
        ],
    )
    incumbent, slow, plateau, fast = study.trials
    assert incumbent.state == TrialState.COMPLETE
    assert slow.state == TrialState.PRUNED and last_step(slow) <= 3 * EVERY
    assert plateau.state == TrialState.PRUNED and last_step(plateau) <= 3 * EVERY
    assert fast.state == TrialState.COMPLETE and fast.value < incumbent.value


def test_trial_whose_optimistic_forecast_beats_the_incumbent_is_never_pruned() -> None:
    pruner = TimeToTargetPruner(TARGET)
    study = optuna.create_study(pruner=pruner)
    study.enqueue_trial({"speed": 0.01, "floor": 1.5})  # incumbent: reaches at 10,000
    study.optimize(make_objective(), n_trials=1)
    # Replay every prefix of many curves: a pruned prefix must have low >= incumbent, and a
    # trial that truly reaches before the incumbent must never be pruned.
    for speed in np.geomspace(0.002, 0.05, 15):
        trial = copy.deepcopy(study.trials[0])
        trial.intermediate_values = {}
        for i in range(1, 40):
            trial.intermediate_values[i * EVERY] = curve(float(speed), i * EVERY)
            d = pruner.decide(study, trial)
            if d.forecast is not None and d.forecast.low < d.incumbent:
                assert not d.prune
            if 100 / speed < 0.95 * 10_000:
                assert not d.prune, (speed, i, d)
            if d.prune or d.reason == "reached":
                break


def test_a_trial_that_has_spent_the_measured_best_without_reaching_is_pruned_whatever_the_margin() -> None:
    pruner = TimeToTargetPruner(TARGET, margin=10.0, n_warmup_reports=50, exact_margin=0.0)
    study = run(pruner, [{"speed": 0.05, "floor": 1.5}])  # measured best: reaches at 2,000
    best = study.trials[0]
    assert best.value == pytest.approx(2000, rel=0.05)
    probe = copy.deepcopy(best)
    probe.intermediate_values = {EVERY: curve(0.01, EVERY)}
    assert not pruner.decide(study, probe).prune  # in warm-up, and the margin is huge
    probe.intermediate_values[2 * EVERY] = curve(0.01, 2 * EVERY)  # not reached at 2,000
    decision = pruner.decide(study, probe)
    assert decision.prune and decision.reason == "slower-than-measured-best", decision
    # Only a measured time-to-target is exact: a confident forecast of an unreached trial is not.
    forecast_only = run(
        TimeToTargetPruner(TARGET, margin=10.0, n_warmup_reports=50, exact_margin=0.0),
        [{"speed": 0.05, "floor": 2.2}],
    )
    assert not forecast_only.pruner.decide(forecast_only, probe).prune  # type: ignore[attr-defined]


def test_exact_margin_lets_a_trial_run_past_a_possibly_lucky_measured_best() -> None:
    """One seed's time-to-target can be lucky: with ``exact_margin`` the exact stop waits until
    the trial has spent that much more than the measured best, so a configuration reaching
    within it is measured and can be confirmed."""
    pruner = TimeToTargetPruner(TARGET, margin=10.0, n_warmup_reports=50)  # the default: 0.2
    study = run(pruner, [{"speed": 0.05, "floor": 1.5}])  # measured best: reaches at ~2,000
    best = study.trials[0].value
    probe = copy.deepcopy(study.trials[0])
    slow = 0.01  # reaches at 10,000: never within the margin
    probe.intermediate_values = {c: curve(slow, c) for c in (EVERY, 2 * EVERY)}
    assert 2 * EVERY >= best and not pruner.decide(study, probe).prune  # past 1x, before 1.2x
    probe.intermediate_values[int(1.2 * best) + 1] = curve(slow, int(1.2 * best) + 1)
    decision = pruner.decide(study, probe)
    assert decision.prune and decision.reason == "slower-than-measured-best", decision
    with pytest.raises(ValueError, match="exact_margin"):
        TimeToTargetPruner(TARGET, exact_margin=-0.1)


def test_default_warm_up_decides_from_the_second_report_when_finished_trials_give_a_prior() -> None:
    # The main budget alone (the second, for trials behind the median, and require_behind have
    # tests of their own).
    pruner = TimeToTargetPruner(TARGET, epsilon_behind=0.0, require_behind=False)
    # The incumbent reaches at ~3,300: the probe's second report (2,000) comes before it.
    study = run(pruner, [{"speed": s, "floor": 1.5} for s in (0.02, 0.025, 0.03)])
    probe = copy.deepcopy(study.trials[0])
    probe.intermediate_values = {EVERY: curve(0.001, EVERY)}  # 30x slower than the incumbent
    assert pruner.decide(study, probe).reason == "warm-up"
    probe.intermediate_values[2 * EVERY] = curve(0.001, 2 * EVERY)
    decision = pruner.decide(study, probe)
    # The 2nd report is the first rung: the decision rests on the calibrated chance of reaching
    # the target by the incumbent's time, compared with epsilon / (its rungs).
    assert decision.reason in ("cannot-beat-incumbent", "may-beat-incumbent"), decision
    assert 0.0 <= decision.probability <= 1.0 and decision.threshold == pytest.approx(pruner.epsilon / 1)
    assert decision.prune == (decision.probability < decision.threshold)
    # The 3rd report is between rungs (2,000 · 2 = 4,000 is the next): no forecast-based decision.
    probe.intermediate_values[3 * EVERY] = curve(0.001, 3 * EVERY)
    assert pruner.decide(study, probe).reason in ("between-rungs", "cannot-beat-incumbent")
    for i in (3, 4):
        probe.intermediate_values[i * EVERY] = curve(0.001, i * EVERY)
        decision = pruner.decide(study, probe)
        if decision.prune:
            break
    assert decision.prune and decision.reason in ("cannot-beat-incumbent", "slower-than-measured-best"), (
        decision
    )


def test_no_trial_runs_past_max_cost() -> None:
    pruner = TimeToTargetPruner(TARGET, max_cost=5 * EVERY)
    params = [{"speed": s, "floor": 1.5} for s in (0.005, 0.01, 0.05, 0.002)]
    study = run(pruner, params)
    for t in study.trials:
        assert last_step(t) <= 5 * EVERY
        if t.state == TrialState.COMPLETE:
            assert t.value <= 5 * EVERY


def test_finished_trials_are_analysed_once() -> None:
    pruner = TimeToTargetPruner(TARGET)
    study = run(pruner, [{"speed": s, "floor": 1.5} for s in (0.02, 0.05, 0.01, 0.08, 0.03)])
    n_complete = len(study.get_trials(states=(TrialState.COMPLETE,)))
    assert pruner.n_fits == n_complete
    probe = copy.deepcopy(study.trials[0])
    probe.intermediate_values = {i * EVERY: curve(0.04, i * EVERY) for i in range(1, 5)}
    for _ in range(20):
        pruner.decide(study, probe)
    assert pruner.n_fits == n_complete


def test_lr_schedule_attr_makes_forecasts_schedule_aware() -> None:
    n, batch = 400, 100
    lrs = 0.01 * 0.5 * (1 + np.cos(np.pi * np.arange(n) / n))
    schedule = LRSchedule.from_steps(lrs, batch).to_dict()

    def objective(trial: optuna.Trial) -> float:
        trial.set_user_attr(LR_SCHEDULE_ATTR, schedule)
        peak = trial.suggest_float("peak", 0.5, 2.0)
        s1 = np.cumsum(lrs * peak)
        loss = 1.5 + 0.5 * s1**-0.5 - 0.3 * (1 - lrs / lrs[0])
        for i in range(10, n + 1, 10):
            trial.report(float(loss[i - 1]), step=i * batch)
            if trial.should_prune():
                raise optuna.TrialPruned()
        return float(loss[-1])

    pruner = TimeToTargetPruner("val_loss<=1.4")
    study = optuna.create_study(pruner=pruner, sampler=optuna.samplers.RandomSampler(seed=1))
    study.optimize(objective, n_trials=3)
    running = copy.deepcopy(study.trials[0])
    running.intermediate_values = dict(list(running.intermediate_values.items())[:8])
    forecast = pruner.forecast_trial(study, running)
    assert forecast.model == "annealing"
    prior = pruner._prior(pruner._summaries(study.study_name, study.get_trials()))
    assert prior is not None and prior.kind == "annealing"


# --- several worker processes on one journal storage --------------------------------------


class RecordingPruner(TimeToTargetPruner):
    """Logs, per decision, the finished trials it saw and what it decided."""

    def __init__(self, log: Path) -> None:
        super().__init__(TARGET)
        self._log = log
        self._seen: list[int] = []

    def _finished_trials(self, study: optuna.study.Study) -> list[FrozenTrial]:
        finished = super()._finished_trials(study)
        self._seen = sorted(t.number for t in finished)
        return finished

    def prune(self, study: optuna.study.Study, trial: FrozenTrial) -> bool:
        decision = self.decide(study, trial)
        record = {
            "trial": trial.number,
            "step": max(trial.intermediate_values, default=-1),
            "finished": self._seen,
            "prune": decision.prune,
        }
        with self._log.open("a") as fh:
            fh.write(json.dumps(record) + "\n")
        return decision.prune


def _worker(path: str, log: str, seed: int) -> None:
    storage = JournalStorage(JournalFileBackend(path))
    study = optuna.load_study(
        study_name="s",
        storage=storage,
        pruner=RecordingPruner(Path(log)),
        sampler=optuna.samplers.RandomSampler(seed=seed),
    )
    study.optimize(make_objective(n_reports=15, nan_at=3, pause=0.002), n_trials=4)


def test_concurrent_workers_decide_as_a_fresh_pruner_would(tmp_path: Path) -> None:
    path = str(tmp_path / "journal.log")
    storage = JournalStorage(JournalFileBackend(path))
    study = optuna.create_study(study_name="s", storage=storage)
    # Fast and slow, reaching and plateauing, one diverging (speed < 0.01 reports NaN at 3).
    for speed, floor in [
        (0.02, 1.5), (0.05, 1.5), (0.012, 1.5), (0.08, 1.5), (0.03, 2.2), (0.004, 1.5),
        (0.1, 1.5), (0.06, 1.5), (0.015, 1.5), (0.09, 1.5), (0.04, 1.5), (0.07, 1.6),
    ]:  # fmt: skip
        study.enqueue_trial({"speed": speed, "floor": floor})
    ctx = multiprocessing.get_context("fork")
    procs = [ctx.Process(target=_worker, args=(path, str(tmp_path / f"log{k}.jsonl"), k)) for k in range(3)]
    for p in procs:
        p.start()
    for p in procs:
        p.join(timeout=60)
        assert p.exitcode == 0

    # Each worker's pruner met finished trials in its own order and cached them as it went.
    # Replay every decision with one fresh pruner on exactly what that worker saw: the
    # trial's reports up to that step and the set of finished trials at that moment.
    study = optuna.load_study(study_name="s", storage=JournalStorage(JournalFileBackend(path)))
    trials = {t.number: t for t in study.get_trials()}
    assert len(trials) == 12
    records = [json.loads(line) for k in range(3) for line in (tmp_path / f"log{k}.jsonl").open()]
    # Every trial is decided on at least once, except trial 6, which reaches at its first report
    # (how many decisions each gets depends on how the workers interleave).
    assert {r["trial"] for r in records} == set(trials) - {6}
    assert {True, False} <= {r["prune"] for r in records}
    # Decisions against different sets of finished trials: trials 3 and on start only once a
    # worker's first trial has finished (how many sets depends on how the workers interleave).
    assert len({tuple(r["finished"]) for r in records}) >= 2
    fresh = TimeToTargetPruner(TARGET)
    for r in records:
        trial = copy.deepcopy(trials[r["trial"]])
        trial.intermediate_values = {s: v for s, v in trial.intermediate_values.items() if s <= r["step"]}
        finished = [trials[n] for n in r["finished"]]
        assert all(t.state == TrialState.COMPLETE for t in finished)
        decision = fresh._decide("s", trial, finished)
        assert decision.prune == r["prune"], r


@pytest.mark.parametrize(
    "bad",
    [{"margin": -1}, {"level": 1.5}, {"max_cost": 0}, {"rung_ratio": 1.0}, {"epsilon": 1.0}],
)
def test_invalid_arguments(bad: dict[str, float]) -> None:
    with pytest.raises(ValueError):
        TimeToTargetPruner(TARGET, **bad)  # type: ignore[arg-type]


def test_trials_it_stopped_set_neither_the_incumbent_nor_the_prior() -> None:
    # A trial stopped by the pruner ends COMPLETE with status "stopped" (convtune's outcome
    # rule); its truncated curve must not give a "confident" incumbent to prune others by.
    pruner = TimeToTargetPruner(TARGET)
    study = optuna.create_study(pruner=pruner)
    costs = [EVERY * i for i in range(1, 7)]
    stopped = optuna.trial.create_trial(
        value=3000.0,
        intermediate_values={c: curve(0.05, c) + 0.3 for c in costs},
        user_attrs={"status": "stopped", "extrapolated": True},
        distributions={},
        params={},
    )
    study.add_trial(stopped)
    trial = study.ask()
    for c in costs[:4]:
        trial.report(curve(0.01, c), step=c)
    decision = pruner.decide(study, study._storage.get_trial(trial._trial_id))
    assert decision.incumbent == math.inf and not decision.prune
    assert pruner._prior(pruner._summaries(study.study_name, pruner._finished_trials(study))) is None


def test_one_finished_curve_gives_no_prior() -> None:
    # Recorded from a `make demo` study (wallclock, ms; target val_loss<=2.1, cap 20 s): a LAMB
    # trial ran to the cap levelling off near 2.14, then an AdamW trial was 0.11 from the target
    # after two evaluations (it reached it at its third in the other runs). A prior fitted to the
    # lone LAMB curve (floor 2.19 ± 0.016) forecast "never" and stopped it.
    target, cap = "val_loss<=2.1", 20_000.0
    pruner = TimeToTargetPruner(target, max_cost=cap, margin=0.25)
    study = optuna.create_study(pruner=pruner)
    lamb_costs = [2990, 6032, 8817, 11458, 13974, 16629, 19335, 20041]
    lamb_losses = [4.3896, 3.1330, 2.5542, 2.4380, 2.2993, 2.1813, 2.1634, 2.1357]
    lamb_schedule = {
        "costs": [93.4, 5793.1, 11305.9, 16818.8, 22331.6, 27844.4, 33357.2, 38870.0, 39337.2],
        "lrs": [1.434e-4, 8.890e-3, 8.550e-2, 8.890e-3, 4.719e-2, 8.890e-3, 2.804e-2, 8.890e-3, 9.702e-3],
    }
    study.add_trial(
        optuna.trial.create_trial(
            value=26_194.0,
            intermediate_values=dict(zip(lamb_costs, lamb_losses, strict=True)),
            user_attrs={"status": "budget", LR_SCHEDULE_ATTR: lamb_schedule},
            distributions={},
            params={},
        )
    )
    trial = study.ask()
    trial.set_user_attr(LR_SCHEDULE_ATTR, {"costs": [23.9, 36480.9], "lrs": [5.705e-3, 5.705e-3]})
    trial.report(2.3920, step=3062)
    trial.report(2.2110, step=6042)
    decision = pruner.decide(study, study._storage.get_trial(trial._trial_id))
    assert not decision.prune, decision.reason
    assert pruner._prior(pruner._summaries(study.study_name, pruner._finished_trials(study))) is None


def three_finished_trials() -> tuple[optuna.Study, float]:
    """Three trials run to the target (the fastest at 10,000), and that incumbent."""
    study = optuna.create_study(pruner=optuna.pruners.NopPruner())
    for speed in (0.01, 0.008, 0.006):
        study.enqueue_trial({"speed": speed, "floor": 1.5})
    study.optimize(make_objective(), n_trials=3)
    incumbent = min(t.value for t in study.trials)
    assert incumbent == pytest.approx(10_000, rel=0.05)
    return study, incumbent


def probe(
    pruner: TimeToTargetPruner, study: optuna.Study, speed: float, floor: float
) -> Iterator[tuple[int, FrozenTrial, PruneDecision]]:
    """A trial of ``speed`` and ``floor`` reporting one evaluation after another, each decided,
    until it is stopped or reaches the target."""
    trial = copy.deepcopy(study.trials[0])
    trial.intermediate_values = {}
    for i in range(1, 40):
        trial.intermediate_values[i * EVERY] = curve(speed, i * EVERY, floor)
        decision = pruner.decide(study, trial)
        yield i, trial, decision
        if decision.prune or decision.reason == "reached":
            return


def test_convtune_spec_keys_of_the_equal_cost_rules_are_deprecated_and_run_the_default_rule() -> None:
    # The field and halving rules stopped most trials of the near-best configurations on
    # held-out corpus workloads (docs/benchmarks.md), so their spec keys now warn and run the
    # default pruner: a near miss is not stopped behind the field, nor at its first report.
    from convtune.config.spec import StudySpec
    from convtune.study import make_pruner

    study = run(TimeToTargetPruner(TARGET), [{"speed": s, "floor": 1.5} for s in (0.01, 0.008, 0.006)])
    near_miss = copy.deepcopy(study.trials[0])  # 16% slower than the incumbent, 2 reports
    near_miss.intermediate_values = {c * EVERY: curve(0.0086, c * EVERY) for c in (1, 2)}
    spec = {"workload": "digits", "space": {"peak_lr": 0.01}, "target": TARGET, "cost": "samples"}
    strict = make_pruner(StudySpec.from_dict(spec))
    assert strict.decide(study, near_miss).reason == "may-beat-incumbent"  # type: ignore[attr-defined]
    for deprecated in ("time_to_target_field", "time_to_target_halving"):
        with pytest.warns(FutureWarning, match="deprecated"):
            pruner = make_pruner(StudySpec.from_dict({**spec, "pruner": deprecated}))
        assert pruner.decide(study, near_miss).reason == "may-beat-incumbent"  # type: ignore[attr-defined]
        first = copy.deepcopy(near_miss)
        first.intermediate_values = {EVERY: curve(0.0083, EVERY)}  # 20% slower, its first report
        assert pruner.decide(study, first).reason == "warm-up"  # type: ignore[attr-defined]


def test_spec_median_pruner_keeps_the_best_trials_of_a_maximised_metric() -> None:
    # The study minimises time-to-target while trials report accuracy: Optuna's MedianPruner on
    # the raw values read the study's direction and stopped the *most* accurate trials.
    from convtune.config.spec import StudySpec
    from convtune.study import make_pruner

    spec = {"workload": "digits", "space": {"peak_lr": 0.01}, "target": "accuracy>=0.9", "cost": "samples"}
    pruner = make_pruner(StudySpec.from_dict({**spec, "pruner": "median"}))
    study = optuna.create_study(pruner=pruner)
    for level in (0.5, 0.6, 0.7):  # three finished trials, accuracy rising to `level`
        study.add_trial(
            optuna.trial.create_trial(
                value=1e6,
                intermediate_values={c: level * c / 4096 for c in (1024, 2048, 4096)},
                distributions={},
                params={},
            )
        )
    verdicts = {}
    for accuracy in (0.1, 0.8):  # at 1,024 samples: far behind, and ahead of every finished trial
        trial = study.ask()
        trial.report(accuracy, step=1024)
        verdicts[accuracy] = trial.should_prune()
        study.tell(trial, state=TrialState.FAIL)
    assert verdicts == {0.1: True, 0.8: False}


def test_spec_hyperband_pruner_judges_the_distance_to_the_target_over_a_whole_run() -> None:
    # pruner: hyperband is Optuna's HyperbandPruner on the distance to the target, from the first
    # evaluation, with a run's evaluations from the spec where it says (cost and evaluations in
    # samples): what the tuner replays measured (docs/benchmarks.md).
    from convtune.config.spec import StudySpec
    from convtune.pruners import GapPruner
    from convtune.study import make_pruner

    spec = {"workload": "digits", "space": {"peak_lr": 0.01}, "target": "accuracy>=0.9", "cost": "samples"}
    capped = make_pruner(StudySpec.from_dict({**spec, "pruner": "hyperband", "max_cost": 40_000}))
    assert isinstance(capped, GapPruner) and isinstance(capped.inner, optuna.pruners.HyperbandPruner)
    assert capped.inner._max_resource == 10  # 40,000 samples, an evaluation every 4,096
    timed = make_pruner(StudySpec.from_dict({**spec, "pruner": "hyperband", "cost": "wallclock"}))
    assert timed.inner._max_resource == "auto"  # type: ignore[attr-defined]

    study = optuna.create_study(study_name="hyperband-spec", pruner=capped)
    study.add_trial(  # a whole run, so Hyperband's brackets are set up
        optuna.trial.create_trial(
            value=1e6,
            intermediate_values={k * 4096: 0.05 * k for k in range(1, 11)},
            distributions={},
            params={},
        )
    )
    verdicts: list[tuple[float, bool]] = []
    for n in range(40):
        # Accuracy at the first evaluation: most trials far behind, every fifth a new best.
        accuracy = 0.3 + 0.01 * n if n % 5 == 0 else 0.05
        trial = study.ask()
        trial.report(accuracy, step=4096)
        verdicts.append((accuracy, trial.should_prune()))
        study.tell(trial, state=TrialState.PRUNED if verdicts[-1][1] else TrialState.FAIL)
    assert any(stopped for accuracy, stopped in verdicts if accuracy == 0.05), "far-behind trials are stopped"
    assert not any(stopped for accuracy, stopped in verdicts if accuracy > 0.05), (
        "a new best is never stopped"
    )


def test_spec_pruner_options_reach_the_pruner_and_name_its_arguments() -> None:
    # pruner_options: the time_to_target pruner's keyword arguments from the spec (a YAML user's
    # only way to set epsilon); a spec without them stores exactly as before the field existed.
    import inspect

    from convtune.config.spec import PRUNER_OPTIONS, StudySpec
    from convtune.study import make_pruner

    spec = {"workload": "digits", "space": {"peak_lr": 0.01}, "target": TARGET, "cost": "samples"}
    options = {"epsilon": 0.05, "epsilon_behind": 0.1, "n_warmup_reports": 3, "require_behind": True}
    with_options = StudySpec.from_dict({**spec, "pruner_options": options})
    pruner = make_pruner(with_options)
    assert isinstance(pruner, TimeToTargetPruner) and pruner.epsilon == 0.05
    assert pruner._epsilon_behind == 0.1 and pruner._n_warmup_reports == 3
    assert pruner._require_behind is True
    assert StudySpec.from_dict(with_options.to_dict()) == with_options
    assert "pruner_options" not in StudySpec.from_dict(spec).to_dict()
    keywords = set(inspect.signature(TimeToTargetPruner).parameters) - {"target", "max_cost"}
    assert set(PRUNER_OPTIONS) == keywords


def late_bloomer_trial() -> FrozenTrial:
    """A finished trial flat far above the target until 35,000, then past it at 36,000."""
    costs = list(range(EVERY, 36 * EVERY + 1, EVERY))
    values = [2.6 + 0.001 * (i % 2) for i in range(len(costs) - 1)] + [1.85]
    return optuna.trial.create_trial(
        state=TrialState.COMPLETE,
        value=time_to_target(costs, values, TARGET),
        intermediate_values=dict(zip(costs, values, strict=True)),
    )


def test_self_check_stops_no_trial_by_a_forecast_once_a_winner_fell_in_a_forecasts_far_tail() -> None:
    study, incumbent = three_finished_trials()
    hopeless = (0.001, 2.2)  # levels off above the target: the forecast stops it early

    def first_stop(pruner: TimeToTargetPruner) -> tuple[int, PruneDecision]:
        for i, _, decision in probe(pruner, study, *hopeless):
            if decision.prune:
                return i, decision
        raise AssertionError("never stopped")

    # The three finished trials were steady: their forecasts held, so self_check changes nothing.
    i, decision = first_stop(TimeToTargetPruner(TARGET, self_check=True))
    assert (i, decision.reason) == first_stop(TimeToTargetPruner(TARGET))[:1] + (decision.reason,)
    assert decision.reason == "behind-and-unlikely" and i * EVERY < incumbent

    # A trial reached the target where its forecasts had given that (almost) no chance: on this
    # study the forecast is no longer trusted to stop anything; the exact stop still does.
    study.add_trial(late_bloomer_trial())
    plain_i, plain = first_stop(TimeToTargetPruner(TARGET))
    assert plain.reason == "behind-and-unlikely" and plain_i == i
    checked = TimeToTargetPruner(TARGET, self_check=True)
    reasons = [d.reason for _, _, d in probe(checked, study, *hopeless)]
    assert "forecast-distrusted" in reasons
    assert reasons[-1] == "slower-than-measured-best"
    assert not any(r in ("behind-and-unlikely", "cannot-beat-incumbent") for r in reasons)
    with pytest.raises(ValueError, match="self_check"):
        TimeToTargetPruner(TARGET, self_check=2)  # type: ignore[arg-type]
