"""Tune your own training script: ask for the trial's recipe, report progress, stop when told.

convtune launches a ``workload: {script: train.py}`` under torchrun with the trial's world size
(or runs a ``workload: {command: [...]}`` as given) and passes the trial through the environment:
``CONVTUNE_RECIPE`` names a JSON file with the recipe, ``CONVTUNE_CHANNEL`` the worker to report
to. Every rank calls :func:`report` at the same steps; rank 0's metrics are recorded, and every
rank gets the same answer at the same step, so all ranks leave the loop together (none is left
waiting in a collective).

Example::

    from convtune.execution import session

    recipe = session.recipe()                  # the Recipe class that export/load_recipe use
    model = DDP(build_model())
    opt = recipe.optimizer(model.module)
    sched = recipe.scheduler(opt)
    for step in range(1, recipe.total_steps + 1):
        ...                                    # train one optimizer step
        if step % 50 == 0:
            if session.report(step=step, samples=step * recipe.effective_batch_size,
                              metrics={"val_loss": evaluate(model)}):
                break                          # True: the trial is over, on every rank
    del model                                  # DDP before the process group: a clean exit
    dist.destroy_process_group()

Declare what the script reports in the spec (``workload: {script: train.py, metrics: {val_loss:
[0, .inf]}}`` or a list of names): ``study create`` checks the target against it. The worker
checks every report: no target metric, or a value that is not a number, ends the run with one
line; a NaN or infinite target metric ends the trial ``diverged``.

A rank that crashes after every rank received the stop (its ``report`` returned True) leaves
the trial's outcome as it was, with the crash among the trial's ``warnings``; a crash before
that fails the trial.

Outside convtune (no ``CONVTUNE_CHANNEL``) :func:`report` records nothing and returns False, and
:func:`recipe` reads ``CONVTUNE_RECIPE`` if set: the same script runs on its own with an exported
recipe (``CONVTUNE_RECIPE=best.yaml python train.py``).
"""

from __future__ import annotations

import contextlib
import json
import os
import sys
import time
from typing import Any

from convtune.config.recipe import Recipe, load_recipe
from convtune.errors import ConfigError
from convtune.execution.channel import ChannelClient, describe_exception
from convtune.training.memory import peak_memory_mb

_client: ChannelClient | None = None
_started: float | None = None
_reports = 0
_recipe: Recipe | None = None


def active() -> bool:
    """True when this process runs as a convtune trial (it has a worker to report to)."""
    return bool(os.environ.get("CONVTUNE_CHANNEL"))


def _rank() -> int:
    return int(os.environ.get("RANK", "0"))


def recipe() -> Recipe:
    """The trial's recipe (read once; the trial's clock starts here unless ``report`` gets ``seconds``)."""
    global _recipe, _started
    if _recipe is None:
        path = os.environ.get("CONVTUNE_RECIPE")
        if not path:
            raise ConfigError(
                "no recipe: this script is not running as a convtune trial",
                where="CONVTUNE_RECIPE",
                fix="run it through `convtune study run`, or set CONVTUNE_RECIPE=best.yaml",
            )
        _recipe = load_recipe(path)
        _connect()
    if _started is None:
        _started = time.perf_counter()
    return _recipe


def config() -> dict[str, Any]:
    """The trial's engine settings: ``eval_every``, ``eval_unit``, ``seed``, ``threads``, ``world_size``, …"""
    raw = os.environ.get("CONVTUNE_CONFIG")
    return json.loads(raw) if raw else {}


def checkpoint_dir() -> str | None:
    """Where this trial keeps its checkpoints, or None when the study's spec sets no ``checkpoint_dir``.

    One folder per trial, the same for every retry of it: a script that saves there and resumes
    from what it finds continues a retried or preempted trial instead of starting over. convtune
    deletes the folder once the trial is finished.
    """
    value = config().get("checkpoint_dir")
    return str(value) if value else None


def report(*, step: int, samples: int, metrics: dict[str, float], seconds: float | None = None) -> bool:
    """Report an evaluation; True when the trial must stop now.

    Call it on every rank at the same steps (``samples`` counted over all ranks); only rank 0's
    ``metrics`` are recorded. ``seconds`` of training so far defaults to the time since
    :func:`recipe` was first called.
    """
    global _reports, _started
    client = _connect()
    if client is None:
        return False
    if _started is None:
        _started = time.perf_counter()
    elapsed = seconds if seconds is not None else time.perf_counter() - _started
    trial = os.environ.get("CONVTUNE_TRIAL")
    # Each trial is a fresh launch of the script: the process's peak is the trial's.
    peak = peak_memory_mb()  # the GPU's if the script started CUDA, else its resident set
    if _rank() == 0:
        # Sent as reported: the worker checks them (a non-number, or no target metric, ends the
        # study in one line there, instead of a crash of this script in every trial).
        clean = _plain_metrics(metrics)
        record = {"step": int(step), "samples": int(samples), "seconds": float(elapsed), "metrics": clean}
        client.send({"type": "progress", "trial": trial, "record": record, "peak_memory_mb": peak})
    else:
        client.send({"type": "memory", "trial": trial, "peak_memory_mb": peak})
    index = _reports
    _reports += 1
    while True:
        reply = client.recv()
        if reply is None:
            # The worker is gone: nobody records this run any more, so stop.
            return True
        if reply.get("type") == "decision" and reply.get("index") == index:
            if reply["stop"]:
                # The stop reached this rank: once every rank says so, the trial's outcome
                # stands even if a rank crashes while it tears down.
                with contextlib.suppress(OSError):  # the worker may be gone: nothing to tell
                    client.send({"type": "ack", "trial": trial, "index": index})
            return bool(reply["stop"])


def _plain(value: Any) -> Any:
    """A number as a float (tensors and numpy scalars too, and a bool, as ``float()`` always
    took it here); anything else as itself or its repr, for the worker to name in its error."""
    if isinstance(value, str) or value is None:
        return value
    try:
        return float(value)
    except (TypeError, ValueError, RuntimeError):
        return repr(value)


def _plain_metrics(metrics: Any) -> Any:
    if not isinstance(metrics, dict):
        return repr(metrics) if metrics is not None else None
    return {str(k): _plain(v) for k, v in metrics.items()}


def _connect() -> ChannelClient | None:
    global _client
    if _client is None and active():
        _client = ChannelClient.connect(
            os.environ["CONVTUNE_CHANNEL"],
            token=os.environ.get("CONVTUNE_TOKEN", ""),
            hello={"rank": _rank(), "trial": os.environ.get("CONVTUNE_TRIAL")},
        )
        _install_excepthook()
    return _client


def _install_excepthook() -> None:
    """An uncaught error reaches the worker (first line and where) before the process dies."""
    previous = sys.excepthook

    def hook(kind: type[BaseException], exc: BaseException, tb: Any) -> None:
        if _client is not None:
            try:
                _client.send(
                    {
                        "type": "error",
                        "trial": os.environ.get("CONVTUNE_TRIAL"),
                        "rank": _rank(),
                        "error": describe_exception(exc.with_traceback(tb)),
                        "time": time.time(),
                    }
                )
            except OSError:
                pass
        previous(kind, exc, tb)

    sys.excepthook = hook


__all__ = ["active", "checkpoint_dir", "config", "recipe", "report"]
