"""``benchmarks/pfn.py``: the synthetic prior's labels, the crossing distribution's reading, and
the script as a user runs it (a network trained for a few steps, scored on two corpus workloads).

The prior's labels are what the network learns, so they are checked against the curves they come
from: a prefix never already reached, and "not within the run" exactly when no later evaluation
reaches. The corpus check runs train then evaluate on the first runs of two workloads.
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
WORKLOADS = ("regression_r2", "logreg_digits")


def test_prior_draws_are_unreached_at_the_cut_and_labelled_by_their_first_crossing(
    benchmark_script: Callable[[str], ModuleType],
) -> None:
    pfn = benchmark_script("pfn")
    rng = np.random.default_rng(3)
    drawn = [c for c in (pfn.sample_curve(rng) for _ in range(400)) if c is not None]
    assert len(drawn) > 150
    labels = np.array([c["label"] for c in drawn])
    # Both outcomes are common, so the network cannot learn one answer.
    assert 0.15 < np.mean(labels == pfn.BINS) < 0.7
    for c in drawn:
        assert np.all(c["gap"] > 0) and len(c["x"]) >= 2
        assert c["x"][-1] <= 0.6 + 1e-9 and c["lr"].shape == (pfn.GRID,)
        if c["label"] < pfn.BINS:  # crossing bins lie after the cut
            assert (c["label"] + 1) / pfn.BINS > c["x"][-1]
    tokens, masks, lab = pfn.synthetic_batch(8, np.random.default_rng(0))
    assert tokens.shape == (8, pfn.MAX_PREFIX + pfn.SCHEDULE_TOKENS, pfn.FEATURES)
    # Padding is masked; the schedule tokens never are.
    assert masks[:, pfn.MAX_PREFIX :].sum() == 0 and masks[:, : pfn.MAX_PREFIX].any()


def test_reach_by_reads_the_cumulative_bins_linearly_within_one(
    benchmark_script: Callable[[str], ModuleType],
) -> None:
    pfn = benchmark_script("pfn")
    cdf = np.linspace(0.0, 0.5, pfn.BINS + 1)[1:]  # 0.5 reached within the run, evenly
    assert pfn.reach_by(cdf, 1.0) == pytest.approx(0.5)
    assert pfn.reach_by(cdf, 0.5) == pytest.approx(0.25)
    assert pfn.reach_by(cdf, 0.5 / pfn.BINS) == pytest.approx(0.5 * cdf[0])
    values = [pfn.reach_by(cdf, s) for s in np.linspace(0.0, 1.0, 37)]
    assert values == sorted(values)


@pytest.mark.skipif(not CORPUS.exists(), reason="the curve corpus is not in this checkout")
def test_the_script_trains_on_the_prior_and_scores_held_out_workloads(tmp_path: Path) -> None:
    env = {**os.environ, "PYTHONPATH": str(ROOT), "OMP_NUM_THREADS": "1"}
    script = str(ROOT / "benchmarks" / "pfn.py")
    model = tmp_path / "pfn.pt"
    done = subprocess.run(
        [sys.executable, script, "train", "--out", str(model), "--steps", "20", "--data", "600"],
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    assert model.exists() and "synthetic held-out" in done.stdout
    cmd = [sys.executable, script, "evaluate", "--model", str(model), "--only", *WORKLOADS]
    cmd += ["--max-runs", "12", "--no-home", "--markdown", str(tmp_path / "pfn.md")]
    env["HOME"] = str(tmp_path)  # the forecast benchmark's raw-forecast cache goes there
    done = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=300, check=False)
    assert done.returncode == 0, done.stderr[-2000:]
    rows = [line for line in done.stdout.splitlines() if line.startswith("| ")]
    assert sorted({row.split(" | ")[0].strip("| ") for row in rows[1:]}) == sorted(WORKLOADS)
    assert len(rows) == 1 + 3 * len(WORKLOADS)  # the header, then a row per workload and cut
    for row in rows[1:]:
        aucs = [float(x) for x in re.findall(r"\b(?:[01]\.\d{3}|nan)\b", row)]
        # Two AUCs (reach within the run, reached by t) for each of shipped, PFN and combined.
        assert len(aucs) == 6 and all(np.isnan(a) or 0.0 <= a <= 1.0 for a in aucs)
        shares = [float(x) / 100 for x in re.findall(r"(\d+)%", row.split(" | ", 2)[2])]
        assert len(shares) == 9 and all(0.0 <= x <= 1.0 for x in shares)
    # A summary line per cut for the PFN and for the combination.
    assert (tmp_path / "pfn.md").read_text().count("median AUC reached by t") == 6
