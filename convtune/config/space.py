"""Search spaces: YAML files whose values are fixed, ranges or choices, mapped onto Optuna.

A value is fixed (``precision: bf16``), a range (``{low, high, log}``; ints stay ints) or a choice
(``{choices: [...]}``). Parameters that belong to one choice sit under that choice's name and
exist only when it is picked; in Optuna they are named ``<choice>.<name>`` because one name
cannot carry two distributions, while the Recipe gets them as ``<parent>_params``. One recipe
field may also sit under an optimizer choice: its own ``peak_lr`` (the best LR is
optimizer-specific), which the Recipe gets as its ``peak_lr``.

Example:
    >>> space = SearchSpace.from_dict({"peak_lr": {"low": 1e-4, "high": 1e-2, "log": True},
    ...                                "micro_batch_size": 32, "horizon_samples": 50_000})
    >>> study.optimize(lambda t: train(Recipe.from_dict(space.suggest(t))))   # doctest: +SKIP
"""

from __future__ import annotations

import itertools
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import optuna

from convtune.config.io import read_mapping
from convtune.config.optim import OPTIMIZERS
from convtune.config.recipe import Recipe
from convtune.config.schedules import SCHEDULES
from convtune.errors import ConfigError

# Parents whose choices carry conditional parameters, and the registry that names them.
_CONDITIONAL_REGISTRIES: dict[str, Mapping[str, Any]] = {
    "optimizer": OPTIMIZERS,
    "schedule": SCHEDULES,
}
_RANGE_KEYS = {"low", "high", "log", "step"}
_KNOWN_TOP_LEVEL = (set(Recipe.model_fields) - {"optimizer_name"}) | {
    "optimizer",
    "global_batch_size",
}
_KNOWN_TOP_LEVEL -= {"optimizer_params", "schedule_params"}
# Recipe fields an optimizer choice may set for itself. The best LR is optimizer-specific (the
# LR range test puts optimizers up to orders of magnitude apart; docs/benchmarks.md), so one
# shared range spends many of each optimizer's draws where it is too slow or diverges.
_PER_OPTIMIZER = frozenset({"peak_lr"})


@dataclass(frozen=True)
class Param:
    """One parameter: fixed ``value``, a ``low``/``high`` range, or ``choices`` with children."""

    name: str
    optuna_name: str
    value: Any = None
    low: float | int | None = None
    high: float | int | None = None
    log: bool = False
    step: float | int | None = None
    choices: tuple[Any, ...] | None = None
    children: dict[Any, tuple[Param, ...]] = field(default_factory=dict)

    @property
    def is_fixed(self) -> bool:
        return self.low is None and self.choices is None

    @property
    def is_int(self) -> bool:
        return isinstance(self.low, int) and isinstance(self.high, int) and not isinstance(self.step, float)

    def distribution(self) -> optuna.distributions.BaseDistribution:
        if self.choices is not None:
            return optuna.distributions.CategoricalDistribution(self.choices)
        if self.is_int:
            return optuna.distributions.IntDistribution(
                self.low, self.high, log=self.log, step=self.step or 1
            )
        return optuna.distributions.FloatDistribution(self.low, self.high, log=self.log, step=self.step)

    def suggest(self, trial: optuna.Trial) -> Any:
        if self.is_fixed:
            return self.value
        if self.choices is not None:
            return trial.suggest_categorical(self.optuna_name, self.choices)
        if self.is_int:
            return trial.suggest_int(self.optuna_name, self.low, self.high, log=self.log, step=self.step or 1)
        return trial.suggest_float(self.optuna_name, self.low, self.high, log=self.log, step=self.step)

    def possible_values(self) -> list[Any]:
        if self.choices is not None:
            return list(self.choices)
        if self.is_fixed:
            return [self.value]
        return [self.low, self.high]


