"""The reach bound (``benchmarks/reach_frontier.py``): the oracle threshold's trade on scores with a
known answer, and the script as a user runs it on three corpus workloads."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from types import ModuleType

import numpy as np
import pytest

ROOT = Path(__file__).resolve().parents[2]
CORPUS = ROOT / "benchmarks" / "data" / "corpus"


def test_a_perfect_score_meets_both_bars_and_a_blind_one_neither(
    benchmark_script: Callable[[str], ModuleType],
) -> None:
    frontier = benchmark_script("reach_frontier").frontier
    reached = np.array([1.0] * 100 + [0.0] * 100)
    auc, called, never, *_ = frontier(np.where(reached == 1, 1.0, 0.0) + np.linspace(0, 0.5, 200), reached)
    assert (auc, called, never) == (1.0, 1.0, 0.0)
    # Read as probabilities, 1 for every run that reaches and 0 for the rest are perfect; 0.5 for
    # all scores 0.25, its one decile on the observed rate.
    perfect, even = frontier(reached, reached), frontier(np.full(200, 0.5), reached)
    assert (perfect.brier, perfect.worst_decile, even.brier, even.worst_decile) == (0.0, 0.0, 0.25, 0.0)
    # A threshold fitted elsewhere: between the two groups it gets both right, above them neither.
    between, above = frontier(reached, reached, 0.5), frontier(reached, reached, 2.0)
    assert (between.never_fitted, between.called_fitted) == (0.0, 1.0)
    assert (above.never_fitted, above.called_fitted) == (1.0, 1.0)
    # The same scores for both: below the 5% quantile of the reaching runs lie 5% of the others too.
    same = np.tile(np.linspace(0.0, 1.0, 100), 2)
    auc, called, never, *_ = frontier(same, reached)
    assert auc == pytest.approx(0.5)
    assert called == pytest.approx(0.05, abs=0.011)
    assert never == pytest.approx(0.80, abs=0.011)


@pytest.mark.skipif(not CORPUS.exists(), reason="the curve corpus is not in this checkout")
def test_the_script_scores_each_workload_held_out(tmp_path: Path) -> None:
    data = [str(CORPUS / f"{w}.jsonl.gz") for w in ("regression_r2", "logreg_digits", "friedman_mse")]
    cmd = [sys.executable, str(ROOT / "benchmarks" / "reach_frontier.py"), "--data", *data]
    cmd += ["--cuts", "0.5", "--models", "logistic", "--report", str(CORPUS)]
    env = {**os.environ, "HOME": str(tmp_path), "PYTHONPATH": str(ROOT)}
    done = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=300, check=False)
    assert done.returncode == 0, done.stderr[-2000:]
    rows = [r for r in done.stdout.splitlines() if r.startswith("| 50% | logistic | ")]
    per_workload = [r for r in rows if "@corpus |" in r]
    assert len(per_workload) >= 2  # each scored one fitted on the others
    summary = rows[-1]
    assert re.match(
        rf"\| 50% \| logistic \| {len(per_workload)} \| 0\.\d{{3}} \| \d+% \| \d of {len(per_workload)} \| "
        rf"\d+% \| \d+% / \d+% \(\d of {len(per_workload)} ≤ 5%, \d ≥ 80%\) \| 0\.\d{{3}}, (\d\.\d\d|nan) \|$",
        summary,
    )


@pytest.mark.parametrize("model", ["logistic", "boosting"])
def test_a_threshold_fitted_on_other_workloads_calls_a_cleanly_separated_one_right(
    benchmark_script: Callable[[str], ModuleType], model: str
) -> None:
    script = benchmark_script("reach_frontier")
    rng = np.random.default_rng(0)
    reached = np.tile([1.0, 0.0], 300)
    # One feature that tells the two apart with a little noise, one that says nothing.
    features = np.column_stack([reached * 4.0 + rng.normal(0, 0.5, 600), rng.normal(0, 1, 600)])
    cases = script.Cases(np.repeat(["a@x", "b@x", "c@x"], 200), reached, features)
    scores, threshold = script.held_out_scores(cases, "c@x", model)
    held = cases.workload == "c@x"
    trade = script.frontier(scores, reached[held], threshold)
    assert 0.0 < threshold <= 0.6  # on convtune's threshold grid (its top, here), below the reaching runs
    assert trade.auc > 0.99 and trade.never_fitted <= 0.05 and trade.called_fitted >= 0.8


@pytest.mark.skipif(not CORPUS.exists(), reason="the curve corpus is not in this checkout")
def test_write_trees_adds_reach_trees_that_a_forecast_reads(tmp_path: Path) -> None:
    from convtune.curves import CrossingCalibration, forecast_time_to_target
    from convtune.curves._calibration import DEFAULT_PATH
    from convtune.curves._reach import CurveSummary, tree_features

    data = [str(CORPUS / f"{w}.jsonl.gz") for w in ("regression_r2", "logreg_digits", "friedman_mse")]
    out = tmp_path / "with_trees.json"
    cmd = [sys.executable, str(ROOT / "benchmarks" / "reach_frontier.py"), "--data", *data]
    cmd += ["--write-trees", str(out)]
    env = {**os.environ, "HOME": str(tmp_path), "PYTHONPATH": str(ROOT)}
    done = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=300, check=False)
    assert done.returncode == 0, done.stderr[-2000:]
    table = CrossingCalibration.load(out)
    # The same workloads named in another order, no call before 15% of the run: the same table
    # but for the first bucket's thresholds, 0.
    again = tmp_path / "again.json"
    cmd = [sys.executable, str(ROOT / "benchmarks" / "reach_frontier.py"), "--data", *data[::-1]]
    cmd += ["--write-trees", str(again), "--first-never-bucket", "1"]
    done = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=300, check=False)
    assert done.returncode == 0, done.stderr[-2000:]
    first, second = json.loads(out.read_text()), json.loads(again.read_text())
    for head in ("sched", "blind"):
        assert second["trees"][head]["thresholds"][0] == 0.0
        assert first["trees"][head]["thresholds"][0] > 0.0
        second["trees"][head]["thresholds"][0] = first["trees"][head]["thresholds"][0]
    assert second == first
    shipped = CrossingCalibration.load(DEFAULT_PATH)
    assert table.maps.keys() == shipped.maps.keys() and table.thresholds == shipped.thresholds
    assert set(table.trees) == {"sched", "blind"}
    for trees in table.trees.values():
        assert len(trees.thresholds) == 4 and all(0.0 <= t <= 0.6 for t in trees.thresholds)
    # A smooth prefix at a quarter of its run, inside the fitted range: the chance within the run
    # is the trees'. Seen to 91% of its run (the fitting cuts stop at 80%): the shipped maps'.
    c = np.arange(1.0, 11.0)
    y = 1.0 + 1.0 / c
    trees = table.trees["blind"]
    inside = tree_features(CurveSummary.of(c, y, "val_loss<=1.02", horizon=40.0))
    assert trees.covers(inside)
    f = forecast_time_to_target(c, y, "val_loss<=1.02", horizon=40.0, calibration=table)
    assert f.probability == pytest.approx(trees.probability(inside), abs=1e-9)
    assert not trees.covers(tree_features(CurveSummary.of(c, y, "val_loss<=1.02", horizon=11.0)))
    late = forecast_time_to_target(c, y, "val_loss<=1.02", horizon=11.0, calibration=table)
    assert late == forecast_time_to_target(c, y, "val_loss<=1.02", horizon=11.0, calibration=shipped)
