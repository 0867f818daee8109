"""``benchmarks/stopped_values.py``, run as a user runs it: what stopped trials tell the sampler."""

from __future__ import annotations

import ast
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
GRID = ROOT / "benchmarks" / "data" / "corpus_fresh13" / "ordinal_levels.jsonl.gz"


def _run(pruner: str, *extra: str) -> str:
    cmd = [sys.executable, str(ROOT / "benchmarks" / "stopped_values.py"), str(GRID)]
    cmd += ["--target", "val_mae<=0.41", "--pruner", pruner, "--seeds", "1", "--budget", "8", *extra]
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    done = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=300, check=False)
    assert done.returncode == 0, done.stderr
    return done.stdout


def _views(pruner: str) -> list[dict[str, object]]:
    views = []
    for line in _run(pruner).splitlines():
        match = re.match(r"seed (\d+) hit=\w+ (.*) best_tenth=(\{.*\})$", line)
        assert match, line
        fields = dict(item.split("=") for item in match.group(2).split())
        views.append(
            {**{k: int(v) for k, v in fields.items()}, "best_tenth": ast.literal_eval(match.group(3))}
        )
    return views


@pytest.mark.skipif(not GRID.exists(), reason="the thirteenth corpus batch is not in this checkout")
def test_median_pauses_tell_sooner_values_than_the_best_and_after_reached_does_not() -> None:
    # On ordinal_levels MedianPruner's stopped trials are told censored values sooner than the
    # best reached trial's (docs/benchmarks.md, "Evidence for a pause"); floored at the slowest
    # trial that reached when each stopped, none is under stop_value: after_reached.
    (plain,) = _views("median")
    assert plain["reached"] + plain["stopped"] <= plain["trials"]
    assert sum(plain["best_tenth"].values()) == max(1, plain["trials"] // 10)  # type: ignore[union-attr]
    assert (
        0
        < plain["stopped_sooner_than_best"]
        <= plain["stopped_sooner_than_median_reached"]
        <= plain["stopped"]
    )
    (floored,) = _views("median:after_reached=1")
    assert floored["stopped"] > 0 and floored["stopped_sooner_than_best"] == 0, floored


@pytest.mark.skipif(not GRID.exists(), reason="the thirteenth corpus batch is not in this checkout")
def test_paused_chances_are_told_by_what_the_paused_configurations_truly_do() -> None:
    # With pause_behind on, trials standing behind the median are paused; --paused-chances prints
    # the chance each one's stored forecast gave of crossing by 1.2x the best measured time, by
    # what its configuration does on the grid (docs/benchmarks.md, "What a stop tells the sampler").
    pruner = "time_to_target:epsilon=0.01+epsilon_behind=0.1+require_behind=1+pause_behind=1"
    out = _run(pruner, "--paused-chances")
    seed = re.search(r"stopped=(\d+)", out)
    assert seed, out
    lines = re.findall(
        r"paused behind the median, (near_best|reaches|never): (\d+) trials, .* median (\d\.\d\d), "
        r">= 0\.1 in (\d+), >= 0\.5 in (\d+)",
        out,
    )
    assert lines, out
    assert sum(int(n) for _, n, *_ in lines) <= int(seed.group(1))
    # Trials are mapped to the recorded configuration their sampled knobs snap to: on this grid
    # some paused configurations do reach the target (read by exact knob values, none would).
    assert {kind for kind, *_ in lines} >= {"reaches", "never"}, out
    for _, n, median, tenth, half in lines:
        assert 0.0 <= float(median) <= 1.0 and int(half) <= int(tenth) <= int(n)
