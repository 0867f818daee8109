"""Many workers on one study: local worker processes, their slices of the machine, and leases.

``convtune study run NAME --workers K`` starts K worker processes here (multiprocessing, spawn);
each runs its own ``study.optimize`` loop against the shared storage, and the same command on
another machine joins the same study. This process only supervises: it hands out the command's
``--n-trials`` one trial at a time, restarts a worker killed by a signal (its trial is failed and
retried by the storage's heartbeat or lease), forwards Ctrl-C, and reports.

Resources: on a GPU node worker ``i`` sees ``CUDA_VISIBLE_DEVICES`` = GPUs ``[i·W, (i+1)·W)`` for
``W = world_size``; on a CPU node it is pinned (``sched_setaffinity``) to its share of the cores
and its ranks get ``cores / (ranks × K)`` threads, so workers never oversubscribe.
Leases on journal storages: :mod:`convtune.storage.leases`.
"""

from __future__ import annotations

import contextlib
import os
import queue
import signal
import socket
import threading
import time
import warnings
import zlib
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from convtune.errors import ConfigError, ConvtuneError, StorageError

if TYPE_CHECKING:
    import optuna

    from convtune.execution.launcher import LaunchOptions
    from convtune.study.objective import TrialEvent

# ---- slices of the machine -----------------------------------------------------------------------


@dataclass(frozen=True)
class Slice:
    """What one local worker may use: GPUs (``CUDA_VISIBLE_DEVICES``) or CPU cores."""

    index: int
    gpus: tuple[str, ...] = ()
    cpus: tuple[int, ...] = ()
    shared: bool = False  # cores (or devices) are shared with another worker

    @property
    def env(self) -> dict[str, str]:
        return {"CUDA_VISIBLE_DEVICES": ",".join(self.gpus)} if self.gpus else {}


def visible_gpus() -> list[str]:
    """The GPUs this process may use (``$CUDA_VISIBLE_DEVICES`` when set, else every device)."""
    raw = os.environ.get("CUDA_VISIBLE_DEVICES")
    if raw is not None:
        return [d.strip() for d in raw.split(",") if d.strip() and d.strip() != "-1"]
    try:
        import torch

        return [str(i) for i in range(torch.cuda.device_count())]
    except Exception:  # noqa: BLE001  (no torch CUDA: a CPU node)
        return []


def available_cpus() -> list[int]:
    if hasattr(os, "sched_getaffinity"):
        return sorted(os.sched_getaffinity(0))
    return list(range(os.cpu_count() or 1))


def plan_slices(
    workers: int, world_size: int, *, gpus: list[str] | None = None, cpus: list[int] | None = None
) -> list[Slice]:
    """Split this machine between ``workers`` local workers of ``world_size`` ranks each."""
    gpus = visible_gpus() if gpus is None else gpus
    cpus = available_cpus() if cpus is None else cpus
    if gpus:
        need = workers * world_size
        if need > len(gpus):
            raise ConfigError(
                f"{workers} workers × {world_size} ranks need {need} GPUs, this node has {len(gpus)}",
                where="--workers",
                fix=f"use --workers {max(1, len(gpus) // world_size)} or fewer ranks per trial",
            )
        return [Slice(i, gpus=tuple(gpus[i * world_size : (i + 1) * world_size])) for i in range(workers)]
    per = len(cpus) // workers
    if per == 0:  # fewer cores than workers: they share, one core each, round robin
        return [Slice(i, cpus=(cpus[i % len(cpus)],), shared=True) for i in range(workers)]
    return [
        Slice(i, cpus=tuple(cpus[i * per : (i + 1) * per]), shared=per < world_size) for i in range(workers)
    ]


