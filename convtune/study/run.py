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
from convtune.errors import ConfigError, StorageError
from convtune.execution.executor import Executor, InProcessExecutor
from convtune.storage import resolve_storage_url
from convtune.study.objective import Objective, TrialEvent, TrialFailed, make_pruner, make_sampler, open_study
from convtune.study.quiet import quiet_optuna_for_one_line_errors
from convtune.study.signals import Preempted, _lost_interrupt, stop_signals

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
    from convtune.execution.launcher import LaunchOptions

    quiet_optuna_for_one_line_errors()
    check_run_arguments(
        n_trials=n_trials,
        timeout=timeout,
        world_size=world_size,
        executor=executor,
        local_workers=local_workers,
    )
    study, spec = _open_for_run(name, storage, world_size, sampler_seed, pruner)
    check_this_host(spec)
    chosen = _choose_executor(spec, executor, launch or LaunchOptions(local_workers=local_workers))
    try:
        url = resolve_storage_url(storage or spec.storage)
        objective, callbacks = _leased_objective(spec, chosen, url, on_event, local_workers, hooks)
        _recover_lost_trials(study, url, requeue_preempted=claim is None)
        if after_each is not None:
            callbacks.append(after_each)
        _optimize(study, objective, callbacks, n_trials, timeout, claim, after_each)
    finally:
        chosen.close()
    return study


def _open_for_run(
    name: str,
    storage: str | None,
    world_size: int | None,
    sampler_seed: int | None,
    pruner: optuna.pruners.BasePruner | None,
) -> tuple[optuna.Study, StudySpec]:
    """The study with its sampler and pruner, and its spec with this run's world size."""
    study, spec = open_study(name, storage)
    if world_size is not None and world_size != spec.world_size:
        spec = spec.model_copy(update={"world_size": world_size})
        spec.search_space  # noqa: B018  (re-validate: a batch must still divide over the ranks)
    study.sampler = make_sampler(
        spec if sampler_seed is None else spec.model_copy(update={"seed": sampler_seed})
    )
    study.pruner = pruner or make_pruner(spec)  # confirm runs pass NopPruner: full runs
    return study, spec


def check_this_host(spec: StudySpec) -> None:
    """The spec's directories are writable here too: ``study create`` may have run on another
    host (a login node), and a worker must fail before it asks for a trial, not in one."""
    import socket

    from convtune.config.spec import check_writable_dir

    for key in ("checkpoint_dir", "artifacts"):
        value = getattr(spec, key, None)
        if value:
            check_writable_dir(Path(value), where=f"spec {key} on {socket.gethostname()}")


def _choose_executor(spec: StudySpec, executor: str, launch: LaunchOptions) -> Executor:
    """This process for one-rank Workload trials (``auto``), launched ranks for the rest.

    The workload is imported here, before any trial: one that cannot be built is the user's
    error, one line, not a FAIL per trial.
    """
    from convtune.execution.launcher import ElasticExecutor

    in_process = (
        isinstance(spec.workload, str)
        and spec.world_size == 1
        and launch.nnodes == 1
        and executor != "elastic"
    ) or executor == "inprocess"
    if in_process:
        chosen = InProcessExecutor(spec)
        chosen.workload  # noqa: B018
        return chosen
    if isinstance(spec.workload, str):
        from convtune.workloads import resolve_factory

        resolve_factory(spec.workload, base_dir=Path(spec.base_dir))
    return ElasticExecutor(spec, launch)


def _leased_objective(
    spec: StudySpec,
    chosen: Executor,
    url: str,
    on_event: Callable[[TrialEvent], None] | None,
    local_workers: int,
    hooks: HooksFactory | None,
) -> tuple[_Leased, list[Callable[[optuna.Study, FrozenTrial], None]]]:
    """The objective (marked with its worker, leased on journals) and the ``optimize`` callbacks:
    the per-trial hooks from a layer above (the CLI's dashboard plots) and the stale-trial sweep."""
    from convtune.storage import MAX_RETRY, heartbeat_settings, is_journal
    from convtune.storage.leases import LeaseSweep

    trial_hooks = hooks(spec, url) if hooks is not None else None
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
    interval, grace = heartbeat_settings()
    # Journals: leases (no heartbeats in Optuna 5). RDB: Optuna's heartbeats, and a sweep for
    # the trials they cannot see (asked, then the worker died before its first beat).
    journal = is_journal(url)
    callbacks.append(LeaseSweep(grace, MAX_RETRY, unclaimed_only=not journal))
    return _Leased(inner, interval if journal else None), callbacks


