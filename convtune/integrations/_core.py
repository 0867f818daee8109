"""What the Trainer and Lightning callbacks share: where reports go, the training clock, the
planned LR schedule and the value a finished Optuna trial returns. No framework is imported."""

from __future__ import annotations

import copy
import math
import os
import sys
import time
import warnings
from collections import defaultdict
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Literal

from convtune import session
from convtune.config.record import SCHEDULE_ATTR, write_trial
from convtune.config.target import Target
from convtune.errors import ConfigError

if TYPE_CHECKING:
    import optuna
    import torch

    from convtune.config.recipe import Recipe

CostUnit = Literal["samples", "seconds"]

#: The Optuna user attr holding a trial's LR against cost (what TimeToTargetPruner reads).
LR_SCHEDULE_ATTR = SCHEDULE_ATTR  # where a convtune study keeps the planned schedule


class TrainClock:
    """Seconds spent training, evaluation and checkpointing excluded (they are paused out).

    Example:
        >>> clock = TrainClock()
        >>> clock.start(); clock.pause(); clock.seconds >= 0.0
        True
    """

    def __init__(self, seconds: float = 0.0) -> None:
        self._seconds = float(seconds)
        self._since: float | None = None

    def start(self) -> None:
        """Count from now (again); a no-op while already counting."""
        if self._since is None:
            self._since = time.perf_counter()

    def pause(self) -> None:
        if self._since is not None:
            self._seconds += time.perf_counter() - self._since
            self._since = None

    @property
    def seconds(self) -> float:
        running = time.perf_counter() - self._since if self._since is not None else 0.0
        return self._seconds + running


def planned_lrs(scheduler: Any, steps: int) -> list[float] | None:
    """The LR at each optimizer step 0 … ``steps``-1 that ``scheduler`` will set, from a copy.

    The copy shares nothing with training: the optimizer's parameters are replaced by empty
    tensors and its state is left behind, so this costs no model memory. It starts from the
    scheduler's current position (call it before the first step for the whole run). None when
    the scheduler cannot be copied (the caller then falls back to the recipe's schedule).
    """
    import torch

    optimizer = getattr(scheduler, "optimizer", None)
    if optimizer is None or steps <= 0:
        return None
    memo: dict[int, Any] = {}
    for group in optimizer.param_groups:
        for param in group["params"]:
            memo[id(param)] = torch.nn.Parameter(torch.zeros(0))
    memo[id(optimizer.state)] = defaultdict(dict)
    try:
        twin = copy.deepcopy(scheduler, memo)
    except Exception:  # a scheduler holding something uncopyable: no planned schedule, not a crash
        return None
    groups = twin.optimizer.param_groups
    lrs: list[float] = []
    with warnings.catch_warnings():
        # The copy steps without optimizer steps; torch warns about the order, harmlessly here.
        warnings.simplefilter("ignore")
        for step in range(steps):
            lrs.append(float(groups[0]["lr"]))
            if step + 1 < steps:
                twin.step()
    return lrs


def recipe_in_effect() -> Recipe | None:
    """The trial's recipe inside a convtune trial, an exported one named by ``CONVTUNE_RECIPE``
    (``CONVTUNE_RECIPE=best.yaml python train.py``), else None (the script's own settings)."""
    if session.active():
        return session.recipe()
    path = os.environ.get("CONVTUNE_RECIPE")
    if path:
        # Read each time (not session.recipe()'s once-per-process cache): outside a trial the
        # variable may name another recipe by the next call, as in a notebook or a test.
        from convtune.config.recipe import load_recipe

        return load_recipe(path)
    return None


def current_lr(optimizer: torch.optim.Optimizer | None) -> float:
    if optimizer is None or not optimizer.param_groups:
        return math.nan
    return float(optimizer.param_groups[0]["lr"])


