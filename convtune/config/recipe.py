"""The Recipe: one trial's full, validated training configuration, and the objects it builds.

Trials, ``convtune.execution.session`` scripts, exports and ``load_recipe`` all go through this one class,
so the schedule a user runs after export is step-for-step the schedule that was measured.

Example:
    >>> recipe = Recipe(peak_lr=3e-3, horizon_samples=64_000, micro_batch_size=32)
    >>> recipe.total_steps
    2000
    >>> import torch
    >>> model = torch.nn.Linear(4, 2)
    >>> opt = recipe.optimizer(model)
    >>> sched = recipe.scheduler(opt)          # step once per optimizer step
"""

from __future__ import annotations

import contextlib
import math
from collections.abc import Iterable, Mapping
from functools import cached_property
from pathlib import Path
from typing import Any, Literal

import torch
from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from convtune.config.optim import OPTIMIZERS, param_groups
from convtune.config.schedules import SCHEDULES
from convtune.errors import ConfigError

Precision = Literal["fp32", "bf16", "fp16"]
_DTYPES = {"bf16": torch.bfloat16, "fp16": torch.float16}

# Keys a recipe file may carry for the reader's benefit; recomputed and checked on load.
DERIVED_KEYS = ("effective_batch_size", "total_steps")


def default_device_type(device_type: str | None = None) -> str:
    """``device_type`` when given, else ``cuda`` where torch sees a GPU, else ``cpu``: where
    trials, probes and a recipe's autocast and GradScaler run unless told otherwise."""
    return device_type or ("cuda" if torch.cuda.is_available() else "cpu")


def _fill(kind: str, name: str, registry: Mapping[str, Any], given: Mapping[str, Any]) -> dict[str, Any]:
    if name not in registry:
        raise ValueError(f"unknown {kind} {name!r}; choose one of {sorted(registry)}")
    defaults = dict(registry[name].defaults)
    unknown = sorted(set(given) - set(defaults))
    if unknown:
        raise ValueError(
            f"{kind} {name!r} has no parameter {unknown[0]!r}; it takes {sorted(defaults) or 'none'}"
        )
    defaults.update(given)
    return defaults


