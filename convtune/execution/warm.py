"""Workload trials on warm ranks: one torchrun launch serves trial after trial.

One ``torchrun … -m convtune.execution._rank`` launch runs trial after trial (a new model,
optimizer and data stream each, the same process group). A cold launch costs seconds (process
start, torch import, rendezvous) against trials of tens of seconds, so ranks are relaunched only
after a failure or when a trial needs another world size.

Every rank holds its own connection to the worker's channel. Rank 0 sends each evaluation's
record; the worker answers every rank with the same stop decision for that evaluation, so all
ranks leave the loop at the same step. A rank that raises reports its error before it exits; one
that is killed shows up as the end of its connection; either fails the trial (:class:`RankFailed`),
and the next trial gets fresh ranks. The stop rules themselves run inside the engine, on the ranks.
"""

from __future__ import annotations

import contextlib
import dataclasses
import os
import subprocess
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from convtune.config.recipe import Recipe
from convtune.config.spec import StudySpec
from convtune.errors import Preempted
from convtune.execution.launch import (
    LaunchedExecutor,
    LaunchFailed,
    LaunchOptions,
    RankFailed,
    _Failure,
    _first_cause,
    nproc_per_node,
    other_node_failed,
)
from convtune.execution.processes import _log_tail, _terminate, _with_exit_code, stop_signal_of
from convtune.training.engine import EngineConfig, Progress, RunResult


@dataclass
class _Launch:
    """One torchrun invocation and the rank connections it produced."""

    proc: subprocess.Popen[bytes]
    world_size: int
    log: Path
    ranks: dict[int, int] = field(default_factory=dict)  # rank → connection
    pids: dict[int, int] = field(default_factory=dict)  # rank → pid (ranks on this host)
    backend: str = ""
    started: float = field(default_factory=time.perf_counter)

    def alive(self) -> bool:
        return self.proc.poll() is None


