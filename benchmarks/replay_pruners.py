"""Pruners on recorded grids convtune was not tuned on: tuner replays, each workload held out.

Every study runs through :mod:`convtune.replay` (the shipped objective, sampler and pruners over
recorded curves); this script only picks each workload's target, fans the studies out over
processes, keeps their rows in a results file (so a run resumes) and prints the tables.

* **Target** per workload, fixed before any tuner runs and the same for all: the level that
  ``--reach`` (30%) of the grid's complete runs reach at their best (a quantile of the best
  metric, the header's direction), to 3 significant digits.
* **Methods**: convtune's TPE with no pruner, with ``time_to_target`` at each of ``SETTINGS``; Optuna's
  TPE with defaults; convtune's TPE with the spec's ``pruner: median`` and ``pruner: hyperband``
  (Optuna's pruners on the distance to the target; seeded brackets: studies are named by seed). Stopped trials keep a checkpoint and a
  repeat of a stopped configuration resumes it (``replay_study(resume=True)``), for every pruner.
* **exact_margin**: a ``time_to_target`` setting that does not name it runs at 0 (what every
  stored row used); the pruner's default became 0.2 in session 16 (docs/benchmarks.md).
* **Held out**: each workload's studies calibrate their forecasts with a table fitted on the
  other workloads (``--calibration-dir``: ``W.json`` fitted without ``W``), and the pruner
  setting reported for it is chosen on the *other* workloads' replays (the largest-saving one
  that loses at most one seed's hit per workload against no pruning and stops at most epsilon
  of their near-best configurations by a forecast).

Usage::

    python benchmarks/forecast.py --data benchmarks/data/corpus \
        --write-heldout-calibrations benchmarks/data/calibrations_heldout
    python benchmarks/replay_pruners.py --data benchmarks/data/corpus --seeds 20 --budget 20 --jobs 2 \
        --schedules benchmarks/corpus/schedules.py --calibration-dir benchmarks/data/calibrations_heldout \
        --out benchmarks/data/replay_pruners_b20_lowo.jsonl.gz
    python benchmarks/replay_pruners.py --seeds 20 --budget 20 --table-only \
        --out benchmarks/data/replay_pruners_b20_lowo.jsonl.gz
"""

from __future__ import annotations

import argparse
import gzip
import importlib.util
import json
import math
import sys
from collections import Counter, defaultdict
from collections.abc import Sequence
from concurrent.futures import ProcessPoolExecutor, as_completed
from pathlib import Path
from typing import Any

import numpy as np

from convtune.replay import NEAR_BEST, Grid, load_grid, parse_pruner, replay_spec, replay_study

HERE = Path(__file__).resolve().parent
EPSILONS = (0.01, 0.03, 0.05, 0.1)
# The settings of convtune's pruner a fold chooses among, fixed before any of their replays ran:
# epsilon at the default rungs (doubling in cost), and rungs quadrupling in cost, where a trial
# near the incumbent's time faces one decision, not two, so epsilon is not split.
# Last, a second budget for trials behind the finished trials' median at equal cost
# (``epsilon_behind``); its promise is still the first epsilon's.
SETTINGS = tuple(f"time_to_target:epsilon={e}" for e in EPSILONS) + (
    "time_to_target:epsilon=0.03+rung_ratio=4",
    "time_to_target:epsilon=0.1+rung_ratio=4",
    "time_to_target:epsilon=0.01+epsilon_behind=0.1",
    "time_to_target:epsilon=0.01+epsilon_behind=0.3",
)
BASE_SETTINGS = SETTINGS


def with_exact_margin(settings: Sequence[str], margin: float) -> tuple[str, ...]:
    """``settings`` at another ``exact_margin`` (0: as named, what every stored row before
    session 17 ran; ``--exact-margin 0.2`` replays the fold table at the pruner's default)."""
    return tuple(settings) if not margin else tuple(f"{s}+exact_margin={margin:g}" for s in settings)


BASELINES = [("none", "tpe"), ("none", "optuna-tpe"), ("median", "tpe"), ("hyperband", "tpe")]
OPTUNA = ("optuna-tpe/none", "tpe/median", "tpe/hyperband")
# Stops that need no forecast: a trial that diverged, or spent the measured best's time-to-target
# without reaching the target (it cannot become the pick, whatever its configuration).
EXACT = ("diverged", "max-cost", "slower-than-measured-best")


def by_forecast(reason: object) -> bool:
    """Whether a stop reason is a forecast's (anything but the exact stops)."""
    return not str(reason).endswith(EXACT)


def register_schedules(path: str | None) -> None:
    """The corpus's extra schedules (wsd, step, inverse_sqrt) must be registered to replay it."""
    candidates = [Path(path)] if path else [HERE / "corpus" / "schedules.py"]
    for candidate in candidates:
        if candidate.is_file():
            spec = importlib.util.spec_from_file_location("corpus_schedules", candidate)
            module = importlib.util.module_from_spec(spec)  # type: ignore[arg-type]
            spec.loader.exec_module(module)  # type: ignore[union-attr]
            module.register_corpus_schedules()
            return


def calibration_for(args: argparse.Namespace, workload: str) -> str | None:
    """The calibration a replay of ``workload`` uses: its own held-out one from
    ``--calibration-dir`` (fitted on every other workload), else ``--calibration``."""
    if args.calibration_dir is None:
        return args.calibration
    path = Path(args.calibration_dir) / f"{workload}.json"
    if not path.is_file():
        print(
            f"error: {path}: no held-out calibration for {workload}; write them with "
            "python benchmarks/forecast.py --data benchmarks/data/corpus --write-heldout-calibrations DIR",
            file=sys.stderr,
        )
        raise SystemExit(2)
    return str(path)


def read_rows(out: Path) -> list[dict[str, Any]]:
    """The results file's rows (``.gz``: gzip, appended member by member)."""
    if not out.exists():
        return []
    if out.suffix != ".gz":
        return [json.loads(line) for line in out.read_text().splitlines() if line.strip()]
    lines = []
    with gzip.open(out, "rt") as f:
        try:
            lines.extend(f)
        except EOFError:  # a run killed mid-write: only its last row is cut short
            pass
    return [json.loads(line) for line in lines if line.endswith("\n")]


def append_row(out: Path, row: dict[str, Any]) -> None:
    """Append one row; to a ``.gz`` file as a gzip member of its own, so a run killed between
    rows leaves a file that reads whole and resumes."""
    text = json.dumps(_jsonable(row)) + "\n"
    with gzip.open(out, "at") if out.suffix == ".gz" else out.open("a") as sink:
        sink.write(text)


def compact(out: Path) -> None:
    """Rewrite a ``.gz`` results file as one gzip member: appended row by row, each row is a
    member of its own and compresses about 3.5x worse. Written beside it, then moved over it."""
    if out.suffix != ".gz" or not out.exists():
        return
    rows = read_rows(out)
    part = out.with_suffix(".part")
    with gzip.open(part, "wt", compresslevel=9) as sink:
        sink.writelines(json.dumps(_jsonable(row)) + "\n" for row in rows)
    part.replace(out)


def use_calibration(path: str | None) -> None:
    """Forecasts in this process calibrate with the table at ``path`` (``None``: the shipped one).

    The shipped table is fitted on every corpus workload; a replay that reports a workload as
    held out needs one fitted without it (``benchmarks/forecast.py --write-calibration`` over
    the other workloads' files).
    """
    if path is None:
        return
    from convtune.curves import _calibration

    _calibration.DEFAULT_PATH = Path(path)
    _calibration.default_calibration.cache_clear()


