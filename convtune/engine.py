"""The training loop: it owns the knobs convtune tunes, and reads top to bottom.

Gradient accumulation (synchronising only on the last micro-step under DDP), autocast, dynamic
loss scaling, clipping after unscaling, one scheduler step per optimizer step, evaluation every
``eval_every`` samples or steps, and a :class:`Progress` record at each evaluation. It never
imports optuna: whoever calls :func:`train` decides what a record means via ``on_eval``.
"""

from __future__ import annotations

import contextlib
import math
import os
import resource
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from typing import Any, Literal

import torch
import torch.distributed as dist

from convtune.recipe import Recipe
from convtune.workloads import Workload

CostKind = Literal["wallclock", "samples", "device_seconds"]


@dataclass(frozen=True)
class EngineConfig:
    """How to run one trial (not what to tune: that is the Recipe).

    ``eval_every`` counts samples (default, so batch sizes stay comparable) or optimizer steps.
    ``max_cost`` caps the run in ``cost`` units; it never changes the schedule.
    ``max_skipped_steps``: fp16 steps skipped in a row (inf/NaN gradients) that count as divergence.
    """

    eval_every: int = 4096
    eval_unit: Literal["samples", "steps"] = "samples"
    max_cost: float = math.inf
    cost: CostKind = "wallclock"
    seed: int = 0
    threads: int | None = None
    max_skipped_steps: int = 8
    device: str | None = None


@dataclass
class Progress:
    """One evaluation: where training stands and what the metrics say."""

    step: int
    samples: int
    seconds: float
    cost: float
    train_loss: float
    metrics: dict[str, float]
    lr: float
    loss_scale: float
    skipped_steps: int

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass
class RunResult:
    """How a run ended and every record it produced."""

    history: list[Progress] = field(default_factory=list)
    status: Literal["finished", "stopped", "budget", "diverged"] = "finished"
    reason: str = ""
    steps: int = 0
    samples: int = 0
    seconds: float = 0.0
    peak_memory_bytes: int = 0

    @property
    def samples_per_second(self) -> float:
        return self.samples / self.seconds if self.seconds > 0 else 0.0


