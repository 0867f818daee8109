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


def _views(pruner: str) -> list[dict[str, object]]:
    cmd = [sys.executable, str(ROOT / "benchmarks" / "stopped_values.py"), str(GRID)]
    cmd += ["--target", "val_mae<=0.41", "--pruner", pruner, "--seeds", "1", "--budget", "8"]
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    done = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=300, check=False)
    assert done.returncode == 0, done.stderr
    views = []
    for line in done.stdout.splitlines():
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
