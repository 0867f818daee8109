"""The held-out forecast benchmark (``benchmarks/forecast.py``) on a slice of the corpus.

Run as a user runs it (a subprocess), on three corpus workloads cut to their first runs: every
reported workload is scored with a calibration fitted on the other two, and the shipped-table
command writes a calibration that convtune loads.
"""

from __future__ import annotations

import json
import math
import os
import re
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from types import ModuleType

import numpy as np
import pytest

from convtune.curves import CrossingCalibration
from convtune.curves._calibration import BLEND_GRID
from convtune.curves._reach import REFERENCE_FEATURES, within_feature_names

ROOT = Path(__file__).resolve().parents[2]
CORPUS = ROOT / "benchmarks" / "data" / "corpus"
WORKLOADS = ("regression_r2", "logreg_digits", "friedman_mse")


def _run(tmp_path: Path, *args: str) -> subprocess.CompletedProcess[str]:
    # HOME in tmp_path: the benchmark's cache of raw forecasts goes there, not to the user's.
    env = {**os.environ, "HOME": str(tmp_path), "PYTHONPATH": str(ROOT)}
    data = [str(CORPUS / f"{w}.jsonl.gz") for w in WORKLOADS]
    cmd = [sys.executable, str(ROOT / "benchmarks" / "forecast.py"), "--data", *data, "--no-home"]
    cmd += ["--max-runs", "12", "--cuts", "0.25", "0.5", *args]
    return subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=300, check=False)


def _convtune_rows(text: str, workload: str, method: str = "convtune") -> list[str]:
    # Every column but the last, CPU ms per call.
    return [r.rsplit(" | ", 1)[0] for r in text.splitlines() if r.startswith(f"| {workload} | {method} | ")]


@pytest.mark.skipif(not CORPUS.exists(), reason="the curve corpus is not in this checkout")
def test_the_benchmark_scores_each_workload_held_out_and_writes_a_loadable_calibration(
    tmp_path: Path,
) -> None:
    out = tmp_path / "tables.md"
    done = _run(tmp_path, "--markdown", str(out))
    assert done.returncode == 0, done.stderr[-2000:]
    text = out.read_text()
    assert text.startswith("Median over held-out workloads (" + ", ".join(WORKLOADS))
    for workload in WORKLOADS:
        assert f"| {workload} | convtune | " in text
        assert f"| {workload} | line2 | " in text
    assert "Median error by LR schedule" in text
    assert "| 80% cover | cover if calibrated |" in text
    assert "| cosine | " in text  # the corpus grids hold every schedule
    assert text == done.stdout.strip() + "\n"
    # A higher reach threshold only ever calls more runs "not within the run": both shares rise.
    rows = [line.split(" | ")[1:] for line in text.splitlines() if re.match(r"\| 0\.\d\d \| .*% / ", line)]
    assert len(rows) >= 5
    for column in range(2):
        pairs = [[int(n) for n in re.findall(r"(\d+)%", row[column])] for row in rows]
        assert all(len(pair) == 2 for pair in pairs)
        for lower, higher in zip(pairs, pairs[1:], strict=False):
            assert lower[0] <= higher[0] and lower[1] <= higher[1]
    assert re.search(r"\| ROC AUC of `probability` .* \| 0\.\d\d \(", text)
    # `probability` against the share that reached, by how far the prefix had moved (plateaus apart).
    moved = text.split("by how far the prefix moved from its start", 1)[1].split("\n\n", 2)[1]
    cells = re.findall(r"(\d\.\d\d) → (\d\.\d\d) \((\d+)\)", moved)
    assert cells and any(line.startswith("| all | ") for line in moved.splitlines())
    assert all(0 <= float(p) <= 1 and 0 <= float(o) <= 1 and int(n) >= 20 for p, o, n in cells)
    # The goals, each counted over the held-out workloads at each cut.
    goals = [line for line in text.splitlines() if re.fullmatch(r"\| [^|]+ \| \d of 3 \| \d of 3 \|", line)]
    # One table each for convtune, convtune-refs (the same forecasts, told the study's other runs),
    # convtune-line (the reach threshold moved by those runs' own forecasts) and convtune-shift
    # (`probability` shifted by them).
    assert len(goals) == 32 and sum(line.startswith('| "never" ≤ 5%') for line in goals) == 4
    for table in range(4):
        never, called, both = (
            [int(n) for n in re.findall(r"(\d) of 3", line)] for line in goals[8 * table : 8 * table + 3]
        )
        assert all(b <= min(n, c) for n, c, b in zip(never, called, both, strict=True))
        assert goals[8 * table + 4].startswith("| (a right forecast with these probabilities would cover")
    for workload in WORKLOADS:
        assert f"| {workload} | convtune-refs | " in text
    # Brier scores with and without the references: on plateau prefixes and on all of them.
    brier = text.split("Brier score of `probability`, convtune → convtune-refs", 1)[1].split("\n\n", 2)[1]
    scores = re.findall(r"(\d\.\d{3}) → (\d\.\d{3}) \((\d+)\)", brier)
    assert any(line.startswith("| all | ") for line in brier.splitlines())
    assert scores and all(0 <= float(a) <= 1 and 0 <= float(b) <= 1 and int(n) >= 20 for a, b, n in scores)

    written, folds = tmp_path / "calibration.json", tmp_path / "heldout"
    done = _run(tmp_path, "--write-calibration", str(written), "--write-heldout-calibrations", str(folds))
    assert done.returncode == 0, done.stderr[-2000:]
    # One calibration per workload for the replays that hold it out, fitted on the others only.
    assert sorted(p.name for p in folds.iterdir()) == sorted(f"{w}.json" for w in WORKLOADS)
    for workload in WORKLOADS:
        fold = CrossingCalibration.load(folds / f"{workload}.json")
        assert sorted(fold.fitted_on) == sorted(w for w in WORKLOADS if w != workload)
        assert fold.maps
    # --heldout-for rewrites only the named workloads' files; the others stay as they were.
    before = {p.name: p.read_bytes() for p in folds.iterdir()}
    for p in folds.iterdir():
        p.write_text("kept")
    done = _run(tmp_path, "--write-heldout-calibrations", str(folds), "--heldout-for", WORKLOADS[0])
    assert done.returncode == 0, done.stderr[-2000:]
    assert (folds / f"{WORKLOADS[0]}.json").read_bytes() == before[f"{WORKLOADS[0]}.json"]
    assert all((folds / f"{w}.json").read_text() == "kept" for w in WORKLOADS[1:])
    cal = CrossingCalibration.load(written)
    assert sorted(cal.fitted_on) == sorted(WORKLOADS)
    assert cal.maps and cal.thresholds
    assert cal.blends and set(cal.blends.values()) <= set(BLEND_GRID)
    assert any(k.startswith("blind") for k in cal.blends) and any(k.startswith("sched") for k in cal.blends)


