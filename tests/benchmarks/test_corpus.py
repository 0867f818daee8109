"""The curve corpus (benchmarks/corpus): its recorder writes valid grid files and resumes."""

from __future__ import annotations

import ast
import collections
import dataclasses
import gzip
import itertools
import json
import math
import os
import sys
import types
from collections.abc import Iterator
from pathlib import Path

import pytest

from convtune.config.recipe import Recipe
from convtune.config.schedules import SCHEDULES
from convtune.curves import LRSchedule

BENCHMARKS = str(Path(__file__).resolve().parents[2] / "benchmarks")
# Two cheap workloads, their planned runs cut to 2,048 samples (16 evaluations) for speed.
WORKLOADS = ("regression_r2", "logreg_digits")


@pytest.fixture(scope="module")
def corpus() -> Iterator[types.SimpleNamespace]:
    """The corpus package, its schedules registered for this module's tests only (so no other
    test sees a registry with more schedules than convtune ships)."""
    saved = dict(SCHEDULES)
    sys.path.insert(0, BENCHMARKS)
    try:
        from corpus import load_grid
        from corpus.grid import CORPUS_WORKLOADS, FRESH_BATCHES, planned_runs, recipe_for, run_key
        from corpus.record import main
        from corpus.schedules import register_corpus_schedules

        register_corpus_schedules()  # again: the import may have been cached by an earlier run
        yield types.SimpleNamespace(
            load_grid=load_grid,
            workloads=CORPUS_WORKLOADS,
            fresh=FRESH_BATCHES,
            planned_runs=planned_runs,
            recipe_for=recipe_for,
            run_key=run_key,
            record=main,
        )
    finally:
        sys.path.remove(BENCHMARKS)
        SCHEDULES.clear()
        SCHEDULES.update(saved)


@pytest.fixture(autouse=True)
def _short_runs(corpus: types.SimpleNamespace, monkeypatch: pytest.MonkeyPatch) -> None:
    for name in WORKLOADS:
        short = dataclasses.replace(corpus.workloads[name], horizon_samples=2048, eval_every_samples=128)
        monkeypatch.setitem(corpus.workloads, name, short)


def _record(corpus: types.SimpleNamespace, out_dir: Path, limit: int) -> None:
    argv = ["--out-dir", str(out_dir), "--limit", str(limit)]
    for name in WORKLOADS:
        argv += ["--workload", name]
    assert corpus.record(argv) == 0


def _check_file(corpus: types.SimpleNamespace, path: Path) -> list[dict]:
    header, runs = corpus.load_grid(path)
    name = header["workload"]
    spec = corpus.workloads[name]
    assert header["convtune_grid"] == 1 and header["metric"] == spec.metric
    assert header["direction"] in ("minimize", "maximize")
    assert len(header["metric_bounds"]) == 2
    for run in runs:
        assert run["status"] in ("complete", "diverged")
        for knob, value in run["knobs"].items():
            described = header["knobs"][knob]
            assert "choices" not in described or value in described["choices"]
        assert run["key"] == corpus.run_key(name, run["knobs"], run["seed"])
        horizon = run["horizon_samples"]
        assert horizon == header["horizon_samples"] == run["recipe"]["horizon_samples"]
        schedule = LRSchedule.from_dict(run["schedule"])
        assert float(schedule.horizon) == horizon
        curve = run["curve"]
        lengths = {len(v) for v in curve.values()}
        assert len(lengths) == 1
        if run["status"] == "complete":
            assert 15 <= len(curve["step"]) <= 40
            assert curve["samples"][-1] == horizon
        assert curve["samples"] == sorted(curve["samples"])
        assert all(b >= a for a, b in itertools.pairwise(curve["cpu_seconds"]))
        lr_per_step = corpus.recipe_for(name, run["knobs"]).lr_per_step
        for step, samples, lr in zip(curve["step"], curve["samples"], curve["lr"], strict=True):
            assert lr == pytest.approx(lr_per_step[step - 1], rel=1e-5)
            assert lr == pytest.approx(float(schedule.lr_at(samples)), rel=1e-2, abs=1e-12)
    return runs


