"""Can a trial's stop against the incumbent be decided better from the pair than from the trial alone?

``TimeToTargetPruner`` stops a trial at a rung when the calibrated probability that it reaches
the target before the incumbent's time-to-target (plus 10%) is below ``epsilon / rungs``. That
probability reads the trial's own prefix only: the incumbent enters as a cost. But the
incumbent's whole curve is known, and where the trial stands against it at equal cost is what
Optuna's pruners act on. The oracle replays (docs/benchmarks.md, session 20) say this decision
holds most of the default's extra cost.

This script builds, from the curve corpus, every *pair* a study could meet: a run A judged at
one of the pruner's rungs (its 2nd report, then costs doubling) that has not reached the target,
and a run B that reached it (the incumbent, finished) while A could still beat it (A's cost <
1.2 × B's time). The label is what the pruner's probability is of: A's true time-to-target ≤
1.1 × B's. Two scores are compared:

* **shipped**: A's calibrated ``probability_before(1.1 × T_B)`` (schedule known, no prior);
* **pairwise**: a logistic regression (scikit-learn) on that probability's logit, the log ratio
  of A's distance to the target to B's at the same cost, how far A is toward the bar, the share
  of A's run seen, and both curves' recent log-slopes.

Everything is leave-one-workload-out: for a held-out workload W the shipped probability of every
pair (of every workload) comes from the calibration fitted without W, and the logistic model is
fitted on the other workloads' pairs only, each workload weighing the same. Reported per
held-out workload: ROC AUC; and the pruner's life-budget view, each (A, B) pair followed over A's
rungs with the stop rule ``score < epsilon / rungs``: the share of pairs where A would have won
(label 1) that are ever stopped, and the share of the cost of the losing pairs saved (cost A
would spend without a stop, until it reaches, is exactly stopped at 1.2 × T_B, or ends, minus
the cost at the stop). ``epsilon`` per method is chosen on the fitting workloads: the largest in
a grid whose winners-stopped share is ≤ 1% on each of them.

A second table scores a combined rule: the shipped rule, or
both scores low (the forecast's probability below ``eps_shipped / rungs`` and the pairwise one
below ``eps_pair / rungs``), the two budgets chosen on the fitting workloads.

The pruner option this led to (``pairwise``: the combined rule inside ``TimeToTargetPruner``)
was replayed on fresh seeds and bought nothing over the shipped default, whose second budget
(a forecast below 0.1 / rungs *and* behind the median of the finished trials) already makes most
of the same stops; it was removed (docs/benchmarks.md, "Deciding against the incumbent from the
pair"). This script is the record of the question.

Usage::

    python benchmarks/pairwise.py --jobs 2            # ~8 min; raw forecasts cached
"""

from __future__ import annotations

import argparse
import math
import pickle
import sys
import time
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, replace
from functools import partial
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

import forecast as fb  # noqa: E402

from convtune.config.target import Target  # noqa: E402
from convtune.curves import CrossingCalibration, ReachModel, time_to_target  # noqa: E402
from convtune.curves._forecast import RawForecast, raw_forecast  # noqa: E402
from convtune.curves._reach import CurveSummary  # noqa: E402

HERE = Path(__file__).resolve().parent
MARGIN = 0.1  # TimeToTargetPruner's default: the bar is 1.1 x the incumbent's time
EXACT_MARGIN = 0.2  # past 1.2 x the incumbent's time the stop needs no forecast
FIRST_RUNG = 2  # n_warmup_reports
EPSILONS = (0.0, 0.001, 0.002, 0.005, 0.01, 0.02, 0.03, 0.05, 0.1, 0.2)
MAX_WINNERS_STOPPED = 0.01


FEATURES = (
    "logit_p",  # logit of the trial's calibrated probability of reaching before the bar
    "log_gap_ratio",  # log(trial's distance to the target / incumbent's at the same cost)
    "log_cost_over_bar",  # log(cost spent / the bar)
    "progress",  # share of the trial's planned run seen
    "slope_trial",  # d log(distance) / d log(cost) over the trial's last two reports
    "slope_incumbent",  # the same for the incumbent at that cost
    "slope_diff",  # their difference
)
_TINY = 1e-12
_P_CLIP = 1e-4


