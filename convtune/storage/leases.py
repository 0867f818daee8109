"""Which worker runs a trial, and leases on journal-storage trials.

Leases: Optuna 5's JournalStorage (file or Redis) has no heartbeat (it does not implement
``BaseHeartbeat``; ``fail_stale_trials`` returns without doing anything), so a killed worker's
trial would stay RUNNING for ever. On journal storages convtune gives trials the guarantee the RDB
storage has: a thread renews the trial's ``lease`` user attribute every heartbeat interval, and
before every trial each worker fails the RUNNING trials whose lease is older than the grace period
and re-queues their parameters with Optuna's ``RetryHeartbeatStaleTrialCallback`` (at most
``MAX_RETRY`` times; ``retried_trial_number`` names the original).
"""

from __future__ import annotations

import copy
import os
import socket
import threading
import time
import warnings
from collections.abc import Collection
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import optuna


LEASE_ATTR = "lease"  # epoch seconds of the last renewal (journal storages only)
WORKER_ATTR = "worker"  # host:pid of the worker running the trial
_RUN_ATTRS = {"status", "error", "reason", "resumed_from_checkpoint", LEASE_ATTR, WORKER_ATTR}


def worker_id() -> str:
    return f"{socket.gethostname()}:{os.getpid()}"


def mark_worker(trial: optuna.Trial) -> None:
    """Record on ``trial`` which worker runs it (a dead worker's trials are found by it)."""
    trial.set_user_attr(WORKER_ATTR, worker_id())


# ---- leases for journal storages -----------------------------------------------------------------


class Lease:
    """Renews a running trial's lease every ``interval`` seconds in a daemon thread."""

    def __init__(self, storage: Any, trial_id: int, interval: float):
        self.storage, self.trial_id, self.interval = storage, trial_id, interval
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name=f"convtune-lease-{trial_id}", daemon=True)

    def __enter__(self) -> Lease:
        self.renew()
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join(timeout=max(5.0, 2 * self.interval))

    def renew(self) -> None:
        self.storage.set_trial_user_attr(self.trial_id, LEASE_ATTR, time.time())

    def _run(self) -> None:
        while not self._stop.wait(self.interval):
            try:
                self.renew()
            except Exception:  # noqa: BLE001  (finished meanwhile, or storage briefly away: retry)
                if self._stop.is_set():
                    return


def sweep_stale(
    study: optuna.Study,
    grace: float,
    max_retry: int,
    dead_workers: Collection[str] = (),
    unclaimed_only: bool = False,
) -> list[int]:
    """Fail RUNNING trials whose lease expired and re-queue their parameters; their numbers.

    A trial that never renewed counts from its start. A trial whose worker (``host:pid``) is in
    ``dead_workers`` is failed at once, lease or not: the supervisor saw that process die, and
    waiting out the grace period let the other workers finish the study first. When two workers
    sweep at once the journal orders their writes: the second one's is rejected, so a trial is
    retried once.

    ``unclaimed_only`` (RDB storages, whose heartbeats cover the rest): only trials that no worker
    marked as its own within the grace period, i.e. whose worker died between Optuna's ``ask``
    and the objective's first line, before its first heartbeat.
    """
    import optuna
    from optuna.trial import TrialState

    storage = study._storage
    now = time.time()
    failed = []
    for trial in study.get_trials(deepcopy=False, states=(TrialState.RUNNING,)):
        # A retried trial inherits its original's attributes: its own start counts too.
        started = trial.datetime_start.timestamp() if trial.datetime_start else now
        last = max(float(trial.user_attrs.get(LEASE_ATTR, 0.0)), started)
        dead = trial.user_attrs.get(WORKER_ATTR) in dead_workers
        if unclaimed_only and WORKER_ATTR in trial.user_attrs and not dead:
            continue
        if now - last <= grace and not dead:
            continue
        if dead:
            why = "its process died"
        elif WORKER_ATTR in trial.user_attrs:
            why = f"no lease for {now - last:.0f} s"
        else:
            why = f"never claimed in {now - last:.0f} s"
        try:
            storage.set_trial_user_attr(trial._trial_id, "status", "failed")
            storage.set_trial_user_attr(
                trial._trial_id, "error", f"worker {trial.user_attrs.get(WORKER_ATTR, '?')} lost: {why}"
            )
            storage.set_trial_state_values(trial._trial_id, state=TrialState.FAIL)
        except (optuna.exceptions.UpdateFinishedTrialError, KeyError):
            continue  # another worker (or the trial's own) got there first
        failed.append(trial.number)
        requeue(study, storage.get_trial(trial._trial_id), max_retry)
    return failed


def requeue(study: optuna.Study, failed: optuna.trial.FrozenTrial, max_retry: int) -> None:
    """Queue a failed trial's params again as its retry (at most ``max_retry`` times in a row).

    The retry starts clean: no outcome, constraint, lease or worker of the lost run; Optuna's
    ``failed_trial`` system attr names the original, whose checkpoint the retry resumes.
    """
    import optuna

    frozen = copy.deepcopy(failed)  # journals hand out their own
    frozen.user_attrs = {k: v for k, v in frozen.user_attrs.items() if k not in _RUN_ATTRS}
    frozen.system_attrs = {k: v for k, v in frozen.system_attrs.items() if not k.startswith("constraints")}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", optuna.exceptions.ExperimentalWarning)
        optuna.storages.RetryHeartbeatStaleTrialCallback(max_retry=max_retry)(study, frozen)


class LeaseSweep:
    """An ``optimize`` callback: sweep stale trials after every trial (so the next ask can pop a retry)."""

    def __init__(self, grace: float, max_retry: int, unclaimed_only: bool = False):
        self.grace, self.max_retry, self.unclaimed_only = grace, max_retry, unclaimed_only

    def __call__(self, study: optuna.Study, trial: Any) -> None:
        sweep_stale(study, self.grace, self.max_retry, unclaimed_only=self.unclaimed_only)
