"""Workloads: what a user brings (model, data, loss, evaluation); convtune owns the loop.

A workload is resolved from a built-in name (``charlm``, ``digits``), a ``package.module:factory``
or a ``path/to/file.py:factory``; the factory is called with ``workload_args`` in every rank.
A new built-in is one entry in ``BUILTIN_WORKLOADS``. :class:`Workload` documents the contract,
with an example.
"""

from __future__ import annotations

import importlib
import importlib.util
import sys
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path
from typing import Any, Protocol, runtime_checkable

import torch

from convtune.errors import WorkloadError


@runtime_checkable
class Workload(Protocol):
    """The contract a user's workload fulfils: model, data, loss and evaluation, no loop.

    convtune owns the loop because the loop's knobs (batch, accumulation, optimizer, schedule,
    clipping, precision, world size) are what it tunes. A spec names a factory returning one
    (``workload: mywork.py:make``, ``mypackage.module:make``); the factory is called with the
    spec's ``workload_args`` in every process that trains (each rank), so it must depend on
    nothing but its arguments. Load heavy data once, in the factory.

    - ``build_model()``: a fresh model for each trial; convtune seeds torch first, so every rank
      starts from the same weights, and moves it to the rank's device.
    - ``train_batches(micro_batch_size, rank, world_size, seed)``: an endless iterator of
      micro-batches of that size; each rank draws its own shard (seed with ``seed`` and
      ``rank``), so a trial is reproducible.
    - ``loss(model, batch)``: a scalar tensor, the mean over the micro-batch. convtune has
      already moved the batch's tensors to the model's device (a tensor, or tuples, lists and
      dicts of them, or a mapping with its own ``to`` such as a ``BatchEncoding``); move
      anything else here. ``model`` may be wrapped in DDP: call it, do not
      reach inside.
    - ``evaluate(model)``: metrics as plain floats, one of them the target's (``val_loss``,
      ``accuracy``, ...). It runs on rank 0 only, under ``torch.no_grad()`` in eval mode, at
      every ``eval_every``; its time is off the wall-clock cost. Move held-out data to the
      model's device here (on a GPU it is not the CPU).

    >>> import torch
    >>> from convtune.workloads import Workload
    >>> class Line:
    ...     def __init__(self, noise=0.1):
    ...         g = torch.Generator().manual_seed(0)
    ...         self.x = torch.randn(512, 1, generator=g)
    ...         self.y = 3 * self.x + noise * torch.randn(512, 1, generator=g)
    ...     def build_model(self):
    ...         return torch.nn.Linear(1, 1)
    ...     def train_batches(self, micro_batch_size, rank, world_size, seed):
    ...         g = torch.Generator().manual_seed(seed * 1_000_003 + rank)
    ...         while True:
    ...             i = torch.randint(0, len(self.x), (micro_batch_size,), generator=g)
    ...             yield self.x[i], self.y[i]
    ...     def loss(self, model, batch):
    ...         x, y = batch
    ...         return torch.nn.functional.mse_loss(model(x), y)
    ...     def evaluate(self, model):
    ...         device = next(model.parameters()).device
    ...         x, y = self.x.to(device), self.y.to(device)
    ...         return {"val_loss": torch.nn.functional.mse_loss(model(x), y).item()}
    >>> isinstance(Line(), Workload)
    True

    Optionally a workload (class or instance) declares ``metrics = {"accuracy": (0.0, 1.0)}``:
    the names ``evaluate`` returns and the range of each. ``study create`` then refuses a target
    on a metric it does not produce, or one no value in its range can reach, without building
    the workload; undeclared, one evaluation of an untrained model tells the names.

    With ``def make(**args): return Line(**args)`` in ``line.py``, a spec says
    ``workload: line.py:make`` and ``target: "val_loss<=0.02"``.
    """

    def build_model(self) -> torch.nn.Module:
        """A fresh model for one trial (torch is seeded before the call)."""
        ...

    def train_batches(self, micro_batch_size: int, rank: int, world_size: int, seed: int) -> Iterator[Any]:
        """An endless iterator of this rank's micro-batches, seeded by ``seed`` and ``rank``."""
        ...

    def loss(self, model: torch.nn.Module, batch: Any) -> torch.Tensor:
        """The scalar training loss of one micro-batch (mean over it)."""
        ...

    def evaluate(self, model: torch.nn.Module) -> dict[str, float]:
        """Metrics on held-out data, the target's among them; rank 0 only, without gradients."""
        ...