class TrialLink:
    """Where a callback's evaluations go: the convtune session, an Optuna trial, or nowhere.

    * ``session`` — inside a convtune trial (:func:`convtune.execution.session.active`): every evaluation
      goes to :func:`convtune.execution.session.report`, whose answer says whether to stop.
    * ``optuna`` — given ``trial``: the target metric is reported with the cost as the step
      (samples, or milliseconds of training for ``cost="seconds"``), the planned LR schedule
      is stored at the first report (the ``lr_schedule`` attr the pruner reads), and the trial
      stops when it reaches the target, diverges, or its pruner says so.
    * ``off`` — neither: nothing is reported and nothing stops.

    ``metric`` names the target metric in ``optuna`` mode (default: the pruner's target).
    """

    def __init__(
        self,
        trial: optuna.Trial | None = None,
        *,
        metric: str | None = None,
        cost: CostUnit = "samples",
    ) -> None:
        if cost not in ("samples", "seconds"):
            raise ConfigError(f"cost must be samples or seconds, not {cost!r}", where="ConvtuneCallback")
        self.trial = trial
        self.mode: Literal["session", "optuna", "off"] = (
            "session" if session.active() else "optuna" if trial is not None else "off"
        )
        self.cost: CostUnit = cost
        self.target: Target | None = None
        if self.mode == "optuna":
            self.target = _target_of(trial, metric)
        self.metric = metric or (self.target.metric if self.target else None)
        self.planned: list[float] | None = None  # LR per optimizer step over the planned run
        self.status: str | None = None  # why the trial ended: reached, stopped, diverged
        self.reports = 0
        self._metric_names: set[str] = set()

    @property
    def active(self) -> bool:
        return self.mode != "off"

    @property
    def step_scale(self) -> int:
        """Report steps are integers: samples as they are, training time in milliseconds."""
        return 1 if self.cost == "samples" else 1000

    def cost_of(self, samples: int, seconds: float) -> float:
        return float(samples) if self.cost == "samples" else float(seconds)

    def report(
        self,
        *,
        step: int,
        samples: int,
        seconds: float,
        metrics: Mapping[str, Any],
        lr: float = math.nan,
        train_loss: float = math.nan,
    ) -> bool:
        """Report one evaluation; True when training must stop now."""
        clean = {k: float(v) for k, v in metrics.items() if _is_number(v)}
        self._metric_names.update(clean)
        if self.mode == "session":
            if self.reports == 0:
                self._check_against_recipe()
            self.reports += 1
            extra = {"lr": lr, "train_loss": train_loss}
            clean.update({k: v for k, v in extra.items() if math.isfinite(v)})
            return session.report(step=step, samples=samples, metrics=clean, seconds=seconds)
        if self.mode == "optuna":
            if self.metric not in clean:
                raise ConfigError(
                    f"the evaluation returned {sorted(clean)}, not the target's metric {self.metric!r}",
                    where="ConvtuneCallback",
                    fix="name a reported metric in the pruner's target (or pass metric=...)",
                )
            return self.report_value(clean[self.metric], step=step, samples=samples, seconds=seconds)
        return False

    def report_value(self, value: float, *, step: int, samples: int, seconds: float) -> bool:
        """``optuna`` mode: report the target metric's ``value`` at this cost and decide."""
        assert self.trial is not None and self.target is not None
        cost = self.cost_of(samples, seconds)
        if self.reports == 0:
            self._store_schedule(cost / max(1, step))
        self.reports += 1
        self.trial.report(float(value), step=int(round(cost * self.step_scale)))
        if not math.isfinite(value):
            self.status = "diverged"
            return True
        if self.target.is_reached(float(value)):
            self.status = "reached"
            return True
        if self.trial.should_prune():
            self.status = "stopped"
            return True
        return False

    def diverged(self, *, step: int, samples: int, seconds: float, why: str) -> bool:
        """Report a non-finite training loss as divergence; always True (stop)."""
        self.status = "diverged"
        if self.mode == "session":
            names = self._metric_names | ({self.metric} if self.metric else set()) or {"loss"}
            metrics = {name: math.nan for name in names}
            metrics["train_loss"] = math.nan
            session.report(step=step, samples=samples, metrics=metrics, seconds=seconds)
        elif self.mode == "optuna":
            assert self.trial is not None
            write_trial(self.trial, {"reason": why})
            self.trial.report(math.nan, step=int(round(self.cost_of(samples, seconds) * self.step_scale)))
        print(f"convtune: {why}: training stops (diverged)", file=sys.stderr)
        return True

    def _store_schedule(self, cost_per_step: float) -> None:
        from convtune.curves import LRSchedule

        if self.trial is None or not self.planned or not cost_per_step > 0:
            return
        schedule = LRSchedule.from_steps(self.planned, cost_per_step * self.step_scale)
        write_trial(self.trial, {LR_SCHEDULE_ATTR: schedule.to_dict()})

    def _check_against_recipe(self) -> None:
        """Forecasts in a convtune study assume the recipe's schedule: say so if this one differs."""
        if not self.planned:
            return
        expected = session.recipe().lr_per_step
        n = min(len(expected), len(self.planned))
        scale = max(max(expected), 1e-300)
        worst = max((abs(a - b) for a, b in zip(expected[:n], self.planned[:n], strict=True)), default=0.0)
        if len(self.planned) != len(expected) or worst > 1e-6 * scale:
            print(
                f"convtune: the framework's LR schedule ({len(self.planned)} steps) is not the trial "
                f"recipe's ({len(expected)} steps, largest difference {worst:.3g}); forecasts assume the "
                "recipe's. Build the optimizer and scheduler from the recipe "
                "(convtune.integrations.transformers.trainer_kwargs / lightning.configure_optimizers).",
                file=sys.stderr,
            )

    def value(self, *, max_cost: float | None = None) -> float:
        """``optuna`` mode: the value the objective returns (see :func:`trial_value`)."""
        assert self.trial is not None
        return trial_value(
            self.trial,
            target=self.target,
            step_scale=self.step_scale,
            diverged=self.status == "diverged",
            stopped=self.status == "stopped",
            max_cost=max_cost,
        )


