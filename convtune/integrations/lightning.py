"""Tune a PyTorch Lightning script with convtune: five changed lines.

.. code:: python

    from convtune.integrations import lightning as ct                     # added

    class Model(L.LightningModule):
        def configure_optimizers(self):
            return ct.configure_optimizers(self, torch.optim.AdamW(self.parameters(), 1e-3))  # wrapped

    train = DataLoader(data, batch_size=ct.batch_size(64), shuffle=True)  # wrapped
    trainer = L.Trainer(**ct.trainer_kwargs(max_epochs=5))                # wrapped
    trainer.fit(model, train, val, **ct.fit_kwargs())                      # added

Inside a convtune trial (``workload: {script: train.py}``) the script trains the trial's recipe
exactly: :func:`configure_optimizers` returns the recipe's optimizer and its scheduler stepped
once per optimizer step, :func:`batch_size` the micro-batch, and :func:`trainer_kwargs` sets
``max_steps`` (the horizon), gradient accumulation, clipping, precision, the number of devices
and ``val_check_interval`` (which counts batches, not optimizer steps: evaluations every N
optimizer steps are every N × accumulation batches), and adds :class:`ConvtuneCallback`. With a
``checkpoint_dir`` in the study's spec, a ``ModelCheckpoint`` keeps the trial's last state in its
own folder and :func:`fit_kwargs` resumes from it, so a retried or preempted trial continues.
Outside a trial each returns what it was given (``CONVTUNE_RECIPE=best.yaml`` applies an
exported recipe): the script trains as before.

In your own Optuna loop, ``ConvtuneCallback(trial=trial)`` reports the validation metric with
the cost as the step (what :class:`~convtune.pruners.TimeToTargetPruner` compares), stops a
trial its pruner stops, and ``callback.value()`` is what the objective returns.
"""

from __future__ import annotations

import math
import os
from pathlib import Path
from typing import TYPE_CHECKING, Any

import lightning.pytorch as pl
import torch

from convtune import session
from convtune.errors import ConfigError
from convtune.integrations._core import (
    CostUnit,
    TrainClock,
    TrialLink,
    current_lr,
    planned_lrs,
    recipe_in_effect,
)

if TYPE_CHECKING:
    import optuna

    from convtune.config.recipe import Recipe

#: Lightning's ``precision`` for each recipe precision.
PRECISION = {"fp32": "32-true", "bf16": "bf16-mixed", "fp16": "16-mixed"}
_LAST = "last.ckpt"


def batch_size(default: int) -> int:
    """The recipe's micro-batch size inside a trial (or with ``CONVTUNE_RECIPE``), else ``default``."""
    recipe = recipe_in_effect()
    return recipe.micro_batch_size if recipe is not None else default


def configure_optimizers(module: torch.nn.Module, default: Any = None) -> Any:
    """What ``LightningModule.configure_optimizers`` returns: the recipe's optimizer and its
    scheduler (``interval: "step"``) inside a trial, else ``default`` (called if callable)."""
    recipe = recipe_in_effect()
    if recipe is not None:
        return recipe.lightning_optimizers(module)
    return default() if callable(default) else default


def val_check_interval(recipe: Recipe, eval_every: float, eval_unit: str = "samples") -> int:
    """Lightning's ``val_check_interval`` (training batches) for ``eval_every`` samples (or
    optimizer steps): every N optimizer steps is every N × accumulation batches."""
    if eval_unit == "steps":
        steps = max(1, int(eval_every))
    else:
        steps = max(1, math.ceil(float(eval_every) / recipe.effective_batch_size))
    return steps * recipe.grad_accum_steps


