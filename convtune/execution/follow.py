"""``convtune study follow``: this node lends its ranks to a multi-node study run by another node."""

from __future__ import annotations

import contextlib
import json
import queue
import socket
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from convtune.config.spec import StudySpec
from convtune.errors import ConfigError, StudyError
from convtune.execution.channel import ChannelClient
from convtune.execution.launch import ENV_RECIPE, LaunchOptions, _channel_token, launch_env, nproc_per_node
from convtune.execution.processes import _describe_exit, _log_tail, _terminate
from convtune.training.engine import default_threads


def follow(
    world_size: int,
    options: LaunchOptions,
    *,
    max_launches: int | None = None,
    on_launch: Callable[[int], None] | None = None,
    grace: float = 10.0,
) -> int:
    """Take part in a multi-node study's trials from this node; returns when the study's node closes.

    Runs torchrun with this node's share of ``world_size`` ranks against the rendezvous endpoint,
    again after every failure (the study's node relaunches too), until a launch ends cleanly
    (the study finished) or ``max_launches`` is reached. Returns the number of launches. A launch
    that fails is reported, with its last lines, to the study's node, which would otherwise wait
    for this node's ranks until its process group timed out (minutes) and then name no cause; a
    launch still running ``grace`` seconds after the study's node closed is stopped.
    """
    if not options.multi_node:
        raise ConfigError("following needs --nnodes of 2 or more", where="--nnodes")
    host, port = options.channel_address()
    local = nproc_per_node(world_size, options.nnodes)
    threads = default_threads(local, options.local_workers)
    token = _channel_token(options)
    env = launch_env(options, channel=f"{host}:{port}", token=token, threads=threads)
    command = options.torchrun(local, leader=False) + ["-m", "convtune.execution._rank"]
    client = _connect_to_study(options, token)
    closed = threading.Event()  # the study's node ended the study (or is gone)
    _listen(client, lambda message: closed.set() if _is_close(message) else None)
    launches = 0
    with tempfile.TemporaryDirectory(prefix="convtune-follow-") as tmp:
        try:
            while max_launches is None or launches < max_launches:
                launches += 1
                if on_launch:
                    on_launch(launches)
                log = Path(tmp) / f"launch-{launches}.log"
                proc = subprocess.Popen(
                    command, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, start_new_session=True
                )
                echo = threading.Thread(
                    target=_echo, args=(proc, log), name="convtune-follow-echo", daemon=True
                )
                echo.start()
                try:
                    # Once the study's node has closed, a launch still waiting (in the rendezvous
                    # for a launch that will not come) is stopped after a grace.
                    while proc.poll() is None and not closed.wait(0.2):
                        pass
                    with contextlib.suppress(subprocess.TimeoutExpired):
                        proc.wait(timeout=grace)
                finally:
                    _terminate(proc, [])
                    echo.join(timeout=5.0)
                code = proc.returncode
                if code == 0 or closed.is_set():
                    break
                with contextlib.suppress(OSError):
                    client.send(
                        {
                            "type": "launch_failed",
                            "node": socket.gethostname(),
                            "exit": _describe_exit(code),
                            "output": _log_tail(log),
                        }
                    )
                if closed.wait(1.0):
                    break
        finally:
            client.close()
    return launches


