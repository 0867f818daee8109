"""Cheap probes before (or during) a study: the LR range test and the gradient noise scale.

Both run a few hundred optimizer steps of the study's own workload through the Recipe's
optimizer, autocast and clipping, take seconds, and narrow the search space:

* :func:`lr_range_test` (Smith 2017): training loss while the LR grows exponentially from
  ``min_lr`` to ``max_lr``; where the smoothed loss falls fastest is a good peak LR, where it
  blows up bounds it from above.
* :func:`noise_scale` (McCandlish et al. 2018, appendix A): ``B_simple = tr(Σ)/|G|²`` from
  gradient norms at two batch sizes — the unbiased estimators
  ``|G|² ≈ (B_big|G_big|² − B_small|G_small|²)/(B_big − B_small)`` and
  ``tr(Σ) ≈ (|G_small|² − |G_big|²)/(1/B_small − 1/B_big)``, averaged over repeats *before*
  the ratio is taken (the ratio of noisy means is far less biased than a mean of ratios), with a
  bootstrap interval over repeats. Batches much below ``B_simple`` waste steps; batches much
  above it waste samples.

No optuna here: the CLI stores the findings in the study.

Example:
    >>> from convtune.workloads import build_workload
    >>> workload = build_workload("digits")
    >>> found = lr_range_test(workload, Recipe(peak_lr=1e-3, horizon_samples=1, micro_batch_size=32))
    >>> found.steepest_lr, found.blowup_lr, found.suggested_bounds     # doctest: +SKIP
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass
from typing import Any

import numpy as np
import torch

from convtune.config.recipe import Recipe
from convtune.training.engine import default_device, to_device
from convtune.workloads import Workload


@dataclass(frozen=True)
class LRRangeResult:
    """What the LR range test found (LRs are peak LRs for the recipe's optimizer)."""

    lrs: tuple[float, ...]
    losses: tuple[float, ...]  # smoothed (bias-corrected EMA) training loss at each LR
    steepest_lr: float  # where the smoothed loss falls fastest per log-LR
    min_loss_lr: float  # where the smoothed loss is lowest
    blowup_lr: float | None  # first LR at which the loss exceeded ``blowup`` × its minimum
    suggested_bounds: tuple[float, float]

    def to_dict(self) -> dict[str, Any]:
        out = asdict(self)
        out["lrs"] = [float(f"{x:.4g}") for x in self.lrs]
        out["losses"] = [float(f"{x:.4g}") if math.isfinite(x) else None for x in self.losses]
        return out


def _seed(seed: int) -> None:
    torch.manual_seed(seed)


def _step_loss(
    workload: Workload,
    model: torch.nn.Module,
    recipe: Recipe,
    batches: Any,
    device: torch.device,
    scaler: torch.amp.GradScaler | None = None,
) -> torch.Tensor:
    """One optimizer step's loss and gradients (accumulated over the recipe's micro-steps),
    scaled by ``scaler`` when given (fp16: unscaled gradients underflow, as in a trial)."""
    total = torch.zeros((), device=device)
    for _ in range(recipe.grad_accum_steps):
        with recipe.autocast(device.type):
            loss = workload.loss(model, to_device(next(batches), device)) / recipe.grad_accum_steps
        (scaler.scale(loss) if scaler is not None else loss).backward()
        total += loss.detach().float()
    return total


def lr_range_test(
    workload: Workload,
    recipe: Recipe,
    *,
    min_lr: float = 1e-5,
    max_lr: float = 1.0,
    steps: int = 100,
    smoothing: float = 0.9,
    blowup: float = 4.0,
    seed: int = 0,
    device: str | None = None,
) -> LRRangeResult:
    """Train from scratch with the LR growing from ``min_lr`` to ``max_lr`` over ``steps`` steps.

    Stops early once the smoothed loss exceeds ``blowup`` × its minimum (or is not finite).
    The steepest descent is sought before the loss minimum. Suggested ``peak_lr`` bounds: from
    a third of the steepest-descent LR to the larger of 3× it and a tenth of the min-loss LR
    (Smith's rule of thumb), never above half the blow-up LR. It trains where trials train
    (``device``, by default the GPU when torch sees one).
    """
    _seed(seed)
    where = default_device(device)
    model = workload.build_model().to(where)
    model.train()
    optimizer = recipe.optimizer(model)
    scaler = recipe.grad_scaler(where.type)
    batches = workload.train_batches(recipe.micro_batch_size, 0, 1, seed)
    factor = (max_lr / min_lr) ** (1 / max(1, steps - 1))
    lrs, smoothed = [], []
    avg, best, start, blown = 0.0, math.inf, math.inf, None
    for k in range(steps):
        lr = min_lr * factor**k
        for group in optimizer.param_groups:
            group["lr"] = lr
        loss = float(_step_loss(workload, model, recipe, batches, where, scaler))
        if recipe.clip_norm is not None:
            scaler.unscale_(optimizer)
            torch.nn.utils.clip_grad_norm_(model.parameters(), recipe.clip_norm)
        scaler.step(optimizer)
        scaler.update()
        optimizer.zero_grad(set_to_none=True)
        if not math.isfinite(loss):
            blown = lr
            break
        avg = smoothing * avg + (1 - smoothing) * loss
        value = avg / (1 - smoothing ** (k + 1))  # bias-corrected: the first steps are not ~0
        lrs.append(lr)
        smoothed.append(value)
        best = min(best, value)
        start = min(start, value) if k < 5 else start
        # Blown up: far above the best loss, or back above where training started.
        if k > 5 and (value > blowup * best or (value > start and best < 0.9 * start)):
            blown = lr
            break
    x, y = np.log(np.array(lrs)), np.array(smoothed)
    end = int(np.argmin(y)) + 1  # the steepest descent is sought before the minimum only
    # Slope per log-LR over a window, so single noisy steps do not decide the steepest point.
    w = max(2, len(x) // 12)
    if end > w:
        slopes = (y[w:end] - y[: end - w]) / (x[w:end] - x[: end - w])
        i = int(np.argmin(slopes))
        steepest = float(np.exp((x[i] + x[i + w]) / 2))
    else:
        steepest = float(lrs[0])
    min_loss_lr = float(lrs[end - 1])
    # Smith: a peak LR about a decade below the minimum works; never within 2× of the blow-up.
    high = min(max(steepest * 3, min_loss_lr / 10), blown / 2 if blown else math.inf)
    low = min(steepest / 3, high / 3)
    return LRRangeResult(tuple(lrs), tuple(smoothed), steepest, min_loss_lr, blown, (low, high))


@dataclass(frozen=True)
class NoiseScaleResult:
    """The simple gradient noise scale with a bootstrap interval, and the batch range it implies."""

    b_simple: float
    interval: tuple[float, float]
    level: float
    grad_sq: float  # |G|² estimate
    trace_sigma: float  # tr(Σ) estimate
    b_small: int
    b_big: int
    repeats: int
    useful_batch_range: tuple[float, float]

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def _grad_sq_norm(workload: Workload, model: torch.nn.Module, batch: Any, device: torch.device) -> float:
    model.zero_grad(set_to_none=True)
    workload.loss(model, to_device(batch, device)).backward()
    return float(sum((p.grad.detach().float() ** 2).sum() for p in model.parameters() if p.grad is not None))


def noise_scale(
    workload: Workload,
    recipe: Recipe,
    *,
    b_small: int | None = None,
    b_big: int | None = None,
    repeats: int = 20,
    warmup_steps: int = 20,
    level: float = 0.9,
    n_boot: int = 1000,
    seed: int = 0,
    device: str | None = None,
) -> NoiseScaleResult:
    """Measure ``B_simple`` after ``warmup_steps`` of training with ``recipe`` (in fp32).

    ``b_small``/``b_big`` default to the recipe's micro-batch and 8× it. The useful batch range
    is ``[B/4, 4·B]``: there, steps and samples to the target each stay within 5× their minimum
    (``S = S_min(1 + B_noise/B)``, ``E = E_min(1 + B/B_noise)``), with ``B_noise ≈ B_simple``.
    """
    _seed(seed)
    where = default_device(device)
    b_small = b_small or recipe.micro_batch_size
    b_big = b_big or 8 * b_small
    if b_big <= b_small:
        raise ValueError(f"b_big ({b_big}) must exceed b_small ({b_small})")
    model = workload.build_model().to(where)
    model.train()
    if warmup_steps:
        optimizer = recipe.optimizer(model)
        batches = workload.train_batches(recipe.micro_batch_size, 0, 1, seed)
        for step in range(warmup_steps):
            lr = recipe.peak_lr * min(1.0, (step + 1) / max(1, recipe.warmup_steps or 1))
            for group in optimizer.param_groups:
                group["lr"] = lr
            _step_loss(workload, model, recipe.model_copy(update={"precision": "fp32"}), batches, where)
            optimizer.step()
            optimizer.zero_grad(set_to_none=True)
    small = workload.train_batches(b_small, 0, 1, seed + 101)
    big = workload.train_batches(b_big, 0, 1, seed + 202)
    g_small = np.array([_grad_sq_norm(workload, model, next(small), where) for _ in range(repeats)])
    g_big = np.array([_grad_sq_norm(workload, model, next(big), where) for _ in range(repeats)])
    model.zero_grad(set_to_none=True)

    def estimate(gs: np.ndarray, gb: np.ndarray) -> tuple[float, float, float]:
        s, b = float(gs.mean()), float(gb.mean())
        grad_sq = (b_big * b - b_small * s) / (b_big - b_small)
        trace = (s - b) / (1 / b_small - 1 / b_big)
        return grad_sq, trace, trace / grad_sq if grad_sq > 0 else math.inf

    grad_sq, trace, b_simple = estimate(g_small, g_big)
    rng = np.random.default_rng(seed)
    boot = []
    for _ in range(n_boot):
        i, j = rng.integers(repeats, size=repeats), rng.integers(repeats, size=repeats)
        boot.append(estimate(g_small[i], g_big[j])[2])
    boot_arr = np.array(boot)
    # A resample whose |G|² estimate is ≤ 0 means "noise dominates": B_simple unbounded above.
    boot_arr[~np.isfinite(boot_arr) | (boot_arr < 0)] = np.inf
    tail = (1 - level) / 2
    low, high = (float(np.quantile(boot_arr, q)) for q in (tail, 1 - tail))
    useful = (
        (b_simple / 4, b_simple * 4)
        if math.isfinite(b_simple) and b_simple > 0
        else (float(b_small), math.inf)
    )
    return NoiseScaleResult(b_simple, (low, high), level, grad_sq, trace, b_small, b_big, repeats, useful)


# ---- narrowed spaces --------------------------------------------------------------------------


def narrow_lr(
    space_raw: dict[str, Any], bounds: tuple[float, float], optimizer: str | None = None
) -> dict[str, Any]:
    """The space with ``peak_lr`` cut to ``bounds`` (intersected with its range; log scale).

    The probe measured one ``optimizer``: where that choice has its own ``peak_lr`` (see
    ``convtune.config.space``) that range is the one cut, and the other optimizers' stay as they were.
    """
    raw = dict(space_raw)
    target = raw
    optimizers = raw.get("optimizer")
    if isinstance(optimizers, dict) and isinstance(optimizers.get(optimizer), dict):
        if "peak_lr" in optimizers[optimizer]:
            target = dict(optimizers[optimizer])
            raw["optimizer"] = {**optimizers, optimizer: target}
    old = target.get("peak_lr")
    low, high = bounds
    if isinstance(old, dict) and "low" in old:
        low, high = max(low, float(old["low"])), min(high, float(old["high"]))
        if low >= high:  # the probe disagrees with the whole range: trust the probe
            low, high = bounds
    target["peak_lr"] = {"low": float(f"{low:.3g}"), "high": float(f"{high:.3g}"), "log": True}
    return raw


def narrow_batch(space_raw: dict[str, Any], batch_range: tuple[float, float]) -> dict[str, Any]:
    """The space with micro-batch and accumulation choices whose products fall in ``batch_range``.

    A choice is kept when some combination with the other knob's choices lands in the range;
    when none does, the choices closest to the range are kept, so the space stays valid.
    """
    raw = dict(space_raw)
    low, high = batch_range
    world = int(raw.get("world_size", 1) or 1)

    def options(name: str) -> list[int]:
        value = raw.get(name, 1)
        return list(value["choices"]) if isinstance(value, dict) and "choices" in value else [value]

    micro, accum = options("micro_batch_size"), options("grad_accum_steps")
    keep_m = [m for m in micro if any(low <= m * a * world <= high for a in accum)]
    keep_a = [a for a in accum if any(low <= m * a * world <= high for m in keep_m or micro)]
    if not keep_m:
        keep_m = [min(micro, key=lambda m: min(abs(math.log(m * a * world / low)) for a in accum))]
    if not keep_a:
        keep_a = [min(accum, key=lambda a: abs(math.log(keep_m[0] * a * world / max(low, 1))))]
    for name, kept in (("micro_batch_size", keep_m), ("grad_accum_steps", keep_a)):
        if isinstance(raw.get(name), dict):
            raw[name] = {"choices": kept} if len(kept) > 1 else kept[0]
    return raw
