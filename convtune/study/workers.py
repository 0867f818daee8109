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
    back); ``None`` runs until ``timeout`` or Ctrl-C. A worker killed by a signal is restarted (at
    most ``max_restarts`` times, default ``workers``). Ctrl-C is forwarded once to every worker;
    their trials are marked ``interrupted`` and the exit status is 130. SIGTERM (preemption) is
    forwarded alike; the trials are marked ``preempted`` and re-queued, and the exit status is 143.
    """
    import multiprocessing as mp

    from convtune.storage import resolve_storage_url
    from convtune.study.objective import open_study

    _, spec = open_study(name, storage)
    url = resolve_storage_url(storage or spec.storage)
    check_workers(url, workers)
    slices = plan_slices(workers, world_size or spec.world_size)
    note = on_note or (lambda _message: None)
    warning = contention_warning(spec, slices)
    if warning:
        note(f"warning: {warning}")
    ctx = mp.get_context("spawn")
    remaining = ctx.Value("q", -1 if n_trials is None else n_trials)
    busy = ctx.Array("b", workers)
    stop = ctx.Event()  # set on Ctrl-C or SIGTERM: workers claim no more trials
    events: Any = ctx.Queue()
    deadline = None if timeout is None else time.monotonic() + timeout
    report = WorkerReport()
    max_restarts = workers if max_restarts is None else max_restarts
    launch_options = launch.__dict__ if launch is not None else None

    def start(index: int, restart: int) -> Any:
        proc = ctx.Process(
            target=_worker_main,
            name=f"convtune-worker-{index}",
            args=(
                index,
                workers,
                name,
                url,
                slices[index],
                worker_seed(spec.seed, index, restart),
                remaining,
                busy,
                stop,
                events,
                deadline and max(1.0, deadline - time.monotonic()),
                world_size,
                executor,
                launch_options,
                hooks,
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

    procs = {i: start(i, 0) for i in range(workers)}
    stopping = threading.Event()

    def forward(signum: int, _frame: Any) -> None:
        if stopping.is_set():
            return  # once: a second interrupt must not break the workers' cleanup
        stopping.set()
        stop.set()
        report.stopped_by = signum
        for proc in procs.values():
            if proc.is_alive() and proc.pid:
                with contextlib.suppress(ProcessLookupError):
                    os.kill(proc.pid, signum)

    previous = {sig: signal.signal(sig, forward) for sig in (signal.SIGINT, signal.SIGTERM)}
    try:
        while procs:
            _drain(events, on_event, report, note, timeout=0.2)
            for index, proc in list(procs.items()):
                if proc.is_alive():
                    continue
                proc.join()
                code = proc.exitcode
                del procs[index]
                if busy[index]:  # it died inside a trial: that trial will be retried, give the turn back
                    busy[index] = 0
                    _fail_trials_of_dead_worker(name, url, proc.pid)
                    with remaining.get_lock():
                        if remaining.value >= 0:
                            remaining.value += 1
                if code is not None and code < 0 and not stopping.is_set():
                    sig = signal.Signals(-code).name
                    if report.restarts < max_restarts and (remaining.value != 0):
                        report.restarts += 1
                        note(f"worker {index} was killed ({sig}); its trial will be retried; restarting it")
                        procs[index] = start(index, report.restarts)
                    else:
                        note(f"worker {index} was killed ({sig}); not restarting it")
                        report.exit_status = report.exit_status or 1
                elif code == 2 and report.error is None:
                    report.exit_status = 2
                elif code not in (0, 130, 143, None) and not report.exit_status:
                    report.exit_status = 1
            if report.error is not None and not stopping.is_set():
                # A user error in one worker is every worker's: stop the rest.
                stopping.set()
                for proc in procs.values():
                    if proc.is_alive() and proc.pid:
                        with contextlib.suppress(ProcessLookupError):
                            os.kill(proc.pid, signal.SIGINT)
        _drain(events, on_event, report, note, timeout=0)
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)
        for proc in procs.values():  # only on an error in this loop: never leave workers behind
            proc.kill()
            proc.join()
    if report.error is not None:
        report.exit_status = 2
    elif report.stopped_by:
        report.exit_status = 128 + report.stopped_by  # 130 after Ctrl-C, 143 after SIGTERM
    return report


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
) -> None:
    from convtune.study.objective import TrialEvent

    wait = timeout
    while True:
        try:
            kind, payload = events.get(timeout=wait) if wait else events.get_nowait()
        except (queue.Empty, EOFError, OSError):
            return
        wait = 0
        if kind == "event" and on_event is not None:
            on_event(TrialEvent(**payload))
        elif kind == "error" and report.error is None:
            report.error = payload
        elif kind == "note":
            note(payload)


def _worker_main(
    index: int,
    workers: int,
    name: str,
    url: str,
    piece: Slice,
    seed: int,
    remaining: Any,
    busy: Any,
    stop: Any,
    events: Any,
    timeout: float | None,
    world_size: int | None,
    executor: str,
    launch_options: dict[str, Any] | None,
    hooks: Any = None,
) -> None:
    """One worker process: its slice of the machine, its own sampler seed, trials until told."""
    import sys

    # Ctrl-C reaches the supervisor alone, which forwards it once (never twice mid-cleanup).
    with contextlib.suppress(OSError):
        os.setpgrp()
    _die_with_parent()
    os.environ.update(piece.env)
    pinned = False
    if piece.cpus and hasattr(os, "sched_setaffinity"):
        with contextlib.suppress(OSError):
            os.sched_setaffinity(0, piece.cpus)
            pinned = True
    # Imported while SIGINT and SIGTERM are still blocked (see run_workers.start).
    import optuna

    from convtune.execution.launcher import LaunchOptions
    from convtune.study.run import run_study
    from convtune.study.signals import Preempted, preemptible

    warnings.filterwarnings("ignore", category=optuna.exceptions.ExperimentalWarning)
    optuna.logging.set_verbosity(optuna.logging.WARNING)

    # Threads per rank: the pinned share of cores / ranks, else cores / (ranks × workers).
    local_workers = 1 if pinned or piece.gpus else workers
    options = dict(launch_options or {})
    options["local_workers"] = local_workers
    launch = LaunchOptions(**options)

    def claim() -> bool:
        if stop.is_set():
            return False
        with remaining.get_lock():
            if remaining.value == 0:
                return False
            if remaining.value > 0:
                remaining.value -= 1
        busy[index] = 1
        return True

    def done(_study: Any, _trial: Any) -> None:
        busy[index] = 0

    def on_event(event: TrialEvent) -> None:
        events.put(("event", dict(event.__dict__)))

    try:
        with preemptible():
            # A signal that came while blocked lands here, where it is handled.
            signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGINT, signal.SIGTERM})
            run_study(
                name,
                n_trials=None,
                timeout=timeout,
                storage=url,
                on_event=on_event,
                world_size=world_size,
                executor=executor,
                launch=launch,
                local_workers=local_workers,
                sampler_seed=seed,
                claim=claim,
                after_each=done,
                hooks=hooks,
            )
    except Preempted:
        sys.exit(143)
    except KeyboardInterrupt:
        sys.exit(130)
    except ConvtuneError as exc:
        events.put(("error", exc.one_line()))
        sys.exit(2)
    finally:
        with contextlib.suppress(Exception):
            events.close()
            events.join_thread()


def _die_with_parent() -> None:
    """Linux: an interrupt when the supervisor dies, so workers never outlive it."""
    with contextlib.suppress(Exception):
        import ctypes

        libc = ctypes.CDLL("libc.so.6", use_errno=True)
        pr_set_pdeathsig = 1
        libc.prctl(pr_set_pdeathsig, signal.SIGINT)


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