def pick_target(grid: Grid, reach: float) -> str:
    """The level ``reach`` of the complete runs attain at their best (no forecaster involved)."""
    maximize = grid.header.get("direction") == "maximize"
    bests = []
    for run in grid.runs:
        finite = run.metric[np.isfinite(run.metric)]
        if run.status == "complete" and finite.size:
            bests.append(float(finite.max() if maximize else finite.min()))
    level = float(np.quantile(bests, 1 - reach if maximize else reach))
    op = ">=" if maximize else "<="
    return f"{grid.metric}{op}{float(f'{level:.3g}')}"


def recorded_pruner(pruner: str) -> str:
    """``pruner`` as the stored rows ran it: convtune's pruner without ``exact_margin`` or
    ``epsilon_behind`` in its name runs it at 0, the only value before sessions 16 and 18 (the
    defaults are now 0.2 and 0.1), so every stored row replays the same and a setting's name
    means one thing in every results file."""
    if not pruner.startswith("time_to_target"):
        return pruner
    for option in ("exact_margin", "epsilon_behind"):
        if option not in pruner:
            pruner += ("+" if ":" in pruner else ":") + f"{option}=0"
    return pruner


def _run_one(job: dict[str, Any]) -> dict[str, Any]:
    import optuna

    optuna.logging.set_verbosity(optuna.logging.ERROR)
    register_schedules(job["schedules"])
    use_calibration(job.get("calibration"))
    grid = load_grid(job["path"])
    spec = replay_spec(grid, {"target": job["target"]})
    pruner: Any = recorded_pruner(job["pruner"])
    if job["pruner"].startswith("oracle:"):
        from oracles import ORACLES  # beside this script

        pruner = ORACLES[job["pruner"].removeprefix("oracle:")]
    row = replay_study(
        grid,
        spec,
        seed=job["seed"],
        budget=job["budget"],
        pruner=pruner,
        sampler=job["sampler"],
        confirm_seeds=job.get("confirm", 0),
        confirm_rounds=job.get("confirm_rounds", 1),
        confirm_stopped=job.get("confirm_stopped", 0),
        audit=job.get("audit", False),
    )
    row["method"] = f"{job['sampler']}/{job['pruner']}{job.get('suffix', '')}"
    return row


def run(args: argparse.Namespace, out: Path) -> None:
    register_schedules(args.schedules)
    done = {
        (row["grid"], row["method"], row["seed"], row["budget"])
        for row in read_rows(out)
        # A row without the confirm step (or, asked for more rounds, without them) does not count.
        if (
            not args.confirm
            or ("confirm_hit" in row and (args.confirm_rounds == 1 or "confirm_first_hit" in row))
        )
        and (not args.audit or "audit" in row)
    }
    methods = list(BASELINES) + [(setting, "tpe") for setting in SETTINGS]
    if args.methods:
        known = {f"{m[1]}/{m[0]}" for m in methods}
        methods = [m for m in methods if f"{m[1]}/{m[0]}" in args.methods]
        # Settings outside SETTINGS (checked against the default, never chosen by a fold).
        methods += [(m.split("/", 1)[1], m.split("/", 1)[0]) for m in args.methods if m not in known]
    jobs = []
    for path in sorted(Path(args.data).glob("*.jsonl*")):
        grid = load_grid(path)
        if args.workloads and grid.workload not in args.workloads:
            continue
        target = pick_target(grid, args.reach)
        for seed in range(args.first_seed, args.seeds):
            for pruner, sampler in methods:
                key = (grid.workload, f"{sampler}/{pruner}{args.method_suffix}", seed, args.budget)
                if key not in done:
                    jobs.append(
                        {
                            "path": str(path),
                            "target": target,
                            "seed": seed,
                            "budget": args.budget,
                            "pruner": pruner,
                            "sampler": sampler,
                            "schedules": args.schedules,
                            "calibration": calibration_for(args, grid.workload),
                            "confirm": args.confirm,
                            "confirm_rounds": args.confirm_rounds,
                            "confirm_stopped": args.confirm_stopped,
                            "audit": args.audit,
                            "suffix": args.method_suffix,
                        }
                    )
    jobs.sort(key=lambda j: (j["seed"], j["path"]))  # all workloads' seed 0 first: tables fill evenly
    print(f"{len(jobs)} studies to run", file=sys.stderr)
    with ProcessPoolExecutor(args.jobs) as pool:
        futures = [pool.submit(_run_one, job) for job in jobs]
        for n, future in enumerate(as_completed(futures), start=1):
            row = future.result()
            append_row(out, row)
            print(f"[{n}/{len(jobs)}] {row['grid']} {row['method']} seed {row['seed']}", file=sys.stderr)
    if jobs:
        compact(out)


AUDIT_QUANTILES = (0.001, 0.01, 0.05, 0.1, 0.5)


def audit_table(rows: Sequence[dict[str, Any]]) -> str:
    """Per workload and method, from rows with ``audit``: of the checks of trials that reached
    (cut at 10/25/50% of their run, forecast as the pruner would), the share whose true crossing
    the forecast had given less than q, with the study's prior and without it. For a calibrated
    forecast the share is q; above it at q = ε (0.01), the pruner's promise is at risk."""
    lines = [
        "| workload | method | prior | reaching checks (near-best) | "
        + " | ".join(f"< {q:g}" for q in AUDIT_QUANTILES)
        + " | near-best < 0.01 | given reach: < 0.5 |",
        "|---|---|---|---|" + "---|" * len(AUDIT_QUANTILES) + "---|---|",
    ]
    groups: dict[tuple[str, str], list[dict[str, Any]]] = defaultdict(list)
    for row in rows:
        if "audit" in row:
            groups[(row["grid"], row["method"])].append(row)
    for (grid, method), group in sorted(groups.items()):
        for variant in ("prior", "no_prior"):
            probs = [p for r in group for p in r["audit"][variant]["probability_by_truth"]]
            near = [
                p
                for r in group
                for p, n in zip(
                    r["audit"][variant]["probability_by_truth"], r["audit"][variant]["near_best"], strict=True
                )
                if n
            ]
            cells = [f"{np.mean([p < q for p in probs]):.1%}" if probs else "–" for q in AUDIT_QUANTILES]
            # Where the crossing fell in the forecast's distribution given that it came within the
            # run (rows from before the reach probability was kept: –). Calibrated: half below 0.5.
            given = [
                p / reach
                for r in group
                for p, reach in zip(
                    r["audit"][variant]["probability_by_truth"],
                    r["audit"][variant].get("probability", []),
                    strict=False,
                )
                if reach > 0
            ]
            lines.append(
                f"| {grid} | {method} | {'with' if variant == 'prior' else 'without'} | {len(probs)} ({len(near)}) | "
                + " | ".join(cells)
                + f" | {sum(p < 0.01 for p in near)} | {f'{np.mean([g < 0.5 for g in given]):.0%}' if given else '–'} |"
            )
    return "\n".join(lines)


def _jsonable(row: dict[str, Any]) -> dict[str, Any]:
    return {k: (None if isinstance(v, float) and not math.isfinite(v) else v) for k, v in row.items()}


# ---- tables -------------------------------------------------------------------------------------


def _cost(rows: Sequence[dict[str, Any]]) -> float:
    """Median cost-to-10% over seeds, a miss counting as infinite."""
    return float(np.median([math.inf if r["cost_to_10"] is None else r["cost_to_10"] for r in rows]))


