"""Check the CUDA path of distributed trials on a machine with a GPU (a minute or two).

What it checks, printing each line as it goes:

1. in this process, one rank on ``cuda``: fp32, bf16 autocast and fp16 with GradScaler each train
   the ``digits`` workload, losses stay finite, and peak memory comes from
   ``torch.cuda.max_memory_allocated`` (reset per trial);
2. one warm rank launched by torchrun: backend ``nccl``, the same fp32 result as in-process;
3. where there are two or more GPUs, two ranks (NCCL, DDP, one GPU each) with fp32 and bf16, and a
   second trial on the same warm ranks without a relaunch;
4. a stop is a pause on ``cuda``: an fp16 run checkpointed at half its budget and resumed ends
   where the uninterrupted run ends (GradScaler state and CUDA RNG restored);
5. the CLI as a user runs it: ``study create``, ``study run`` (bf16 / fp16 trials on ``cuda``),
   ``study best`` and ``study export --format python``; the exported module's optimizer,
   scheduler, autocast and GradScaler then train a small model on ``cuda``; ``study run`` with
   more ranks than GPUs is refused in one line (exit 2) before any trial;
6. a workload written on a CPU, whose ``loss`` does not move its batch, trains on ``cuda``: the
   engine moves the batch's tensors to the model's device;
7. the probes (LR range test, gradient noise scale) train on ``cuda`` too, as trials do;
8. ``max_memory_mb`` caps the GPU's memory, the figure a trial reports as ``peak_memory_mb``: a
   cap below this process's resident memory (a CUDA process holds a GB or more of host memory)
   but above the trial's GPU memory lets it train; a cap below its GPU memory ends it ``oom``.

Run::

    python benchmarks/gpu_check.py             # exits 1 if a check fails, 0 with no GPU (skipped)
    python benchmarks/gpu_check.py --rehearse  # checks 4-8 on the CPU, before a GPU is spent on them

On a GPU machine whose Python has its own CUDA build of torch, install convtune's other
dependencies beside it without touching torch (``pip install --no-deps optuna optuna-dashboard
pytorch_optimizer pydantic pydantic_core annotated-types typing-inspection alembic sqlalchemy mako
colorlog bottle``; typer, rich, PyYAML, scikit-learn, scipy and matplotlib are usually there) and
run with the repository on ``PYTHONPATH``. Then ``python benchmarks/loop_overhead.py`` measures the
engine's per-step overhead there. ``bash benchmarks/gpu_session.sh [WHEEL_DIR] [LOG_DIR]`` does all
of it in one call (each step under a time limit), with the engine, probe and integration tests run
on the GPU.
"""

from __future__ import annotations

import importlib.util
import math
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path
from typing import Any

import torch

from convtune.config.recipe import Recipe
from convtune.config.spec import StudySpec
from convtune.execution.launcher import ElasticExecutor, LaunchOptions
from convtune.training.engine import EngineConfig, train
from convtune.workloads import build_workload

# ``--rehearse`` runs checks 4-8 on the CPU, so the script is known to work before a GPU
# machine's minutes are spent on it.
DEVICE = "cpu" if "--rehearse" in sys.argv else "cuda"
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
    if DEVICE == "cpu":
        checks_on_any_device(build_workload("digits"))
        print("rehearsal passed" if not failures else f"{len(failures)} check(s) failed: {failures}")
        return 1 if failures else 0
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

    checks_on_any_device(workload)

    print("all checks passed" if not failures else f"{len(failures)} check(s) failed: {failures}")
    return 1 if failures else 0


def checks_on_any_device(workload: object) -> None:
    """Checks 4-8: what ``--rehearse`` runs on the CPU before a GPU is spent on them."""
    check_resume(workload)
    check_cli()
    check_batches_moved()
    check_probes()
    check_memory_cap()


def check_resume(workload: object) -> None:
    with tempfile.TemporaryDirectory() as directory:
        whole = train(workload, recipe("fp16"), CONFIG)
        paused_config = replace(CONFIG, checkpoint_dir=directory)
        train(workload, recipe("fp16"), replace(paused_config, max_cost=CONFIG.max_cost / 2))
        resumed = train(workload, recipe("fp16"), paused_config)
        a, b = whole.history[-1], resumed.history[-1]
        check(
            f"fp16 run paused at half its budget and resumed on {DEVICE} ends where the whole run ends",
            resumed.samples == whole.samples
            and abs(a.metrics["val_loss"] - b.metrics["val_loss"]) < 1e-3
            and a.loss_scale == b.loss_scale,
            f"val_loss {a.metrics['val_loss']:.5f} whole / {b.metrics['val_loss']:.5f} resumed, "
            f"loss scale {a.loss_scale:g} / {b.loss_scale:g}",
        )


