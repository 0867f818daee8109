"""Launching trials as ``world_size`` rank processes with PyTorch's own elastic launcher.

:class:`ElasticExecutor` is an :class:`~convtune.study.Executor`: the study's objective hands it a
Recipe and gets back a :class:`~convtune.training.engine.RunResult`, whatever runs underneath.

- **Workload trials** run in *warm* ranks: one ``torchrun … -m convtune.execution._rank`` launch serves
  trial after trial (a new model, optimizer and data stream each, the same process group). A cold
  launch costs seconds (process start, torch import, rendezvous) against trials of tens of
  seconds, so ranks are relaunched only after a failure or when a trial needs another world size.
- **Script and command trials** (``workload: {script: …}`` / ``{command: […]}``) start the user's
  program per trial; it talks to the worker through :mod:`convtune.execution.session`.

Every rank holds its own connection to the worker's channel (:mod:`convtune.execution.channel`). Rank 0
sends each evaluation's record; the worker answers every rank with the same stop decision for that
evaluation, so all ranks leave the loop at the same step, with no lag. A rank that raises reports
its error before it exits; one that is killed shows up as the end of its connection; either fails
the trial (:class:`RankFailed`), and the next trial gets fresh ranks. Collectives time out after
``collective_timeout`` seconds, so a rank that hangs fails the trial too.

Multi-node: every node runs torchrun against one rendezvous endpoint. The node that runs the study
(``convtune study run NAME --nnodes 2 --rdzv-endpoint HOST:PORT``) hosts the rendezvous and the
channel (on PORT+1); every other node runs :func:`convtune.execution.follow.follow` (``convtune study follow NAME
--nnodes 2 --rdzv-endpoint HOST:PORT``), whose ranks take part in every trial. For a script
workload the follower instead receives each trial's recipe over the channel (``script_trial``)
and launches the script there (:func:`convtune.execution.follow.follow_scripts`); command workloads stay on one node.

Example:
    >>> from convtune.execution.launcher import ElasticExecutor, LaunchOptions
    >>> executor = ElasticExecutor(spec, LaunchOptions(collective_timeout=60))   # doctest: +SKIP
    >>> result = executor.run(recipe, engine_config(spec), on_eval=lambda p: False)
    >>> executor.close()
"""

from __future__ import annotations

import contextlib
import dataclasses
import json
import math
import os
import secrets
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from convtune.config.recipe import Recipe
from convtune.config.spec import StudySpec
from convtune.errors import ConfigError
from convtune.execution.channel import ChannelServer
from convtune.execution.processes import _describe_exit, _log_tail, _terminate, _with_exit_code
from convtune.training.engine import EngineConfig, Progress, RunResult, default_threads

# Environment a rank (or a session script) reads.
ENV_CHANNEL = "CONVTUNE_CHANNEL"
ENV_TOKEN = "CONVTUNE_TOKEN"
ENV_RECIPE = "CONVTUNE_RECIPE"
ENV_CONFIG = "CONVTUNE_CONFIG"
ENV_TRIAL = "CONVTUNE_TRIAL"


class RankFailed(Exception):
    """A rank raised, died or hung: the trial fails with ``description`` (the rank's own error)."""

    def __init__(self, description: str):
        super().__init__(description)
        self.description = description


class MultiNodeCommand(ConfigError):
    """A ``command`` workload with ``--nnodes`` > 1 (commands are run as given, on one node)."""


class LaunchFailed(RankFailed):
    """The ranks did not come up (torchrun exited, or they never connected)."""