class SearchSpace:
    """A validated search space; ``suggest(trial)`` returns the Recipe's dict for one trial."""

    def __init__(self, params: tuple[Param, ...], raw: Mapping[str, Any], where: str = "space"):
        self.params = params
        self.raw = dict(raw)
        self.where = where

    # ---- loading ---------------------------------------------------------------------------

    @classmethod
    def from_yaml(cls, path: str | Path) -> SearchSpace:
        path = Path(path)
        return cls.from_dict(read_mapping(path), where=str(path))

    @classmethod
    def from_dict(cls, raw: Mapping[str, Any], *, where: str = "space") -> SearchSpace:
        if not isinstance(raw, Mapping):
            raise ConfigError("a search space must be a mapping of parameter names", where=where)
        params = []
        for name, spec in raw.items():
            if name not in _KNOWN_TOP_LEVEL:
                raise ConfigError(
                    f"unknown parameter {name!r}",
                    where=f"{where}: {name}",
                    fix=f"use one of {', '.join(sorted(_KNOWN_TOP_LEVEL))}",
                )
            params.append(_parse_param(name, name, spec, where, parent=None))
        space = cls(_per_optimizer(params, where), raw, where)
        space._check_combinations()
        return space

    def with_fixed(self, **values: Any) -> SearchSpace:
        """A copy in which the named parameters are fixed (e.g. ``world_size`` from the CLI)."""
        raw = dict(self.raw)
        raw.update(values)
        return SearchSpace.from_dict(raw, where=self.where)

    # ---- use -------------------------------------------------------------------------------

    def suggest(self, trial: optuna.Trial) -> dict[str, Any]:
        """Ask Optuna for every active parameter; return the Recipe's dict (plain names)."""
        recipe: dict[str, Any] = {}
        for param in self.params:
            value = param.suggest(trial)
            recipe[param.name] = value
            for child in param.children.get(value, ()):
                if child.name in _PER_OPTIMIZER:
                    recipe[child.name] = child.suggest(trial)
                else:
                    recipe.setdefault(f"{param.name}_params", {})[child.name] = child.suggest(trial)
        return recipe

    def recipe(self, trial: optuna.Trial) -> Recipe:
        return Recipe.from_dict(self.suggest(trial), where=self.where)

    def distributions(self) -> dict[str, optuna.distributions.BaseDistribution]:
        """Every searched parameter's Optuna distribution, conditional ones included."""
        out = {}
        for param in self.params:
            for p in (param, *itertools.chain.from_iterable(param.children.values())):
                if not p.is_fixed:
                    out[p.optuna_name] = p.distribution()
        return out

    def params_from_recipe(self, recipe: Recipe) -> dict[str, Any]:
        """Optuna parameters that reproduce ``recipe`` (for enqueueing a baseline or a prediction)."""
        data = recipe.to_dict()
        # A space may search the global batch, from which the recipe derived its accumulation.
        data.setdefault("global_batch_size", recipe.effective_batch_size)
        out: dict[str, Any] = {}
        for param in self.params:
            value = data.get(param.name)
            if not param.is_fixed:
                out[param.optuna_name] = value
            for child in param.children.get(value, ()):
                if child.is_fixed:
                    continue
                own = child.name in _PER_OPTIMIZER
                out[child.optuna_name] = data[child.name] if own else data[f"{param.name}_params"][child.name]
        return out

    def _check_combinations(self) -> None:
        """Catch a global batch that cannot divide for some micro-batch/world-size choice now."""
        by_name = {p.name: p for p in self.params}
        if "global_batch_size" not in by_name:
            return
        if "grad_accum_steps" in by_name:
            raise ConfigError(
                "give global_batch_size or grad_accum_steps, not both",
                where=f"{self.where}: grad_accum_steps",
                fix="accumulation is derived from the global batch",
            )
        for name in ("global_batch_size", "micro_batch_size", "world_size"):
            param = by_name.get(name)
            if param is not None and param.low is not None:
                raise ConfigError(
                    "must be fixed or a list of choices when global_batch_size is used",
                    where=f"{self.where}: {name}",
                    fix="write {choices: [...]}",
                )
        combos = itertools.product(
            by_name["global_batch_size"].possible_values(),
            by_name["micro_batch_size"].possible_values() if "micro_batch_size" in by_name else [1],
            by_name["world_size"].possible_values() if "world_size" in by_name else [1],
        )
        for global_batch, micro, world in combos:
            if int(global_batch) % (int(micro) * int(world)):
                raise ConfigError(
                    f"global_batch_size {global_batch} is not a multiple of micro_batch_size {micro}"
                    f" × world_size {world}",
                    where=f"{self.where}: global_batch_size",
                    fix="choose sizes that divide",
                )


