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
import re
import time
import warnings
from collections.abc import Callable, Mapping
from dataclasses import asdict, dataclass, field
from typing import Any, Literal

import torch
import torch.distributed as dist

from convtune.config.recipe import Recipe, default_device_type
from convtune.training.memory import peak_memory_bytes, reset_peak_memory
from convtune.training.stops import StopRules
from convtune.workloads import Workload, checked_metrics

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
    # Synchronise gradients on every micro-step instead of only the last (reference for tests and
    # benchmarks of no_sync accumulation; slower, same result within float tolerance).
    sync_every_micro_step: bool = False
    # Checkpoint at every evaluation (model, optimizer, scheduler, scaler, counters, RNG, data
    # position, records so far) and resume from it when it exists: a preempted trial continues.
    checkpoint_dir: str | None = None


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
    world_size: int = 1
    backend: str = "none"
    # One entry per rank (rank order): each rank's own samples/s and peak memory.
    rank_samples_per_second: list[float] = field(default_factory=list)
    rank_peak_memory_bytes: list[int] = field(default_factory=list)
    # Shares of training time: waiting for the next batch, and exposed gradient communication
    # (DDP's sampled backward comm time minus its overlap with compute); None where unmeasured.
    data_wait_share: float | None = None
    comm_share: float | None = None
    # What went wrong without changing the outcome (a rank that crashed after every rank had
    # acknowledged the stop): recorded on the trial as its ``warnings``.
    warnings: list[str] = field(default_factory=list)

    @property
    def samples_per_second(self) -> float:
        return self.samples / self.seconds if self.seconds > 0 else 0.0

    def summary(self) -> dict[str, Any]:
        """Plain data for sending between processes (the records travel separately)."""
        data = asdict(self)
        data.pop("history")
        return data

    @classmethod
    def from_summary(cls, data: dict[str, Any], history: list[Progress]) -> RunResult:
        known = {k: v for k, v in data.items() if k in cls.__dataclass_fields__ and k != "history"}
        return cls(history=list(history), **known)


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


def _exposed_comm_seconds(ddp: torch.nn.Module) -> float | None:
    """DDP's sampled per-iteration backward communication not hidden behind compute."""
    try:
        data = ddp._get_ddp_logging_data()  # type: ignore[operator]
    except Exception:  # private API: measure where it exists, never fail a run over it
        return None
    comm = data.get("avg_backward_comm_time")
    if not comm:
        return None
    return max(0.0, (comm - data.get("avg_backward_compute_comm_overlap_time", 0)) / 1e9)


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
    run = _start(workload, recipe, config)
    stopped = _resume(run, on_eval)
    while not stopped:
        diverged = _train_step(run)
        over_budget = bool(run.rules.budget(run.cost()))
        planned_run_done = run.step >= recipe.total_steps  # the same on every rank
        if run.world_size > 1:
            diverged, over_budget = _agree(run, diverged, over_budget)
        if run.position() >= run.next_eval or diverged or over_budget or planned_run_done:
            stopped = _evaluate_and_decide(run, on_eval, diverged, over_budget, planned_run_done)
    return _finish(run)


@dataclass
class _Run:
    """One run of :func:`train`: what it trains with and where it stands."""

    workload: Workload
    recipe: Recipe
    config: EngineConfig
    rank: int
    world_size: int
    device: torch.device
    model: torch.nn.Module
    trained: torch.nn.Module  # the model, or its DDP wrapper
    optimizer: torch.optim.Optimizer
    scheduler: Any
    scaler: Any
    autocast: Any
    batches: Any
    rules: StopRules
    loss_sum: torch.Tensor
    result: RunResult = field(default_factory=RunResult)
    step: int = 0
    samples: int = 0
    train_clock: float = 0.0  # seconds spent training; evaluation and setup are off the clock
    data_clock: float = 0.0  # of which waiting for the next batch
    next_eval: int = 0
    loss_count: int = 0

    def cost(self) -> float:
        if self.config.cost == "samples":
            return float(self.samples)
        return self.train_clock * (self.world_size if self.config.cost == "device_seconds" else 1)

    def position(self) -> int:
        """Where the run stands in ``eval_every``'s unit."""
        return self.samples if self.config.eval_unit == "samples" else self.step


