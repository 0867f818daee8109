"""The Recipe: what it builds for a training loop, and how it validates and reads back."""

from __future__ import annotations

import pytest
import torch
import yaml
from torch import nn

from convtune.config.recipe import Recipe, load_recipe
from convtune.errors import ConfigError

BASE = {"peak_lr": 1e-3, "horizon_samples": 6400, "micro_batch_size": 16}


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.embed = nn.Embedding(10, 4)
        self.linear = nn.Linear(4, 4)
        self.norm = nn.LayerNorm(4)
        self.bn = nn.BatchNorm1d(4)
        self.head = nn.Linear(4, 2, bias=False)


def _decay_of(opt: torch.optim.Optimizer) -> dict[int, float]:
    return {id(p): group["weight_decay"] for group in opt.param_groups for p in group["params"]}


@pytest.mark.parametrize("name", ["adamw", "sgd", "lamb", "lars", "lion"])
def test_module_biases_norms_and_embeddings_get_no_weight_decay(name):
    net = Net()
    recipe = Recipe(**BASE, optimizer=name, optimizer_params={"weight_decay": 0.05})
    decay = _decay_of(recipe.optimizer(net))
    no_decay = [net.embed.weight, net.linear.bias, net.norm.weight, net.norm.bias, net.bn.weight, net.bn.bias]
    for p in no_decay:
        assert decay[id(p)] == 0.0
    for p in (net.linear.weight, net.head.weight):
        assert decay[id(p)] == 0.05
    assert set(decay) == {id(p) for p in net.parameters()}  # every parameter, once


def test_frozen_parameters_are_left_out():
    net = Net()
    net.head.weight.requires_grad_(False)
    decay = _decay_of(Recipe(**BASE).optimizer(net))
    assert id(net.head.weight) not in decay and id(net.linear.weight) in decay


def test_plain_parameter_lists_and_ready_groups_are_accepted():
    matrix, vector = nn.Parameter(torch.randn(3, 3)), nn.Parameter(torch.zeros(3))
    recipe = Recipe(**BASE, optimizer_params={"weight_decay": 0.1})
    decay = _decay_of(recipe.optimizer([matrix, vector]))
    assert decay == {id(matrix): 0.1, id(vector): 0.0}
    decay = _decay_of(recipe.optimizer(iter([matrix, vector])))  # a generator, as .parameters() gives
    assert decay == {id(matrix): 0.1, id(vector): 0.0}
    groups = recipe.optimizer([{"params": [matrix], "weight_decay": 0.3}]).param_groups
    assert groups[0]["weight_decay"] == 0.3


@pytest.mark.parametrize(("name", "cls"), [("lamb", "Lamb"), ("lars", "LARS"), ("lion", "Lion")])
def test_large_batch_optimizers_come_from_pytorch_optimizer(name, cls):
    opt = Recipe(**BASE, optimizer=name).optimizer(Net())
    assert type(opt).__module__.startswith("pytorch_optimizer.")
    assert type(opt).__name__ == cls
    assert opt.param_groups[0]["lr"] == BASE["peak_lr"]


def test_optimizer_hyperparameters_reach_the_optimizer():
    opt = Recipe(**BASE, optimizer_params={"beta2": 0.95, "weight_decay": 0.02}).optimizer(Net())
    assert isinstance(opt, torch.optim.AdamW) and opt.defaults["betas"] == (0.9, 0.95)
    sgd = Recipe(**BASE, optimizer="sgd", optimizer_params={"momentum": 0.8}).optimizer(Net())
    assert sgd.defaults["momentum"] == 0.8 and sgd.defaults["nesterov"] is True


def test_derived_sizes():
    recipe = Recipe(**{**BASE, "horizon_samples": 10_000}, grad_accum_steps=4, world_size=2)
    assert recipe.effective_batch_size == 128
    assert recipe.total_steps == 79  # ceil(10000 / 128)
    assert len(recipe.lr_per_step) == 79


@pytest.mark.parametrize(
    ("patch", "field"),
    [
        ({"peak_lr": -1.0}, "peak_lr"),
        ({"optimizer": "adamax9"}, "adamax9"),
        ({"schedule": "warmup_cosine"}, "warmup_cosine"),
        ({"precision": "fp8"}, "precision"),
        ({"optimizer_params": {"momentum": 0.9}}, "momentum"),  # adamw takes no momentum
        ({"schedule": "cyclic", "schedule_params": {"mode": "sawtooth"}}, "sawtooth"),
        ({"lr": 0.1}, "lr"),
        ({"total_steps": 3}, "total_steps"),  # a derived key that disagrees with the sizes
    ],
)
def test_invalid_recipe_is_a_config_error_naming_the_field(patch, field):
    with pytest.raises(ConfigError) as err:
        Recipe.from_dict({**BASE, **patch}, where="best.yaml")
    assert "best.yaml" in str(err.value) and field in str(err.value)


def test_recipe_is_frozen():
    recipe = Recipe(**BASE)
    with pytest.raises(Exception, match="frozen"):
        recipe.peak_lr = 1.0  # type: ignore[misc]


@pytest.mark.parametrize("wrapped", [False, True])
def test_load_recipe_reads_plain_and_export_documents(tmp_path, wrapped):
    recipe = Recipe(**BASE, schedule="cyclic", optimizer="lars", clip_norm=1.0, precision="bf16")
    doc = {"recipe": recipe.to_dict(), "time_to_target": 12.5} if wrapped else recipe.to_dict()
    path = tmp_path / "best.yaml"
    path.write_text(yaml.safe_dump(doc))
    assert load_recipe(path) == recipe
    path_json = tmp_path / "best.json"
    import json

    path_json.write_text(json.dumps(doc))
    assert load_recipe(path_json) == recipe


def test_autocast_scaler_and_clip():
    fp16 = Recipe(**BASE, precision="fp16", clip_norm=0.5)
    assert fp16.grad_scaler("cpu").is_enabled()
    assert not Recipe(**BASE, precision="bf16").grad_scaler("cpu").is_enabled()
    with Recipe(**BASE, precision="bf16").autocast("cpu"):
        assert (torch.ones(2, 2) @ torch.ones(2, 2)).dtype == torch.bfloat16
    with Recipe(**BASE).autocast("cpu"):
        assert (torch.ones(2, 2) @ torch.ones(2, 2)).dtype == torch.float32
    weight = nn.Parameter(torch.zeros(4))
    weight.grad = torch.full((4,), 3.0)
    assert fp16.clip([weight]) == pytest.approx(6.0)
    assert weight.grad.norm().item() == pytest.approx(0.5, rel=1e-4)
    assert Recipe(**BASE).clip([weight]) is None