def worker_seed(base: int, index: int, restart: int = 0) -> int:
    """A sampler seed of its own for every worker: equal seeds would suggest equal configs.

    Mixes the study's seed, the worker's index, the host and the supervising process, so workers
    here and on other machines (the same command) differ; the training seed stays the spec's.
    """
    key = f"{base}:{index}:{restart}:{socket.gethostname()}:{os.getpid()}"
    return zlib.crc32(key.encode()) & 0x7FFFFFFF


# ---- the supervisor ------------------------------------------------------------------------------


@dataclass
class WorkerReport:
    """How a ``--workers`` run ended."""

    exit_status: int = 0
    restarts: int = 0
    error: str | None = None
    stopped_by: int = 0  # the signal that stopped the run: SIGINT (Ctrl-C) or SIGTERM (preemption)


def check_workers(url: str, workers: int) -> None:
    """Refuse what cannot work before anything starts."""
    from convtune.storage import is_sqlite, redact

    if workers < 1:
        raise ConfigError(f"{workers} workers", where="--workers", fix="give 1 or more")
    if workers > 1 and is_sqlite(url):
        raise StorageError(
            f"SQLite takes one writer at a time; --workers {workers} needs a shared storage",
            where=f"--workers with {redact(url)}",
            fix="use --storage journal:///path/study.log (this machine) or postgresql://… (many machines)",
        )


def contention_warning(spec: Any, slices: list[Slice]) -> str | None:
    if spec.cost not in ("wallclock", "device_seconds") or len(slices) < 2:
        return None
    if any(s.shared for s in slices) or not any(s.gpus for s in slices):
        return (
            f"cost is {spec.cost} and {len(slices)} workers share this machine's "
            f"{'cores' if not any(s.gpus for s in slices) else 'devices'}: measured times include "
            "their contention (memory bandwidth, caches, shared cores); compare trials from runs "
            "with the same --workers, or confirm the best with `convtune study confirm`"
        )
    return None


def run_workers(
    name: str,
    *,
    workers: int,
    n_trials: int | None,
    timeout: float | None,
    storage: str | None,
    world_size: int | None = None,
    executor: str = "auto",
    launch: LaunchOptions | None = None,
    on_event: Callable[[TrialEvent], None] | None = None,
    on_note: Callable[[str], None] | None = None,
    max_restarts: int | None = None,
    hooks: Any = None,
) -> WorkerReport:
    """Run ``workers`` worker processes on study ``name`` until ``n_trials`` trials are done.

    ``n_trials`` counts trials this command finishes (a trial lost with its worker gives its turn
    back); ``None`` runs until ``timeout`` or Ctrl-C. A worker killed by SIGKILL (or any signal
    but SIGTERM and SIGINT) is restarted (at most ``max_restarts`` times, default ``workers``).
    Ctrl-C is forwarded once to every worker; their trials are marked ``interrupted`` and
    re-queued (within the retry limit), and the exit status is 130. SIGTERM (preemption), to this process or to any worker or rank, stops
    every worker alike; their trials are marked ``preempted`` and re-queued, and the exit
    status is 143.
    """
    from convtune.storage import MAX_RETRY, heartbeat_settings, is_journal, resolve_storage_url
    from convtune.storage.leases import requeue_unretried_preempted, sweep_stale
    from convtune.study.objective import open_study

    study, spec = open_study(name, storage)
    url = resolve_storage_url(storage or spec.storage)
    check_workers(url, workers)
    slices = plan_slices(workers, world_size or spec.world_size)
    note = on_note or (lambda _message: None)
    warning = contention_warning(spec, slices)
    if warning:
        note(f"warning: {warning}")
    # Once per run, before any worker: the trials of this host's dead processes (a killed run)
    # are failed and re-queued at once, and a preempted trial whose retry was never queued (its
    # worker was killed in between) is queued now, by one process only.
    sweep_stale(study, heartbeat_settings()[1], MAX_RETRY, unclaimed_only=not is_journal(url))
    requeue_unretried_preempted(study)
    options = _WorkerOptions(
        name, url, world_size, executor, launch.__dict__ if launch is not None else None, hooks
    )
    supervisor = _Supervisor(options, slices, spec.seed, n_trials, timeout, note)
    supervisor.run(on_event, workers if max_restarts is None else max_restarts)
    return supervisor.report