@pytest.mark.skipif(not CORPUS.exists(), reason="the curve corpus is not in this checkout")
def test_tables_per_data_reports_each_folder_apart_from_one_held_out_run(tmp_path: Path) -> None:
    folder = tmp_path / "fresh"
    folder.mkdir()
    for workload in WORKLOADS[1:]:
        (folder / f"{workload}.jsonl.gz").write_bytes((CORPUS / f"{workload}.jsonl.gz").read_bytes())
    env = {**os.environ, "HOME": str(tmp_path), "PYTHONPATH": str(ROOT)}
    cmd = [sys.executable, str(ROOT / "benchmarks" / "forecast.py"), "--no-home", "--max-runs", "12"]
    cmd += ["--cuts", "0.25", "--data", str(CORPUS / f"{WORKLOADS[0]}.jsonl.gz"), str(folder)]
    together = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=300, check=False)
    apart = subprocess.run(
        [*cmd, "--tables-per-data"], env=env, capture_output=True, text=True, timeout=300, check=False
    )
    assert together.returncode == 0 and apart.returncode == 0, apart.stderr[-2000:]
    sections = apart.stdout.split("## ")[1:]
    assert [s.splitlines()[0] for s in sections] == [str(CORPUS / f"{WORKLOADS[0]}.jsonl.gz"), str(folder)]
    assert "Median over held-out workloads (" + WORKLOADS[0] + "):" in sections[0]
    assert (
        "Median over held-out workloads (" + ", ".join(sorted(WORKLOADS[1:])) + "):" in sections[1]
    )  # a folder loads in name order
    assert re.search(r"\| [^|]+ \| \d of 1 \|", sections[0]) and re.search(
        r"\| [^|]+ \| \d of 2 \|", sections[1]
    )

    # Each workload is still calibrated on all the others: its row is the one the joint table gives.
    for workload in WORKLOADS:
        joint = _convtune_rows(together.stdout, workload)
        assert joint and _convtune_rows(apart.stdout, workload) == joint


