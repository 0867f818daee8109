"""Studies through the library API: the outcome table, ranking, and the real storages."""

from __future__ import annotations

import math
import uuid
from pathlib import Path

import optuna
import pytest
from optuna.trial import TrialState
from services import postgres_url
from specs import digits_spec

from convtune.config.record import TrialRecord
from convtune.config.spec import StudySpec, load_spec
from convtune.errors import ConfigError
from convtune.report.best import measured_best
from convtune.study import Objective, create_study, open_study, penalty, run_study

SPACE = {
    "peak_lr": {"choices": [1.0e-4, 3.0e-4, 1.0e-3, 3.0e-3, 1.0e-2, 3.0e-2, 1.0e5]},
    "horizon_samples": 8192,
    "schedule": "constant",
    "micro_batch_size": 32,
    "optimizer": {"choices": ["sgd"], "sgd": {"momentum": 0.9, "nesterov": True}},
}


def tiny_spec(**overrides: object) -> StudySpec:
    defaults = {"space": SPACE, "target": "accuracy>=0.93", "max_cost": 6144, "eval_every": {"samples": 1024}}
    return digits_spec(**(defaults | overrides))


def test_reached_trials_rank_above_unreached_and_unreached_by_gap(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'rank.db'}"
    spec = tiny_spec()
    study = create_study("rank", spec, url)
    # One LR that reaches, one forecast beyond the cap (unreached but not penalised), two
    # penalised at different final gaps and one that diverges: every rank this test checks.
    lrs = (3.0e-2, 1.0e-2, 3.0e-4, 1.0e-4, 1.0e5)
    for lr in lrs:
        study.enqueue_trial({"peak_lr": lr})
    run_study("rank", n_trials=len(lrs), storage=url)

    study, _ = open_study("rank", url)
    trials = study.get_trials(states=(TrialState.COMPLETE,))
    statuses = {t.user_attrs["status"] for t in trials}
    assert "reached" in statuses and statuses - {"reached"}, f"need a mix, got {statuses}"
    assert any(t.user_attrs["status"] == "diverged" for t in trials), "lr=1e5 must diverge"

    ranked = sorted(trials, key=lambda t: t.value)
    seen_unreached = False
    for trial in ranked:
        if trial.user_attrs["status"] == "reached":
            assert not seen_unreached, "a reached trial ranked below an unreached one"
            assert trial.value == pytest.approx(trial.user_attrs["time_to_target"])
            assert trial.value <= spec.max_cost
        else:
            seen_unreached = True
            assert trial.user_attrs["extrapolated"] is (trial.user_attrs["status"] != "diverged")

    penalised = [t for t in trials if t.value >= penalty(spec, 0.0)]
    assert len(penalised) >= 3, "the gap order needs penalised trials to order"
    by_value = sorted(penalised, key=lambda t: t.value)
    gaps = [
        t.user_attrs["final_gap"] if t.user_attrs["final_gap"] is not None else math.inf for t in by_value
    ]
    assert gaps == sorted(gaps), "penalised trials must rank by their final gap to the target"

    diverged = [t for t in trials if t.user_attrs["status"] == "diverged"]
    for trial in diverged:
        assert (
            trial.system_attrs.get("constraints") == [1.0]
            or trial.system_attrs.get("constraints", [1.0])[0] > 0
        )
    best = measured_best(study)
    assert best is not None and best.user_attrs["status"] == "reached"
    assert best.value == min(t.value for t in trials if t.user_attrs["status"] == "reached")


def test_trial_attributes_describe_the_run(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'attrs.db'}"
    create_study("attrs", tiny_spec(), url).enqueue_trial({"peak_lr": 3.0e-2})
    study = run_study("attrs", n_trials=1, storage=url)
    trial = study.trials[0]
    attrs = TrialRecord.of(trial).attrs  # bulky values (recipe, curve) sit in system attrs
    assert attrs["effective_batch_size"] == 32
    assert attrs["total_steps"] == 8192 // 32
    assert attrs["recipe"]["peak_lr"] == pytest.approx(3.0e-2)
    assert attrs["samples_per_second"] > 0
    assert attrs["curve"]["samples"] == sorted(attrs["curve"]["samples"])
    # learning curves against cost: one report per evaluation, step = samples
    assert list(trial.intermediate_values) == attrs["curve"]["samples"][: len(trial.intermediate_values)]
    assert "lr_schedule" in attrs