class Recipe(BaseModel):
    """A frozen training configuration. Build one directly, from a dict, or with load_recipe."""

    model_config = ConfigDict(frozen=True, extra="forbid", populate_by_name=True)

    peak_lr: float = Field(gt=0)
    warmup_steps: int = Field(default=0, ge=0)
    horizon_samples: int = Field(gt=0)
    schedule: str = "cosine"
    schedule_params: dict[str, Any] = Field(default_factory=dict)
    micro_batch_size: int = Field(gt=0)
    grad_accum_steps: int = Field(default=1, gt=0)
    world_size: int = Field(default=1, gt=0)
    optimizer_name: str = Field(default="adamw", alias="optimizer")
    optimizer_params: dict[str, Any] = Field(default_factory=dict)
    clip_norm: float | None = Field(default=None, gt=0)
    precision: Precision = "fp32"
    zero: bool = False
    bucket_cap_mb: float = Field(default=25.0, gt=0)
    gradient_as_bucket_view: bool = False

    @model_validator(mode="wrap")
    @classmethod
    def _normalise(cls, data: Any, handler: Any) -> Recipe:
        """Derive accumulation from a global batch, fill conditional defaults, check derived keys."""
        if not isinstance(data, Mapping):
            return handler(data)
        data = dict(data)
        derived = {k: data.pop(k) for k in DERIVED_KEYS if k in data}
        global_batch = data.pop("global_batch_size", None)
        if global_batch is not None:
            per_step = int(data.get("micro_batch_size", 0)) * int(data.get("world_size", 1))
            if per_step <= 0 or int(global_batch) % per_step:
                raise ValueError(
                    f"global_batch_size {global_batch} is not a multiple of micro_batch_size × "
                    f"world_size = {per_step}; pick sizes that divide"
                )
            data["grad_accum_steps"] = int(global_batch) // per_step
        name = data.get("optimizer", data.get("optimizer_name", "adamw"))
        data["optimizer_params"] = _fill("optimizer", name, OPTIMIZERS, data.get("optimizer_params") or {})
        schedule = data.get("schedule", "cosine")
        data["schedule_params"] = _fill("schedule", schedule, SCHEDULES, data.get("schedule_params") or {})
        recipe = handler(data)
        for key, value in derived.items():
            actual = getattr(recipe, key)
            if int(value) != actual:
                raise ValueError(f"{key} is {value} but the recipe's sizes give {actual}; remove or fix it")
        return recipe

    @field_validator("schedule_params")
    @classmethod
    def _check_schedule(cls, params: dict[str, Any]) -> dict[str, Any]:
        if "mode" in params and params["mode"] not in ("triangular", "triangular2", "exp_range"):
            raise ValueError(f"cyclic mode {params['mode']!r} must be triangular, triangular2 or exp_range")
        if "base_lr_ratio" in params and not 0 < float(params["base_lr_ratio"]) <= 1:
            raise ValueError("cyclic base_lr_ratio must be in (0, 1]")
        if "half_period_steps" in params and int(params["half_period_steps"]) < 1:
            raise ValueError("cyclic half_period_steps must be at least 1")
        if "pct_start" in params and not 0 < float(params["pct_start"]) < 1:
            raise ValueError("onecycle pct_start must be in (0, 1)")
        return params

    # ---- derived quantities -------------------------------------------------------------

    @property
    def optimizer_kind(self) -> str:
        return self.optimizer_name

    @property
    def effective_batch_size(self) -> int:
        """Samples per optimizer step: micro-batch × accumulation × world size."""
        return self.micro_batch_size * self.grad_accum_steps * self.world_size

    @property
    def total_steps(self) -> int:
        """Optimizer steps in the planned run; every decaying or cyclic schedule spans these."""
        return max(1, math.ceil(self.horizon_samples / self.effective_batch_size))

    @property
    def uses_warmup(self) -> bool:
        return SCHEDULES[self.schedule].uses_warmup

    # ---- what the training loop needs ----------------------------------------------------

    def optimizer(self, model_or_params: torch.nn.Module | Iterable[Any]) -> torch.optim.Optimizer:
        """The optimizer at ``peak_lr``; biases, norms and embeddings get no weight decay."""
        params = dict(self.optimizer_params)
        groups = param_groups(model_or_params, float(params.get("weight_decay", 0.0)))
        return OPTIMIZERS[self.optimizer_name].build(groups, self.peak_lr, **params)

    def scheduler(self, optimizer: torch.optim.Optimizer) -> torch.optim.lr_scheduler.LRScheduler:
        """The LR scheduler. Step it once per optimizer step while ``step < total_steps``."""
        return SCHEDULES[self.schedule].build(optimizer, self)

    def autocast(self, device_type: str | None = None) -> contextlib.AbstractContextManager[Any]:
        """The autocast context for the forward pass (a no-op context for fp32)."""
        if self.precision == "fp32":
            return contextlib.nullcontext()
        return torch.autocast(device_type=default_device_type(device_type), dtype=_DTYPES[self.precision])

    def grad_scaler(self, device_type: str | None = None) -> torch.amp.GradScaler:
        """Dynamic loss scaling for fp16; a disabled (pass-through) scaler otherwise."""
        return torch.amp.GradScaler(default_device_type(device_type), enabled=self.precision == "fp16")

    def clip(self, model_or_params: torch.nn.Module | Iterable[torch.Tensor]) -> float | None:
        """Clip gradients to ``clip_norm`` (call ``scaler.unscale_(opt)`` first under fp16).

        Returns the total gradient norm before clipping, or None when clipping is off.
        """
        if self.clip_norm is None:
            return None
        params = (
            model_or_params.parameters() if isinstance(model_or_params, torch.nn.Module) else model_or_params
        )
        return float(torch.nn.utils.clip_grad_norm_(params, self.clip_norm))

    @cached_property
    def lr_per_step(self) -> tuple[float, ...]:
        """The LR at each optimizer step 0 … total_steps-1, from the real scheduler."""
        weight = torch.nn.Parameter(torch.zeros(1))
        opt = torch.optim.SGD([weight], lr=self.peak_lr)
        sched = self.scheduler(opt)
        opt.step()  # no gradients: a no-op that keeps torch's step-order check quiet (once suffices)
        lrs = []
        for step in range(self.total_steps):
            lrs.append(opt.param_groups[0]["lr"])
            if step + 1 < self.total_steps:
                sched.step()
        return tuple(lrs)

    def lightning_optimizers(self, params_or_module: torch.nn.Module | Iterable[Any]) -> dict[str, Any]:
        """What ``LightningModule.configure_optimizers`` returns, stepping the LR once per step.

        ``interval: "step"`` makes Lightning step the scheduler after every optimizer step, as
        the trials did (its default is once per epoch). Lightning is not imported here.

        Example:
            >>> class Module(pl.LightningModule):            # doctest: +SKIP
            ...     def configure_optimizers(self):
            ...         return recipe.lightning_optimizers(self)

        Set ``Trainer(accumulate_grad_batches=recipe.grad_accum_steps,
        gradient_clip_val=recipe.clip_norm, precision=...)`` to match the rest of the recipe.
        """
        optimizer = self.optimizer(params_or_module)
        return {
            "optimizer": optimizer,
            "lr_scheduler": {"scheduler": self.scheduler(optimizer), "interval": "step", "frequency": 1},
        }

    # ---- serialisation --------------------------------------------------------------------

    def to_dict(self) -> dict[str, Any]:
        """Plain data: what trials store and exports write; ``Recipe.from_dict`` reads it back."""
        data = self.model_dump(by_alias=True)
        data["effective_batch_size"] = self.effective_batch_size
        data["total_steps"] = self.total_steps
        return data

    @classmethod
    def from_dict(cls, data: Mapping[str, Any], *, where: str = "recipe") -> Recipe:
        """Validate plain data into a Recipe; a :class:`ConfigError` names the bad field."""
        if not isinstance(data, Mapping):
            raise ConfigError("expected a mapping of recipe fields", where=where)
        try:
            return cls.model_validate(dict(data))
        except ValidationError as exc:
            raise config_error_from(exc, where) from None


