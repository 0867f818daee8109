"""A training recipe exported by convtune: optimizer, LR schedule, precision and batch sizes.

This module needs only torch (plus ``pytorch_optimizer`` for LAMB, LARS and Lion). Every value
lives in ``RECIPE`` below, parsed from a JSON literal, so nothing from the study is code here.

Use it in a plain PyTorch loop::

    import best as recipe                      # this file, saved as best.py

    opt = recipe.build_optimizer(model)        # biases, norms and embeddings: no weight decay
    sched = recipe.build_scheduler(opt)
    scaler = recipe.grad_scaler()
    for step in range(recipe.TOTAL_STEPS):
        for _ in range(recipe.GRAD_ACCUM_STEPS):
            with recipe.autocast():
                loss = compute_loss(model, next(batches)) / recipe.GRAD_ACCUM_STEPS
            scaler.scale(loss).backward()
        if recipe.CLIP_NORM is not None:
            scaler.unscale_(opt)
            torch.nn.utils.clip_grad_norm_(model.parameters(), recipe.CLIP_NORM)
        scaler.step(opt)
        scaler.update()
        opt.zero_grad(set_to_none=True)
        if step + 1 < recipe.TOTAL_STEPS:      # past the planned horizon the LR holds
            sched.step()

The schedule is step-for-step the one convtune measured: the same formulas, stepped once per
optimizer step. ``META`` says where it came from (study, trial, target, time-to-target).
"""

from __future__ import annotations

import contextlib
import json
import math
from typing import Any

import torch
from torch.optim.lr_scheduler import CyclicLR, LambdaLR, LinearLR, OneCycleLR, SequentialLR

# convtune writes the whole recipe here as one JSON string literal (data, never code).
_DOCUMENT = "{}"

_DOC: dict[str, Any] = json.loads(_DOCUMENT)
RECIPE: dict[str, Any] = _DOC.get("recipe", {})
META: dict[str, Any] = {k: v for k, v in _DOC.items() if k != "recipe"}

PEAK_LR: float = float(RECIPE.get("peak_lr", 0.0))
WARMUP_STEPS: int = int(RECIPE.get("warmup_steps", 0))
MICRO_BATCH_SIZE: int = int(RECIPE.get("micro_batch_size", 1))
GRAD_ACCUM_STEPS: int = int(RECIPE.get("grad_accum_steps", 1))
WORLD_SIZE: int = int(RECIPE.get("world_size", 1))
EFFECTIVE_BATCH_SIZE: int = MICRO_BATCH_SIZE * GRAD_ACCUM_STEPS * WORLD_SIZE
HORIZON_SAMPLES: int = int(RECIPE.get("horizon_samples", 1))
TOTAL_STEPS: int = max(1, math.ceil(HORIZON_SAMPLES / EFFECTIVE_BATCH_SIZE))
CLIP_NORM: float | None = None if RECIPE.get("clip_norm") is None else float(RECIPE["clip_norm"])
PRECISION: str = str(RECIPE.get("precision", "fp32"))
OPTIMIZER: str = str(RECIPE.get("optimizer", "adamw"))
OPTIMIZER_PARAMS: dict[str, Any] = dict(RECIPE.get("optimizer_params", {}))
SCHEDULE: str = str(RECIPE.get("schedule", "cosine"))
SCHEDULE_PARAMS: dict[str, Any] = dict(RECIPE.get("schedule_params", {}))

_NO_DECAY_MODULES = (
    torch.nn.Embedding,
    torch.nn.EmbeddingBag,
    torch.nn.LayerNorm,
    torch.nn.GroupNorm,
    torch.nn.modules.batchnorm._BatchNorm,
)


def param_groups(model_or_params: Any, weight_decay: float) -> list[dict[str, Any]]:
    """Decayed and non-decayed groups: biases, norms and embeddings get no weight decay."""
    if isinstance(model_or_params, torch.nn.Module):
        no_decay_ids: set[int] = set()
        for module in model_or_params.modules():
            if isinstance(module, _NO_DECAY_MODULES):
                no_decay_ids.update(id(p) for p in module.parameters(recurse=False))
        params = [p for p in model_or_params.parameters() if p.requires_grad]
    else:
        params = list(model_or_params)
        if params and isinstance(params[0], dict):
            return [dict(group) for group in params]
        no_decay_ids = set()
    decay = [p for p in params if p.ndim >= 2 and id(p) not in no_decay_ids]
    no_decay = [p for p in params if p.ndim < 2 or id(p) in no_decay_ids]
    groups = []
    if decay:
        groups.append({"params": decay, "weight_decay": weight_decay})
    if no_decay:
        groups.append({"params": no_decay, "weight_decay": 0.0})
    return groups


