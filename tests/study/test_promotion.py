"""Promotions of paused trials (``convtune.study.promotion``): which paused trial is resumed, and
that the queued trial resumes it from its checkpoint instead of training again."""

from __future__ import annotations

from pathlib import Path

import optuna
import pytest
from optuna.distributions import FloatDistribution
from optuna.trial import TrialState, create_trial

from convtune.config.target import Target
from convtune.pruners import GapPruner
from convtune.replay import ReplayExecutor, load_grid, replay_spec, replay_study
from convtune.study.objective import PROMOTED_FROM_ATTR, RESUMED_AT_ATTR, RESUMED_FROM_ATTR, Objective
from convtune.study.promotion import promote, promotion_candidate

TARGET = Target.parse("val_loss<=1.0")
GRID = Path(__file__).resolve().parents[1] / "data" / "tiny_grid.jsonl"


def add(study: optuna.Study, curve: dict[int, float], status: str, lr: float) -> int:
    """A finished trial with ``curve`` (cost → val_loss) that ended ``status``; its number."""
    study.add_trial(
        create_trial(
            state=TrialState.COMPLETE,
            value=float(max(curve)),
            params={"peak_lr": lr},
            distributions={"peak_lr": FloatDistribution(1e-4, 1.0, log=True)},
            intermediate_values=curve,
            user_attrs={"status": status},
        )
    )
    return len(study.trials) - 1


def a_study_with_five_full_runs() -> optuna.Study:
    study = optuna.create_study()
    for i, loss in enumerate([3.0, 3.2, 3.4, 3.6, 3.8]):
        add(study, {100: loss + 1.0, 200: loss, 300: loss - 0.5}, "budget", lr=0.01 * (i + 1))
    return study


def test_a_paused_trial_in_the_best_third_of_all_that_trained_as_far_is_promoted_latest_first() -> None:
    study = a_study_with_five_full_runs()
    # Stopped early (say by Hyperband against one lucky trial) while ahead of every full run.
    early = add(study, {100: 3.5}, "stopped", lr=0.2)
    later = add(study, {100: 3.9, 200: 2.9}, "stopped", lr=0.3)
    assert promotion_candidate(study, TARGET).number == later  # ASHA: the highest rung first
    assert promote(study, TARGET) == later
    queued = study.get_trials(states=(TrialState.WAITING,))
    assert [t.user_attrs[PROMOTED_FROM_ATTR] for t in queued] == [later]
    assert queued[0].system_attrs["fixed_params"] == {"peak_lr": 0.3}, "the paused trial's configuration"
    # Queued once: the next candidate is the other paused trial.
    assert promotion_candidate(study, TARGET).number == early


def test_a_paused_trial_behind_the_best_third_or_without_enough_peers_stays_paused() -> None:
    study = a_study_with_five_full_runs()
    add(study, {100: 4.0, 200: 3.3}, "stopped", lr=0.2)  # 2 of 6 ahead: not fewer than 6 / 3
    assert promotion_candidate(study, TARGET) is None
    alone = optuna.create_study()
    add(alone, {100: 5.0, 200: 4.0}, "budget", lr=0.01)
    add(alone, {100: 1.5}, "stopped", lr=0.1)  # ahead, but judged against one other trial
    assert promotion_candidate(alone, TARGET) is None
    assert promotion_candidate(alone, TARGET, eta=2) is not None


def test_a_resumed_trial_is_not_promoted_again_and_its_curve_counts_once() -> None:
    study = a_study_with_five_full_runs()
    paused = add(study, {100: 3.9, 200: 2.9}, "stopped", lr=0.3)
    study.add_trial(
        create_trial(
            state=TrialState.COMPLETE,
            value=300.0,
            params={"peak_lr": 0.3},
            distributions={"peak_lr": FloatDistribution(1e-4, 1.0, log=True)},
            intermediate_values={100: 3.9, 200: 2.9, 300: 0.9},
            user_attrs={"status": "reached", RESUMED_FROM_ATTR: paused},
        )
    )
    assert promotion_candidate(study, TARGET) is None


@pytest.mark.parametrize("seed", [0, 1])
def test_a_promoted_trial_trains_on_from_the_paused_trials_checkpoint(seed: int, tmp_path: Path) -> None:
    grid = load_grid(GRID)
    spec = replay_spec(grid, {"target": "val_error<=0.2", "checkpoint_dir": str(tmp_path)})
    objective = Objective(spec, executor=ReplayExecutor(grid, seed=seed))
    n_evals = len(grid.runs[0].curve["samples"])
    study = optuna.create_study(
        study_name=f"promote-{seed}",
        sampler=optuna.samplers.RandomSampler(seed=seed),
        pruner=GapPruner.hyperband(spec.target_spec, n_evals),
    )
    promoted = None
    for _ in range(40):  # until a stop is promoted
        study.optimize(objective, n_trials=1)
        promoted = promote(study, spec.target_spec, eta=3)
        if promoted is not None:
            break
    assert promoted is not None, "Hyperband stops trials on the tiny grid, and some is worth resuming"
    paused = study.trials[promoted]
    study.optimize(objective, n_trials=1)
    resumed = study.trials[-1]
    assert resumed.user_attrs[PROMOTED_FROM_ATTR] == promoted
    assert resumed.user_attrs[RESUMED_FROM_ATTR] == promoted, resumed.user_attrs.get("reason_resumed")
    assert resumed.user_attrs[RESUMED_AT_ATTR] > 0, "it spends only what it trains past the stop"
    for step, value in paused.intermediate_values.items():  # one curve, carried on
        assert resumed.intermediate_values[step] == pytest.approx(value)
    assert max(resumed.intermediate_values) > max(paused.intermediate_values)


def test_a_replay_with_promotions_counts_them() -> None:
    grid = load_grid(GRID)
    spec = replay_spec(grid, {"target": "val_error<=0.2"})
    rows = [replay_study(grid, spec, seed=s, budget=4, pruner="hyperband:promote=3") for s in range(3)]
    plain = [replay_study(grid, spec, seed=s, budget=4, pruner="hyperband") for s in range(3)]
    assert all(r["pruner"] == "hyperband:promote=3" and r["resumed"] >= r["promoted"] for r in rows)
    assert sum(r["promoted"] for r in rows) > 0
    assert all(p["promoted"] == 0 for p in plain)


def test_cli_replays_a_pruner_with_promotions_beside_it_without(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    from convtune.cli import main

    argv = ["convtune", "replay", str(GRID), "--target", "val_error<=0.2", "--seeds", "2", "--budget", "3"]
    monkeypatch.setattr("sys.argv", [*argv, "--pruner", "hyperband", "--pruner", "hyperband:promote=3"])
    with pytest.raises(SystemExit) as done:
        main()
    assert done.value.code in (0, None)
    rows = [line for line in capsys.readouterr().out.splitlines() if line.startswith("| tiny")]
    assert [row.split("|")[2].strip() for row in rows] == ["hyperband", "hyperband:promote=3"]