def _start(workload: Workload, recipe: Recipe, config: EngineConfig) -> _Run:
    """The device, seeded model (DDP-wrapped over several ranks), optimizer, scheduler and data."""
    rank, world_size = _distributed()
    if world_size != recipe.world_size:
        raise ValueError(
            f"recipe.world_size={recipe.world_size} but the process group has {world_size} ranks"
        )
    if config.threads:
        torch.set_num_threads(config.threads)
    device = default_device(config.device)
    if device.type == "cuda" and world_size > 1:
        device = torch.device("cuda", int(os.environ.get("LOCAL_RANK", rank)))
        torch.cuda.set_device(device)
    torch.manual_seed(config.seed)  # same initial weights on every rank
    reset_peak_memory(device)

    model = workload.build_model().to(device)
    model.train()
    trained = model
    if world_size > 1:
        trained = torch.nn.parallel.DistributedDataParallel(
            model,
            device_ids=[device.index] if device.type == "cuda" else None,
            bucket_cap_mb=recipe.bucket_cap_mb,
            gradient_as_bucket_view=recipe.gradient_as_bucket_view,
        )
    optimizer = _build_optimizer(recipe, model)
    return _Run(
        workload=workload,
        recipe=recipe,
        config=config,
        rank=rank,
        world_size=world_size,
        device=device,
        model=model,
        trained=trained,
        optimizer=optimizer,
        scheduler=recipe.scheduler(optimizer),
        scaler=recipe.grad_scaler(device.type),
        autocast=recipe.autocast(device.type),
        batches=workload.train_batches(recipe.micro_batch_size, rank, world_size, config.seed),
        rules=StopRules(max_cost=config.max_cost, max_skipped_steps=config.max_skipped_steps),
        loss_sum=torch.zeros((), device=device),
        next_eval=config.eval_every,
    )


def _resume(run: _Run, on_eval: Callable[[Progress], bool] | None) -> bool:
    """Continue from the checkpoint if there is one; True when the caller stops the run on its records."""
    resumed = _load_checkpoint(run.config, run.model, run.optimizer, run.scheduler, run.scaler, run.device)
    if resumed is None:
        return False
    run.step, run.samples = resumed["step"], resumed["samples"]
    run.rules.skipped_total = resumed["skipped_total"]
    run.train_clock, run.data_clock = resumed["train_clock"], resumed["data_clock"]
    run.next_eval = resumed["next_eval"]
    for _ in range(run.step * run.recipe.grad_accum_steps):  # the data position: the same batches follow
        next(run.batches)
    # The records so far go to on_eval again: a retried trial reports the curve it resumes.
    for data in resumed["history"]:
        record = Progress(**data)
        run.result.history.append(record)
        if on_eval is not None and on_eval(record):
            run.result.status, run.result.reason = "stopped", "stopped by the caller"
            return True
    return False


_SKIPPED_FIRST_STEP = re.escape("Detected call of `lr_scheduler.step()` before `optimizer.step()`")


def default_device(device: str | None = None) -> torch.device:
    """``device`` when given, else the GPU where torch sees one, else the CPU."""
    return torch.device(default_device_type(device))


def to_device(batch: Any, device: torch.device) -> Any:
    """``batch`` with its tensors on ``device``: a tensor, or tuples, lists and dicts of them, or
    a mapping with its own ``to`` (Hugging Face's ``BatchEncoding``).

    A workload written and tested on a CPU yields CPU tensors; on a GPU its ``loss`` would then
    fail on the first step unless it moved them itself. Other objects pass through unchanged
    (the workload's ``loss`` moves them), and a tensor already there is not copied. The copy is
    a blocking one: a workload may refill the buffer a batch came from as soon as it is yielded.

    >>> import torch
    >>> x, y = to_device((torch.zeros(2), {"y": torch.ones(2)}), torch.device("cpu"))
    >>> x.device.type, y["y"].device.type
    ('cpu', 'cpu')
    """
    if isinstance(batch, torch.Tensor):
        return batch.to(device)
    if isinstance(batch, tuple) and hasattr(batch, "_fields"):  # a namedtuple
        return type(batch)(*(to_device(item, device) for item in batch))
    if isinstance(batch, (tuple, list)):
        return type(batch)(to_device(item, device) for item in batch)
    if type(batch) is dict:
        return {key: to_device(value, device) for key, value in batch.items()}
    if isinstance(batch, Mapping) and callable(getattr(batch, "to", None)):
        return batch.to(device)  # e.g. a tokenizer's BatchEncoding, which moves its own tensors
    return batch