def summary(rows: list[dict[str, Any]]) -> dict[tuple[str, str], dict[str, Any]]:
    groups: dict[tuple[str, str], list[dict[str, Any]]] = {}
    for row in rows:
        groups.setdefault((row["grid"], row["method"]), []).append(row)
    out = {}
    for key, group in groups.items():
        near = sum(r["near_best_trials"] for r in group)
        out[key] = {
            "seeds": len(group),
            "hits": sum(bool(r["hit"]) for r in group),
            # Studies that trained a near-best configuration at all (whether or not it became the pick).
            "found": sum(r["near_best_trials"] > 0 for r in group),
            "cost": _cost(group),
            "stopped": float(np.mean([r["stopped_share"] for r in group])),
            "near_stopped": sum(r["near_best_stopped_share"] * r["near_best_trials"] for r in group) / near
            if near
            else 0.0,
            "near_forecast_stopped": sum(
                sum(1 for reason in r["near_best_stop_reasons"] if by_forecast(reason)) for r in group
            )
            / near
            if near
            else 0.0,
            # The measure: near-best configurations (per study) of which a trial was
            # stopped by a forecast; None for rows recorded before it was kept.
            "near_config_forecast_stopped": _config_share(group),
            # Counts behind the shares, for the tables: near-best configurations trained, and of
            # them stopped by a forecast / for any reason; near-best trials stopped by a
            # forecast; stops of any kind, and by a forecast.
            **_counts(group),
            "target": group[0]["target"],
            "budget": group[0]["budget"],
            "resumed": float(np.mean([r.get("resumed", 0) for r in group])),
        }
    return out


def _counts(group: Sequence[dict[str, Any]]) -> dict[str, int]:
    configs = [reasons for r in group for reasons in r.get("near_best_configurations", {}).values()]
    stops = [reason for r in group for reason in r["stop_reasons"]]
    return {
        "near_configs": len(configs),
        "near_configs_forecast": sum(any(by_forecast(x) for x in reasons) for reasons in configs),
        "near_configs_any": sum(bool(reasons) for reasons in configs),
        "near_trials": sum(r["near_best_trials"] for r in group),
        "near_trials_forecast": sum(
            sum(1 for x in r["near_best_stop_reasons"] if by_forecast(x)) for r in group
        ),
        "stops": len(stops),
        "stops_forecast": sum(1 for x in stops if by_forecast(x)),
        # Of the near-best configurations stopped by a forecast, those where a run so stopped
        # would itself have reached within 10% of the best (-1: rows recorded before this was
        # kept). The rest judged a run that would have reached later than that, or never.
        "near_configs_forecast_run_near": _run_near(group),
    }


def _run_near(group: Sequence[dict[str, Any]]) -> int:
    if any("near_best_stopped_runs" not in r for r in group):
        return -1
    return sum(
        len(
            {
                config
                for config, reason, ratio in r["near_best_stopped_runs"]
                if by_forecast(reason) and ratio is not None and ratio <= 1 + NEAR_BEST
            }
        )
        for r in group
    )


def _config_share(group: Sequence[dict[str, Any]]) -> float | None:
    if any("near_best_configurations" not in r for r in group):
        return None
    configs = [reasons for r in group for reasons in r["near_best_configurations"].values()]
    stopped = sum(any(by_forecast(reason) for reason in reasons) for reasons in configs)
    return stopped / len(configs) if configs else 0.0


def _near_forecast(s: dict[str, Any]) -> float:
    """Near-best configurations stopped by a forecast (trials, for rows from before that)."""
    share = s.get("near_config_forecast_stopped")
    return s["near_forecast_stopped"] if share is None else share


def epsilon_of(setting: str) -> float:
    """The epsilon a pruner setting (``time_to_target:epsilon=0.03+rung_ratio=4``) names."""
    return parse_pruner(setting)[1]["epsilon"]


def choose_setting(
    table: dict[tuple[str, str], dict[str, Any]], fit_on: Sequence[str], hit_failures: int = 0
) -> tuple[str, bool]:
    """On the fitting workloads: the pruner setting with the lowest geometric-mean cost ratio to
    no pruning among those losing at most one seed's hit per workload and stopping at most
    epsilon of the near-best configurations by a forecast (the issue's measure; trials for rows
    recorded before configurations were kept), and whether one passed: if none does on every
    fitting workload, the safest (the first of ``SETTINGS``, epsilon 0.01) and ``False``. A
    median cost-to-10% that is a miss counts as the whole budget (the study spent it without
    settling on a near-best configuration), so a workload where no pruning misses in most seeds
    still weighs in; ties go to more hits, then the smaller epsilon. Settings not replayed on
    every fitting workload are not candidates.

    ``hit_failures``: on how many fitting workloads a setting may lose more than one seed's hit
    (the tolerant rule, 1; the near-best promise is never relaxed). One workload's hits can turn
    on one lucky recorded seed of a runner-up configuration (see ``docs/benchmarks.md``)."""
    best: tuple[float, int, float, str] | None = None
    for setting in SETTINGS:
        method, eps = f"tpe/{setting}", epsilon_of(setting)
        ratios, hits, ok, lost = [], 0, True, 0
        for w in fit_on:
            base, mine = table.get((w, "tpe/none")), table.get((w, method))
            if base is None:
                continue
            if mine is None:
                ok = False
                break
            # The pruner's promise: at most epsilon of the near-best trials stopped by a forecast.
            ok &= _near_forecast(mine) <= eps
            lost += mine["hits"] < base["hits"] - 1
            hits += mine["hits"]
            budget = float(mine["budget"])
            ratios.append(min(mine["cost"], budget) / min(base["cost"], budget))
        ok &= lost <= hit_failures
        score = float(np.exp(np.mean(np.log(ratios)))) if ratios else math.inf
        if ok and ratios and (best is None or (score, -hits, eps) < best[:3]):
            best = (score, -hits, eps, setting)
    return (best[3], True) if best else (SETTINGS[0], False)


def _setting_name(setting: str) -> str:
    """A setting as the tables show it: ``ε 0.03``, ``ε 0.03, rungs ×4``."""
    options = parse_pruner(setting)[1]
    name = f"ε {options['epsilon']:g}"
    if "rung_ratio" in options:
        name += f", rungs ×{options['rung_ratio']:g}"
    if "epsilon_behind" in options:
        name += f", behind {options['epsilon_behind']:g}"
    if options.get("exact_margin"):
        name += f", margin {options['exact_margin']:g}"
    return name


def _fmt(x: float) -> str:
    return f"{x:.1f}" if math.isfinite(x) else "–"


def tables(rows: list[dict[str, Any]]) -> str:
    table = summary(rows)
    workloads = sorted({w for w, _ in table})
    methods = sorted({m for _, m in table})
    lines = [
        "### All methods (hits within 10% / median cost-to-10% in full runs / trials stopped / "
        "near-best trials stopped, of them by a forecast or equal-cost rule)",
        "",
    ]
    lines.append("| workload | target | " + " | ".join(methods) + " |")
    lines.append("|---|---|" + "---|" * len(methods))
    for w in workloads:
        cells = []
        for m in methods:
            s = table.get((w, m))
            cells.append(
                f"{s['hits']}/{s['seeds']}, {_fmt(s['cost'])}, {s['stopped']:.0%}, "
                f"{s['near_stopped']:.0%} ({s['near_forecast_stopped']:.0%})"
                if s
                else ""
            )
        target = next(s["target"] for (ww, _), s in table.items() if ww == w)
        lines.append(f"| {w} | `{target}` | " + " | ".join(cells) + " |")
    lines += ["", *held_out_table(table, workloads), "", *settings_table(table, workloads)]
    return "\n".join(lines)


BASELINE_NAMES = {
    "tpe/none": "convtune TPE, no pruner",
    "optuna-tpe/none": "Optuna TPE",
    "tpe/median": "TPE + MedianPruner (`pruner: median`)",
    "tpe/hyperband": "TPE + Hyperband (`pruner: hyperband`)",
}


