"""The held-out replay benchmark (``benchmarks/replay_pruners.py``), run as a user runs it.

One corpus workload, one seed, a small budget: each workload's studies calibrate with its own
held-out table from ``--calibration-dir``, rows go to a gzip results file that a second run
resumes (running nothing again), and a missing held-out table is a one-line error.
"""

from __future__ import annotations

import gzip
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
CORPUS = ROOT / "benchmarks" / "data" / "corpus"
WORKLOAD = "mlp_wine_narrow"
METHODS = ("tpe/none", "tpe/time_to_target:epsilon=0.03")


def _run(tmp_path: Path, *args: str) -> subprocess.CompletedProcess[str]:
    data = tmp_path / "data"
    if not data.exists():
        data.mkdir()
        shutil.copy(CORPUS / f"{WORKLOAD}.jsonl.gz", data)
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    cmd = [sys.executable, str(ROOT / "benchmarks" / "replay_pruners.py"), "--data", str(data)]
    cmd += ["--seeds", "1", "--budget", "2", "--methods", *METHODS, *args]
    return subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=300, check=False)


@pytest.mark.skipif(not CORPUS.exists(), reason="the curve corpus is not in this checkout")
def test_replays_calibrate_per_workload_and_resume_from_a_gzip_results_file(tmp_path: Path) -> None:
    folds = tmp_path / "folds"
    folds.mkdir()
    out = tmp_path / "rows.jsonl.gz"

    missing = _run(tmp_path, "--calibration-dir", str(folds), "--out", str(out))
    assert missing.returncode == 2
    assert "Traceback" not in missing.stderr
    assert f"no held-out calibration for {WORKLOAD}" in missing.stderr
    assert "--write-heldout-calibrations" in missing.stderr
    assert not out.exists()

    # Any table loads; this test is about which one each study is given, not its figures.
    shutil.copy(ROOT / "convtune" / "curves" / "calibration.json", folds / f"{WORKLOAD}.json")
    done = _run(tmp_path, "--calibration-dir", str(folds), "--out", str(out))
    assert done.returncode == 0, done.stderr[-2000:]
    assert "2 studies to run" in done.stderr
    with gzip.open(out, "rt") as f:
        rows = [json.loads(line) for line in f]
    assert sorted(r["method"] for r in rows) == sorted(METHODS)
    assert all(r["grid"] == WORKLOAD and r["seed"] == 0 and r["spent"] >= 2 for r in rows)
    assert f"| {WORKLOAD} | " in done.stdout  # the all-methods table
    # The every-setting table, with its count of near-best configurations stopped (one workload:
    # no other to choose a setting on, so no held-out row).
    assert "| time_to_target, ε 0.03 | " in done.stdout and " by a forecast |" in done.stdout

    again = _run(tmp_path, "--calibration-dir", str(folds), "--out", str(out))
    assert again.returncode == 0, again.stderr[-2000:]
    assert "0 studies to run" in again.stderr
    with gzip.open(out, "rt") as f:
        assert len(f.readlines()) == len(rows)
