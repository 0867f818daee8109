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
