"""The run loop: trials of a study inside ``study.optimize()``, one per call, with Ctrl-C,
SIGTERM (preemption) and lost-trial handling, and leases on journal storages."""

from __future__ import annotations

import contextlib
import time
import warnings
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

import optuna
from optuna.trial import FrozenTrial, TrialState

from convtune.config.record import TrialRecord, TrialStatus, write_status
from convtune.errors import ConfigError
from convtune.execution.executor import Executor, InProcessExecutor
from convtune.storage import resolve_storage_url
from convtune.study.objective import Objective, TrialEvent, TrialFailed, make_pruner, make_sampler, open_study
from convtune.study.signals import Preempted, _lost_interrupt

if TYPE_CHECKING:
    from convtune.config.spec import StudySpec
    from convtune.execution.launcher import LaunchOptions


class StudyHooks(Protocol):
    """Per-trial hooks: ``after_trial`` inside the objective (the trial still running), the call
    itself as an ``optimize`` callback; e.g. :class:`convtune.report.dashboard.DashboardHooks`."""

    def after_trial(self, trial: optuna.Trial) -> None: ...

    def __call__(self, study: optuna.Study, trial: FrozenTrial) -> None: ...


# Builds the hooks from the study's spec and storage URL (a class such as DashboardHooks is one);
# passed by reference so that spawned worker processes can build their own.
HooksFactory = Callable[["StudySpec", str], StudyHooks]


EXECUTORS = ("auto", "elastic", "inprocess")


def check_run_arguments(
    *,
    n_trials: int | None = None,
    timeout: float | None = None,
    world_size: int | None = None,
    executor: str = "auto",
    local_workers: int = 1,
) -> None:
    """Raise :class:`ConfigError` for an argument :func:`run_study` cannot run with (the CLI
    calls it before it opens anything, so its flags are named)."""
    if n_trials is not None and n_trials < 1:
        raise ConfigError(
            f"--n-trials {n_trials}", where="--n-trials", fix="give 1 or more (or leave it out)"
        )
    if timeout is not None and not timeout > 0:
        raise ConfigError(
            f"--timeout {timeout:g}", where="--timeout", fix="give a positive number of seconds"
        )
    if world_size is not None and world_size < 1:
        raise ConfigError(f"--world-size {world_size}", where="--world-size", fix="give 1 or more ranks")
    if executor not in EXECUTORS:
        raise ConfigError(
            f"unknown executor {executor!r}",
            where="--executor",
            fix="choose " + ", ".join(EXECUTORS[:-1]) + f" or {EXECUTORS[-1]}",
        )
    if local_workers < 1:
        raise ConfigError(f"local_workers {local_workers}", where="local_workers", fix="give 1 or more")