def test_spec_file_paths_are_relative_to_the_file(tmp_path: Path) -> None:
    (tmp_path / "spaces").mkdir()
    (tmp_path / "spaces" / "s.yaml").write_text(
        "peak_lr: 0.01\nhorizon_samples: 4096\nmicro_batch_size: 16\n"
    )
    (tmp_path / "study.yaml").write_text("workload: digits\nspace: spaces/s.yaml\ntarget: accuracy>=0.9\n")
    spec = load_spec(tmp_path / "study.yaml", cost="samples")
    assert spec.space["peak_lr"] == 0.01 and spec.cost == "samples"


def test_postgres_smoke() -> None:
    url = postgres_url()
    name = f"smoke-{uuid.uuid4().hex[:8]}"
    try:
        create_study(name, tiny_spec(), url).enqueue_trial({"peak_lr": 3.0e-2})
        run_study(name, n_trials=2, storage=url)
        study, spec = open_study(name, url)
        assert len(study.trials) == 2
        assert all(t.state == TrialState.COMPLETE for t in study.trials)
        assert spec.target == "accuracy>=0.93"
    finally:
        try:
            optuna.delete_study(study_name=name, storage=url)
        except KeyError:
            pass


def test_journal_storage(tmp_path: Path) -> None:
    url = f"journal://{tmp_path / 'journal.log'}"
    create_study("j", tiny_spec(), url)
    run_study("j", n_trials=1, storage=url)
    study, _ = open_study("j", url)
    assert len(study.trials) == 1 and study.trials[0].state == TrialState.COMPLETE


def test_a_configuration_trained_before_is_not_trained_again(tmp_path: Path) -> None:
    # peak_lr has two choices: the third trial and on repeat one of the first two.
    url = f"sqlite:///{tmp_path / 'twin.db'}"
    space = {**SPACE, "peak_lr": {"choices": [0.05, 0.2]}}
    # Two evaluations per trial are enough to tell a rerun from a reuse (what this test is about).
    create_study("twin", tiny_spec(space=space, sampler="random", max_cost=2048), url)
    study, _ = open_study("twin", url)
    study.enqueue_trial({"peak_lr": 0.05})
    study.enqueue_trial({"peak_lr": 0.2})
    run_study("twin", n_trials=4, storage=url)

    first, second, *repeats = open_study("twin", url)[0].trials
    assert {first.user_attrs["status"], second.user_attrs["status"]} <= {"reached", "budget", "stopped"}
    for trial in repeats:
        twin = first if trial.params == first.params else second
        assert trial.user_attrs["status"] == "duplicate" and trial.user_attrs["duplicate_of"] == twin.number
        assert trial.value == twin.value and not trial.intermediate_values  # nothing trained
    assert measured_best(study) in (first, second, None)

    # An enqueued configuration was asked for by name: it trains even if it ran before.
    study.enqueue_trial({"peak_lr": 0.05})
    run_study("twin", n_trials=1, storage=url)
    again = open_study("twin", url)[0].trials[-1]
    assert (
        again.user_attrs["status"] != "duplicate" and again.intermediate_values == first.intermediate_values
    )


def test_a_nearly_identical_configuration_reuses_the_outcome(tmp_path: Path) -> None:
    """A sampled LR within ``duplicate_tolerance`` (5% of the log range by default) of a finished
    trial's, all else equal, is that trial's outcome; one further off trains."""
    space = {**SPACE, "peak_lr": {"low": 1.0e-3, "high": 1.0e-1, "log": True}}

    def run_at(study: optuna.Study, objective: Objective, lr: float) -> optuna.trial.FrozenTrial:
        # A sampled trial (an enqueued one always trains) that lands on ``lr``.
        study.sampler = optuna.samplers.PartialFixedSampler({"peak_lr": lr}, optuna.samplers.RandomSampler(0))
        study.optimize(objective, n_trials=1)
        return study.trials[-1]

    study = optuna.create_study(storage=f"sqlite:///{tmp_path / 'near.db'}")
    objective = Objective(tiny_spec(space=space, max_cost=2048))  # two evaluations a trial
    first = run_at(study, objective, 0.05)
    near = run_at(study, objective, 0.05 * 1.1)  # ln 1.1 / ln 100: 2% of the log width
    far = run_at(study, objective, 0.05 * 1.5)  # 9%
    assert first.user_attrs["status"] in {"reached", "budget", "stopped"} and first.intermediate_values
    assert near.user_attrs["status"] == "duplicate" and near.user_attrs["duplicate_of"] == first.number
    assert near.value == first.value and not near.intermediate_values  # nothing trained
    assert "nearly the same configuration" in near.user_attrs["reason"]
    assert far.user_attrs["status"] != "duplicate" and far.intermediate_values

    exact_only = optuna.create_study(storage=f"sqlite:///{tmp_path / 'exact.db'}")
    objective = Objective(tiny_spec(space=space, duplicate_tolerance=0.0, max_cost=2048))
    run_at(exact_only, objective, 0.05)
    again = run_at(exact_only, objective, 0.05 * 1.1)
    assert again.user_attrs["status"] != "duplicate" and again.intermediate_values


