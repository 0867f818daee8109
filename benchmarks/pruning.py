"""Replay recorded learning curves through real Optuna studies: pruners compared.

A simulator backend (Syne Tune's idea): each trial's training is a walk along the curve that
``benchmarks/record_curves.py`` recorded for the grid point TPE suggested, so a study of 40
trials costs seconds instead of minutes, and every pruner sees exactly the same curves.

One table (forecast accuracy is measured by ``benchmarks/forecast.py``, which cuts curves at
fixed fractions of their planned run; a forecast table here cut them at fractions of their own
time-to-target, which leaks the answer, and was removed):

* **Pruning** — TPE over the grid knobs (categorical params), ``--trials`` trials per study,
  ``--seeds`` seeds, with (a) no pruning, (b) MedianPruner, (c) SuccessiveHalvingPruner and
  HyperbandPruner, (d) convtune's TimeToTargetPruner. Optuna's pruners get their intended use:
  the trial reports the gap to the target (a minimised quantity) with the evaluation index as
  the step (evaluations are equally spaced in samples); convtune's pruner gets the metric with
  the samples seen as the step and the trial's LR schedule as the ``lr_schedule`` user attr.
  A trial stops when the target is reached (value: measured time-to-target) or when pruned.
  ``outcome=complete`` ends a stopped trial as convtune's outcome rule says (COMPLETE, value =
  the forecast estimate when finite and beyond the cost seen, else a penalty growing with the
  final gap); ``outcome=pruned`` ends it in Optuna's PRUNED state. Each study's pick is the
  reached trial with the smallest measured time-to-target; regret is the pick's true
  time-to-target against the grid's best.

While recording is partial, a suggested grid point that has no curve yet is replayed with the
nearest recorded one (fewest differing knobs); a grid point recorded twice uses its last curve.

Usage::

    python benchmarks/pruning.py --workload charlm                 # target val_loss<=2.3
    python benchmarks/pruning.py --workload digits --seeds 10      # target accuracy>=0.95
"""

from __future__ import annotations

import argparse
import math
import statistics
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import optuna

sys.path.insert(0, str(Path(__file__).resolve().parent))
from record_curves import DATA, DEFAULT_TARGETS, SCHEDULES, WORKLOADS, load_curves  # noqa: E402

from convtune.config.target import Target  # noqa: E402
from convtune.curves import (  # noqa: E402
    LRSchedule,
    forecast_time_to_target,
    time_to_target,
)
from convtune.pruners import TimeToTargetPruner  # noqa: E402

KNOBS = ("optimizer", "lr_level", "batch", "schedule", "warmup_steps")


# ---- the recorded grid ------------------------------------------------------------------------


@dataclass
class Curve:
    name: str
    knobs: dict[str, Any]
    samples: np.ndarray
    metric: np.ndarray
    schedule: LRSchedule
    schedule_dict: dict[str, Any]
    ttt: float  # true (measured) time-to-target over the whole recorded run; inf: never

    @property
    def cyclic(self) -> bool:
        return self.knobs["schedule"] == "cyclic"


def _knob_key(knobs: dict[str, Any]) -> tuple[Any, ...]:
    batch = f"{knobs['micro_batch_size']}x{knobs['grad_accum_steps']}"
    warmup = 0 if knobs["schedule"] == "onecycle" else knobs["warmup_steps"]
    return (knobs["optimizer"], knobs["lr_level"], batch, knobs["schedule"], warmup)


def load_grid(
    workload: str, target: Target, path: Path = DATA, seed: int = 0
) -> dict[tuple[Any, ...], Curve]:
    """The recorded curve of every grid point, for one training seed (0: the original grid)."""
    return grid_of(load_curves(path, workload, seed), target)


def grid_of(runs: list[dict[str, Any]], target: Target) -> dict[tuple[Any, ...], Curve]:
    """Recorded runs (``record_curves.load_curves``) as curves keyed by grid point."""
    grid: dict[tuple[Any, ...], Curve] = {}
    for run in runs:
        ev = run["evals"]
        samples = np.asarray(ev["samples"], dtype=float)
        metric = np.asarray([math.nan if v is None else v for v in ev["metric"]], dtype=float)
        key = _knob_key(run["knobs"])
        grid[key] = Curve(
            name="/".join(str(k) for k in key),
            knobs=run["knobs"],
            samples=samples,
            metric=metric,
            schedule=LRSchedule.from_dict(run["schedule"]),
            schedule_dict=run["schedule"],
            ttt=time_to_target(samples, metric, target),
        )
    return grid


def _lookup(grid: dict[tuple[Any, ...], Curve], key: tuple[Any, ...]) -> Curve:
    """The recorded curve of ``key``; while recording is partial, the nearest recorded one."""
    if key in grid:
        return grid[key]
    return grid[min(grid, key=lambda k: (sum(a != b for a, b in zip(k, key, strict=True)), str(k)))]


