"""The ``convtune`` command line: a thin layer over the library API, one Typer app per command group.

Every user error is a :class:`convtune.errors.ConvtuneError`; here, and only here, it becomes one
line on stderr and exit status 2.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Annotated, Any

import typer

from convtune.cli.common import StorageOpt, _say, console
from convtune.cli.replay import replay_command
from convtune.cli.scaling import probe_app
from convtune.cli.study import study_app
from convtune.errors import ConvtuneError

_WORKFLOW = """Create a study from a spec, run pruned trials, see the measured and predicted
fastest, check the forecasts on this workload, confirm it on fresh seeds, export it into your code, browse it in optuna-dashboard:

```
convtune study create NAME --config studies/digits.yaml
convtune study run NAME --n-trials 40
convtune study best NAME
convtune study forecasts NAME
convtune study confirm NAME --top 3 --seeds 2
convtune study export NAME --format python -o best.py
convtune dashboard NAME
```

`convtune COMMAND --help` explains each."""

app = typer.Typer(
    help="Find the training configuration that reaches a quality target in the least time.",
    epilog=_WORKFLOW,
    no_args_is_help=True,
    pretty_exceptions_enable=False,
    add_completion=False,
    # Markdown: a docstring's wrapped lines read as one paragraph in --help, `code` as code.
    rich_markup_mode="markdown",
)
app.add_typer(study_app, name="study")
app.command("replay")(replay_command)


def _print_version(value: bool) -> None:
    if value:
        from convtune import __version__

        typer.echo(f"convtune {__version__}")
        raise typer.Exit()


@app.callback()
def _options(
    version: Annotated[
        bool,
        typer.Option("--version", callback=_print_version, is_eager=True, help="Print the version and exit."),
    ] = False,
) -> None:
    """Find the training configuration that reaches a quality target in the least time."""


@app.command("dashboard")
def dashboard(
    name: Annotated[str, typer.Argument(help="Study whose storage to open.")],
    storage: StorageOpt = None,
    host: Annotated[str, typer.Option(help="Address to bind; 127.0.0.1 keeps it local.")] = "127.0.0.1",
    port: Annotated[int, typer.Option(help="Port to serve on.")] = 8080,
) -> None:
    """Open the study in optuna-dashboard, with its artifact store."""
    from optuna.artifacts import FileSystemArtifactStore
    from optuna_dashboard import run_server

    from convtune.storage import default_artifact_dir, resolve_storage_url
    from convtune.study import open_study

    study, spec = open_study(name, storage)
    url = resolve_storage_url(storage or spec.storage)
    artifact_dir = Path(spec.artifacts or default_artifact_dir(url))
    artifact_dir.mkdir(parents=True, exist_ok=True)
    console.print(
        f"optuna-dashboard on http://{host}:{port}/dashboard/studies/{study._study_id} (Ctrl-C to stop)"
    )
    run_server(
        study._storage,
        host=host,
        port=port,
        artifact_store=FileSystemArtifactStore(str(artifact_dir)),
    )


def main() -> None:
    """Entry point: user errors become one line and exit status 2 (usage errors already do)."""
    # Before torch loads: spinning OpenMP threads collapse throughput (~10× here) as soon as
    # anything else runs on the machine; passive waiting costs nothing measurable when idle.
    os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")
    import warnings

    import optuna

    # Heartbeats, metric names and grouped TPE are marked experimental; they are what we rely on.
    warnings.filterwarnings("ignore", category=optuna.exceptions.ExperimentalWarning)
    optuna.logging.set_verbosity(optuna.logging.WARNING)
    from convtune.study.quiet import quiet_optuna_for_one_line_errors

    quiet_optuna_for_one_line_errors()
    try:
        app()
    except ConvtuneError as exc:
        _say(f"error: {_scrubbed(exc.one_line())}")
        sys.exit(2)


def _scrubbed(message: str) -> str:
    """``message`` with every storage URL redacted and every password this command was given masked.

    Drivers quote URLs, and sometimes decoded passwords, in their errors; the storage code redacts
    what it knows, this is the last line of defence before anything reaches the terminal.
    """
    from convtune.storage import scrub

    for url in [os.environ.get("CONVTUNE_STORAGE", ""), *(a for a in sys.argv if "://" in a)]:
        message = scrub(message, url.split("=", 1)[-1] if url.startswith("--") else url)
    return scrub(message, None)


def console_main() -> None:
    """The ``convtune`` executable: ``main``, then an exit without the interpreter's teardown.

    ``main`` itself ends in ``SystemExit``, so tests and notebooks can call it in-process.
    """
    import signal

    try:
        main()
        code: Any = 0
    except SystemExit as exc:  # typer ends every command with one
        # The command is over and everything is stored: from here Ctrl-C is ignored. Freeing
        # what the command held (~0.6 s of C code that checks no signals) and the interpreter's
        # teardown (~1 s, after Python restores SIGINT's default action) turned a late Ctrl-C
        # into a traceback, a silent status -2 or, under load, a fatal-error abort.
        signal.signal(signal.SIGINT, signal.SIG_IGN)
        code = exc.code
    _exit(code)


def _exit(code: Any) -> None:
    """Run the exit handlers (logging, multiprocessing's children) and end without the teardown."""
    import atexit

    if code is not None and not isinstance(code, int):
        print(code, file=sys.stderr)  # sys.exit("message") semantics
        code = 1
    atexit._run_exitfuncs()
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(code or 0)


app.add_typer(probe_app, name="probe")