def _train_step(run: _Run) -> str:
    """One optimizer step over ``grad_accum_steps`` micro-batches; returns why it diverged, or ""."""
    recipe, config, scaler = run.recipe, run.config, run.scaler
    started = time.perf_counter()
    # Per step, work outside the model is launch overhead on a GPU: no zeros tensor to sum into,
    # no division by one, and no model.train() (set once, and again after each evaluation).
    step_loss: torch.Tensor | None = None
    for micro_step in range(recipe.grad_accum_steps):
        fetch_started = time.perf_counter()
        batch = to_device(next(run.batches), run.device)
        run.data_clock += time.perf_counter() - fetch_started
        # Under DDP, all-reduce only on the last micro-step; the others accumulate locally.
        last = micro_step == recipe.grad_accum_steps - 1 or config.sync_every_micro_step
        sync = contextlib.nullcontext() if last or run.world_size == 1 else run.trained.no_sync()
        with sync:
            with run.autocast:
                loss = run.workload.loss(run.trained, batch)
                if recipe.grad_accum_steps > 1:
                    loss = loss / recipe.grad_accum_steps
            scaler.scale(loss).backward()
        detached = loss.detach().float()
        step_loss = detached if step_loss is None else step_loss + detached
    if recipe.clip_norm is not None:
        scaler.unscale_(run.optimizer)
        torch.nn.utils.clip_grad_norm_(run.model.parameters(), recipe.clip_norm)
    scale_before = scaler.get_scale() if scaler.is_enabled() else None
    scaler.step(run.optimizer)
    scaler.update()
    run.optimizer.zero_grad(set_to_none=True)
    run.step += 1
    run.samples += recipe.effective_batch_size
    if run.step < recipe.total_steps:  # past the planned horizon the LR holds
        if run.step == 1:
            # The schedule counts planned steps, those GradScaler skipped (an fp16 overflow)
            # included; PyTorch warns when the first of them is skipped, on every fp16 run that
            # starts with too high a loss scale, about exactly that.
            with warnings.catch_warnings():
                warnings.filterwarnings("ignore", _SKIPPED_FIRST_STEP, UserWarning)
                run.scheduler.step()
        else:
            run.scheduler.step()

    assert step_loss is not None  # grad_accum_steps >= 1
    loss_value = step_loss.item()  # one sync per optimizer step, needed to catch divergence
    run.train_clock += time.perf_counter() - started
    run.loss_sum += loss_value
    run.loss_count += 1
    scale_after = scaler.get_scale() if scaler.is_enabled() else None
    return run.rules.after_step(
        step=run.step, loss=loss_value, scale_before=scale_before, scale_after=scale_after
    )


def _agree(run: _Run, diverged: str, over_budget: bool) -> tuple[str, bool]:
    """Each rank has its own clock and loss: agree on both flags so all ranks stop together."""
    flags = torch.tensor([1.0 if diverged else 0.0, 1.0 if over_budget else 0.0], device=run.device)
    dist.all_reduce(flags, op=dist.ReduceOp.MAX)
    if flags[0].item() and not diverged:
        diverged = "another rank diverged"
    return diverged, bool(flags[1].item())


def _evaluate_and_decide(
    run: _Run,
    on_eval: Callable[[Progress], bool] | None,
    diverged: str,
    over_budget: bool,
    planned_run_done: bool,
) -> bool:
    """Evaluate, hand the record to ``on_eval`` and settle whether the run ends here (True)."""
    config, result = run.config, run.result
    while run.position() >= run.next_eval:
        run.next_eval += config.eval_every
    metrics = _evaluate(run.workload, run.model, run.rank, run.world_size, run.device)
    record = Progress(
        step=run.step,
        samples=run.samples,
        seconds=run.train_clock,
        cost=run.cost(),
        train_loss=float(run.loss_sum.item() / max(1, run.loss_count)),
        metrics=metrics,
        lr=float(run.optimizer.param_groups[0]["lr"]),
        loss_scale=float(run.scaler.get_scale()) if run.scaler.is_enabled() else 1.0,
        skipped_steps=run.rules.skipped_total,
    )
    run.loss_sum.zero_()
    run.loss_count = 0
    result.history.append(record)
    stop = bool(on_eval(record)) if on_eval is not None else False
    if diverged:
        result.status, result.reason = "diverged", diverged
    elif stop:
        result.status, result.reason = "stopped", "stopped by the caller"
        # A stop is a pause: the state at the stop is kept, so a repeat of the configuration
        # resumes exactly here (convtune.study.objective).
        _save_run(run, config, result)
    elif over_budget:
        result.status, result.reason = "budget", run.rules.budget_reason  # agreed over ranks
    elif planned_run_done:
        # The schedule's horizon is the planned run: past it a decayed LR buys nothing.
        result.status, result.reason = "finished", f"planned run of {run.recipe.total_steps} steps done"
    else:
        _save_run(run, config, result)
        return False
    return True


