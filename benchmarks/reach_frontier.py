"""How well can a curve's first part say whether it reaches within its run? A bound, not a forecaster.

Issue 16 asks two things of the same call at a quarter of the planned run: among runs that reach
later, at most 5% called "never"; among runs that never reach, at least 80% called "not within
the run". Both are one threshold on one score (the probability of reaching within the run), so
together they ask for a separation: a score under which the 5% lowest of the reaching runs still
stand above 80% of the non-reaching ones. This benchmark measures the best separation it can
find, leave-one-workload-out, and gives the threshold every advantage:

* the score is a classifier of "reaches within the run" fitted on every *other* workload (each
  workload weighing the same) on the curve features of the shipped reach model
  (:func:`convtune.curves._reach.reach_features` at the planned end, the schedule features
  included; the raw forecast's share left out, which keeps this cheap) and three more of the
  curve's shape: a logistic regression, as the shipped model is, and scikit-learn's gradient
  boosting, which may read any interaction of them;
* on the held-out workload the threshold is an oracle's, chosen on that workload's own answers:
  exactly 5% of its reaching runs below it. The share of its non-reaching runs below the same
  threshold is the most that any threshold on that score could call "not within the run" while
  keeping "never" at 5%. (The forecaster's "never" also counts finite estimates beyond twice the
  true crossing, so its trade can only be worse.)

A workload "could meet both" when that share is at least 80%. The last column is what a product
gets instead of the oracle: a threshold fitted on the *other* workloads' reaching runs as convtune
fits its reach thresholds (``fit_threshold``: the largest on its grid under which 5% of them fall,
each workload weighing the same), applied to the held-out one; the last, how well the scores
read as a probability of reaching (the Brier score, and the worst gap of a decile holding at
least 30 cases from its observed rate, as ``benchmarks/forecast.py`` scores ``probability``). Targets and cuts are
``benchmarks/forecast.py``'s (targets that ~35% and ~60% of the complete runs reach; cuts at
10/25/50% of the planned run; runs already at the target at the cut left out).

Usage::

    python benchmarks/reach_frontier.py --data benchmarks/data/corpus* --cuts 0.25 0.5
    python benchmarks/reach_frontier.py --data benchmarks/data/corpus* --report benchmarks/data/corpus_fresh28

``--pooled`` fits each score on the cases of every cut in :data:`TREE_CUTS` at once, as the
shipped trees are; ``--write-trees OUT`` writes the table a forecast reads them from (check AA in
docs/benchmarks.md): ``--base`` (the shipped ``calibration.json``) with
:class:`convtune.curves.ReachTrees` fitted on every workload of ``--data``::

    python benchmarks/reach_frontier.py --data benchmarks/data/corpus* --write-trees convtune/curves/calibration.json
"""

from __future__ import annotations

import argparse
import math
import sys
from collections import Counter
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, NamedTuple

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

from forecast import CUTS, equal_workloads, load_all, max_gap, targets_for  # noqa: E402

from convtune.curves import CrossingCalibration, ReachTrees, time_to_target  # noqa: E402
from convtune.curves._calibration import DEFAULT_PATH, PROGRESS_EDGES, fit_threshold  # noqa: E402
from convtune.curves._reach import CurveSummary, tree_features  # noqa: E402

NEVER_SHARE = 0.05  # issue 16: at most this share of the reaching runs called "never"
CALLED_SHARE = 0.80  # issue 16: at least this share of the non-reaching runs called so
MIN_EACH = 20  # reaching and non-reaching cases a held-out workload needs to be scored
# The cuts the shipped trees are fitted on (``--write-trees``): two or more in each bucket of
# the share of the run seen that the calibration tells apart.
TREE_CUTS = (0.1, 0.2, 0.3, 0.4, 0.5, 0.65, 0.8)
PROGRESS = 1  # the column of the share of the run seen in tree_features


@dataclass
class Cases:
    """The cases of one cut: a row of features per (workload, target, run)."""

    workload: np.ndarray  # names, "name@folder"
    reached: np.ndarray  # 1.0 when the run crossed the target within its planned run
    features: np.ndarray