@dataclass(frozen=True)
class _WorkerOptions:
    """What every worker process of one run gets (picklable: it crosses ``spawn``)."""

    name: str
    url: str
    world_size: int | None
    executor: str
    launch_options: dict[str, Any] | None
    hooks: Any


class _Supervisor:
    """Starts the worker processes, restarts killed ones, forwards and spreads stops, reports.

    A stop is the whole run's: Ctrl-C here (forwarded as SIGINT, trials ``interrupted`` and
    re-queued), or
    SIGTERM here or at any worker or rank (forwarded as SIGTERM, trials ``preempted`` and
    re-queued): a scheduler that preempts a job signals some of its processes, and the rest
    must not go on alone.
    """

    def __init__(
        self,
        options: _WorkerOptions,
        slices: list[Slice],
        seed: int,
        n_trials: int | None,
        timeout: float | None,
        note: Callable[[str], None],
    ):
        import multiprocessing as mp

        self.options, self.slices, self.seed, self.note = options, slices, seed, note
        self.ctx = mp.get_context("spawn")
        self.remaining = self.ctx.Value("q", -1 if n_trials is None else n_trials)
        self.busy = self.ctx.Array("b", len(slices))
        self.stop = self.ctx.Event()  # set on any stop: workers claim no more trials
        self.stop_signal = self.ctx.Value("i", 0, lock=False)  # the signal the workers were sent
        # One event queue per worker process: a worker killed while it writes (SIGKILL, the OOM
        # killer) leaves its queue's write lock held for good, and on a shared queue every other
        # worker's next write, and its exit, would wait on that lock forever.
        self.queues: dict[int, Any] = {}
        self.on_event: Callable[[TrialEvent], None] | None = None
        self.deadline = None if timeout is None else time.monotonic() + timeout
        self.report = WorkerReport()
        self.procs: dict[int, Any] = {}
        self.stopping = threading.Event()

    def run(self, on_event: Callable[[TrialEvent], None] | None, max_restarts: int) -> None:
        self.on_event = on_event
        self.procs = {i: self.start(i, 0) for i in range(len(self.slices))}
        previous = {sig: signal.signal(sig, self.forward) for sig in (signal.SIGINT, signal.SIGTERM)}
        try:
            while self.procs:
                self.drain(wait=0.2)
                for index, proc in list(self.procs.items()):
                    if not proc.is_alive():
                        self.reap(index, proc, max_restarts)
                if self.report.error is not None and not self.stopping.is_set():
                    self.stop_all(signal.SIGINT)  # a user error in one worker is every worker's
            self.drain(wait=0)
        finally:
            for sig, handler in previous.items():
                signal.signal(sig, handler)
            for proc in self.procs.values():  # only on an error in this loop: never leave workers behind
                proc.kill()
                proc.join()
        if self.report.error is not None:
            self.report.exit_status = 2
        elif self.report.stopped_by:
            self.report.exit_status = 128 + self.report.stopped_by  # 130 after Ctrl-C, 143 after SIGTERM

    def drain(self, wait: float) -> None:
        """Take every worker's waiting events; with none, wait ``wait`` seconds."""
        got = False
        for events in list(self.queues.values()):
            got |= _drain(events, self.on_event, self.report, self.note, timeout=0)
        if not got and wait:
            time.sleep(wait)

    def start(self, index: int, restart: int) -> Any:
        previous = self.queues.get(index)
        if previous is not None:  # a restart: what the dead worker sent is read before its queue goes
            _drain(previous, self.on_event, self.report, self.note, timeout=0)
        events = self.queues[index] = self.ctx.Queue()
        proc = self.ctx.Process(
            target=_worker_main,
            name=f"convtune-worker-{index}",
            args=(
                index,
                len(self.slices),
                self.options,
                self.slices[index],
                worker_seed(self.seed, index, restart),
                _Shared(self.remaining, self.busy, self.stop, self.stop_signal, events),
                self.deadline and max(1.0, self.deadline - time.monotonic()),
            ),
        )
        # The worker starts with SIGINT and SIGTERM blocked (the mask survives spawn's exec) and
        # unblocks them once it can handle them: a Ctrl-C while it imports torch waits instead
        # of printing a traceback from the middle of an import.
        blocked = signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT, signal.SIGTERM})
        try:
            proc.start()
        finally:
            signal.pthread_sigmask(signal.SIG_SETMASK, blocked)
        return proc

    def forward(self, signum: int, _frame: Any = None) -> None:
        """This process's SIGINT or SIGTERM: the run stops, every worker told once."""
        if self.stopping.is_set():
            return  # once: a second interrupt must not break the workers' cleanup
        self.report.stopped_by = signum
        self.stop_all(signum)

    def stop_all(self, signum: int) -> None:
        self.stopping.set()
        self.stop_signal.value = signum  # read by the workers: Ctrl-C, or preemption
        self.stop.set()
        for proc in self.procs.values():
            if proc.is_alive() and proc.pid:
                with contextlib.suppress(ProcessLookupError):
                    os.kill(proc.pid, signum)

    def reap(self, index: int, proc: Any, max_restarts: int) -> None:
        """A worker ended: give back its trial's turn, restart it, or spread its stop."""
        proc.join()
        code = proc.exitcode
        del self.procs[index]
        if self.busy[index]:  # it died inside a trial: that trial will be retried, give the turn back
            self.busy[index] = 0
            _fail_trials_of_dead_worker(self.options.name, self.options.url, proc.pid)
            with self.remaining.get_lock():
                if self.remaining.value >= 0:
                    self.remaining.value += 1
        preempted = code in (143, -signal.SIGTERM) or (
            code in (130, -signal.SIGINT) and not self.stopping.is_set()
        )
        if preempted and not self.stopping.is_set():
            # SIGTERM (or a SIGINT not from here) reached this worker or its ranks: preemption.
            self.note(f"worker {index} was preempted (signal); stopping every worker, their trials re-queued")
            self.report.stopped_by = signal.SIGTERM
            self.stop_all(signal.SIGTERM)
        elif code is not None and code < 0 and not self.stopping.is_set():
            self.restart(index, signal.Signals(-code).name, max_restarts)
        elif code == 2 and self.report.error is None:
            self.report.exit_status = 2
        elif code not in (0, 130, 143, None) and not self.report.exit_status:
            self.report.exit_status = 1

    def restart(self, index: int, sig: str, max_restarts: int) -> None:
        if self.report.restarts < max_restarts and self.remaining.value != 0:
            self.report.restarts += 1
            self.note(f"worker {index} was killed ({sig}); its trial will be retried; restarting it")
            self.procs[index] = self.start(index, self.report.restarts)
        else:
            self.note(f"worker {index} was killed ({sig}); not restarting it")
            self.report.exit_status = self.report.exit_status or 1


