"""The looped signal matrix (`make stress`): every signal pattern × storage × 1 and 2 workers, many runs.

CI runs one case per pattern (tests/test_faults.py); a race that loses a trial one run in ten
passes that once in a while. Here each cell runs ``--runs`` times (30 by default: a 1-in-10 race
shows with 96% probability) on one study per cell, each run resuming what the previous one left,
and checks after each run:

- the exit status (143 preempted, 130 Ctrl-C; a SIGKILLed supervisor shows -9) and, for a stop
  the CLI survives, exactly one "Resume with" line and no traceback;
- every process of the run gone within 10 s of the signal;
- no trial RUNNING (after a SIGKILL of every process: none once the next run has started), no
  FAIL without a status, each preempted trial queued again exactly once, each trial that was
  training when the signal came finished or preempted.

Trials are the digits workload slowed down after their first evaluation, so every signal lands
inside a trial. Usage::

    python benchmarks/stress_signals.py --runs 30 --markdown stress.md
    python benchmarks/stress_signals.py --runs 2 --storages sqlite journal --patterns term-all
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import subprocess
import sys
import tempfile
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))
from services import (  # noqa: E402  (the fault tests' own)
    FAULT_SPEC,
    TAG_ENV,
    digits_with_a_fault,
    process_roles,
    tagged_processes,
)

SLOW_AFTER_FIRST_EVAL = """
    if self.calls > 16 and os.environ.get("SLOW_AFTER_FIRST_EVAL"):
        time.sleep(0.5)  # each step after the first evaluation: every signal lands inside a trial
