"""Loop overhead: convtune's engine against a plain hand-written PyTorch loop.

Same workload (``charlm`` by default, ``--workload digits``), same recipe (AdamW, cosine, fp32, micro-batch 32,
accumulation 1, no clipping), same data stream and initial weights, no evaluation inside the
timed region of either (the engine's evaluate is a no-op used only to take timestamps; the
plain loop never evaluates). The two loops alternate every ``--segment-steps`` optimizer steps
inside one process (the plain loop runs inside the engine's ``on_eval``, off the engine's
clock), with a fixed torch thread count (default 1: two threads collapse under any other load on
2-core machines). The ratio is the median over paired segments, robust to a busy neighbour.

    python benchmarks/loop_overhead.py                  # 1 thread, 3 runs × 15 pairs × 20 steps
    python benchmarks/loop_overhead.py --threads 2 --segments 30

On a machine with a GPU both loops train on it (the engine's choice; ``--device cpu`` keeps
them on the CPU). Both read the loss back every step, so both wait for the GPU alike.

Goal: engine / plain ≥ 0.97.
"""

from __future__ import annotations

import argparse
import os
import statistics
import time

os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")

import torch  # noqa: E402

from convtune.config.recipe import Recipe  # noqa: E402
from convtune.training.engine import EngineConfig, default_device, to_device, train  # noqa: E402
from convtune.workloads import Workload, build_workload  # noqa: E402

MICRO = 32


def make_recipe(steps: int) -> Recipe:
    return Recipe(
        peak_lr=3e-3,
        warmup_steps=20,
        horizon_samples=steps * MICRO,
        micro_batch_size=MICRO,
        grad_accum_steps=1,
        schedule="cosine",
        optimizer="adamw",
        precision="fp32",
    )


class NoEval:
    """The workload with a free ``evaluate``: the engine's evaluation marks become timestamps."""

    def __init__(self, inner: Workload):
        self.inner = inner
        self.build_model, self.train_batches, self.loss = inner.build_model, inner.train_batches, inner.loss

    def evaluate(self, model: torch.nn.Module) -> dict[str, float]:
        return {"val_loss": 0.0}


class PlainLoop:
    """The loop a user would write by hand, with the same optimizer and schedule objects."""

    def __init__(self, workload: Workload, recipe: Recipe, device: torch.device):
        torch.manual_seed(0)
        self.workload, self.device = workload, device
        self.model = workload.build_model().to(device)
        # The recipe's own optimizer (its two parameter groups: no weight decay on biases, norms
        # and embeddings), so the loops differ in the loop alone, not in the optimizer's kernels.
        self.optimizer = recipe.optimizer(self.model)
        self.scheduler = recipe.scheduler(self.optimizer)
        self.batches = workload.train_batches(MICRO, 0, 1, 0)
        self.model.train()

    def run(self, steps: int) -> float:
        """Train ``steps`` steps; return the seconds they took."""
        started = time.perf_counter()
        for _ in range(steps):
            loss = self.workload.loss(self.model, to_device(next(self.batches), self.device))
            loss.backward()
            self.optimizer.step()
            self.optimizer.zero_grad(set_to_none=True)
            self.scheduler.step()
            loss.item()  # a plain loop logs its loss too
        return time.perf_counter() - started


def paired_run(
    workload: Workload, segments: int, seg_steps: int, device: torch.device
) -> list[tuple[float, float]]:
    """(engine seconds, plain seconds) for each segment of ``seg_steps`` steps.

    The engine runs ``convtune.training.engine.train``; at every evaluation mark (every ``seg_steps``
    steps; ``evaluate`` is a no-op) its ``on_eval`` first closes the engine's segment, then
    runs the plain loop for the same number of steps, then reopens the clock. The two loops
    alternate every few seconds, so a neighbour's load hits both alike. Segment 0 is warm-up.
    """
    recipe = make_recipe((segments + 1) * seg_steps)
    plain = PlainLoop(workload, recipe, device)
    pairs: list[tuple[float, float]] = []
    clock = [0.0]

    def on_eval(progress) -> bool:
        engine_seconds = time.perf_counter() - clock[0]
        plain_seconds = plain.run(seg_steps)
        if progress.step > seg_steps:
            pairs.append((engine_seconds, plain_seconds))
        clock[0] = time.perf_counter()
        return False

    cfg = EngineConfig(
        eval_every=seg_steps,
        eval_unit="steps",
        max_cost=(segments + 1) * seg_steps * MICRO,
        cost="samples",
        seed=0,
        device=device.type,
    )
    result = train(NoEval(workload), recipe, cfg, on_eval)
    assert result.status == "budget" and len(pairs) == segments, result.reason
    return pairs


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--segments", type=int, default=15, help="timed engine/plain segment pairs per run")
    parser.add_argument("--segment-steps", type=int, default=20, help="optimizer steps per segment")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument(
        "--workload",
        default="charlm",
        help="charlm (137k parameters) or digits (a small MLP: steps so short that the loop's own "
        "per-step work shows, as for small models on a GPU)",
    )
    parser.add_argument("--device", default=None, help="cpu or cuda (default: the GPU when torch sees one)")
    args = parser.parse_args()
    device = default_device(args.device)

    torch.set_num_threads(args.threads)
    workload = build_workload(args.workload)
    runs = [paired_run(workload, args.segments, args.segment_steps, device) for _ in range(args.repeats)]
    samples = args.segments * args.segment_steps * MICRO
    engine = [samples / sum(e for e, _ in pairs) for pairs in runs]
    plain = [samples / sum(p for _, p in pairs) for pairs in runs]
    ratios = [p / e for pairs in runs for e, p in pairs]
    print(
        f"{args.workload} on {device.type}, AdamW, cosine, fp32, micro {MICRO}, accum 1, threads {torch.get_num_threads()}, "
        f"{args.repeats} runs × {args.segments} interleaved segment pairs of {args.segment_steps} steps"
    )
    print(f"{'loop':<8}{'samples/s (median run)':>24}   runs")
    print(f"{'engine':<8}{statistics.median(engine):>24.1f}   " + ", ".join(f"{x:.1f}" for x in engine))
    print(f"{'plain':<8}{statistics.median(plain):>24.1f}   " + ", ".join(f"{x:.1f}" for x in plain))
    ratio = statistics.median(ratios)
    quart = statistics.quantiles(ratios, n=4)
    print(
        f"ratio engine/plain: {ratio:.3f} (median of {len(ratios)} paired segments; "
        f"quartiles {quart[0]:.3f}–{quart[2]:.3f}); goal ≥ 0.97: {'met' if ratio >= 0.97 else 'NOT met'}"
    )


if __name__ == "__main__":
    main()