def test_the_deprecated_halving_pruner_warns_and_no_longer_stops_at_the_first_evaluation(
    tmp_path: Path,
) -> None:
    """`pruner: time_to_target_halving` in a real study warns and runs the default pruner: a slow
    LR behind the finished trial at equal cost is not stopped at its first evaluation (the
    equal-cost rule stopped near-best configurations on held-out workloads)."""
    url = f"sqlite:///{tmp_path / 'halving.db'}"
    study = create_study("halving", tiny_spec(pruner="time_to_target_halving"), url)
    for lr in (3.0e-2, 1.0e-4):
        study.enqueue_trial({"peak_lr": lr})
    with pytest.warns(FutureWarning, match="deprecated"):
        run_study("halving", n_trials=2, storage=url)

    study, _ = open_study("halving", url)
    fast, slow = study.get_trials(states=(TrialState.COMPLETE,))
    assert fast.user_attrs["status"] == "reached", fast.user_attrs.get("reason")
    assert slow.user_attrs.get("reason") != "pruned: behind-at-equal-cost"
    assert len(slow.intermediate_values) > 1


@pytest.mark.parametrize(
    ("arguments", "word"),
    [
        ({"executor": "inprocss"}, "executor"),
        ({"n_trials": 0}, "--n-trials"),
        ({"timeout": -1.0}, "--timeout"),
        ({"world_size": 0}, "--world-size"),
        ({"local_workers": 0}, "local_workers"),
    ],
)
def test_run_study_rejects_bad_arguments_before_it_opens_the_study(
    tmp_path: Path, arguments: dict[str, object], word: str
) -> None:
    """A library caller gets the CLI's checks: a typo in ``executor`` is an error, not ``auto``."""
    with pytest.raises(ConfigError, match=word):
        run_study("no-such-study", storage=f"sqlite:///{tmp_path}/s.db", **arguments)  # type: ignore[arg-type]


class _SignalInALazyImport:
    """An executor whose run meets SIGTERM while a module it imports defines a class (as the
    first optimizer imports ``torch._dynamo``): a test double, since a signal cannot be made to
    land inside one import on cue. Python wraps what ``__set_name__`` raises in a RuntimeError."""

    def __init__(self, stop: BaseException) -> None:
        self.stop = stop

    def run(self, recipe: object, config: object, on_eval: object) -> None:
        stop = self.stop

        class Descriptor:
            def __set_name__(self, owner: type, name: str) -> None:
                raise stop

        type("CompilePackage", (), {"source_id": Descriptor()})  # raises RuntimeError from stop

    def close(self) -> None:
        pass


def test_a_signal_wrapped_by_a_lazy_import_still_preempts_and_a_real_error_still_fails() -> None:
    from convtune.errors import Preempted
    from convtune.study.objective import TrialFailed

    spec = tiny_spec()
    study = optuna.create_study()
    with pytest.raises(Preempted):
        study.optimize(Objective(spec, executor=_SignalInALazyImport(Preempted())), n_trials=1)
    assert TrialRecord.of(study.trials[0]).status is None  # not marked failed: re-queued by the run

    study = optuna.create_study()
    failing = Objective(spec, executor=_SignalInALazyImport(ValueError("a real bug")))
    study.optimize(failing, n_trials=1, catch=(TrialFailed,))
    record = TrialRecord.of(study.trials[0])
    assert record.status is not None and record.status.value == "failed"
    assert str(record.attrs.get("error")).startswith("RuntimeError: Error calling __set_name__")