"""

SPEC = FAULT_SPEC

Roles = dict[str, list[int]]
# pattern -> (what to signal, the exit status expected, the executor, the smallest worker count)
PATTERNS: dict[str, tuple[Callable[[int, Roles], None], int | None, str, int]] = {}


def _kill(pids: list[int], sig: signal.Signals) -> None:
    for pid in pids:
        try:
            os.kill(pid, sig)
        except ProcessLookupError:
            pass


def pattern(name: str, expected: int | None, executor: str = "auto", min_workers: int = 1):
    def register(send: Callable[[int, Roles], None]) -> Callable[[int, Roles], None]:
        PATTERNS[name] = (send, expected, executor, min_workers)
        return send

    return register


@pattern("term-supervisor", 143)
def _term_supervisor(cli: int, roles: Roles) -> None:
    _kill([cli], signal.SIGTERM)


@pattern("int-supervisor", 130)
def _int_supervisor(cli: int, roles: Roles) -> None:
    _kill([cli], signal.SIGINT)


@pattern("term-all", 143, executor="elastic")
def _term_all(cli: int, roles: Roles) -> None:
    _kill([cli, *roles["worker"], *roles["torchrun"], *roles["rank"]], signal.SIGTERM)


@pattern("term-ranks", 143, executor="elastic")
def _term_ranks(cli: int, roles: Roles) -> None:
    _kill(roles["rank"], signal.SIGTERM)


@pattern("int-ranks", 143, executor="elastic")
def _int_ranks(cli: int, roles: Roles) -> None:
    _kill(roles["rank"], signal.SIGINT)


@pattern("term-workers", 143, min_workers=2)
def _term_workers(cli: int, roles: Roles) -> None:
    _kill(roles["worker"], signal.SIGTERM)


@pattern("int-term-workers", 143, min_workers=2)
def _int_term_workers(cli: int, roles: Roles) -> None:
    first, *rest = roles["worker"]
    _kill([first], signal.SIGINT)
    _kill(rest, signal.SIGTERM)


@pattern("kill-supervisor", -9, min_workers=2)
def _kill_supervisor(cli: int, roles: Roles) -> None:
    _kill([cli], signal.SIGKILL)


@pattern("kill-all", -9)
def _kill_all(cli: int, roles: Roles) -> None:
    _kill([cli, *roles["worker"], *roles["torchrun"], *roles["rank"]], signal.SIGKILL)


@dataclass
class Cell:
    pattern: str
    storage: str
    workers: int
    runs: int = 0
    held: int = 0
    failures: list[str] = field(default_factory=list)
    seconds_to_gone: list[float] = field(default_factory=list)


def _trials(url: str, name: str) -> list:
    from convtune.study import open_study

    return open_study(name, url)[0].trials


def check_trials(
    url: str, name: str, training: list[int], *, may_run: frozenset[int] = frozenset()
) -> str | None:
    """The invariants after a run; a description of the first that fails, else None.

    ``may_run``: trials that may still be RUNNING (those a SIGKILL of every process just left;
    any earlier one must have been recovered by this run's start).
    """
    from optuna.trial import TrialState

    from convtune.config.record import TrialRecord

    trials = _trials(url, name)
    running = [t.number for t in trials if t.state == TrialState.RUNNING and t.number not in may_run]
    if running:
        return f"trials left RUNNING: {running}"
    unmarked = [t.number for t in trials if t.state == TrialState.FAIL and not TrialRecord.of(t).status]
    if unmarked:
        return f"FAIL without a status: {unmarked}"
    retries: dict[int, int] = {}
    for t in trials:
        history = t.system_attrs.get("retry_history")
        if history:
            retries[history[-1]] = retries.get(history[-1], 0) + 1
    for t in trials:
        status = TrialRecord.of(t).status
        # Preempted: queued exactly once. Interrupted (Ctrl-C): once, or not at all when the same
        # configuration was interrupted past the retry limit.
        queued = retries.get(t.number, 0)
        if t.state == TrialState.FAIL and (queued > 1 or (queued == 0 and status != "interrupted")):
            return f"trial {t.number} ({status}) queued {queued} times"
    for number in training:
        t = trials[number]
        ok = t.state == TrialState.COMPLETE or TrialRecord.of(t).status in ("preempted", "interrupted")
        if not ok and not (number in may_run and t.state == TrialState.RUNNING):
            return f"trial {number} was training: now {t.state.name} {TrialRecord.of(t).status}"
    return None


def run_case(url: str, name: str, folder: Path, cell: Cell) -> str | None:
    """One run of ``cell``'s pattern; a description of what failed, else None."""
    from convtune.storage import open_storage

    send, expected, executor, _ = PATTERNS[cell.pattern]
    tag = uuid.uuid4().hex[:12]
    env = {**os.environ, TAG_ENV: tag, "SLOW_AFTER_FIRST_EVAL": "1", "PYTHONWARNINGS": "ignore"}
    command = [sys.executable, "-m", "convtune.cli", "study", "run", name, "-n", "40", "--storage", url]
    command += ["--workers", str(cell.workers), "--executor", executor]
    proc = subprocess.Popen(
        command, cwd=folder, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )
    storage = open_storage(url)
    try:
        import optuna
        from optuna.trial import TrialState

        deadline = time.monotonic() + 180
        training: list[int] = []
        while time.monotonic() < deadline and proc.poll() is None:
            study = optuna.load_study(study_name=name, storage=storage)
            training = [
                t.number
                for t in study.get_trials(deepcopy=False, states=(TrialState.RUNNING,))
                if t.intermediate_values and "worker" in t.user_attrs
            ]
            found = process_roles(tag, proc.pid)
            if len(training) >= cell.workers and (executor != "elastic" or found["rank"]):
                break
            time.sleep(0.2)
        else:
            return f"no {cell.workers} training trial(s) in 180 s (exit {proc.poll()})"
        study = optuna.load_study(study_name=name, storage=storage)
        running = frozenset(t.number for t in study.get_trials(deepcopy=False, states=(TrialState.RUNNING,)))
        sent = time.monotonic()
        send(proc.pid, process_roles(tag, proc.pid))
        try:
            _, err = proc.communicate(timeout=60)
        except subprocess.TimeoutExpired:
            return "still running 60 s after the signal"
        while tagged_processes(tag) and time.monotonic() - sent < 30:
            time.sleep(0.1)
        gone = time.monotonic() - sent
        cell.seconds_to_gone.append(round(gone, 2))
        if gone >= 10:
            return f"processes remained {gone:.1f} s after the signal"
        if proc.returncode != expected:
            return f"exit status {proc.returncode}, expected {expected}: {err.strip()[-300:]}"
        if expected in (130, 143) and ("Traceback" in err or err.count("Resume with:") != 1):
            return f"not one resume line: {err.strip()[-300:]}"
        return check_trials(
            url, name, training, may_run=running if cell.pattern == "kill-all" else frozenset()
        )
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate()
        for pid in tagged_processes(tag):
            os.kill(pid, signal.SIGKILL)


def storage_url(kind: str, folder: Path) -> str:
    if kind == "sqlite":
        return f"sqlite:///{folder / 'stress.db'}"
    if kind == "journal":
        return f"journal://{folder / 'stress.log'}"
    return os.environ.get("CONVTUNE_TEST_POSTGRES", "postgresql://postgres@127.0.0.1:5432/test")


def run_cell(cell: Cell, runs: int, grace: int) -> None:
    from convtune.config.spec import StudySpec
    from convtune.study import create_study

    os.environ["CONVTUNE_HEARTBEAT_INTERVAL"] = "1"
    os.environ["CONVTUNE_GRACE_PERIOD"] = str(grace)  # long: a killed run recovers by the dead-process check
    with tempfile.TemporaryDirectory(prefix="convtune-stress-") as tmp:
        folder = Path(tmp)
        workload = digits_with_a_fault(folder, SLOW_AFTER_FIRST_EVAL, imports="import os\nimport time")
        url = storage_url(cell.storage, folder)
        name = f"stress-{cell.pattern}-{cell.workers}-{uuid.uuid4().hex[:6]}"
        create_study(name, StudySpec.from_dict({**SPEC, **workload}), url)
        try:
            for _ in range(runs):
                cell.runs += 1
                failure = run_case(url, name, folder, cell)
                if failure is None:
                    cell.held += 1
                else:
                    cell.failures.append(failure)
                print(
                    f"{cell.pattern:>17} {cell.storage:>10} {cell.workers}w run {cell.runs}: {failure or 'held'}",
                    flush=True,
                )
            # The last run of a kill-all cell left its trials RUNNING: one more start recovers them.
            if cell.pattern == "kill-all":
                from convtune.study import run_study

                os.environ.pop("SLOW_AFTER_FIRST_EVAL", None)
                run_study(name, n_trials=1, storage=url)
                failure = check_trials(url, name, [])
                if failure:
                    cell.failures.append(f"after the resuming run: {failure}")
                    cell.held = min(cell.held, cell.runs - 1)
        finally:
            if cell.storage == "postgresql":
                import optuna

                from convtune.storage import open_storage

                optuna.delete_study(study_name=name, storage=open_storage(url))


def markdown(cells: list[Cell]) -> str:
    lines = [
        "| pattern | storage | workers | runs | held | seconds to every process gone (max) | first failure |",
        "|---|---|---|---|---|---|---|",
    ]
    for c in cells:
        worst = max(c.seconds_to_gone) if c.seconds_to_gone else float("nan")
        first = c.failures[0].replace("|", "/") if c.failures else ""
        lines.append(
            f"| {c.pattern} | {c.storage} | {c.workers} | {c.runs} | {c.held} | {worst:.1f} | {first} |"
        )
    return "\n".join(lines) + "\n"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument(
        "--runs", type=int, default=30, help="runs per cell (30: a 1-in-10 race shows with 96%%)"
    )
    parser.add_argument("--patterns", nargs="+", default=list(PATTERNS), choices=list(PATTERNS))
    parser.add_argument("--storages", nargs="+", default=["sqlite", "journal", "postgresql"])
    parser.add_argument("--workers", nargs="+", type=int, default=[1, 2])
    parser.add_argument("--grace", type=int, default=300, help="CONVTUNE_GRACE_PERIOD for the runs")
    parser.add_argument("--markdown", type=Path, help="write the table here too")
    parser.add_argument("--json", type=Path, help="write every cell's results here")
    args = parser.parse_args()
    cells = [
        Cell(p, s, w)
        for p in args.patterns
        for s in args.storages
        for w in args.workers
        if w >= PATTERNS[p][3] and not (s == "sqlite" and w > 1)  # SQLite takes one writer
    ]
    started = time.monotonic()
    for cell in cells:
        run_cell(cell, args.runs, args.grace)
    table = markdown(cells)
    print(table)
    print(f"{time.monotonic() - started:.0f} s in all")
    if args.markdown:
        args.markdown.write_text(table)
    if args.json:
        args.json.write_text(json.dumps([c.__dict__ for c in cells], indent=1))
    return 0 if all(c.held == c.runs for c in cells) else 1


if __name__ == "__main__":
    sys.exit(main())
