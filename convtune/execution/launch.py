"""What launched executors share: launch options, the launch environment, failures, the channel.

:class:`LaunchedExecutor` is the part of :class:`~convtune.execution.warm.WarmRankExecutor`
(Workload trials on warm torchrun ranks) and :class:`~convtune.execution.scripts.ScriptExecutor`
(the user's script or command, launched per trial) that does not depend on what runs: the
channel every rank reports to (:mod:`convtune.execution.channel`), its token, the environment a
launch gets (:func:`launch_env`, also used by :mod:`convtune.execution.follow`), the per-trial
thread count, and how the first cause is picked out of several ranks' failures.
"""

from __future__ import annotations

import abc
import dataclasses
import os
import secrets
import sys
import tempfile
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from convtune.config.recipe import Recipe
from convtune.config.spec import StudySpec
from convtune.errors import ConfigError
from convtune.execution.channel import ChannelServer
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

    def __post_init__(self) -> None:
        # Named by their CLI flags: these reach the options from `convtune study run`/`follow`.
        if self.nnodes < 1:
            raise ConfigError(f"--nnodes {self.nnodes}", where="--nnodes", fix="give 1 or more nodes")
        if not self.collective_timeout > 0:
            raise ConfigError(
                f"--collective-timeout {self.collective_timeout:g}",
                where="--collective-timeout",
                fix="give a positive number of seconds (longer than one evaluation)",
            )
        if not self.start_timeout > 0:
            raise ConfigError(
                f"start_timeout {self.start_timeout:g}",
                where="start_timeout",
                fix="give a positive number of seconds",
            )
        if self.local_workers < 1:
            raise ConfigError(
                f"--local-workers {self.local_workers}", where="--local-workers", fix="give 1 or more"
            )

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


def check_gpus(spec: StudySpec, options: LaunchOptions) -> None:
    """One rank per GPU: refuse a Workload's ranks on a node with fewer GPUs than ranks.

    Each rank trains on ``cuda:LOCAL_RANK``; with fewer GPUs every trial would fail at its first
    CUDA call ("invalid device ordinal", or NCCL's "invalid usage" for two ranks on one GPU).
    A script or command places its own ranks, so it is not judged here.
    """
    if not isinstance(spec.workload, str):
        return
    ranks = nproc_per_node(spec.world_size, options.nnodes)
    if ranks < 2:
        return
    import torch

    gpus = torch.cuda.device_count()  # 0 on a CPU node: its ranks train on the CPU
    if 0 < gpus < ranks:
        per_node = f" on each of {options.nnodes} nodes" if options.multi_node else ""
        raise ConfigError(
            f"world_size {spec.world_size} puts {ranks} ranks{per_node} on {gpus} GPU(s): one rank per GPU",
            where="world_size",
            fix=f"use world_size {gpus * options.nnodes} or fewer, more nodes (--nnodes), "
            "or CUDA_VISIBLE_DEVICES= to train the ranks on the CPU",
        )


def _channel_token(options: LaunchOptions) -> str:
    # Other nodes must know it: shared through the environment, or derived from the rendezvous id.
    if options.multi_node:
        return os.environ.get(ENV_TOKEN) or f"convtune-{options.rdzv_id}"
    return secrets.token_hex(16)


def launch_env(options: LaunchOptions, *, channel: str, token: str, threads: int) -> dict[str, str]:
    """The environment of a launch: this process's, the options' ``env``, and what a rank or a
    session script reads (its channel and token, the collective timeout, its torch threads)."""
    env = dict(os.environ)
    env.update(options.env)
    env.update(
        {
            ENV_CHANNEL: channel,
            ENV_TOKEN: token,
            "CONVTUNE_COLLECTIVE_TIMEOUT": str(options.collective_timeout),
            "OMP_NUM_THREADS": str(threads),
            # Idle ranks must not spin on cores other ranks need.
            "OMP_WAIT_POLICY": env.get("OMP_WAIT_POLICY", "PASSIVE"),
            "PYTHONUNBUFFERED": "1",
        }
    )
    if options.backend:
        env["CONVTUNE_BACKEND"] = options.backend
    return env


