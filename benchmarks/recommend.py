"""How good is ``convtune.recommend`` after a short study? Replayed on the recorded curve grid.

Each study is a real Optuna study with convtune's sampler (TPE, multivariate, grouped), its
pruner (``make_pruner``: TimeToTargetPruner with the margin ``study run`` uses) and its outcome
attributes; a trial's training is a walk along the curve that ``benchmarks/record_curves.py``
recorded for its grid point (cost in samples), so a study costs seconds. The space searches
``peak_lr`` continuously (one log range over the grid's LRs of both optimizers, or with
``--lr-range per-optimizer`` each optimizer's own), so the recommender can land between grid
points; a trial runs, and a recommendation is scored at, the nearest grid
point (LR level nearest in log for that optimizer; batch 32×2 maps to 64×1, the same samples
per step).

Two kinds of study: K trials (``--trials``), or as many trials as a budget of N full planned
runs pays for (``--budgets``; the trial that would overspend stops inside it, with a forecast).
Per study and seed: the true time-to-target of the recommended configuration and of the
study's best measured trial against the grid's best (regret), and the tuning cost (samples all
its trials spent) as a multiple of one full planned run (the recipe's whole schedule: the
recorded horizon, e.g. digits 24,576 samples) and of the grid best's time-to-target.

With ``--noisy`` the replay uses the grid recorded again with other training seeds
(``benchmarks/data/curves_seeds.jsonl``, see ``record_curves.py --seeds``): each trial replays one
seed's curve of its grid point, drawn at random as a real run's seed-to-seed variation falls,
and every configuration (the recommendation, the measured best, the grid's best) is scored by
its mean time-to-target over the seeds. A grid point recorded with seed 0 only replays and
scores that curve.

Usage::

    python benchmarks/recommend.py                          # digits, accuracy>=0.95, 10 seeds
    python benchmarks/recommend.py --workload charlm --seeds 20   # val_loss<=2.3
    python benchmarks/recommend.py --trials 12 --budgets 3
    python benchmarks/recommend.py --seeds 100 --trials --budgets 3 --pruner time_to_target_field \
        --lr-range per-optimizer
    python benchmarks/recommend.py --noisy --seeds 100 --trials --budgets 3
"""

from __future__ import annotations

import argparse
import math
import statistics
import sys
import time
import warnings
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import optuna

sys.path.insert(0, str(Path(__file__).resolve().parent))
from pruning import Curve, load_grid  # noqa: E402
from record_curves import DATA, DEFAULT_TARGETS, WORKLOADS, load_curves  # noqa: E402

SEED_DATA = DATA.with_name("curves_seeds.jsonl")

from convtune.curves import time_to_target  # noqa: E402
from convtune.scaling import recommend  # noqa: E402
from convtune.spec import StudySpec  # noqa: E402
from convtune.study import SPEC_ATTR, finished_twin, make_pruner, make_sampler  # noqa: E402
from convtune.target import Target  # noqa: E402


def space_for(workload: str, lr_range: str = "shared") -> dict[str, Any]:
    """The benchmark's space: the grid's knobs, with ``peak_lr`` one log range over both
    optimizers' LRs (``shared``) or each optimizer's own (``per-optimizer``)."""
    w = WORKLOADS[workload]
    lrs = [lr for opt in w["lr"].values() for lr in opt]
    space: dict[str, Any] = {
        "peak_lr": {"low": min(lrs), "high": max(lrs), "log": True},
        "warmup_steps": {"choices": sorted(set(w["warmup"]))},
        "horizon_samples": w["horizon"],
        "schedule": {"choices": ["cosine", "constant", "cyclic", "onecycle"]},
        "micro_batch_size": {"choices": sorted({mb for mb, _ in w["batch"]})},
        "grad_accum_steps": {"choices": sorted({acc for _, acc in w["batch"]})},
        "optimizer": {"choices": list(w["lr"])},
    }
    if lr_range == "per-optimizer":
        del space["peak_lr"]
        for opt, levels in w["lr"].items():
            space["optimizer"][opt] = {"peak_lr": {"low": min(levels), "high": max(levels), "log": True}}
    return space


