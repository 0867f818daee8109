"""Search spaces: sampling the shipped spaces, YAML round trips of the recipes they give, and
every validation error a user can hit while writing a space."""

from __future__ import annotations

from pathlib import Path

import optuna
import pytest
import torch
import yaml

from convtune.config.recipe import Recipe, load_recipe
from convtune.config.space import SearchSpace, load_space
from convtune.errors import ConfigError

SPACES_DIR = Path(__file__).resolve().parents[2] / "search_spaces"
SHIPPED = ("default", "transformer", "large_batch")
N_RECIPES = 200
CONDITIONAL_PARENTS = ("schedule", "optimizer")

optuna.logging.set_verbosity(optuna.logging.WARNING)


def _sample(space: SearchSpace, n: int, seed: int = 0) -> list[tuple[dict, Recipe]]:
    """``n`` (trial params, recipe) pairs from RandomSampler through ask/tell."""
    study = optuna.create_study(sampler=optuna.samplers.RandomSampler(seed=seed))
    out = []
    for _ in range(n):
        trial = study.ask()
        recipe = space.recipe(trial)
        study.tell(trial, 0.0)
        out.append((dict(trial.params), recipe))
    return out


@pytest.fixture(scope="module", params=SHIPPED)
def sampled(request):
    path = SPACES_DIR / f"{request.param}.yaml"
    raw = yaml.safe_load(path.read_text())
    return request.param, raw, _sample(load_space(path), N_RECIPES)


def _searched(spec) -> bool:
    return isinstance(spec, dict) and ("choices" in spec or "low" in spec)


def test_conditional_params_exist_only_when_their_choice_is_active(sampled):
    name, raw, pairs = sampled
    seen: dict[str, set] = {parent: set() for parent in CONDITIONAL_PARENTS}
    for params, recipe in pairs:
        for parent in CONDITIONAL_PARENTS:
            spec = raw.get(parent)
            if spec is None:
                continue
            chosen = params[parent] if _searched(spec) else spec
            seen[parent].add(chosen)
            children = spec.get(chosen, {}) if isinstance(spec, dict) else {}
            # Written independently of SearchSpace: what the YAML says must be in trial.params.
            expected = {f"{chosen}.{k}" for k, v in children.items() if _searched(v)}
            prefixes = {c for c in spec.get("choices", [])} if isinstance(spec, dict) else set()
            present = {k for k in params if k.split(".", 1)[0] in prefixes and "." in k}
            assert present == expected, (name, parent, chosen, params)
            # The recipe carries the active choice's parameters (fixed ones too) by plain name.
            recipe_params = recipe.schedule_params if parent == "schedule" else recipe.optimizer_params
            for key, value in children.items():
                want = params[f"{chosen}.{key}"] if _searched(value) else value
                # An optimizer's own peak_lr is the recipe's LR, not an optimizer kwarg.
                got = recipe.peak_lr if key == "peak_lr" else recipe_params[key]
                assert got == want, (name, parent, key)
        effective = recipe.micro_batch_size * recipe.grad_accum_steps * recipe.world_size
        assert recipe.effective_batch_size == effective
    # The sample must actually exercise every choice, or the checks above prove little.
    for parent in CONDITIONAL_PARENTS:
        spec = raw[parent]
        assert seen[parent] == set(spec["choices"]), (name, parent, seen[parent])


def test_sampled_recipes_round_trip_through_yaml_with_identical_lr(sampled, tmp_path):
    """Each recipe → yaml.safe_dump(to_dict()) → file → load_recipe is an equal recipe, and the
    rebuilt optimizer and scheduler give the same LR at *every* step up to total_steps.

    Both schedulers drive a one-element dummy parameter and the optimizer is stepped once (to
    satisfy torch's step-order check): the LR depends only on the scheduler, and skipping
    600k optimizer steps keeps the three spaces (≈680k steps in all) to a few seconds each.
    """
    name, _, pairs = sampled
    total = 0
    for index, (_, recipe) in enumerate(pairs):
        path = tmp_path / f"{name}-{index}.yaml"
        path.write_text(yaml.safe_dump(recipe.to_dict(), sort_keys=False))
        loaded = load_recipe(path)
        assert loaded == recipe
        assert loaded.to_dict() == recipe.to_dict()

        opts, scheds = [], []
        for r in (recipe, loaded):
            opt = r.optimizer([torch.nn.Parameter(torch.zeros(1))])
            opts.append(opt)
            scheds.append(r.scheduler(opt))
            opt.step()
        assert type(opts[0]) is type(opts[1])
        assert opts[0].defaults == opts[1].defaults
        (g0,), (g1,) = opts[0].param_groups, opts[1].param_groups
        for step in range(recipe.total_steps):
            assert g0["lr"] == g1["lr"], (name, index, step)
            if step + 1 < recipe.total_steps:
                scheds[0].step()
                scheds[1].step()
        total += recipe.total_steps
    assert total > N_RECIPES  # the comparison covered real schedules, not one step each


