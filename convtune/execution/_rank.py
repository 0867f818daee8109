"""One rank of a warm worker: ``torchrun … -m convtune.execution._rank``, started by :mod:`convtune.execution.launcher`.

The rank joins the process group once, connects to its worker's channel, then runs trial after
trial (a new model, optimizer and data stream each time, the same process group) until the worker
says ``close`` or goes away. Every rank receives each trial and each stop decision over its own
connection, so ranks idle between trials without sitting in a collective (which would time out),
and all ranks see the same decision at the same evaluation.

A rank that raises sends its error (first line and where) and exits non-zero; torchrun then stops
the other ranks and the worker relaunches. Not meant to be run by hand.
"""

from __future__ import annotations

import os
import signal
import sys
import threading
import time
from datetime import timedelta
from pathlib import Path
from typing import Any

import torch
import torch.distributed as dist

from convtune.config.recipe import Recipe
from convtune.execution.channel import ChannelClient, describe_exception
from convtune.training.engine import EngineConfig, Progress, default_device, train
from convtune.training.memory import peak_memory_mb
from convtune.workloads import Workload, build_workload


class _WorkerGone(Exception):
    """The worker closed the channel: leave quietly."""


def _watch_parent() -> None:
    """Exit if the torchrun agent dies (SIGKILL leaves ranks orphaned otherwise)."""
    parent = os.getppid()
    while True:
        time.sleep(1.0)
        if os.getppid() != parent:
            os._exit(3)


def backend() -> str:
    """NCCL when this rank has a GPU, gloo otherwise (``CONVTUNE_BACKEND`` overrides)."""
    return os.environ.get("CONVTUNE_BACKEND") or ("nccl" if torch.cuda.is_available() else "gloo")


def main() -> int:
    threading.Thread(target=_watch_parent, daemon=True).start()
    timeout = timedelta(seconds=float(os.environ.get("CONVTUNE_COLLECTIVE_TIMEOUT", "600")))
    chosen = backend()
    if chosen == "nccl":
        torch.cuda.set_device(int(os.environ.get("LOCAL_RANK", "0")))
    dist.init_process_group(chosen, timeout=timeout)
    rank, world_size = dist.get_rank(), dist.get_world_size()
    client = ChannelClient.connect(
        os.environ["CONVTUNE_CHANNEL"],
        token=os.environ["CONVTUNE_TOKEN"],
        hello={
            "rank": rank,
            "world_size": world_size,
            "backend": chosen,
            "launch": os.environ.get("CONVTUNE_LAUNCH"),
        },
    )
    workloads: dict[str, Workload] = {}
    trial: Any = None
    try:
        while True:
            message = client.recv()
            if message is None or message["type"] == "close":
                break
            if message["type"] != "trial":
                continue
            trial = message["trial"]
            key = repr((message["workload"], sorted(message["workload_args"].items()), message["base_dir"]))
            if key not in workloads:  # built once per worker, like the in-process executor
                workloads[key] = build_workload(
                    message["workload"], message["workload_args"], base_dir=Path(message["base_dir"])
                )
            result = _run_trial(client, workloads[key], message, rank)
            if rank == 0:
                client.send({"type": "result", "trial": trial, "result": result})
    except _WorkerGone:
        pass
    except KeyboardInterrupt:
        # SIGINT is a stop, not a crash: end by the signal itself, as torchrun then reports it
        # (exitcode -2), so the worker re-queues the trial instead of failing it.
        signal.signal(signal.SIGINT, signal.SIG_DFL)
        os.kill(os.getpid(), signal.SIGINT)
    except BaseException as exc:  # noqa: BLE001  (any error fails the trial; the worker relaunches)
        try:
            client.send(
                {
                    "type": "error",
                    "trial": trial,
                    "rank": rank,
                    "error": describe_exception(exc),
                    "time": time.time(),
                }
            )
        except OSError:
            pass
        client.close()
        sys.stderr.write(f"convtune rank {rank}: {describe_exception(exc)}\n")
        sys.stderr.flush()
        os._exit(1)  # the process group may be broken: do not wait in its teardown
    client.close()
    dist.destroy_process_group()
    return 0


def _run_trial(
    client: ChannelClient, workload: Workload, message: dict[str, Any], rank: int
) -> dict[str, Any]:
    trial = message["trial"]
    recipe = Recipe.from_dict(message["recipe"], where=f"trial {trial}")
    config = EngineConfig(**message["config"])
    if config.threads:
        torch.set_num_threads(config.threads)

    def on_eval(record: Progress) -> bool:
        # Rank 0 reports; every rank then reads the worker's decision for this evaluation, so all
        # ranks leave the loop at the same step. Rank 0's record carries the highest peak resident
        # memory of all ranks (every rank evaluates at the same step: the collective is safe).
        peak = _max_over_ranks(peak_memory_mb(default_device(config.device)))
        if rank == 0:
            client.send(
                {"type": "progress", "trial": trial, "record": record.to_dict(), "peak_memory_mb": peak}
            )
        while True:
            reply = client.recv()
            if reply is None or reply["type"] == "close":
                raise _WorkerGone()
            if reply["type"] == "decision" and reply["trial"] == trial:
                return bool(reply["stop"])

    result = train(workload, recipe, config, on_eval)
    return result.summary()


def _max_over_ranks(value: float) -> float:
    if not dist.is_initialized() or dist.get_world_size() == 1:
        return value
    device = torch.device("cuda", torch.cuda.current_device()) if dist.get_backend() == "nccl" else "cpu"
    tensor = torch.tensor([value], dtype=torch.float64, device=device)
    dist.all_reduce(tensor, op=dist.ReduceOp.MAX)
    return float(tensor.item())


if __name__ == "__main__":
    sys.exit(main())
