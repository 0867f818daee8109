"""Record the curve corpus through convtune's engine (resumable, sharded, interleaved).

Each run trains one grid point with one seed to its full planned run (stopped only when it
diverges: a non-finite training loss or metric) with one torch thread and cost in samples, and
appends one line to ``DIR/<workload>.jsonl`` as soon as it ends (format: GRID_FORMAT, "convtune
grid v1"). A run already in the file (by its key: a hash of workload, knobs, seed and the
planned run's sizes) is skipped, so recording can be stopped at any time and resumed. With
``--all`` the workloads are interleaved round-robin: the next run always goes to the workload
with the fewest runs recorded (until its grid is done), so a stop at any time leaves every
workload with about as many runs as the others, each a balanced prefix of its shuffled grid.

Usage::

    python benchmarks/corpus/record.py --all --max-minutes 95 --out-dir /tmp/corpus
    python benchmarks/corpus/record.py --workload cnn_digits --shard 1/2 --limit 10
    python benchmarks/corpus/record.py --list --out-dir /tmp/corpus
"""

from __future__ import annotations

import argparse
import math
import os
import statistics
import sys
import time
from pathlib import Path
from typing import Any

if __package__ in (None, ""):  # run as a script: make ``corpus`` importable from benchmarks/
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
    __package__ = "corpus"

import torch

from convtune.curves import LRSchedule
from convtune.training.engine import Progress, train

from .grid import (
    CORPUS_WORKLOADS,
    FRESH_BATCHES,
    FRESH_WORKLOADS,
    engine_config,
    header,
    planned_runs,
    recipe_for,
    run_key,
)
from .gridfile import append_line, grid_path, load_grid

SCHEDULE_POINTS = 256  # convtune.study's _SCHEDULE_POINTS
DEFAULT_OUT_DIR = Path(__file__).resolve().parent.parent / "data" / "corpus"


class _Timed:
    """Wraps a workload to count the CPU seconds spent building models and evaluating them,
    so a curve's ``cpu_seconds`` measures training alone, as the engine's ``seconds`` does."""

    def __init__(self, workload: Any):
        self.workload = workload
        self.overhead_cpu = 0.0

    def build_model(self) -> torch.nn.Module:
        started = time.process_time()
        try:
            return self.workload.build_model()
        finally:
            self.overhead_cpu += time.process_time() - started

    def train_batches(self, micro_batch_size: int, rank: int, world_size: int, seed: int) -> Any:
        return self.workload.train_batches(micro_batch_size, rank, world_size, seed)

    def loss(self, model: torch.nn.Module, batch: Any) -> torch.Tensor:
        return self.workload.loss(model, batch)

    def evaluate(self, model: torch.nn.Module) -> dict[str, float]:
        started = time.process_time()
        try:
            return self.workload.evaluate(model)
        finally:
            self.overhead_cpu += time.process_time() - started


def _sig(x: float, digits: int = 5) -> float | None:
    return float(f"{x:.{digits}g}") if math.isfinite(x) else None