@dataclass
class _Failure:
    time: float
    description: str
    exited: bool = False  # a connection ended without a report (weaker evidence than an error)


def other_node_failed(msg: dict[str, Any], before: str) -> str:
    """What a `study follow`'s ``launch_failed`` says, as a trial's error: its node, how its
    launch exited, and the launch's last lines."""
    said = f"the launch on another node ({msg.get('node', '?')}) {msg.get('exit', 'failed')} before {before}"
    return f"{said}: {msg['output']}" if msg.get("output") else said


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


class LaunchedExecutor(abc.ABC):
    """An :class:`~convtune.execution.executor.Executor` whose trials run in launched processes.

    Subclasses implement ``_run_trial`` (and ``_abort``, to stop at once on Ctrl-C).
    ``launches`` counts process launches; ``last_timing`` holds the seconds of the last trial's
    phases (launch, trial, train, report; scripts add stop_to_exit).
    """

    def __init__(self, spec: StudySpec, options: LaunchOptions | None = None):
        self.spec = spec
        self.options = options or LaunchOptions()
        check_nodes(spec, self.options)
        check_gpus(spec, self.options)
        self.launches = 0
        self.last_timing: dict[str, float] = {}
        self.last_peak_memory_mb = 0.0
        self._server: ChannelServer | None = None
        self._token = _channel_token(self.options)
        self._trial = 0
        self._tmp = tempfile.TemporaryDirectory(prefix="convtune-launch-")
        self._followers: set[int] = set()  # control connections of other nodes' `study follow`

    def run(self, recipe: Recipe, config: EngineConfig, on_eval: Callable[[Progress], bool]) -> RunResult:
        self._trial += 1
        local_ranks = nproc_per_node(recipe.world_size, self.options.nnodes)
        threads = default_threads(local_ranks, self.options.local_workers)
        config = dataclasses.replace(config, threads=threads)
        self.last_peak_memory_mb = 0.0
        try:
            return self._run_trial(recipe, config, on_eval)
        except KeyboardInterrupt:
            # Ctrl-C (or SIGTERM): the ranks stop now, not at their next evaluation.
            self._abort()
            raise

    @abc.abstractmethod
    def _run_trial(
        self, recipe: Recipe, config: EngineConfig, on_eval: Callable[[Progress], bool]
    ) -> RunResult:
        """Launch (or reuse) the ranks for one trial and stream its records: each executor's own."""

    def _abort(self) -> None:  # noqa: B027 - optional hook: an executor with nothing running keeps it
        """Stop whatever this executor launched, now."""

    def peak_memory_mb(self) -> float:
        """The highest peak resident memory of any rank in this trial so far (from the ranks' reports)."""
        return self.last_peak_memory_mb

    @property
    def server(self) -> ChannelServer:
        if self._server is None:
            host, port = self.options.channel_address()
            self._server = ChannelServer("" if self.options.multi_node else host, port, token=self._token)
        return self._server

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

    def _launch_failed(self, event: Any) -> dict[str, Any] | None:
        """A `study follow`'s word that its launch exited (``launch_failed``), if ``event`` is one."""
        msg = event.message
        if event.conn in self._followers and msg is not None and msg.get("type") == "launch_failed":
            return msg
        return None

    def _env(self, threads: int) -> dict[str, str]:
        host, _ = self.options.channel_address()
        return launch_env(
            self.options, channel=f"{host}:{self.server.port}", token=self._token, threads=threads
        )

    def close(self) -> None:
        """Close the channel and remove the launch's files."""
        if self._server is not None:
            self._server.close()
            self._server = None
        self._tmp.cleanup()

    def __enter__(self) -> LaunchedExecutor:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


__all__ = [
    "ENV_CHANNEL",
    "ENV_CONFIG",
    "ENV_RECIPE",
    "ENV_TOKEN",
    "ENV_TRIAL",
    "LaunchFailed",
    "LaunchOptions",
    "LaunchedExecutor",
    "MultiNodeCommand",
    "RankFailed",
    "check_gpus",
    "check_nodes",
    "launch_env",
    "nproc_per_node",
]
