"""The training loop: accumulation, precision paths, divergence rules, evaluation and stopping.

Every run here counts cost in samples (deterministic) and takes well under a few seconds.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Iterator
from typing import NamedTuple

import pytest
import torch
from torch import nn
from torch.nn import functional as F

from convtune.config.recipe import Recipe
from convtune.training.engine import EngineConfig, Progress, train
from convtune.workloads.digits import Digits


class FixedStream:
    """A deterministic workload: one fixed sequence of samples, cut into micro-batches in order.

    Whatever the micro-batch size, the k-th sample seen is the same, so micro 8 × accum 4 and
    batch 32 consume identical data per optimizer step. It keeps the model it built.
    """

    def __init__(self, samples: int = 512, features: int = 8, classes: int = 3):
        generator = torch.Generator().manual_seed(1234)
        self.x = torch.randn(samples, features, generator=generator)
        self.y = torch.randint(0, classes, (samples,), generator=generator)
        self.features, self.classes = features, classes
        self.model: nn.Module | None = None

    def build_model(self) -> nn.Module:
        self.model = nn.Sequential(
            nn.Linear(self.features, 16), nn.LayerNorm(16), nn.Tanh(), nn.Linear(16, self.classes)
        )
        return self.model

    def train_batches(self, micro_batch_size: int, rank: int, world_size: int, seed: int) -> Iterator:
        assert len(self.x) % micro_batch_size == 0
        while True:
            for start in range(0, len(self.x), micro_batch_size):
                yield self.x[start : start + micro_batch_size], self.y[start : start + micro_batch_size]

    def loss(self, model: nn.Module, batch) -> torch.Tensor:
        x, y = batch
        return F.cross_entropy(model(x).float(), y)

    @torch.no_grad()
    def evaluate(self, model: nn.Module) -> dict[str, float]:
        device = next(model.parameters()).device
        return {"val_loss": F.cross_entropy(model(self.x.to(device)).float(), self.y.to(device)).item()}


class _InfGrad(torch.autograd.Function):
    """Identity forward; backward turns the incoming gradient into inf (an fp16 overflow)."""

    @staticmethod
    def forward(ctx, x):
        return x.view_as(x)

    @staticmethod
    def backward(ctx, grad):
        return grad * math.inf


class OverflowingDigits(Digits):
    """Digits whose gradients overflow on chosen optimizer steps while the loss stays finite."""

    def __init__(self, bad_steps: set[int], accum: int = 1):
        super().__init__(hidden=32, depth=1)
        self.bad_steps, self.accum, self.calls = bad_steps, accum, 0

    def loss(self, model, batch):
        inputs, labels = batch
        step = self.calls // self.accum + 1  # 1-based optimizer step this micro-batch belongs to
        self.calls += 1
        logits = model(inputs)
        if step in self.bad_steps:
            logits = _InfGrad.apply(logits)
        return F.cross_entropy(logits.float(), labels)


def recipe(**kw) -> Recipe:
    base = {"peak_lr": 1e-2, "horizon_samples": 3200, "micro_batch_size": 32, "schedule": "constant"}
    return Recipe.from_dict({**base, **kw})


def config(**kw) -> EngineConfig:
    return EngineConfig(**{"cost": "samples", "eval_every": 320, "max_cost": 640, **kw})


# ---- gradient accumulation ----------------------------------------------------------------


@pytest.mark.parametrize("optimizer", ["adamw", "sgd"])
def test_accumulation_matches_one_big_batch(optimizer):
    states = []
    for micro, accum in ((8, 4), (32, 1), (16, 2)):
        workload = FixedStream()
        r = recipe(
            micro_batch_size=micro,
            grad_accum_steps=accum,
            optimizer=optimizer,
            schedule="cosine",
            warmup_steps=2,
            horizon_samples=320,
        )
        assert r.effective_batch_size == 32
        result = train(workload, r, config(max_cost=320, eval_every=10_000))
        assert result.status == "budget" and result.steps == 10 and result.samples == 320
        states.append({k: v.detach().cpu().clone() for k, v in workload.model.state_dict().items()})
    reference = states[1]
    torch.manual_seed(0)
    initial = FixedStream().build_model().state_dict()
    assert any(not torch.allclose(initial[k], reference[k], atol=1e-3) for k in reference)  # it trained
    for other in (states[0], states[2]):
        for key, value in reference.items():
            torch.testing.assert_close(other[key], value, rtol=1e-5, atol=1e-6)


def test_accumulation_differs_from_fewer_samples():
    """Control for the test above: micro 8 without accumulation sees other data and differs."""
    a, b = FixedStream(), FixedStream()
    train(a, recipe(micro_batch_size=32, horizon_samples=320), config(max_cost=320))
    train(b, recipe(micro_batch_size=8, horizon_samples=320), config(max_cost=80))
    assert not torch.allclose(a.model[0].weight, b.model[0].weight, atol=1e-4)


# ---- precision paths -----------------------------------------------------------------------


@pytest.mark.parametrize("precision", ["fp32", "bf16", "fp16"])
def test_precision_paths_run_and_learn(precision):
    workload = Digits(hidden=32, depth=1)
    r = recipe(precision=precision, peak_lr=1e-2, micro_batch_size=32, clip_norm=1.0)
    result = train(workload, r, config(eval_every=64, max_cost=1280))
    assert result.status == "budget"
    losses = [p.metrics["val_loss"] for p in result.history]
    assert len(losses) == 20
    assert losses[-1] < 0.6 * losses[0]
    assert result.history[-1].metrics["accuracy"] > 0.8
    scales = {p.loss_scale for p in result.history}
    if precision == "fp16":
        assert scales == {65536.0}  # dynamic loss scale recorded, no step skipped on this run
    else:
        assert scales == {1.0}
    assert all(p.skipped_steps == 0 for p in result.history)


# ---- divergence ----------------------------------------------------------------------------


def test_huge_lr_diverges_and_stops_at_once():
    records: list[Progress] = []
    r = recipe(optimizer="adamw", peak_lr=1e4, horizon_samples=32_000)
    result = train(Digits(), r, config(max_cost=32_000), records.append)
    assert result.status == "diverged"
    assert "non-finite" in result.reason
    assert result.steps < 100
    assert records and records[-1].step == result.steps  # the diverging step is reported


def test_occasional_fp16_skipped_step_is_not_divergence():
    workload = OverflowingDigits(bad_steps={3, 11})
    r = recipe(precision="fp16", horizon_samples=640)
    result = train(workload, r, config(eval_every=320, max_cost=640))
    assert result.status == "budget", result.reason
    assert result.history[-1].skipped_steps == 2
    assert result.history[-1].loss_scale == 65536.0 / 4  # halved once per skipped step
    assert math.isfinite(result.history[-1].train_loss)


@pytest.mark.parametrize("accum", [1, 2])
def test_k_fp16_skipped_steps_in_a_row_diverge(accum):
    workload = OverflowingDigits(bad_steps={4, 5, 6, 7, 8}, accum=accum)
    r = recipe(precision="fp16", micro_batch_size=16, grad_accum_steps=accum, horizon_samples=3200)
    result = train(workload, r, config(max_cost=3200, max_skipped_steps=3))
    assert result.status == "diverged"
    assert "3 fp16 steps skipped in a row" in result.reason
    assert result.steps == 6
    assert result.history[-1].skipped_steps == 3
    assert result.history[-1].loss_scale == 65536.0 / 8


def test_overflowing_gradients_without_a_scaler_diverge():
    """The same overflowing gradients in fp32 (no scaler) would poison the weights: the scaler
    is what makes an occasional overflow harmless, and that is what the fp16 rule relies on."""
    workload = OverflowingDigits(bad_steps={3})
    result = train(workload, recipe(horizon_samples=640), config(max_cost=640))
    assert result.status == "diverged"


def test_loss_scale_below_one_diverges():
    workload = OverflowingDigits(bad_steps=set(range(1, 40)))
    r = recipe(precision="fp16", micro_batch_size=16, horizon_samples=3200)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        result = train(workload, r, config(max_cost=3200, max_skipped_steps=1000))
    # Every step skipped, the first included: the schedule still counts it, without PyTorch's
    # warning about a skipped first step on the user's terminal.
    assert not [w for w in caught if "lr_scheduler.step()" in str(w.message)]
    assert result.status == "diverged"
    assert "loss scale fell below 1" in result.reason
    assert result.steps == 17  # 2**16 halved 17 times
    assert result.history[-1].loss_scale < 1.0


# ---- evaluation schedule, budget and stopping ----------------------------------------------


def test_eval_every_samples():
    result = train(FixedStream(), recipe(micro_batch_size=16, grad_accum_steps=2), config(eval_every=100))
    # Evaluations at the first optimizer step at or past each multiple of 100 samples.
    assert [p.samples for p in result.history] == [128, 224, 320, 416, 512, 608, 640]
    assert [p.cost for p in result.history] == [float(p.samples) for p in result.history]
    assert result.history[-1].samples == 640  # the cap itself is reported too
    assert result.status == "budget" and result.samples == 640


def test_eval_every_steps():
    result = train(
        FixedStream(), recipe(micro_batch_size=16), config(eval_every=3, eval_unit="steps", max_cost=160)
    )
    assert [p.step for p in result.history] == [3, 6, 9, 10]
    assert [p.samples for p in result.history] == [48, 96, 144, 160]


def test_max_cost_caps_the_run():
    result = train(FixedStream(), recipe(), config(eval_every=10_000, max_cost=200))
    assert result.status == "budget"
    assert result.samples == 224  # the first whole step at or past the cap
    assert len(result.history) == 1 and result.history[0].cost == 224.0


def test_on_eval_true_stops_at_once():
    calls: list[Progress] = []

    def stop_on_second(progress: Progress) -> bool:
        calls.append(progress)
        return len(calls) == 2

    result = train(FixedStream(), recipe(), config(eval_every=64, max_cost=10_000), stop_on_second)
    assert result.status == "stopped"
    assert len(calls) == 2 and result.history == calls
    assert result.samples == 128 and result.steps == 4


def test_progress_records_are_consistent():
    r = recipe(schedule="cosine", warmup_steps=3, horizon_samples=640)
    result = train(FixedStream(), r, config(eval_every=64, max_cost=640))
    history = result.history
    seconds = [p.seconds for p in history]
    assert seconds == sorted(seconds) and seconds[0] > 0
    assert result.seconds == pytest.approx(seconds[-1])
    for p in history:
        assert p.cost == p.samples == p.step * r.effective_batch_size
        # The LR reported is the one the schedule gives for the next step.
        assert p.lr == pytest.approx(r.lr_per_step[min(p.step, r.total_steps - 1)])
        assert math.isfinite(p.train_loss) and p.train_loss > 0
        assert set(p.to_dict()) >= {"step", "samples", "seconds", "cost", "metrics", "lr", "loss_scale"}


def test_run_ends_with_its_planned_horizon():
    """The schedule spans total_steps; the run ends there (status finished) even if the cap is later,
    with the schedule's last LR and without OneCycleLR erroring on an extra step."""
    r = recipe(schedule="onecycle", schedule_params={"pct_start": 0.3}, horizon_samples=320)
    assert r.total_steps == 10
    result = train(FixedStream(), r, config(eval_every=64, max_cost=640))
    assert result.status == "finished" and result.steps == r.total_steps
    assert result.history[-1].step == r.total_steps
    assert result.history[-1].lr == pytest.approx(r.lr_per_step[-1])


