"""Four facts about the curve corpus that convtune's defaults rest on, printed as tables.

* **Blow-ups that recovered.** Of the prefixes the forecaster calls blown up (improved, then
  ended twice above their start; cut at 10/25/50% of the planned run as in
  ``benchmarks/forecast.py``, whose cached raw forecasts it reads), how many reached the target
  later in their run, per LR schedule, and where in the rest of the run they crossed. The
  calibration's ``blow_up`` rate is fitted on the same records.
* **Seed spread.** For configurations recorded with several seeds, how far each seed's
  time-to-target lies from the configuration's median (targets as in
  ``benchmarks/replay_pruners.py``): what ``TimeToTargetPruner``'s default margin stands for.
* **Runners-up with a lucky seed.** Configurations whose true time-to-target (the median over
  their seeds) lies outside 10% of the best but one of whose seeds beats the best: a study that
  draws that seed picks them (what ``convtune study best`` warns of, and ``confirm`` fixes).
* **Equal-cost comparisons at the first rung.** For every pair of a run and a run that reached
  the target (a would-be incumbent, not yet there), at the run's 2nd evaluation (the pruner's
  first rung): when the run's distance to the target is at least 2x (5x) the incumbent's at
  the same cost, how often the run still reached the target within 10% of the incumbent's time.
  What any rule stopping on such a comparison there would cost in winners.

Usage::

    python benchmarks/corpus_facts.py                       # benchmarks/data/corpus
"""

from __future__ import annotations

import argparse
import math
import statistics
import sys
from collections import defaultdict
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

import forecast as fb  # noqa: E402
import replay_pruners as rp  # noqa: E402

from convtune.config.target import Target  # noqa: E402
from convtune.curves import time_to_target  # noqa: E402
from convtune.replay import load_grid  # noqa: E402


def blow_ups(files: list[Path]) -> str:
    cache = fb.load_cache()
    by_schedule: dict[str, list[bool]] = defaultdict(list)
    where: list[float] = []
    for path in files:
        workload = fb.load_grid_file(path)
        if workload is None:
            continue
        for case in fb.build_cases(workload, fb.CUTS):
            if not case.raw["convtune"].blew_up:
                continue
            reached = math.isfinite(case.truth)
            by_schedule[case.schedule_name].append(reached)
            if reached:
                where.append((case.truth - case.c_last) / (case.horizon - case.c_last))
    fb.save_cache(cache)
    total = [r for rs in by_schedule.values() for r in rs]
    lines = [
        "| LR schedule | prefixes called blown up | reached the target later in the run |",
        "|---|---|---|",
    ]
    for name, rs in sorted(by_schedule.items()):
        lines.append(f"| {name} | {len(rs)} | {sum(rs)} |")
    lines.append(f"| all | {len(total)} | {sum(total)} |")
    if where:
        lines.append("")
        lines.append(
            f"Those that reached crossed {min(where):.0%}–{max(where):.0%} of the way through the rest of the run."
        )
    return "\n".join(lines)


def seed_spread(files: list[Path]) -> str:
    lines = [
        "| workload | seeds of multi-seed configurations | median deviation from the configuration's median |",
        "|---|---|---|",
    ]
    medians = []
    for path in files:
        grid = load_grid(path)
        target = Target.parse(rp.pick_target(grid, 0.3))
        deviations = []
        for runs in grid.configurations.values():
            if len(runs) < 2:
                continue
            times = [time_to_target(r.costs("samples"), r.metric, target) for r in runs]
            middle = float(np.median(times))
            if math.isfinite(middle):
                # A seed that never reached counts as a full miss.
                deviations += [abs(t / middle - 1.0) if math.isfinite(t) else 1.0 for t in times]
        if deviations:
            medians.append(statistics.median(deviations))
            lines.append(f"| {grid.workload} | {len(deviations)} | {medians[-1]:.0%} |")
    if medians:
        lines.append(f"| median over workloads | | {statistics.median(medians):.0%} |")
    return "\n".join(lines)