def run_study(
    name: str,
    *,
    n_trials: int | None = None,
    timeout: float | None = None,
    storage: str | None = None,
    on_event: Callable[[TrialEvent], None] | None = None,
    world_size: int | None = None,
    executor: str = "auto",
    launch: LaunchOptions | None = None,
    local_workers: int = 1,
    pruner: optuna.pruners.BasePruner | None = None,
    sampler_seed: int | None = None,
    claim: Callable[[], bool] | None = None,
    after_each: Callable[[optuna.Study, FrozenTrial], None] | None = None,
    hooks: HooksFactory | None = None,
) -> optuna.Study:
    """Run trials of study ``name`` inside ``study.optimize()`` (heartbeats and retries need it).

    ``world_size`` overrides the spec's ranks per trial. ``executor``: ``auto`` trains one-rank
    Workload trials in this process (no launch, no channel) and everything else (more ranks,
    nodes, scripts, commands) in torchrun-launched warm ranks; ``elastic`` always launches;
    ``inprocess`` never does. In-process training needs ``OMP_WAIT_POLICY=PASSIVE`` set before
    torch loads (the CLI does): without it spinning OpenMP threads collapse on a loaded
    machine; warm ranks always get it. ``launch`` sets rendezvous options and the
    collective timeout; ``local_workers`` is how many tuning processes share this machine.

    Worker processes (:mod:`convtune.study.workers`) pass their own ``sampler_seed``, and ``claim``:
    called before each trial, False ends the run (``n_trials`` is then ignored). On journal
    storages trials hold a lease instead of Optuna's heartbeat (which journals lack). ``hooks``
    builds per-trial hooks from the spec and storage URL (the CLI passes
    :class:`convtune.report.dashboard.DashboardHooks`: plots as artifacts, the study note).
    """
    from convtune.execution.launcher import ElasticExecutor, LaunchOptions

    check_run_arguments(
        n_trials=n_trials,
        timeout=timeout,
        world_size=world_size,
        executor=executor,
        local_workers=local_workers,
    )
    study, spec = open_study(name, storage)
    if world_size is not None and world_size != spec.world_size:
        spec = spec.model_copy(update={"world_size": world_size})
        spec.search_space  # noqa: B018  (re-validate: a batch must still divide over the ranks)
    study.sampler = make_sampler(
        spec if sampler_seed is None else spec.model_copy(update={"seed": sampler_seed})
    )
    study.pruner = pruner or make_pruner(spec)  # confirm runs pass NopPruner: full runs
    launch = launch or LaunchOptions(local_workers=local_workers)
    in_process = (
        isinstance(spec.workload, str)
        and spec.world_size == 1
        and launch.nnodes == 1
        and executor != "elastic"
    ) or executor == "inprocess"
    chosen: Executor
    if in_process:
        chosen = InProcessExecutor(spec)
        chosen.workload  # noqa: B018  (a workload that cannot be built is the user's error: fail before any trial)
    else:
        if isinstance(spec.workload, str):
            from convtune.workloads import resolve_factory

            resolve_factory(spec.workload, base_dir=Path(spec.base_dir))
        chosen = ElasticExecutor(spec, launch)
    # Per-trial hooks from a layer above (the CLI passes the dashboard's plots and study note).
    trial_hooks = hooks(spec, resolve_storage_url(storage or spec.storage)) if hooks is not None else None
    inner = Objective(
        spec,
        executor=chosen,
        on_event=on_event,
        local_workers=local_workers,
        after_trial=trial_hooks.after_trial if trial_hooks is not None else None,
    )
    callbacks: list[Callable[[optuna.Study, FrozenTrial], None]] = (
        [trial_hooks] if trial_hooks is not None else []
    )
    from convtune.storage import MAX_RETRY, heartbeat_settings, is_journal
    from convtune.storage.leases import LeaseSweep, sweep_stale

    url = resolve_storage_url(storage or spec.storage)
    interval, grace = heartbeat_settings()
    # Journals: leases (no heartbeats in Optuna 5). RDB: Optuna's heartbeats, and a sweep for
    # the trials they cannot see (asked, then the worker died before its first beat).
    journal = is_journal(url)
    sweep_stale(study, grace, MAX_RETRY, unclaimed_only=not journal)
    callbacks.append(LeaseSweep(grace, MAX_RETRY, unclaimed_only=not journal))
    objective = _Leased(inner, interval if journal else None)
    if after_each is not None:
        callbacks.append(after_each)
    # One trial per optimize() call: a trial failed under this worker by another one (its
    # heartbeat or lease lapsed) ends that call with an error Optuna cannot tell apart; this
    # loop recognises it and goes on. ``n_trials``/``timeout`` keep Optuna's meaning.
    deadline = None if timeout is None else time.monotonic() + timeout
    done = 0
    try:
        with _lost_interrupt:
            while (
                (claim is not None or n_trials is None or done < n_trials)
                and (deadline is None or time.monotonic() < deadline)
                and (claim is None or claim())
            ):
                try:
                    study.optimize(
                        objective, n_trials=1, catch=(TrialFailed,), gc_after_trial=True, callbacks=callbacks
                    )
                except Preempted:
                    _requeue_preempted(study, objective.trial_id)
                    raise
                except (ValueError, AssertionError):
                    lost = objective.lost()
                    if lost is None:
                        raise
                    warnings.warn(
                        f"convtune: trial {lost} was failed by another worker while it ran here "
                        "(its heartbeat or lease lapsed); it has been retried there",
                        stacklevel=1,
                    )
                    if after_each is not None:
                        after_each(study, study._storage.get_trial(objective.trial_id))
                done += 1
                _lost_interrupt.raise_if_pending()  # one dropped between trials
    finally:
        chosen.close()
    return study


def _requeue_preempted(study: optuna.Study, trial_id: int | None) -> None:
    """Queue the retry of the trial SIGTERM stopped (not one that had finished before it)."""
    from convtune.storage import MAX_RETRY
    from convtune.storage.leases import requeue

    if trial_id is None:
        return
    trial = study._storage.get_trial(trial_id)
    if trial.state == TrialState.FAIL and TrialRecord.of(trial).status is TrialStatus.PREEMPTED:
        requeue(study, trial, MAX_RETRY)


class _Leased:
    """Marks the trial with its worker and, on journal storages, holds its lease while it runs."""

    def __init__(self, objective: Callable[[optuna.Trial], float], interval: float | None):
        self.objective, self.interval = objective, interval
        self.trial_id: int | None = None
        self.study: optuna.Study | None = None

    def lost(self) -> int | None:
        """The number of this worker's last trial if another worker failed it meanwhile."""
        if self.trial_id is None or self.study is None:
            return None
        trial = self.study._storage.get_trial(self.trial_id)
        if trial.state == TrialState.FAIL and TrialRecord.of(trial).status not in (
            TrialStatus.INTERRUPTED,
            TrialStatus.PREEMPTED,
        ):
            return trial.number
        return None

    def __call__(self, trial: optuna.Trial) -> float:
        from convtune.storage.leases import Lease, mark_worker

        self.trial_id, self.study = trial._trial_id, trial.study
        mark_worker(trial)
        try:
            if self.interval is None:
                return self.objective(trial)
            with Lease(trial.study._storage, trial._trial_id, self.interval):
                return self.objective(trial)
        except KeyboardInterrupt as stop:
            # Also after training (outcome, plots): the trial ends FAIL, marked as interrupted
            # (Ctrl-C: the user's choice, not retried) or preempted (run_study re-queues it).
            preempted = isinstance(stop, Preempted)
            with contextlib.suppress(Exception):
                write_status(
                    trial,
                    TrialStatus.PREEMPTED if preempted else TrialStatus.INTERRUPTED,
                    reason="preempted (SIGTERM): re-queued" if preempted else "interrupted (Ctrl-C)",
                )
            raise