class _Pair(NamedTuple):
    x: torch.Tensor
    y: torch.Tensor


class ShapedBatches(FixedStream):
    """FixedStream whose batches come as a namedtuple, a dict, a list with a tag, or a bare pair."""

    def __init__(self, shape: str):
        super().__init__()
        self.shape = shape
        self.seen: set[str] = set()

    def train_batches(self, micro_batch_size: int, rank: int, world_size: int, seed: int) -> Iterator:
        for x, y in super().train_batches(micro_batch_size, rank, world_size, seed):
            if self.shape == "batch_encoding":
                from transformers import BatchEncoding

                yield BatchEncoding({"x": x, "y": y})
                continue
            yield {
                "namedtuple": _Pair(x, y),
                "dict": {"x": x, "y": y, "tag": "digits"},
                "list": [x, y, "tag"],
                "tuple": (x, y),
            }[self.shape]

    def loss(self, model: nn.Module, batch) -> torch.Tensor:
        device = next(model.parameters()).device
        self.seen.add(type(batch).__name__)
        if self.shape == "namedtuple":
            x, y = batch.x, batch.y
        elif self.shape == "batch_encoding":
            x, y = batch["x"], batch["y"]
        elif self.shape == "dict":
            assert batch["tag"] == "digits"  # what is not a tensor passes through as it was
            x, y = batch["x"], batch["y"]
        elif self.shape == "list":
            assert batch[2] == "tag"
            x, y = batch[0], batch[1]
        else:
            x, y = batch
        assert x.device == device and y.device == device
        return F.cross_entropy(model(x).float(), y)


@pytest.mark.parametrize("shape", ["namedtuple", "dict", "list", "tuple", "batch_encoding"])
def test_batches_reach_loss_on_the_models_device_in_their_own_shape(shape):
    """The engine moves a batch's tensors to the model's device (on a GPU, a workload written on
    a CPU would otherwise fail at its first step) and keeps the batch's type and its other items.
    Here the device is the CPU: moving to CUDA is checked by benchmarks/gpu_check.py on a GPU."""
    if shape == "batch_encoding":
        pytest.importorskip("transformers", reason="the hf extra (pip install convtune[hf]) is not installed")
    workload = ShapedBatches(shape)
    reference = train(FixedStream(), recipe(), config(eval_every=128, max_cost=256))
    result = train(workload, recipe(), config(eval_every=128, max_cost=256))
    expected = {
        "namedtuple": "_Pair",
        "dict": "dict",
        "list": "list",
        "tuple": "tuple",
        "batch_encoding": "BatchEncoding",
    }[shape]
    assert workload.seen == {expected}
    assert result.history[-1].metrics["val_loss"] == reference.history[-1].metrics["val_loss"]