# ---- one replayed study -----------------------------------------------------------------------


@dataclass
class StudyResult:
    spent: float = 0.0
    pick: Curve | None = None
    cost_to_near_best: float = math.inf
    n_stopped: int = 0
    n_repeats: int = 0  # trials that repeated a finished trial's configuration: not trained again
    n_cyclic: int = 0
    n_cyclic_stopped: int = 0
    bad_stops: int = 0  # stopped trials whose true time-to-target beat the incumbent then
    bad_cyclic_stops: int = 0
    trial_curves: list[str] = field(default_factory=list)
    # Samples spent by trials that reached the target / were stopped / ran their whole budget.
    spent_by_end: dict[str, float] = field(
        default_factory=lambda: {"reached": 0.0, "stopped": 0.0, "budget": 0.0}
    )


class OraclePruner(optuna.pruners.BasePruner):
    """A floor for the table: knows each trial's true time-to-target (user attr ``true_ttt``).

    After ``n_warmup`` reports it stops every trial that will not reach the target within its
    budget or will not beat the best measured one, which no real pruner can do; what it spends
    is about the least a pruner with that warm-up could.
    """

    def __init__(self, n_warmup: int = 2) -> None:  # as TimeToTargetPruner
        self._n_warmup = n_warmup

    def prune(self, study: optuna.Study, trial: optuna.trial.FrozenTrial) -> bool:
        if len(trial.intermediate_values) < self._n_warmup:
            return False
        done = study.get_trials(deepcopy=False, states=(optuna.trial.TrialState.COMPLETE,))
        measured = [t.value for t in done if t.user_attrs.get("status") == "reached" and t.value is not None]
        return trial.user_attrs["true_ttt"] >= min(measured, default=math.inf)


def penalty(budget: float, gap: float) -> float:
    base = 1e3 * budget
    return base * (1.0 + min(gap if math.isfinite(gap) else 1e6, 1e6))


def make_pruner(name: str, target: Target, budget: float, n_evals: int) -> optuna.pruners.BasePruner:
    """The pruner a method names; ``ttt:margin=0.1+n_warmup_reports=2`` is a sweep point."""
    if name.startswith("ttt:"):
        options: dict[str, Any] = {k: float(v) for k, v in (kv.split("=") for kv in name[4:].split("+"))}
        for key in ("n_warmup_reports", "prior_trials"):
            if key in options:
                options[key] = int(options[key])
        return TimeToTargetPruner(target, max_cost=budget, **options)
    return {
        "none": lambda: optuna.pruners.NopPruner(),
        "median": lambda: optuna.pruners.MedianPruner(n_startup_trials=5, n_warmup_steps=2),
        "sha": lambda: optuna.pruners.SuccessiveHalvingPruner(),
        "hyperband": lambda: optuna.pruners.HyperbandPruner(min_resource=1, max_resource=n_evals),
        "ttt": lambda: TimeToTargetPruner(target, max_cost=budget),
        "ttt-blind": lambda: TimeToTargetPruner(target, max_cost=budget, margin=0.25),
        "ttt-m25": lambda: TimeToTargetPruner(target, max_cost=budget, margin=0.25),
        "ttt-field": lambda: TimeToTargetPruner(target, max_cost=budget, margin=0.25, field_quantile=0.2),
        "ttt-halving": lambda: TimeToTargetPruner(
            target, max_cost=budget, margin=0.25, halving_quantile=1 / 3
        ),
        "oracle": lambda: OraclePruner(),
    }[name]()