def test_recording_writes_grid_files_and_resumes_without_repeating(
    corpus: types.SimpleNamespace, tmp_path: Path
) -> None:
    _record(corpus, tmp_path, limit=2)
    first = {name: _check_file(corpus, tmp_path / f"{name}.jsonl") for name in WORKLOADS}
    assert all(len(runs) == 1 for runs in first.values())  # interleaved: one run each
    for name, runs in first.items():
        expected = corpus.planned_runs(name)[0]
        assert (runs[0]["knobs"], runs[0]["seed"]) == (expected["knobs"], expected["seed"])

    _record(corpus, tmp_path, limit=1)  # resumes: the next run of the first workload, not a repeat
    again = {name: _check_file(corpus, tmp_path / f"{name}.jsonl") for name in WORKLOADS}
    assert again[WORKLOADS[1]] == first[WORKLOADS[1]]
    resumed = again[WORKLOADS[0]]
    assert resumed[0] == first[WORKLOADS[0]][0] and len(resumed) == 2
    expected = corpus.planned_runs(WORKLOADS[0])[1]
    assert (resumed[1]["knobs"], resumed[1]["seed"]) == (expected["knobs"], expected["seed"])


# Every fresh batch recorded so far. Building a batch's workloads means
# generating their data, 5-50 s a batch on 2 cores: the suite records one run of each workload of
# the first batch and the two newest (the code still changing), and of every batch with
# CONVTUNE_TEST_ALL_BATCHES=1 (before re-recording an old batch, or after upgrading numpy, scipy
# or torch). Older batches' code is append-only; the name-clash test below guards what an append
# can break in them.
FRESH_BATCHES = list(range(1, 55))
RECORDED_IN_SUITE = (
    FRESH_BATCHES if os.environ.get("CONVTUNE_TEST_ALL_BATCHES") else [FRESH_BATCHES[0], *FRESH_BATCHES[-2:]]
)


def test_every_defined_batch_is_listed_for_the_recording_test(corpus: types.SimpleNamespace) -> None:
    assert sorted(corpus.fresh) == FRESH_BATCHES, "add the new batch to FRESH_BATCHES in this file"


@pytest.mark.parametrize("batch", RECORDED_IN_SUITE)
def test_fresh_records_only_the_workloads_kept_apart(
    corpus: types.SimpleNamespace, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, batch: int
) -> None:
    fresh = corpus.fresh[batch]
    for name in fresh:
        short = dataclasses.replace(corpus.workloads[name], horizon_samples=2048, eval_every_samples=128)
        monkeypatch.setitem(corpus.workloads, name, short)
    flag = ["--fresh"] if batch == 1 else ["--fresh", str(batch)]  # a bare --fresh is the first batch
    assert corpus.record(["--out-dir", str(tmp_path), *flag, "--limit", str(len(fresh))]) == 0
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(f"{n}.jsonl" for n in fresh)
    for name in fresh:
        (run,) = _check_file(corpus, tmp_path / f"{name}.jsonl")
        assert run["status"] == "complete"
        low, high = corpus.workloads[name].metric_bounds
        metric = run["curve"]["metric"]
        assert all(
            math.isfinite(m) and (low is None or m >= low) and (high is None or m <= high) for m in metric
        )
    every_fresh = {n for names in corpus.fresh.values() for n in names}
    assert not every_fresh & set(WORKLOADS)
    assert len(every_fresh) == sum(len(names) for names in corpus.fresh.values())  # batches are disjoint


