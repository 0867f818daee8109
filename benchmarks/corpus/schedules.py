"""Schedules the corpus needs beyond convtune's built-ins, added through the public registry.

``register_corpus_schedules()`` adds three ``ScheduleEntry``s with
``convtune.config.schedules.register_schedule``, so a ``Recipe`` accepts them like any built-in:

- ``wsd`` (warmup-stable-decay, "cool-down"): linear warm-up, the peak LR held, then a linear
  decay to ``min_lr_ratio`` over the last ``decay_fraction`` of the planned steps.
- ``step``: the peak LR multiplied by ``gamma`` at each of ``milestone_fractions`` of the run.
- ``inverse_sqrt``: after warm-up, ``peak / sqrt(1 + (step - warmup) / timescale)`` with
  ``timescale = timescale_fraction × total_steps``; it never decays to zero (no cool-down).

Example:
    >>> register_corpus_schedules()
    >>> from convtune.config.recipe import Recipe
    >>> r = Recipe(peak_lr=1.0, horizon_samples=100, micro_batch_size=1, schedule="wsd")
    >>> r.lr_per_step[79], r.lr_per_step[99] < 0.1
    (1.0, True)
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import torch
from torch.optim.lr_scheduler import LambdaLR, LRScheduler

from convtune.config.recipe import Recipe
from convtune.config.schedules import SCHEDULES, ScheduleEntry, register_schedule, warmup_factor

CORPUS_SCHEDULES = ("wsd", "step", "inverse_sqrt")


def wsd_multiplier(step: int, recipe: Recipe) -> float:
    """Warm-up, hold at 1, then linear to ``min_lr_ratio`` over the last ``decay_fraction``."""
    if step < recipe.warmup_steps:
        return warmup_factor(step, recipe.warmup_steps)
    p = recipe.schedule_params
    floor = float(p["min_lr_ratio"])
    decay_steps = max(1, round(float(p["decay_fraction"]) * recipe.total_steps))
    decay_start = max(recipe.warmup_steps, recipe.total_steps - decay_steps)
    if step < decay_start:
        return 1.0
    # Reaches the floor exactly at the last planned step.
    progress = min(1.0, (step - decay_start + 1) / max(1, recipe.total_steps - decay_start))
    return floor + (1.0 - floor) * (1.0 - progress)


def step_multiplier(step: int, recipe: Recipe) -> float:
    """Warm-up, then ``gamma ** (milestones passed)``; milestones are fractions of the run."""
    if step < recipe.warmup_steps:
        return warmup_factor(step, recipe.warmup_steps)
    p = recipe.schedule_params
    passed = sum(step >= round(float(f) * recipe.total_steps) for f in p["milestone_fractions"])
    return float(p["gamma"]) ** passed


def inverse_sqrt_multiplier(step: int, recipe: Recipe) -> float:
    """Warm-up, then ``1 / sqrt(1 + (step - warmup) / timescale)``."""
    if step < recipe.warmup_steps:
        return warmup_factor(step, recipe.warmup_steps)
    timescale = max(1.0, float(recipe.schedule_params["timescale_fraction"]) * recipe.total_steps)
    return 1.0 / math.sqrt(1.0 + (step - recipe.warmup_steps) / timescale)


def _lambda(
    multiplier: Callable[[int, Recipe], float],
) -> Callable[[torch.optim.Optimizer, Recipe], LRScheduler]:
    def build(optimizer: torch.optim.Optimizer, recipe: Recipe) -> LRScheduler:
        return LambdaLR(optimizer, lambda step: multiplier(step, recipe))

    return build


_ENTRIES: tuple[tuple[str, Callable[[int, Recipe], float], dict[str, Any]], ...] = (
    ("wsd", wsd_multiplier, {"decay_fraction": 0.2, "min_lr_ratio": 0.0}),
    ("step", step_multiplier, {"gamma": 0.1, "milestone_fractions": [0.5, 0.75]}),
    ("inverse_sqrt", inverse_sqrt_multiplier, {"timescale_fraction": 0.05}),
)


def register_corpus_schedules() -> None:
    """Register ``wsd``, ``step`` and ``inverse_sqrt`` (idempotent)."""
    for name, multiplier, defaults in _ENTRIES:
        if name not in SCHEDULES:
            register_schedule(ScheduleEntry(name, _lambda(multiplier), defaults))