def default_threads(ranks: int = 1, local_workers: int = 1) -> int:
    """Torch threads per rank: cores / (ranks × local workers), at least one.

    Two threads per process collapse to about a step a second on small machines once anything
    else runs, so ranks never share cores.
    """
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1
    return max(1, cores // max(1, ranks * local_workers))


def _distributed() -> tuple[int, int]:
    if dist.is_available() and dist.is_initialized():
        return dist.get_rank(), dist.get_world_size()
    return 0, 1


def _peak_memory(device: torch.device) -> int:
    if device.type == "cuda":
        return int(torch.cuda.max_memory_allocated(device))
    # ru_maxrss is in KiB on Linux: the process's peak resident set.
    return int(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss) * 1024


def train(
    workload: Workload,
    recipe: Recipe,
    config: EngineConfig,
    on_eval: Callable[[Progress], bool] | None = None,
) -> RunResult:
    """Train ``workload`` with ``recipe`` until ``on_eval`` says stop, divergence or ``max_cost``.

    ``on_eval`` runs on every rank with the same record (rank 0's metrics, broadcast) and must
    return the same answer on every rank; its True stops the run at once.
    """
    rank, world_size = _distributed()
    if world_size != recipe.world_size:
        raise ValueError(
            f"recipe.world_size={recipe.world_size} but the process group has {world_size} ranks"
        )
    if config.threads:
        torch.set_num_threads(config.threads)
    device = torch.device(config.device or ("cuda" if torch.cuda.is_available() else "cpu"))
    if device.type == "cuda" and world_size > 1:
        device = torch.device("cuda", int(os.environ.get("LOCAL_RANK", rank)))
        torch.cuda.set_device(device)
    torch.manual_seed(config.seed)  # same initial weights on every rank

    model = workload.build_model().to(device)
    trained = model
    if world_size > 1:
        trained = torch.nn.parallel.DistributedDataParallel(
            model,
            device_ids=[device.index] if device.type == "cuda" else None,
            bucket_cap_mb=recipe.bucket_cap_mb,
            gradient_as_bucket_view=recipe.gradient_as_bucket_view,
        )
    optimizer = _build_optimizer(recipe, model)
    scheduler = recipe.scheduler(optimizer)
    scaler = recipe.grad_scaler(device.type)
    autocast = recipe.autocast(device.type)
    batches = workload.train_batches(recipe.micro_batch_size, rank, world_size, config.seed)
    samples_per_step = recipe.effective_batch_size
    ranks_for_cost = world_size if config.cost == "device_seconds" else 1

    result = RunResult()
    step = samples = skipped_in_row = skipped_total = 0
    train_clock = 0.0  # seconds spent training; evaluation and setup are off the clock
    next_eval = config.eval_every
    loss_sum = torch.zeros((), device=device)
    loss_count = 0

    def cost_now() -> float:
        if config.cost == "samples":
            return float(samples)
        return train_clock * ranks_for_cost

    while True:
        started = time.perf_counter()
        model.train()
        step_loss = torch.zeros((), device=device)
        for micro_step in range(recipe.grad_accum_steps):
            batch = next(batches)
            last = micro_step == recipe.grad_accum_steps - 1
            sync = contextlib.nullcontext() if last or world_size == 1 else trained.no_sync()
            with sync:
                with autocast:
                    loss = workload.loss(trained, batch) / recipe.grad_accum_steps
                scaler.scale(loss).backward()
            step_loss += loss.detach().float()
        if recipe.clip_norm is not None:
            scaler.unscale_(optimizer)
            torch.nn.utils.clip_grad_norm_(model.parameters(), recipe.clip_norm)
        scale_before = scaler.get_scale() if scaler.is_enabled() else 1.0
        scaler.step(optimizer)
        scaler.update()
        optimizer.zero_grad(set_to_none=True)
        step += 1
        samples += samples_per_step
        if step < recipe.total_steps:  # past the planned horizon the LR holds
            scheduler.step()

        loss_value = step_loss.item()  # one sync per optimizer step, needed to catch divergence
        train_clock += time.perf_counter() - started
        loss_sum += loss_value
        loss_count += 1
        diverged = ""
        if not math.isfinite(loss_value):
            diverged = f"non-finite training loss at step {step}"
        elif scaler.is_enabled():
            scale_after = scaler.get_scale()
            if scale_after < scale_before:
                skipped_in_row += 1
                skipped_total += 1
            else:
                skipped_in_row = 0
            if scale_after < 1.0:
                diverged = f"loss scale fell below 1 at step {step}"
            elif skipped_in_row >= config.max_skipped_steps:
                diverged = f"{skipped_in_row} fp16 steps skipped in a row at step {step}"
        if world_size > 1:
            flag = torch.tensor([1.0 if diverged else 0.0], device=device)
            dist.all_reduce(flag, op=dist.ReduceOp.MAX)
            if flag.item() and not diverged:
                diverged = "another rank diverged"

        progress_due = (samples if config.eval_unit == "samples" else step) >= next_eval
        over_budget = cost_now() >= config.max_cost
        if progress_due or diverged or over_budget:
            while (samples if config.eval_unit == "samples" else step) >= next_eval:
                next_eval += config.eval_every
            metrics = _evaluate(workload, model, rank, world_size, device)
            record = Progress(
                step=step,
                samples=samples,
                seconds=train_clock,
                cost=cost_now(),
                train_loss=float(loss_sum.item() / max(1, loss_count)),
                metrics=metrics,
                lr=float(optimizer.param_groups[0]["lr"]),
                loss_scale=float(scaler.get_scale()) if scaler.is_enabled() else 1.0,
                skipped_steps=skipped_total,
            )
            loss_sum.zero_()
            loss_count = 0
            result.history.append(record)
            stop = bool(on_eval(record)) if on_eval is not None else False
            if diverged:
                result.status, result.reason = "diverged", diverged
                break
            if stop:
                result.status, result.reason = "stopped", "stopped by the caller"
                break
            if over_budget:
                result.status, result.reason = "budget", f"max_cost {config.max_cost:g} reached"
                break

    result.steps, result.samples, result.seconds = step, samples, train_clock
    result.peak_memory_bytes = _peak_memory(device)
    return result


def _build_optimizer(recipe: Recipe, model: torch.nn.Module) -> torch.optim.Optimizer:
    if recipe.zero and dist.is_available() and dist.is_initialized():
        from torch.distributed.optim import ZeroRedundancyOptimizer

        from convtune.optim import OPTIMIZERS, param_groups

        # ZeRO-1: each rank keeps the optimizer state of its shard of the parameters only.
        entry = OPTIMIZERS[recipe.optimizer_name]
        params = dict(recipe.optimizer_params)
        groups = param_groups(model, float(params.get("weight_decay", 0.0)))
        probe = entry.build([{"params": [torch.nn.Parameter(torch.zeros(1))]}], recipe.peak_lr, **params)
        zero = ZeroRedundancyOptimizer(groups[0]["params"], optimizer_class=type(probe), **probe.defaults)
        for group in groups[1:]:
            zero.add_param_group(group)
        return zero
    return recipe.optimizer(model)


def _evaluate(
    workload: Workload, model: torch.nn.Module, rank: int, world_size: int, device: torch.device
) -> dict[str, float]:
    """Evaluate on rank 0 in full precision and share the metrics with every rank."""
    metrics: dict[str, float] = {}
    if rank == 0:
        model.eval()
        with torch.no_grad():
            metrics = {k: float(v) for k, v in workload.evaluate(model).items()}
        model.train()
    if world_size > 1:
        box = [metrics]
        dist.broadcast_object_list(box, src=0)
        metrics = box[0]
    return metrics