class WarmRankExecutor(LaunchedExecutor):
    """Runs Workload trials (``workload: NAME``) on torchrun-launched ranks kept warm across trials.

    ``launches`` counts torchrun starts (tests check that a second trial needed none).
    """

    def __init__(self, spec: StudySpec, options: LaunchOptions | None = None):
        super().__init__(spec, options)
        self._launch: _Launch | None = None
        self._live_conns: set[int] = set()

    def close(self) -> None:
        """Tell the ranks to leave (process group destroyed) and wait; force them if they don't."""
        self._stop_launch(graceful=True)
        super().close()

    def _abort(self) -> None:
        self._stop_launch(graceful=False)

    def __enter__(self) -> WarmRankExecutor:
        return self

    def _ensure_ranks(self, world_size: int, threads: int) -> float:
        """Warm ranks of ``world_size``, launching them if needed; returns the seconds it took."""
        launch = self._launch
        if launch is not None:
            while (event := self.server.get(timeout=0)) is not None:  # anything since the last trial?
                if self._note_follower(event):
                    continue
                if event.message is None:
                    self._live_conns.discard(event.conn)
            whole = launch.alive() and all(conn in self._live_conns for conn in launch.ranks.values())
            if whole and launch.world_size == world_size:
                return 0.0
            if not whole:
                self._raise_if_signalled(launch)  # ranks ended by SIGTERM between trials
        self._stop_launch(graceful=True)
        started = time.perf_counter()
        self.launches += 1
        log = Path(self._tmp.name) / f"launch-{self.launches}.log"
        command = self.options.torchrun(nproc_per_node(world_size, self.options.nnodes), leader=True)
        command += ["-m", "convtune.execution._rank"]
        env = self._env(threads)
        env["CONVTUNE_LAUNCH"] = str(self.launches)
        with open(log, "wb") as out:
            proc = subprocess.Popen(
                command, env=env, stdout=out, stderr=subprocess.STDOUT, start_new_session=True
            )
        self._launch = _Launch(proc=proc, world_size=world_size, log=log)
        self._live_conns = set()
        self._await_ranks(self._launch)
        return time.perf_counter() - started

    def _await_ranks(self, launch: _Launch) -> None:
        """Wait (``start_timeout``) until every rank of ``launch`` said hello."""
        deadline = time.monotonic() + self.options.start_timeout
        while len(launch.ranks) < launch.world_size:
            event = self.server.get(timeout=0.1)
            if event is not None:
                if self._note_follower(event):
                    # Another node's launch failed before its ranks connected (its environment, its
                    # network interface, …): the ranks here would wait out their process-group timeout.
                    if (failed := self._launch_failed(event)) is not None:
                        self._stop_launch(graceful=False)
                        raise LaunchFailed(
                            f"LaunchFailed: {other_node_failed(failed, 'its ranks connected')}"
                        )
                    continue
                if event.message is None:
                    self._live_conns.discard(event.conn)
                elif event.message.get("type") == "hello" and event.message.get("launch") in (
                    str(self.launches),
                    None,  # ranks of other nodes (`convtune study follow`)
                ):
                    rank = int(event.message["rank"])
                    launch.ranks[rank] = event.conn
                    launch.backend = str(event.message.get("backend", ""))
                    self._live_conns.add(event.conn)
                    if event.message.get("host") == os.uname().nodename:
                        launch.pids[rank] = int(event.message["pid"])
                elif event.message.get("type") == "error":
                    self._stop_launch(graceful=False)
                    raise LaunchFailed(str(event.message.get("error")))
                continue
            if not launch.alive() or time.monotonic() > deadline:
                why = (
                    "exited"
                    if not launch.alive()
                    else f"did not connect within {self.options.start_timeout:g} s"
                )
                self._stop_launch(graceful=False)
                raise LaunchFailed(f"LaunchFailed: torchrun {why}: {_log_tail(launch.log)}")

    def _run_trial(
        self, recipe: Recipe, config: EngineConfig, on_eval: Callable[[Progress], bool]
    ) -> RunResult:
        assert isinstance(self.spec.workload, str)
        launch_seconds = self._ensure_ranks(recipe.world_size, config.threads or 1)
        launch = self._launch
        assert launch is not None
        message = {
            "type": "trial",
            "trial": self._trial,
            "recipe": recipe.to_dict(),
            "config": dataclasses.asdict(config),  # JSON carries inf (no cap) as Infinity
            "workload": self.spec.workload,
            "workload_args": dict(self.spec.workload_args),
            "base_dir": self.spec.base_dir,
        }
        sent = time.perf_counter()
        for conn in launch.ranks.values():
            self.server.send(conn, message)
        timing = {"launch": launch_seconds, "report": 0.0}
        result = self._follow_trial(launch, on_eval, timing)
        result.backend = result.backend if result.backend != "none" else launch.backend
        self.last_timing = {
            "launch": launch_seconds,
            "trial": time.perf_counter() - sent,
            "train": result.seconds,
            "report": timing["report"],
        }
        return result

    def _follow_trial(
        self, launch: _Launch, on_eval: Callable[[Progress], bool], timing: dict[str, float]
    ) -> RunResult:
        """Hand each record to ``on_eval`` and its decision to every rank, until the result comes
        (or a rank fails: :class:`RankFailed` with the first cause)."""
        trial = self._trial
        history: list[Progress] = []
        failures: list[_Failure] = []
        reported: set[int] = set()  # connections that sent an error (their end is no news)
        rank_of = {conn: rank for rank, conn in launch.ranks.items()}
        while True:
            event = self.server.get(timeout=0.1)
            if event is None:
                if not launch.alive() and not failures:
                    failures.append(_Failure(time.time(), f"torchrun exited: {_log_tail(launch.log)}", True))
                if failures and (not launch.alive() or time.time() - failures[0].time > 3.0):
                    break  # give the other ranks a moment to report the first cause
                continue
            if self._note_follower(event):
                if (failed := self._launch_failed(event)) is not None:
                    # Weaker than a rank's own error, which names the cause when one came.
                    failures.append(_Failure(event.time, other_node_failed(failed, "the trial ended"), True))
                continue
            if event.conn not in rank_of:
                continue
            msg = event.message
            if msg is None:
                self._live_conns.discard(event.conn)
                if event.conn not in reported:
                    why = f"rank {rank_of[event.conn]} exited without reporting an error (killed?)"
                    failures.append(_Failure(event.time, why, True))
                continue
            if msg.get("trial") != trial:
                continue
            kind = msg["type"]
            if kind == "error":
                reported.add(event.conn)
                failures.append(_Failure(float(msg.get("time", event.time)), str(msg["error"])))
            elif kind == "progress" and not failures:
                self._decide(launch, msg, history, on_eval, timing)
            elif kind == "result" and not failures:
                return RunResult.from_summary(msg["result"], history)
        self._raise_if_signalled(launch)
        self._stop_launch(graceful=False)
        raise RankFailed(_with_exit_code(_first_cause(failures), launch.log))

    def _raise_if_signalled(self, launch: _Launch) -> None:
        """:class:`Preempted` when SIGTERM or SIGINT ended a rank or torchrun: the job is being
        stopped (a scheduler signals its processes), so the trial is re-queued, not failed."""
        # torchrun reports how its ranks ended as it exits, by itself, after a rank's end: read
        # that before this process stops the launch (with SIGTERM, which would read alike).
        with contextlib.suppress(subprocess.TimeoutExpired):
            launch.proc.wait(timeout=5)
        signalled = stop_signal_of(launch.proc.poll(), launch.log)
        if signalled:
            self._stop_launch(graceful=False)
            raise Preempted(f"a rank was ended by {signalled}")

    def _decide(
        self,
        launch: _Launch,
        msg: dict[str, Any],
        history: list[Progress],
        on_eval: Callable[[Progress], bool],
        timing: dict[str, float],
    ) -> None:
        """Rank 0's record to ``on_eval``; its answer to every rank."""
        record = Progress(**msg["record"])
        history.append(record)
        self.last_peak_memory_mb = max(self.last_peak_memory_mb, float(msg.get("peak_memory_mb") or 0.0))
        started = time.perf_counter()
        try:
            stop = bool(on_eval(record))
        except BaseException:
            self._stop_launch(graceful=False)  # ranks wait for a decision that won't come
            raise
        timing["report"] += time.perf_counter() - started
        reply = {"type": "decision", "trial": self._trial, "index": len(history) - 1, "stop": stop}
        for conn in launch.ranks.values():
            self.server.send(conn, reply)

    def _stop_launch(self, *, graceful: bool) -> None:
        launch, self._launch = self._launch, None
        if launch is None:
            return
        if graceful and launch.alive() and self._server is not None:
            for conn in launch.ranks.values():
                self._server.send(conn, {"type": "close"})
            with contextlib.suppress(subprocess.TimeoutExpired):
                launch.proc.wait(timeout=30)
        _terminate(launch.proc, launch.pids.values())
        if self._server is not None:
            for conn in launch.ranks.values():
                self._server.drop(conn)
            self._server.drain()


__all__ = ["WarmRankExecutor"]
