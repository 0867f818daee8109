"""Pruners compared on the recorded learning curves, through convtune's own tuner replay.

Every study is :func:`convtune.replay.replay_study`: a real Optuna study whose trials run the
shipped :class:`convtune.study.objective.Objective` (outcome table, penalty, duplicates,
recorded attributes) over :class:`convtune.replay.ReplayExecutor`, which streams the curve
``benchmarks/record_curves.py`` recorded for the grid point a trial suggests. A study of 40
trials costs seconds, and every pruner sees exactly the same curves.

The space is the recorded grid's, categorical as recorded: the optimizer, its three LR levels,
the three batch sizes, the four schedules and the warm-ups (a cyclic schedule's half period is
the middle batch size's, a quarter of its run). ``--trials`` trials per study, ``--seeds``
seeds, with each pruner of ``--methods`` (any name :func:`convtune.replay.make_replay_pruner`
takes: ``none``, ``time_to_target``, ``time_to_target:margin=0.25``, ``time_to_target_field``,
and Optuna's ``median``, ``sha``, ``hyperband`` judged on the distance to the target). A stopped
trial ends as ``convtune study run`` ends it (COMPLETE; its forecast, or the penalty). A study's
pick is its measured-fastest reached trial; regret is the pick's true time-to-target (the
recorded curve's) against the grid's best.

Usage::

    python benchmarks/pruning.py --workload charlm                 # target val_loss<=2.3
    python benchmarks/pruning.py --workload digits --seeds 10      # target accuracy>=0.95
    python benchmarks/pruning.py --workload charlm --methods none,time_to_target,hyperband
"""

from __future__ import annotations

import argparse
import math
import statistics
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import optuna

sys.path.insert(0, str(Path(__file__).resolve().parent))
from record_curves import DATA, DEFAULT_TARGETS, SCHEDULES, WORKLOADS, replay_grid  # noqa: E402

from convtune.config.target import Target  # noqa: E402
from convtune.replay import Grid, replay_spec, replay_study  # noqa: E402

METHODS = [
    "none",
    "median",
    "sha",
    "hyperband",
    "time_to_target",
    "time_to_target:margin=0.25",
    "time_to_target_field",
]


# The method names of the benchmark's own replay (before it ran through convtune.replay), so the
# commands quoted in docs/benchmarks.md still run: ``NAME/complete`` is how every stopped trial now
# ends; ``/pruned`` (Optuna's PRUNED state), ``oracle`` and ``ttt-blind`` (no LR schedule) measured
# things convtune never does and are gone.
OLD_NAMES = {
    "ttt": "time_to_target",
    "ttt-m25": "time_to_target:margin=0.25",
    "ttt-field": "time_to_target_field",
    "ttt-halving": "time_to_target_halving",
}


def method_name(method: str) -> str:
    """A ``--methods`` entry as a replay pruner name (old names translated, see ``OLD_NAMES``)."""
    name, _, outcome = method.partition("/")
    if outcome not in ("", "complete") or name in ("oracle", "ttt-blind"):
        raise SystemExit(
            f"--methods {method}: a convtune study ends every stopped trial COMPLETE with its forecast; "
            "the PRUNED outcome, the oracle and the schedule-blind pruner are no longer replayed"
        )
    if name.startswith("ttt:"):
        return "time_to_target:" + name[4:]
    return OLD_NAMES.get(name, name)