def _is_number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def _target_of(trial: optuna.Trial | None, metric: str | None) -> Target:
    pruner = getattr(getattr(trial, "study", None), "pruner", None)
    target = getattr(pruner, "target", None)
    if isinstance(target, Target):
        if metric and metric != target.metric:
            return Target(metric=metric, op=target.op, value=target.value)
        return target
    raise ConfigError(
        "an Optuna trial needs the study's target to report against",
        where="ConvtuneCallback(trial=...)",
        fix="create the study with pruner=convtune.pruners.TimeToTargetPruner('metric<=value')",
    )


def trial_value(
    trial: optuna.Trial,
    *,
    target: Target | str | None = None,
    step_scale: int = 1,
    diverged: bool = False,
    stopped: bool = False,
    max_cost: float | None = None,
) -> float:
    """The value an Optuna objective returns for a trial that reported ``metric`` at cost steps,
    by convtune's outcome table, and the attrs that explain it.

    Reached: the measured time-to-target (``status: reached``). Stopped by the pruner or ended
    without reaching: a forecast beyond what it spent (``status: stopped``/``budget``,
    ``extrapolated: true``), never a penalty; a stop is a pause, not a verdict. Diverged, or no
    finite forecast below the penalty: the study objective's penalty
    (:func:`convtune.study.outcome.penalty_for_cap`: 10 to 20 × ``max_cost`` by the final gap to
    the target; no cap, no scale: from 1e12), and when diverged ``status: diverged`` with
    ``Trial.set_constraint("diverged", 1)``. Every
    trial so ends COMPLETE: loops that read ``study.best_trial`` (the Trainer's
    ``hyperparameter_search``) always find one. Values are in the reported cost unit (samples,
    or seconds for millisecond steps: ``step_scale=1000``).
    """
    from convtune.curves import time_to_target
    from convtune.study.outcome import penalty_base_for_cap, penalty_for_cap

    study = trial.study
    pruner = study.pruner
    goal = Target.parse(target) if target is not None else _target_of(trial, None)
    frozen = study._storage.get_trial(trial._trial_id)
    items = sorted(frozen.intermediate_values.items())
    costs = [float(step) for step, _ in items]
    values = [float(v) if v is not None else math.nan for _, v in items]
    spent = costs[-1] / step_scale if costs else 0.0
    cap = max_cost if max_cost is not None else getattr(pruner, "_max_cost", None)
    cap = float(cap) if cap else math.inf
    finite = [v for v in values if math.isfinite(v)]
    penalty = penalty_for_cap(cap, goal.gap(finite[-1]) if finite else math.inf)
    measured = time_to_target(costs, values, goal) / step_scale if costs else math.inf
    attrs: dict[str, Any]
    if math.isfinite(measured) and not diverged:
        attrs = {"status": "reached", "time_to_target": measured, "extrapolated": False}
        value = measured
    elif diverged or not costs or not all(math.isfinite(v) for v in values):
        attrs = {"status": "diverged", "extrapolated": False}
        value = penalty
    else:
        estimate = math.inf
        forecast_trial = getattr(pruner, "forecast_trial", None)
        if forecast_trial is not None:
            forecast = forecast_trial(study, frozen)
            attrs = dict(forecast.to_attrs())
            estimate = forecast.estimate / step_scale
        else:
            attrs = {}
        beyond = math.isfinite(estimate) and estimate > spent and estimate < penalty_base_for_cap(cap)
        value = estimate if beyond else penalty
        attrs.update(
            status="stopped" if stopped else "budget",
            predicted_time_to_target=estimate if math.isfinite(estimate) else None,
            extrapolated=True,
        )
    write_trial(trial, attrs)
    trial.set_constraint("diverged", float(attrs["status"] == "diverged"))
    return float(value)


__all__ = [
    "LR_SCHEDULE_ATTR",
    "TrainClock",
    "TrialLink",
    "current_lr",
    "planned_lrs",
    "recipe_in_effect",
    "trial_value",
]