SPACE = """\
peak_lr: {low: 1.0e-3, high: 1.0e-2, log: true}
horizon_samples: 16384
schedule: {choices: [cosine, onecycle]}
micro_batch_size: {choices: [32, 64]}
optimizer: adamw
precision: {choices: [bf16, fp16]}
"""

STUDY = """\
workload: digits
space: space.yaml
target: "accuracy>=0.9"
cost: samples
max_cost: 16384
eval_every: {samples: 2048}
seed: 0
"""


def check_cli() -> None:
    with tempfile.TemporaryDirectory() as directory:
        root = Path(directory)
        (root / "space.yaml").write_text(SPACE)
        (root / "gpu.yaml").write_text(STUDY)
        storage = f"sqlite:///{root / 'gpu.db'}"

        def cli(*args: str, expect: int = 0) -> subprocess.CompletedProcess[str]:
            command = [sys.executable, "-m", "convtune.cli", *args, "--storage", storage]
            done = subprocess.run(command, capture_output=True, text=True, timeout=600)
            check(
                f"convtune {' '.join(args[:2])} exits {expect}",
                done.returncode == expect,
                done.stderr.strip()[-300:],
            )
            return done

        started = time.perf_counter()
        cli("study", "create", "gpu", "--config", str(root / "gpu.yaml"))
        cli("study", "run", "gpu", "--n-trials", "4")
        best = cli("study", "best", "gpu")
        print(best.stdout.strip()[-1500:], flush=True)
        cli("study", "export", "gpu", "--format", "python", "-o", str(root / "best_recipe.py"))
        print(f"CLI study of 4 trials: {time.perf_counter() - started:.1f} s", flush=True)
        if DEVICE == "cuda":
            gpus = torch.cuda.device_count()
            too_many = str(gpus + 1)
            refused = cli("study", "run", "gpu", "--n-trials", "1", "--world-size", too_many, expect=2)
            lines = refused.stderr.strip().splitlines()
            check(
                f"world_size {too_many} on {gpus} GPU(s) refused in one line naming world_size",
                len(lines) == 1 and "world_size" in lines[0] and "Traceback" not in refused.stderr,
                refused.stderr.strip()[:300],
            )

        import optuna

        study = optuna.load_study(study_name="gpu", storage=storage)
        trials = [t for t in study.trials if t.state == optuna.trial.TrialState.COMPLETE]
        precisions = sorted({t.params.get("precision", "?") for t in study.trials})
        check("CLI trials finished", len(trials) >= 1, f"{len(trials)} complete, precisions {precisions}")

        exported = root / "best_recipe.py"
        if not exported.exists():
            return
        module_spec = importlib.util.spec_from_file_location("best_recipe", exported)
        assert module_spec is not None and module_spec.loader is not None
        best_recipe = importlib.util.module_from_spec(module_spec)
        module_spec.loader.exec_module(best_recipe)
        torch.manual_seed(0)
        model = torch.nn.Sequential(torch.nn.Linear(64, 64), torch.nn.ReLU(), torch.nn.Linear(64, 10)).to(
            DEVICE
        )
        optimizer = best_recipe.build_optimizer(model)
        scheduler = best_recipe.build_scheduler(optimizer)
        scaler = best_recipe.grad_scaler()
        inputs, labels = torch.randn(512, 64, device=DEVICE), torch.randint(0, 10, (512,), device=DEVICE)
        losses = []
        for _ in range(30):
            with best_recipe.autocast():
                loss = torch.nn.functional.cross_entropy(model(inputs), labels)
            scaler.scale(loss).backward()
            scaler.step(optimizer)
            scaler.update()
            optimizer.zero_grad(set_to_none=True)
            scheduler.step()
            losses.append(loss.item())
        precision = best_recipe.RECIPE["precision"]
        check(
            f"the exported module trains on {DEVICE} with its autocast and GradScaler",
            all(math.isfinite(x) for x in losses) and losses[-1] < losses[0],
            f"precision {precision}, loss {losses[0]:.3f} -> {losses[-1]:.3f}, "
            f"scaler enabled {scaler.is_enabled()}, scale {scaler.get_scale() if scaler.is_enabled() else 1:g}",
        )