def replay_study(
    grid: dict[tuple[Any, ...], Curve],
    target: Target,
    budget: float,
    pruner_name: str,
    outcome: str,
    seed: int,
    n_trials: int,
    best_ttt: float,
    repeats: str = "reuse",
) -> StudyResult:
    n_evals = max(c.samples.size for c in grid.values())
    convtune_style = pruner_name.startswith("ttt")
    pruner = make_pruner(pruner_name, target, budget, n_evals)
    sampler = optuna.samplers.TPESampler(seed=seed)
    # A fixed name: HyperbandPruner assigns brackets by hashing it with the trial number.
    name = f"replay-{pruner_name}-{outcome}-{seed}"
    study = optuna.create_study(study_name=name, direction="minimize", sampler=sampler, pruner=pruner)
    choices = {
        "optimizer": ["adamw", "lion"],
        "lr_level": [0, 1, 2],
        "batch": sorted({k[2] for k in grid}, key=lambda b: [int(x) for x in b.split("x")]),
        "schedule": SCHEDULES,
        "warmup_steps": sorted({k[4] for k in grid}),
    }
    res = StudyResult()
    incumbent = [math.inf]

    def objective(trial: optuna.Trial) -> float:
        key = tuple(trial.suggest_categorical(k, choices[k]) for k in KNOBS)
        if repeats == "reuse":
            # As convtune does (convtune.study: a configuration trained before with the same
            # seed is not trained again; the replay is deterministic like a seeded run), for
            # every pruner alike: the repeat gets the earlier trial's outcome at no cost.
            finished = (optuna.trial.TrialState.COMPLETE, optuna.trial.TrialState.PRUNED)
            for twin in study.get_trials(deepcopy=False, states=finished):
                if twin.params == trial.params and twin.user_attrs.get("status") != "duplicate":
                    res.n_repeats += 1
                    if twin.state == optuna.trial.TrialState.PRUNED:
                        raise optuna.TrialPruned()
                    trial.set_user_attr("status", "duplicate")
                    return float(twin.value)  # type: ignore[arg-type]
        before = res.spent
        try:
            value, end = walk(trial, key)
        except optuna.TrialPruned:
            res.spent_by_end["stopped"] += res.spent - before
            raise
        res.spent_by_end[end] += res.spent - before
        return value

    def walk(trial: optuna.Trial, key: tuple[Any, ...]) -> tuple[float, str]:
        curve = _lookup(grid, key)
        res.trial_curves.append(curve.name)
        res.n_cyclic += curve.cyclic
        if convtune_style and pruner_name != "ttt-blind":  # the blind one gets no schedule
            trial.set_user_attr("lr_schedule", curve.schedule_dict)
        if pruner_name == "oracle":
            trial.set_user_attr("true_ttt", curve.ttt)
        for i, (samples, value) in enumerate(zip(curve.samples, curve.metric, strict=True)):
            res.spent += samples - (curve.samples[i - 1] if i else 0.0)
            seen_c, seen_v = curve.samples[: i + 1], curve.metric[: i + 1]
            if not math.isfinite(value):  # the engine stops a diverged run at once
                return penalty(budget, math.inf), "stopped"
            if convtune_style:
                trial.report(float(value), step=int(samples))
            else:
                trial.report(target.gap(float(value)), step=i)
            if target.is_reached(value):
                ttt = time_to_target(seen_c, seen_v, target)
                if ttt <= 1.1 * best_ttt and not math.isfinite(res.cost_to_near_best):
                    res.cost_to_near_best = res.spent
                if ttt < incumbent[0]:
                    incumbent[0] = ttt
                    res.pick = curve
                trial.set_user_attr("status", "reached")
                return ttt, "reached"
            if trial.should_prune():
                res.n_stopped += 1
                res.n_cyclic_stopped += curve.cyclic
                if curve.ttt < incumbent[0]:
                    res.bad_stops += 1
                    res.bad_cyclic_stops += curve.cyclic
                if outcome == "pruned":
                    raise optuna.TrialPruned()
                return stopped_value(trial, curve, i), "stopped"
        return stopped_value(trial, curve, curve.samples.size - 1), "budget"

    def stopped_value(trial: optuna.Trial, curve: Curve, i: int) -> float:
        seen_c, seen_v = curve.samples[: i + 1], curve.metric[: i + 1]
        pruned = i < curve.samples.size - 1
        trial.set_user_attr("status", "stopped" if pruned else "budget")  # as convtune does
        trial.set_user_attr("extrapolated", True)
        if isinstance(pruner, OraclePruner):
            return curve.ttt if math.isfinite(curve.ttt) else penalty(budget, gap_at(seen_v))
        if isinstance(pruner, TimeToTargetPruner):
            frozen = study._storage.get_trial(trial._trial_id)
            fc = pruner.decide(study, frozen).forecast or pruner.forecast_trial(study, frozen)
        else:
            fc = forecast_time_to_target(seen_c, seen_v, target, schedule=curve.schedule)
        est = fc.estimate
        if math.isfinite(est) and est > seen_c[-1] and est < 1e3 * budget:
            return est
        return penalty(budget, gap_at(seen_v))

    def gap_at(seen_v: np.ndarray) -> float:
        finite = seen_v[np.isfinite(seen_v)]
        return target.gap(float(finite[-1])) if finite.size else math.inf

    study.optimize(objective, n_trials=n_trials)
    return res


# ---- printing ---------------------------------------------------------------------------------


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


METHODS: list[tuple[str, str]] = [
    ("none", "complete"),
    ("median", "pruned"),
    ("median", "complete"),
    ("sha", "pruned"),
    ("sha", "complete"),
    ("hyperband", "pruned"),
    ("hyperband", "complete"),
    ("ttt", "complete"),
    ("ttt", "pruned"),
    ("ttt-m25", "complete"),
    ("ttt-field", "complete"),
    ("ttt-blind", "complete"),
    ("oracle", "complete"),
]


