"""Tune a Hugging Face ``Trainer`` script with convtune: four changed lines.

.. code:: python

    from convtune.integrations import transformers as ct                    # added

    args = ct.training_arguments(TrainingArguments(output_dir="out", ...))  # wrapped
    trainer = Trainer(model=model, args=args, train_dataset=train, eval_dataset=val,
                      **ct.trainer_kwargs(model))                           # added
    trainer.train(**ct.train_kwargs())                                      # added

Inside a convtune trial (``workload: {script: train.py}``) the script trains the trial's recipe
exactly: :func:`training_arguments` sets the batch, accumulation, horizon (``max_steps``),
clipping, precision, seed and evaluation interval, and :func:`trainer_kwargs` passes
``optimizers=(recipe.optimizer(model), recipe.scheduler(opt))``, so LAMB, Lion, LARS, cyclic
and one-cycle run as in every other trial, warm-up included, and adds :class:`ConvtuneCallback`,
which reports every evaluation and stops training when convtune says so. With a
``checkpoint_dir`` in the study's spec, checkpoints go to the trial's own folder and
:func:`train_kwargs` resumes from the latest one, so a retried or preempted trial continues.
Outside a trial all four return what they were given (or nothing): the script trains as before.

The Trainer's own search works too: ``trainer.add_callback(ConvtuneCallback(trainer))`` and
``trainer.hyperparameter_search(backend="optuna", pruner=TimeToTargetPruner(...), direction=
"minimize")`` report costs instead of ``global_step``, store each trial's LR schedule for the
forecasts, and end a stopped trial as a finished one whose value is its time-to-target.
"""

from __future__ import annotations

import json
import math
import os
from pathlib import Path
from typing import TYPE_CHECKING, Any

from transformers import TrainerCallback, TrainingArguments
from transformers.trainer_utils import get_last_checkpoint

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
    import torch
    from transformers import Trainer, TrainerControl, TrainerState

    from convtune.config.recipe import Recipe

_CLOCK_FILE = "convtune_clock.json"


def eval_steps(recipe: Recipe, eval_every: float, eval_unit: str = "samples") -> int:
    """Optimizer steps between evaluations for an ``eval_every`` in samples (or steps)."""
    if eval_unit == "steps":
        return max(1, int(eval_every))
    return max(1, math.ceil(float(eval_every) / recipe.effective_batch_size))


def training_arguments_overrides(
    recipe: Recipe,
    *,
    eval_every: float | None = None,
    eval_unit: str = "samples",
    seed: int | None = None,
    checkpoint_dir: str | None = None,
) -> dict[str, Any]:
    """``TrainingArguments`` fields that make the Trainer train ``recipe``, with the optimizer
    and scheduler from :func:`recipe_optimizers` passed as ``optimizers=``.

    The horizon becomes ``max_steps`` (every schedule is defined over it); ``eval_every``
    (samples, or steps) becomes ``eval_steps``, with the training loss logged at the same steps
    and non-finite losses left unfiltered so divergence shows. With ``checkpoint_dir``, the
    Trainer saves there at every evaluation (the last one kept) and ``output_dir`` is that folder.
    ``learning_rate`` and ``weight_decay`` are informational: the passed optimizer carries them.
    """
    overrides: dict[str, Any] = {
        "per_device_train_batch_size": recipe.micro_batch_size,
        "gradient_accumulation_steps": recipe.grad_accum_steps,
        "max_steps": recipe.total_steps,
        # 0 switches the Trainer's clipping off (its default of 1.0 would clip a recipe that does not).
        "max_grad_norm": recipe.clip_norm if recipe.clip_norm is not None else 0.0,
        "bf16": recipe.precision == "bf16",
        "fp16": recipe.precision == "fp16",
        "learning_rate": recipe.peak_lr,
        "weight_decay": float(recipe.optimizer_params.get("weight_decay", 0.0)),
        "logging_nan_inf_filter": False,
    }
    if eval_every is not None:
        every = eval_steps(recipe, eval_every, eval_unit)
        overrides.update(
            eval_strategy="steps", eval_steps=every, logging_strategy="steps", logging_steps=every
        )
    if seed is not None:
        overrides["seed"] = int(seed)
    if checkpoint_dir:
        overrides.update(
            output_dir=str(checkpoint_dir),
            save_strategy="steps",
            save_steps=overrides.get("eval_steps", 500),
            save_total_limit=1,
        )
    elif eval_every is not None:
        overrides["save_strategy"] = "no"  # trials without checkpoint_dir keep nothing
    return overrides


