"""Optuna's log, kept from repeating as tracebacks what convtune says in one line.

Light (no torch): the CLI installs it before any command, and each worker process before its trials.
"""

from __future__ import annotations

import logging
import re

from convtune.errors import ConvtuneError


class _ErrorsSaidOnce:
    """Drops Optuna's report of a trial that raised a :class:`ConvtuneError` (its traceback, then
    "failed with value None"): that error ends the run, and the CLI says it in one line."""

    def __init__(self) -> None:
        self.trials: set[str] = set()

    def filter(self, record: logging.LogRecord) -> bool:
        said = re.match(r"Trial (\d+) failed with (parameters|value)", record.getMessage())
        if said is None:
            return True
        error = record.exc_info[1] if record.exc_info else None
        if isinstance(error, ConvtuneError):
            self.trials.add(said.group(1))
            return False
        return not (said.group(2) == "value" and said.group(1) in self.trials)


def _lost_connection_noise(record: logging.LogRecord) -> bool:
    """False for Optuna's "Caught an error from sqlalchemy ... Falling back" on a lost connection
    (an OperationalError: its fallback is retried by the storage, which says the outcome)."""
    message = record.getMessage()
    return not (message.startswith("Caught an error from sqlalchemy") and "OperationalError" in message)


def quiet_optuna_for_one_line_errors() -> None:
    """Keep Optuna's log from repeating, as tracebacks, what convtune says in one line.

    The CLI and every worker process call it (idempotent): a trial that raised a
    :class:`ConvtuneError` ends the run with that error's one line, and a lost database connection
    is retried by the storage, which says the outcome.
    """
    trial_log = logging.getLogger("optuna.study._optimize")
    if not any(isinstance(f, _ErrorsSaidOnce) for f in trial_log.filters):
        trial_log.addFilter(_ErrorsSaidOnce())
        logging.getLogger("optuna.storages._rdb.storage").addFilter(_lost_connection_noise)