@pytest.mark.skipif(not CORPUS.exists(), reason="the curve corpus is not in this checkout")
def test_a_fixed_calibration_and_folds_by_data_score_as_the_fits_they_stand_for(tmp_path: Path) -> None:
    alone, pair = WORKLOADS[0], sorted(WORKLOADS[1:])
    folder = tmp_path / "batch"
    folder.mkdir()
    for workload in pair:
        (folder / f"{workload}.jsonl.gz").write_bytes((CORPUS / f"{workload}.jsonl.gz").read_bytes())
    env = {**os.environ, "HOME": str(tmp_path), "PYTHONPATH": str(ROOT)}
    base = [sys.executable, str(ROOT / "benchmarks" / "forecast.py"), "--no-home", "--max-runs", "12"]
    base += ["--cuts", "0.25"]

    def run(*args: str) -> subprocess.CompletedProcess[str]:
        done = subprocess.run(
            [*base, *args], env=env, capture_output=True, text=True, timeout=300, check=False
        )
        assert done.returncode == 0, done.stderr[-2000:]
        return done

    data = ["--data", str(CORPUS / f"{alone}.jsonl.gz"), str(folder)]
    by_workload, by_data = run(*data), run(*data, "--fold-by-data")
    # A workload alone in its entry is held out as before; the pair is fitted on the other entry only.
    assert _convtune_rows(by_data.stdout, alone) == _convtune_rows(by_workload.stdout, alone)
    # --report splits the same run: the folder's rows alone, fitted as before.
    reported = run(*data, "--fold-by-data", "--report", str(folder))
    assert not _convtune_rows(reported.stdout, alone)
    for workload in pair:
        assert _convtune_rows(reported.stdout, workload) == _convtune_rows(by_data.stdout, workload)
    only_alone = tmp_path / "alone.json"
    run("--data", str(CORPUS / f"{alone}.jsonl.gz"), "--write-calibration", str(only_alone))
    fixed = run("--data", str(CORPUS / f"{alone}.jsonl.gz"), str(folder), "--calibration", str(only_alone))
    # The table's own workload is not reported: it was fitted on it.
    assert not _convtune_rows(fixed.stdout, alone)
    assert f"was fitted on {alone}: not reported" in fixed.stderr
    for workload in pair:
        rows = _convtune_rows(fixed.stdout, workload)
        assert rows and rows == _convtune_rows(by_data.stdout, workload)
        assert rows != _convtune_rows(by_workload.stdout, workload)


@pytest.mark.skipif(not CORPUS.exists(), reason="the curve corpus is not in this checkout")
def test_within_fits_and_writes_within_the_run_models_that_a_fixed_table_then_applies(tmp_path: Path) -> None:
    plain, within = tmp_path / "plain.json", tmp_path / "within.json"
    for path, extra in ((plain, ()), (within, ("--within",))):
        done = _run(tmp_path, *extra, "--write-calibration", str(path))
        assert done.returncode == 0, done.stderr[-2000:]
    without, cal = CrossingCalibration.load(plain), CrossingCalibration.load(within)
    assert not without.within and "within" not in json.loads(plain.read_text())
    # The maps and reach models do not depend on the within-the-run models; what reads forecasts does.
    assert cal.maps.keys() == without.maps.keys() and cal.reach.keys() == without.reach.keys()
    for key in ("sched:1", "blind:1"):
        model = cal.within_model(key)
        assert model is not None and model.coef.size == len(within_feature_names(key.startswith("sched")))
        assert np.any(model.coef[-len(REFERENCE_FEATURES) :] != 0)  # the finished runs are read
    # A fixed table applies them to a workload neither was fitted on.
    other = "moons_accuracy"
    env = {**os.environ, "HOME": str(tmp_path), "PYTHONPATH": str(ROOT)}
    cmd = [sys.executable, str(ROOT / "benchmarks" / "forecast.py"), "--no-home", "--max-runs", "12"]
    cmd += ["--cuts", "0.25", "--data", str(CORPUS / f"{other}.jsonl.gz"), "--calibration"]
    rows = []
    for path in (plain, within):
        scores = tmp_path / f"{path.stem}.jsonl"
        done = subprocess.run(
            [*cmd, str(path), "--json", str(scores)],
            env=env,
            capture_output=True,
            text=True,
            timeout=300,
            check=False,
        )
        assert done.returncode == 0, done.stderr[-2000:]
        # --json: one record per (workload, cut, forecaster), the calibrated ones with their ROC AUC.
        records = [json.loads(line) for line in scores.read_text().splitlines()]
        assert {(r["workload"], r["cut"]) for r in records} == {(other, 0.25)}
        refs = next(r for r in records if r["method"] == "convtune-refs")
        assert 0.0 <= refs["auc"] <= 1.0 and "auc" not in next(r for r in records if r["method"] == "line2")
        # The study line moves the reach threshold only: `probability`, and so its AUC, stay.
        line, plain_record = (
            next(r for r in records if r["method"] == m) for m in ("convtune-line", "convtune")
        )
        assert line["auc"] == plain_record["auc"]
        rows.append((_convtune_rows(done.stdout, other), _convtune_rows(done.stdout, other, "convtune-refs")))
    (plain_rows, plain_refs), (within_rows, within_refs) = rows
    # Only forecasts told the study's finished runs change (check R'); those told none stay.
    assert plain_rows and within_rows == plain_rows
    assert plain_refs and within_refs != plain_refs


