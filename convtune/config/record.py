"""What a study stores, typed: the trial record, its status, and the study's own attributes.

A trial's record lives in its Optuna user attributes (so optuna-dashboard and any Optuna tool
show it). This module is the only one that reads or writes them (storage's leases aside): the
objective writes a trial's outcome with :func:`write_trial`, and every reader (best, scaling,
export, plots, dashboard) reads :class:`TrialRecord.of(trial) <TrialRecord>`.

    >>> record = TrialRecord.of(trial)                                   # doctest: +SKIP
    >>> record.status is TrialStatus.REACHED, record.time_to_target      # doctest: +SKIP
    (True, 1901.7)

Studies written by older versions stay readable: a confirmation run was marked ``confirmed`` by
some versions and ``confirm`` by others; :attr:`TrialRecord.confirmation` reads either.
"""

from __future__ import annotations

import enum
import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Protocol

# Study attributes.
SPEC_ATTR = "convtune_spec"  # the whole spec, as created
CONFIRMATIONS_ATTR = "confirmations"  # confirm's plans, and the measured side once they ran
BASELINE_ATTR = "baseline"  # the user's own recipe (study), and the trial that runs it (trial)
# Trial attributes read by name outside the record (the pruner reads the schedule).
SCHEDULE_ATTR = "lr_schedule"
STATUS_ATTR = "status"
CONFIRM_ATTR = "confirm"
_OLD_CONFIRM_ATTR = "confirmed"  # written beside ``confirm`` by earlier versions; read, not written


class TrialStatus(enum.StrEnum):
    """How a trial ended (the outcome table in :mod:`convtune.study.objective`, decided in :mod:`convtune.study.outcome`).

    A ``str`` enum: it is stored as its value and compares equal to it.
    """

    REACHED = "reached"  # target reached: value is the measured time-to-target
    STOPPED = "stopped"  # stopped by the pruner: value is the forecast, else the penalty
    BUDGET = "budget"  # cap reached, target not: value is the forecast beyond the cap, else the penalty
    DIVERGED = "diverged"  # penalty, infeasible
    OOM = "oom"  # out of memory (or over ``max_memory_mb``): penalty, infeasible
    FAILED = "failed"  # crashed: Optuna state FAIL
    DUPLICATE = "duplicate"  # the same configuration trained before: its outcome, not trained again
    INTERRUPTED = "interrupted"  # Ctrl-C: FAIL, not retried
    PREEMPTED = "preempted"  # SIGTERM: FAIL, re-queued

    @classmethod
    def parse(cls, value: Any) -> TrialStatus | None:
        """The status stored as ``value``; None for a running trial or an unknown word."""
        try:
            return cls(value) if value is not None else None
        except ValueError:
            return None


TRAINED = frozenset(
    {TrialStatus.REACHED, TrialStatus.STOPPED, TrialStatus.BUDGET, TrialStatus.DIVERGED, TrialStatus.OOM}
)
UNREACHED = frozenset({TrialStatus.STOPPED, TrialStatus.BUDGET})


# optuna-dashboard shows each user attribute on one line of its trial page, a list or mapping as
# unbroken JSON: a curve or a schedule made that page thousands of pixels wide. Such bulky values
# live in the trial's system attributes (under this prefix) and TrialRecord reads both.
_BULKY_PREFIX = "convtune:"
_SHOWN_CHARS = 80


def _is_bulky(value: Any) -> bool:
    if value is None or isinstance(value, str | bool | int | float):
        return False
    try:
        return len(json.dumps(value)) > _SHOWN_CHARS
    except (TypeError, ValueError):
        return False


def _bulky_attrs(trial: Any) -> dict[str, Any]:
    stored = getattr(trial, "system_attrs", None)
    if stored is None and getattr(trial, "storage", None) is not None:
        stored = trial.storage.get_trial_system_attrs(trial._trial_id)
    return {
        key[len(_BULKY_PREFIX) :]: value
        for key, value in (stored or {}).items()
        if key.startswith(_BULKY_PREFIX)
    }


