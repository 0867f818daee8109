"""The CLI transcript of a small ``cost: samples`` study matches the saved golden file byte for byte.

The golden file pins what a user sees (tables, best, confirm, exports) and what a study stores
(every trial's attributes), so a change that means to alter neither (a refactor) proves it here.
After a change that means to alter them, regenerate it and review the diff:

    PYTHONPATH=$PWD python tests/golden/make_golden.py > tests/golden/cli_transcript.txt
"""

from __future__ import annotations

import difflib
import os
import subprocess
import sys
from pathlib import Path

GOLDEN = Path(__file__).resolve().parents[1] / "golden"


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
    assert done.stdout == expected, diff[:4000]