def follow_scripts(
    spec: StudySpec,
    world_size: int,
    options: LaunchOptions,
    *,
    on_trial: Callable[[int], None] | None = None,
    grace: float = 10.0,
) -> int:
    """Take part in a multi-node study of a ``workload: {script: …}`` from this node.

    Connects to the study's channel and, for each trial the study's node announces, launches the
    spec's script under torchrun (this node's share of ``world_size`` ranks, the same rendezvous
    options) with that trial's recipe; its ranks report through :mod:`convtune.execution.session` to the
    study's channel. A launch still running ``grace`` seconds after the study's node ended the
    trial is stopped. Returns the number of trials taken part in, when the study's node closes.
    """
    if not options.multi_node:
        raise ConfigError("following needs --nnodes of 2 or more", where="--nnodes")
    workload = spec.workload
    assert isinstance(workload, dict) and "script" in workload
    host, port = options.channel_address()
    local = nproc_per_node(world_size, options.nnodes)
    token = _channel_token(options)
    threads = default_threads(local, options.local_workers)
    env = launch_env(options, channel=f"{host}:{port}", token=token, threads=threads)
    command = options.torchrun(local, leader=False)
    command += [str(workload["script"]), *map(str, workload.get("args", []))]
    client = _connect_to_study(options, token)
    inbox: queue.Queue[dict[str, Any] | None] = queue.Queue()
    _listen(client, inbox.put)
    trials = 0
    pending: list[dict[str, Any] | None] = []  # read during a launch, handled after it
    with tempfile.TemporaryDirectory(prefix="convtune-follow-") as tmp:
        try:
            while True:
                message = pending.pop(0) if pending else inbox.get()
                if _is_close(message):
                    break
                if message.get("type") != "script_trial":
                    continue
                trials += 1
                trial = message["trial"]
                if on_trial:
                    on_trial(trial)
                recipe_file = Path(tmp) / f"recipe-{trial}.json"
                recipe_file.write_text(json.dumps(message["recipe"], indent=1))
                trial_env = {**env, **message["env"], ENV_RECIPE: str(recipe_file)}
                log = Path(tmp) / f"output-{trial}.log"
                proc = subprocess.Popen(
                    command,
                    env=trial_env,
                    cwd=spec.base_dir,
                    stdout=subprocess.PIPE,
                    stderr=subprocess.STDOUT,
                    start_new_session=True,
                )
                echo = threading.Thread(
                    target=_echo, args=(proc, log), name="convtune-follow-echo", daemon=True
                )
                echo.start()
                ended: float | None = None
                try:
                    while proc.poll() is None:
                        if ended is not None and time.monotonic() > ended + grace:
                            break
                        with contextlib.suppress(queue.Empty):
                            news = inbox.get(timeout=0.1)
                            if news is not None and news.get("type") == "trial_end":
                                if news.get("trial") == trial:
                                    ended = time.monotonic()
                            else:
                                pending.append(news)  # the study's node moved on: end this launch
                                ended = ended if ended is not None else time.monotonic()
                finally:
                    _terminate(proc, [])
                    echo.join(timeout=5.0)
                if ended is None and proc.returncode:
                    # The study's node would otherwise wait for this node's ranks until its rendezvous
                    # or process group timed out (minutes): tell it, with the cause.
                    with contextlib.suppress(OSError):
                        client.send(
                            {
                                "type": "launch_failed",
                                "trial": trial,
                                "node": socket.gethostname(),
                                "exit": _describe_exit(proc.returncode),
                                "output": _log_tail(log),
                            }
                        )
        finally:
            client.close()
    return trials


def _is_close(message: dict[str, Any] | None) -> bool:
    return message is None or message.get("type") == "close"


def _listen(client: ChannelClient, handle: Callable[[dict[str, Any] | None], Any]) -> None:
    """Hand each message from the study's node to ``handle`` on a thread of its own, up to and
    including its ``close`` (or ``None`` when the connection ends)."""

    def read() -> None:
        while True:
            try:
                message = client.recv()
            except (OSError, ValueError):
                message = None
            handle(message)
            if _is_close(message):
                return

    threading.Thread(target=read, name="convtune-follow", daemon=True).start()


def _connect_to_study(options: LaunchOptions, token: str) -> ChannelClient:
    """This node's control connection to the study's node (``start_timeout`` to come up)."""
    host, port = options.channel_address()
    try:
        return ChannelClient.connect(
            f"{host}:{port}",
            token=token,
            hello={"rank": -1, "role": "follower"},
            timeout=options.start_timeout,
        )
    except OSError as exc:
        raise StudyError(
            f"could not reach the study's node at {host}:{port} within {options.start_timeout:g} s ({exc})",
            where="--rdzv-endpoint",
            fix="start `convtune study run` with the same --nnodes and --rdzv-endpoint on the study's node, "
            "or check that this node can reach that host and port",
        ) from None


def _echo(proc: subprocess.Popen[bytes], log: Path) -> None:
    """Copy a launch's output to this process's (the follower's terminal) and to ``log``."""
    assert proc.stdout is not None
    with open(log, "wb") as out:
        for line in proc.stdout:
            out.write(line)
            out.flush()
            with contextlib.suppress(OSError, ValueError):
                sys.stdout.buffer.write(line)
                sys.stdout.buffer.flush()


__all__ = ["follow", "follow_scripts"]
