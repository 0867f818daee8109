"""LR per step against hand-written anchors, for every registered schedule."""

from __future__ import annotations

import math

import pytest
import torch

from convtune.config.recipe import Recipe


def make(schedule: str, *, total_steps: int = 100, warmup: int = 0, peak: float = 1.0, **params) -> Recipe:
    recipe = Recipe(
        peak_lr=peak,
        warmup_steps=warmup,
        horizon_samples=total_steps * 8,
        micro_batch_size=8,
        schedule=schedule,
        schedule_params=params,
    )
    assert recipe.total_steps == total_steps
    return recipe


def lrs(recipe: Recipe) -> list[float]:
    out = list(recipe.lr_per_step)
    assert len(out) == recipe.total_steps
    return out


@pytest.mark.parametrize("schedule", ["cosine", "linear", "constant"])
def test_warmup_ramp_ends_at_peak(schedule):
    lr = lrs(make(schedule, warmup=10, peak=3e-3))
    assert lr[10] == pytest.approx(3e-3, rel=1e-12)
    assert lr[0] == pytest.approx(3e-3 / 11)  # no step runs at LR 0
    ramp = lr[:11]
    assert all(b > a for a, b in zip(ramp, ramp[1:], strict=False))
    # Evenly spaced ramp: a straight line from peak/(W+1) to peak.
    for step in range(11):
        assert lr[step] == pytest.approx(3e-3 * (step + 1) / 11)


