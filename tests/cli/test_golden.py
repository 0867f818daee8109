"""The CLI transcript of a small ``cost: samples`` study matches the saved golden file.

The golden file pins what a user sees (tables, best, confirm, exports) and what a study stores
(every trial's attributes), so a change that means to alter neither (a refactor) proves it here.
Every word must match; numbers must agree to a relative 1e-6, because a new numpy or scipy patch
release moves the last stored digit of a forecast (2847.171 became 2847.17 with numpy 2.4.6 /
scipy 1.17.1) without anything convtune does changing. After a change that means to alter the
transcript, regenerate it and review the diff:

    PYTHONPATH=$PWD python tests/golden/make_golden.py > tests/golden/cli_transcript.txt
"""

from __future__ import annotations

import difflib
import math
import os
import re
import subprocess
import sys
from pathlib import Path

GOLDEN = Path(__file__).resolve().parents[1] / "golden"
NUMBER = re.compile(r"(-?\d+(?:\.\d+)?(?:[eE][-+]?\d+)?)")


def same_transcript(expected: str, got: str, rel_tol: float = 1e-6) -> bool:
    """Whether two transcripts have the same words and numbers equal to ``rel_tol``."""
    a, b = NUMBER.split(expected), NUMBER.split(got)
    if len(a) != len(b):
        return False
    # re.split with one group alternates text (even indices) and numbers (odd indices).
    return all(
        x == y if i % 2 == 0 else math.isclose(float(x), float(y), rel_tol=rel_tol, abs_tol=1e-12)
        for i, (x, y) in enumerate(zip(a, b, strict=True))
    )


def test_numbers_may_differ_in_their_last_digit_and_nothing_else_may() -> None:
    assert same_transcript("cost 2847.171 of 8192.0\n", "cost 2847.17 of 8192.0\n")
    assert not same_transcript("cost 2847.171\n", "cost 2848.171\n")  # a real change
    assert not same_transcript("cost 2847.171\n", "costs 2847.171\n")  # a word
    assert not same_transcript("3 trials\n", "3 trials, 1 pruned\n")  # a line grew


def test_cli_transcript_matches_golden() -> None:
    env = dict(os.environ, OMP_NUM_THREADS="1", PYTHONWARNINGS="error::DeprecationWarning:convtune")
    done = subprocess.run(
        [sys.executable, str(GOLDEN / "make_golden.py")], env=env, capture_output=True, text=True, timeout=300
    )
    assert done.returncode == 0, done.stderr
    expected = (GOLDEN / "cli_transcript.txt").read_text()
    diff = "".join(
        difflib.unified_diff(expected.splitlines(True), done.stdout.splitlines(True), "golden", "now", n=1)
    )
    assert same_transcript(expected, done.stdout), diff[:4000]
