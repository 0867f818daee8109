"""DDP in the engine, run in real torchrun-launched gloo ranks (CPU).

Asserted in steps and parameters, never in timings: 2 ranks × accumulation 1 equal 1 rank ×
accumulation 2 on the same global batches; samples are counted over all ranks; ``no_sync``
accumulation equals synchronising every micro-step; every trial records its distributed facts.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from convtune.config.recipe import Recipe
from convtune.config.spec import StudySpec
from convtune.execution.launcher import ElasticExecutor, LaunchOptions
from convtune.training.engine import EngineConfig, train
from convtune.workloads import build_workload

WORKLOAD = f"{Path(__file__).resolve().parents[1] / '_launcher_workloads.py'}:Linear"
CONFIG = EngineConfig(
    eval_every=4, eval_unit="steps", cost="samples", max_cost=8 * 16, seed=3
)  # 8 steps of 16 samples


def recipe(world_size: int, accum: int, micro: int = 8) -> Recipe:
    return Recipe(
        peak_lr=0.05,
        horizon_samples=10_000,
        schedule="constant",
        micro_batch_size=micro,
        grad_accum_steps=accum,
        world_size=world_size,
        optimizer="sgd",
        optimizer_params={"momentum": 0.9, "nesterov": True},
    )


def params(result) -> list[float]:
    metrics = result.history[-1].metrics
    return [metrics[f"p{i}"] for i in range(len([k for k in metrics if k.startswith("p")]))]


@pytest.fixture(scope="module")
def executor():
    spec = StudySpec(workload=WORKLOAD, space={}, target="val_loss<=0.0", cost="samples", world_size=2)
    with ElasticExecutor(spec, LaunchOptions(collective_timeout=30)) as ex:
        yield ex


def test_two_ranks_equal_one_rank_accumulating_the_same_global_batches(executor):
    local = train(build_workload(WORKLOAD), recipe(1, 2), CONFIG)
    ranked = executor.run(recipe(2, 1), CONFIG, lambda p: False)
    assert ranked.status == "budget" and local.status == "budget"
    assert ranked.steps == local.steps == 8
    assert params(ranked) == pytest.approx(params(local), abs=1e-5)
    # Samples are global: micro × accumulation × world size per optimizer step.
    assert ranked.samples == 8 * 8 * 1 * 2 == local.samples
    assert [p.samples for p in ranked.history] == [64, 128]  # every 4 steps of 16


def test_no_sync_accumulation_equals_syncing_every_micro_step(executor):
    lazy = executor.run(recipe(2, 4, micro=4), CONFIG, lambda p: False)
    every = EngineConfig(**{**CONFIG.__dict__, "sync_every_micro_step": True})
    eager = executor.run(recipe(2, 4, micro=4), every, lambda p: False)
    assert lazy.steps == eager.steps == 4  # 128 samples in steps of 4 × 4 × 2
    assert params(lazy) == pytest.approx(params(eager), abs=1e-5)
    assert executor.launches == 1  # both on the same warm ranks


def test_every_trial_records_its_distributed_facts(executor):
    result = executor.run(recipe(2, 1), CONFIG, lambda p: False)
    assert result.world_size == 2
    assert result.backend == "gloo"
    assert len(result.rank_samples_per_second) == 2 and all(s > 0 for s in result.rank_samples_per_second)
    assert len(result.rank_peak_memory_bytes) == 2 and all(m > 2**20 for m in result.rank_peak_memory_bytes)
    assert 0.0 <= result.data_wait_share < 1.0
    assert result.comm_share is None or 0.0 <= result.comm_share <= 1.0