def pair_features(
    probability: float,
    costs: np.ndarray,
    gaps: np.ndarray,
    horizon: float,
    incumbent_costs: np.ndarray,
    incumbent_gaps: np.ndarray,
    incumbent_time: float,
    bar: float,
) -> np.ndarray:
    """The feature vector (:data:`FEATURES`) of a trial judged at its latest report.

    ``costs`` and ``gaps`` are the trial's reports so far (distance to the target, as
    :meth:`convtune.config.target.Target.gap`), ``incumbent_costs`` and ``incumbent_gaps`` the
    incumbent's whole curve, which reached the target at ``incumbent_time``. Past that time the
    trial is compared with the incumbent's last distance before it reached.

    """
    c = float(costs[-1])
    before = incumbent_costs < incumbent_time
    at = min(c, float(incumbent_costs[before][-1])) if before.any() else c
    incumbent_gap = float(np.interp(at, incumbent_costs, incumbent_gaps))
    k = int(np.searchsorted(incumbent_costs, at, side="right")) - 1
    slope_trial = _log_slope(costs, gaps, costs.size - 1)
    slope_incumbent = _log_slope(incumbent_costs, incumbent_gaps, max(k, 1))
    ratio = math.log(max(float(gaps[-1]), _TINY) / max(incumbent_gap, _TINY))
    return np.array(
        [
            float(logit_feature(np.array([probability]))[0]),
            float(np.clip(ratio, -10.0, 10.0)),
            math.log(c / bar),
            c / horizon,
            slope_trial,
            slope_incumbent,
            slope_trial - slope_incumbent,
        ]
    )


def logit_feature(probability: np.ndarray) -> np.ndarray:
    """The first feature of :func:`pair_features` for many probabilities at once (clipped to
    [1e-4, 1 - 1e-4]: below that the forecast's calibration says nothing finer)."""
    p = np.clip(np.asarray(probability, dtype=float), _P_CLIP, 1.0 - _P_CLIP)
    return np.log(p / (1.0 - p))


def _log_slope(costs: np.ndarray, gaps: np.ndarray, k: int) -> float:
    """d log(gap) / d log(cost) over the reports ``k - 1`` and ``k``, clipped to ±5 (0 where
    undefined: a distance of 0 or a cost of 0)."""
    if k < 1 or k >= costs.size or not (gaps[k] > 0 and gaps[k - 1] > 0 and costs[k - 1] > 0):
        return 0.0
    s = math.log(gaps[k] / gaps[k - 1]) / math.log(costs[k] / costs[k - 1])
    return float(np.clip(s, -5.0, 5.0)) if math.isfinite(s) else 0.0


@dataclass
class Judged:
    """Run A at one rung (its report ``report``): its raw forecast."""

    run: int
    report: int
    cost: float
    rung: int
    raw: RawForecast


def _rung_index(cost: float, first: float) -> int:
    return int(math.floor(math.log(max(cost, first) / first) / math.log(2.0) + 1e-9))


def _gaps(metric: np.ndarray, target: Target) -> np.ndarray:
    return np.array([target.gap(float(v)) for v in metric])


def load_workload(path: Path, max_runs: int | None = None) -> fb.Workload:
    w = fb.load_grid_file(path)
    if w is None:
        raise SystemExit(f"error: {path}: not a convtune grid file")
    if max_runs is not None:
        w.runs = w.runs[:max_runs]
    return w


def judge_runs(path: Path, max_runs: int | None = None) -> tuple[str, list[dict]]:
    """Raw forecasts of every run of one workload at every rung, per target (the slow part)."""
    w = load_workload(path, max_runs)
    out = []
    for target in fb.targets_for(w):
        judged: list[Judged] = []
        truths = []
        for ri, run in enumerate(w.runs):
            costs, metric = run.samples, run.metric
            truth = math.inf if run.diverged else time_to_target(costs, metric, target)
            truths.append(truth)
            if costs.size < FIRST_RUNG:
                continue
            first = float(costs[FIRST_RUNG - 1])
            for k in range(FIRST_RUNG - 1, costs.size):
                at_rung = k == FIRST_RUNG - 1 or _rung_index(costs[k], first) > _rung_index(
                    costs[k - 1], first
                )
                if not at_rung or not np.all(np.isfinite(metric[: k + 1])) or truth <= costs[k]:
                    continue
                c, v = costs[: k + 1], metric[: k + 1]
                raw = raw_forecast(c, v, target, schedule=run.schedule, horizon=run.horizon)
                if raw.final is not None and not raw.blew_up:
                    continue  # reached or diverged: no probability decides
                if raw.final is None:
                    raw = replace(raw, summary=CurveSummary.of(c, v, target, run.schedule, raw.horizon))
                judged.append(Judged(ri, k, float(costs[k]), _rung_index(costs[k], first), raw))
        out.append({"target": str(target), "truths": truths, "judged": judged})
    return w.name, out