def held_out_table(table: dict[tuple[str, str], dict[str, Any]], workloads: list[str]) -> list[str]:
    """Per workload, the setting chosen on the others and what it did there (the README's table).
    *Found*: studies that trained a near-best configuration at all, whether or not it became the
    pick (a pick is one recorded seed's measurement, so a runner-up's lucky seed can beat it)."""
    lines = [
        "### Held out: the setting chosen on the other workloads",
        "",
        "| held-out workload (target) | setting chosen on the others | hits within 10%: pruned / unpruned "
        "| found: pruned / unpruned | median cost-to-10% (full runs): pruned / unpruned | × unpruned "
        "| best seeded Optuna baseline (hits, cost) | × best Optuna | trials stopped (by a forecast) "
        "| near-best configurations (trials) stopped by a forecast |",
        "|---|---|---|---|---|---|---|---|---|---|",
    ]
    for w in workloads:
        setting, passed = choose_setting(table, [x for x in workloads if x != w])
        cells = _against_baselines(table, w, f"tpe/{setting}")
        if cells is not None:
            name = f"{_setting_name(setting)}{'' if passed else ' (none passed: the safest)'}"
            lines.append(f"| {w} (`{table[(w, 'tpe/none')]['target']}`) | {name} | {cells} |")
    return lines


def best_optuna(table: dict[tuple[str, str], dict[str, Any]], w: str) -> tuple[str, dict[str, Any]] | None:
    """The best seeded Optuna baseline on workload ``w``: the most hits, then the lowest cost."""
    rows = [(m, table[(w, m)]) for m in OPTUNA if (w, m) in table]
    return min(rows, key=lambda mb: (-mb[1]["hits"], mb[1]["cost"])) if rows else None


def _against_baselines(table: dict[tuple[str, str], dict[str, Any]], w: str, method: str) -> str | None:
    """The held-out table's cells after its setting column: ``method`` on workload ``w`` against
    no pruning and the best seeded Optuna baseline; None where either row is missing."""
    mine, base = table.get((w, method)), table.get((w, "tpe/none"))
    if mine is None or base is None:
        return None
    if (found := best_optuna(table, w)) is not None:
        name, best = found
        short = BASELINE_NAMES[name].split(" (")[0]
        vs_optuna = f"{short} ({best['hits']}/{best['seeds']}, {_fmt(best['cost'])}) | {_ratio(mine['cost'], best['cost'])}"
    else:
        vs_optuna = "not run | –"
    forecast_share = mine["stops_forecast"] / mine["stops"] if mine["stops"] else 0.0
    return (
        f"{mine['hits']}/{mine['seeds']} / {base['hits']}/{base['seeds']} | {mine['found']} / {base['found']} "
        f"| {_fmt(mine['cost'])} / {_fmt(base['cost'])} | {_ratio(mine['cost'], base['cost'])} | {vs_optuna} "
        f"| {mine['stopped']:.0%} ({forecast_share:.0%}) "
        f"| {mine['near_configs_forecast']} of {mine['near_configs']} "
        f"({mine['near_trials_forecast']} of {mine['near_trials']})"
    )


def method_table(rows: list[dict[str, Any]], method: str) -> list[str]:
    """One fixed method (e.g. the shipped default) on every workload, in the held-out table's
    columns, with the hits after the confirm step in place of the setting where rows have it
    (where a study was replayed with and without the step, only the rows with it count)."""
    with_step = {(r["grid"], r["method"]) for r in rows if "confirm_hit" in r}
    rows = [r for r in rows if "confirm_hit" in r or (r["grid"], r["method"]) not in with_step]
    table = summary(rows)
    after: dict[tuple[str, str], list[bool]] = {}
    for r in rows:
        if "confirm_hit" in r:
            after.setdefault((r["grid"], r["method"]), []).append(bool(r["confirm_hit"]))
    seeds = sorted({r["seed"] for r in rows})
    lines = [
        f"### {method} on every workload (seeds {seeds[0]}–{seeds[-1]})" if seeds else f"### {method}",
        "",
        "| workload (target) | hits after confirm: this / unpruned | hits within 10%: this / unpruned "
        "| found: this / unpruned | median cost-to-10% (full runs): this / unpruned | × unpruned "
        "| best seeded Optuna baseline (hits, cost) | × best Optuna | trials stopped (by a forecast) "
        "| near-best configurations (trials) stopped by a forecast |",
        "|---|---|---|---|---|---|---|---|---|---|",
    ]
    for w in sorted({w for w, _ in table}):
        cells = _against_baselines(table, w, method)
        if cells is None:
            continue
        mine, base = after.get((w, method)), after.get((w, "tpe/none"))
        confirmed = f"{sum(mine)}/{len(mine)} / {sum(base)}/{len(base)}" if mine and base else "not run"
        lines.append(f"| {w} (`{table[(w, 'tpe/none')]['target']}`) | {confirmed} | {cells} |")
    return lines


ORACLE_METHODS = {
    "tpe/oracle:perfect-forecast": "perfect forecast",
    "tpe/oracle:perfect-before-incumbent": "perfect before any reached",
    "tpe/oracle:perfect-after-incumbent": "perfect against the incumbent",
    "tpe/oracle:clairvoyant": "clairvoyant at report 2",
    "tpe/oracle:clairvoyant-1": "clairvoyant at report 1",
}
# The default as replayed in each era: today's (check U's options; session 39 on), and the one
# the oracles were first measured against (session 20). The oracle table shows the first present.
DEFAULT_METHODS = (
    "tpe/time_to_target:epsilon=0.01+epsilon_behind=0.1+exact_margin=0.2"
    "+require_behind=1+comeback_veto=1+jump_veto=1",
    "tpe/time_to_target:epsilon=0.01+epsilon_behind=0.1+exact_margin=0.2",
)


def oracle_table(rows: list[dict[str, Any]]) -> list[str]:
    """Median cost-to-10% (full runs; hits of the seeds) of no pruning, the shipped default, the
    oracles of ``benchmarks/oracles.py`` that were run and the best seeded Optuna baseline, each
    oracle's cost over the best baseline's, and per oracle on how many of the workloads where
    that baseline hits in most seeds it costs at most half of it (issue 17's goal): how far
    forecasts, or any pruner, could take the default."""
    rows = [r for r in rows if r["method"] in (*ORACLE_METHODS, *DEFAULT_METHODS, "tpe/none", *OPTUNA)]
    table = summary(rows)
    default = next(
        (d for d in DEFAULT_METHODS if any(method == d for _, method in table)), DEFAULT_METHODS[-1]
    )
    oracles = [m for m in ORACLE_METHODS if any(method == m for _, method in table)]
    names = [ORACLE_METHODS[m] for m in oracles]
    lines = [
        "| workload | unpruned | default | "
        + " | ".join(names)
        + " | best Optuna baseline | "
        + " | ".join(f"{n} × best Optuna" for n in names)
        + " |",
        "|---|" + "---|" * (3 + 2 * len(names)),
    ]

    def cell(w: str, method: str) -> str:
        s = table.get((w, method))
        return f"{_fmt(s['cost'])} ({s['hits']}/{s['seeds']})" if s else "not run"

    within: dict[str, list[str]] = {m: [] for m in oracles}
    counted = []
    for w in sorted({w for w, _ in table}):
        best = best_optuna(table, w)
        best_cell = f"{BASELINE_NAMES[best[0]].split(' (')[0]}: {cell(w, best[0])}" if best else "not run"
        hits_most = best is not None and 2 * best[1]["hits"] > best[1]["seeds"]
        if hits_most:
            counted.append(w)
        ratios = []
        for m in oracles:
            mine = table[(w, m)]["cost"] if (w, m) in table else math.inf
            ratios.append(_ratio(mine, best[1]["cost"]) if best else "–")
            if hits_most and best and mine <= 0.5 * best[1]["cost"]:
                within[m].append(w)
        lines.append(
            f"| {w} | {cell(w, 'tpe/none')} | {cell(w, default)} | "
            + " | ".join(cell(w, m) for m in oracles)
            + f" | {best_cell} | "
            + " | ".join(ratios)
            + " |"
        )
    lines.append("")
    for m in oracles:
        lines.append(
            f"{ORACLE_METHODS[m]}: ≤ 0.5× the best Optuna baseline on {len(within[m])} of the "
            f"{len(counted)} workloads where that baseline hits in most seeds ({', '.join(within[m]) or 'none'})"
        )
    return lines + _gap_recovered(table, default)