@dataclass
class _Shared:
    """What a worker shares with its supervisor: the trials left to hand out, which workers are
    inside a trial, the stop (and the signal it came with), and the event queue."""

    remaining: Any
    busy: Any
    stop: Any
    stop_signal: Any
    events: Any


def _fail_trials_of_dead_worker(name: str, url: str, pid: int | None) -> None:
    """Fail (and re-queue) the RUNNING trial of a worker process that died, before it restarts."""
    if pid is None:
        return
    import optuna

    from convtune.storage import MAX_RETRY, heartbeat_settings, is_journal, open_storage
    from convtune.storage.leases import sweep_stale

    try:
        study = optuna.load_study(study_name=name, storage=open_storage(url))
        dead = {f"{socket.gethostname()}:{pid}"}
        # RDB trials carry no lease: the other workers' long trials are the heartbeat's, not ours.
        sweep_stale(study, heartbeat_settings()[1], MAX_RETRY, dead, unclaimed_only=not is_journal(url))
    except Exception:  # noqa: BLE001  (the lease or heartbeat still fails the trial later)
        return


def _drain(
    events: Any,
    on_event: Callable[[TrialEvent], None] | None,
    report: WorkerReport,
    note: Callable[[str], None],
    timeout: float,
) -> bool:
    """Handle the events waiting on ``events`` (the first awaited up to ``timeout``); whether
    there were any."""
    from convtune.study.objective import TrialEvent

    wait, got = timeout, False
    while True:
        try:
            kind, payload = events.get(timeout=wait) if wait else events.get_nowait()
        except (queue.Empty, EOFError, OSError):
            return got
        wait, got = 0, True
        if kind == "event" and on_event is not None:
            on_event(TrialEvent(**payload))
        elif kind == "error" and report.error is None:
            report.error = payload
        elif kind == "note":
            note(payload)