def cyclic_half_period(workload: str) -> int:
    """A cyclic schedule's half period as recorded for the middle batch size: two full
    triangles over the run."""
    w = WORKLOADS[workload]
    batches = sorted(mb * acc for mb, acc in w["batch"])
    return max(1, math.ceil(w["horizon"] / batches[len(batches) // 2]) // 4)


def grid_space(workload: str) -> dict[str, Any]:
    """The recorded grid as a categorical convtune space (each optimizer its own LR levels)."""
    w = WORKLOADS[workload]
    optimizer: dict[str, Any] = {"choices": list(w["lr"])}
    for name, levels in w["lr"].items():
        optimizer[name] = {"peak_lr": {"choices": list(levels)}}
    return {
        "optimizer": optimizer,
        "micro_batch_size": {"choices": sorted({mb * acc for mb, acc in w["batch"]})},
        "grad_accum_steps": 1,
        "schedule": {"choices": SCHEDULES, "cyclic": {"half_period_steps": cyclic_half_period(workload)}},
        "warmup_steps": {"choices": sorted(set(w["warmup"]))},
        "horizon_samples": w["horizon"],
    }


def pruning_table(
    grid: Grid,
    workload: str,
    target: Target,
    seeds: int,
    n_trials: int,
    methods: Sequence[str],
    sampler: str = "tpe",
    progress: Callable[[str], None] = lambda s: None,
) -> list[dict[str, Any]]:
    """One row per pruner: means (or medians, where named) over ``seeds`` replayed studies."""
    spec = replay_spec(
        grid,
        {
            "workload": workload,
            "space": grid_space(workload),
            "target": str(target),
            "cost": "samples",
            "max_cost": float(WORKLOADS[workload]["horizon"]),
        },
    )
    rows: list[dict[str, Any]] = []
    base_cost = None
    for method in methods:
        started = time.perf_counter()
        results = [
            replay_study(
                grid, spec, seed=seed, budget=math.inf, pruner=method, sampler=sampler, max_trials=n_trials
            )
            for seed in range(seeds)
        ]
        progress(f"{method}: {time.perf_counter() - started:.1f} s")
        cost = statistics.mean(r["spent"] for r in results)
        base_cost = base_cost or cost
        regrets = [r["pick_ratio"] - 1.0 for r in results]
        rows.append(
            {
                "pruner": method,
                "cost (full runs)": cost,
                "cost / first": cost / base_cost,
                "median regret": statistics.median(regrets),
                "mean regret": statistics.mean(min(r, 10.0) for r in regrets),
                "pick ≤10%": statistics.mean(bool(r["hit"]) for r in results),
                "cost to ≤10%": statistics.median(r["cost_to_10"] for r in results),
                "stopped": statistics.mean(r["stopped_share"] for r in results),
                "near-best stopped": statistics.mean(r["near_best_stopped_share"] for r in results),
                "duplicates": statistics.mean(r["trials"] - r["trained"] for r in results),
            }
        )
    return rows


def print_table(rows: list[dict[str, Any]], title: str) -> None:
    if not rows:
        return
    cols = list(rows[0])

    def fmt(v: Any) -> str:
        if isinstance(v, float):
            if math.isinf(v):
                return "inf"
            if math.isnan(v):
                return "–"
            return f"{v:.3g}" if abs(v) < 1000 else f"{v:,.0f}"
        return str(v)

    cells = [[fmt(r[c]) for c in cols] for r in rows]
    widths = [max(len(c), *(len(row[i]) for row in cells)) for i, c in enumerate(cols)]
    print(f"\n{title}\n")
    print("| " + " | ".join(c.ljust(w) for c, w in zip(cols, widths, strict=True)) + " |")
    print("|" + "|".join("-" * (w + 2) for w in widths) + "|")
    for row in cells:
        print("| " + " | ".join(v.ljust(w) for v, w in zip(row, widths, strict=True)) + " |")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--workload", choices=sorted(WORKLOADS), default="charlm")
    parser.add_argument("--target", default=None, help="default: " + str(DEFAULT_TARGETS))
    parser.add_argument("--seeds", type=int, default=10)
    parser.add_argument("--trials", type=int, default=40)
    parser.add_argument(
        "--only", choices=["pruning"], default=None, help="the one table (kept for old commands)"
    )
    parser.add_argument(
        "--methods",
        default=None,
        help="comma list of replay pruners, e.g. none,time_to_target:margin=0.1+n_warmup_reports=2,hyperband "
        f"(default: {','.join(METHODS)}); the old names (ttt/complete, ttt:margin=0.1/complete, ...) still work",
    )
    parser.add_argument("--sampler", default="tpe", help="a replay sampler: tpe, random, gp, optuna-tpe")
    parser.add_argument("--data", type=Path, default=DATA)
    args = parser.parse_args(argv)
    optuna.logging.set_verbosity(optuna.logging.ERROR)

    target = Target.parse(args.target or DEFAULT_TARGETS[args.workload])
    try:
        grid = replay_grid(args.workload, args.data)
    except Exception:  # noqa: BLE001 - no file, or no run of this workload in it
        print(f"no recorded {args.workload} curves in {args.data}; run benchmarks/record_curves.py")
        return 1
    truth = grid.true_time_to_target(target, "samples")
    best_key = min(truth, key=truth.__getitem__)
    print(
        f"{args.workload}: {len(grid.configurations)} recorded configurations, target {target}, budget "
        f"{grid.full_run('samples'):.0f} samples; {sum(map(math.isfinite, truth.values()))} reach it; "
        f"best {'/'.join(map(str, best_key))} at {truth[best_key]:.0f} samples"
    )
    by_schedule = {}
    for schedule in SCHEDULES:
        times = [t for key, t in truth.items() if schedule in key]
        by_schedule[schedule] = (
            f"{sum(map(math.isfinite, times))}/{len(times)} reach, best {min(times, default=math.inf):.0f}"
        )
    print("by schedule:", by_schedule)
    methods = [method_name(m) for m in args.methods.split(",")] if args.methods else METHODS
    rows = pruning_table(
        grid,
        args.workload,
        target,
        args.seeds,
        args.trials,
        methods,
        args.sampler,
        lambda s: print("  " + s, flush=True),
    )
    print_table(
        rows, f"Pruning: {args.sampler}, {args.trials} trials × {args.seeds} seeds (means over seeds)"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