@pytest.mark.parametrize("name", SHIPPED)
def test_params_from_recipe_enqueues_the_same_recipe(name):
    space = load_space(SPACES_DIR / f"{name}.yaml")
    for params, recipe in _sample(space, 40, seed=7):
        study = optuna.create_study(sampler=optuna.samplers.RandomSampler(seed=123))
        study.enqueue_trial(space.params_from_recipe(recipe))
        trial = study.ask()
        assert space.recipe(trial) == recipe
        assert trial.params == params


def test_global_batch_size_derives_accumulation():
    space = SearchSpace.from_dict(
        {
            "peak_lr": 1e-3,
            "horizon_samples": 65536,
            "micro_batch_size": {"choices": [32, 64]},
            "global_batch_size": {"choices": [256, 512]},
        }
    )
    seen = set()
    for params, recipe in _sample(space, 30):
        assert recipe.grad_accum_steps == params["global_batch_size"] // params["micro_batch_size"]
        assert recipe.effective_batch_size == params["global_batch_size"]
        seen.add(recipe.grad_accum_steps)
    assert seen == {4, 8, 16}
    direct = Recipe.from_dict(
        {
            "peak_lr": 1e-3,
            "horizon_samples": 1000,
            "micro_batch_size": 16,
            "world_size": 2,
            "global_batch_size": 128,
        }
    )
    assert direct.grad_accum_steps == 4


def test_global_batch_size_that_does_not_divide_is_an_error():
    with pytest.raises(ConfigError, match="global_batch_size") as err:
        Recipe.from_dict(
            {"peak_lr": 1e-3, "horizon_samples": 1000, "micro_batch_size": 48, "global_batch_size": 100}
        )
    assert "48" in str(err.value)


# ---- validation errors: each names the file and the field ---------------------------------

BASE = "peak_lr: 1.0e-3\nhorizon_samples: 20000\nmicro_batch_size: 32\n"

BAD_SPACES = {
    "malformed_yaml": (BASE + "schedule: {choices: [cosine, linear\n", "malformed YAML"),
    "unknown_key": (BASE + "peak_lrr: 1.0e-3\n", "peak_lrr"),
    "unknown_key_in_range": (
        "peak_lr: {low: 1.0e-4, high: 1.0e-2, lgo: true}\nhorizon_samples: 1000\nmicro_batch_size: 8\n",
        "peak_lr",
    ),
    "low_above_high": (
        "peak_lr: {low: 1.0e-2, high: 1.0e-4}\nhorizon_samples: 1000\nmicro_batch_size: 8\n",
        "peak_lr",
    ),
    "log_with_zero_low": (BASE + "warmup_steps: {low: 0, high: 100, log: true}\n", "warmup_steps"),
    "log_with_negative_low": (
        "peak_lr: {low: -1.0, high: 1.0e-2, log: true}\nhorizon_samples: 1000\nmicro_batch_size: 8\n",
        "peak_lr",
    ),
    "unknown_optimizer": (BASE + "optimizer: {choices: [adamw, adamax9]}\n", "adamax9"),
    "unknown_fixed_optimizer": (BASE + "optimizer: adamax9\n", "adamax9"),
    "unknown_schedule": (BASE + "schedule: {choices: [cosine, warmup_cosine]}\n", "warmup_cosine"),
    "unknown_precision": (BASE + "precision: {choices: [fp32, fp8]}\n", "fp8"),
    "unknown_fixed_precision": (BASE + "precision: fp8\n", "fp8"),
    "conditional_under_unlisted_choice": (
        BASE + "optimizer:\n  choices: [adamw]\n  sgd: {momentum: 0.9}\n",
        "optimizer.sgd",
    ),
    "conditional_param_optimizer_does_not_take": (
        BASE + "optimizer:\n  choices: [adamw, sgd]\n  adamw: {momentum: {low: 0.8, high: 0.99}}\n",
        "adamw.momentum",
    ),
    "conditional_param_schedule_does_not_take": (
        BASE + "schedule:\n  choices: [cosine, onecycle]\n  onecycle: {half_period_steps: 100}\n",
        "onecycle.half_period_steps",
    ),
    "global_batch_not_divisible": (
        "peak_lr: 1.0e-3\nhorizon_samples: 20000\nmicro_batch_size: {choices: [32, 48]}\n"
        "global_batch_size: 256\n",
        "global_batch_size",
    ),
    "global_batch_with_accumulation": (
        BASE + "global_batch_size: 256\ngrad_accum_steps: 2\n",
        "grad_accum_steps",
    ),
    "bare_list": (BASE + "clip_norm: [0.5, 1.0]\n", "clip_norm"),
    "per_optimizer_lr_without_a_shared_one": (
        "horizon_samples: 20000\nmicro_batch_size: 32\n"
        "optimizer:\n  choices: [adamw, lion]\n  lion: {peak_lr: {low: 1.0e-5, high: 1.0e-3, log: true}}\n",
        "optimizer.adamw",
    ),
    "per_optimizer_lr_shadowing_the_shared_one": (
        BASE
        + "optimizer:\n  choices: [adamw, lion]\n  adamw: {peak_lr: 3.0e-3}\n  lion: {peak_lr: 3.0e-4}\n",
        "top-level peak_lr is unused",
    ),
    "per_optimizer_lr_not_a_range": (
        BASE + "optimizer:\n  choices: [adamw, lion]\n  lion: {peak_lr: {lo: 1.0e-5, high: 1.0e-3}}\n",
        "lion.peak_lr",
    ),
    "schedule_with_its_own_lr": (
        BASE + "schedule:\n  choices: [cosine, constant]\n  cosine: {peak_lr: 1.0e-3}\n",
        "cosine.peak_lr",
    ),
}