def config_error_from(exc: ValidationError, where: str) -> ConfigError:
    """The first pydantic error as a one-line ConfigError naming file and field."""
    err = exc.errors()[0]
    field = ".".join(str(p) for p in err["loc"] if p not in ("function-after", "function-wrap"))
    message = err["msg"].removeprefix("Value error, ")
    fix = None
    if err["type"] == "extra_forbidden":
        message = "unknown key"
        fix = "remove it or check its spelling"
    elif err["type"] == "missing":
        message = "required field is missing"
        fix = "add it"
    return ConfigError(message, where=f"{where}: {field}" if field else where, fix=fix)


def load_recipe(path: str | Path) -> Recipe:
    """Read a recipe exported by ``convtune study export`` (``yaml``, ``json``, or ``hf``).

    The file may hold just the recipe's fields or an export document with a ``recipe`` key.
    A file that is neither (a study spec, a search space, someone else's config) is a
    :class:`ConfigError` saying so, not a list of missing fields.

    Example:
        >>> recipe = load_recipe("best.yaml")               # doctest: +SKIP
        >>> opt = recipe.optimizer(model); sched = recipe.scheduler(opt)   # doctest: +SKIP
    """
    from convtune.config.io import read_mapping

    path = Path(path)
    if path.suffix == ".py":
        raise ConfigError(
            "a python export is a module, not a recipe file",
            where=str(path),
            fix="import it, or export with --format yaml",
        )
    data = read_mapping(path)
    if "recipe" in data:
        if not isinstance(data["recipe"], Mapping):
            raise ConfigError(
                "the 'recipe' key must hold a mapping of recipe fields",
                where=f"{path}: recipe",
                fix="re-export with `convtune study export`",
            )
        data = data["recipe"]
    elif not set(data) & (set(Recipe.model_fields) | {"optimizer"}):
        raise ConfigError(
            "not a convtune recipe (no recipe fields such as peak_lr or micro_batch_size)",
            where=str(path),
            fix="export one with `convtune study export NAME --format yaml -o FILE`",
        )
    return Recipe.from_dict(data, where=str(path))