class _Trial(Protocol):
    """An Optuna trial, frozen or live (only what the record reads)."""

    number: int

    @property
    def user_attrs(self) -> dict[str, Any]: ...


@dataclass(frozen=True)
class TrialRecord:
    """One trial's stored record, typed. ``attrs`` keeps every stored attribute, for the plots
    and for fields this class does not name."""

    number: int
    state: str  # Optuna's state name: COMPLETE, FAIL, RUNNING, ...
    value: float | None
    params: Mapping[str, Any]
    status: TrialStatus | None
    time_to_target: float | None = None
    predicted_time_to_target: float | None = None
    recipe: Mapping[str, Any] | None = None
    effective_batch_size: int | None = None
    samples_per_second: float | None = None
    final_metric: float | None = None
    reason: str | None = None
    error: str | None = None
    seed: int | None = None
    confirm_id: str | None = None
    confirmation: bool = False
    baseline: bool = False
    forecast_low: float | None = None
    forecast_high: float | None = None
    forecast_estimate: float | None = None
    forecast_level: float | None = None
    forecast_n_points: int | None = None
    steps: int | None = None
    train_seconds: float | None = None
    curve: Mapping[str, Any] = field(default_factory=dict)
    attrs: Mapping[str, Any] = field(default_factory=dict)

    @classmethod
    def of(cls, trial: _Trial) -> TrialRecord:
        """The record of ``trial`` (an Optuna ``FrozenTrial`` or a running ``Trial``)."""
        attrs = {**_bulky_attrs(trial), **trial.user_attrs}
        state = getattr(trial, "state", None)
        return cls(
            number=trial.number,
            state=state.name if state is not None else "RUNNING",
            value=getattr(trial, "value", None) if state is not None else None,
            params=dict(getattr(trial, "params", {})),
            status=TrialStatus.parse(attrs.get(STATUS_ATTR)),
            time_to_target=attrs.get("time_to_target"),
            predicted_time_to_target=attrs.get("predicted_time_to_target"),
            recipe=attrs.get("recipe"),
            effective_batch_size=attrs.get("effective_batch_size"),
            samples_per_second=attrs.get("samples_per_second"),
            final_metric=attrs.get("final_metric"),
            reason=attrs.get("reason"),
            error=attrs.get("error"),
            seed=attrs.get("seed"),
            confirm_id=attrs.get("confirm_id"),
            confirmation=bool(attrs.get(CONFIRM_ATTR) or attrs.get(_OLD_CONFIRM_ATTR)),
            baseline=attrs.get(BASELINE_ATTR) is True,
            forecast_low=attrs.get("forecast_low"),
            forecast_high=attrs.get("forecast_high"),
            forecast_estimate=attrs.get("forecast_estimate"),
            forecast_level=attrs.get("forecast_level"),
            forecast_n_points=attrs.get("forecast_n_points"),
            steps=attrs.get("steps"),
            train_seconds=attrs.get("train_seconds"),
            curve=attrs.get("curve") or {},
            attrs=attrs,
        )

    @property
    def stored_status(self) -> str | None:
        """The status as stored (a plain string, for YAML and JSON documents)."""
        return None if self.status is None else self.status.value

    @property
    def complete(self) -> bool:
        return self.state == "COMPLETE"

    @property
    def reached(self) -> bool:
        """Reached the target (a measured time-to-target)."""
        return self.complete and self.status is TrialStatus.REACHED

    @property
    def has_curve(self) -> bool:
        return "curve" in self.attrs

    @property
    def schedule(self) -> Mapping[str, Any] | None:
        """The LR schedule over cost the trial planned (stored at its first evaluation)."""
        return self.attrs.get(SCHEDULE_ATTR)

    @property
    def time(self) -> float | None:
        """Measured time-to-target, else the forecast one."""
        return self.time_to_target or self.predicted_time_to_target

    def summary(self) -> dict[str, Any]:
        """The trial as ``convtune study best --json`` and ``show`` print it."""
        return {
            "trial": self.number,
            "state": self.state,
            "status": self.stored_status,
            "value": self.value,
            "time_to_target": self.time_to_target,
            "predicted_time_to_target": self.predicted_time_to_target,
            "params": dict(self.params),
            "recipe": self.recipe,
            "effective_batch_size": self.effective_batch_size,
            "samples_per_second": self.samples_per_second,
            "final_metric": self.final_metric,
            "reason": self.reason or self.error,
        }


