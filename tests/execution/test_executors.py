"""The launched executors, one each: ``ElasticExecutor`` picks warm ranks for a Workload and a
per-trial launch for a script, and both stop a trial by the engine's own rules
(:class:`convtune.training.stops.StopRules`): divergence and the budget."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from convtune.config.recipe import Recipe
from convtune.config.spec import StudySpec
from convtune.errors import ConfigError
from convtune.execution.launcher import ElasticExecutor, LaunchOptions, ScriptExecutor, WarmRankExecutor
from convtune.training.engine import EngineConfig, Progress
from convtune.training.stops import StopRules

HERE = Path(__file__).resolve().parents[1]  # tests/: the helper scripts
SCRIPT = str(HERE / "_reporting_script.py")
WORKLOAD = f"{HERE / '_launcher_workloads.py'}:Linear"


def _spec(workload: str | dict) -> StudySpec:
    return StudySpec(
        workload=workload,
        space={},
        target="val_loss<=0.0",
        cost="samples",
        world_size=1,
        base_dir=str(HERE),
        pruner="none",
    )


def _recipe(peak_lr: float = 0.05) -> Recipe:
    return Recipe(
        peak_lr=peak_lr, horizon_samples=100_000, schedule="constant", micro_batch_size=8, optimizer="sgd"
    )


def test_elastic_executor_picks_the_executor_the_workload_needs() -> None:
    script = ElasticExecutor(_spec({"command": [sys.executable, SCRIPT]}))
    warm = ElasticExecutor(_spec(WORKLOAD))
    try:
        assert type(script) is ScriptExecutor and type(warm) is WarmRankExecutor
    finally:
        script.close()
        warm.close()


@pytest.mark.parametrize(
    ("options", "flag"),
    [
        ({"collective_timeout": 0}, "--collective-timeout"),
        ({"local_workers": 0}, "--local-workers"),
        ({"nnodes": 0}, "--nnodes"),
    ],
)
def test_launch_options_refuse_values_no_launch_can_use(options: dict, flag: str) -> None:
    with pytest.raises(ConfigError, match=flag):
        LaunchOptions(**options)


def _script_run(args: list[str], config: EngineConfig) -> tuple[object, list[Progress]]:
    seen: list[Progress] = []
    with ElasticExecutor(_spec({"command": [sys.executable, SCRIPT, *args]})) as executor:
        result = executor.run(_recipe(), config, lambda record: seen.append(record) or False)
    return result, seen


def test_a_script_reporting_a_non_finite_target_metric_diverges_there() -> None:
    config = EngineConfig(eval_every=32, cost="samples", seed=0)
    result, seen = _script_run(["--nan-at", "3"], config)
    assert result.status == "diverged"
    assert result.reason == StopRules.metric("val_loss", float("nan"), step=3)
    assert [r.samples for r in seen] == [32, 64, 96]  # the script got the stop at that report


def test_a_script_stops_at_the_budget_by_the_same_rule_as_the_engine() -> None:
    config = EngineConfig(eval_every=32, cost="samples", max_cost=128, seed=0)
    result, seen = _script_run([], config)
    assert result.status == "budget"
    assert result.reason == StopRules(max_cost=128).budget(128) == "max_cost 128 reached"
    assert seen[-1].cost == 128 and len(seen) == 4


def test_warm_ranks_stop_at_the_budget_and_on_divergence_by_the_engines_rules() -> None:
    config = EngineConfig(eval_every=4, eval_unit="steps", cost="samples", max_cost=96, seed=1)
    with ElasticExecutor(_spec(WORKLOAD), LaunchOptions(collective_timeout=30)) as executor:
        seen: list[Progress] = []
        budget = executor.run(_recipe(), config, lambda record: seen.append(record) or False)
        diverged = executor.run(_recipe(peak_lr=1e12), config, lambda record: False)
        assert executor.launches == 1  # both trials on the same warm ranks
    assert budget.status == "budget" and budget.reason == StopRules(max_cost=96).budget(96)
    assert budget.samples == 96 and seen[-1].cost == 96
    assert diverged.status == "diverged" and diverged.reason.startswith("non-finite training loss at step ")