@dataclass
class Pairs:
    workload: str
    features: np.ndarray  # (n, len(FEATURES)); the first (the forecast's logit) is set per fold
    label: np.ndarray
    judged_index: np.ndarray  # which Judged (per workload list) gives A's forecast
    bar: np.ndarray
    n_rungs: np.ndarray
    pair_id: np.ndarray  # (target, A, B) as one integer: a pair followed over A's rungs
    rung: np.ndarray
    cost: np.ndarray
    full_cost: np.ndarray  # what A spends without a forecast stop


def build_pairs(name: str, per_target: list[dict], w: fb.Workload) -> tuple[Pairs, list[Judged]]:
    rows, label, jidx, bars, nr, pid, rungs, cost, full = [], [], [], [], [], [], [], [], []
    all_judged: list[Judged] = []
    for ti, entry in enumerate(per_target):
        target = Target.parse(entry["target"])
        truths = entry["truths"]
        reaching = [i for i, t in enumerate(truths) if math.isfinite(t)]
        curves = {i: (w.runs[i].samples, _gaps(w.runs[i].metric, target)) for i in range(len(w.runs))}
        base = len(all_judged)
        all_judged.extend(entry["judged"])
        for j, judged in enumerate(entry["judged"]):
            a = judged.run
            run_a = w.runs[a]
            first = float(run_a.samples[FIRST_RUNG - 1])
            for b in reaching:
                if b == a:
                    continue
                t_b = truths[b]
                if judged.cost >= (1.0 + EXACT_MARGIN) * t_b:
                    continue
                bar = (1.0 + MARGIN) * t_b
                a_costs, a_gaps = curves[a]
                b_costs, b_gaps = curves[b]
                k = judged.report + 1
                # The forecast's probability (the first feature) depends on the fold's calibration.
                rows.append(
                    pair_features(0.5, a_costs[:k], a_gaps[:k], run_a.horizon, b_costs, b_gaps, t_b, bar)
                )
                truth_a = truths[a]
                label.append(truth_a <= bar)
                jidx.append(base + j)
                bars.append(bar)
                end = min(run_a.horizon, bar)
                nr.append(max(judged.rung + 1, _rung_index(end, first) + 1))
                pid.append((ti * 100000 + a) * 100000 + b)
                rungs.append(judged.rung)
                cost.append(judged.cost)
                full.append(min(truth_a, (1.0 + EXACT_MARGIN) * t_b, run_a.horizon))
    pairs = Pairs(
        name,
        np.asarray(rows, dtype=float).reshape(-1, len(FEATURES)),
        np.asarray(label, dtype=bool),
        np.asarray(jidx, dtype=int),
        np.asarray(bars, dtype=float),
        np.asarray(nr, dtype=int),
        np.asarray(pid, dtype=np.int64),
        np.asarray(rungs, dtype=int),
        np.asarray(cost, dtype=float),
        np.asarray(full, dtype=float),
    )
    return pairs, all_judged


def shipped_probabilities(pairs: Pairs, judged: list[Judged], cal: CrossingCalibration) -> np.ndarray:
    forecasts = {}
    out = np.empty(pairs.label.size)
    for n, (j, bar) in enumerate(zip(pairs.judged_index, pairs.bar, strict=True)):
        f = forecasts.get(j)
        if f is None:
            f = forecasts[j] = judged[j].raw.calibrated(cal)
        out[n] = f.probability_before(bar)
    return out


def life_stops(pairs: Pairs, score: np.ndarray, epsilon: float) -> tuple[float, float, int, int]:
    """Follow each (A, B) pair over A's rungs: stopped at the first rung where score < eps / n.

    Returns (share of winning pairs ever stopped, share of losing pairs' cost saved, winning
    pairs, pairs)."""
    return stops_of(pairs, score < epsilon / pairs.n_rungs)


