"""LR schedule registry. Every schedule is defined over the recipe's ``total_steps``.

Warm-up, cosine, linear and constant are ``LambdaLR`` multipliers with the same formulas as
Hugging Face's ``get_*_schedule_with_warmup`` (so an ``hf`` export is exact); cyclic and one-cycle
are torch's own ``CyclicLR`` and ``OneCycleLR``. Schedulers are stepped once per optimizer step.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Protocol

import torch
from torch.optim.lr_scheduler import (
    CyclicLR,
    LambdaLR,
    LinearLR,
    LRScheduler,
    OneCycleLR,
    SequentialLR,
)


class RecipeFields(Protocol):
    """What a schedule reads from a :class:`convtune.config.recipe.Recipe` (which imports this
    registry, so the registry names only the fields it needs)."""

    @property
    def peak_lr(self) -> float: ...
    @property
    def warmup_steps(self) -> int: ...
    @property
    def total_steps(self) -> int: ...
    @property
    def schedule_params(self) -> dict[str, Any]: ...


@dataclass(frozen=True)
class ScheduleEntry:
    """How to build one LR schedule. ``build(optimizer, recipe)`` returns a torch scheduler.

    ``uses_warmup`` is false for schedules with their own warm-up phase (one-cycle).
    Cyclic and one-cycle take ``cycle_momentum`` (default false): torch's schedulers would
    otherwise overwrite momentum/beta1, so momentum cycling happens only when it is a knob.
    """

    name: str
    build: Callable[[torch.optim.Optimizer, RecipeFields], LRScheduler]
    defaults: Mapping[str, Any] = field(default_factory=dict)
    uses_warmup: bool = True
    hf_scheduler: str | None = None


SCHEDULES: dict[str, ScheduleEntry] = {}


def register_schedule(entry: ScheduleEntry) -> ScheduleEntry:
    """Add (or replace) the LR schedule ``entry.name``; returns the entry.

    ``build(optimizer, recipe)`` returns a torch ``LRScheduler`` over ``recipe.total_steps``
    optimizer steps (it is stepped once per optimizer step; past the horizon the LR should hold).
    ``defaults`` names the schedule's conditional parameters (``<name>.<param>`` in a space;
    ``recipe.schedule_params`` at build time). :func:`warmup_factor` is the warm-up every
    built-in uses. Register where every process imports it (the workload's module); the trial's
    planned schedule, and so the forecasts, come from the same builder.

    >>> import torch
    >>> from torch.optim.lr_scheduler import LambdaLR
    >>> from convtune.config.recipe import Recipe
    >>> from convtune.config.schedules import SCHEDULES, ScheduleEntry, register_schedule, warmup_factor
    >>> def step_decay(optimizer, recipe):
    ...     every = recipe.schedule_params["every_steps"]
    ...     gamma = recipe.schedule_params["gamma"]
    ...     return LambdaLR(optimizer, lambda s: warmup_factor(s, recipe.warmup_steps) * gamma ** (s // every))
    >>> _ = register_schedule(ScheduleEntry("step", step_decay, {"every_steps": 10, "gamma": 0.5}))
    >>> recipe = Recipe(peak_lr=0.1, horizon_samples=320, micro_batch_size=8, schedule="step")
    >>> opt = recipe.optimizer(torch.nn.Linear(2, 1))
    >>> sched = recipe.scheduler(opt)
    >>> for _ in range(10):
    ...     opt.step(); sched.step()
    >>> round(sched.get_last_lr()[0], 6)
    0.05
    >>> del SCHEDULES["step"]
    """
    SCHEDULES[entry.name] = entry
    return entry


def warmup_factor(step: int, warmup_steps: int) -> float:
    """Linear warm-up: 1/(W+1) at step 0, exactly 1 at step W (no step runs at LR 0)."""
    if warmup_steps <= 0 or step >= warmup_steps:
        return 1.0
    return (step + 1) / (warmup_steps + 1)


def _decay_progress(step: int, recipe: RecipeFields) -> float:
    span = max(1, recipe.total_steps - recipe.warmup_steps)
    return min(1.0, max(0.0, (step - recipe.warmup_steps) / span))


def cosine_multiplier(step: int, recipe: RecipeFields) -> float:
    if step < recipe.warmup_steps:
        return warmup_factor(step, recipe.warmup_steps)
    floor = float(recipe.schedule_params.get("min_lr_ratio", 0.0))
    cosine = 0.5 * (1.0 + math.cos(math.pi * _decay_progress(step, recipe)))
    return floor + (1.0 - floor) * cosine


def linear_multiplier(step: int, recipe: RecipeFields) -> float:
    if step < recipe.warmup_steps:
        return warmup_factor(step, recipe.warmup_steps)
    floor = float(recipe.schedule_params.get("min_lr_ratio", 0.0))
    return floor + (1.0 - floor) * (1.0 - _decay_progress(step, recipe))


def constant_multiplier(step: int, recipe: RecipeFields) -> float:
    return warmup_factor(step, recipe.warmup_steps)


def _lambda(
    multiplier: Callable[[int, RecipeFields], float],
) -> Callable[[torch.optim.Optimizer, RecipeFields], LRScheduler]:
    def build(optimizer: torch.optim.Optimizer, recipe: RecipeFields) -> LRScheduler:
        return LambdaLR(optimizer, lambda step: multiplier(step, recipe))

    return build


def _cyclic(optimizer: torch.optim.Optimizer, recipe: RecipeFields) -> LRScheduler:
    p = recipe.schedule_params
    ratio = float(p["base_lr_ratio"])
    ramp = None
    if recipe.warmup_steps > 0:
        # Warm up to the cycle's lower bound, so the cycle starts where the ramp ends (no jump).
        ramp = LinearLR(
            optimizer,
            start_factor=ratio / (recipe.warmup_steps + 1),
            end_factor=ratio,
            total_iters=recipe.warmup_steps,
        )
    cyclic = CyclicLR(
        optimizer,
        base_lr=recipe.peak_lr * ratio,
        max_lr=recipe.peak_lr,
        step_size_up=int(p["half_period_steps"]),
        mode=p["mode"],
        gamma=float(p["gamma"]),
        cycle_momentum=bool(p.get("cycle_momentum", False)),
    )
    if ramp is None:
        return cyclic
    return SequentialLR(optimizer, [ramp, cyclic], milestones=[recipe.warmup_steps])


def _onecycle(optimizer: torch.optim.Optimizer, recipe: RecipeFields) -> LRScheduler:
    p = recipe.schedule_params
    return OneCycleLR(
        optimizer,
        max_lr=recipe.peak_lr,
        total_steps=max(2, recipe.total_steps),
        pct_start=float(p["pct_start"]),
        anneal_strategy=p["anneal_strategy"],
        div_factor=float(p["div_factor"]),
        final_div_factor=float(p["final_div_factor"]),
        cycle_momentum=bool(p.get("cycle_momentum", False)),
    )


register_schedule(
    ScheduleEntry("cosine", _lambda(cosine_multiplier), {"min_lr_ratio": 0.0}, hf_scheduler="cosine")
)
register_schedule(
    ScheduleEntry("linear", _lambda(linear_multiplier), {"min_lr_ratio": 0.0}, hf_scheduler="linear")
)
register_schedule(
    ScheduleEntry("constant", _lambda(constant_multiplier), {}, hf_scheduler="constant_with_warmup")
)
register_schedule(
    ScheduleEntry(
        "cyclic",
        _cyclic,
        {
            "base_lr_ratio": 0.1,
            "half_period_steps": 200,
            "mode": "triangular",
            "gamma": 1.0,
            "cycle_momentum": False,
        },
    )
)
register_schedule(
    ScheduleEntry(
        "onecycle",
        _onecycle,
        {
            "pct_start": 0.3,
            "anneal_strategy": "cos",
            "div_factor": 25.0,
            "final_div_factor": 1.0e4,
            "cycle_momentum": False,
        },
        uses_warmup=False,
    )
)