def trainer_overrides(
    recipe: Recipe,
    *,
    eval_every: float | None = None,
    eval_unit: str = "samples",
) -> dict[str, Any]:
    """``Trainer`` keyword arguments that make Lightning train ``recipe`` (with
    :func:`configure_optimizers` in the module and :func:`batch_size` in the loader)."""
    overrides: dict[str, Any] = {
        "max_steps": recipe.total_steps,
        "max_epochs": -1,
        "accumulate_grad_batches": recipe.grad_accum_steps,
        "gradient_clip_val": recipe.clip_norm,
        "gradient_clip_algorithm": "norm",
        "precision": PRECISION[recipe.precision],
    }
    if eval_every is not None:
        overrides["val_check_interval"] = val_check_interval(recipe, eval_every, eval_unit)
        overrides["check_val_every_n_epoch"] = None  # the interval runs across epochs
    world = int(os.environ.get("WORLD_SIZE", recipe.world_size))
    local = int(os.environ.get("LOCAL_WORLD_SIZE", world))
    overrides["accelerator"] = "gpu" if torch.cuda.is_available() else "cpu"
    overrides["devices"] = local
    if world > 1:
        overrides["strategy"] = "ddp"
        overrides["num_nodes"] = max(1, world // max(1, local))
    return overrides


def trainer_kwargs(**kwargs: Any) -> dict[str, Any]:
    """``kwargs`` for ``lightning.Trainer(...)`` with a :class:`ConvtuneCallback` added and,
    inside a trial, the recipe's settings (:func:`trainer_overrides`) and checkpointing to the
    trial's folder."""
    callbacks = [*(kwargs.pop("callbacks", None) or []), ConvtuneCallback()]
    recipe = recipe_in_effect()
    if recipe is not None:
        config = session.config() if session.active() else {}
        kwargs.update(
            trainer_overrides(
                recipe, eval_every=config.get("eval_every"), eval_unit=str(config.get("eval_unit", "samples"))
            )
        )
        if session.active():
            kwargs.setdefault("num_sanity_val_steps", 0)  # not part of the trial
        folder = session.checkpoint_dir() if session.active() else None
        if folder:
            every = kwargs.get("val_check_interval", recipe.grad_accum_steps) // recipe.grad_accum_steps
            callbacks.append(
                pl.callbacks.ModelCheckpoint(
                    dirpath=folder, save_last=True, save_top_k=0, every_n_train_steps=max(1, int(every))
                )
            )
            kwargs["enable_checkpointing"] = True
        elif session.active():
            kwargs["enable_checkpointing"] = False
    kwargs["callbacks"] = callbacks
    return kwargs


def fit_kwargs() -> dict[str, Any]:
    """``trainer.fit(...)`` keyword arguments: inside a trial with a checkpoint folder, the last
    checkpoint there as ``ckpt_path`` (a retried or preempted trial continues)."""
    folder = session.checkpoint_dir() if session.active() else None
    if folder and (Path(folder) / _LAST).is_file():
        return {"ckpt_path": str(Path(folder) / _LAST)}
    return {}


class ConvtuneCallback(pl.Callback):
    """Reports Lightning's validations to convtune (or to an Optuna trial) and stops when told.

    Inside a convtune trial: every validation (sanity checks excepted) goes to
    :func:`convtune.execution.session.report` with ``trainer.callback_metrics``, the cost (samples =
    ``global_step`` × batch × accumulation × world size; training seconds, validation excluded),
    the training loss and the LR the last optimizer step applied; convtune's answer sets
    ``trainer.should_stop``. A non-finite training loss is reported as divergence and stops
    training. Outside a trial it does nothing.

    With ``trial=`` (your own ``study.optimize`` loop) it reports ``metric`` (default: the
    pruner's target metric) to that Optuna trial at the cost, stores the planned LR schedule
    (the configured scheduler stepped over ``max_steps`` on a copy) at the first report, and
    stops when the target is reached or the pruner says so; return :meth:`value` from the
    objective. Its training seconds are saved in Lightning checkpoints and restored on resume.
    """

    def __init__(
        self,
        *,
        trial: optuna.Trial | None = None,
        metric: str | None = None,
        cost: CostUnit = "samples",
    ) -> None:
        self.trial = trial
        self.metric = metric
        self.cost: CostUnit = cost
        self.link: TrialLink | None = None
        self.clock = TrainClock()
        self._lr = math.nan
        self._train_loss = math.nan
        self._done = False

    @staticmethod
    def samples(trainer: pl.Trainer) -> int:
        """Samples trained so far, over all processes."""
        loader = trainer.train_dataloader
        per_batch = getattr(loader, "batch_size", None)
        if not per_batch:
            recipe = recipe_in_effect()
            per_batch = recipe.micro_batch_size if recipe is not None else 1
        return int(trainer.global_step * per_batch * trainer.accumulate_grad_batches * trainer.world_size)

    def value(self) -> float:
        """With ``trial=``: what the objective returns (time-to-target, measured or forecast)."""
        if self.link is None or self.link.mode != "optuna":
            raise ConfigError("value() needs ConvtuneCallback(trial=...) and a finished fit()")
        return self.link.value()

    def state_dict(self) -> dict[str, Any]:
        return {"train_seconds": self.clock.seconds}

    def load_state_dict(self, state_dict: dict[str, Any]) -> None:
        self.clock = TrainClock(float(state_dict.get("train_seconds", 0.0)))

    def on_train_start(self, trainer: pl.Trainer, pl_module: pl.LightningModule) -> None:
        self.link = TrialLink(self.trial, metric=self.metric, cost=self.cost)
        self._done = False
        if not self.link.active:
            return
        configs = trainer.lr_scheduler_configs
        if trainer.global_step == 0 and configs and configs[0].interval == "step":
            steps = trainer.max_steps if trainer.max_steps > 0 else int(trainer.estimated_stepping_batches)
            self.link.planned = planned_lrs(configs[0].scheduler, steps)
        self.clock.start()

    def on_train_batch_start(
        self, trainer: pl.Trainer, pl_module: pl.LightningModule, batch: Any, batch_idx: int
    ) -> None:
        self.clock.start()

    def on_save_checkpoint(
        self, trainer: pl.Trainer, pl_module: pl.LightningModule, checkpoint: dict[str, Any]
    ) -> None:
        self.clock.pause()  # writing checkpoints is not training time; the next batch restarts it

    def on_before_optimizer_step(
        self, trainer: pl.Trainer, pl_module: pl.LightningModule, optimizer: torch.optim.Optimizer
    ) -> None:
        self._lr = current_lr(optimizer)

    def on_train_batch_end(
        self, trainer: pl.Trainer, pl_module: pl.LightningModule, outputs: Any, batch: Any, batch_idx: int
    ) -> None:
        if self.link is None or not self.link.active or self._done:
            return
        loss = outputs.get("loss") if isinstance(outputs, dict) else outputs
        if not isinstance(loss, torch.Tensor):
            return
        value = float(loss.detach().float())
        self._train_loss = value
        if not math.isfinite(value):
            self._done = True
            self.link.diverged(
                step=trainer.global_step,
                samples=self.samples(trainer),
                seconds=self.clock.seconds,
                why=f"non-finite training loss {value} at step {trainer.global_step}",
            )
            trainer.should_stop = True

    def on_validation_start(self, trainer: pl.Trainer, pl_module: pl.LightningModule) -> None:
        if not trainer.sanity_checking:
            self.clock.pause()

    def on_validation_end(self, trainer: pl.Trainer, pl_module: pl.LightningModule) -> None:
        link = self.link
        if trainer.sanity_checking or link is None or not link.active or self._done:
            return
        metrics = {
            k: float(v)
            for k, v in trainer.callback_metrics.items()
            if isinstance(v, torch.Tensor) and v.numel() == 1
        }
        stop = link.report(
            step=trainer.global_step,
            samples=self.samples(trainer),
            seconds=self.clock.seconds,
            metrics=metrics,
            lr=self._lr,
            train_loss=self._train_loss,
        )
        if stop:
            self._done = True
            trainer.should_stop = True

    def on_train_end(self, trainer: pl.Trainer, pl_module: pl.LightningModule) -> None:
        self.clock.pause()


__all__ = [
    "PRECISION",
    "ConvtuneCallback",
    "batch_size",
    "configure_optimizers",
    "fit_kwargs",
    "trainer_kwargs",
    "trainer_overrides",
    "val_check_interval",
]