def _gap_recovered(table: dict[tuple[str, str], dict[str, Any]], default: str) -> list[str]:
    """Per workload where the default, the perfect forecast and a partial one all hit in most
    seeds: the share of the default's extra cost over the perfect forecast that a perfect
    forecast for one kind of decision only recovers (where a better forecaster pays)."""
    full, parts = "tpe/oracle:perfect-forecast", list(ORACLE_METHODS)[1:3]
    if not all(any(method == m for _, method in table) for m in parts):
        return []
    lines = [
        "",
        "| workload | default − perfect forecast (full runs) | "
        + " | ".join(f"recovered by {ORACLE_METHODS[m]}" for m in parts)
        + " |",
        "|---|---|" + "---|" * len(parts),
    ]
    for w in sorted({w for w, _ in table}):
        cost = {m: table[(w, m)]["cost"] if (w, m) in table else math.inf for m in (default, full, *parts)}
        gap = cost[default] - cost[full]
        if not all(math.isfinite(c) for c in cost.values()) or gap <= 0:
            continue
        shares = " | ".join(f"{(cost[default] - cost[m]) / gap:.0%}" for m in parts)
        lines.append(f"| {w} | {gap:.1f} | {shares} |")
    return lines


COST_COLUMNS = (
    ("budget (before any reached)", "ran to max_cost, before any trial reached"),
    ("budget", "ran to max_cost, later"),
    ("stopped: slower-than-measured-best", "stopped: slower than the measured best"),
    ("stopped: cannot-beat-incumbent", "stopped: cannot beat the incumbent"),
    ("stopped: behind-and-unlikely", "stopped: behind and unlikely"),
    ("stopped: cannot-reach-by-max-cost", "stopped: cannot reach by max_cost"),
    ("reached", "reached"),
)


def cost_breakdown_table(rows: list[dict[str, Any]], method: str) -> list[str]:
    """Where ``method``'s studies spent their cost: full runs per study (mean over seeds) until
    the cost-to-10% (all of the budget on a miss), by how each trial ended (the rows'
    ``cost_by_end``); "other" sums the rest (diverged, out of memory, failed)."""
    group = [r for r in rows if r["method"] == method and "cost_by_end" in r]
    lines = [
        f"### Where {method}'s cost went (full runs per study until its cost-to-10%, all of it on a miss)",
        "",
        "| workload | studies | hits | full runs per study | "
        + " | ".join(label for _, label in COST_COLUMNS)
        + " | other |",
        "|---|---|---|---|" + "---|" * (len(COST_COLUMNS) + 1),
    ]
    known = {key for key, _ in COST_COLUMNS}
    for w in sorted({r["grid"] for r in group}):
        studies = [r for r in group if r["grid"] == w]
        n = len(studies)
        per: dict[str, float] = defaultdict(float)
        for r in studies:
            for kind, cost in r["cost_by_end"].items():
                # Kinds after the first success lose the marker; "reached" counts both phases.
                key = kind if kind in known else kind.removesuffix(" (before any reached)")
                per[key if key in known else "other"] += cost / n
        total = sum(per.values())
        cells = " | ".join(f"{per.get(key, 0.0):.2f}" for key, _ in COST_COLUMNS)
        hits = sum(bool(r["hit"]) for r in studies)
        lines.append(f"| {w} | {n} | {hits} | {total:.1f} | {cells} | {per.get('other', 0.0):.2f} |")
    if not group:
        lines.append(f"(no rows of {method} carry cost_by_end: they were replayed before it was recorded)")
    return lines