def test_the_study_line_never_calls_never_below_a_run_of_the_study_that_reached(
    benchmark_script: Callable[[str], ModuleType],
) -> None:
    study_line = benchmark_script("forecast").study_line
    # The line falls to the lowest probability a finished run that reached was given.
    assert study_line(0.27, reached=[0.4, 0.05, 0.9], missed=[0.01, 0.2]) == 0.05
    # It never rises over where the runs overlap...
    assert study_line(0.27, reached=[0.4, 0.9], missed=[0.5]) == 0.27
    # ...and rises to halfway where every run that missed stood lower than every one that reached.
    assert study_line(0.27, reached=[0.6, 0.9], missed=[0.4, 0.1]) == pytest.approx(0.5)
    assert study_line(0.27, reached=[0.3, 0.9], missed=[0.1]) == 0.27  # already between
    # No run that reached: no evidence against the line.
    assert study_line(0.27, reached=[], missed=[0.6, 0.9]) == 0.27
    # Told never to rise, it only ever falls.
    assert study_line(0.27, reached=[0.6, 0.9], missed=[0.4, 0.1], rise=False) == 0.27
    assert study_line(0.27, reached=[0.2, 0.9], missed=[0.1], rise=False) == 0.2


def test_the_study_shift_moves_probability_toward_how_the_study_s_runs_came_out(
    benchmark_script: Callable[[str], ModuleType],
) -> None:
    study_shift = benchmark_script("forecast").study_shift
    # Runs that reached more often than their forecasts said raise it; runs that missed lower it.
    assert study_shift(0.2, reached=[0.1, 0.2, 0.3], missed=[]) > 0.3
    assert study_shift(0.2, reached=[], missed=[0.5, 0.6]) < 0.15
    # Forecasts that came out as said leave it nearly where it was.
    assert study_shift(0.5, reached=[0.9, 0.7, 0.5], missed=[0.5, 0.3, 0.1]) == pytest.approx(0.5, abs=0.02)
    # The prior: one run moves it less than ten that say the same.
    one, ten = study_shift(0.2, [0.2], []), study_shift(0.2, [0.2] * 10, [])
    assert 0.2 < one < ten < 1.0
    # It keeps the order of forecasts within a study: the shift is one offset on the logit scale.
    low, high = study_shift(0.1, [0.3], [0.2]), study_shift(0.4, [0.3], [0.2])
    assert low < high
    assert study_shift(0.2, [], []) == 0.2


def test_the_coverage_bound_is_what_a_forecast_that_is_the_truth_covers_of_the_runs_that_reach(
    benchmark_script: Callable[[str], ModuleType],
) -> None:
    forecast = benchmark_script("forecast")
    rng = np.random.default_rng(0)
    horizon = 100.0
    for probability in (1.0, 0.7, 0.4, 0.15):
        # The forecast's distribution: a crossing uniform over the run with this chance, else
        # none within it; the truths are drawn from that same distribution.
        def quantile(q: float, p: float = probability) -> float:
            return q / p * horizon if q <= p else math.inf

        low, high = quantile(0.1), quantile(0.9)
        reached = rng.uniform(size=200_000) < probability
        truth = rng.uniform(0.0, horizon, size=int(reached.sum()))
        covered = float(np.mean((truth >= low) & (truth <= high)))
        assert forecast.coverage_bound(probability) == pytest.approx(covered, abs=0.005)
    assert forecast.coverage_bound(0.05) == 0.0 and forecast.coverage_bound(0.0) == 0.0