def pruning_table(
    grid: dict[tuple[Any, ...], Curve],
    target: Target,
    budget: float,
    seeds: int,
    n_trials: int,
    methods: list[tuple[str, str]],
    progress: Callable[[str], None] = lambda s: None,
    repeats: str = "reuse",
) -> list[dict[str, Any]]:
    best = min(c.ttt for c in grid.values())
    rows = []
    base_cost = None
    median_cost = 0.0
    for name, outcome in methods:
        results = []
        t0 = time.perf_counter()
        for seed in range(seeds):
            results.append(replay_study(grid, target, budget, name, outcome, seed, n_trials, best, repeats))
        wall = time.perf_counter() - t0
        progress(f"{name}/{outcome}: {wall:.1f} s")
        cost = statistics.mean(r.spent for r in results)
        if base_cost is None:
            base_cost = cost
        if (name, outcome) == ("median", "pruned"):
            median_cost = cost
        regrets = [(r.pick.ttt / best - 1.0) if r.pick else math.inf for r in results]
        found = [r.cost_to_near_best for r in results]
        rows.append(
            {
                "pruner": name,
                "stopped trials end": outcome.upper() if name != "none" else "–",
                "cost (samples)": cost,
                "cost / none": cost / base_cost,
                "cost / median": cost / median_cost if median_cost else math.nan,
                "median regret": statistics.median(regrets),
                "mean regret": statistics.mean(min(r, 10.0) for r in regrets),
                "pick ≤10%": float(np.mean([r <= 0.1 for r in regrets])),
                "cost to ≤10%": statistics.median(found),
                "stopped": statistics.mean(r.n_stopped for r in results),
                "repeats": statistics.mean(r.n_repeats for r in results),
                "cost: reached/stopped/budget": "/".join(
                    f"{statistics.mean(r.spent_by_end[e] for r in results) / 1e3:.0f}k"
                    for e in ("reached", "stopped", "budget")
                ),
                "cyclic stopped": f"{sum(r.n_cyclic_stopped for r in results)}/{sum(r.n_cyclic for r in results)}",
                "bad stops (cyclic)": f"{sum(r.bad_stops for r in results)} ({sum(r.bad_cyclic_stops for r in results)})",
            }
        )
    return rows


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--workload", choices=sorted(WORKLOADS), default="charlm")
    parser.add_argument("--target", default=None, help="default: " + str(DEFAULT_TARGETS))
    parser.add_argument("--seeds", type=int, default=10)
    parser.add_argument("--trials", type=int, default=40)
    parser.add_argument("--only", choices=["pruning"], default=None)
    parser.add_argument(
        "--methods",
        default=None,
        help="comma list of pruner/outcome, e.g. ttt/complete; a TimeToTargetPruner sweep point is "
        "ttt:margin=0.1+n_warmup_reports=2/complete",
    )
    parser.add_argument(
        "--repeats",
        choices=["reuse", "train"],
        default="reuse",
        help="a trial that repeats a finished trial's configuration: reuse its outcome (as convtune "
        "does, default) or train it again (as a plain Optuna study does)",
    )
    parser.add_argument("--data", type=Path, default=DATA)
    args = parser.parse_args(argv)
    optuna.logging.set_verbosity(optuna.logging.WARNING)

    target = Target.parse(args.target or DEFAULT_TARGETS[args.workload])
    budget = float(WORKLOADS[args.workload]["horizon"])
    grid = load_grid(args.workload, target, args.data)
    if not grid:
        print(f"no recorded {args.workload} curves in {args.data}; run benchmarks/record_curves.py")
        return 1
    n_reach = sum(math.isfinite(c.ttt) for c in grid.values())
    best = min(grid.values(), key=lambda c: c.ttt)
    print(
        f"{args.workload}: {len(grid)} recorded curves, target {target}, budget {budget:.0f} samples; "
        f"{n_reach} reach it; best {best.name} at {best.ttt:.0f} samples"
    )
    by_sched = {}
    for s in SCHEDULES:
        ttts = [c.ttt for c in grid.values() if c.knobs["schedule"] == s]
        by_sched[s] = (
            f"{sum(map(math.isfinite, ttts))}/{len(ttts)} reach, best {min(ttts, default=math.inf):.0f}"
        )
    print("by schedule:", by_sched)

    if args.only in (None, "pruning"):
        methods = METHODS
        if args.methods:
            methods = [tuple(m.split("/")) for m in args.methods.split(",")]  # type: ignore[misc]
        rows = pruning_table(
            grid,
            target,
            budget,
            args.seeds,
            args.trials,
            methods,
            lambda s: print("  " + s, flush=True),
            args.repeats,
        )
        print_table(rows, f"Pruning: TPE, {args.trials} trials × {args.seeds} seeds (means over seeds)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
