"""The optimizer registry (``convtune.config.optim``): entries, weight-decay groups, registering one."""

from __future__ import annotations

import importlib.util

import pytest
import torch
from torch import nn

from convtune.config.optim import OPTIMIZERS, OptimizerEntry, param_groups, register_optimizer
from convtune.config.recipe import Recipe


class _Net(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.embed = nn.Embedding(10, 4)
        self.linear = nn.Linear(4, 4)
        self.norm = nn.LayerNorm(4)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.norm(self.linear(self.embed(x)))


def test_only_matrices_outside_norms_and_embeddings_are_decayed() -> None:
    net = _Net()
    decay, no_decay = param_groups(net, 0.1)
    assert decay["weight_decay"] == 0.1 and no_decay["weight_decay"] == 0.0
    assert {id(p) for p in decay["params"]} == {id(net.linear.weight)}
    expected = {id(net.embed.weight), id(net.linear.bias), id(net.norm.weight), id(net.norm.bias)}
    assert {id(p) for p in no_decay["params"]} == expected


def test_plain_tensors_split_by_dimension_and_ready_groups_pass_through() -> None:
    matrix, vector = torch.zeros(3, 3, requires_grad=True), torch.zeros(3, requires_grad=True)
    groups = param_groups([matrix, vector], 0.5)
    assert [len(g["params"]) for g in groups] == [1, 1]
    assert groups[0]["params"][0] is matrix and groups[1]["params"][0] is vector
    ready = [{"params": [matrix], "lr": 0.1}]
    assert param_groups(ready, 0.5) == ready


@pytest.mark.parametrize("name", sorted(OPTIMIZERS))
def test_every_entry_builds_with_its_defaults(name: str) -> None:
    entry = OPTIMIZERS[name]
    if entry.needs != "torch" and importlib.util.find_spec(entry.needs) is None:
        pytest.skip(
            f"{entry.needs}, which the {name!r} optimizer needs, is not installed (pip install {entry.needs})"
        )
    net = _Net()
    optimizer = entry.build(
        param_groups(net, float(entry.defaults.get("weight_decay", 0.0))), 0.01, **dict(entry.defaults)
    )
    assert isinstance(optimizer, torch.optim.Optimizer)
    assert all(group["lr"] == 0.01 for group in optimizer.param_groups)
    net(torch.tensor([1, 2])).sum().backward()
    optimizer.step()  # the defaults are a complete set of the entry's parameters


def test_a_registered_optimizer_is_what_a_recipe_builds() -> None:
    def build(groups: list, lr: float, *, dampening: float) -> torch.optim.Optimizer:
        return torch.optim.SGD(groups, lr=lr, dampening=dampening)

    register_optimizer(OptimizerEntry("test_sgd_dampened", build, {"dampening": 0.25}))
    try:
        recipe = Recipe(peak_lr=0.05, horizon_samples=640, micro_batch_size=32, optimizer="test_sgd_dampened")
        optimizer = recipe.optimizer(nn.Linear(3, 2))
        assert isinstance(optimizer, torch.optim.SGD)
        assert optimizer.param_groups[0]["dampening"] == 0.25
    finally:
        OPTIMIZERS.pop("test_sgd_dampened")
