"""convtune.replay and `convtune replay` on the tiny recorded grid (tests/data/tiny_grid.jsonl)."""

from __future__ import annotations

import json
import math
from pathlib import Path

import optuna
import pytest

from convtune.cli import main
from convtune.config.recipe import Recipe
from convtune.config.target import Target
from convtune.errors import ConfigError
from convtune.replay import ReplayExecutor, load_grid, replay, replay_spec, replay_study, summarize
from convtune.training.engine import EngineConfig, Progress

GRID = Path(__file__).resolve().parents[1] / "data" / "tiny_grid.jsonl"
TARGET = "val_error<=0.2"


def recipe(optimizer: str = "adamw", peak_lr: float = 3e-3, schedule: str = "cosine") -> Recipe:
    return Recipe(
        optimizer=optimizer, peak_lr=peak_lr, schedule=schedule, micro_batch_size=32, horizon_samples=6144
    )


def test_a_suggestion_off_the_grid_snaps_to_the_nearest_recorded_configuration() -> None:
    grid = load_grid(GRID)
    # 4e-3 lies nearer 3e-3 than 1e-2 on the log scale (not on the linear one: 0.0065 is the midpoint).
    assert grid.snap(grid.knobs_of(recipe(peak_lr=4e-3))) == ("adamw", 3e-3, "cosine")
    assert grid.snap(grid.knobs_of(recipe(peak_lr=6e-3))) == ("adamw", 1e-2, "cosine")
    # Categorical knobs are kept exactly, however near another optimizer's point is.
    assert grid.snap(grid.knobs_of(recipe(optimizer="sgd", peak_lr=4e-3)))[0] == "sgd"


def test_the_executor_streams_the_recorded_curve_and_honours_stop_and_max_cost() -> None:
    grid = load_grid(GRID)
    executor = ReplayExecutor(grid, seed=0)
    seen: list[Progress] = []
    result = executor.run(recipe(), EngineConfig(cost="samples"), lambda p: seen.append(p) or False)
    key, seed = executor.last  # type: ignore[misc]
    recorded = next(r for r in grid.configurations[key] if r.seed == seed)
    assert [p.metrics["val_error"] for p in seen] == recorded.curve["metric"]
    assert result.status == "finished" and result.samples == 6144 and result.backend == "replay"

    stopped = executor.run(recipe(), EngineConfig(cost="samples"), lambda p: p.samples >= 1024)
    assert stopped.status == "stopped" and [p.samples for p in stopped.history] == [512, 1024]
    capped = executor.run(recipe(), EngineConfig(cost="samples", max_cost=1500), lambda p: False)
    assert capped.status == "budget" and capped.history[-1].samples == 1536
    diverged = executor.run(recipe("sgd", 3e-2), EngineConfig(cost="samples"), lambda p: False)
    assert diverged.status == "diverged" and len(diverged.history) == 4


def test_a_stopped_replay_keeps_its_place_and_a_run_on_that_checkpoint_resumes_it(tmp_path: Path) -> None:
    executor = ReplayExecutor(GRID, seed=0)
    config = EngineConfig(cost="samples", checkpoint_dir=str(tmp_path / "trial-0"))
    stopped = executor.run(recipe(), config, lambda p: p.samples >= 1024)
    paused = executor.last
    assert stopped.status == "stopped" and (tmp_path / "trial-0" / "replay_checkpoint.json").is_file()
    # Resumed (even from another suggestion: the checkpoint names the run): the curve so far is
    # reported again, then the run goes on past the stop, the same recorded run to its end.
    seen: list[Progress] = []
    resumed = executor.run(recipe(peak_lr=1e-2), config, lambda p: seen.append(p) or False)
    assert executor.last == paused and resumed.status == "finished" and resumed.samples == 6144
    assert [p.samples for p in seen[:2]] == [512, 1024] and seen[2].samples > 1024
    assert [p.metrics for p in seen[:2]] == [p.metrics for p in stopped.history]


def test_seeds_are_drawn_per_trial_and_reproducibly() -> None:
    def drawn(seed: int) -> list[int]:
        executor = ReplayExecutor(GRID, seed=seed)
        out = []
        for _ in range(12):
            executor.run(recipe(), EngineConfig(cost="samples"), lambda p: False)
            out.append(executor.last[1])  # type: ignore[index]
        return out

    assert drawn(0) == drawn(0)
    assert set(drawn(0)) == {0, 1}