def grid_key(workload: str, recipe: dict[str, Any], grid: dict[tuple[Any, ...], Curve]) -> tuple[Any, ...]:
    """The grid point nearest to a recipe (LR level nearest in log for its optimizer)."""
    w = WORKLOADS[workload]
    opt = recipe["optimizer"]
    levels = w["lr"][opt]
    level = min(range(len(levels)), key=lambda i: abs(math.log(levels[i] / recipe["peak_lr"])))
    batches = {mb * acc: f"{mb}x{acc}" for mb, acc in w["batch"]}
    eff = recipe["micro_batch_size"] * recipe["grad_accum_steps"]
    batch = batches.get(eff) or batches[min(batches, key=lambda b: abs(math.log(b / eff)))]
    warmup = 0 if recipe["schedule"] == "onecycle" else recipe["warmup_steps"]
    return (opt, level, batch, recipe["schedule"], warmup)


@dataclass
class Replayed:
    """One replayed study: the Optuna study, its spec, and the samples its trials spent."""

    study: optuna.Study
    spec: StudySpec
    spent: float


def replay(
    workload: str,
    grid: dict[tuple[Any, ...], Curve],
    target: Target,
    seed: int,
    *,
    n_trials: int | None = None,
    budget_runs: float | None = None,
    sampler: str = "tpe",
    pruner: str = "time_to_target",
    lr_range: str = "shared",
    duplicate_tolerance: float | None = None,
    other_seeds: list[dict[tuple[Any, ...], Curve]] | None = None,
) -> Replayed:
    """A study of ``n_trials`` trials, or of as many as ``budget_runs`` full planned runs pay for.

    With a budget, the trial that would overspend it stops at its last evaluation inside it (it
    ends like a pruned trial, with a forecast), and the study ends there. With ``other_seeds``
    (the grid recorded with other training seeds) a trial replays the curve of a seed drawn at
    random among those that recorded its grid point, seed 0 included.
    """
    horizon = float(WORKLOADS[workload]["horizon"])
    spec = StudySpec.from_dict(
        {
            "workload": workload,
            "space": space_for(workload, lr_range),
            "target": str(target),
            "cost": "samples",
            "max_cost": horizon,
            "seed": seed,
            "sampler": sampler,
            "pruner": pruner,
        }
        | ({} if duplicate_tolerance is None else {"duplicate_tolerance": duplicate_tolerance})
    )
    space = spec.search_space
    pruner = make_pruner(spec)  # what `convtune study run` uses (TimeToTargetPruner, its margin)
    study = optuna.create_study(direction="minimize", sampler=make_sampler(spec), pruner=pruner)
    study.set_user_attr(SPEC_ATTR, spec.to_dict())
    cap = math.inf if budget_runs is None else budget_runs * horizon
    spent = [0.0]

    def objective(trial: optuna.Trial) -> float:
        recipe = space.recipe(trial).to_dict()
        key = grid_key(workload, recipe, grid)
        curves = [grid[key]] + [g[key] for g in other_seeds or [] if key in g]
        curve = curves[int(np.random.default_rng([seed, trial.number]).integers(len(curves)))]
        levels = WORKLOADS[workload]["lr"][key[0]]
        recipe["peak_lr"] = levels[key[1]]  # what ran: the grid point's LR
        trial.set_user_attr("recipe", recipe)
        trial.set_user_attr("effective_batch_size", recipe["effective_batch_size"])
        trial.set_user_attr("lr_schedule", curve.schedule_dict)
        # What `study run` does: (nearly) the same configuration is not trained again.
        twin = finished_twin(trial, spec.duplicate_tolerance)
        if twin is not None:
            trial.set_user_attr("status", "duplicate")
            trial.set_user_attr("duplicate_of", twin.number)
            return float(twin.value)  # type: ignore[arg-type]
        seen = 0
        for i, (samples, value) in enumerate(zip(curve.samples, curve.metric, strict=True)):
            step = samples - (curve.samples[i - 1] if i else 0.0)
            if spent[0] + step > cap:
                break  # the study's budget is spent
            spent[0] += step
            seen = i + 1
            if not math.isfinite(value):
                trial.set_user_attr("status", "diverged")
                return 1e3 * horizon * 1e6
            trial.report(float(value), step=int(samples))
            if target.is_reached(value):
                ttt = time_to_target(curve.samples[:seen], curve.metric[:seen], target)
                trial.set_user_attr("status", "reached")
                trial.set_user_attr("time_to_target", ttt)
                return ttt
            if trial.should_prune():
                break
        if seen == 0:
            raise optuna.TrialPruned()  # not one evaluation fit in what was left of the budget
        frozen = study._storage.get_trial(trial._trial_id)
        forecast = pruner.decide(study, frozen).forecast or pruner.forecast_trial(study, frozen)
        for k, v in forecast.to_attrs().items():
            trial.set_user_attr(k, v)
        last = float(curve.samples[seen - 1])
        est = forecast.estimate
        trial.set_user_attr("status", "stopped" if seen < curve.samples.size else "budget")
        if math.isfinite(est) and last < est < 1e3 * horizon:
            trial.set_user_attr("predicted_time_to_target", est)
            return est
        finite = curve.metric[:seen][np.isfinite(curve.metric[:seen])]
        gap = target.gap(float(finite[-1])) if finite.size else 1e6
        return 1e3 * horizon * (1 + min(gap, 1e6))

    def out_of_budget(study: optuna.Study, _trial: optuna.trial.FrozenTrial) -> None:
        if spent[0] >= cap - float(WORKLOADS[workload]["eval_every"]):
            study.stop()

    if budget_runs is None:
        study.optimize(objective, n_trials=n_trials)
    else:
        study.optimize(objective, n_trials=n_trials or 1000, callbacks=[out_of_budget])
    return Replayed(study, spec, spent[0])


