"""Ctrl-C and SIGTERM during a study: preemption, and a Ctrl-C Python would drop."""

from __future__ import annotations

import contextlib
import signal
import sys
import time
from collections.abc import Callable, Iterator
from typing import Any

from convtune.errors import Preempted

__all__ = ["Preempted", "preemptible", "stop_signals"]


class _StopSignals:
    """SIGTERM and SIGINT while a study runs: :class:`Preempted` or ``KeyboardInterrupt``, raised
    where a trial can be marked, never in the middle of Optuna's bookkeeping.

    Inside :func:`deferred` (around ``study.optimize``) a signal is kept, not raised: raised in
    Optuna's ``ask`` or ``tell`` it would leave a trial RUNNING or FAIL with no status and no
    retry. The objective reopens the window (:func:`undeferred`), raising a kept signal first,
    so the trial it was given is marked and re-queued; the run loop raises one kept after
    ``tell`` (:func:`raise_if_pending`). Outside both, or when a second signal comes while one
    is kept for a second or more (press Ctrl-C again if Optuna waits for a storage), a signal
    raises at once. Once one stop is raised, later signals change nothing: they must not break
    its clean-up (ranks stopped, the trial marked and re-queued).
    """

    def __init__(self) -> None:
        self.deferring = False
        self.pending: KeyboardInterrupt | None = None
        self.pending_since = 0.0
        self.raised = False  # a stop was raised: the run is ending, later signals are the same stop
        # Whether a SIGINT is the user's Ctrl-C (interrupted, not retried); otherwise it is
        # preemption like SIGTERM (a worker's supervisor says which: see convtune.study.workers).
        self.sigint_is_ctrl_c: Callable[[], bool] = lambda: True

    def handle(self, signum: int, _frame: Any) -> None:
        stop: KeyboardInterrupt = (
            KeyboardInterrupt() if signum == signal.SIGINT and self.sigint_is_ctrl_c() else Preempted()
        )
        if self.raised:
            return  # one stop per run: another signal must not break the first one's clean-up
        now = time.monotonic()
        if self.deferring and (self.pending is None or now - self.pending_since < 1.0):
            # Kept; the same stop delivered twice at once (a scheduler signals every process,
            # and the supervisor forwards its own) is still one. Preemption wins: re-queued.
            if self.pending is None or isinstance(stop, Preempted):
                self.pending, self.pending_since = stop, now
            return
        # Not deferring, or another signal a second or more after the kept one (Optuna stuck,
        # e.g. waiting for a storage that is away): raise now.
        if isinstance(self.pending, Preempted):
            stop = self.pending
        self.pending, self.raised = None, True
        raise stop

    def stopping(self) -> None:
        """A stop that did not come through :meth:`handle` (an executor's :class:`Preempted`: the
        ranks were signalled) is on its way out: later signals (the supervisor's SIGTERM to every
        worker) must not break its clean-up either."""
        self.pending, self.raised = None, True

    def raise_if_pending(self) -> None:
        if self.pending is not None:
            pending, self.pending, self.raised = self.pending, None, True
            raise pending

    def reset(self, sigint_is_ctrl_c: Callable[[], bool] | None) -> None:
        self.pending, self.raised = None, False
        self.sigint_is_ctrl_c = sigint_is_ctrl_c or (lambda: True)

    @contextlib.contextmanager
    def deferred(self) -> Iterator[None]:
        previous, self.deferring = self.deferring, True
        try:
            yield
        finally:
            self.deferring = previous

    @contextlib.contextmanager
    def undeferred(self) -> Iterator[None]:
        previous, self.deferring = self.deferring, False
        try:
            self.raise_if_pending()
            yield
        finally:
            self.deferring = previous


stop_signals = _StopSignals()


@contextlib.contextmanager
def preemptible(sigint_is_ctrl_c: Callable[[], bool] | None = None) -> Iterator[None]:
    """Within: SIGTERM raises :class:`Preempted` and SIGINT ``KeyboardInterrupt`` (or
    :class:`Preempted` when ``sigint_is_ctrl_c()`` says it is not the user's Ctrl-C), deferred
    while Optuna books a trial (what ``convtune study run`` and its workers run under)."""
    stop_signals.reset(sigint_is_ctrl_c)
    previous = {sig: signal.signal(sig, stop_signals.handle) for sig in (signal.SIGTERM, signal.SIGINT)}
    try:
        yield
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)


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