def _worker_main(
    index: int,
    workers: int,
    options: _WorkerOptions,
    piece: Slice,
    seed: int,
    shared: _Shared,
    timeout: float | None,
) -> None:
    """One worker process: its slice of the machine, its own sampler seed, trials until told."""
    import sys

    supervisor = os.getppid()
    # Ctrl-C reaches the supervisor alone, which forwards it once (never twice mid-cleanup).
    with contextlib.suppress(OSError):
        os.setpgrp()
    _die_with_parent()
    pinned = _take_slice(piece)
    # Imported while SIGINT and SIGTERM are still blocked (see _Supervisor.start).
    import optuna

    from convtune.study.signals import Preempted, preemptible

    warnings.filterwarnings("ignore", category=optuna.exceptions.ExperimentalWarning)
    optuna.logging.set_verbosity(optuna.logging.WARNING)
    from convtune.study.quiet import quiet_optuna_for_one_line_errors

    quiet_optuna_for_one_line_errors()
    # Threads per rank: the pinned share of cores / ranks, else cores / (ranks × workers).
    local_workers = 1 if pinned or piece.gpus else workers
    code = 0
    try:
        # A SIGINT is Ctrl-C only when the supervisor forwarded one; any other is preemption.
        with preemptible(sigint_is_ctrl_c=lambda: shared.stop_signal.value == signal.SIGINT):
            # A signal that came while blocked lands here, where it is handled.
            signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGINT, signal.SIGTERM})
            _check_devices(piece)
            _run_worker_trials(index, options, seed, shared, timeout, local_workers, supervisor)
    except Preempted:
        code = 143
    except KeyboardInterrupt:
        code = 130
    except ConvtuneError as exc:
        # This worker is ending with its error: the stop the supervisor then sends every worker
        # must not interrupt it sending the error up (a KeyboardInterrupt traceback).
        signal.signal(signal.SIGINT, signal.SIG_IGN)
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
        shared.events.put(("error", exc.one_line()))
        code = 2
    finally:
        with contextlib.suppress(Exception):
            if os.getppid() != supervisor:  # nobody reads the queue any more: don't wait to flush it
                shared.events.cancel_join_thread()
            shared.events.close()
            _flush_events(shared.events, FLUSH_TIMEOUT_S)
    if code in (2, 130, 143):
        # Stopped, its trial marked and re-queued (or its error sent up): exit now. The
        # interpreter's teardown (torch's modules) takes seconds on a loaded machine, of the ~10 s
        # before a scheduler's SIGKILL, and the SIGINT the supervisor sends every worker after
        # an error would interrupt it with a traceback.
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(code)
    sys.exit(code)


FLUSH_TIMEOUT_S = 10.0
"""How long an ending worker waits for its queue's feeder thread to hand its last events to the
supervisor, which reads them every 0.2 s while the worker lives."""