def test_load_grid_reads_gzip_and_skips_a_cut_last_line(
    corpus: types.SimpleNamespace, tmp_path: Path
) -> None:
    header = {"convtune_grid": 1, "workload": "w", "metric": "m"}
    lines = [json.dumps(header), json.dumps({"knobs": {"a": 1}, "seed": 0}), '{"knobs": {"a"']
    plain = tmp_path / "w.jsonl"
    plain.write_text("\n".join(lines) + "\n")
    zipped = tmp_path / "w.jsonl.gz"
    with gzip.open(zipped, "wt") as fh:  # two members, as appending produces
        fh.write(lines[0] + "\n")
    with gzip.open(zipped, "at") as fh:
        fh.write("\n".join(lines[1:]) + "\n")
    for path in (plain, zipped):
        read_header, runs = corpus.load_grid(path)
        assert read_header == header and runs == [{"knobs": {"a": 1}, "seed": 0}]
    bad = tmp_path / "bad.jsonl"
    bad.write_text(json.dumps({"knobs": {}}) + "\n")
    with pytest.raises(ValueError, match="header"):
        corpus.load_grid(bad)


def test_corpus_schedules_are_accepted_by_recipe(corpus: types.SimpleNamespace) -> None:
    base = {"peak_lr": 1.0, "horizon_samples": 100, "micro_batch_size": 1}
    wsd = Recipe(**base, schedule="wsd").lr_per_step
    assert wsd[:80] == (1.0,) * 80 and wsd[-1] == 0.0 and all(b <= a for a, b in itertools.pairwise(wsd))
    step = Recipe(**base, schedule="step").lr_per_step
    assert (step[49], step[50], step[75]) == pytest.approx((1.0, 0.1, 0.01))
    inverse = Recipe(**base, schedule="inverse_sqrt", warmup_steps=10).lr_per_step
    assert inverse[9] < 1.0 and inverse[10] == 1.0
    assert inverse[-1] == pytest.approx(1 / math.sqrt(1 + 89 / 5))


def test_shards_starting_together_never_see_a_grid_file_without_its_header(tmp_path: Path) -> None:
    """Every shard creates a grid file that is missing; none may read one between its creation
    and its header (a shard of the fourth fresh batch once failed so: "empty grid file"). Four
    processes start on the same instant and race over the same 300 new files."""
    import subprocess
    import time

    code = (
        "import sys, time; sys.path.insert(0, sys.argv[1]); from pathlib import Path\n"
        "from corpus.record import ensure_header, recorded_keys\n"
        "start = float(sys.argv[3])\n"
        "while time.time() < start: pass\n"
        "for i in range(300):\n"
        "    p = Path(sys.argv[2]) / f'{i}.jsonl'\n"
        "    ensure_header(p, 'regression_r2'); recorded_keys(p)\n"
    )
    start = time.time() + 3.0  # after every process has imported
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", code, BENCHMARKS, str(tmp_path), str(start)],
            stderr=subprocess.PIPE,
            text=True,
        )
        for _ in range(4)
    ]
    for proc in procs:
        _, err = proc.communicate(timeout=120)
        assert proc.returncode == 0, err[-1500:]
    files = sorted(tmp_path.iterdir())
    assert len(files) == 300  # no staged file left beside them
    assert all(p.read_text().count("\n") == 1 for p in files)  # one header each, written once


def test_the_corpus_modules_define_each_top_level_name_once() -> None:
    # Workloads are appended batch by batch; a helper class of a new batch named like an older
    # one's replaced it for every workload defined above it (batch 41's rotation_pointcloud_6d
    # stopped building its model), and no linter flags a redefinition used in a method body.
    for module in ("workloads.py", "grid.py"):
        tree = ast.parse((Path(BENCHMARKS) / "corpus" / module).read_text())
        names = [
            target.id if isinstance(node, ast.Assign) else node.name
            for node in tree.body
            if isinstance(node, ast.ClassDef | ast.FunctionDef | ast.Assign)
            for target in (node.targets if isinstance(node, ast.Assign) else [node])
            if not isinstance(node, ast.Assign) or isinstance(target, ast.Name)
        ]
        twice = sorted(n for n, k in collections.Counter(names).items() if k > 1)
        assert not twice, f"{module} defines these names more than once: {twice}"