def record_one(name: str, workload: Any, knobs: dict[str, Any], seed: int) -> dict[str, Any]:
    """Train one grid point with ``seed`` through ``convtune.training.engine.train``; the run's line."""
    spec = CORPUS_WORKLOADS[name]
    recipe = recipe_for(name, knobs)
    config = engine_config(name, seed)
    lr_per_step = recipe.lr_per_step
    timed = _Timed(workload)
    evals: list[tuple[Progress, float]] = []
    non_finite = False

    def on_eval(progress: Progress) -> bool:
        nonlocal non_finite
        evals.append((progress, time.process_time() - cpu_start - timed.overhead_cpu))
        non_finite = not math.isfinite(progress.metrics.get(spec.metric, math.nan))
        return non_finite  # a NaN metric is a diverged run: stop it as the engine would

    started = time.perf_counter()
    cpu_start = time.process_time()
    result = train(timed, recipe, config, on_eval)
    wall = time.perf_counter() - started
    status = "diverged" if result.status == "diverged" or non_finite else "complete"
    # As convtune.study.schedule_for builds a trial's schedule (imported here without the study).
    schedule = LRSchedule.from_steps(
        lr_per_step, float(recipe.effective_batch_size), max_points=SCHEDULE_POINTS
    ).to_dict()
    return {
        "key": run_key(name, knobs, seed),
        "knobs": knobs,
        "seed": seed,
        "status": status,
        "reason": result.reason,
        "horizon_samples": spec.horizon_samples,
        "recipe": recipe.model_dump(mode="json", by_alias=True),
        "schedule": {
            "costs": [_sig(c, 8) for c in schedule["costs"]],
            "lrs": [_sig(v, 6) for v in schedule["lrs"]],
        },
        "curve": {
            "step": [p.step for p, _ in evals],
            "samples": [p.samples for p, _ in evals],
            "seconds": [round(p.seconds, 4) for p, _ in evals],
            "cpu_seconds": [round(cpu, 4) for _, cpu in evals],
            "metric": [_sig(p.metrics.get(spec.metric, math.nan)) for p, _ in evals],
            # The LR of the last optimizer step before the evaluation: the schedule's value at
            # ``samples`` (LRSchedule puts step i's LR at the cost where step i ends).
            "lr": [_sig(lr_per_step[min(p.step, len(lr_per_step)) - 1], 6) for p, _ in evals],
        },
        "wall_s": round(wall, 3),
        "torch": torch.__version__,
    }


def recorded_keys(path: Path) -> set[str]:
    """Keys of every complete run line in ``path`` (empty when it does not exist)."""
    if not path.exists():
        return set()
    return {run["key"] for run in load_grid(path)[1] if "key" in run}