def test_a_confirm_run_never_retraces_the_seed_of_the_run_it_confirms() -> None:
    """A study confirms on seeds after the spec's, so its confirm runs never repeat the search's
    (often lucky) run; the replay's confirm runs avoid that run's recorded seed while the
    configuration has another, and fall back to it only when it has none."""
    executor = ReplayExecutor(GRID, seed=0)
    executor.run(recipe(), EngineConfig(cost="samples"), lambda p: False)
    key, searched = executor.last  # type: ignore[misc]
    executor.fresh_seeds = True
    executor.confirmed_seeds[key] = {searched}
    draws = []
    for _ in range(4):
        executor.run(recipe(), EngineConfig(cost="samples"), lambda p: False)
        draws.append(executor.last[1])  # type: ignore[index]
    assert draws == [1 - searched] * 4  # the tiny grid records seeds 0 and 1
    executor.confirmed_seeds[key] = {0, 1}  # every recorded seed confirmed: the least drawn again
    executor.run(recipe(), EngineConfig(cost="samples"), lambda p: False)
    assert executor.last[1] == searched  # type: ignore[index]


def test_the_space_is_derived_from_the_knobs_and_the_target_must_name_the_grid_metric() -> None:
    grid = load_grid(GRID)
    spec = replay_spec(grid, {"target": TARGET})
    assert spec.space["peak_lr"] == {"low": 1e-3, "high": 3e-2, "log": True}
    assert spec.space["optimizer"] == {"choices": ["adamw", "sgd"]}
    assert spec.space["horizon_samples"] == 6144 and spec.cost == "samples"
    with pytest.raises(ConfigError, match="not the grid's"):
        replay_spec(grid, {"target": "accuracy>=0.9"})


def test_replay_runs_the_real_objective_one_row_per_pruner_sampler_seed() -> None:
    rows = replay(
        GRID, {"target": TARGET}, seeds=[3], budget=3, pruners=["none", "hyperband"], samplers=["tpe"]
    )
    assert [(r["pruner"], r["sampler"], r["seed"]) for r in rows] == [
        ("none", "tpe", 3),
        ("hyperband", "tpe", 3),
    ]
    unpruned = rows[0]
    assert unpruned["stopped_share"] == 0.0 and 3.0 <= unpruned["spent"] < 4.0
    assert unpruned["hit"] == math.isfinite(unpruned["cost_to_10"])
    assert unpruned["hit"] == (unpruned["pick_ratio"] <= 1.1)
    assert rows == replay(GRID, {"target": TARGET}, seeds=[3], budget=3, pruners=["none", "hyperband"])
    (line,) = [s for s in summarize(rows) if s["pruner"] == "none"]
    assert line["seeds"] == 1 and line["hits"] == int(unpruned["hit"])


def test_a_replayed_trial_records_the_outcome_a_study_would() -> None:
    from convtune.replay import replay_study

    grid = load_grid(GRID)
    spec = replay_spec(grid, {"target": TARGET})
    row = replay_study(grid, spec, seed=0, budget=2, pruner="none", max_trials=3)
    assert row["trials"] <= 3
    # The grid's best reaches the target at its recorded crossing (interpolated, in samples).
    truth = grid.true_time_to_target(Target.parse(TARGET), "samples")
    assert 3000 < min(truth.values()) < 4000


