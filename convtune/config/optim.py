"""Optimizer registry: one entry per optimizer, with its conditional parameters and defaults.

A new optimizer is one :func:`register_optimizer` call: the search space, the Recipe and every
export format read this registry, so nothing else needs an edit.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

import torch

ParamGroups = list[dict[str, Any]]


@dataclass(frozen=True)
class OptimizerEntry:
    """How to build one optimizer from a learning rate and its named parameters.

    ``build(groups, lr, **params)`` gets parameter groups in which no-decay parameters already
    carry ``weight_decay=0.0``; ``defaults`` names every conditional parameter it accepts.
    ``hf_optim`` is the Hugging Face ``TrainingArguments.optim`` value, where one exists.
    """

    name: str
    build: Callable[..., torch.optim.Optimizer]
    defaults: Mapping[str, Any] = field(default_factory=dict)
    hf_optim: str | None = None
    needs: str = "torch"


OPTIMIZERS: dict[str, OptimizerEntry] = {}


def register_optimizer(entry: OptimizerEntry) -> OptimizerEntry:
    """Add (or replace) the optimizer ``entry.name``; returns the entry.

    From then on a search space may list it under ``optimizer: {choices: [...]}`` with its own
    conditional parameters (``<name>.<param>``, any of ``defaults``' keys, ``peak_lr`` too), and
    ``Recipe.optimizer`` builds it. Register at import time of a module every process imports —
    the workload's own module is the natural place, since every rank and worker imports it.
    ``yaml``/``json`` exports and ``convtune.load_recipe`` rebuild it wherever it is registered;
    ``hf`` uses ``hf_optim`` (a ``TrainingArguments.optim`` value) or notes that the Trainer has
    no equivalent; the standalone ``python`` export builds only the built-ins.

    >>> import torch
    >>> from convtune.config.optim import OPTIMIZERS, OptimizerEntry, register_optimizer
    >>> from convtune.config.recipe import Recipe
    >>> def adagrad(groups, lr, **p):
    ...     return torch.optim.Adagrad(groups, lr=lr, lr_decay=p["lr_decay"])
    >>> _ = register_optimizer(OptimizerEntry("adagrad", adagrad, {"lr_decay": 0.0}, hf_optim="adagrad"))
    >>> recipe = Recipe(peak_lr=0.01, horizon_samples=256, micro_batch_size=8, optimizer="adagrad")
    >>> recipe.optimizer_params
    {'lr_decay': 0.0}
    >>> type(recipe.optimizer(torch.nn.Linear(2, 1))).__name__
    'Adagrad'
    >>> del OPTIMIZERS["adagrad"]
    """
    OPTIMIZERS[entry.name] = entry
    return entry


def _betas(params: dict[str, Any]) -> tuple[float, float]:
    return (float(params.pop("beta1")), float(params.pop("beta2")))


def _adamw(groups: ParamGroups, lr: float, **p: Any) -> torch.optim.Optimizer:
    betas = _betas(p)
    return torch.optim.AdamW(groups, lr=lr, betas=betas, eps=p["eps"], weight_decay=p["weight_decay"])


def _sgd(groups: ParamGroups, lr: float, **p: Any) -> torch.optim.Optimizer:
    return torch.optim.SGD(
        groups,
        lr=lr,
        momentum=p["momentum"],
        nesterov=bool(p["nesterov"]) and p["momentum"] > 0,
        weight_decay=p["weight_decay"],
    )


def _lamb(groups: ParamGroups, lr: float, **p: Any) -> torch.optim.Optimizer:
    from pytorch_optimizer import Lamb

    betas = _betas(p)
    # max_grad_norm=0 disables Lamb's own global-norm clipping: clipping is convtune's knob.
    return Lamb(groups, lr=lr, betas=betas, eps=p["eps"], weight_decay=p["weight_decay"], max_grad_norm=0.0)


def _lars(groups: ParamGroups, lr: float, **p: Any) -> torch.optim.Optimizer:
    from pytorch_optimizer import LARS

    return LARS(
        groups,
        lr=lr,
        momentum=p["momentum"],
        trust_coefficient=p["trust_coefficient"],
        weight_decay=p["weight_decay"],
        nesterov=bool(p["nesterov"]),
    )


def _lion(groups: ParamGroups, lr: float, **p: Any) -> torch.optim.Optimizer:
    from pytorch_optimizer import Lion

    betas = _betas(p)
    return Lion(groups, lr=lr, betas=betas, weight_decay=p["weight_decay"])


register_optimizer(
    OptimizerEntry(
        "adamw",
        _adamw,
        {"weight_decay": 0.01, "beta1": 0.9, "beta2": 0.999, "eps": 1e-8},
        hf_optim="adamw_torch",
    )
)
register_optimizer(
    OptimizerEntry("sgd", _sgd, {"momentum": 0.9, "nesterov": True, "weight_decay": 0.0}, hf_optim="sgd")
)
register_optimizer(
    OptimizerEntry(
        "lamb",
        _lamb,
        {"weight_decay": 0.01, "beta1": 0.9, "beta2": 0.999, "eps": 1e-6},
        needs="pytorch_optimizer",
    )
)
register_optimizer(
    OptimizerEntry(
        "lars",
        _lars,
        {"momentum": 0.9, "trust_coefficient": 0.001, "weight_decay": 0.0, "nesterov": False},
        needs="pytorch_optimizer",
    )
)
register_optimizer(
    OptimizerEntry(
        "lion",
        _lion,
        {"weight_decay": 0.0, "beta1": 0.9, "beta2": 0.99},
        needs="pytorch_optimizer",
    )
)


_NO_DECAY_MODULES = (
    torch.nn.Embedding,
    torch.nn.EmbeddingBag,
    torch.nn.LayerNorm,
    torch.nn.GroupNorm,
    torch.nn.modules.batchnorm._BatchNorm,
)


def param_groups(model_or_params: torch.nn.Module | Iterable[Any], weight_decay: float) -> ParamGroups:
    """Split parameters into a decayed and a non-decayed group.

    Biases, norm weights and embeddings get no weight decay: decaying them hurts convergence and
    is what every reference recipe avoids. A module is inspected by type; plain tensors are split
    by dimension (vectors and scalars are biases or gains). Ready-made groups pass through.
    """
    if isinstance(model_or_params, torch.nn.Module):
        no_decay_ids: set[int] = set()
        for module in model_or_params.modules():
            if isinstance(module, _NO_DECAY_MODULES):
                no_decay_ids.update(id(p) for p in module.parameters(recurse=False))
        params = [p for p in model_or_params.parameters() if p.requires_grad]
    else:
        params = list(model_or_params)
        if params and isinstance(params[0], dict):
            return [dict(group) for group in params]
        no_decay_ids = set()
    decay = [p for p in params if p.ndim >= 2 and id(p) not in no_decay_ids]
    no_decay = [p for p in params if p.ndim < 2 or id(p) in no_decay_ids]
    groups: ParamGroups = []
    if decay:
        groups.append({"params": decay, "weight_decay": weight_decay})
    if no_decay:
        groups.append({"params": no_decay, "weight_decay": 0.0})
    return groups