def _recover_lost_trials(study: optuna.Study, url: str, *, requeue_preempted: bool) -> None:
    """Before the first trial: fail and re-queue the trials whose worker is gone.

    At once, without waiting out the grace period, when the worker ran on this host and its
    process is known dead (hostname, PID and start time). ``requeue_preempted`` (once per run,
    by the process that starts it) also queues a preempted trial whose retry never was.
    """
    from convtune.storage import MAX_RETRY, heartbeat_settings, is_journal
    from convtune.storage.leases import requeue_unretried_preempted, sweep_stale

    sweep_stale(study, heartbeat_settings()[1], MAX_RETRY, unclaimed_only=not is_journal(url))
    if requeue_preempted:
        requeue_unretried_preempted(study)


def _optimize(
    study: optuna.Study,
    objective: _Leased,
    callbacks: list[Callable[[optuna.Study, FrozenTrial], None]],
    n_trials: int | None,
    timeout: float | None,
    claim: Callable[[], bool] | None,
    after_each: Callable[[optuna.Study, FrozenTrial], None] | None,
) -> None:
    """One trial per ``optimize()`` call until ``n_trials``, ``timeout`` or ``claim`` says stop.

    A trial failed under this worker by another one (its heartbeat or lease lapsed) ends that
    call with an error Optuna cannot tell apart; this loop recognises it and goes on.
    ``n_trials``/``timeout`` keep Optuna's meaning. A signal that lands during Optuna's
    bookkeeping is raised after it (:data:`stop_signals`): no trial is left without a status.
    """
    deadline = None if timeout is None else time.monotonic() + timeout
    done = 0
    with _lost_interrupt:
        while (
            (claim is not None or n_trials is None or done < n_trials)
            and (deadline is None or time.monotonic() < deadline)
            and (claim is None or claim())
        ):
            try:
                with stop_signals.deferred():
                    study.optimize(
                        objective, n_trials=1, catch=(TrialFailed,), gc_after_trial=True, callbacks=callbacks
                    )
                stop_signals.raise_if_pending()
            except KeyboardInterrupt:  # Ctrl-C or Preempted
                stop_signals.stopping()
                _requeue_stopped(study, objective.trial_id)
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
            except Exception as exc:
                # A database that stayed down past the reconnect budget can surface inside
                # Optuna's bookkeeping as another error (an unbound local in its tell's clean-up):
                # the storage's own error is the one that says what happened.
                lost_storage = _storage_error_in(exc)
                if lost_storage is None or lost_storage is exc:
                    raise
                raise lost_storage from None
            done += 1
            _lost_interrupt.raise_if_pending()  # one dropped between trials


def _storage_error_in(exc: BaseException) -> StorageError | None:
    """The :class:`StorageError` that ``exc`` is, or arose while handling; None if none."""
    seen: BaseException | None = exc
    while seen is not None:
        if isinstance(seen, StorageError):
            return seen
        seen = seen.__cause__ or seen.__context__
    return None


def _requeue_stopped(study: optuna.Study, trial_id: int | None) -> None:
    """Queue the retry of the trial a signal stopped (not one that had finished before it).

    A preempted trial is queued as often as it is preempted (not the trial's fault); one
    interrupted by Ctrl-C within the retry limit, so a configuration the user stops again and
    again (it hangs, it floods the machine) is not run for ever.
    """
    from convtune.storage import MAX_RETRY
    from convtune.storage.leases import requeue

    if trial_id is None:
        return
    trial = study._storage.get_trial(trial_id)
    status = TrialRecord.of(trial).status
    if trial.state == TrialState.FAIL and status is TrialStatus.PREEMPTED:
        requeue(study, trial, None)
    elif trial.state == TrialState.FAIL and status is TrialStatus.INTERRUPTED:
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
        try:
            # A signal kept since Optuna's ask() is raised here, where the trial gets its mark.
            with stop_signals.undeferred():
                mark_worker(trial)
                if self.interval is None:
                    return self.objective(trial)
                with Lease(trial.study._storage, trial._trial_id, self.interval):
                    return self.objective(trial)
        except KeyboardInterrupt as stop:
            # Also after training (outcome, plots): the trial ends FAIL, marked as interrupted
            # (Ctrl-C) or preempted; _optimize re-queues it either way.
            stop_signals.stopping()
            preempted = isinstance(stop, Preempted)
            with contextlib.suppress(Exception):
                write_status(
                    trial,
                    TrialStatus.PREEMPTED if preempted else TrialStatus.INTERRUPTED,
                    reason="preempted (SIGTERM, or a signal to a worker or rank): re-queued"
                    if preempted
                    else "interrupted (Ctrl-C)",
                )
            raise