def fresh_seed_table(
    fit: dict[tuple[str, str], dict[str, Any]],
    fresh: dict[tuple[str, str], dict[str, Any]],
    workloads: list[str],
    seeds: tuple[int, int],
) -> list[str]:
    """Each fold's setting by the strict and the tolerant rule, chosen on the other workloads'
    rows in ``fit``, then measured on the held-out workload's rows in ``fresh``: seeds that no
    choice saw. *Found*: studies that trained a near-best configuration at all."""
    lo, hi = seeds
    lines = [
        f"### Seeds {lo}–{hi - 1}, which no choice saw: each fold's setting by the strict and the tolerant rule",
        "",
        "| held-out workload | rule | setting chosen on the others (seeds before) | hits: pruned / unpruned "
        "| found: pruned / unpruned | median cost-to-10%: pruned / unpruned | × unpruned "
        "| `pruner: median` (hits, cost) | near-best configurations stopped by a forecast |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    met: dict[str, list[int]] = {"strict": [0, 0, 0, 0], "tolerant": [0, 0, 0, 0]}
    for w in workloads:
        base, median = fresh.get((w, "tpe/none")), fresh.get((w, "tpe/median"))
        for rule, failures in (("strict", 0), ("tolerant", 1)):
            setting, passed = choose_setting(fit, [x for x in workloads if x != w], failures)
            mine = fresh.get((w, f"tpe/{setting}"))
            name = _setting_name(setting) + ("" if passed else " (none passed)")
            if mine is None or base is None:
                lines.append(f"| {w} | {rule} | {name} | not replayed | | | | | |")
                continue
            eps = epsilon_of(setting)
            counts = met[rule]
            counts[0] += mine["hits"] >= base["hits"] - 1
            counts[1] += _near_forecast(mine) <= eps
            if math.isfinite(base["cost"]):
                counts[2] += 1
                counts[3] += mine["cost"] <= 0.6 * base["cost"]
            vs_median = f"{median['hits']}/{median['seeds']}, {_fmt(median['cost'])}" if median else "not run"
            lines.append(
                f"| {w} | {rule} | {name} | {mine['hits']}/{mine['seeds']} / {base['hits']}/{base['seeds']} "
                f"| {mine['found']} / {base['found']} | {_fmt(mine['cost'])} / {_fmt(base['cost'])} "
                f"| {_ratio(mine['cost'], base['cost'])} | {vs_median} "
                f"| {mine['near_configs_forecast']} of {mine['near_configs']} |"
            )
    lines.append("")
    lines.append(_setting_against_setting(fresh, workloads, f"tpe/{SETTINGS[-2]}", f"tpe/{SETTINGS[0]}"))
    for rule, (hits, near, finite, cheap) in met.items():
        lines.append(
            f"- {rule} rule: hits ≥ unpruned − 1 on {hits} of {len(workloads)}; near-best configurations "
            f"stopped by a forecast ≤ ε on {near} of {len(workloads)}; cost-to-10% ≤ 0.6× unpruned on "
            f"{cheap} of the {finite} where unpruned convtune hits in most seeds"
        )
    return lines


def _setting_against_setting(
    table: dict[tuple[str, str], dict[str, Any]], workloads: list[str], mine: str, other: str
) -> str:
    """One line: ``mine`` against ``other`` on the workloads where both ran (hits, near-best
    configurations stopped by a forecast, median cost-to-10% where both are finite)."""
    both = [w for w in workloads if (w, mine) in table and (w, other) in table]
    if not both:
        return f"- {_setting_name(mine[4:])} against {_setting_name(other[4:])}: not both replayed"
    a, b = [table[(w, mine)] for w in both], [table[(w, other)] for w in both]
    hits = sum(x["hits"] >= y["hits"] for x, y in zip(a, b, strict=True))
    ratios = [
        x["cost"] / y["cost"] for x, y in zip(a, b, strict=True) if math.isfinite(x["cost"] + y["cost"])
    ]
    cost = (
        f"{min(ratios):.2f}–{max(ratios):.2f}× the cost on the {len(ratios)} where both are finite"
        if ratios
        else "no finite costs"
    )
    return (
        f"- {_setting_name(mine[4:])} against {_setting_name(other[4:])}: as many hits or more on {hits} of "
        f"{len(both)}; near-best configurations stopped by a forecast {sum(x['near_configs_forecast'] for x in a)} "
        f"of {sum(x['near_configs'] for x in a)} (against {sum(y['near_configs_forecast'] for y in b)} of "
        f"{sum(y['near_configs'] for y in b)}); {cost}"
    )


def misses_table(rows: list[dict[str, Any]]) -> list[str]:
    """Per workload and method: studies that found (trained) a near-best configuration and still
    missed, and what they picked instead (its true time-to-target over the best's, the most
    common first): a miss of a study that found the winner is the pick's noise, not a stop."""
    groups: dict[tuple[str, str], list[dict[str, Any]]] = {}
    for row in rows:
        groups.setdefault((row["grid"], row["method"]), []).append(row)
    lines = [
        "### Studies that found a near-best configuration and missed: what they picked",
        "",
        "| workload | method | trials trained per study (mean) | hits | found | found, missed "
        "| their picks (× the best's true time: studies) |",
        "|---|---|---|---|---|---|---|",
    ]
    for (w, m), group in sorted(groups.items()):
        found = [r for r in group if r["near_best_trials"] > 0]
        missed = [r for r in found if not r["hit"]]
        picks = Counter(f"{r['pick_ratio']:.3g}" if r["pick_ratio"] is not None else "none" for r in missed)
        shown = ", ".join(f"{ratio}: {n}" for ratio, n in picks.most_common(3)) or "–"
        hits = sum(bool(r["hit"]) for r in group)
        trained = float(np.mean([r["trained"] for r in group]))
        lines.append(
            f"| {w} | {m} | {trained:.1f} | {hits}/{len(group)} | {len(found)} | {len(missed)} | {shown} |"
        )
    return lines


def _by_workload_and_method(
    rows: list[dict[str, Any]], having: str
) -> dict[tuple[str, str], list[dict[str, Any]]]:
    """The rows that hold the field ``having``, grouped by (workload, method)."""
    groups: dict[tuple[str, str], list[dict[str, Any]]] = {}
    for row in rows:
        if having in row:
            groups.setdefault((row["grid"], row["method"]), []).append(row)
    return groups


def confirm_table(rows: list[dict[str, Any]], before: list[dict[str, Any]] | None = None) -> list[str]:
    """Per workload and method, rows replayed with the confirm step (``--confirm``): the search's
    hits, the hits after confirming the measured best and its runners-up on more seeds, and what
    the confirm runs cost. ``before``: rows of the same studies without the step (another
    results file), to check that the search itself replayed the same (a repeat's seed is now
    drawn among the least-drawn; it was drawn with replacement)."""
    groups = _by_workload_and_method(rows, "confirm_hit")
    if not groups:
        return []
    lines = [
        "### The confirm step: the measured best and its runners-up on more seeds",
        "",
        "| workload | method | hits: search | hits: after confirm | found | confirm cost (full runs, "
        "mean per study) |",
        "|---|---|---|---|---|---|",
    ]
    for (w, m), group in sorted(groups.items()):
        hits = sum(bool(r["hit"]) for r in group)
        confirmed = sum(bool(r["confirm_hit"]) for r in group)
        found = sum(r["near_best_trials"] > 0 for r in group)
        cost = float(np.mean([r["confirm_spent"] for r in group]))
        lines.append(f"| {w} | {m} | {hits}/{len(group)} | {confirmed}/{len(group)} | {found} | {cost:.1f} |")
    if before is not None:
        old = {(r["grid"], r["method"], r["seed"], r["budget"]): r for r in before}
        keys = ("hit", "cost_to_10", "spent", "trials", "trained", "pick_ratio")
        pairs = [
            (r, old[k])
            for r in rows
            if "confirm_hit" in r and (k := (r["grid"], r["method"], r["seed"], r["budget"])) in old
        ]
        same = sum(all(r[k] == o.get(k) for k in keys) for r, o in pairs)
        lines += ["", f"Search replayed the same as in the earlier rows: {same} of {len(pairs)} studies."]
    return lines


def confirm_rounds_table(rows: list[dict[str, Any]]) -> list[str]:
    """Per workload and method, rows replayed with ``--confirm-rounds`` > 1: hits after the first
    round and after every round of the same studies, and what each cost."""
    groups = _by_workload_and_method(rows, "confirm_first_hit")
    if not groups:
        return []
    lines = [
        "### Confirm rounds: the first round alone and every round, the same studies",
        "",
        "| workload | method | hits after round 1 | hits after every round | studies with a later round "
        "| confirm cost, round 1 / every round (full runs, mean per study) "
        "| studies confirming a stopped configuration / picking one |",
        "|---|---|---|---|---|---|---|",
    ]
    for (w, m), group in sorted(groups.items()):
        n = len(group)
        first = sum(bool(r["confirm_first_hit"]) for r in group)
        every = sum(bool(r["confirm_hit"]) for r in group)
        later = sum(r["confirm_rounds_run"] > 1 for r in group)
        cost1 = float(np.mean([r["confirm_first_spent"] for r in group]))
        cost = float(np.mean([r["confirm_spent"] for r in group]))
        # Rows stored before the counts existed say nothing about it: shown as "–".
        took = [r["confirm_stopped_taken"] > 0 for r in group if "confirm_stopped_taken" in r]
        picked = sum(bool(r.get("confirm_pick_was_stopped")) for r in group)
        stopped = f"{sum(took)} / {picked}" if took else "–"
        lines.append(
            f"| {w} | {m} | {first}/{n} | {every}/{n} | {later} | {cost1:.1f} / {cost:.1f} | {stopped} |"
        )
    return lines


def confirm_held_out_table(
    rows: list[dict[str, Any]], choices: dict[tuple[str, str], dict[str, Any]]
) -> list[str]:
    """Per workload, with the confirm step: the setting its fold chose (on ``choices``, the
    stored rows without the step, as the held-out table does), no pruning and ``pruner: median``;
    hits of the search's pick and after the confirm, and the confirm's cost."""
    table = _by_workload_and_method(rows, "confirm_hit")
    workloads = sorted({w for w, _ in choices})
    lines = [
        "### Held out, with the confirm step (the measured best and runners-up on 2 more seeds)",
        "",
        "| held-out workload | setting chosen on the others | hits, search's pick: pruned / unpruned / median "
        "| hits after confirm: pruned / unpruned / median | confirm cost (full runs per study): pruned / "
        "unpruned / median |",
        "|---|---|---|---|---|",
    ]
    for w in workloads:
        setting, passed = choose_setting(choices, [x for x in workloads if x != w])
        groups = [table.get((w, m)) for m in (f"tpe/{setting}", "tpe/none", "tpe/median")]
        if any(g is None for g in groups):
            continue
        search = " / ".join(f"{sum(bool(r['hit']) for r in g)}/{len(g)}" for g in groups)
        after = " / ".join(f"{sum(bool(r['confirm_hit']) for r in g)}/{len(g)}" for g in groups)
        spent = " / ".join(f"{np.mean([r['confirm_spent'] for r in g]):.1f}" for g in groups)
        lines.append(
            f"| {w} | {_setting_name(setting)}{'' if passed else ' (none passed)'} | {search} | {after} | {spent} |"
        )
    return lines


def confirm_compare_table(rows: list[dict[str, Any]], first: str, second: str) -> list[str]:
    """Two methods against no pruning, all with the confirm step, on ``rows`` (one seed window):
    per workload, hits after confirm (and whether each is within one seed of no pruning's), and
    the second's median cost-to-10% (the search's) over the first's; then the counts the
    pre-registered checks in docs/benchmarks.md read."""
    groups: dict[tuple[str, str], list[dict[str, Any]]] = {}
    for row in rows:
        if "confirm_hit" in row:
            groups.setdefault((row["grid"], row["method"]), []).append(row)
    workloads = sorted({w for w, m in groups if (w, first) in groups and (w, second) in groups})
    lines = [
        f"### With the confirm step: {first} against {second} (hits after confirm; seeds "
        f"{min(r['seed'] for r in rows)}–{max(r['seed'] for r in rows)})",
        "",
        "| workload | no pruning | first | second | median cost-to-10%: second / first |",
        "|---|---|---|---|---|",
    ]
    met = {first: 0, second: 0}
    total = {first: 0, second: 0}
    for w in workloads:
        base = groups.get((w, "tpe/none"), [])
        base_hits = sum(bool(r["confirm_hit"]) for r in base)
        cells = []
        for m in (first, second):
            g = groups[(w, m)]
            hits = sum(bool(r["confirm_hit"]) for r in g)
            ok = hits >= base_hits - 1
            met[m] += ok
            total[m] += hits
            cells.append(f"{hits}/{len(g)}{'' if ok else ' ✗'}")
        a, b = _cost(groups[(w, first)]), _cost(groups[(w, second)])
        lines.append(f"| {w} | {base_hits}/{len(base)} | {cells[0]} | {cells[1]} | {_ratio(b, a)} |")
    lines += [
        "",
        f"Hits after confirm within one seed of no pruning's: first on {met[first]} of {len(workloads)}, "
        f"second on {met[second]}; summed hits after confirm: first {total[first]}, second {total[second]} "
        "(✗: more than one seed behind no pruning).",
    ]
    return lines


def candidate_check_table(rows: list[dict[str, Any]], base: str, candidate: str) -> list[str]:
    """The bars a candidate pruner setting is held to against the default in the pre-registered
    checks of docs/benchmarks.md (``self_check``, ``comeback_veto``), per workload on the seeds both
    ran: hits after the first confirm round ≥ the default's − 1, near-best configurations stopped by
    a forecast ≤ the default's, and median cost-to-10% ≤ 1.1× the default's where both hit in most
    seeds (a candidate missing in most seeds where the default hits fails). Below the table, the
    pooled figures the checks' readings use (checks Q, V, W and X): hits pooled, workloads within two
    hits, and the cost ratio over the workloads where both hit in most seeds."""
    groups: dict[tuple[str, str], dict[int, dict[str, Any]]] = {}
    for row in rows:
        if "confirm_hit" in row:
            groups.setdefault((row["grid"], row["method"]), {})[row["seed"]] = row
    workloads = sorted({w for w, _ in groups if (w, base) in groups and (w, candidate) in groups})
    lines = [
        f"### {candidate} against {base} (hits after the first confirm round)",
        "",
        "| workload | hits after confirm | near-best stopped by a forecast / trained | median cost-to-10% | "
        "trials trained (median) | passes |",
        "|---|---|---|---|---|---|",
    ]
    passed = 0
    pooled = [0, 0]
    within_two = 0
    ratios: list[float] = []  # where both hit in most seeds; both infinite counts as 1
    for w in workloads:
        seeds = sorted(set(groups[(w, base)]) & set(groups[(w, candidate)]))
        cells = []
        for m in (base, candidate):
            group = [groups[(w, m)][s] for s in seeds]
            hits = sum(bool(r.get("confirm_first_hit", r["confirm_hit"])) for r in group)
            counts = _counts(group)
            trained = float(np.median([r["trained"] for r in group]))
            cells.append(
                (hits, counts["near_configs_forecast"], counts["near_configs"], _cost(group), trained)
            )
        (h0, f0, n0, c0, t0), (h1, f1, n1, c1, t1) = cells
        cost_ok = c1 <= 1.1 * c0 if math.isfinite(c0) and math.isfinite(c1) else not math.isfinite(c0)
        ok = h1 >= h0 - 1 and f1 <= f0 and cost_ok
        passed += ok
        pooled[0] += h0
        pooled[1] += h1
        within_two += h1 >= h0 - 2
        if 2 * min(h0, h1) > len(seeds):
            ratios.append(1.0 if math.isinf(c0) and math.isinf(c1) else c1 / c0)
        lines.append(
            f"| {w} | {h0} → {h1} | {f0}/{n0} → {f1}/{n1} | {_fmt(c0)} → {_fmt(c1)} | {t0:g} → {t1:g} "
            f"| {'yes' if ok else 'NO'} |"
        )
    lines += ["", f"Passes on {passed} of {len(workloads)} workloads."]
    lines += _run_near_line(groups, workloads, candidate)
    finite = [r for r in ratios if math.isfinite(r) and r > 0]
    lines += [
        f"Hits pooled: {pooled[0]} → {pooled[1]}; the candidate within two hits on {within_two} of "
        f"{len(workloads)} workloads.",
        f"Cost-to-10% ratio, candidate over base, on the {len(ratios)} workloads where both hit in "
        "most seeds (both medians infinite: 1): median "
        + (f"{float(np.median(ratios)):.2f}" if ratios else "–")
        + f"; geometric mean over the {len(finite)} where both are finite "
        + (f"{math.exp(float(np.mean(np.log(finite)))):.2f}" if finite else "–")
        + f", cheaper on {sum(r < 1 for r in finite)} of them.",
    ]
    return lines


def _run_near_line(
    groups: dict[tuple[str, str], dict[Any, dict[str, Any]]], workloads: list[str], method: str
) -> list[str]:
    """One line: of ``method``'s near-best configurations stopped by a forecast, how many were
    stopped on a run that would itself have reached within 10% of the best (a wrong stop); the
    rest judged a run that would have reached later, or never (rows with ``near_best_stopped_runs``)."""
    rows = [row for w in workloads for row in groups[(w, method)].values()]
    counts = _counts(rows)
    if counts["near_configs_forecast_run_near"] < 0:
        return []
    return [
        f"Near-best configurations stopped by a forecast under the candidate: {counts['near_configs_forecast']}; "
        f"of them on a run that would itself have reached within 10% of the best: "
        f"{counts['near_configs_forecast_run_near']} (the others' stopped run would have reached later, or never)."
    ]


def settings_table(table: dict[tuple[str, str], dict[str, Any]], workloads: list[str]) -> list[str]:
    """Every baseline and setting on every workload (hits, median cost-to-10%), with the near-best
    configurations each stopped over all workloads: by a forecast for convtune's pruner, for any
    reason for the Optuna pruners."""
    methods = [m for m in BASELINE_NAMES if any((w, m) in table for w in workloads)]
    methods += [f"tpe/{s}" for s in SETTINGS if any((w, f"tpe/{s}") in table for w in workloads)]
    lines = [
        "### Every setting and baseline (hits, median cost-to-10% in full runs)",
        "",
        "| method | " + " | ".join(workloads) + " | near-best configurations stopped, all workloads |",
        "|---|" + "---|" * (len(workloads) + 1),
    ]
    for m in methods:
        rows = [table[(w, m)] for w in workloads if (w, m) in table]
        cells = [
            f"{table[(w, m)]['hits']}, {_fmt(table[(w, m)]['cost'])}" if (w, m) in table else ""
            for w in workloads
        ]
        configs = sum(r["near_configs"] for r in rows)
        if m.startswith("tpe/time_to_target"):
            eps = epsilon_of(m[4:])
            over = [
                w
                for w in workloads
                if (w, m) in table and (table[(w, m)]["near_config_forecast_stopped"] or 0) > eps
            ]
            tail = f"{sum(r['near_configs_forecast'] for r in rows)} of {configs} by a forecast"
            tail += f"; over ε on {', '.join(over)}" if over else ""
            name = f"time_to_target, {_setting_name(m[4:])}"
        else:
            tail = (
                f"{sum(r['near_configs_any'] for r in rows)} of {configs}"
                if m in ("tpe/median", "tpe/hyperband")
                else "–"
            )
            name = BASELINE_NAMES[m]
        lines.append(f"| {name} | " + " | ".join(cells) + f" | {tail} |")
    return lines


def _share(x: float | None) -> str:
    return "–" if x is None else f"{x:.0%}"


def _ratio(a: float, b: float) -> str:
    if not (math.isfinite(a) and math.isfinite(b)) or b <= 0:
        return "–"
    return f"{a / b:.2f}"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--data", default=str(HERE / "data" / "corpus"), help="folder of grid files")
    parser.add_argument("--workloads", nargs="*", default=None)
    parser.add_argument("--seeds", type=int, default=5, help="seeds 0 … N-1 (run, and shown in the tables)")
    parser.add_argument(
        "--first-seed",
        type=int,
        default=0,
        help="run and table seeds --first-seed … --seeds - 1 only (a check on seeds nothing saw)",
    )
    parser.add_argument("--budget", type=float, default=20.0, help="full runs per study")
    parser.add_argument("--reach", type=float, default=0.3, help="share of complete runs reaching the target")
    parser.add_argument("--jobs", type=int, default=1)
    parser.add_argument("--schedules", default=None, help="file registering the corpus schedules")
    parser.add_argument("--methods", nargs="*", default=None, help="only these, e.g. tpe/none")
    parser.add_argument(
        "--calibration", default=None, help="forecast calibration table (default: the shipped one)"
    )
    parser.add_argument(
        "--method-suffix",
        default="",
        metavar="TEXT",
        help="appended to each stored method's name (e.g. @z for studies run with another "
        "--calibration), so their rows table beside the same method's rows from --also",
    )
    parser.add_argument(
        "--calibration-dir",
        default=None,
        help="folder of held-out calibrations, one per workload (W.json fitted without W); "
        "overrides --calibration",
    )
    parser.add_argument(
        "--out", default=None, help="results JSONL, .jsonl.gz to compress (default: next to the data)"
    )
    parser.add_argument("--table-only", action="store_true")
    parser.add_argument(
        "--also",
        nargs="*",
        action="extend",
        default=[],
        metavar="FILE",
        help="results files whose rows join --out's in the tables (e.g. the baselines of the same seeds); "
        "several after one flag, or the flag again",
    )
    parser.add_argument(
        "--oracle-table",
        action="store_true",
        help="also table the oracle pruners (methods tpe/oracle:NAME, benchmarks/oracles.py) against "
        "the default and the best Optuna baseline",
    )
    parser.add_argument(
        "--misses",
        action="store_true",
        help="also print what studies that found a near-best configuration but missed picked instead",
    )
    parser.add_argument(
        "--fresh-seeds",
        type=int,
        default=0,
        help="also measure each fold's choice (made on seeds 0 … --seeds - 1) on the next N seeds, "
        "which no choice saw (run them first with a larger --seeds)",
    )
    parser.add_argument(
        "--confirm",
        type=int,
        default=0,
        help="after each study's budget, confirm its measured best and runners-up on N more seeds "
        "each, as `convtune study confirm --measured --seeds N` (use its own --out)",
    )
    parser.add_argument(
        "--confirm-rounds",
        type=int,
        default=1,
        help="with --confirm: at most this many rounds, as `study confirm --measured --rounds N` "
        "(rows then also hold the first round's result, for a paired table)",
    )
    parser.add_argument(
        "--confirm-stopped",
        type=int,
        default=0,
        metavar="N",
        help="with --confirm-rounds > 1: each later round also confirms up to N configurations stopped "
        "as slower than a measured best the round withdrew (confirm_candidates(stopped=N), under test); "
        "name the rows apart with --method-suffix",
    )
    parser.add_argument(
        "--audit",
        action="store_true",
        help="rows also hold each study's forecasts checked on its trials whose outcome is known "
        "(`convtune study forecasts`), with and without the study's prior; --table-only "
        "--audit-table prints them",
    )
    parser.add_argument(
        "--audit-table",
        action="store_true",
        help="the forecasts' low tail in the studies (rows from --audit): how often a trial that "
        "reached had been given less than q of crossing by when it did",
    )
    parser.add_argument(
        "--confirm-compare",
        nargs=2,
        default=None,
        metavar=("FIRST", "SECOND"),
        help="with the confirm step: two methods (e.g. tpe/time_to_target:epsilon=0.01 and a variant) "
        "against no pruning on seeds --confirm-seeds-from … --seeds - 1",
    )
    parser.add_argument("--confirm-seeds-from", type=int, default=0)
    parser.add_argument(
        "--candidate-check",
        nargs=2,
        default=None,
        metavar=("BASE", "CANDIDATE"),
        help="a candidate setting against the default by the bars of the pre-registered checks "
        "(hits after the first confirm round, near-best stopped by a forecast, cost)",
    )
    parser.add_argument(
        "--hits-after-confirm",
        action="store_true",
        help="tables (and the fold rule) count the pick after the confirm step as the hit; rows "
        "without the step are left out",
    )
    parser.add_argument(
        "--method-table",
        default=None,
        metavar="METHOD",
        help="also table one fixed method (e.g. the shipped default) on every workload against the baselines",
    )
    parser.add_argument(
        "--cost-breakdown",
        default=None,
        metavar="METHOD",
        help="also table where one method's studies spent their cost, by how trials ended",
    )
    parser.add_argument(
        "--exact-margin",
        type=float,
        default=0.0,
        help="the settings' exact_margin (default 0, as the stored fold rows ran; the pruner's "
        "default is 0.2); the baselines' rows do not depend on it",
    )
    parser.add_argument(
        "--compare-with",
        default=None,
        help="results file of the same studies without --confirm: check the search replayed the same",
    )
    args = parser.parse_args(argv)
    global SETTINGS  # the settings a fold chooses among, here and in the table functions
    SETTINGS = with_exact_margin(BASE_SETTINGS, args.exact_margin)
    out = Path(args.out or HERE / "data" / f"replay_pruners_b{args.budget:g}.jsonl")
    if not args.table_only:
        run(args, out)
    stored = read_rows(out) + [row for also in args.also for row in read_rows(Path(also))]
    if args.hits_after_confirm:
        stored = [{**r, "hit": r["confirm_hit"]} for r in stored if "confirm_hit" in r]

    def seeds_in(lo: int, hi: int) -> list[dict[str, Any]]:
        return [
            r
            for r in stored
            if r["budget"] == args.budget
            and lo <= r["seed"] < hi
            and (not args.workloads or r["grid"] in args.workloads)
        ]

    rows = seeds_in(args.first_seed, args.seeds)  # the tables are over these seeds only
    print(tables(rows))
    if args.misses:
        print("\n" + "\n".join(misses_table(rows)))
    before = read_rows(Path(args.compare_with)) if args.compare_with else None
    if confirmed := confirm_table(rows, before):
        print("\n" + "\n".join(confirmed))
        if before is not None:
            window = [r for r in before if r["budget"] == args.budget and r["seed"] < args.seeds]
            print("\n" + "\n".join(confirm_held_out_table(rows, summary(window))))
    if rounds := confirm_rounds_table(rows):
        print("\n" + "\n".join(rounds))
    if args.confirm_compare:
        print(
            "\n"
            + "\n".join(
                confirm_compare_table(seeds_in(args.confirm_seeds_from, args.seeds), *args.confirm_compare)
            )
        )
    if args.candidate_check:
        print("\n" + "\n".join(candidate_check_table(rows, *args.candidate_check)))
    if args.method_table:
        print("\n" + "\n".join(method_table(rows, args.method_table)))
    if args.cost_breakdown:
        print("\n" + "\n".join(cost_breakdown_table(rows, args.cost_breakdown)))
    if args.oracle_table:
        print("\n" + "\n".join(oracle_table(rows)))
    if args.audit_table:
        print("\n" + audit_table(rows))
    if args.fresh_seeds:
        table, window = summary(rows), (args.seeds, args.seeds + args.fresh_seeds)
        workloads = sorted({w for w, _ in table})
        print("\n" + "\n".join(fresh_seed_table(table, summary(seeds_in(*window)), workloads, window)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