BUILTIN_WORKLOADS: dict[str, str] = {
    "charlm": "convtune.workloads.charlm:CharLM",
    "digits": "convtune.workloads.digits:Digits",
}


def resolve_factory(ref: str, *, base_dir: Path | None = None) -> Callable[..., Any]:
    """Find the factory named by ``ref`` without calling it."""
    ref = BUILTIN_WORKLOADS.get(ref, ref)
    if ":" not in ref:
        raise WorkloadError(
            f"unknown workload {ref!r}",
            where="workload",
            fix=f"use a built-in ({', '.join(BUILTIN_WORKLOADS)}), package.module:factory or file.py:factory",
        )
    target, _, attr = ref.rpartition(":")
    if target.endswith(".py"):
        path = Path(target)
        if not path.is_absolute() and base_dir is not None:
            path = base_dir / path
        if not path.is_file():
            raise WorkloadError(f"file {str(path)!r} does not exist", where="workload", fix="check the path")
        module_name = f"convtune_user_workload_{abs(hash(str(path.resolve())))}"
        module = sys.modules.get(module_name)
        if module is None:
            spec = importlib.util.spec_from_file_location(module_name, path)
            assert spec is not None and spec.loader is not None
            module = importlib.util.module_from_spec(spec)
            sys.modules[module_name] = module
            try:
                spec.loader.exec_module(module)
            except Exception as exc:
                del sys.modules[module_name]
                raise WorkloadError(
                    f"importing {path} raised {type(exc).__name__}: {exc}", where="workload"
                ) from exc
    else:
        try:
            module = importlib.import_module(target)
        except ImportError as exc:
            raise WorkloadError(
                f"cannot import {target!r}: {exc}", where="workload", fix="check the module path"
            ) from None
    factory = getattr(module, attr, None)
    if factory is None or not callable(factory):
        raise WorkloadError(
            f"{target!r} has no callable {attr!r}", where="workload", fix="check the factory name"
        )
    return factory


def build_workload(
    ref: str, args: Mapping[str, Any] | None = None, *, base_dir: Path | None = None
) -> Workload:
    """Resolve ``ref`` and call its factory with ``args``; errors name the workload and the cause."""
    factory = resolve_factory(ref, base_dir=base_dir)
    try:
        workload = factory(**dict(args or {}))
    except TypeError as exc:
        raise WorkloadError(
            f"{ref}: bad workload_args: {exc}",
            where="workload_args",
            fix="check the factory's arguments",
        ) from None
    except Exception as exc:
        raise WorkloadError(f"{ref} raised {type(exc).__name__}: {exc}", where="workload") from exc
    missing = [
        m
        for m in ("build_model", "train_batches", "loss", "evaluate")
        if not callable(getattr(workload, m, None))
    ]
    if missing:
        raise WorkloadError(
            f"{ref} returned an object without {', '.join(missing)}",
            where="workload",
            fix="implement the Workload protocol",
        )
    return workload


def checked_metrics(
    returned: Any,
    *,
    source: str = "evaluate() returned",
    where: str = "workload.evaluate",
    verb: str = "return",
) -> dict[str, float]:
    """What ``evaluate()`` returned, as ``{name: float}``, or a :class:`WorkloadError` saying why not.

    A workload bug (a string, None, a tensor of many values) is the user's to fix once, not a
    failed trial and a traceback for every trial of the study. ``source`` (what gave them, with its verb) and
    ``where`` name a script's ``session.report`` in the error instead of ``evaluate()``, and
    ``verb`` its fix ("report plain numbers").
    """
    if not isinstance(returned, Mapping):
        raise WorkloadError(
            f"{source} {type(returned).__name__}, not a dict of metrics",
            where=where,
            fix=f"{verb} e.g. {{'val_loss': 1.23}}",
        )
    metrics: dict[str, float] = {}
    for name, value in returned.items():
        try:
            if isinstance(value, bool | str | bytes) or value is None:
                raise TypeError
            metrics[str(name)] = float(value)
        except (TypeError, ValueError, RuntimeError):
            raise WorkloadError(
                f"{source} {value!r} for {name!r}, not a number",
                where=where,
                fix=f"{verb} plain numbers (e.g. tensor.item())",
            ) from None
    return metrics
