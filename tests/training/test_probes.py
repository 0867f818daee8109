"""The probes on the built-in ``digits`` workload, checked against what full runs show.

Full runs: AdamW at batch 32 on digits reaches 93% accuracy within 8,192 samples for peak LRs
from ~1e-3 to ~3e-2 and fails at 1e-1 and above (measured; the test re-measures the edges).
"""

from __future__ import annotations

import math

import pytest
import torch

from convtune.config.recipe import Recipe
from convtune.config.target import Target
from convtune.training.engine import EngineConfig, train
from convtune.training.probes import lr_range_test, narrow_batch, narrow_lr, noise_scale
from convtune.workloads import build_workload

TARGET = Target.parse("accuracy>=0.93")


@pytest.fixture(scope="module")
def digits():  # type: ignore[no-untyped-def]
    torch.set_num_threads(1)
    return build_workload("digits")


def recipe(lr: float = 1e-3, batch: int = 32) -> Recipe:
    return Recipe(peak_lr=lr, horizon_samples=8192, micro_batch_size=batch, schedule="constant")


def reaches(workload, lr: float, batch: int = 32) -> bool:  # type: ignore[no-untyped-def]
    config = EngineConfig(eval_every=1024, cost="samples", max_cost=8192, threads=1)
    result = train(workload, recipe(lr, batch), config, lambda p: TARGET.is_reached(p.metrics["accuracy"]))
    return any(TARGET.is_reached(p.metrics["accuracy"]) for p in result.history)


def test_lr_range_test_points_inside_the_stable_range(digits) -> None:  # type: ignore[no-untyped-def]
    found = lr_range_test(digits, recipe(), min_lr=1e-5, max_lr=10.0, steps=100)
    # Full runs at both edges of the probe's answer reach the target; far above it they fail.
    assert 1e-3 <= found.steepest_lr <= 3e-2
    assert reaches(digits, found.steepest_lr)
    low, high = found.suggested_bounds
    assert low < found.steepest_lr < high
    assert reaches(digits, low) or reaches(digits, math.sqrt(low * high))
    assert found.blowup_lr is None or found.blowup_lr > 3e-2
    assert not reaches(digits, 3e-1)
    assert len(found.lrs) == len(found.losses) and found.losses[0] > min(found.losses)


def test_noise_scale_lies_in_the_batch_range_full_runs_reach(digits) -> None:  # type: ignore[no-untyped-def]
    found = noise_scale(digits, recipe(3e-3, 16), b_small=16, b_big=256, repeats=20, warmup_steps=20)
    low, high = found.interval
    assert 0 < low < found.b_simple < high < math.inf
    # Digits has 1,437 training images: the noise scale lies well inside [batch 8, all of them].
    assert 8 < found.b_simple < 1437
    lo_b, hi_b = found.useful_batch_range
    assert lo_b <= 32 <= hi_b  # batch 32 reaches the target in full runs
    assert reaches(digits, 1e-2, 32)
    assert found.grad_sq > 0 and found.trace_sigma > 0


def test_noise_scale_is_deterministic_for_a_seed(digits) -> None:  # type: ignore[no-untyped-def]
    a = noise_scale(digits, recipe(3e-3, 16), repeats=6, warmup_steps=5, n_boot=100)
    b = noise_scale(digits, recipe(3e-3, 16), repeats=6, warmup_steps=5, n_boot=100)
    assert a.b_simple == b.b_simple and a.interval == b.interval


def test_narrowed_spaces_stay_valid() -> None:
    from convtune.config.space import SearchSpace

    raw = {
        "peak_lr": {"low": 1e-4, "high": 1e-1, "log": True},
        "horizon_samples": 8192,
        "micro_batch_size": {"choices": [16, 32, 64]},
        "grad_accum_steps": {"choices": [1, 2, 4]},
    }
    lr = narrow_lr(raw, (3e-3, 3e-2))
    assert lr["peak_lr"] == {"low": 3e-3, "high": 3e-2, "log": True}
    batch = narrow_batch(raw, (20, 70))
    assert batch["micro_batch_size"] == {"choices": [16, 32, 64]}
    assert batch["grad_accum_steps"] == {"choices": [1, 2, 4]}
    tight = narrow_batch(raw, (100, 300))
    assert tight["micro_batch_size"] == {"choices": [32, 64]} and tight["grad_accum_steps"] == {
        "choices": [2, 4]
    }
    none = narrow_batch(raw, (1000, 2000))  # nothing fits: the closest stays, the space stays valid
    for space in (lr, batch, tight, none):
        SearchSpace.from_dict(space)


def test_narrowing_the_lr_of_an_optimizer_with_its_own_range_leaves_the_others() -> None:
    from convtune.config.space import SearchSpace

    raw = {
        "peak_lr": {"low": 1e-4, "high": 1e-1, "log": True},
        "horizon_samples": 8192,
        "micro_batch_size": 32,
        "optimizer": {
            "choices": ["adamw", "lion"],
            "lion": {"peak_lr": {"low": 1e-5, "high": 1e-2, "log": True}, "weight_decay": 0.1},
        },
    }
    lion = narrow_lr(raw, (3e-4, 3e-3), "lion")
    assert lion["optimizer"]["lion"] == {
        "peak_lr": {"low": 3e-4, "high": 3e-3, "log": True},
        "weight_decay": 0.1,
    }
    assert lion["peak_lr"] == raw["peak_lr"]  # AdamW's (the shared) range is untouched
    assert raw["optimizer"]["lion"]["peak_lr"]["low"] == 1e-5  # the input is not modified
    adamw = narrow_lr(raw, (3e-3, 3e-2), "adamw")  # no own range: the shared one is cut
    assert adamw["peak_lr"] == {"low": 3e-3, "high": 3e-2, "log": True}
    assert adamw["optimizer"] == raw["optimizer"]
    for space in (lion, adamw):
        SearchSpace.from_dict(space)


def test_an_fp16_lr_range_test_scales_its_loss_as_a_trial_does(digits) -> None:  # type: ignore[no-untyped-def]
    """An fp16 recipe's probe steps through a GradScaler (on a GPU, unscaled fp16 gradients
    underflow); on this CPU fp16 autocast is only emulated, so the fp16 sweep must agree with the
    fp32 one: the same steepest LR within a factor of two, and the same blow-up verdict. Both clip
    (the scaler unscales the gradients before they are clipped)."""
    fp32 = lr_range_test(
        digits, recipe().model_copy(update={"clip_norm": 1.0}), min_lr=1e-4, max_lr=1.0, steps=40
    )
    fp16 = lr_range_test(
        digits,
        recipe().model_copy(update={"precision": "fp16", "clip_norm": 1.0}),
        min_lr=1e-4,
        max_lr=1.0,
        steps=40,
    )
    assert 0.5 <= fp16.steepest_lr / fp32.steepest_lr <= 2.0, (fp16.steepest_lr, fp32.steepest_lr)
    assert (fp16.blowup_lr is None) == (fp32.blowup_lr is None)