def test_cli_prints_the_table_and_refuses_a_replay_without_target(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    spec = tmp_path / "spec.yaml"
    spec.write_text(f"target: '{TARGET}'\ncost: samples\n")
    monkeypatch.setattr(
        "sys.argv",
        [
            "convtune",
            "replay",
            str(GRID),
            "--spec",
            str(spec),
            "--seeds",
            "1",
            "--budget",
            "2",
            "--pruner",
            "none",
            "--confirm",
            "1",
        ],
    )
    with pytest.raises(SystemExit) as done:
        main()
    out = capsys.readouterr().out
    assert done.value.code in (0, None)
    assert "| tiny | none | tpe | " in out and "hits within 10%" in out and "hits after confirm" in out
    monkeypatch.setattr("sys.argv", ["convtune", "replay", str(GRID), "--seeds", "1"])
    with pytest.raises(SystemExit) as done:
        main()
    assert done.value.code == 2 and "no target" in capsys.readouterr().err


def test_optuna_baselines_judge_the_distance_to_the_target_not_the_raw_metric() -> None:
    from convtune.replay import GapPruner

    # Accuracy rises: on raw values a minimising MedianPruner would stop the better trial.
    study = optuna.create_study(
        pruner=GapPruner(optuna.pruners.MedianPruner(0, 0), Target.parse("accuracy>=0.9"))
    )
    good = optuna.trial.create_trial(value=1.0, intermediate_values={100: 0.8}, params={}, distributions={})
    study.add_trial(good)
    trial = study.ask()
    trial.report(0.5, step=100)
    assert trial.should_prune()
    trial = study.ask()
    trial.report(0.85, step=100)
    assert not trial.should_prune()


def test_a_row_lists_each_near_best_configuration_trained_with_why_its_trials_stopped() -> None:
    import json

    from convtune.replay import replay_study

    grid = load_grid(GRID)
    spec = replay_spec(grid, {"target": TARGET})
    truth = grid.true_time_to_target(Target.parse(TARGET), "samples")
    best = min(truth.values())
    near_best = {json.dumps(list(k)) for k, t in truth.items() if t <= 1.1 * best}
    rows = [replay_study(grid, spec, seed=s, budget=4, pruner="hyperband") for s in range(3)]
    assert any(r["near_best_configurations"] for r in rows), "some study must train a near-best configuration"
    for row in rows:
        configs = row["near_best_configurations"]
        assert set(configs) <= near_best
        # The trial-level counts are the same trials, grouped by configuration.
        assert sum(len(reasons) for reasons in configs.values()) == len(row["near_best_stop_reasons"])
        assert len(configs) <= row["near_best_trials"]


def test_a_row_says_how_the_very_run_each_near_best_stop_judged_would_have_ended() -> None:
    """A configuration is near-best by its seeds' median time; a stop judges the one recorded run
    the trial replays, which may never reach. Each entry names the stopped trial's configuration,
    reason and that run's time over the best (None: it never reaches)."""
    from convtune.curves import time_to_target

    grid = load_grid(GRID)
    spec = replay_spec(grid, {"target": TARGET})
    target = Target.parse(TARGET)
    truth = grid.true_time_to_target(target, "samples")
    best = min(truth.values())
    rows = [replay_study(grid, spec, seed=s, budget=4, pruner="sha") for s in range(4)]
    entries = [entry for row in rows for entry in row["near_best_stopped_runs"]]
    assert entries, "successive halving stops some near-best trial on the tiny grid"
    for row in rows:
        assert [reason for _, reason, _ in row["near_best_stopped_runs"]] == row["near_best_stop_reasons"]
        assert {config for config, _, _ in row["near_best_stopped_runs"]} <= set(
            row["near_best_configurations"]
        )
    for config, _, ratio in entries:
        runs = grid.configurations[tuple(json.loads(config))]
        own = [time_to_target(r.costs("samples"), r.metric, target) / best for r in runs]
        assert ratio is None or any(math.isclose(ratio, x) for x in own)
        assert ratio is not None or any(math.isinf(x) for x in own)


def test_the_confirm_step_reruns_the_measured_best_and_runners_up_on_their_other_seeds() -> None:
    """``replay_study(confirm_seeds=2)`` runs what ``study confirm --measured --seeds 2`` does.

    Every configuration of the tiny grid has two recorded seeds and a configuration's true time
    is their median, so two confirm runs drawn from the least-drawn seeds see both: the
    confirmed pick is never truly slower than the one-seed measured pick, and the search itself
    replays exactly as without the step.
    """
    from convtune.replay import replay_study

    grid = load_grid(GRID)
    spec = replay_spec(grid, {"target": TARGET})
    search_keys = ("hit", "cost_to_10", "spent", "trials", "trained", "pick_ratio", "stop_reasons")
    spent = []
    for seed in range(4):
        plain = replay_study(grid, spec, seed=seed, budget=4, pruner="time_to_target")
        row = replay_study(grid, spec, seed=seed, budget=4, pruner="time_to_target", confirm_seeds=2)
        assert "confirm_hit" not in plain
        assert {k: row[k] for k in search_keys} == {k: plain[k] for k in search_keys}
        assert row["confirm_pick_ratio"] <= row["pick_ratio"]
        assert row["confirm_hit"] == (row["confirm_pick_ratio"] <= 1.1)
        # A study that measured a best runs it twice more, and two runs cost something.
        assert (row["confirm_spent"] > 0) == math.isfinite(row["pick_ratio"])
        spent.append(row["confirm_spent"])
    assert any(s > 0 for s in spent)


def test_later_confirm_rounds_keep_the_first_rounds_result_for_a_paired_comparison() -> None:
    """``confirm_rounds=3`` is the same study as one round, then at most two more rounds of
    :func:`convtune.report.best.confirm_candidates`: the row's first-round fields are what a
    one-round replay of the same seed reports, and later rounds only add confirm runs."""
    from convtune.replay import replay_study

    grid = load_grid(GRID)
    spec = replay_spec(grid, {"target": TARGET})
    rounds_run = []
    for seed in (0, 1, 4):
        one = replay_study(grid, spec, seed=seed, budget=4, pruner="time_to_target", confirm_seeds=2)
        more = replay_study(
            grid, spec, seed=seed, budget=4, pruner="time_to_target", confirm_seeds=2, confirm_rounds=3
        )
        assert "confirm_first_hit" not in one
        assert (more["confirm_first_hit"], more["confirm_first_spent"], more["confirm_first_pick_ratio"]) == (
            one["confirm_hit"],
            one["confirm_spent"],
            one["confirm_pick_ratio"],
        )
        assert 1 <= more["confirm_rounds_run"] <= 3 and more["confirm_rounds"] == 3
        rounds_run.append(more["confirm_rounds_run"])
        assert more["confirm_spent"] >= more["confirm_first_spent"]
        # A later round that ran spent something; none ran, nothing changed.
        if more["confirm_rounds_run"] == 1:
            assert (more["confirm_hit"], more["confirm_spent"]) == (one["confirm_hit"], one["confirm_spent"])
        else:
            assert more["confirm_spent"] > more["confirm_first_spent"]
    assert max(rounds_run) > 1, "seed 4's confirmed pick is slower than a configuration it never compared"


def test_a_row_splits_what_the_study_spent_by_how_its_trials_ended() -> None:
    from convtune.replay import replay_study

    grid = load_grid(GRID)
    spec = replay_spec(grid, {"target": TARGET})
    rows = [replay_study(grid, spec, seed=s, budget=4, pruner="time_to_target") for s in range(3)]
    kinds = set()
    for row in rows:
        split = row["cost_by_end"]
        kinds |= set(split)
        assert all(cost > 0 for cost in split.values())
        # Up to the cost-to-10% on a hit (the trial that made it included), all of it on a miss.
        total = sum(split.values())
        assert total == pytest.approx(row["cost_to_10"] if row["hit"] else row["spent"])
    # The first trial always runs before any reached; stops carry their reason.
    assert any(k.endswith("(before any reached)") for k in kinds), kinds
    assert all(not k.startswith("stopped") or k.startswith("stopped: ") for k in kinds), kinds


def test_a_pruner_factory_replays_a_pruner_of_your_own() -> None:
    from convtune.replay import replay_study

    grid = load_grid(GRID)
    spec = replay_spec(grid, {"target": TARGET})
    seen: list[tuple[object, object]] = []

    def stop_at_first_report(executor: ReplayExecutor, study_spec: object) -> optuna.pruners.BasePruner:
        seen.append((executor, study_spec))
        return optuna.pruners.ThresholdPruner(upper=-1.0)  # any report is above: stop at once

    row = replay_study(grid, spec, seed=0, budget=2, pruner=stop_at_first_report)
    # Called once per study, with the study's own executor (over this grid) and spec.
    assert len(seen) == 1 and seen[0][0].grid is grid and seen[0][1].target == TARGET  # type: ignore[attr-defined]
    assert row["pruner"] == "stop_at_first_report"
    assert row["trained"] > 0 and row["stopped_share"] == 1.0 and not row["hit"]
    # One report each: a study spends a twelfth of a run per trial (6144 samples, every 512).
    assert row["spent"] == pytest.approx(row["trained"] / 12, abs=1 / 12 + 1e-9)


def test_cli_replays_a_pruner_of_your_own_from_a_file_and_refuses_a_bad_reference(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    (tmp_path / "mypruners.py").write_text(
        "import optuna\n\n\n"
        "def stop_all(executor, spec):\n"
        "    return optuna.pruners.ThresholdPruner(upper=-1.0)\n"
    )
    monkeypatch.chdir(tmp_path)  # a relative file is found from the working directory
    argv = ["convtune", "replay", str(GRID), "--target", TARGET, "--seeds", "1", "--budget", "2", "--json"]
    monkeypatch.setattr("sys.argv", [*argv, "--pruner", "mypruners.py:stop_all"])
    with pytest.raises(SystemExit) as done:
        main()
    assert done.value.code in (0, None)
    (row,) = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert row["pruner"] == "mypruners.py:stop_all" and row["stopped_share"] == 1.0

    monkeypatch.setattr("sys.argv", [*argv, "--pruner", "mypruners.py:nothing_here"])
    with pytest.raises(SystemExit) as done:
        main()
    err = capsys.readouterr().err
    assert done.value.code == 2 and "Traceback" not in err
    assert "--pruner" in err and "nothing_here" in err and len(err.strip().splitlines()) == 1


def test_the_readme_replay_example_prints_the_table_the_readme_shows(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    import re
    import shlex

    readme = (Path(__file__).resolve().parents[2] / "README.md").read_text()
    section = readme.split("## Try pruners on recorded curves")[1].split("\n## ")[0]
    command, shown = re.findall(r"```(?:bash)?\n(.*?)```", section, flags=re.S)[:2]
    argv = shlex.split(command.replace("\\\n", " "))
    assert argv[:2] == ["convtune", "replay"]
    monkeypatch.chdir(Path(__file__).resolve().parents[2])
    monkeypatch.setattr("sys.argv", argv)
    with pytest.raises(SystemExit) as done:
        main()
    assert done.value.code in (0, None)
    printed = [line for line in capsys.readouterr().out.splitlines() if line.startswith("|")]
    assert printed == [line for line in shown.splitlines() if line.startswith("|")]


def test_a_replay_can_check_the_study_s_own_forecasts_with_and_without_its_prior() -> None:
    grid = load_grid(GRID)
    spec = replay_spec(grid, {"target": TARGET})
    row = replay_study(grid, spec, seed=0, budget=5, pruner="none", audit=True)
    audit = row["audit"]
    assert set(audit) == {"prior", "no_prior"}
    for variant in audit.values():
        n = len(variant["probability_by_truth"])
        # Unpruned, every trained trial has a known outcome: each reaching check is recorded.
        assert variant["checked"] >= 1 and n == len(variant["near_best"]) == len(variant["cut"]) >= 1
        assert all(0.0 <= p <= 1.0 for p in variant["probability_by_truth"])
        # Crossing by the true time is one way of reaching within the run: never more likely.
        pairs = zip(variant["probability_by_truth"], variant["probability"], strict=True)
        assert all(by_truth <= reach + 1e-9 for by_truth, reach in pairs)
        assert set(variant["cut"]) <= {0.1, 0.25, 0.5}
    # The prior is what differs: the same checks, other probabilities.
    assert audit["prior"]["cut"] == audit["no_prior"]["cut"]
    assert audit["prior"]["probability_by_truth"] != audit["no_prior"]["probability_by_truth"]
    assert "audit" not in replay_study(grid, spec, seed=0, budget=5, pruner="none")


def test_a_trial_another_pruner_stopped_records_the_forecast_of_the_maps() -> None:
    """The value a study's sampler is told of a trial stopped by another pruner (here one that
    stops at the fourth report) comes from its recorded forecast, which reads the calibration's
    maps, not its reach trees: the told values were measured that way (checks AB and AB2)."""
    from convtune.config.record import TrialRecord
    from convtune.curves import Forecast, LRSchedule, forecast_time_to_target
    from convtune.replay import replay_study

    grid = load_grid(GRID)
    spec = replay_spec(grid, {"target": TARGET})
    studies: list[optuna.Study] = []

    class FourthReport(optuna.pruners.BasePruner):
        def prune(self, study: optuna.Study, trial: optuna.trial.FrozenTrial) -> bool:
            studies.append(study)
            return len(trial.intermediate_values) >= 4

    replay_study(grid, spec, seed=0, budget=2, pruner=lambda executor, study_spec: FourthReport())
    stopped = [t for t in studies[-1].trials if t.user_attrs.get("status") == "stopped"]
    assert stopped  # told a censored value, not pruned in Optuna's sense: a stop is a pause
    for t in stopped:
        costs = sorted(t.intermediate_values)
        values = [t.intermediate_values[c] for c in costs]
        schedule = LRSchedule.from_record(TrialRecord.of(t).schedule)
        recorded = Forecast.from_attrs(t.user_attrs)
        maps = forecast_time_to_target(costs, values, TARGET, schedule=schedule, reach_trees=False)
        assert recorded.probability == pytest.approx(maps.probability, abs=1e-6)