def recipe_optimizers(
    recipe: Recipe, model: torch.nn.Module
) -> tuple[torch.optim.Optimizer, torch.optim.lr_scheduler.LRScheduler]:
    """``optimizers=`` for the Trainer: the recipe's optimizer and its scheduler, stepped once
    per optimizer step by the Trainer, exactly as the trials stepped them."""
    optimizer = recipe.optimizer(model)
    return optimizer, recipe.scheduler(optimizer)


def training_arguments(args: TrainingArguments, recipe: Recipe | None = None) -> TrainingArguments:
    """``args`` with the trial's recipe applied inside a convtune trial, or with ``recipe`` given
    (or an exported one named by ``CONVTUNE_RECIPE``); ``args`` itself otherwise."""
    recipe = recipe or recipe_in_effect()
    if recipe is None:
        return args
    config = session.config() if session.active() else {}
    overrides = training_arguments_overrides(
        recipe,
        eval_every=config.get("eval_every"),
        eval_unit=str(config.get("eval_unit", "samples")),
        seed=config.get("seed"),
        checkpoint_dir=session.checkpoint_dir() if session.active() else None,
    )
    # A fresh instance: __post_init__ checks the combination (as the Trainer's own sweeps set fields).
    data = {k: getattr(args, k) for k in args.__dataclass_fields__ if args.__dataclass_fields__[k].init}
    data.update(overrides)
    return type(args)(**data)


def trainer_kwargs(
    model: torch.nn.Module,
    recipe: Recipe | None = None,
    *,
    callbacks: list[Any] | None = None,
) -> dict[str, Any]:
    """Keyword arguments for ``Trainer(...)``: ``callbacks`` plus a :class:`ConvtuneCallback`,
    and inside a trial (or with ``recipe`` given, or ``CONVTUNE_RECIPE`` set) ``optimizers=`` from
    :func:`recipe_optimizers`."""
    kwargs: dict[str, Any] = {"callbacks": [*(callbacks or []), ConvtuneCallback()]}
    recipe = recipe or recipe_in_effect()
    if recipe is not None:
        kwargs["optimizers"] = recipe_optimizers(recipe, model)
    return kwargs


def train_kwargs() -> dict[str, Any]:
    """Keyword arguments for ``trainer.train(...)``: inside a trial with a checkpoint folder, the
    latest checkpoint there to resume from (a retried or preempted trial continues)."""
    folder = session.checkpoint_dir() if session.active() else None
    if folder and os.path.isdir(folder):
        last = get_last_checkpoint(folder)
        if last:
            return {"resume_from_checkpoint": last}
    return {}


