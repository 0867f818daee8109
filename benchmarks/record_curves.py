"""Record real learning curves of the built-in workloads over a grid of knobs (resumable).

Each run trains one grid point to its full budget (no early stop at any target: the pruning
benchmark replays whole curves) with one torch thread and cost in samples, and appends one JSON
line to ``benchmarks/data/curves.jsonl``: the grid knobs, the full recipe dict, the planned LR
schedule (``LRSchedule.to_dict()``, cost in samples) and, per evaluation, step, samples,
seconds, metric and lr. Runs are keyed by a hash of (workload, recipe, engine settings); a key
already in the file is skipped, so recording can be stopped at any time and resumed later.

The grid is walked in a fixed shuffled order, so any prefix of it is a balanced random subset.

Usage::

    python benchmarks/record_curves.py --workload digits          # ~2-4 s per run
    python benchmarks/record_curves.py --workload charlm          # ~8-20 s per run
    python benchmarks/record_curves.py --workload charlm --limit 10 --max-minutes 5
    python benchmarks/record_curves.py --workload charlm --shard 1/2   # a second worker
    python benchmarks/record_curves.py --list                     # what is recorded
    python benchmarks/record_curves.py --workload digits --seeds 1 2 3 4 --out benchmarks/data/curves_seeds.jsonl
    python benchmarks/record_curves.py --workload charlm --seeds 1 2 3 4 --fastest 24 \
        --out benchmarks/data/curves_seeds.jsonl
    python benchmarks/record_curves.py --workload charlm --seeds 1 2 --out benchmarks/data/curves_seeds.jsonl

``--seeds`` records the grid again with other training seeds (initialisation and batch order):
their knobs carry ``seed``, so the seed-to-seed spread of every grid point can be measured and a
replay can draw each trial's curve from one seed's recording, as a real study's runs vary.
"""

from __future__ import annotations

import argparse
import hashlib
import itertools
import json
import math
import random
import sys
import time
from pathlib import Path
from typing import Any

import torch

from convtune.config.recipe import Recipe
from convtune.config.target import Target
from convtune.replay import Grid as ReplayGrid
from convtune.replay import load_grid as load_replay_grid
from convtune.study import schedule_for
from convtune.training.engine import EngineConfig, Progress, train
from convtune.workloads import build_workload

DATA = Path(__file__).resolve().parent / "data" / "curves.jsonl"

# Per workload: the planned run (= the recorded budget) in samples, the evaluation interval,
# and the knob grid. LRs are per optimizer: Lion wants ~5x less than AdamW (same "low/mid/high").
WORKLOADS: dict[str, dict[str, Any]] = {
    "charlm": {
        "metric": "val_loss",
        "horizon": 8192,
        "eval_every": 256,
        "lr": {"adamw": [3e-3, 1e-2, 3e-2], "lion": [6e-4, 2e-3, 6e-3]},
        "batch": [(16, 1), (32, 1), (32, 2)],
        "warmup": [0, 50],
    },
    "digits": {
        "metric": "accuracy",
        "horizon": 24576,
        "eval_every": 1024,
        "lr": {"adamw": [1e-3, 3e-3, 1e-2], "lion": [2e-4, 6e-4, 2e-3]},
        "batch": [(32, 1), (64, 1), (64, 2)],
        "warmup": [0, 20],
    },
}
SCHEDULES = ["cosine", "constant", "cyclic", "onecycle"]
DEFAULT_TARGETS = {"charlm": "val_loss<=2.3", "digits": "accuracy>=0.95"}


def grid(workload: str) -> list[dict[str, Any]]:
    """The grid points of ``workload`` (knob dicts), in the fixed recording order."""
    w = WORKLOADS[workload]
    points = []
    for opt, level, (mb, acc), schedule, warmup in itertools.product(
        ["adamw", "lion"], range(3), w["batch"], SCHEDULES, w["warmup"]
    ):
        if schedule == "onecycle" and warmup:
            continue  # one-cycle has its own warm-up phase
        points.append(
            {
                "optimizer": opt,
                "lr_level": level,
                "peak_lr": w["lr"][opt][level],
                "micro_batch_size": mb,
                "grad_accum_steps": acc,
                "schedule": schedule,
                "warmup_steps": warmup,
            }
        )
    random.Random(0).shuffle(points)
    return points