def stops_of(pairs: Pairs, stop: np.ndarray) -> tuple[float, float, int, int]:
    """:func:`life_stops` for any per-rung stop decision ``stop`` (a pair ends at its first)."""
    order = np.lexsort((pairs.rung, pairs.pair_id))
    pid = pairs.pair_id[order]
    starts = np.flatnonzero(np.r_[True, pid[1:] != pid[:-1]])
    # A pair's rungs come in rising cost, so its cheapest stopped rung is its first stop.
    stop_cost = np.where(stop[order], pairs.cost[order], np.inf)
    first = np.minimum.reduceat(stop_cost, starts)
    won, full = pairs.label[order][starts], pairs.full_cost[order][starts]
    stopped = np.isfinite(first)
    lost = ~won
    won_stopped = float(stopped[won].mean()) if won.any() else math.nan
    spent = float(full[lost].sum())
    saved = float((full - np.where(stopped, first, full))[lost].sum())
    return won_stopped, (saved / spent if spent else math.nan), int(won.sum()), int(starts.size)


def choose_epsilon(fitting: list[tuple[Pairs, np.ndarray]]) -> float:
    """The largest epsilon whose winners-stopped share is <= 1% on every fitting workload."""
    best = 0.0
    for eps in EPSILONS:
        worst = max((life_stops(p, s, eps)[0] for p, s in fitting), default=0.0)
        if not worst > MAX_WINNERS_STOPPED:
            best = eps
    return best


def combined_stop(
    pairs: Pairs, shipped: np.ndarray, learned: np.ndarray, rule: tuple[float, float, float]
) -> np.ndarray:
    """Stop where the shipped probability is below ``eps / n``, or where both the shipped
    probability is below ``eps_shipped / n`` and the pairwise one below ``eps_pair / n``."""
    eps, eps_shipped, eps_pair = rule
    n = pairs.n_rungs
    return (shipped < eps / n) | ((shipped < eps_shipped / n) & (learned < eps_pair / n))


def choose_combined(
    eps: float, fitting: list[tuple[Pairs, np.ndarray, np.ndarray]]
) -> tuple[float, float, float]:
    """The (eps_shipped, eps_pair) of :func:`combined_stop`, with the shipped rule's own
    ``eps``, that saves the most of the losers' cost (median over the fitting workloads) while
    stopping <= 1% of the winners on every one of them; none allowed: the shipped rule alone."""
    best, best_saved = (eps, 0.0, 0.0), -1.0
    for eps_shipped in EPSILONS:
        for eps_pair in EPSILONS:
            rule = (eps, eps_shipped, eps_pair)
            results = [stops_of(p, combined_stop(p, s, q, rule)) for p, s, q in fitting]
            if max(r[0] for r in results) > MAX_WINNERS_STOPPED:
                continue
            saved = float(np.median([r[1] for r in results]))
            if saved > best_saved + 1e-12:
                best, best_saved = rule, saved
    return best


def fit_pairwise(fitting: list[Pairs]) -> ReachModel:
    """The logistic model on the fitting workloads' pairs, each workload weighing the same."""
    x = np.concatenate([p.features for p in fitting])
    y = np.concatenate([p.label for p in fitting])
    w = np.concatenate([np.full(p.label.size, 1.0 / max(p.label.size, 1)) for p in fitting])
    return ReachModel.fit(x, y, w)