def build_optimizer(model_or_params: Any) -> torch.optim.Optimizer:
    """The optimizer at PEAK_LR (a module, an iterable of parameters, or parameter groups)."""
    p = OPTIMIZER_PARAMS
    groups = param_groups(model_or_params, float(p.get("weight_decay", 0.0)))
    wd = float(p.get("weight_decay", 0.0))
    if OPTIMIZER == "adamw":
        betas = (float(p["beta1"]), float(p["beta2"]))
        return torch.optim.AdamW(groups, lr=PEAK_LR, betas=betas, eps=float(p["eps"]), weight_decay=wd)
    if OPTIMIZER == "sgd":
        momentum = float(p["momentum"])
        nesterov = bool(p["nesterov"]) and momentum > 0
        return torch.optim.SGD(groups, lr=PEAK_LR, momentum=momentum, nesterov=nesterov, weight_decay=wd)
    if OPTIMIZER == "lamb":
        from pytorch_optimizer import Lamb

        betas = (float(p["beta1"]), float(p["beta2"]))
        # max_grad_norm=0 turns off Lamb's own clipping: clipping is CLIP_NORM's job.
        return Lamb(groups, lr=PEAK_LR, betas=betas, eps=float(p["eps"]), weight_decay=wd, max_grad_norm=0.0)
    if OPTIMIZER == "lars":
        from pytorch_optimizer import LARS

        return LARS(
            groups,
            lr=PEAK_LR,
            momentum=float(p["momentum"]),
            trust_coefficient=float(p["trust_coefficient"]),
            weight_decay=wd,
            nesterov=bool(p["nesterov"]),
        )
    if OPTIMIZER == "lion":
        from pytorch_optimizer import Lion

        return Lion(groups, lr=PEAK_LR, betas=(float(p["beta1"]), float(p["beta2"])), weight_decay=wd)
    raise ValueError(f"this module cannot build optimizer {OPTIMIZER!r}; use convtune.load_recipe")


def _warmup(step: int) -> float:
    # (step+1)/(W+1): no step runs at LR 0, and step W runs at PEAK_LR.
    if WARMUP_STEPS <= 0 or step >= WARMUP_STEPS:
        return 1.0
    return (step + 1) / (WARMUP_STEPS + 1)


def _progress(step: int) -> float:
    span = max(1, TOTAL_STEPS - WARMUP_STEPS)
    return min(1.0, max(0.0, (step - WARMUP_STEPS) / span))


def lr_multiplier(step: int) -> float:
    """LR / PEAK_LR at optimizer step ``step`` for cosine, linear and constant schedules."""
    if step < WARMUP_STEPS or SCHEDULE == "constant":
        return _warmup(step)
    floor = float(SCHEDULE_PARAMS.get("min_lr_ratio", 0.0))
    if SCHEDULE == "cosine":
        return floor + (1.0 - floor) * 0.5 * (1.0 + math.cos(math.pi * _progress(step)))
    if SCHEDULE == "linear":
        return floor + (1.0 - floor) * (1.0 - _progress(step))
    raise ValueError(f"schedule {SCHEDULE!r} has no multiplier form")


def build_scheduler(optimizer: torch.optim.Optimizer) -> torch.optim.lr_scheduler.LRScheduler:
    """The LR scheduler; step it once per optimizer step while ``step + 1 < TOTAL_STEPS``."""
    p = SCHEDULE_PARAMS
    if SCHEDULE in ("cosine", "linear", "constant"):
        return LambdaLR(optimizer, lr_multiplier)
    cycle_momentum = bool(p.get("cycle_momentum", False))  # momentum/betas stay as set
    if SCHEDULE == "cyclic":
        ratio = float(p["base_lr_ratio"])
        ramp = None
        if WARMUP_STEPS > 0:
            # Warm up to the cycle's lower bound, so the cycle starts where the ramp ends. Built
            # before the cycle, as convtune does: each scheduler sets the LR when constructed.
            ramp = LinearLR(
                optimizer,
                start_factor=ratio / (WARMUP_STEPS + 1),
                end_factor=ratio,
                total_iters=WARMUP_STEPS,
            )
        cyclic = CyclicLR(
            optimizer,
            base_lr=PEAK_LR * ratio,
            max_lr=PEAK_LR,
            step_size_up=int(p["half_period_steps"]),
            mode=str(p["mode"]),
            gamma=float(p["gamma"]),
            cycle_momentum=cycle_momentum,
        )
        if ramp is None:
            return cyclic
        return SequentialLR(optimizer, [ramp, cyclic], milestones=[WARMUP_STEPS])
    if SCHEDULE == "onecycle":
        return OneCycleLR(
            optimizer,
            max_lr=PEAK_LR,
            total_steps=max(2, TOTAL_STEPS),
            pct_start=float(p["pct_start"]),
            anneal_strategy=str(p["anneal_strategy"]),
            div_factor=float(p["div_factor"]),
            final_div_factor=float(p["final_div_factor"]),
            cycle_momentum=cycle_momentum,
        )
    raise ValueError(f"this module cannot build schedule {SCHEDULE!r}; use convtune.load_recipe")


def _device_type(device_type: str | None) -> str:
    return device_type or ("cuda" if torch.cuda.is_available() else "cpu")


def autocast(device_type: str | None = None) -> contextlib.AbstractContextManager[Any]:
    """The forward pass's autocast context (a no-op for fp32)."""
    if PRECISION == "fp32":
        return contextlib.nullcontext()
    dtype = torch.bfloat16 if PRECISION == "bf16" else torch.float16
    return torch.autocast(device_type=_device_type(device_type), dtype=dtype)


def grad_scaler(device_type: str | None = None) -> torch.amp.GradScaler:
    """Dynamic loss scaling for fp16; a pass-through scaler otherwise."""
    return torch.amp.GradScaler(_device_type(device_type), enabled=PRECISION == "fp16")