def recipe_for(workload: str, knobs: dict[str, Any]) -> Recipe:
    w = WORKLOADS[workload]
    params: dict[str, Any] = {}
    batch = knobs["micro_batch_size"] * knobs["grad_accum_steps"]
    total_steps = math.ceil(w["horizon"] / batch)
    if knobs["schedule"] == "cyclic":
        # Two full triangles over the run, ending at the base LR.
        params = {"base_lr_ratio": 0.1, "half_period_steps": max(1, total_steps // 4), "mode": "triangular"}
    return Recipe(
        peak_lr=knobs["peak_lr"],
        warmup_steps=knobs["warmup_steps"],
        horizon_samples=w["horizon"],
        schedule=knobs["schedule"],
        schedule_params=params,
        micro_batch_size=knobs["micro_batch_size"],
        grad_accum_steps=knobs["grad_accum_steps"],
        optimizer=knobs["optimizer"],
    )


def config_for(workload: str, seed: int = 0) -> EngineConfig:
    w = WORKLOADS[workload]
    return EngineConfig(
        eval_every=w["eval_every"], cost="samples", max_cost=w["horizon"], threads=1, seed=seed
    )


def run_key(workload: str, recipe: Recipe, config: EngineConfig) -> str:
    blob = json.dumps(
        {
            "workload": workload,
            "recipe": recipe.model_dump(mode="json", by_alias=True),
            "eval_every": config.eval_every,
            "max_cost": config.max_cost,
            "seed": config.seed,
        },
        sort_keys=True,
    )
    return hashlib.sha1(blob.encode()).hexdigest()[:12]


def knob_key(workload: str, knobs: dict[str, Any]) -> str:
    return workload + ":" + json.dumps(knobs, sort_keys=True)


def recorded_keys(path: Path = DATA) -> set[str]:
    """Config hashes and knob keys of every complete line (a grid point is done if either is
    present: when a recipe default changes, e.g. a new schedule parameter, the hash changes but
    the run recorded before still stands)."""
    if not path.exists():
        return set()
    keys = set()
    for line in path.read_text().splitlines():
        try:
            run = json.loads(line)
            keys.add(run["key"])
            keys.add(knob_key(run["workload"], run["knobs"]))
        except (ValueError, KeyError):
            continue  # a line cut short by an interrupted run: that run is simply redone
    return keys


def is_recorded(workload: str, knobs: dict[str, Any], keys: set[str]) -> bool:
    """Whether ``recorded_keys`` holds this grid point (by its config hash or its knobs)."""
    config = config_for(workload, knobs.get("seed", 0))
    return run_key(workload, recipe_for(workload, knobs), config) in keys or knob_key(workload, knobs) in keys


def load_curves(
    path: Path = DATA, workload: str | None = None, seed: int | None = None
) -> list[dict[str, Any]]:
    """Every complete recorded run (optionally of one workload, or one training seed), in file order."""
    out = []
    if not path.exists():
        return out
    for line in path.read_text().splitlines():
        try:
            run = json.loads(line)
        except ValueError:
            continue
        if (workload is None or run["workload"] == workload) and (
            seed is None or run["knobs"].get("seed", 0) == seed
        ):
            out.append(run)
    return out


def _sig(x: float, digits: int = 4) -> float | None:
    return float(f"{x:.{digits}g}") if math.isfinite(x) else None


def record_one(workload: str, wl: Any, knobs: dict[str, Any]) -> dict[str, Any]:
    recipe = recipe_for(workload, knobs)
    config = config_for(workload, knobs.get("seed", 0))
    metric = WORKLOADS[workload]["metric"]
    evals: list[Progress] = []
    started = time.perf_counter()
    result = train(wl, recipe, config, lambda p: evals.append(p) or False)
    wall = time.perf_counter() - started
    schedule = schedule_for(recipe, float(recipe.effective_batch_size))
    return {
        "key": run_key(workload, recipe, config),
        "workload": workload,
        "metric": metric,
        "knobs": knobs,
        "recipe": recipe.model_dump(mode="json", by_alias=True),
        "schedule": schedule.to_dict(),
        "budget_samples": config.max_cost,
        "status": result.status,
        "wall_s": round(wall, 2),
        "torch": torch.__version__,
        "evals": {
            "step": [p.step for p in evals],
            "samples": [p.samples for p in evals],
            "seconds": [round(p.seconds, 3) for p in evals],
            "metric": [_sig(p.metrics.get(metric, math.nan), 5) for p in evals],
            "lr": [_sig(p.lr) for p in evals],
        },
    }


def grid_knobs(knobs: dict[str, Any]) -> dict[str, Any]:
    """A recorded run's knobs as the replay grid names them: the recipe's fields, the batch as
    ``global_batch_size`` (32x2 replays 64x1: the same samples per step), ``lr_level`` a label."""
    return {
        "optimizer": knobs["optimizer"],
        "peak_lr": knobs["peak_lr"],
        "lr_level": knobs["lr_level"],
        "global_batch_size": knobs["micro_batch_size"] * knobs["grad_accum_steps"],
        "schedule": knobs["schedule"],
        "warmup_steps": knobs["warmup_steps"],
    }


def replay_grid(workload: str, path: Path = DATA, seeds: Any = (0,), *extra: Path) -> ReplayGrid:
    """The recorded curves of ``workload`` as a convtune replay grid (``docs/replay.md``), for
    :mod:`convtune.replay`'s executor and studies: the runs of the training ``seeds`` in
    ``path`` (``None``: every seed) and every run in the ``extra`` files. A grid point recorded
    twice with one seed keeps its last run."""
    w = WORKLOADS[workload]
    header = {
        "convtune_grid": 1,
        "workload": workload,
        "metric": w["metric"],
        "direction": "minimize" if w["metric"].endswith("loss") else "maximize",
        "knobs": {
            "optimizer": {"type": "categorical", "choices": list(w["lr"])},
            "peak_lr": {"type": "float", "log": True},
            "lr_level": {"type": "int"},
            "global_batch_size": {"type": "int"},
            "schedule": {"type": "categorical", "choices": SCHEDULES},
            "warmup_steps": {"type": "int"},
        },
        "snap": "nearest",
        "horizon_samples": w["horizon"],
        "eval_every_samples": w["eval_every"],
    }
    runs = [r for r in load_curves(path, workload) if seeds is None or r["knobs"].get("seed", 0) in seeds]
    for other in extra:
        runs += load_curves(other, workload)
    lines: dict[str, dict[str, Any]] = {}
    for run in runs:
        seed = int(run["knobs"].get("seed", 0))
        knobs = grid_knobs(run["knobs"])
        lines[json.dumps([knobs, seed], sort_keys=True)] = {
            "knobs": knobs,
            "seed": seed,
            "status": "diverged" if run["status"] == "diverged" else "complete",
            "horizon_samples": run["budget_samples"],
            "recipe": run["recipe"],
            "schedule": run["schedule"],
            "curve": run["evals"],
        }
    return load_replay_grid([header, *lines.values()])


def fastest(workload: str, points: list[dict[str, Any]], n: int) -> list[dict[str, Any]]:
    """The ``n`` of ``points`` that reached the default target soonest in the seed-0 recording."""
    recorded = replay_grid(workload)
    ttt = recorded.true_time_to_target(Target.parse(DEFAULT_TARGETS[workload]), "samples")
    return sorted(points, key=lambda k: ttt.get(recorded.key(grid_knobs(k)), math.inf))[:n]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--workload", choices=sorted(WORKLOADS), default="charlm")
    parser.add_argument("--limit", type=int, default=None, help="record at most this many new runs")
    parser.add_argument("--max-minutes", type=float, default=None, help="start no run after this")
    parser.add_argument("--shard", default="0/1", help="I/N: record grid points I, I+N, I+2N, ... only")
    parser.add_argument("--list", action="store_true", help="count recorded runs and exit")
    parser.add_argument("--out", type=Path, default=DATA)
    parser.add_argument(
        "--seeds", type=int, nargs="+", default=[0], help="training seeds to record each grid point with"
    )
    parser.add_argument(
        "--fastest",
        type=int,
        default=None,
        help="only the N grid points fastest to the workload's default target in the seed-0 recording",
    )
    args = parser.parse_args(argv)

    if args.list:
        for name in sorted(WORKLOADS):
            runs = load_curves(args.out, name)
            by = {s: sum(r["knobs"]["schedule"] == s for r in runs) for s in SCHEDULES}
            print(f"{name}: {len(runs)}/{len(grid(name))} recorded {by}")
        return 0

    torch.set_num_threads(1)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    done = recorded_keys(args.out)
    index, count = (int(x) for x in args.shard.split("/"))
    # Seed 0's knobs carry no seed, so the curves recorded before seeds existed still count.
    chosen = grid(args.workload)
    if args.fastest is not None:
        chosen = fastest(args.workload, chosen, args.fastest)
    points = [k | ({"seed": s} if s else {}) for s in args.seeds for k in chosen]
    todo = [k for k in points[index::count] if not is_recorded(args.workload, k, done)]
    n_runs = len(load_curves(args.out, args.workload))
    print(f"{args.workload}: {n_runs} runs recorded, {len(todo)} grid points left", flush=True)
    wl = build_workload(args.workload)
    start = time.monotonic()
    for i, knobs in enumerate(todo[: args.limit]):
        if args.max_minutes is not None and time.monotonic() - start > 60 * args.max_minutes:
            print("time is up; rerun to resume", flush=True)
            break
        if is_recorded(args.workload, knobs, recorded_keys(args.out)):
            continue  # another shard (or session) recorded it meanwhile
        run = record_one(args.workload, wl, knobs)
        with args.out.open("a") as fh:
            fh.write(json.dumps(run, separators=(",", ":")) + "\n")
        metric = [v for v in run["evals"]["metric"] if v is not None]
        best = (min(metric) if run["metric"] == "val_loss" else max(metric)) if metric else None
        print(
            f"[{i + 1}/{len(todo)}] {run['key']} {knobs['optimizer']} lr={knobs['peak_lr']:g} "
            f"b={knobs['micro_batch_size']}x{knobs['grad_accum_steps']} {knobs['schedule']} "
            f"wu={knobs['warmup_steps']} seed={knobs.get('seed', 0)}: {run['status']} best={best} in {run['wall_s']} s",
            flush=True,
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