def ensure_header(path: Path, name: str) -> None:
    """Create ``path`` with the workload's header line unless it exists (safe between shards)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    if path.name.endswith(".gz"):
        if not path.exists():
            append_line(path, header(name))
        return
    # The header is written to a file of this process's own, then linked into place: a link
    # fails if the path exists, so a shard never sees the file empty (with the path created
    # first and written after, another shard could read it in between).
    staged = path.with_name(f".{path.name}.{os.getpid()}")
    append_line(staged, header(name))
    try:
        os.link(staged, path)
    except FileExistsError:
        pass
    finally:
        staged.unlink()


def _summary(run: dict[str, Any], direction: str) -> str:
    values = [v for v in run["curve"]["metric"] if v is not None]
    best = (min(values) if direction == "minimize" else max(values)) if values else None
    k = run["knobs"]
    return (
        f"{k['optimizer']} lr={k['peak_lr']:g} b={k['micro_batch_size']} {k['schedule']} "
        f"wu={k['warmup_steps']} seed={run['seed']}: {run['status']} best={best} "
        f"evals={len(run['curve']['step'])} in {run['wall_s']:.2f} s"
    )


def list_recorded(out_dir: Path, markdown: bool = False) -> None:
    """Print, per workload, the runs recorded by status against the planned count (``markdown``:
    as the table in docs/benchmarks.md)."""
    if markdown:
        print(
            "| workload | kind | metric | planned run (samples) | runs recorded / planned "
            "| complete / diverged | median s per run (wall, training CPU) |"
        )
        print("|---|---|---|---|---|---|---|")
    total = 0
    for name, spec in CORPUS_WORKLOADS.items():
        path = grid_path(out_dir, name)
        runs = load_grid(path)[1] if path.exists() else []
        by: dict[str, int] = {}
        for run in runs:
            by[run["status"]] = by.get(run["status"], 0) + 1
        wall = statistics.median(r["wall_s"] for r in runs) if runs else math.nan
        cpu = [r["curve"]["cpu_seconds"][-1] for r in runs if r["curve"]["cpu_seconds"]]
        cpu_median = statistics.median(cpu) if cpu else math.nan
        planned = len(planned_runs(name))
        if markdown:
            bounds = ", ".join("–" if b is None else f"{b:g}" for b in spec.metric_bounds)
            print(
                f"| {name} | {spec.kind} | {spec.metric} ({spec.direction[:3]}, [{bounds}]) "
                f"| {spec.horizon_samples:,} | {len(runs)} / {planned} "
                f"| {by.get('complete', 0)} / {by.get('diverged', 0)} | {wall:.1f}, {cpu_median:.1f} |"
            )
        else:
            print(
                f"{name}: {len(runs)}/{planned} recorded {by}, median {wall:.2f} s/run wall, "
                f"{cpu_median:.2f} s training CPU"
            )
        total += len(runs)
    print(f"total: {total} runs")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n")[0])
    which = parser.add_mutually_exclusive_group()
    which.add_argument("--workload", choices=sorted(CORPUS_WORKLOADS), action="append")
    which.add_argument("--all", action="store_true", help="every workload, interleaved")
    which.add_argument(
        "--fresh",
        type=int,
        nargs="?",
        const=1,
        choices=sorted(FRESH_BATCHES),
        help="a batch of the workloads recorded after every choice was made (1 without a number), interleaved",
    )
    parser.add_argument("--shard", default="0/1", help="I/N: record runs I, I+N, I+2N, ... of each grid")
    parser.add_argument("--max-minutes", type=float, default=None, help="start no run after this")
    parser.add_argument("--limit", type=int, default=None, help="record at most this many new runs")
    parser.add_argument("--out-dir", type=Path, default=DEFAULT_OUT_DIR)
    parser.add_argument("--list", action="store_true", help="count recorded runs and exit")
    parser.add_argument("--markdown", action="store_true", help="with --list: as a markdown table")
    args = parser.parse_args(argv)

    if args.list:
        list_recorded(args.out_dir, args.markdown)
        return 0
    if args.all:
        names = [n for n in CORPUS_WORKLOADS if n not in FRESH_WORKLOADS]
    else:
        names = list(FRESH_BATCHES[args.fresh]) if args.fresh else (args.workload or [])
    if not names:
        parser.error("give --workload W (repeatable), --all or --list")
    index, count = (int(x) for x in args.shard.split("/"))
    torch.set_num_threads(1)

    todo: dict[str, list[dict[str, Any]]] = {}
    planned: dict[str, int] = {}
    done: dict[str, int] = {}
    for name in names:
        path = grid_path(args.out_dir, name)
        ensure_header(path, name)
        keys = recorded_keys(path)
        mine = planned_runs(name)[index::count]
        planned[name] = len(mine)
        todo[name] = [r for r in mine if run_key(name, r["knobs"], r["seed"]) not in keys]
        done[name] = planned[name] - len(todo[name])
        print(f"{name}: {done[name]}/{planned[name]} of shard {args.shard} recorded", flush=True)

    workloads: dict[str, Any] = {}
    start = time.monotonic()
    recorded = 0
    while any(todo.values()):
        if args.max_minutes is not None and time.monotonic() - start > 60 * args.max_minutes:
            print("time is up; rerun to resume", flush=True)
            break
        if args.limit is not None and recorded >= args.limit:
            break
        # Round-robin: the workload with the fewest runs goes next, so dear workloads are not
        # left short when the recording stops early.
        name = min((n for n in names if todo[n]), key=lambda n: (done[n], names.index(n)))
        run_spec = todo[name].pop(0)
        if name not in workloads:
            workloads[name] = CORPUS_WORKLOADS[name].factory()
        run = record_one(name, workloads[name], run_spec["knobs"], run_spec["seed"])
        append_line(grid_path(args.out_dir, name), run)
        done[name] += 1
        recorded += 1
        print(
            f"[{recorded}] {name} {done[name]}/{planned[name]} "
            f"{_summary(run, CORPUS_WORKLOADS[name].direction)}",
            flush=True,
        )
    print(f"recorded {recorded} runs in {(time.monotonic() - start) / 60:.1f} min", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
