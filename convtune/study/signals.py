"""Ctrl-C and SIGTERM during a study: preemption, a Ctrl-C Python would drop, Optuna's noise about it."""

from __future__ import annotations

import contextlib
import logging
import signal
import sys
from collections.abc import Iterator
from typing import Any


class _QuietInterrupt(logging.Filter):
    """Ctrl-C is no crash: Optuna's two "trial N failed" warnings for it are dropped.

    convtune reports the interruption itself (the trial is marked ``interrupted`` and the CLI
    prints how to resume); Optuna's lines, the second of which says only "failed with value
    None", read like a crash beside it.
    """

    def __init__(self) -> None:
        super().__init__()
        self._follow_up: dict[int | None, str] = {}  # thread -> the warning that follows

    def filter(self, record: logging.LogRecord) -> bool:
        if record.exc_info and isinstance(record.exc_info[1], KeyboardInterrupt):
            number = record.getMessage().split()[1]  # "Trial N failed with parameters: ..."
            self._follow_up[record.thread] = f"Trial {number} failed with value "
            return False
        follow_up = self._follow_up.pop(record.thread, None)
        return follow_up is None or not record.getMessage().startswith(follow_up)


_quiet_interrupt = _QuietInterrupt()
logging.getLogger("optuna.study._optimize").addFilter(_quiet_interrupt)


class Preempted(KeyboardInterrupt):
    """SIGTERM, as a cluster scheduler sends before it preempts a job: stop like Ctrl-C, but
    the running trial is re-queued (and resumes from its checkpoint when ``checkpoint_dir`` is
    set) the next time the study runs.

    A ``KeyboardInterrupt`` so that every clean-up path of Ctrl-C (ranks stopped, Optuna's
    FAIL) runs for it too.
    """


def _raise_preempted(_signum: int, _frame: Any) -> None:
    """A SIGTERM handler: raise :class:`Preempted` in the main thread."""
    raise Preempted


@contextlib.contextmanager
def preemptible() -> Iterator[None]:
    """Within: SIGTERM raises :class:`Preempted` (what ``convtune study run`` runs under)."""
    previous = signal.signal(signal.SIGTERM, _raise_preempted)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)


class _LostInterrupt:
    """Keeps a Ctrl-C that Python would drop, to raise it at the next evaluation.

    A SIGINT that lands while a weakref callback or ``__del__`` runs (garbage collection) cannot
    propagate: Python prints "Exception ignored ... KeyboardInterrupt" and training goes on, so
    one Ctrl-C would leave the study running. Inside :func:`run_study`, ``sys.unraisablehook``
    catches it instead.
    """

    def __init__(self) -> None:
        self.pending: KeyboardInterrupt | None = None
        self._previous: Any = None

    def __enter__(self) -> _LostInterrupt:
        self.pending = None
        self._previous = sys.unraisablehook
        sys.unraisablehook = self._hook
        return self

    def __exit__(self, *exc: object) -> None:
        sys.unraisablehook = self._previous

    def _hook(self, unraisable: Any) -> None:
        if isinstance(unraisable.exc_value, KeyboardInterrupt):
            self.pending = unraisable.exc_value  # a Preempted stays one
        else:
            self._previous(unraisable)

    def raise_if_pending(self) -> None:
        if self.pending is not None:
            pending, self.pending = self.pending, None
            raise pending


_lost_interrupt = _LostInterrupt()
