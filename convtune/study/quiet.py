"""Optuna's log, kept from repeating as tracebacks what convtune says in one line.

Light (no torch): the CLI installs it before any command, and each worker process before its trials.
"""

from __future__ import annotations

import logging
import re

from convtune.errors import ConvtuneError


class _SaidInOneLine(logging.Filter):
    """Drops Optuna's report of a trial that Ctrl-C, a preemption or a :class:`ConvtuneError`
    ended: "Trial N failed with parameters ..." (with its traceback) and the "Trial N failed with
    value None" that follows it in the same thread. convtune says each in one line (the trial is
    marked ``interrupted`` or ``preempted`` with how to resume, or the error ends the run), and
    Optuna's lines read like a crash beside it."""

    def __init__(self) -> None:
        super().__init__()
        self._follow_up: dict[int | None, str] = {}  # thread -> the warning that follows

    def filter(self, record: logging.LogRecord) -> bool:
        error = record.exc_info[1] if record.exc_info else None
        said = re.match(r"Trial (\d+) failed with parameters", record.getMessage())
        if said is not None and isinstance(error, (KeyboardInterrupt, ConvtuneError)):
            self._follow_up[record.thread] = f"Trial {said.group(1)} failed with value "
            return False
        follow_up = self._follow_up.pop(record.thread, None)
        return follow_up is None or not record.getMessage().startswith(follow_up)


def _lost_connection_noise(record: logging.LogRecord) -> bool:
    """False for Optuna's "Caught an error from sqlalchemy ... Falling back" on a lost connection
    (an OperationalError: its fallback is retried by the storage, which says the outcome)."""
    message = record.getMessage()
    return not (message.startswith("Caught an error from sqlalchemy") and "OperationalError" in message)


def quiet_optuna_for_one_line_errors() -> None:
    """Keep Optuna's log from repeating, as tracebacks, what convtune says in one line.

    The CLI, ``run_study`` and every worker process call it (idempotent): a trial that Ctrl-C or
    a preemption stopped, or that raised a :class:`ConvtuneError`, is said once by convtune, and
    a lost database connection is retried by the storage, which says the outcome.
    """
    trial_log = logging.getLogger("optuna.study._optimize")
    if not any(isinstance(f, _SaidInOneLine) for f in trial_log.filters):
        trial_log.addFilter(_SaidInOneLine())
        logging.getLogger("optuna.storages._rdb.storage").addFilter(_lost_connection_noise)