def _probabilities(model: ReachModel, features: np.ndarray) -> np.ndarray:
    """:meth:`ReachModel.probability` of every row at once (it takes one vector; 640k rows per fold)."""
    z = (features - model.mean) / model.scale @ model.coef + model.intercept
    return 1.0 / (1.0 + np.exp(-np.clip(z, -700, 700)))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--data", type=Path, default=HERE / "data" / "corpus")
    parser.add_argument("--calibration-dir", type=Path, default=HERE / "data" / "calibrations_heldout")
    parser.add_argument("--jobs", type=int, default=1)
    parser.add_argument("--only", nargs="*", default=None, help="workloads (default: all)")
    parser.add_argument("--max-runs", type=int, default=None, help="only the first N runs of each workload")
    parser.add_argument("--cache", type=Path, default=fb.CACHE_DIR / "pairwise-judged-v2.pkl")
    args = parser.parse_args(argv)
    if args.max_runs is not None:
        args.cache = args.cache.with_suffix(f".first{args.max_runs}.pkl")
    files = sorted(args.data.glob("*.jsonl*"))
    if args.only:
        files = [f for f in files if f.name.split(".")[0] in args.only]

    cache: dict[str, list[dict]] = {}
    if args.cache.exists():
        cache = pickle.loads(args.cache.read_bytes())
    todo = [f for f in files if f.name.split(".")[0] not in cache]
    t0 = time.time()
    if todo:
        with ProcessPoolExecutor(max_workers=args.jobs) as pool:
            for name, per_target in pool.map(partial(judge_runs, max_runs=args.max_runs), todo):
                cache[name] = per_target
                print(f"  judged {name} ({time.time() - t0:.0f} s)", file=sys.stderr, flush=True)
        args.cache.parent.mkdir(parents=True, exist_ok=True)
        args.cache.write_bytes(pickle.dumps(cache))

    workloads = {}
    for f in files:
        w = load_workload(f, args.max_runs)
        pairs, judged = build_pairs(w.name, cache[w.name], w)
        workloads[w.name] = (pairs, judged)
        print(
            f"  {w.name}: {pairs.label.size} pair-rungs, {pairs.label.mean():.1%} winners",
            file=sys.stderr,
            flush=True,
        )

    from sklearn.metrics import roc_auc_score

    print(
        "| held-out workload | AUC shipped / pairwise | ε shipped / pairwise (chosen on the others) "
        "| winners stopped: shipped / pairwise | losers' cost saved: shipped / pairwise "
        "| both at the default ε 0.01: winners stopped, shipped / pairwise "
        "| cost saved, shipped / pairwise |"
    )
    print("|---|---|---|---|---|---|---|")
    combined_rows = []
    for held in workloads:
        cal = CrossingCalibration.load(args.calibration_dir / f"{held}.json")
        scored = {}
        for name, (pairs, judged) in workloads.items():
            p = shipped_probabilities(pairs, judged, cal)
            pairs.features[:, 0] = logit_feature(p)
            scored[name] = p
        fitting = [workloads[n][0] for n in workloads if n != held]
        model = fit_pairwise(fitting)
        learned = {n: _probabilities(model, workloads[n][0].features) for n in workloads}
        eps_shipped = choose_epsilon([(workloads[n][0], scored[n]) for n in workloads if n != held])
        eps_pair = choose_epsilon([(workloads[n][0], learned[n]) for n in workloads if n != held])
        pairs = workloads[held][0]
        auc_s = roc_auc_score(pairs.label, scored[held]) if 0 < pairs.label.mean() < 1 else math.nan
        auc_p = roc_auc_score(pairs.label, learned[held]) if 0 < pairs.label.mean() < 1 else math.nan
        ws, cs, _, _ = life_stops(pairs, scored[held], eps_shipped)
        wp, cp, _, _ = life_stops(pairs, learned[held], eps_pair)
        wd, cd, _, _ = life_stops(pairs, scored[held], 0.01)
        wdp, cdp, _, _ = life_stops(pairs, learned[held], 0.01)
        print(
            f"| {held} | {auc_s:.3f} / {auc_p:.3f} | {eps_shipped:g} / {eps_pair:g} | {ws:.1%} / {wp:.1%} "
            f"| {cs:.1%} / {cp:.1%} | {wd:.1%} / {wdp:.1%} | {cd:.1%} / {cdp:.1%} |",
            flush=True,
        )
        fitting_scores = [(workloads[n][0], scored[n], learned[n]) for n in workloads if n != held]
        rule = choose_combined(eps_shipped, fitting_scores)
        wc, cc, _, _ = stops_of(pairs, combined_stop(pairs, scored[held], learned[held], rule))
        combined_rows.append(
            f"| {held} | {rule[0]:g}; {rule[1]:g}, {rule[2]:g} | {ws:.1%} / {wc:.1%} | {cs:.1%} / {cc:.1%} "
            f"| {cc / cs if cs > 0 else math.inf:.2f} |"
        )
    print("\nCombined: the shipped rule, or both scores low (ε; ε_shipped, ε_pair chosen on the others)\n")
    print(
        "| held-out workload | ε; ε_shipped, ε_pair | winners stopped: shipped / combined "
        "| losers' cost saved: shipped / combined | × shipped |"
    )
    print("|---|---|---|---|---|")
    print("\n".join(combined_rows))
    print(f"\n({time.time() - t0:.0f} s)", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
