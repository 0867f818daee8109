"""Script and command trials: the user's own program, launched once per trial.

``workload: {script: train.py, args: [...]}`` runs under torchrun with the trial's world size;
``workload: {command: [...]}`` runs as given, on one node. The program reads its recipe and
reports through :mod:`convtune.execution.session`; every report gets a stop decision, the same on
every rank. A script reports no loss scale, so of the shared stop rules
(:class:`~convtune.training.stops.StopRules`) the worker applies the two its reports show: a
non-finite target metric (diverged) and the budget.

Multi-node scripts: every other node runs :func:`convtune.execution.follow.follow_scripts`, which
receives each trial's recipe over the channel (``script_trial``) and launches the script there.
"""

from __future__ import annotations

import json
import math
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
from convtune.execution.channel import ChannelServer
from convtune.execution.launch import (
    ENV_CONFIG,
    ENV_RECIPE,
    ENV_TRIAL,
    LaunchedExecutor,
    LaunchFailed,
    LaunchOptions,
    RankFailed,
    _Failure,
    _first_cause,
    nproc_per_node,
    other_node_failed,
)
from convtune.execution.processes import _describe_exit, _log_tail, _terminate, stop_signal_of
from convtune.training.engine import EngineConfig, Progress, RunResult
from convtune.training.stops import StopRules
from convtune.workloads import checked_metrics


@dataclass
class _ScriptTrial:
    """One script trial as the worker sees it: its ranks' connections, records and decisions."""

    trial: int
    recipe: Recipe
    config: EngineConfig
    metric: str  # the target's metric: a non-finite value is divergence
    rules: StopRules
    conns: set[int] = field(default_factory=set)
    ranks: set[int] = field(default_factory=set)  # every rank connection that said hello
    acked: set[int] = field(default_factory=set)  # ranks that acknowledged the stop
    acked_at: float | None = None  # when the last rank did (epoch seconds)
    pids: list[int] = field(default_factory=list)
    decisions: list[bool] = field(default_factory=list)
    history: list[Progress] = field(default_factory=list)
    failures: list[_Failure] = field(default_factory=list)
    status: str = "finished"
    reason: str = ""
    stopped_at: float | None = None
    report_seconds: float = 0.0
    abandoned_barrier: bool = False  # this node's torchrun was ended while it waited for another node's
    other_node_failed: bool = False  # another node's launch exited before every rank acknowledged the stop

    def acknowledge(self, conn: int, index: int) -> None:
        """Rank ``conn`` received the stop decision ``index``: the trial is over for it."""
        if index < len(self.decisions) and self.decisions[index]:
            self.acked.add(conn)
            if (
                self.acked_at is None
                and self.ranks <= self.acked
                and len(self.acked) >= self.recipe.world_size
            ):
                self.acked_at = time.time()

    def failures_before_stop(self) -> list[_Failure]:
        """Failures that count against the trial: every one until each rank acknowledged the stop."""
        if self.acked_at is None:
            return self.failures
        return [f for f in self.failures if f.time < self.acked_at]

    def decision(self, index: int) -> dict[str, Any]:
        return {"type": "decision", "trial": self.trial, "index": index, "stop": self.decisions[index]}

    def judge(self, record: Progress, stop: bool) -> bool:
        """The caller's ``stop``, else the stop rules: whether this report ends the trial."""
        if stop:
            if self.status == "finished":
                self.status, self.reason = "stopped", "stopped by the caller"
            return True
        diverged = self.rules.metric(self.metric, record.metrics.get(self.metric, math.nan), step=record.step)
        over_budget = self.rules.budget(record.cost)
        if diverged:
            self.status, self.reason = "diverged", diverged
        elif over_budget:
            self.status, self.reason = "budget", over_budget
        return bool(diverged or over_budget)

    def result(self) -> RunResult:
        last = self.history[-1] if self.history else None
        return RunResult(
            history=self.history,
            status=self.status,  # type: ignore[arg-type]
            reason=self.reason,
            steps=last.step if last else 0,
            samples=last.samples if last else 0,
            seconds=last.seconds if last else 0.0,
            world_size=self.recipe.world_size,
            backend="external",
        )


