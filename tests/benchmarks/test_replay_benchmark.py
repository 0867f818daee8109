"""The held-out replay benchmark (``benchmarks/replay_pruners.py``), run as a user runs it.

One corpus workload, one seed, a small budget: each workload's studies calibrate with its own
held-out table from ``--calibration-dir``, rows go to a gzip results file that a second run
resumes (running nothing again), and a missing held-out table is a one-line error.
"""

from __future__ import annotations

import gzip
import json
import os
import re
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
    assert _gzip_members(out) == 1  # appended row by row, compacted at the end of the run
    assert all(r["grid"] == WORKLOAD and r["seed"] == 0 and r["spent"] >= 2 for r in rows)
    assert f"| {WORKLOAD} | " in done.stdout  # the all-methods table
    # The every-setting table, with its count of near-best configurations stopped (one workload:
    # no other to choose a setting on, so no held-out row).
    assert "| time_to_target, ε 0.03 | " in done.stdout and " by a forecast |" in done.stdout

    again = _run(
        tmp_path,
        "--calibration-dir",
        str(folds),
        "--out",
        str(out),
        "--misses",
        "--cost-breakdown",
        METHODS[1],
    )
    assert again.returncode == 0, again.stderr[-2000:]
    # Where the pruned study's cost went: its whole spend on a miss, up to cost-to-10% on a hit.
    (pruned,) = [r for r in rows if r["method"] == METHODS[1]]
    total = pruned["cost_to_10"] if pruned["hit"] else pruned["spent"]
    breakdown = again.stdout.split(f"### Where {METHODS[1]}'s cost went")[1]
    assert f"| {WORKLOAD} | 1 | {int(pruned['hit'])} | {total:.1f} | " in breakdown
    assert sum(pruned["cost_by_end"].values()) == pytest.approx(total)
    assert "0 studies to run" in again.stderr
    # What studies that found a near-best configuration and still missed picked instead.
    misses = again.stdout.split("### Studies that found a near-best configuration and missed")[1]
    for method in METHODS:
        assert f"| {WORKLOAD} | {method} | " in misses
    with gzip.open(out, "rt") as f:
        assert len(f.readlines()) == len(rows)


@pytest.mark.skipif(not CORPUS.exists(), reason="the curve corpus is not in this checkout")
def test_a_method_suffix_keeps_studies_of_another_calibration_apart_in_the_tables(tmp_path: Path) -> None:
    shipped, other = tmp_path / "shipped.jsonl.gz", tmp_path / "other.jsonl.gz"
    assert _run(tmp_path, "--out", str(shipped)).returncode == 0
    done = _run(
        tmp_path,
        "--out",
        str(other),
        "--method-suffix",
        "@copy",
        "--calibration",
        str(ROOT / "convtune" / "curves" / "calibration.json"),
        "--also",
        str(shipped),
    )
    assert done.returncode == 0, done.stderr[-2000:]
    with gzip.open(other, "rt") as f:
        rows = [json.loads(line) for line in f]
    assert sorted(r["method"] for r in rows) == sorted(f"{m}@copy" for m in METHODS)
    # The same table by another path replays the same studies.
    with gzip.open(shipped, "rt") as f:
        before = {r["method"]: r for r in map(json.loads, f)}
    for r in rows:
        assert r["spent"] == before[r["method"].removesuffix("@copy")]["spent"]
    # Each file's rows table under their own name, side by side.
    tables = {}
    for method in (METHODS[1], f"{METHODS[1]}@copy"):
        shown = _run(
            tmp_path, "--out", str(other), "--also", str(shipped), "--table-only", "--method-table", method
        )
        assert shown.returncode == 0, shown.stderr[-2000:]
        (row,) = [line for line in shown.stdout.splitlines() if line.startswith(f"| {WORKLOAD} (")]
        tables[method] = row
    assert len(set(tables.values())) == 1
    again = _run(tmp_path, "--out", str(other), "--method-suffix", "@copy")
    assert "0 studies to run" in again.stderr