def true_times(
    grid: dict[tuple[Any, ...], Curve], other_seeds: list[dict[tuple[Any, ...], Curve]] | None = None
) -> dict[tuple[Any, ...], float]:
    """Each grid point's true time-to-target: its mean over every seed that recorded it
    (``inf`` if one of them never reached the target); seed 0's alone without ``other_seeds``."""
    return {
        key: float(np.mean([curve.ttt] + [g[key].ttt for g in other_seeds or [] if key in g]))
        for key, curve in grid.items()
    }


def load_other_seeds(workload: str, target: Target) -> list[dict[tuple[Any, ...], Curve]]:
    """The grid as recorded with each training seed other than 0 (``SEED_DATA``)."""
    seeds = sorted({run["knobs"].get("seed", 0) for run in load_curves(SEED_DATA, workload)} - {0})
    return [load_grid(workload, target, SEED_DATA, seed) for seed in seeds]


def score(
    workload: str,
    grid: dict[tuple[Any, ...], Curve],
    run: Replayed,
    truth: dict[tuple[Any, ...], float] | None = None,
    **recommend_kwargs: Any,
) -> dict[str, Any]:
    """True time-to-target (``truth``, default seed 0's curves) of the study's best measured
    trial and of its recommendation."""
    truth = truth or true_times(grid)
    reached = [t for t in run.study.trials if t.user_attrs.get("status") == "reached"]
    fastest = min(reached, key=lambda t: t.value, default=None)  # type: ignore[arg-type, return-value]
    measured = (
        truth[grid_key(workload, fastest.user_attrs["recipe"], grid)] if fastest is not None else math.inf
    )
    started = time.perf_counter()
    recommend_kwargs.setdefault("n_candidates", 1000)
    try:
        rec = recommend(run.study, run.spec, **recommend_kwargs)
        rec_key = grid_key(workload, rec.recipe.to_dict(), grid)
        rec_ttt = truth[rec_key]
        ran = {
            grid_key(workload, t.user_attrs["recipe"], grid)
            for t in run.study.trials
            if "recipe" in t.user_attrs
        }
        between = rec_key not in ran  # a grid point no trial of the study ran
        predicted, is_measured = rec.time_to_target, rec.measured_trial is not None
    except ValueError:  # no trial reached the target: the study recommends nothing
        rec_ttt, between, predicted, is_measured = math.inf, False, math.nan, False
    return {
        "spent": run.spent,
        "n_trials": len(run.study.trials),
        "measured": measured,
        "recommended": rec_ttt,
        "predicted": predicted,
        "between": between,
        "is_measured": is_measured,
        "rec_seconds": time.perf_counter() - started,
    }


HEADER = (
    "| study | trials | recommended: median regret | within 10% | measured best: median regret | within 10% "
    "| rec. = a measured trial | rec. at a grid point no trial ran | cost (× full run) | cost (× best's time-to-target) |"
)