@pytest.mark.parametrize("min_ratio", [0.0, 0.1])
def test_cosine_midpoint_and_end(min_ratio):
    peak, warmup, total = 2.0, 10, 110
    lr = lrs(make("cosine", total_steps=total, warmup=warmup, peak=peak, min_lr_ratio=min_ratio))
    floor = peak * min_ratio
    assert lr[warmup + (total - warmup) // 2] == pytest.approx((peak + floor) / 2)
    # A quarter of the way down the cosine: floor + (peak-floor)·(1+cos(π/4))/2.
    quarter = warmup + (total - warmup) // 4  # progress 25/100
    assert lr[quarter] == pytest.approx(floor + (peak - floor) * (1 + math.cos(math.pi / 4)) / 2)
    assert all(b <= a for a, b in zip(lr[warmup:], lr[warmup + 1 :], strict=False))
    assert floor <= min(lr[warmup:])
    assert lr[-1] == pytest.approx(floor + (peak - floor) * (1 + math.cos(math.pi * 99 / 100)) / 2)


def test_linear_decay():
    peak, warmup, total = 1.0, 20, 120
    lr = lrs(make("linear", total_steps=total, warmup=warmup, peak=peak, min_lr_ratio=0.2))
    for step in (20, 45, 70, 95, 119):
        progress = (step - warmup) / (total - warmup)
        assert lr[step] == pytest.approx(0.2 + 0.8 * (1 - progress))
    assert lr[70] == pytest.approx((1.0 + 0.2) / 2)


def test_constant_after_warmup():
    lr = lrs(make("constant", total_steps=50, warmup=5, peak=0.5))
    assert lr[5:] == [pytest.approx(0.5)] * 45
    assert lr[4] < 0.5


def test_cyclic_triangular_bounds_and_period():
    lr = lrs(
        make("cyclic", total_steps=60, peak=1.0, base_lr_ratio=0.2, half_period_steps=5, mode="triangular")
    )
    base, peak = 0.2, 1.0
    for cycle in range(5):
        assert lr[10 * cycle] == pytest.approx(base)
        assert lr[10 * cycle + 5] == pytest.approx(peak)
        assert lr[10 * cycle + 2] == pytest.approx(base + (peak - base) * 2 / 5)
    assert min(lr) == pytest.approx(base) and max(lr) == pytest.approx(peak)


def test_cyclic_triangular2_halves_the_amplitude_each_cycle():
    lr = lrs(
        make("cyclic", total_steps=60, peak=1.0, base_lr_ratio=0.2, half_period_steps=5, mode="triangular2")
    )
    base = 0.2
    first, second, third = (max(lr[10 * c : 10 * c + 10]) - base for c in range(3))
    assert first == pytest.approx(0.8)
    assert second == pytest.approx(first / 2)
    assert third == pytest.approx(first / 4)


def test_cyclic_exp_range_decays_by_gamma_per_step():
    gamma = 0.9
    lr = lrs(
        make(
            "cyclic",
            total_steps=60,
            peak=1.0,
            base_lr_ratio=0.2,
            half_period_steps=5,
            mode="exp_range",
            gamma=gamma,
        )
    )
    for cycle in range(3):
        top = 10 * cycle + 5
        assert lr[top] == pytest.approx(0.2 + 0.8 * gamma**top)
        assert lr[10 * cycle] == pytest.approx(0.2)


def test_cyclic_warmup_ramps_to_the_lower_bound_then_cycles():
    """With warm-up, cyclic ramps to its base LR (not the peak) so the cycle starts without a jump."""
    lr = lrs(make("cyclic", total_steps=60, warmup=4, peak=1.0, base_lr_ratio=0.2, half_period_steps=5))
    assert lr[:5] == [pytest.approx(0.2 * (s + 1) / 5) for s in range(5)]
    assert lr[4 + 5] == pytest.approx(1.0)
    assert lr[4 + 10] == pytest.approx(0.2)


@pytest.mark.parametrize("pct", [0.25, 0.3, 0.5])
def test_onecycle_peaks_at_pct_start(pct):
    """torch's OneCycleLR ends its rise at step pct_start·T − 1 (0-based); warm-up is not added."""
    total = 200
    lr = lrs(make("onecycle", total_steps=total, warmup=50, peak=0.4, pct_start=pct))
    top = round(pct * total) - 1
    assert lr[top] == pytest.approx(0.4)
    assert max(lr) == pytest.approx(0.4)
    assert lr.index(max(lr)) == top
    assert lr[0] == pytest.approx(0.4 / 25)  # div_factor, not a warm-up ramp from 0
    assert lr[-1] == pytest.approx(0.4 / 25 / 1e4)
    assert make("onecycle", pct_start=pct).uses_warmup is False


@pytest.mark.parametrize(
    ("optimizer", "key", "expected"),
    [("adamw", "betas", (0.9, 0.95)), ("sgd", "momentum", 0.9), ("lamb", "betas", (0.9, 0.999))],
)
@pytest.mark.parametrize(
    ("schedule", "params"),
    [("cyclic", {"base_lr_ratio": 0.1, "half_period_steps": 7}), ("onecycle", {"pct_start": 0.3})],
)
def test_cyclic_and_onecycle_leave_momentum_untouched(optimizer, key, expected, schedule, params):
    opt_params = {"beta2": 0.95} if optimizer == "adamw" else {}
    recipe = Recipe(
        peak_lr=0.1,
        horizon_samples=400,
        micro_batch_size=8,
        schedule=schedule,
        schedule_params=params,
        optimizer=optimizer,
        optimizer_params=opt_params,
    )
    weight = torch.nn.Parameter(torch.ones(3, 3))
    opt = recipe.optimizer([weight])
    sched = recipe.scheduler(opt)
    seen_lrs = set()
    for _ in range(recipe.total_steps - 1):
        weight.grad = torch.ones_like(weight)
        opt.step()
        sched.step()
        seen_lrs.add(opt.param_groups[0]["lr"])
        for group in opt.param_groups:
            assert group[key] == expected
    assert len(seen_lrs) > 10  # the LR did move while momentum stayed put


def test_lr_per_step_spans_total_steps_and_matches_a_stepped_scheduler():
    """``lr_per_step[i]`` is the LR the i-th optimizer step uses; there are exactly total_steps.

    The engine steps the scheduler only while ``step < total_steps`` (past the horizon the LR
    holds at its last value; torch's OneCycleLR would raise if stepped further).
    """
    recipe = make("onecycle", total_steps=37, pct_start=0.4)
    weight = torch.nn.Parameter(torch.zeros(1))
    opt = recipe.optimizer([weight])
    sched = recipe.scheduler(opt)
    stepped = []
    for step in range(recipe.total_steps):
        stepped.append(opt.param_groups[0]["lr"])
        opt.step()
        if step + 1 < recipe.total_steps:
            sched.step()
    assert tuple(stepped) == recipe.lr_per_step
    sched.step()  # the 37th scheduler step is the last OneCycleLR accepts…
    with pytest.raises(ValueError):
        sched.step()  # …which is why the engine stops stepping at total_steps