def _parse_param(name: str, optuna_name: str, spec: Any, where: str, parent: str | None) -> Param:
    at = f"{where}: {optuna_name}"
    if not isinstance(spec, Mapping):
        if isinstance(spec, list):
            raise ConfigError("a list is ambiguous", where=at, fix="write {choices: [...]} to search them")
        if parent is None:
            _check_choice_value(name, spec, at)
        return Param(name, optuna_name, value=spec)
    if "choices" in spec:
        choices = spec["choices"]
        if not isinstance(choices, list) or not choices:
            raise ConfigError("choices must be a non-empty list", where=at)
        for choice in choices:
            _check_choice_value(name, choice, at)
        children: dict[Any, tuple[Param, ...]] = {}
        for key, sub in spec.items():
            if key == "choices":
                continue
            if key not in choices:
                raise ConfigError(
                    f"{key!r} is not one of its choices {choices}",
                    where=f"{at}.{key}",
                    fix="put conditional parameters under a listed choice",
                )
            children[key] = _parse_children(name, key, sub, where)
        return Param(name, optuna_name, choices=tuple(choices), children=children)
    if "low" in spec or "high" in spec:
        unknown = sorted(set(spec) - _RANGE_KEYS)
        if unknown:
            raise ConfigError(
                f"unknown key {unknown[0]!r} in a range", where=at, fix="use low, high, log, step"
            )
        if "low" not in spec or "high" not in spec:
            raise ConfigError("a range needs both low and high", where=at)
        low, high = spec["low"], spec["high"]
        for bound in (low, high):
            if isinstance(bound, bool) or not isinstance(bound, int | float):
                raise ConfigError(f"range bound {bound!r} is not a number", where=at)
        if low > high:
            raise ConfigError(f"low ({low}) > high ({high})", where=at, fix="swap them")
        log = bool(spec.get("log", False))
        if log and low <= 0:
            raise ConfigError(f"log scale needs low > 0, got {low}", where=at, fix="raise low or drop log")
        step = spec.get("step")
        if log and step is not None:
            raise ConfigError("a log range cannot have a step", where=at)
        return Param(name, optuna_name, low=low, high=high, log=log, step=step)
    # A bare choice name with its conditional parameters: {adamw: {...}} as a fixed choice.
    if len(spec) == 1 and parent is None and name in _CONDITIONAL_REGISTRIES:
        ((choice, sub),) = spec.items()
        _check_choice_value(name, choice, at)
        return Param(
            name,
            optuna_name,
            choices=(choice,),
            children={choice: _parse_children(name, choice, sub, where)},
        )
    if parent is not None:
        return Param(name, optuna_name, value=dict(spec))
    raise ConfigError(
        "expected a value, {low, high[, log]} or {choices: [...]}",
        where=at,
        fix="see search_spaces/default.yaml",
    )


def _parse_children(parent: str, choice: Any, sub: Any, where: str) -> tuple[Param, ...]:
    at = f"{where}: {parent}.{choice}"
    registry = _CONDITIONAL_REGISTRIES.get(parent)
    if registry is None:
        raise ConfigError(f"{parent!r} has no conditional parameters", where=at)
    if not isinstance(sub, Mapping):
        raise ConfigError("conditional parameters must be a mapping", where=at)
    allowed = set(registry[choice].defaults) | (_PER_OPTIMIZER if parent == "optimizer" else set())
    children = []
    for key, spec in sub.items():
        if key not in allowed:
            raise ConfigError(
                f"{parent} {choice!r} has no parameter {key!r}",
                where=f"{at}.{key}",
                fix=f"use one of {', '.join(sorted(allowed)) or 'none'}",
            )
        # A recipe field (peak_lr) is parsed as at the top level: a value or a range, not kwargs.
        own = parent == "optimizer" and key in _PER_OPTIMIZER
        children.append(_parse_param(key, f"{choice}.{key}", spec, where, parent=None if own else parent))
    return tuple(children)


def _per_optimizer(params: list[Param], where: str) -> tuple[Param, ...]:
    """Where some optimizer choice has its own ``peak_lr``, every choice gets one.

    A choice without its own takes the top-level parameter under its usual Optuna name
    (``peak_lr``), so walkers of the space (suggest, the recommender's draws) only ever meet
    children, and a study that adds per-optimizer ranges keeps its other trials' names.
    """
    optimizer = next((p for p in params if p.name == "optimizer" and p.choices), None)
    if optimizer is None:
        return tuple(params)
    for knob in sorted(_PER_OPTIMIZER):
        own = {c for c, kids in optimizer.children.items() if any(k.name == knob for k in kids)}
        if not own:
            continue
        shared = next((p for p in params if p.name == knob), None)
        if shared is not None and own >= set(optimizer.choices or ()):
            # It would silently do nothing: a user who edits it expects the LRs to move.
            raise ConfigError(
                f"the top-level {knob} is unused: every optimizer choice has its own",
                where=f"{where}: {knob}",
                fix=f"remove the top-level {knob}, or drop the {knob} of the optimizer it is meant for",
            )
        children = dict(optimizer.children)
        for choice in optimizer.choices or ():
            if choice in own:
                continue
            if shared is None:
                raise ConfigError(
                    f"optimizer {choice!r} has no {knob} while others have their own",
                    where=f"{where}: optimizer.{choice}",
                    fix=f"give {choice} a {knob}, or add a top-level {knob} for the optimizers without one",
                )
            children[choice] = (*children.get(choice, ()), shared)
        with_own = replace(optimizer, children=children)
        params = [with_own if p is optimizer else p for p in params if p is not shared]
        optimizer = with_own
    return tuple(params)


def _check_choice_value(name: str, value: Any, at: str) -> None:
    registry = _CONDITIONAL_REGISTRIES.get(name)
    if registry is not None and value not in registry:
        raise ConfigError(
            f"unknown {name} {value!r}", where=at, fix=f"use one of {', '.join(sorted(registry))}"
        )
    if name == "precision" and value not in ("fp32", "bf16", "fp16"):
        raise ConfigError(f"unknown precision {value!r}", where=at, fix="use fp32, bf16 or fp16")


def load_space(path: str | Path) -> SearchSpace:
    """Read and validate a search space YAML file."""
    return SearchSpace.from_yaml(path)