def lucky_runners_up(files: list[Path]) -> str:
    """Per workload, the configurations outside 10% of the best (true time-to-target: the median
    over their recorded seeds) with a recorded seed that beats the best configuration's own
    median: whenever a study draws that seed, the study's pick (its fastest measured trial) is
    that configuration, and the study misses however well it searched."""
    lines = [
        "| workload | best configuration's seeds (× its median) | lucky runners-up: seeds (× the best), true (× the best) |",
        "|---|---|---|",
    ]
    for path in files:
        grid = load_grid(path)
        target = Target.parse(rp.pick_target(grid, 0.3))
        times = {
            key: [time_to_target(r.costs("samples"), r.metric, target) for r in runs]
            for key, runs in grid.configurations.items()
        }
        truth = {key: float(np.median(ts)) for key, ts in times.items()}
        best_key = min(truth, key=lambda k: truth[k])
        best = truth[best_key]
        lucky = [key for key, ts in times.items() if truth[key] > 1.1 * best and min(ts) < best]
        shown = "; ".join(
            f"{', '.join(f'{t / best:.3g}' for t in sorted(times[k]))} ({truth[k] / best:.3g})" for k in lucky
        )
        own = ", ".join(f"{t / best:.3g}" for t in sorted(times[best_key]))
        lines.append(f"| {grid.workload} | {own} | {shown or 'none'} |")
    return "\n".join(lines)


FIRST_RUNG = 2


def equal_cost_pairs(files: list[Path]) -> str:
    lines = [
        "| workload | pairs | reached first, all | distance ≥ 2× the incumbent's: pairs, reached first "
        "| ≥ 5×: pairs, reached first |",
        "|---|---|---|---|---|",
    ]
    for path in files:
        grid = load_grid(path)
        target = Target.parse(rp.pick_target(grid, 0.3))
        runs = []
        for run in grid.runs:
            costs = np.asarray(run.costs("samples"), dtype=float)
            gaps = np.array([target.gap(float(v)) if math.isfinite(v) else math.inf for v in run.metric])
            runs.append((costs, gaps, time_to_target(costs, run.metric, target)))
        incumbents = [r for r in runs if math.isfinite(r[2])]
        ratios, first = [], []
        for costs, gaps, reached_at in runs:
            if costs.size < FIRST_RUNG or reached_at <= costs[FIRST_RUNG - 1]:
                continue
            at, gap = float(costs[FIRST_RUNG - 1]), float(gaps[FIRST_RUNG - 1])
            for inc_costs, inc_gaps, inc_time in incumbents:
                inc_gap = float(np.interp(at, inc_costs, inc_gaps))
                if inc_time <= at or not (inc_gap > 0 and math.isfinite(gap)):
                    continue  # the incumbent is already there: an exact stop, no comparison
                ratios.append(gap / inc_gap)
                first.append(reached_at <= 1.1 * inc_time)
        r, f = np.array(ratios), np.array(first, dtype=bool)
        cells = [f"{grid.workload}", f"{r.size}", f"{f.mean():.1%}" if r.size else "–"]
        for lo in (2.0, 5.0):
            m = r >= lo
            cells.append(f"{int(m.sum())}, {f[m].mean():.1%}" if m.any() else "0, –")
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--data", type=Path, default=fb.HERE / "data" / "corpus", help="folder of grid files")
    args = parser.parse_args(argv)
    files = sorted(args.data.glob("*.jsonl*"))
    print("### Blown-up prefixes that recovered\n")
    print(blow_ups(files))
    print("\n### Seed spread of time-to-target\n")
    print(seed_spread(files))
    print("\n### Runners-up with a lucky seed\n")
    print(lucky_runners_up(files))
    print("\n### Equal-cost comparisons at the first rung\n")
    print(equal_cost_pairs(files))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
