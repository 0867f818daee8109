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
"""

from __future__ import annotations

import argparse
import math
import sys
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import NamedTuple

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

from forecast import CUTS, equal_workloads, load_all, max_gap, targets_for  # noqa: E402

from convtune.curves import time_to_target  # noqa: E402
from convtune.curves._calibration import fit_threshold  # noqa: E402
from convtune.curves._reach import CurveSummary, reach_features  # noqa: E402

NEVER_SHARE = 0.05  # issue 16: at most this share of the reaching runs called "never"
CALLED_SHARE = 0.80  # issue 16: at least this share of the non-reaching runs called so
MIN_EACH = 20  # reaching and non-reaching cases a held-out workload needs to be scored
_CLIP = 5.0


@dataclass
class Cases:
    """The cases of one cut: a row of features per (workload, target, run)."""

    workload: np.ndarray  # names, "name@folder"
    reached: np.ndarray  # 1.0 when the run crossed the target within its planned run
    features: np.ndarray


def shape_features(summary: CurveSummary) -> list[float]:
    """Three numbers of the curve's shape that the reach model does not read: how much of the
    distance left the latest half of the curve covered, how many evaluations there are, and how
    far the curve has moved over its whole range against the distance left."""
    y, tiny = summary.y, 1e-12
    left = max(float(np.min(y)) - summary.y_target, tiny)
    half = max(2, y.size // 2)
    recent = float(y[-half]) - float(np.min(y[-half:]))
    return [math.log(max(recent, tiny) / left), float(y.size), math.log(max(float(np.ptp(y)), tiny) / left)]


def build(paths: list[Path], cuts: list[float]) -> dict[float, Cases]:
    """The cases of every cut, from one pass over the recorded runs."""
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
                    summary = CurveSummary.of(c, v, target, run.schedule, run.horizon)
                    if summary.c.size < 2:
                        continue
                    # The reach model's features at the planned end, without the raw share (index 0).
                    x = reach_features(summary, 0.5, run.horizon)[1:]
                    extra = np.clip(shape_features(summary), -_CLIP, _CLIP)
                    rows[cut].append((label, float(truth <= run.horizon), np.concatenate([x, extra])))
    return {cut: _cases(found) for cut, found in rows.items()}


def _cases(rows: list[tuple[str, float, np.ndarray]]) -> Cases:
    widths = Counter(len(r[2]) for r in rows)
    width = widths.most_common(1)[0][0] if widths else 0
    kept = [r for r in rows if len(r[2]) == width]  # runs without a schedule, if any, left out
    return Cases(
        np.array([r[0] for r in kept]),
        np.array([r[1] for r in kept]),
        np.array([r[2] for r in kept]).reshape(len(kept), width),
    )


def held_out_scores(cases: Cases, held: str, model: str) -> tuple[np.ndarray, float]:
    """The held-out workload's probabilities of reaching from a model fitted on every other
    workload, and the threshold a product could ship: fitted on the model's own probabilities of
    the fitting workloads' reaching runs as convtune fits its reach thresholds
    (:func:`convtune.curves._calibration.fit_threshold`: the largest under which 5% of them fall,
    each workload weighing the same)."""
    from sklearn.ensemble import HistGradientBoostingClassifier
    from sklearn.linear_model import LogisticRegression
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler

    train = cases.workload != held
    weight = equal_workloads(cases.workload[train].tolist())
    weight *= weight.size / weight.sum()
    x, y = cases.features[train], cases.reached[train]
    if model == "logistic":
        fitted = make_pipeline(StandardScaler(), LogisticRegression(max_iter=2000))
        fitted.fit(x, y, logisticregression__sample_weight=weight)
    else:
        fitted = HistGradientBoostingClassifier(
            max_iter=150, learning_rate=0.05, max_leaf_nodes=15, min_samples_leaf=100, random_state=0
        ).fit(x, y, sample_weight=weight)
    reaching = y == 1
    fit_scores = fitted.predict_proba(x[reaching])[:, 1]
    threshold = fit_threshold(
        fit_scores, np.ones(fit_scores.size), np.zeros(fit_scores.size), weight[reaching]
    )
    return fitted.predict_proba(cases.features[~train])[:, 1], threshold


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
    args = parser.parse_args(argv)
    report = {str(p) for p in args.report} if args.report else None
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
                scores, fitted = held_out_scores(cases, held, model)
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