def _save_run(run: _Run, config: EngineConfig, result: RunResult) -> None:
    """Checkpoint the run where a checkpoint directory is set (rank 0; not under ZeRO)."""
    if config.checkpoint_dir and run.rank == 0 and not run.recipe.zero:
        _save_checkpoint(
            config.checkpoint_dir,
            run.model,
            run.optimizer,
            run.scheduler,
            run.scaler,
            step=run.step,
            samples=run.samples,
            skipped_total=run.rules.skipped_total,
            train_clock=run.train_clock,
            data_clock=run.data_clock,
            next_eval=run.next_eval,
            history=[p.to_dict() for p in result.history],
        )


def _finish(run: _Run) -> RunResult:
    """The run's totals, throughput, memory and communication shares, gathered from every rank."""
    result, world_size, train_clock = run.result, run.world_size, run.train_clock
    result.steps, result.samples, result.seconds = run.step, run.samples, train_clock
    result.peak_memory_bytes = peak_memory_bytes(run.device)
    result.world_size = world_size
    result.backend = dist.get_backend() if world_size > 1 else "none"
    result.data_wait_share = run.data_clock / train_clock if train_clock > 0 else None
    comm = _exposed_comm_seconds(run.trained) if world_size > 1 else None
    result.comm_share = (
        min(1.0, comm * run.step / train_clock) if comm is not None and train_clock > 0 else None
    )
    mine = (run.samples / world_size / train_clock if train_clock > 0 else 0.0, result.peak_memory_bytes)
    if world_size > 1:
        every: list[Any] = [None] * world_size
        dist.all_gather_object(every, mine)
    else:
        every = [mine]
    result.rank_samples_per_second = [round(float(s), 2) for s, _ in every]
    result.rank_peak_memory_bytes = [int(m) for _, m in every]
    result.peak_memory_bytes = max(result.rank_peak_memory_bytes)
    return result


CHECKPOINT_FILE = "checkpoint.pt"


def _save_checkpoint(
    directory: str, model: Any, optimizer: Any, scheduler: Any, scaler: Any, **state: Any
) -> None:
    """Write the run's state atomically (a kill mid-write leaves the previous checkpoint)."""
    os.makedirs(directory, exist_ok=True)
    state.update(
        model=model.state_dict(),
        optimizer=optimizer.state_dict(),
        scheduler=scheduler.state_dict(),
        scaler=scaler.state_dict(),
        rng=torch.get_rng_state(),
        cuda_rng=torch.cuda.get_rng_state_all() if torch.cuda.is_available() else None,
    )
    tmp = os.path.join(directory, f".{CHECKPOINT_FILE}.{os.getpid()}")
    torch.save(state, tmp)
    os.replace(tmp, os.path.join(directory, CHECKPOINT_FILE))


def _load_checkpoint(
    config: EngineConfig, model: Any, optimizer: Any, scheduler: Any, scaler: Any, device: torch.device
) -> dict[str, Any] | None:
    if not config.checkpoint_dir:
        return None
    path = os.path.join(config.checkpoint_dir, CHECKPOINT_FILE)
    if not os.path.exists(path):
        return None
    state = torch.load(path, map_location=device, weights_only=True)  # tensors and plain data only
    model.load_state_dict(state["model"])
    optimizer.load_state_dict(state["optimizer"])
    scheduler.load_state_dict(state["scheduler"])
    scaler.load_state_dict(state["scaler"])
    # RNG states are CPU byte tensors whatever the device; map_location moved them onto it.
    torch.set_rng_state(state["rng"].cpu())
    if state.get("cuda_rng") is not None and torch.cuda.is_available():
        torch.cuda.set_rng_state_all([rng.cpu() for rng in state["cuda_rng"]])
    return state


def _build_optimizer(recipe: Recipe, model: torch.nn.Module) -> torch.optim.Optimizer:
    if recipe.zero and dist.is_available() and dist.is_initialized():
        from torch.distributed.optim import ZeroRedundancyOptimizer

        from convtune.config.optim import OPTIMIZERS, param_groups

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
            metrics = checked_metrics(workload.evaluate(model))
        model.train()
    if world_size > 1:
        box = [metrics]
        dist.broadcast_object_list(box, src=0)
        metrics = box[0]
    return metrics
