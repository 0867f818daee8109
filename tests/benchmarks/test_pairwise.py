"""``benchmarks/pairwise.py``: the pruner's life-budget accounting of pairs, and the script held out.

The accounting is what the table's verdict rests on (a pair is stopped at its first rung below
``epsilon / rungs``, and the cost saved is counted from there), so it is checked on pairs made up
here; the script then runs as a user runs it, on three corpus workloads cut to their first runs.
"""

from __future__ import annotations

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
WORKLOADS = ("regression_r2", "logreg_digits", "friedman_mse")


def test_a_pair_is_stopped_at_its_first_rung_below_the_budget_and_saves_the_rest_of_its_cost(
    benchmark_script: Callable[[str], ModuleType],
) -> None:
    pw = benchmark_script("pairwise")
    # Three pairs, two rungs each (costs 100 and 200, 2 rungs: the threshold is eps / 2).
    # Pair 1 would have won; pair 2 loses and is stopped at its second rung; pair 3 loses and
    # is never stopped.
    pid = np.array([1, 1, 2, 2, 3, 3], dtype=np.int64)
    pairs = pw.Pairs(
        workload="made-up",
        features=np.zeros((6, len(pw.FEATURES))),
        label=np.array([True, True, False, False, False, False]),
        judged_index=np.zeros(6, dtype=int),
        bar=np.full(6, 1000.0),
        n_rungs=np.full(6, 2),
        pair_id=pid,
        rung=np.array([0, 1, 0, 1, 0, 1]),
        cost=np.array([100.0, 200.0, 100.0, 200.0, 100.0, 200.0]),
        full_cost=np.array([500.0, 500.0, 800.0, 800.0, 1200.0, 1200.0]),
    )
    score = np.array([0.5, 0.004, 0.2, 0.004, 0.3, 0.3])
    winners_stopped, saved, winners, _ = pw.life_stops(pairs, score, epsilon=0.01)
    assert winners == 1 and winners_stopped == 1.0  # 0.004 < 0.01 / 2 at the winner's 2nd rung
    assert saved == pytest.approx((800.0 - 200.0) / (800.0 + 1200.0))
    # A budget of zero stops nothing; the order of the rows does not matter.
    assert pw.life_stops(pairs, score, epsilon=0.0)[:2] == (0.0, 0.0)
    shuffled = np.array([5, 3, 1, 0, 4, 2])
    moved = pw.Pairs(**{k: (v[shuffled] if isinstance(v, np.ndarray) else v) for k, v in vars(pairs).items()})
    assert pw.life_stops(moved, score[shuffled], epsilon=0.01)[:2] == (1.0, saved)
    # The epsilon chosen on fitting workloads stops at most 1% of their winners.
    assert pw.choose_epsilon([(pairs, score)]) == 0.005


@pytest.mark.skipif(not CORPUS.exists(), reason="the curve corpus is not in this checkout")
def test_the_script_scores_each_workload_with_a_model_fitted_on_the_others(tmp_path: Path) -> None:
    env = {**os.environ, "PYTHONPATH": str(ROOT), "OMP_NUM_THREADS": "1"}
    cmd = [sys.executable, str(ROOT / "benchmarks" / "pairwise.py"), "--only", *WORKLOADS]
    cmd += ["--max-runs", "24", "--cache", str(tmp_path / "judged.pkl")]
    done = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=300, check=False)
    assert done.returncode == 0, done.stderr[-2000:]
    first, combined = done.stdout.split("\n\nCombined:")
    rows = [line for line in first.splitlines() if line.startswith("| ")]
    assert [row.split(" | ")[0].strip("| ") for row in rows[1:]] == sorted(WORKLOADS)
    for row in rows[1:]:
        aucs = [float(x) for x in re.findall(r"\b[01]\.\d{3}\b", row.split(" | ")[1])]
        assert len(aucs) == 2 and all(0.0 <= a <= 1.0 for a in aucs)
        shares = [float(x) / 100 for x in re.findall(r"([\d.]+)%", row)]
        assert len(shares) == 8 and all(0.0 <= s <= 1.0 for s in shares)
    # The combined rule only ever stops more than the shipped rule alone: it saves at least as much.
    rows = [line.split(" | ") for line in combined.splitlines() if line.startswith("| ")][1:]
    assert [row[0].strip("| ") for row in rows] == sorted(WORKLOADS)
    for row in rows:
        shipped, both = (float(x) for x in re.findall(r"([\d.]+)%", row[3]))
        assert both >= shipped
    assert (tmp_path / "judged.first24.pkl").exists()  # the slow stage is kept for the next run