def row(label: str, rows: list[dict[str, Any]], best: float, horizon: float) -> str:
    rec = [r["recommended"] / best - 1 for r in rows]
    meas = [r["measured"] / best - 1 for r in rows]
    full = [r["spent"] / horizon for r in rows]
    ttt = [r["spent"] / best for r in rows]

    def share(xs: list[float]) -> str:
        return f"{sum(x <= 0.1 for x in xs)}/{len(xs)}"

    def pct(xs: list[float]) -> str:
        m = statistics.median(xs)
        return f"{m:.1%}" if math.isfinite(m) else "none reached"

    trials = [r["n_trials"] for r in rows]
    n = f"{min(trials)}–{max(trials)}" if min(trials) != max(trials) else str(trials[0])
    return (
        f"| {label} | {n} | {pct(rec)} | {share(rec)} | {pct(meas)} | {share(meas)} "
        f"| {sum(r['is_measured'] for r in rows)}/{len(rows)} | {sum(r['between'] for r in rows)}/{len(rows)} "
        f"| {statistics.median(full):.2f} (max {max(full):.2f}) | {statistics.median(ttt):.1f} |"
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--workload", default="digits", choices=sorted(WORKLOADS))
    parser.add_argument("--target", default=None)
    parser.add_argument("--trials", type=int, nargs="*", default=[8, 16, 24], help="studies of K trials")
    parser.add_argument(
        "--budgets", type=float, nargs="*", default=[1, 2, 3], help="studies capped at this many full runs"
    )
    parser.add_argument("--seeds", type=int, default=10)
    parser.add_argument(
        "--sampler", default="tpe", choices=["tpe", "gp", "random"], help="the study's sampler"
    )
    parser.add_argument(
        "--pruner",
        default="time_to_target",
        choices=["time_to_target", "time_to_target_field", "time_to_target_halving"],
        help="the spec's pruner",
    )
    parser.add_argument(
        "--lr-range",
        default="shared",
        choices=["shared", "per-optimizer"],
        help="peak_lr: one log range over both optimizers' grid LRs, or each optimizer's own",
    )
    parser.add_argument(
        "--duplicate-tolerance",
        type=float,
        default=None,
        help="the spec's duplicate_tolerance (default: the spec's default; 0: exact repeats only)",
    )
    parser.add_argument(
        "--noisy",
        action="store_true",
        help=f"trials replay a random training seed's curve; score by the mean over seeds ({SEED_DATA.name})",
    )
    args = parser.parse_args(argv)
    warnings.filterwarnings("ignore")
    optuna.logging.set_verbosity(optuna.logging.WARNING)
    target = Target.parse(args.target or DEFAULT_TARGETS[args.workload])
    grid = load_grid(args.workload, target, DATA)
    if not grid:
        print(f"no recorded curves for {args.workload} in {DATA}: run benchmarks/record_curves.py first")
        return 1
    other_seeds = load_other_seeds(args.workload, target) if args.noisy else None
    if args.noisy and not other_seeds:
        print(f"no other seeds recorded for {args.workload} in {SEED_DATA}: see record_curves.py --seeds")
        return 1
    truth = true_times(grid, other_seeds)
    best = min(truth.values())
    horizon = float(WORKLOADS[args.workload]["horizon"])
    n_reach = sum(math.isfinite(t) for t in truth.values())
    if other_seeds:
        seeded = [key for key in grid if all(key in g for g in other_seeds)]
        spreads = [
            float(np.std(np.log(times)))
            for key in seeded
            if np.all(np.isfinite(times := [grid[key].ttt] + [g[key].ttt for g in other_seeds]))
        ]
        print(
            f"noisy replay: {len(seeded)} grid points recorded with {len(other_seeds) + 1} seeds (a trial "
            f"replays one at random; scored by their mean), the rest with seed 0 only; seed-to-seed sd "
            f"of log time-to-target: median {statistics.median(spreads):.3f} over the {len(spreads)} "
            f"that reached with every seed"
        )
    print(
        f"{args.workload}, target {target}: {len(grid)} grid points, {n_reach} reach it, "
        f"{sum(t <= 1.1 * best for t in truth.values())} within 10% of the best; grid best "
        f"{best:.0f} samples; one full run (the planned schedule) = {horizon:.0f} samples = "
        f"{horizon / best:.1f}× the best's time-to-target"
    )
    print(HEADER)
    print("|" + "---|" * HEADER.count(" | ") + "---|")
    studies = [(f"K = {k}", {"n_trials": k}) for k in args.trials]
    studies += [(f"budget {b:g} full runs", {"budget_runs": b}) for b in args.budgets]
    for label, how in studies:
        rows = []
        for seed in range(args.seeds):
            run = replay(
                args.workload,
                grid,
                target,
                seed,
                sampler=args.sampler,
                pruner=args.pruner,
                lr_range=args.lr_range,
                duplicate_tolerance=args.duplicate_tolerance,
                other_seeds=other_seeds,
                **how,
            )
            rows.append(score(args.workload, grid, run, truth))
        print(row(label, rows, best, horizon))
        sys.stdout.flush()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