def build(paths: list[Path], cuts: list[float], schedule: bool = True) -> dict[float, Cases]:
    """The cases of every cut, from one pass over the recorded runs; ``schedule=False``: as a
    forecast that is not told the LR schedule sees them."""
    rows: dict[float, list[tuple[str, float, np.ndarray]]] = {cut: [] for cut in cuts}
    for w in load_all(paths, home=False):
        source = Path(w.source)
        label = f"{w.name}@{(source if source.is_dir() else source.parent).name}"  # name@folder
        for target in targets_for(w):
            for run in w.runs:
                truth = math.inf if run.diverged else time_to_target(run.samples, run.metric, target)
                for cut in cuts:
                    seen = run.samples <= cut * run.horizon + 1e-9
                    c, v = run.samples[seen], run.metric[seen]
                    if math.isfinite(time_to_target(c, v, target)):
                        continue  # already at the target: nothing to call
                    sched = run.schedule if schedule else None
                    summary = CurveSummary.of(c, v, target, sched, run.horizon)
                    if summary.c.size < 2:
                        continue
                    rows[cut].append((label, float(truth <= run.horizon), tree_features(summary)))
    return {cut: _cases(found) for cut, found in rows.items()}


def pooled(cases: list[Cases]) -> Cases:
    """The cases of several cuts as one set (the trees read the share of the run seen), in the
    order of their workloads' names: the boosted trees' validation split and binning sample
    follow the order of the rows, so a table must not depend on the order of ``--data``."""
    workload = np.concatenate([c.workload for c in cases])
    order = np.argsort(workload, kind="stable")
    return Cases(
        workload[order],
        np.concatenate([c.reached for c in cases])[order],
        np.concatenate([c.features for c in cases])[order],
    )


def _cases(rows: list[tuple[str, float, np.ndarray]]) -> Cases:
    widths = Counter(len(r[2]) for r in rows)
    width = widths.most_common(1)[0][0] if widths else 0
    kept = [r for r in rows if len(r[2]) == width]  # runs without a schedule, if any, left out
    return Cases(
        np.array([r[0] for r in kept]),
        np.array([r[1] for r in kept]),
        np.array([r[2] for r in kept]).reshape(len(kept), width),
    )


def fit_scores(x: np.ndarray, y: np.ndarray, weight: np.ndarray, model: str) -> Any:
    """A scikit-learn classifier of "reaches within the run" (``predict_proba``)."""
    from sklearn.ensemble import HistGradientBoostingClassifier
    from sklearn.linear_model import LogisticRegression
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler

    if model == "logistic":
        fitted = make_pipeline(StandardScaler(), LogisticRegression(max_iter=2000))
        return fitted.fit(x, y, logisticregression__sample_weight=weight)
    return HistGradientBoostingClassifier(
        max_iter=150, learning_rate=0.05, max_leaf_nodes=15, min_samples_leaf=100, random_state=0
    ).fit(x, y, sample_weight=weight)


def buckets(features: np.ndarray) -> np.ndarray:
    """The calibration's bucket of the share of the run seen (:data:`PROGRESS_EDGES`) of each row."""
    return np.searchsorted(PROGRESS_EDGES, features[:, PROGRESS], side="right")


def reach_threshold(scores: np.ndarray, workloads: np.ndarray, max_never: float = NEVER_SHARE) -> float:
    """The threshold a product could ship, fitted on the probabilities of fitting runs that
    reached as convtune fits its reach thresholds (:func:`convtune.curves._calibration.fit_threshold`:
    the largest under which ``max_never`` of them fall, each workload weighing the same)."""
    weight = equal_workloads(workloads.tolist())
    return fit_threshold(scores, np.ones(scores.size), np.zeros(scores.size), weight, max_never=max_never)