@pytest.mark.parametrize("case", sorted(BAD_SPACES))
def test_bad_space_raises_config_error_naming_file_and_field(case, tmp_path):
    text, field = BAD_SPACES[case]
    path = tmp_path / f"{case}.yaml"
    path.write_text(text)
    with pytest.raises(ConfigError) as err:
        load_space(path)
    message = str(err.value)
    assert str(path) in message
    assert field in message
    assert "\n" not in message  # one line


def test_valid_space_loads_and_fixed_params_are_not_searched():
    space = SearchSpace.from_dict(yaml.safe_load(BASE + "precision: bf16\nschedule: cosine\n"))
    assert space.distributions() == {}
    ((params, recipe),) = _sample(space, 1)
    assert params == {}
    assert recipe.precision == "bf16" and recipe.peak_lr == 1e-3


def test_ints_stay_ints_and_logs_are_log():
    space = SearchSpace.from_dict(
        yaml.safe_load(
            BASE.replace("peak_lr: 1.0e-3", "peak_lr: {low: 1.0e-4, high: 1.0e-2, log: true}")
            + "warmup_steps: {low: 0, high: 50}\n"
        )
    )
    dists = space.distributions()
    assert isinstance(dists["warmup_steps"], optuna.distributions.IntDistribution)
    assert isinstance(dists["peak_lr"], optuna.distributions.FloatDistribution) and dists["peak_lr"].log
    for _params, recipe in _sample(space, 20):
        assert isinstance(recipe.warmup_steps, int) and 0 <= recipe.warmup_steps <= 50
        assert 1e-4 <= recipe.peak_lr <= 1e-2


PER_OPTIMIZER = """
peak_lr: {low: 1.0e-4, high: 1.0e-2, log: true}   # AdamW's: it has no range of its own
horizon_samples: 20000
micro_batch_size: 32
optimizer:
  choices: [adamw, lion, sgd]
  lion: {peak_lr: {low: 1.0e-5, high: 1.0e-3, log: true}, weight_decay: {low: 0.0, high: 0.1}}
  sgd: {peak_lr: 0.1, momentum: 0.9}
"""


def test_an_optimizer_with_its_own_lr_range_is_searched_there():
    space = SearchSpace.from_dict(yaml.safe_load(PER_OPTIMIZER))
    dists = space.distributions()
    assert (dists["lion.peak_lr"].low, dists["lion.peak_lr"].high) == (1e-5, 1e-3)
    assert (dists["peak_lr"].low, dists["peak_lr"].high) == (1e-4, 1e-2)
    seen = set()
    for params, recipe in _sample(space, 60):
        seen.add(recipe.optimizer_name)
        assert "peak_lr" not in recipe.optimizer_params  # a recipe field, not an optimizer kwarg
        if recipe.optimizer_name == "lion":
            assert set(params) == {"optimizer", "lion.peak_lr", "lion.weight_decay"}
            assert recipe.peak_lr == params["lion.peak_lr"] and 1e-5 <= recipe.peak_lr <= 1e-3
        elif recipe.optimizer_name == "sgd":
            assert set(params) == {"optimizer"} and recipe.peak_lr == 0.1
            assert recipe.optimizer_params["momentum"] == 0.9
        else:  # the shared range, under its usual name
            assert set(params) == {"optimizer", "peak_lr"} and 1e-4 <= recipe.peak_lr <= 1e-2
        # enqueueing the recipe reproduces the trial
        study = optuna.create_study()
        study.enqueue_trial(space.params_from_recipe(recipe))
        trial = study.ask()
        assert space.recipe(trial) == recipe and trial.params == params
    assert seen == {"adamw", "lion", "sgd"}


def test_every_optimizer_may_have_its_own_lr_range():
    raw = yaml.safe_load(PER_OPTIMIZER)
    del raw["peak_lr"]
    raw["optimizer"]["adamw"] = {"peak_lr": {"low": 1e-3, "high": 3e-3, "log": True}}
    space = SearchSpace.from_dict(raw)
    assert "peak_lr" not in space.distributions()
    for params, recipe in _sample(space, 30):
        if recipe.optimizer_name == "adamw":
            assert set(params) == {"optimizer", "adamw.peak_lr"} and 1e-3 <= recipe.peak_lr <= 3e-3
