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
# When that process started (boot id / start time in clock ticks): a PID alone may be reused.
WORKER_START_ATTR = "worker_started"
_RUN_ATTRS = {
    "status",
    "error",
    "reason",
    "warnings",
    "resumed_from_checkpoint",
    LEASE_ATTR,
    WORKER_ATTR,
    WORKER_START_ATTR,
}


def worker_id() -> str:
    return f"{socket.gethostname()}:{os.getpid()}"


def process_started(pid: int) -> str | None:
    """When process ``pid`` of this host started, as ``boot-id/pid-namespace/ticks``; None if
    there is none.

    Linux only (``/proc``): the start time in clock ticks since boot (``/proc/PID/stat`` field
    22), with the boot's id, so a PID reused after the process died, or after a reboot, differs;
    and this process's PID namespace, so containers that share a hostname but not PIDs never
    judge each other's processes.
    """
    try:
        with open(f"/proc/{pid}/stat") as f:
            fields = f.read().rsplit(")", 1)[1].split()
        with open("/proc/sys/kernel/random/boot_id") as f:
            boot = f.read().strip()
        namespace = os.readlink("/proc/self/ns/pid")
    except OSError:
        return None
    if fields[0] == "Z":  # a zombie has ended all it will do
        return None
    return f"{boot}/{namespace}/{fields[19]}"


def mark_worker(trial: optuna.Trial) -> None:
    """Record on ``trial`` which worker runs it (a dead worker's trials are found by it)."""
    trial.set_user_attr(WORKER_ATTR, worker_id())
    started = process_started(os.getpid())
    if started is not None:
        trial.set_user_attr(WORKER_START_ATTR, started)


def dead_here(user_attrs: dict[str, Any]) -> bool:
    """True when the trial's worker ran on this host and that process is gone.

    "Gone" is hostname + PID + the process's start time: a live process with the same PID but
    another start time is a different process. A worker on another host, or one recorded
    without a start time, is never known dead here (its lease or heartbeat decides).
    """
    worker, started = user_attrs.get(WORKER_ATTR), user_attrs.get(WORKER_START_ATTR)
    if not isinstance(worker, str) or not isinstance(started, str):
        return False
    host, _, pid = worker.rpartition(":")
    if host != socket.gethostname() or not pid.isdigit():
        return False
    here = process_started(os.getpid())
    if here is None or here.rsplit("/", 1)[0] != started.rsplit("/", 1)[0]:
        return False  # no /proc, or another boot or PID namespace: cannot tell from here
    return process_started(int(pid)) != started


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
    check_host: bool = True,
) -> list[int]:
    """Fail RUNNING trials whose lease expired and re-queue their parameters; their numbers.

    A trial that never renewed counts from its start. A trial whose worker (``host:pid``) is in
    ``dead_workers`` is failed at once, lease or not: the supervisor saw that process die, and
    waiting out the grace period let the other workers finish the study first. When two workers
    sweep at once the journal orders their writes: the second one's is rejected, so a trial is
    retried once.

    ``check_host``: a trial whose worker ran on this host and is gone (:func:`dead_here`) counts
    as dead too, so a run resumed after its processes were killed recovers their trials at once.

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
        dead = trial.user_attrs.get(WORKER_ATTR) in dead_workers or (
            check_host and dead_here(trial.user_attrs)
        )
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


def requeue_unretried_preempted(study: optuna.Study) -> list[int]:
    """Queue the retry of every preempted or interrupted trial that has none (its process was
    killed between marking it and queueing it); their numbers. Preemption is not the trial's
    fault: no retry limit; an interrupted trial within ``MAX_RETRY``, as when it is stopped.

    Run once per run, before any worker starts (two at once could queue one retry each).
    """
    from optuna.trial import TrialState

    from convtune.config.record import TrialRecord, TrialStatus
    from convtune.storage.backends import MAX_RETRY

    trials = study.get_trials(deepcopy=False)
    # A retry's ``retry_history`` ends with the trial it retries (``failed_trial`` is the first).
    retried = {t.system_attrs["retry_history"][-1] for t in trials if t.system_attrs.get("retry_history")}
    queued = []
    for trial in trials:
        if (
            trial.state == TrialState.FAIL
            and trial.number not in retried
            and TrialRecord.of(trial).status in (TrialStatus.PREEMPTED, TrialStatus.INTERRUPTED)
        ):
            preempted = TrialRecord.of(trial).status is TrialStatus.PREEMPTED
            requeue(study, trial, None if preempted else MAX_RETRY)
            queued.append(trial.number)
    return queued


def requeue(study: optuna.Study, failed: optuna.trial.FrozenTrial, max_retry: int | None) -> None:
    """Queue a failed trial's params again as its retry (at most ``max_retry`` times in a row,
    preemptions not counted; ``None``: always, for a preempted trial, whose stop was not its
    own doing).

    The retry starts clean: no outcome, constraint, lease or worker of the lost run; Optuna's
    ``failed_trial`` system attr names the original, whose checkpoint the retry resumes.
    """
    import optuna

    if max_retry is not None and _losses(study, failed) > max_retry:
        return  # lost again and again: a trial that kills its worker is not run for ever
    frozen = copy.deepcopy(failed)  # journals hand out their own
    frozen.user_attrs = {k: v for k, v in frozen.user_attrs.items() if k not in _RUN_ATTRS}
    frozen.system_attrs = {k: v for k, v in frozen.system_attrs.items() if not k.startswith("constraints")}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", optuna.exceptions.ExperimentalWarning)
        optuna.storages.RetryHeartbeatStaleTrialCallback(max_retry=None)(study, frozen)


def _losses(study: optuna.Study, failed: optuna.trial.FrozenTrial) -> int:
    """How many runs of ``failed``'s configuration in a row were lost (itself included), not
    counting preempted ones."""
    from convtune.config.record import TrialRecord, TrialStatus

    earlier = failed.system_attrs.get("retry_history", [])
    storage = study._storage
    losses = 1
    for number in earlier:
        trial = storage.get_trial(storage.get_trial_id_from_study_id_trial_number(study._study_id, number))
        losses += TrialRecord.of(trial).status is not TrialStatus.PREEMPTED
    return losses


class LeaseSweep:
    """An ``optimize`` callback: sweep stale trials after every trial (so the next ask can pop a retry)."""

    def __init__(self, grace: float, max_retry: int, unclaimed_only: bool = False):
        self.grace, self.max_retry, self.unclaimed_only = grace, max_retry, unclaimed_only

    def __call__(self, study: optuna.Study, trial: Any) -> None:
        sweep_stale(study, self.grace, self.max_retry, unclaimed_only=self.unclaimed_only)