@dataclass(frozen=True)
class LaunchOptions:
    """How a worker launches its ranks (not what a trial trains: that is the Recipe).

    ``nnodes``/``rdzv_endpoint``/``rdzv_id`` are torchrun's rendezvous options; with one node the
    rendezvous is local (``--standalone``). ``collective_timeout`` bounds every collective (gloo's
    default is 30 minutes): a rank stuck longer fails the trial. It must exceed one evaluation.
    ``local_workers``: tuning processes sharing this machine; threads per rank are
    ``cores // (local ranks × local_workers)``.
    """

    nnodes: int = 1
    rdzv_endpoint: str | None = None
    rdzv_id: str = "convtune"
    channel_port: int | None = None
    collective_timeout: float = 600.0
    start_timeout: float = 300.0
    local_workers: int = 1
    backend: str | None = None
    python: str = sys.executable
    env: dict[str, str] = field(default_factory=dict)

    @property
    def multi_node(self) -> bool:
        return self.nnodes > 1

    def channel_address(self) -> tuple[str, int]:
        """Where the channel listens: any free loopback port, or the rendezvous host's PORT+1."""
        if not self.multi_node:
            return "127.0.0.1", self.channel_port or 0
        host, port = _endpoint(self.rdzv_endpoint)
        return host, self.channel_port or port + 1

    def torchrun(self, nproc_per_node: int, *, leader: bool) -> list[str]:
        """The ``python -m torch.distributed.run`` prefix for one node of a launch."""
        command = [self.python, "-m", "torch.distributed.run", "--nproc-per-node", str(nproc_per_node)]
        if self.multi_node:
            command += [
                "--nnodes",
                str(self.nnodes),
                "--rdzv-backend",
                "c10d",
                "--rdzv-endpoint",
                str(self.rdzv_endpoint),
                "--rdzv-id",
                self.rdzv_id,
                # The study's node hosts the rendezvous store, whatever the hostnames say.
                "--rdzv-conf",
                f"is_host={'true' if leader else 'false'}",
            ]
        else:
            command += ["--standalone", "--nnodes", "1"]
        return command + ["--max-restarts", "0", "--monitor-interval", "0.1"]


def _endpoint(value: str | None) -> tuple[str, int]:
    if not value or ":" not in value:
        raise ConfigError(
            "multi-node trials need a rendezvous endpoint HOST:PORT",
            where="--rdzv-endpoint",
            fix="give the address of the node that runs `convtune study run`, e.g. 10.0.0.1:29400",
        )
    host, _, port = value.rpartition(":")
    return host, int(port)


def nproc_per_node(world_size: int, nnodes: int) -> int:
    if world_size % nnodes:
        raise ConfigError(
            f"world_size {world_size} does not divide over {nnodes} nodes",
            where="world_size",
            fix="use a world size that is a multiple of --nnodes",
        )
    return world_size // nnodes


def check_nodes(spec: StudySpec, options: LaunchOptions) -> None:
    """``command`` workloads run as given, on one node: refuse ``--nnodes`` > 1 for them."""
    if options.multi_node and isinstance(spec.workload, dict) and "command" in spec.workload:
        raise MultiNodeCommand(
            f"a command workload runs on one node; --nnodes {options.nnodes} needs a Workload or a script",
            where="workload.command",
            fix="use `workload: {script: train.py, args: [...]}` (launched on every node), or --nnodes 1",
        )


def _channel_token(options: LaunchOptions) -> str:
    # Other nodes must know it: shared through the environment, or derived from the rendezvous id.
    if options.multi_node:
        return os.environ.get(ENV_TOKEN) or f"convtune-{options.rdzv_id}"
    return secrets.token_hex(16)


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


@dataclass
class _Failure:
    time: float
    description: str
    exited: bool = False  # a connection ended without a report (weaker evidence than an error)