def records(study: Any, states: tuple[Any, ...] | None = None) -> list[TrialRecord]:
    """Every trial's record (of the given Optuna states), in trial order."""
    return [TrialRecord.of(t) for t in study.get_trials(deepcopy=False, states=states)]


# ---- writing --------------------------------------------------------------------------------------


def write_trial(trial: Any, attrs: Mapping[str, Any]) -> None:
    """Store ``attrs`` on a running trial (its outcome, its recipe, a failure's error, ...)."""
    for key, value in attrs.items():
        if _is_bulky(value) and getattr(trial, "storage", None) is not None:
            trial.storage.set_trial_system_attr(trial._trial_id, _BULKY_PREFIX + key, value)
        else:
            trial.set_user_attr(key, value.value if isinstance(value, TrialStatus) else value)


def write_status(trial: Any, status: TrialStatus, **attrs: Any) -> None:
    """Store a trial's status, with the attributes that explain it (``reason``, ``error``, ...)."""
    write_trial(trial, {STATUS_ATTR: status.value, **attrs})


def write_stored_trial(storage: Any, trial_id: int, attrs: Mapping[str, Any]) -> None:
    """Store ``attrs`` on a trial through its storage (a trial not running in this process)."""
    for key, value in attrs.items():
        if _is_bulky(value):
            storage.set_trial_system_attr(trial_id, _BULKY_PREFIX + key, value)
        else:
            storage.set_trial_user_attr(trial_id, key, value)


def enqueued(
    *, seed: int | None = None, confirm_id: str | None = None, baseline: bool = False
) -> dict[str, Any]:
    """The attributes an enqueued trial starts with: its training seed, a confirmation's id, or
    the baseline mark (for ``study.enqueue_trial(params, user_attrs=...)``)."""
    attrs: dict[str, Any] = {}
    if baseline:
        attrs[BASELINE_ATTR] = True
    if confirm_id is not None:
        attrs.update({CONFIRM_ATTR: True, "confirm_id": confirm_id})
    if seed is not None:
        attrs["seed"] = seed
    return attrs


def is_stopped(trial: Any) -> bool:
    """Whether the pruner stopped ``trial`` (its stored status), without building its record."""
    return trial.user_attrs.get(STATUS_ATTR) == TrialStatus.STOPPED.value


def is_enqueued_repeat(trial: Any) -> bool:
    """An enqueued trial (fixed params) or one with its own seed: asked for by name, always trained."""
    return "fixed_params" in trial.system_attrs or "seed" in trial.user_attrs


# ---- the study's own attributes --------------------------------------------------------------------


def study_attr(study: Any, key: str, default: Any = None) -> Any:
    """A study attribute (the spec, confirmations, the baseline recipe, probe results, ...)."""
    return study.user_attrs.get(key, default)


def set_study_attr(study: Any, key: str, value: Any) -> None:
    study.set_user_attr(key, value)


def study_attrs(study: Any) -> Mapping[str, Any]:
    """Every study attribute (a ``FrozenStudy`` from ``get_all_studies`` too)."""
    return study.user_attrs


# ---- units ---------------------------------------------------------------------------------------


def step_scale(cost: str) -> int:
    """Report steps are integers: samples as they are, time in milliseconds."""
    return 1 if cost == "samples" else 1000


def cost_unit(cost: str) -> str:
    return "samples" if cost == "samples" else "seconds"