class ConvtuneCallback(TrainerCallback):
    """Reports the Trainer's evaluations to convtune (or to an Optuna trial) and stops it when told.

    Inside a convtune trial: every evaluation goes to :func:`convtune.execution.session.report` with its
    cost (samples = ``global_step`` × per-device batch × accumulation × world size; seconds of
    training, evaluation and checkpointing excluded), the training loss and the LR the last
    optimizer step applied; convtune's answer stops training. A non-finite training loss is
    reported as divergence and stops it. Outside a trial it does nothing.

    ``trial=``: report to that Optuna trial instead (your own ``study.optimize`` loop around
    ``trainer.train()``), then return :meth:`value` from the objective. ``trainer=``: inside
    ``trainer.hyperparameter_search(backend="optuna")``, take over the Trainer's report so the
    step is the cost and a stop ends the trial as finished (value: time-to-target). Either way
    the trial's planned LR schedule (the Trainer's scheduler stepped over ``max_steps`` on a
    copy) is stored at the first report, so :class:`~convtune.pruners.TimeToTargetPruner`'s
    forecasts are schedule-aware.
    """

    def __init__(
        self,
        trainer: Trainer | None = None,
        *,
        trial: optuna.Trial | None = None,
        metric: str | None = None,
        cost: CostUnit = "samples",
    ) -> None:
        self.trainer = trainer
        self.trial = trial
        self.metric = metric
        self.cost: CostUnit = cost
        self.link: TrialLink | None = None
        self.clock = TrainClock()
        self._lr = float("nan")
        self._train_loss = float("nan")
        self._hp_search = False
        self._stopped_reporting = False

    # ---- what a run's reports carry ----------------------------------------------------------

    @staticmethod
    def samples(args: TrainingArguments, state: TrainerState) -> int:
        """Samples trained so far, over all processes."""
        per_step = args.train_batch_size * args.gradient_accumulation_steps * max(1, args.world_size)
        return int(state.global_step * per_step)

    def value(self) -> float:
        """With ``trial=``: what the objective returns (time-to-target, measured or forecast)."""
        if self.link is None or self.link.mode != "optuna":
            raise ConfigError("value() needs ConvtuneCallback(trial=...) and a finished train()")
        return self.link.value()

    # ---- Trainer events ----------------------------------------------------------------------

    def on_train_begin(
        self, args: TrainingArguments, state: TrainerState, control: TrainerControl, **kwargs: Any
    ) -> None:
        trial = self.trial
        hp_trial = getattr(self.trainer, "_trial", None) if self.trainer is not None else None
        if trial is None and state.is_hyper_param_search:
            if hp_trial is None or not hasattr(hp_trial, "report"):
                raise ConfigError(
                    "ConvtuneCallback inside hyperparameter_search needs the trainer and the optuna backend",
                    where="ConvtuneCallback",
                    fix="trainer.add_callback(ConvtuneCallback(trainer)); hyperparameter_search(backend='optuna')",
                )
            trial = hp_trial
        self.link = TrialLink(trial, metric=self.metric, cost=self.cost)
        self._stopped_reporting = False
        if not self.link.active:
            return
        self.clock = TrainClock(_saved_seconds(args, state))
        scheduler = kwargs.get("lr_scheduler")
        if state.global_step == 0 and scheduler is not None:
            self.link.planned = planned_lrs(scheduler, int(state.max_steps))
        self._hp_search = self.link.mode == "optuna" and trial is hp_trial and self.trainer is not None
        if self._hp_search:
            self._take_over_hp_report()
        self.clock.start()

    def on_step_begin(  # the clock runs from here; evaluations and saves pause it until the next step
        self, args: TrainingArguments, state: TrainerState, control: TrainerControl, **kw: Any
    ) -> None:
        self.clock.start()

    def on_optimizer_step(
        self, args: TrainingArguments, state: TrainerState, control: TrainerControl, **kwargs: Any
    ) -> None:
        self._lr = current_lr(kwargs.get("optimizer"))  # before the scheduler steps: the LR just applied

    def on_step_end(
        self, args: TrainingArguments, state: TrainerState, control: TrainerControl, **kw: Any
    ) -> None:
        if control.should_evaluate or control.should_save:
            self.clock.pause()  # evaluation, its report and checkpoints are not training time

    def on_log(
        self,
        args: TrainingArguments,
        state: TrainerState,
        control: TrainerControl,
        logs: dict[str, Any] | None = None,
        **kwargs: Any,
    ) -> None:
        if self.link is None or not self.link.active or not logs or "loss" not in logs:
            return
        self._train_loss = float(logs["loss"])
        if not math.isfinite(self._train_loss) and not self._stopped_reporting:
            self._stopped_reporting = True
            self.link.diverged(
                step=state.global_step,
                samples=self.samples(args, state),
                seconds=self.clock.seconds,
                why=f"non-finite training loss {self._train_loss} at step {state.global_step}",
            )
            control.should_training_stop = True

    def on_evaluate(
        self,
        args: TrainingArguments,
        state: TrainerState,
        control: TrainerControl,
        metrics: dict[str, Any] | None = None,
        **kwargs: Any,
    ) -> None:
        link = self.link
        if link is None or not link.active or self._hp_search or self._stopped_reporting:
            return
        self.clock.pause()
        stop = link.report(
            step=state.global_step,
            samples=self.samples(args, state),
            seconds=self.clock.seconds,
            metrics=metrics or {},
            lr=self._lr,
            train_loss=self._train_loss,
        )
        if stop:
            self._stopped_reporting = True  # every later evaluation of this run is past the end
            control.should_training_stop = True

    def on_save(
        self, args: TrainingArguments, state: TrainerState, control: TrainerControl, **kw: Any
    ) -> None:
        if self.link is None or not self.link.active:
            return
        folder = Path(args.output_dir) / f"checkpoint-{state.global_step}"
        if folder.is_dir() and args.process_index == 0:
            (folder / _CLOCK_FILE).write_text(json.dumps({"train_seconds": self.clock.seconds}))

    def on_train_end(
        self, args: TrainingArguments, state: TrainerState, control: TrainerControl, **kw: Any
    ) -> None:
        self.clock.pause()
        if self._hp_search and self.trainer is not None and self.link is not None:
            self._restore_hp_report()
            # hyperparameter_search returns trainer.objective: make it the time-to-target.
            self.trainer.objective = self.link.value()

    # ---- hyperparameter_search --------------------------------------------------------------

    def _take_over_hp_report(self) -> None:
        """Report costs (not ``global_step``) to the search's trial and stop gracefully: the
        Trainer would raise ``TrialPruned``, which leaves a study of stopped trials with no
        finished one (``study.best_trial``: "Record does not exist")."""
        trainer = self.trainer
        assert trainer is not None and self.link is not None
        link = self.link
        directions = getattr(getattr(link.trial, "study", None), "directions", [])
        if [d.name for d in directions] == ["MAXIMIZE"]:
            raise ConfigError(
                "the search's objective becomes a time-to-target, which is minimised",
                where="hyperparameter_search(direction=...)",
                fix='pass direction="minimize"',
            )

        def report(trial: Any, step: int, metrics: dict[str, float]) -> None:
            if trial is None or self._stopped_reporting:
                return
            trainer.objective = trainer.compute_objective(dict(metrics))
            self.clock.pause()
            stop = link.report_value(
                float(trainer.objective),  # type: ignore[arg-type]
                step=trainer.state.global_step,
                samples=self.samples(trainer.args, trainer.state),
                seconds=self.clock.seconds,
            )
            if stop:
                self._stopped_reporting = True
                trainer.control.should_training_stop = True

        trainer._report_to_hp_search = report  # type: ignore[method-assign]

    def _restore_hp_report(self) -> None:
        if self.trainer is not None and "_report_to_hp_search" in vars(self.trainer):
            del self.trainer._report_to_hp_search


def _saved_seconds(args: TrainingArguments, state: TrainerState) -> float:
    """Training seconds recorded with the checkpoint a resumed run starts from (else 0)."""
    if state.global_step <= 0:
        return 0.0
    path = Path(args.output_dir) / f"checkpoint-{state.global_step}" / _CLOCK_FILE
    try:
        return float(json.loads(path.read_text())["train_seconds"])
    except (OSError, ValueError, KeyError):
        return 0.0


__all__ = [
    "ConvtuneCallback",
    "eval_steps",
    "recipe_optimizers",
    "train_kwargs",
    "trainer_kwargs",
    "training_arguments",
    "training_arguments_overrides",
]