def _flush_events(events: Any, timeout: float) -> None:
    """Wait up to ``timeout`` seconds for a closed queue's last events to reach the pipe, then stop
    waiting. ``join_thread`` alone can wait forever: once, in CI, a worker told to stop sat in it
    for over 60 s after SIGTERM with its feeder thread idle, and the stop never ended. The
    feeder is the queue's own (``_thread``, private in CPython), so where it is missing the
    plain join is used."""
    feeder = getattr(events, "_thread", None)
    if feeder is not None:
        feeder.join(timeout)
        if feeder.is_alive():
            events.cancel_join_thread()
    events.join_thread()


def _take_slice(piece: Slice) -> bool:
    """This worker's GPUs (environment) or cores (affinity); True when pinned to cores."""
    os.environ.update(piece.env)
    if piece.cpus and hasattr(os, "sched_setaffinity"):
        with contextlib.suppress(OSError):
            os.sched_setaffinity(0, piece.cpus)
            return True
    return False


def _check_devices(piece: Slice) -> None:
    """The slice's GPUs are there (the supervisor planned them from what it saw)."""
    if not piece.gpus:
        return
    import torch

    if torch.cuda.device_count() < len(piece.gpus):
        raise ConfigError(
            f"worker {piece.index} sees {torch.cuda.device_count()} of its GPUs {','.join(piece.gpus)}",
            where="CUDA_VISIBLE_DEVICES",
            fix="check the node's GPUs (nvidia-smi) or use fewer --workers",
        )


def _run_worker_trials(
    index: int,
    options: _WorkerOptions,
    seed: int,
    shared: _Shared,
    timeout: float | None,
    local_workers: int,
    supervisor: int,
) -> None:
    """``run_study`` with the supervisor's trial turns; it checks the spec's paths and imports
    the workload here, before this worker's first trial."""
    from convtune.execution.launcher import LaunchOptions
    from convtune.study.run import run_study

    launch = LaunchOptions(**{**(options.launch_options or {}), "local_workers": local_workers})

    def claim() -> bool:
        if shared.stop.is_set() or os.getppid() != supervisor:  # stopped, or the supervisor is gone
            return False
        with shared.remaining.get_lock():
            if shared.remaining.value == 0:
                return False
            if shared.remaining.value > 0:
                shared.remaining.value -= 1
        shared.busy[index] = 1
        return True

    def done(_study: Any, _trial: Any) -> None:
        shared.busy[index] = 0

    def on_event(event: TrialEvent) -> None:
        shared.events.put(("event", dict(event.__dict__)))

    run_study(
        options.name,
        n_trials=None,
        timeout=timeout,
        storage=options.url,
        on_event=on_event,
        world_size=options.world_size,
        executor=options.executor,
        launch=launch,
        local_workers=local_workers,
        sampler_seed=seed,
        claim=claim,
        after_each=done,
        hooks=options.hooks,
    )


def _die_with_parent() -> None:
    """Linux: SIGTERM when the supervisor dies, so workers never outlive it: a supervisor killed
    (SIGKILL, a lost node's agent) is preemption, and the workers' trials are re-queued."""
    with contextlib.suppress(Exception):
        import ctypes

        libc = ctypes.CDLL("libc.so.6", use_errno=True)
        pr_set_pdeathsig = 1
        libc.prctl(pr_set_pdeathsig, signal.SIGTERM)


def trial_counts(study: optuna.Study) -> dict[str, int]:
    """Trials by state name (for tests and the load benchmark)."""
    counts: dict[str, int] = {}
    for trial in study.get_trials(deepcopy=False):
        counts[trial.state.name] = counts.get(trial.state.name, 0) + 1
    return counts


__all__ = [
    "Slice",
    "WorkerReport",
    "check_workers",
    "plan_slices",
    "run_workers",
    "worker_seed",
]