class ScriptExecutor(LaunchedExecutor):
    """Runs ``workload: {script: …}`` / ``{command: […]}`` trials, one launch of the program each.

    ``last_timing["stop_to_exit"]`` is the seconds from the stop decision to the program's exit.
    """

    #: Seconds a multi-node launch may outlive the last of its ranks. torchrun's agent waits up to
    #: 300 s in its exit barrier for the other nodes' agents, and an agent whose rank failed (e.g. in
    #: teardown, after the stop) never arrives there; once every rank has left, that wait decides nothing.
    exit_grace: float = 10.0

    def __init__(self, spec: StudySpec, options: LaunchOptions | None = None):
        super().__init__(spec, options)

    def close(self) -> None:
        """Tell the other nodes' `study follow` the study is over, then close the channel."""
        if self._server is not None:
            for conn in self._followers:
                self._server.send(conn, {"type": "close"})
        super().close()

    def __enter__(self) -> ScriptExecutor:
        return self

    def _run_trial(
        self, recipe: Recipe, config: EngineConfig, on_eval: Callable[[Progress], bool]
    ) -> RunResult:
        """One launch of the user's program; it reports through :mod:`convtune.execution.session`."""
        workload = self.spec.workload
        assert isinstance(workload, dict)
        state = _ScriptTrial(
            self._trial, recipe, config, self.spec.target_spec.metric, StopRules(max_cost=config.max_cost)
        )
        folder = Path(self._tmp.name) / f"trial-{state.trial}"
        folder.mkdir()
        command, env = self._launch_command(recipe, config, folder)
        scripted_nodes = self.options.multi_node and "script" in workload
        if scripted_nodes:
            self._announce(state.trial, recipe, env)
        log = folder / "output.log"
        sent = time.perf_counter()
        self.launches += 1
        with open(log, "wb") as out:
            proc = subprocess.Popen(
                command,
                env=env,
                cwd=self.spec.base_dir,
                stdout=out,
                stderr=subprocess.STDOUT,
                start_new_session=True,
            )
        try:
            self._follow_trial(proc, state, on_eval, multi_node=scripted_nodes)
        finally:
            if proc.poll() is None:
                _terminate(proc, state.pids)
            for conn in state.conns:
                self.server.drop(conn)
            if scripted_nodes:
                for conn in self._followers:
                    self.server.send(conn, {"type": "trial_end", "trial": state.trial})
        ended = time.perf_counter()
        warnings = self._judge_exit(proc, state, log)
        result = state.result()
        result.warnings = warnings
        self.last_timing = {
            "launch": 0.0,
            "trial": ended - sent,
            "train": result.seconds,
            "report": state.report_seconds,
            "stop_to_exit": ended - state.stopped_at if state.stopped_at is not None else math.nan,
        }
        return result

    def _judge_exit(self, proc: subprocess.Popen[bytes], state: _ScriptTrial, log: Path) -> list[str]:
        """How the program's exit bears on the trial: warnings when it stands, else an error.

        A crash after every rank acknowledged the stop (or the target) leaves the outcome as it
        was, with a warning (e.g. an abort while the process group is torn down); one before it
        fails the trial, or re-queues it when SIGTERM or SIGINT ended it (preemption).
        """
        if state.other_node_failed:
            # Ended by us: this node's ranks would wait for the other node's ranks until a timeout.
            raise RankFailed(_first_cause(state.failures_before_stop()))
        if state.abandoned_barrier:
            # Ended by us, not by a signal from outside: the ranks' own reports decide the outcome.
            if state.failures_before_stop():
                raise RankFailed(_first_cause(state.failures_before_stop()))
            return [
                f"this node's torchrun still waited for another node {self.exit_grace:g} s after every rank had "
                "left, and was ended (a rank of another node failed after its last report; see that node's "
                "`study follow` output)"
            ]
        if proc.returncode == 0 and not state.failures:
            return []
        if state.acked_at is not None and not state.failures_before_stop():
            late = _first_cause(state.failures) if state.failures else _describe_exit(proc.returncode)
            return [f"a rank crashed after the stop was acknowledged by every rank: {late}"]
        signalled = stop_signal_of(proc.returncode, log)
        if signalled:
            raise Preempted(f"the program was ended by {signalled}")
        if not state.failures:
            why = f"{_describe_exit(proc.returncode)}: {_log_tail(log)}"
            state.failures.append(_Failure(time.time(), why, True))
        raise RankFailed(_first_cause(state.failures))

    def _launch_command(
        self, recipe: Recipe, config: EngineConfig, folder: Path
    ) -> tuple[list[str], dict[str, str]]:
        """The program's command line and environment (the recipe in a file, the settings in JSON)."""
        workload = self.spec.workload
        assert isinstance(workload, dict)
        recipe_file = folder / "recipe.json"
        recipe_file.write_text(json.dumps(recipe.to_dict(), indent=1))
        if "script" in workload:
            local = nproc_per_node(recipe.world_size, self.options.nnodes)
            command = self.options.torchrun(local, leader=True)
            command += [str(workload["script"]), *map(str, workload.get("args", []))]
        else:
            command = [str(part) for part in workload["command"]]
        env = self._env(config.threads or 1)
        settings = {
            "eval_every": config.eval_every,
            "eval_unit": config.eval_unit,
            "seed": config.seed,
            "threads": config.threads,
            "world_size": recipe.world_size,
            "max_cost": config.max_cost if math.isfinite(config.max_cost) else None,
            "cost": config.cost,
            # One folder per trial, kept across its retries (session.checkpoint_dir).
            "checkpoint_dir": config.checkpoint_dir,
        }
        env[ENV_RECIPE] = str(recipe_file)
        env[ENV_TRIAL] = str(self._trial)
        env[ENV_CONFIG] = json.dumps(settings)
        env["CONVTUNE_WORLD_SIZE"] = str(recipe.world_size)
        return command, env

    def _announce(self, trial: int, recipe: Recipe, env: dict[str, str]) -> None:
        """Every other node (`convtune study follow`) launches the same script with this trial's
        recipe and joins the rendezvous; its ranks report to this channel."""
        self._await_followers()
        order = {
            "type": "script_trial",
            "trial": trial,
            "recipe": recipe.to_dict(),
            "env": {k: env[k] for k in (ENV_TRIAL, ENV_CONFIG, "CONVTUNE_WORLD_SIZE")},
        }
        for conn in self._followers:
            self.server.send(conn, order)

    def _follow_trial(
        self,
        proc: subprocess.Popen[bytes],
        state: _ScriptTrial,
        on_eval: Callable[[Progress], bool],
        *,
        multi_node: bool = False,
    ) -> None:
        """Answer the program's ranks until it exits: hellos, errors and reports.

        With several nodes, also until every rank has been gone ``exit_grace`` seconds: the launch is
        then only waiting for another node's agent, which may never come (the caller ends it); and
        until another node's `study follow` says its launch failed before the stop: this node's
        ranks would wait for that node's ranks until their rendezvous or process group timed out.
        """
        server: ChannelServer = self.server
        left_at: float | None = None  # when the last rank connection closed (monotonic seconds)
        while True:
            event = server.get(timeout=0.1)
            if event is None:
                if proc.poll() is not None:
                    return
                if multi_node and state.ranks and not state.conns:
                    left_at = left_at if left_at is not None else time.monotonic()
                    if time.monotonic() > left_at + self.exit_grace:
                        state.abandoned_barrier = True
                        return
                continue
            if self._other_node_failed(event, state):
                return
            if self._note_follower(event):
                continue
            msg = event.message
            if msg is None:
                state.conns.discard(event.conn)
                continue
            if msg.get("type") == "hello":
                if str(msg.get("trial")) != str(state.trial):
                    server.drop(event.conn)  # a straggler from an earlier trial
                    continue
                state.conns.add(event.conn)
                state.ranks.add(event.conn)
                if msg.get("host") == os.uname().nodename:
                    state.pids.append(int(msg["pid"]))
                for i in range(len(state.decisions)):  # a late rank catches up
                    server.send(event.conn, state.decision(i))
                continue
            if event.conn not in state.conns:
                continue
            # Each rank's peak resident memory comes with its reports (for max_memory_mb).
            self.last_peak_memory_mb = max(self.last_peak_memory_mb, float(msg.get("peak_memory_mb") or 0.0))
            if msg["type"] == "error":
                # When it arrived (not the rank's clock): compared with when the stop was acknowledged.
                state.failures.append(_Failure(event.time, str(msg["error"])))
            elif msg["type"] == "ack":
                state.acknowledge(event.conn, int(msg.get("index", -1)))
            elif msg["type"] == "progress":
                self._decide(state, msg["record"], on_eval)

    def _decide(self, state: _ScriptTrial, data: dict[str, Any], on_eval: Callable[[Progress], bool]) -> None:
        """Rank 0's report to ``on_eval`` and the stop rules; the decision to every rank."""
        record = _record_from_session(data, state.config, state.recipe.world_size)
        state.history.append(record)
        started = time.perf_counter()
        stop = bool(on_eval(record))
        state.report_seconds += time.perf_counter() - started
        stop = state.judge(record, stop)
        if stop and state.stopped_at is None:
            state.stopped_at = time.perf_counter()
        state.decisions.append(stop)
        for conn in list(state.conns):
            self.server.send(conn, state.decision(len(state.decisions) - 1))

    def _other_node_failed(self, event: Any, state: _ScriptTrial) -> bool:
        """Note a `study follow`'s word that its launch of this trial exited; True when that fails
        the trial (it came before every rank acknowledged the stop)."""
        msg = self._launch_failed(event)
        if msg is None or str(msg.get("trial")) != str(state.trial):
            return False
        state.failures.append(_Failure(event.time, other_node_failed(msg, "the trial ended")))
        state.other_node_failed = state.acked_at is None
        return state.other_node_failed

    def _await_followers(self) -> None:
        """Wait (``start_timeout``) until every other node's `study follow` has connected."""
        wanted = self.options.nnodes - 1
        deadline = time.monotonic() + self.options.start_timeout
        while len(self._followers) < wanted:
            event = self.server.get(timeout=0.1)
            if event is not None:
                self._note_follower(event)  # anything else is a straggler of an earlier trial
            elif time.monotonic() > deadline:
                raise LaunchFailed(
                    f"LaunchFailed: {len(self._followers)} of {wanted} other node(s) followed within "
                    f"{self.options.start_timeout:g} s (run `convtune study follow` on each)"
                )


def _record_from_session(data: dict[str, Any], config: EngineConfig, world_size: int) -> Progress:
    seconds = float(data.get("seconds", 0.0))
    samples = int(data.get("samples", 0))
    metrics = checked_metrics(
        data.get("metrics"),
        source="session.report(metrics=...) got",
        where="workload (the script's report)",
        verb="report",
    )
    if config.cost == "samples":
        cost = float(samples)
    else:
        cost = seconds * (world_size if config.cost == "device_seconds" else 1)
    return Progress(
        step=int(data.get("step", 0)),
        samples=samples,
        seconds=seconds,
        cost=cost,
        train_loss=float(metrics.get("train_loss", math.nan)),
        metrics=metrics,
        lr=float(metrics.get("lr", math.nan)),
        loss_scale=1.0,
        skipped_steps=0,
    )


__all__ = ["ScriptExecutor"]
