"""Check the CUDA path of distributed trials on a machine with a GPU (a minute or two).

What it checks, printing each line as it goes:

1. in this process, one rank on ``cuda``: fp32, bf16 autocast and fp16 with GradScaler each train
   the ``digits`` workload, losses stay finite, and peak memory comes from
   ``torch.cuda.max_memory_allocated`` (reset per trial);
2. one warm rank launched by torchrun: backend ``nccl``, the same fp32 result as in-process;
3. where there are two or more GPUs, two ranks (NCCL, DDP, one GPU each) with fp32 and bf16, and a
   second trial on the same warm ranks without a relaunch.

Run::

    python benchmarks/gpu_check.py          # exits 1 if a check fails, 0 with no GPU (skipped)
"""

from __future__ import annotations

import math
import sys
import time

import torch

from convtune.config.recipe import Recipe
from convtune.config.spec import StudySpec
from convtune.execution.launcher import ElasticExecutor, LaunchOptions
from convtune.training.engine import EngineConfig, train
from convtune.workloads import build_workload

CONFIG = EngineConfig(eval_every=2048, cost="samples", max_cost=8192, seed=0)
failures: list[str] = []


def check(what: str, ok: bool, detail: str = "") -> None:
    print(f"[{'ok' if ok else 'FAIL'}] {what}{': ' + detail if detail else ''}", flush=True)
    if not ok:
        failures.append(what)


def recipe(precision: str, world_size: int = 1) -> Recipe:
    return Recipe(
        peak_lr=3e-3, horizon_samples=100_000, micro_batch_size=64, world_size=world_size, precision=precision
    )


def spec(world_size: int) -> StudySpec:
    return StudySpec(
        workload="digits", space={}, target="accuracy>=0.99", cost="samples", world_size=world_size
    )


def main() -> int:
    if not torch.cuda.is_available():
        print("no CUDA device: nothing to check")
        return 0
    gpus = torch.cuda.device_count()
    print(f"torch {torch.__version__}, CUDA {torch.version.cuda}, {gpus} × {torch.cuda.get_device_name(0)}")

    workload = build_workload("digits")
    local: dict[str, float] = {}
    for precision in ("fp32", "bf16", "fp16"):
        started = time.perf_counter()
        result = train(workload, recipe(precision), CONFIG)
        last = result.history[-1]
        local[precision] = last.metrics["val_loss"]
        finite = math.isfinite(last.train_loss) and math.isfinite(last.metrics["val_loss"])
        check(
            f"in-process {precision} on cuda",
            finite and result.status == "budget" and 0 < result.peak_memory_bytes < 2**34,
            f"val_loss {last.metrics['val_loss']:.4f}, loss scale {last.loss_scale:g}, "
            f"peak {result.peak_memory_bytes / 2**20:.1f} MiB (max_memory_allocated), "
            f"{result.samples_per_second:.0f} samples/s, {time.perf_counter() - started:.1f} s",
        )
        if precision == "fp16":
            check("fp16 uses a GradScaler", last.loss_scale > 1.0, f"scale {last.loss_scale:g}")

    with ElasticExecutor(spec(1), LaunchOptions(collective_timeout=120)) as executor:
        result = executor.run(recipe("fp32"), CONFIG, lambda p: False)
        check("1 rank under torchrun uses nccl", result.backend == "nccl", f"backend {result.backend}")
        same = abs(result.history[-1].metrics["val_loss"] - local["fp32"]) < 1e-3
        check("1 rank under torchrun matches in-process fp32", same)

    if gpus < 2:
        print("one GPU: the 2-rank check is skipped")
    else:
        with ElasticExecutor(spec(2), LaunchOptions(collective_timeout=120)) as executor:
            for precision in ("fp32", "bf16"):
                result = executor.run(recipe(precision, 2), CONFIG, lambda p: False)
                check(
                    f"2 ranks {precision} (nccl, DDP)",
                    result.backend == "nccl"
                    and result.samples == CONFIG.max_cost
                    and len(result.rank_peak_memory_bytes) == 2
                    and math.isfinite(result.history[-1].metrics["val_loss"]),
                    f"per-rank samples/s {result.rank_samples_per_second}, "
                    f"comm share {result.comm_share}, data wait share {result.data_wait_share:.3f}",
                )
            check("second trial reused the warm ranks", executor.launches == 1)

    print("all checks passed" if not failures else f"{len(failures)} check(s) failed: {failures}")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