class _BatchesLeftOnTheCpu:
    """The digits workload as someone writes it on a CPU: ``loss`` does not move the batch."""

    def __init__(self) -> None:
        self.digits = build_workload("digits")

    def build_model(self) -> torch.nn.Module:
        return self.digits.build_model()

    def train_batches(self, micro_batch_size: int, rank: int, world_size: int, seed: int) -> Iterator[Any]:
        return self.digits.train_batches(micro_batch_size, rank, world_size, seed)

    def loss(self, model: torch.nn.Module, batch: tuple[torch.Tensor, torch.Tensor]) -> torch.Tensor:
        inputs, labels = batch
        return torch.nn.functional.cross_entropy(model(inputs).float(), labels)

    def evaluate(self, model: torch.nn.Module) -> dict[str, float]:
        return self.digits.evaluate(model)


def check_batches_moved() -> None:
    result = train(_BatchesLeftOnTheCpu(), recipe("bf16"), CONFIG)
    last = result.history[-1]
    check(
        f"a workload that leaves its batches on the CPU trains on {DEVICE}",
        result.samples == CONFIG.max_cost and math.isfinite(last.metrics["val_loss"]),
        f"val_loss {last.metrics['val_loss']:.4f}",
    )


def check_probes() -> None:
    from convtune.training.probes import lr_range_test, noise_scale

    workload = build_workload("digits")
    if DEVICE == "cuda":
        torch.cuda.reset_peak_memory_stats()
    lr_range = lr_range_test(workload, recipe("bf16"), steps=60)
    noise = noise_scale(workload, recipe("fp32"), repeats=8, n_boot=200)
    used = torch.cuda.max_memory_allocated() if DEVICE == "cuda" else 1
    check(
        f"the LR range test and the noise scale probe run on {DEVICE}",
        used > 0 and lr_range.steepest_lr > 0 and noise.b_simple > 0,
        f"steepest LR {lr_range.steepest_lr:.3g}, suggested {lr_range.suggested_bounds[0]:.3g}-{lr_range.suggested_bounds[1]:.3g}, "
        f"B_simple {noise.b_simple:.0f}"
        + (f", {used / 2**20:.1f} MiB on the GPU" if DEVICE == "cuda" else ""),
    )


def check_memory_cap() -> None:
    import optuna

    from convtune.study import create_study, run_study
    from convtune.training.memory import peak_rss_bytes

    def capped(cap_mb: float) -> dict[str, Any]:
        with tempfile.TemporaryDirectory() as directory:
            storage = f"sqlite:///{Path(directory) / 'cap.db'}"
            capped_spec = StudySpec.from_dict(
                {"workload": "digits", "space": {"peak_lr": 3e-3, "micro_batch_size": 64, "horizon_samples": 8192},
                 "target": "accuracy>=0.99", "cost": "samples", "max_cost": 4096,
                 "eval_every": {"samples": 2048}, "max_memory_mb": cap_mb, "pruner": "none"}
            )  # fmt: skip
            create_study("cap", capped_spec, storage)
            run_study("cap", n_trials=1, storage=storage, executor="inprocess")
            return dict(optuna.load_study(study_name="cap", storage=storage).trials[0].user_attrs)

    host_mb = peak_rss_bytes() / 2**20
    if DEVICE == "cuda":
        under_host = capped(host_mb / 2)  # far above digits' GPU memory, below the host's
        check(
            f"max_memory_mb={host_mb / 2:.0f} (half this process's {host_mb:.0f} MB resident) lets a trial train on cuda",
            under_host["status"] != "oom" and under_host["peak_memory_mb"] < host_mb / 2,
            f"status {under_host['status']}, peak_memory_mb {under_host['peak_memory_mb']} (GPU)",
        )
    else:
        roomy = capped(host_mb * 4)
        check(
            "a cap above the trial's memory lets it train",
            roomy["status"] != "oom",
            f"status {roomy['status']}",
        )
    tight = capped(0.5)
    check(
        f"a cap below the trial's memory on {DEVICE} ends it oom",
        tight["status"] == "oom" and "over max_memory_mb" in str(tight.get("reason")),
        f"status {tight['status']}, reason {tight.get('reason')}",
    )


if __name__ == "__main__":
    sys.exit(main())