@pytest.mark.skipif(not CORPUS.exists(), reason="the curve corpus is not in this checkout")
def test_the_confirm_step_adds_its_rows_and_tables_beside_rows_without_it(tmp_path: Path) -> None:
    out = tmp_path / "confirm.jsonl.gz"
    plain = _run(tmp_path, "--out", str(out))
    assert plain.returncode == 0, plain.stderr[-2000:]
    # Rows without the step do not count as done for a run with it: both studies run again.
    first, second = METHODS
    done = _run(
        tmp_path,
        "--out",
        str(out),
        "--confirm",
        "2",
        "--compare-with",
        str(out),
        "--confirm-compare",
        first,
        second,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    assert "2 studies to run" in done.stderr
    with gzip.open(out, "rt") as f:
        rows = [json.loads(line) for line in f]
    confirmed = [r for r in rows if "confirm_hit" in r]
    assert len(confirmed) == 2 and all(r["confirm_spent"] >= 0 for r in confirmed)
    # The search replays as it did without the step, so the check against the plain rows holds.
    assert "Search replayed the same as in the earlier rows: 2 of 2 studies." in done.stdout
    table = done.stdout.split("### The confirm step")[1]
    for r in confirmed:
        hits, after = int(bool(r["hit"])), int(bool(r["confirm_hit"]))
        assert f"| {WORKLOAD} | {r['method']} | {hits}/1 | {after}/1 | " in table
    compare = done.stdout.split("### With the confirm step:")[1]
    assert "within one seed of no pruning's: first on 1 of 1, second on " in compare

    # One fixed method against the baselines, its hits after confirm beside the search's.
    shown = _run(tmp_path, "--out", str(out), "--table-only", "--method-table", f"tpe/{second.split('/')[1]}")
    assert shown.returncode == 0, shown.stderr[-2000:]
    table = shown.stdout.split(f"### {second} on every workload (seeds 0–0)")[1]
    mine, base = (next(r for r in confirmed if r["method"] == m) for m in (second, first))
    after = f"{int(bool(mine['confirm_hit']))}/1 / {int(bool(base['confirm_hit']))}/1"
    search = f"{int(bool(mine['hit']))}/1 / {int(bool(base['hit']))}/1"
    assert re.search(rf"\| {WORKLOAD} \(`[^`]+`\) \| {after} \| {search} \| ", table), table
    # Counting the pick after confirm as the hit: both columns show the confirmed pick.
    counted = _run(
        tmp_path, "--out", str(out), "--table-only", "--hits-after-confirm", "--method-table", second
    )
    assert counted.returncode == 0, counted.stderr[-2000:]
    assert re.search(rf"\| {WORKLOAD} \(`[^`]+`\) \| {after} \| {after} \| ", counted.stdout), counted.stdout

    # More confirm rounds: one-round rows do not count as done; the new rows keep the first
    # round's result, and the rounds table shows both from the same studies.
    rounds = _run(tmp_path, "--out", str(out), "--confirm", "2", "--confirm-rounds", "3")
    assert rounds.returncode == 0, rounds.stderr[-2000:]
    assert "2 studies to run" in rounds.stderr
    with gzip.open(out, "rt") as f:
        paired = [r for line in f if "confirm_first_hit" in (r := json.loads(line))]
    assert len(paired) == 2 and all(r["confirm_spent"] >= r["confirm_first_spent"] for r in paired)
    table = rounds.stdout.split("### Confirm rounds")[1]
    for r in paired:
        first, every = int(bool(r["confirm_first_hit"])), int(bool(r["confirm_hit"]))
        assert f"| {WORKLOAD} | {r['method']} | {first}/1 | {every}/1 | " in table, table
        # Without --confirm-stopped no round takes a stopped configuration.
        assert r["confirm_stopped_taken"] == 0 and not r["confirm_pick_was_stopped"]
        assert re.search(rf"\| {WORKLOAD} \| {re.escape(r['method'])} \|.*\| 0 / 0 \|", table), table

    # A candidate against the default by the pre-registered checks' bars, from the same rows.
    base, candidate = METHODS
    check = _run(tmp_path, "--out", str(out), "--table-only", "--candidate-check", base, candidate)
    assert check.returncode == 0, check.stderr[-2000:]
    table = check.stdout.split(f"### {candidate} against {base}")[1]
    hits = {r["method"]: int(bool(r["confirm_first_hit"])) for r in paired}
    assert f"| {WORKLOAD} | {hits[base]} → {hits[candidate]} | 0/" in table, table
    assert "Passes on " in table and " of 1 workloads." in table
    # The pooled figures the checks' readings use, from the same rows.
    pooled = (
        f"Hits pooled: {hits[base]} → {hits[candidate]}; the candidate within two hits on 1 of 1 workloads."
    )
    assert pooled in table, table
    both = int(min(hits.values()) == 1)  # one seed: "most seeds" is that seed
    assert f"on the {both} workloads where both hit in most seeds" in table, table
    # Which of the candidate's near-best stops judged a run that would itself have reached in time.
    mine = next(r for r in paired if r["method"] == candidate)
    by_forecast = _replay_pruners().by_forecast
    wrong = {
        c for c, why, ratio in mine["near_best_stopped_runs"] if by_forecast(why) and ratio and ratio <= 1.1
    }
    assert (
        f"of them on a run that would itself have reached within 10% of the best: {len(wrong)} " in table
    ), table


@pytest.mark.skipif(not CORPUS.exists(), reason="the curve corpus is not in this checkout")
def test_the_fold_settings_replay_at_another_exact_margin(tmp_path: Path) -> None:
    out = tmp_path / "margin.jsonl.gz"
    setting = "time_to_target:epsilon=0.03+exact_margin=0.2"
    # The last --methods wins: no pruning, and one fold setting as named at that margin.
    args = ["--out", str(out), "--methods", "tpe/none", f"tpe/{setting}"]
    margin = _run(tmp_path, *args, "--exact-margin", "0.2")
    assert margin.returncode == 0, margin.stderr[-2000:]
    assert "2 studies to run" in margin.stderr
    with gzip.open(out, "rt") as f:
        methods = [json.loads(line)["method"] for line in f]
    assert sorted(methods) == sorted(["tpe/none", f"tpe/{setting}"])
    # The every-setting table lists the fold settings at the margin, named with it ...
    assert "| time_to_target, ε 0.03, margin 0.2 | " in margin.stdout
    # ... and a table at the default margin 0 does not take those rows for its own settings.
    zero = _run(tmp_path, "--out", str(out), "--table-only")
    assert zero.returncode == 0, zero.stderr[-2000:]
    assert "margin 0.2" not in zero.stdout and f"| {WORKLOAD} | " in zero.stdout


@pytest.mark.skipif(not CORPUS.exists(), reason="the curve corpus is not in this checkout")
def test_a_check_on_later_seeds_runs_and_tables_those_seeds_only(tmp_path: Path) -> None:
    out = tmp_path / "later.jsonl.gz"
    later = _run(tmp_path, "--out", str(out), "--methods", "tpe/none", "--first-seed", "1", "--seeds", "2")
    assert later.returncode == 0, later.stderr[-2000:]
    assert "1 studies to run" in later.stderr
    with gzip.open(out, "rt") as f:
        assert [json.loads(line)["seed"] for line in f] == [1]
    assert re.search(rf"\| {WORKLOAD} \| `[^`]+` \| [01]/1, ", later.stdout)
    # Seeds 0 and 1 from the same file: seed 1 is stored, seed 0 runs, the table counts both.
    both = _run(tmp_path, "--out", str(out), "--methods", "tpe/none", "--seeds", "2")
    assert both.returncode == 0, both.stderr[-2000:]
    assert "1 studies to run" in both.stderr
    assert re.search(rf"\| {WORKLOAD} \| `[^`]+` \| [012]/2, ", both.stdout)


@pytest.mark.skipif(not CORPUS.exists(), reason="the curve corpus is not in this checkout")
def test_oracles_replay_by_name_and_table_beside_baselines_stored_in_another_file(tmp_path: Path) -> None:
    baselines, oracles = tmp_path / "baselines.jsonl.gz", tmp_path / "oracles.jsonl.gz"
    unrelated = tmp_path / "unrelated.jsonl.gz"
    with gzip.open(unrelated, "wt"):
        pass
    assert _run(tmp_path, "--out", str(baselines), "--methods", "tpe/none").returncode == 0
    done = _run(
        tmp_path,
        "--out",
        str(oracles),
        "--methods",
        "tpe/oracle:clairvoyant",
        "--also",
        str(baselines),
        "--also",  # a second flag adds its files to the first's
        str(unrelated),
        "--oracle-table",
    )
    assert done.returncode == 0, done.stderr[-2000:]
    assert "1 studies to run" in done.stderr  # the baseline's row lives in the other file
    with gzip.open(oracles, "rt") as f:
        (row,) = [json.loads(line) for line in f]
    assert row["method"] == "tpe/oracle:clairvoyant" and row["pruner"] == "clairvoyant"
    assert row["near_best_stopped_share"] == 0.0
    line = next(x for x in done.stdout.splitlines() if x.startswith(f"| {WORKLOAD} | ") and "not run" in x)
    cells = [c.strip() for c in line.strip("|").split("|")]
    # unpruned (from --also), default (not run), clairvoyant (this row); oracles not run get no column
    with gzip.open(baselines, "rt") as f:
        (unpruned,) = [json.loads(line) for line in f]
    assert cells[1].endswith(f"({int(bool(unpruned['hit']))}/1)")
    assert cells[2] == "not run" and "perfect forecast" not in done.stdout
    assert cells[3].endswith(f"({int(bool(row['hit']))}/1)")


@pytest.mark.skipif(not CORPUS.exists(), reason="the curve corpus is not in this checkout")
def test_audited_replays_table_the_forecasts_low_tail_with_and_without_the_prior(tmp_path: Path) -> None:
    out = tmp_path / "audit.jsonl.gz"
    done = _run(tmp_path, "--out", str(out), "--methods", "tpe/none", "--audit", "--audit-table")
    assert done.returncode == 0, done.stderr[-2000:]
    with gzip.open(out, "rt") as f:
        (row,) = [json.loads(line) for line in f]
    probs = row["audit"]["prior"]["probability_by_truth"]
    lines = [x for x in done.stdout.splitlines() if x.startswith(f"| {WORKLOAD} | tpe/none | ")]
    assert [x.split("|")[3].strip() for x in lines] == ["with", "without"]
    cells = [c.strip() for c in lines[0].strip("|").split("|")]
    assert cells[3].startswith(f"{len(probs)} (")
    below = sum(p < 0.5 for p in probs) / len(probs) if probs else None
    assert cells[8] == (f"{below:.1%}" if probs else "–")
    # Asked again with --audit, the audited row counts as done; without it, a row lacks the audit.
    again = _run(tmp_path, "--out", str(out), "--methods", "tpe/none", "--audit")
    assert "0 studies to run" in again.stderr


def _gzip_members(path: Path) -> int:
    import zlib

    data, members = path.read_bytes(), 0
    while data:
        stream = zlib.decompressobj(wbits=31)
        stream.decompress(data)
        data, members = stream.unused_data, members + 1
    return members


def _replay_pruners():  # the benchmark script as a module (it is not part of the package)
    import importlib.util

    spec = importlib.util.spec_from_file_location("replay_pruners", ROOT / "benchmarks" / "replay_pruners.py")
    module = importlib.util.module_from_spec(spec)  # type: ignore[arg-type]
    spec.loader.exec_module(module)  # type: ignore[union-attr]
    return module


def test_the_tolerant_fold_rule_forgives_one_workloads_hits_never_the_near_best_promise() -> None:
    rp = _replay_pruners()
    cheap, safe = rp.SETTINGS[-2], rp.SETTINGS[0]  # epsilon 0.01 + behind 0.1; epsilon 0.01

    def row(hits: int, cost: float, stopped_by_forecast: float = 0.0) -> dict[str, object]:
        return {
            "hits": hits,
            "cost": cost,
            "budget": 20.0,
            "near_config_forecast_stopped": stopped_by_forecast,
        }

    table = {}
    for w in ("a", "b", "c"):
        table[(w, "tpe/none")] = row(10, 10.0)
        table[(w, f"tpe/{safe}")] = row(10, 9.0)
        table[(w, f"tpe/{cheap}")] = row(10, 6.0)
    table[("a", f"tpe/{cheap}")] = row(7, 6.0)  # loses three seeds' hits on one workload
    assert rp.choose_setting(table, ["a", "b", "c"]) == (safe, True)
    assert rp.choose_setting(table, ["a", "b", "c"], hit_failures=1) == (cheap, True)
    table[("b", f"tpe/{cheap}")] = row(7, 6.0)  # ... and on a second one
    assert rp.choose_setting(table, ["a", "b", "c"], hit_failures=1) == (safe, True)
    table[("b", f"tpe/{cheap}")] = row(10, 6.0, stopped_by_forecast=0.02)  # over its epsilon
    assert rp.choose_setting(table, ["a", "b", "c"], hit_failures=1) == (safe, True)


STORED = ROOT / "benchmarks" / "data" / "replay_pruners_b20_lowo.jsonl.gz"


@pytest.mark.skipif(not STORED.exists(), reason="the stored replay rows are not in this checkout")
def test_fold_choices_are_measured_on_seeds_no_choice_saw() -> None:
    cmd = [sys.executable, str(ROOT / "benchmarks" / "replay_pruners.py"), "--seeds", "20", "--budget", "20"]
    cmd += ["--table-only", "--fresh-seeds", "20", "--out", str(STORED)]
    done = subprocess.run(
        cmd,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    fresh = done.stdout.split("### Seeds 20–39, which no choice saw")[1]
    rows = [line for line in fresh.splitlines() if re.match(r"\| \w+ \| (strict|tolerant) \| ", line)]
    assert len(rows) == 22  # 11 workloads × 2 rules, every choice replayed on the fresh seeds
    assert not any("not replayed" in line for line in rows)
    assert all(line.split(" | ")[3].count("/20") == 2 for line in rows)  # hits out of 20 fresh seeds
    assert "- strict rule: hits ≥ unpruned − 1 on " in fresh and "- tolerant rule: " in fresh
    assert "- ε 0.01, behind 0.1 against ε 0.01: as many hits or more on " in fresh


def test_the_oracle_table_counts_workloads_within_half_the_best_baseline_and_splits_the_gap() -> None:
    rp = _replay_pruners()

    def rows(method: str, costs: list[float | None]) -> list[dict]:
        return [
            {
                "grid": "w",
                "method": method,
                "seed": seed,
                "hit": cost is not None,
                "cost_to_10": cost,
                "near_best_trials": 1,
                "stopped_share": 0.5,
                "near_best_stopped_share": 0.0,
                "near_best_stop_reasons": [],
                "stop_reasons": [],
                "near_best_configurations": {},
                "target": "val_error<=0.1",
                "budget": 20.0,
            }
            for seed, cost in enumerate(costs)
        ]

    table = rp.oracle_table(
        rows("tpe/none", [None, None, 30.0])
        + rows(rp.DEFAULT_METHODS[0], [10.0, 10.0, 10.0])  # today's default
        + rows("tpe/median", [8.0, 8.0, None])  # the best baseline: 2 of 3 hits, median 8
        + rows("optuna-tpe/none", [None, None, 1.0])  # fewer hits: not the best, however cheap
        + rows("tpe/oracle:perfect-forecast", [4.0, 4.0, 4.0])
        + rows("tpe/oracle:perfect-before-incumbent", [9.0, 9.0, 9.0])
        + rows("tpe/oracle:perfect-after-incumbent", [5.0, 5.0, 5.0])
    )
    text = "\n".join(table)
    assert (
        "| w | – (1/3) | 10.0 (3/3) | 4.0 (3/3) | 9.0 (3/3) | 5.0 (3/3) | TPE + MedianPruner: 8.0 (2/3) | 0.50 | 1.12 | 0.62 |"
        in text
    )
    assert "clairvoyant" not in text  # not run: no column
    assert "perfect forecast: ≤ 0.5× the best Optuna baseline on 1 of the 1 workloads" in text
    assert "perfect against the incumbent: ≤ 0.5× the best Optuna baseline on 0 of the 1" in text
    # The default's 6 full runs over the perfect forecast: 1 recovered before any reached, 5 after.
    assert "| w | 6.0 | 17% | 83% |" in text