def held_out_scores(
    cases: Cases, held: str, model: str, train: Cases | None = None
) -> tuple[np.ndarray, float]:
    """The held-out workload's probabilities of reaching from a model fitted on every other
    workload (of ``train``, by default ``cases`` itself), and the threshold a product could ship
    (:func:`reach_threshold` on the fitting runs of the held-out cases' bucket of the run seen)."""
    train = cases if train is None else train
    rows = train.workload != held
    weight = equal_workloads(train.workload[rows].tolist())
    weight *= weight.size / weight.sum()
    x, y = train.features[rows], train.reached[rows]
    fitted = fit_scores(x, y, weight, model)
    test = cases.features[cases.workload == held]
    same = (y == 1) & (buckets(x) == np.bincount(buckets(test)).argmax())
    threshold = reach_threshold(fitted.predict_proba(x[same])[:, 1], train.workload[rows][same])
    return fitted.predict_proba(test)[:, 1], threshold


def write_trees(
    paths: list[Path], base: Path, out: Path, max_never: float = NEVER_SHARE, first_never_bucket: int = 0
) -> None:
    """``base`` (a calibration table) with :class:`convtune.curves.ReachTrees` fitted on every
    workload of ``paths`` at :data:`TREE_CUTS`, one for forecasts told the schedule and one for
    those that are not, each with a reach threshold per bucket of the share of the run seen
    (under which ``max_never`` of the fitting runs that reach fall). Buckets before
    ``first_never_bucket`` get threshold 0: there the trees set ``probability`` but never call a
    run "not within the run", as the maps do not in the first bucket (check AE)."""
    trees = {}
    for head, schedule in (("sched", True), ("blind", False)):
        cases = pooled(list(build(paths, list(TREE_CUTS), schedule).values()))
        weight = equal_workloads(cases.workload.tolist())
        weight *= weight.size / weight.sum()
        fitted = fit_scores(cases.features, cases.reached, weight, "boosting")
        scores = fitted.predict_proba(cases.features)[:, 1]
        bucket = buckets(cases.features)
        thresholds = [
            reach_threshold(scores[sel], cases.workload[sel], max_never)
            for b in range(len(PROGRESS_EDGES) + 1)
            for sel in [(bucket == b) & (cases.reached == 1)]
        ]
        thresholds = [0.0 if b < first_never_bucket else t for b, t in enumerate(thresholds)]
        model = ReachTrees.from_sklearn(fitted, cases.features, thresholds)
        check = np.array([model.probability(x) for x in cases.features[:: max(1, len(scores) // 2000)]])
        assert np.allclose(check, scores[:: max(1, len(scores) // 2000)], atol=1e-9), "trees read back differ"
        trees[head] = model
        print(
            f"{head}: {len(cases.reached)} cases of {len(set(cases.workload.tolist()))} workloads, "
            f"thresholds by bucket {[round(t, 2) for t in thresholds]}",
            file=sys.stderr,
            flush=True,
        )
    replace(CrossingCalibration.load(base), trees=trees).save(out)


class Trade(NamedTuple):
    """What one held-out workload's scores allow (shares of its reaching / non-reaching runs)."""

    auc: float
    called_at_oracle: float  # non-reaching runs called so, the oracle's threshold at 5% "never"
    never_at_oracle: float  # "never", the oracle's threshold at 80% called so
    never_fitted: float  # "never" under the threshold fitted on the other workloads
    called_fitted: float  # non-reaching runs called so under it
    brier: float  # of the scores read as the probability of reaching
    worst_decile: float  # the largest gap of a decile of them (>= 30 cases) from its observed rate


def frontier(scores: np.ndarray, reached: np.ndarray, fitted: float = math.nan) -> Trade:
    """The held-out workload's :class:`Trade` of ``scores`` (higher: more likely to reach)."""
    from sklearn.metrics import roc_auc_score

    pos, neg = scores[reached == 1], scores[reached == 0]
    return Trade(
        float(roc_auc_score(reached, scores)),
        float(np.mean(neg < np.quantile(pos, NEVER_SHARE))),
        float(np.mean(pos <= np.quantile(neg, CALLED_SHARE))),
        float(np.mean(pos < fitted)),
        float(np.mean(neg < fitted)),
        float(np.mean((scores - reached) ** 2)),
        max_gap(scores.tolist(), reached.tolist()),
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--data", type=Path, nargs="+", required=True, help="grid files or folders")
    parser.add_argument("--cuts", type=float, nargs="*", default=[c for c in CUTS if c >= 0.25])
    parser.add_argument(
        "--report",
        type=Path,
        nargs="*",
        default=None,
        help="score only the workloads loaded from these (they must also be in --data); all by default",
    )
    parser.add_argument(
        "--models", nargs="*", default=["logistic", "boosting"], choices=["logistic", "boosting"]
    )
    parser.add_argument(
        "--pooled",
        action="store_true",
        help="fit each model on the cases of every cut in TREE_CUTS at once, as the shipped trees are "
        "(default: on the scored cut's cases only)",
    )
    parser.add_argument(
        "--write-trees",
        type=Path,
        default=None,
        metavar="OUT",
        help="write --base with ReachTrees fitted on every workload of --data to OUT, and stop",
    )
    parser.add_argument("--base", type=Path, default=DEFAULT_PATH, help="the table --write-trees adds to")
    parser.add_argument(
        "--max-never",
        type=float,
        default=NEVER_SHARE,
        help="--write-trees: the share of the fitting runs that reach left under each reach threshold",
    )
    parser.add_argument(
        "--first-never-bucket",
        type=int,
        default=0,
        help='--write-trees: no "not within the run" call in the buckets of the share of the run '
        "before this one (1: none before 15%% of the run)",
    )
    args = parser.parse_args(argv)
    if args.write_trees is not None:
        write_trees(args.data, args.base, args.write_trees, args.max_never, args.first_never_bucket)
        return 0
    report = {str(p) for p in args.report} if args.report else None
    train = pooled(list(build(args.data, list(TREE_CUTS)).values())) if args.pooled else None
    print(
        '| cut | model | workloads | ROC AUC (median) | non-reaching called so, with "never" at 5% '
        '(median) | could meet both | "never", with 80% called so (median) | with the threshold fitted '
        'on the other workloads: "never" / called so (median) | Brier score, worst decile gap (median) |'
    )
    print("|---|---|---|---|---|---|---|---|---|")
    for cut, cases in build(args.data, args.cuts).items():
        names = sorted(set(cases.workload.tolist()))
        if report is not None:
            names = [n for n in names if any(n.endswith("@" + Path(r).name) for r in report)]
        for model in args.models:
            rows = []
            for held in names:
                test = cases.workload == held
                n_reach = int(cases.reached[test].sum())
                if min(n_reach, int(test.sum()) - n_reach) < MIN_EACH:
                    continue
                scores, fitted = held_out_scores(cases, held, model, train)
                trade = frontier(scores, cases.reached[test], fitted)
                rows.append(trade)
                if report is not None:
                    print(
                        f"| {cut:.0%} | {model} | {held} | {trade.auc:.3f} | {trade.called_at_oracle:.0%} | "
                        f"{'yes' if trade.called_at_oracle >= CALLED_SHARE else 'no'} | "
                        f"{trade.never_at_oracle:.0%} | {trade.never_fitted:.0%} / {trade.called_fitted:.0%} | "
                        f"{trade.brier:.3f}, {trade.worst_decile:.2f} |"
                    )
            if not rows:
                continue
            col = {name: np.array([getattr(r, name) for r in rows]) for name in Trade._fields}
            n = len(rows)
            print(
                f"| {cut:.0%} | {model} | {n} | {np.median(col['auc']):.3f} | "
                f"{np.median(col['called_at_oracle']):.0%} | "
                f"{int(np.sum(col['called_at_oracle'] >= CALLED_SHARE))} of {n} | "
                f"{np.median(col['never_at_oracle']):.0%} | {np.median(col['never_fitted']):.0%} / "
                f"{np.median(col['called_fitted']):.0%} ({int(np.sum(col['never_fitted'] <= NEVER_SHARE))} of {n} "
                f"≤ 5%, {int(np.sum(col['called_fitted'] >= CALLED_SHARE))} ≥ 80%) | "
                f"{np.median(col['brier']):.3f}, {np.nanmedian(col['worst_decile']):.2f} |",
                flush=True,
            )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