class ElasticExecutor:
    """Runs trials as torchrun-launched ranks; Workload trials reuse warm ranks across trials.

    ``launches`` counts torchrun starts (tests check that a second trial needed none);
    ``last_timing`` holds the seconds of the last trial's phases (launch, setup, train, report, exit).
    """

    def __init__(self, spec: StudySpec, options: LaunchOptions | None = None):
        self.spec = spec
        self.options = options or LaunchOptions()
        check_nodes(spec, self.options)
        self._followers: set[int] = set()  # control connections of `study follow` (script trials)
        self.launches = 0
        self.last_timing: dict[str, float] = {}
        self.last_peak_rss_mb = 0.0
        self._server: ChannelServer | None = None
        self._token = _channel_token(self.options)
        self._launch: _Launch | None = None
        self._live_conns: set[int] = set()
        self._trial = 0
        self._tmp = tempfile.TemporaryDirectory(prefix="convtune-launch-")

    # ---- the Executor protocol ------------------------------------------------------------

    def run(self, recipe: Recipe, config: EngineConfig, on_eval: Callable[[Progress], bool]) -> RunResult:
        self._trial += 1
        local_ranks = nproc_per_node(recipe.world_size, self.options.nnodes)
        threads = default_threads(local_ranks, self.options.local_workers)
        config = dataclasses.replace(config, threads=threads)
        self.last_peak_rss_mb = 0.0
        try:
            if isinstance(self.spec.workload, dict):
                return self._run_external(recipe, config, on_eval)
            return self._run_warm(recipe, config, on_eval)
        except KeyboardInterrupt:
            # Ctrl-C (or SIGTERM): the ranks stop now, not at their next evaluation.
            self._stop_launch(graceful=False)
            raise

    def peak_rss_mb(self) -> float:
        """The highest peak resident memory of any rank in this trial so far (from rank 0's records)."""
        return self.last_peak_rss_mb

    def close(self) -> None:
        """Tell the ranks to leave (process group destroyed) and wait; force them if they don't."""
        self._stop_launch(graceful=True)
        if self._server is not None:
            for conn in self._followers:
                self._server.send(conn, {"type": "close"})
            self._server.close()
            self._server = None
        self._tmp.cleanup()

    def __enter__(self) -> ElasticExecutor:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # ---- warm ranks for Workload trials ---------------------------------------------------

    @property
    def server(self) -> ChannelServer:
        if self._server is None:
            host, port = self.options.channel_address()
            self._server = ChannelServer("" if self.options.multi_node else host, port, token=self._token)
        return self._server

    def _env(self, threads: int) -> dict[str, str]:
        host, _ = self.options.channel_address()
        env = dict(os.environ)
        env.update(self.options.env)
        env.update(
            {
                ENV_CHANNEL: f"{host}:{self.server.port}",
                ENV_TOKEN: self._token,
                "CONVTUNE_COLLECTIVE_TIMEOUT": str(self.options.collective_timeout),
                "OMP_NUM_THREADS": str(threads),
                # Idle ranks must not spin on cores other ranks need.
                "OMP_WAIT_POLICY": env.get("OMP_WAIT_POLICY", "PASSIVE"),
                "PYTHONUNBUFFERED": "1",
            }
        )
        if self.options.backend:
            env["CONVTUNE_BACKEND"] = self.options.backend
        return env

    def _ensure_ranks(self, world_size: int, threads: int) -> float:
        """Warm ranks of ``world_size``, launching them if needed; returns the seconds it took."""
        launch = self._launch
        if launch is not None:
            while (event := self.server.get(timeout=0)) is not None:  # anything since the last trial?
                if event.message is None:
                    self._live_conns.discard(event.conn)
            if (
                launch.alive()
                and launch.world_size == world_size
                and all(conn in self._live_conns for conn in launch.ranks.values())
            ):
                return 0.0
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
        launch = _Launch(proc=proc, world_size=world_size, log=log)
        self._launch = launch
        self._live_conns = set()
        deadline = time.monotonic() + self.options.start_timeout
        while len(launch.ranks) < world_size:
            event = self.server.get(timeout=0.1)
            if event is not None:
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
                raise LaunchFailed(f"LaunchFailed: torchrun {why}: {_log_tail(log)}")
        return time.perf_counter() - started

    def _run_warm(
        self, recipe: Recipe, config: EngineConfig, on_eval: Callable[[Progress], bool]
    ) -> RunResult:
        assert isinstance(self.spec.workload, str)
        launch_seconds = self._ensure_ranks(recipe.world_size, config.threads or 1)
        launch = self._launch
        assert launch is not None
        trial = self._trial
        message = {
            "type": "trial",
            "trial": trial,
            "recipe": recipe.to_dict(),
            "config": dataclasses.asdict(config),  # JSON carries inf (no cap) as Infinity
            "workload": self.spec.workload,
            "workload_args": dict(self.spec.workload_args),
            "base_dir": self.spec.base_dir,
        }
        sent = time.perf_counter()
        for conn in launch.ranks.values():
            self.server.send(conn, message)
        history: list[Progress] = []
        report_seconds = 0.0
        index = 0
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
            if event.conn not in rank_of:
                continue
            msg = event.message
            if msg is None:
                self._live_conns.discard(event.conn)
                if event.conn in reported:
                    continue
                failures.append(
                    _Failure(
                        event.time,
                        f"rank {rank_of[event.conn]} exited without reporting an error (killed?)",
                        True,
                    )
                )
                continue
            if msg.get("trial") != trial:
                continue
            kind = msg["type"]
            if kind == "error":
                reported.add(event.conn)
                failures.append(_Failure(float(msg.get("time", event.time)), str(msg["error"])))
            elif kind == "progress" and not failures:
                record = Progress(**msg["record"])
                history.append(record)
                self.last_peak_rss_mb = max(self.last_peak_rss_mb, float(msg.get("peak_rss_mb") or 0.0))
                started = time.perf_counter()
                try:
                    stop = bool(on_eval(record))
                except BaseException:
                    self._stop_launch(graceful=False)  # ranks wait for a decision that won't come
                    raise
                report_seconds += time.perf_counter() - started
                reply = {"type": "decision", "trial": trial, "index": index, "stop": stop}
                index += 1
                for conn in launch.ranks.values():
                    self.server.send(conn, reply)
            elif kind == "result" and not failures:
                result = RunResult.from_summary(msg["result"], history)
                result.backend = result.backend if result.backend != "none" else launch.backend
                self.last_timing = {
                    "launch": launch_seconds,
                    "trial": time.perf_counter() - sent,
                    "train": result.seconds,
                    "report": report_seconds,
                }
                return result
        self._stop_launch(graceful=False)
        raise RankFailed(_with_exit_code(_first_cause(failures), launch.log))

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

    # ---- scripts and commands --------------------------------------------------------------

    def _run_external(
        self, recipe: Recipe, config: EngineConfig, on_eval: Callable[[Progress], bool]
    ) -> RunResult:
        """One launch of the user's program per trial; it reports through :mod:`convtune.execution.session`."""
        workload = self.spec.workload
        assert isinstance(workload, dict)
        trial = self._trial
        folder = Path(self._tmp.name) / f"trial-{trial}"
        folder.mkdir()
        recipe_file = folder / "recipe.json"
        recipe_file.write_text(json.dumps(recipe.to_dict(), indent=1))
        if "script" in workload:
            local = nproc_per_node(recipe.world_size, self.options.nnodes)
            command = self.options.torchrun(local, leader=True)
            command += [str(workload["script"]), *map(str, workload.get("args", []))]
        else:
            command = [str(part) for part in workload["command"]]
        env = self._env(config.threads or 1)
        env.update(
            {
                ENV_RECIPE: str(recipe_file),
                ENV_TRIAL: str(trial),
                ENV_CONFIG: json.dumps(
                    {
                        "eval_every": config.eval_every,
                        "eval_unit": config.eval_unit,
                        "seed": config.seed,
                        "threads": config.threads,
                        "world_size": recipe.world_size,
                        "max_cost": _finite_or_none(config.max_cost),
                        "cost": config.cost,
                        # One folder per trial, kept across its retries (session.checkpoint_dir).
                        "checkpoint_dir": config.checkpoint_dir,
                    }
                ),
                "CONVTUNE_WORLD_SIZE": str(recipe.world_size),
            }
        )
        if self._launch is not None:  # warm Workload ranks from an earlier spec: not needed here
            self._stop_launch(graceful=True)
        scripted_nodes = self.options.multi_node and "script" in workload
        if scripted_nodes:
            # Every other node (`convtune study follow`) launches the same script with this
            # trial's recipe and joins the rendezvous; its ranks report to this channel.
            self._await_followers()
            order = {
                "type": "script_trial",
                "trial": trial,
                "recipe": recipe.to_dict(),
                "env": {k: env[k] for k in (ENV_TRIAL, ENV_CONFIG, "CONVTUNE_WORLD_SIZE")},
            }
            for conn in self._followers:
                self.server.send(conn, order)
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
        conns: set[int] = set()
        pids: list[int] = []
        decisions: list[bool] = []
        history: list[Progress] = []
        failures: list[_Failure] = []
        status, reason = "finished", ""
        stopped_at: float | None = None
        report_seconds = 0.0
        target = self.spec.target_spec
        try:
            while True:
                event = self.server.get(timeout=0.1)
                if event is None:
                    if proc.poll() is not None:
                        break
                    continue
                if self._note_follower(event):
                    continue
                msg = event.message
                if msg is None:
                    conns.discard(event.conn)
                    continue
                if msg.get("type") == "hello":
                    if str(msg.get("trial")) != str(trial):
                        self.server.drop(event.conn)  # a straggler from an earlier trial
                        continue
                    conns.add(event.conn)
                    if msg.get("host") == os.uname().nodename:
                        pids.append(int(msg["pid"]))
                    for i, stop in enumerate(decisions):  # a late rank catches up
                        self.server.send(
                            event.conn, {"type": "decision", "trial": trial, "index": i, "stop": stop}
                        )
                    continue
                if event.conn not in conns:
                    continue
                # Each rank's peak resident memory comes with its reports (for max_memory_mb).
                self.last_peak_rss_mb = max(self.last_peak_rss_mb, float(msg.get("peak_rss_mb") or 0.0))
                if msg["type"] == "error":
                    failures.append(_Failure(float(msg.get("time", event.time)), str(msg["error"])))
                elif msg["type"] == "progress":
                    record = _record_from_session(msg["record"], config, recipe.world_size)
                    history.append(record)
                    started = time.perf_counter()
                    stop = bool(on_eval(record))
                    report_seconds += time.perf_counter() - started
                    value = record.metrics.get(target.metric, math.nan)
                    if not stop and not math.isfinite(float(value)):
                        stop, status, reason = (
                            True,
                            "diverged",
                            f"non-finite {target.metric} at step {record.step}",
                        )
                    elif not stop and record.cost >= config.max_cost:
                        stop, status, reason = True, "budget", f"max_cost {config.max_cost:g} reached"
                    elif stop and status == "finished":
                        status, reason = "stopped", "stopped by the caller"
                    if stop and stopped_at is None:
                        stopped_at = time.perf_counter()
                    decisions.append(stop)
                    for conn in list(conns):
                        self.server.send(
                            conn,
                            {"type": "decision", "trial": trial, "index": len(decisions) - 1, "stop": stop},
                        )
        finally:
            if proc.poll() is None:
                _terminate(proc, pids)
            for conn in conns:
                self.server.drop(conn)
            if scripted_nodes:
                for conn in self._followers:
                    self.server.send(conn, {"type": "trial_end", "trial": trial})
        code = proc.returncode
        ended = time.perf_counter()
        if code != 0 or failures:
            if not failures:
                failures.append(_Failure(time.time(), f"{_describe_exit(code)}: {_log_tail(log)}", True))
            raise RankFailed(_first_cause(failures))
        last = history[-1] if history else None
        result = RunResult(
            history=history,
            status=status,  # type: ignore[arg-type]
            reason=reason,
            steps=last.step if last else 0,
            samples=last.samples if last else 0,
            seconds=last.seconds if last else 0.0,
            world_size=recipe.world_size,
            backend="external",
        )
        self.last_timing = {
            "launch": 0.0,
            "trial": ended - sent,
            "train": result.seconds,
            "report": report_seconds,
            "stop_to_exit": ended - stopped_at if stopped_at is not None else math.nan,
        }
        return result

    def _note_follower(self, event: Any) -> bool:
        """Track `study follow` control connections; True when ``event`` was about one."""
        msg = event.message
        if msg is None:
            if event.conn in self._followers:
                self._followers.discard(event.conn)
                return True
            return False
        if msg.get("type") == "hello" and msg.get("role") == "follower":
            self._followers.add(event.conn)
            return True
        return event.conn in self._followers

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
    metrics = {k: float(v) for k, v in (data.get("metrics") or {}).items()}
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


def _finite_or_none(value: float) -> float | None:
    return value if math.isfinite(value) else None


# Errors a rank raises only because another rank is gone (its half of a collective broke).
_CONSEQUENCES = ("connection reset by peer", "connection closed by peer", "broken pipe", "remote worker")


def _first_cause(failures: list[_Failure]) -> str:
    """The failure that caused the others.

    A rank's own error beats everything; a rank that vanished without a report (killed) beats the
    errors its peers raised because their collective broke; otherwise the earliest report wins
    (a collective timeout, when a rank hangs).
    """
    reports = [f for f in failures if not f.exited]
    primary = [f for f in reports if not any(c in f.description.lower() for c in _CONSEQUENCES)]
    silent = [f for f in failures if f.exited]
    chosen = min(primary or silent or reports, key=lambda f: f.time)
    return chosen.description


__all__ = [
    "ElasticExecutor",
    "LaunchFailed",
    "LaunchOptions",
    "MultiNodeCommand",
    "RankFailed",
    "check_nodes",
    "nproc_per_node",
]
