"""What every command module of the CLI shares: the consoles, the ``--storage`` option, one-line messages."""

from __future__ import annotations

import sys
from typing import Annotated

import typer
from rich.console import Console

console = Console(width=None if sys.stdout.isatty() else 150)
err_console = Console(stderr=True)

StorageOpt = Annotated[
    str | None,
    typer.Option(
        "--storage",
        help="Optuna storage URL: sqlite:///…, postgresql://…, journal:///path, redis://host:port/db. "
        "Default: $CONVTUNE_STORAGE, else studies/convtune.db.",
        show_default=False,
    ),
]


def _say(message: str) -> None:
    """One line on stderr, as the user should read it (no rich markup or highlighting)."""
    err_console.print(f"convtune: {message}", markup=False, highlight=False, soft_wrap=True)


def print_runner_up_hint(study_name: str, runners: list[dict[str, object]]) -> None:
    """One line when an unconfirmed measured best has runners-up within seed noise of it."""
    from convtune.report.best import RUNNER_UP_MARGIN, confirm_command

    if not runners:
        return
    n = len(runners)
    shown = ", ".join(str(r["trial"]) for r in runners[:5]) + (", …" if n > 5 else "")
    console.print(
        f"[yellow]within seed noise:[/] {n} other configuration{'s' * (n != 1)} (trial{'s' * (n != 1)} "
        f"{shown}) measured within {RUNNER_UP_MARGIN:.0%} of it; confirm before you export: "
        + confirm_command(study_name, n),
        soft_wrap=True,  # a command to copy: never broken across lines
    )
