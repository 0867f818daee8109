"""The in-process CLI runner the CLI tests share: ``convtune ARGS`` through ``convtune.cli.main``."""

from __future__ import annotations

import sys

import pytest

from convtune.cli import main


def cli(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    """Run ``convtune ARGS`` in-process; return (exit status, stdout, stderr)."""
    argv = sys.argv
    sys.argv = ["convtune", *args]
    try:
        main()
        code = 0
    except SystemExit as exc:
        code = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)
    finally:
        sys.argv = argv
    out, err = capsys.readouterr()
    return code, out, err
