"""Studies: create and open them, the Objective that runs one trial (the outcome table), the run
loop, its worker processes.

Names load on first use, so that a worker process, which imports :mod:`convtune.study.workers`
before it pins its cores, does not load torch (and its thread pools) first.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

# name -> the module that defines it (some live in lower layers and are kept importable here)
_HOMES = {
    "EXECUTORS": "convtune.study.run",
    "Executor": "convtune.execution.executor",
    "HooksFactory": "convtune.study.run",
    "InProcessExecutor": "convtune.execution.executor",
    "Objective": "convtune.study.objective",
    "Preempted": "convtune.study.signals",
    "SCHEDULE_ATTR": "convtune.config.record",
    "SPEC_ATTR": "convtune.config.record",
    "StudyHooks": "convtune.study.run",
    "TrialEvent": "convtune.study.objective",
    "TrialFailed": "convtune.study.objective",
    "check_run_arguments": "convtune.study.run",
    "cost_unit": "convtune.config.record",
    "create_study": "convtune.study.objective",
    "describe_error": "convtune.study.outcome",
    "engine_config": "convtune.study.objective",
    "finished_twin": "convtune.study.objective",
    "make_pruner": "convtune.study.objective",
    "make_sampler": "convtune.study.objective",
    "open_study": "convtune.study.objective",
    "penalty": "convtune.study.outcome",
    "penalty_base": "convtune.study.outcome",
    "preemptible": "convtune.study.signals",
    "record_outcome": "convtune.study.outcome",
    "run_study": "convtune.study.run",
    "same_configuration": "convtune.study.objective",
    "schedule_for": "convtune.study.objective",
    "step_scale": "convtune.config.record",
}

__all__ = [
    "EXECUTORS",
    "Executor",
    "HooksFactory",
    "InProcessExecutor",
    "Objective",
    "Preempted",
    "SCHEDULE_ATTR",
    "SPEC_ATTR",
    "StudyHooks",
    "TrialEvent",
    "TrialFailed",
    "check_run_arguments",
    "cost_unit",
    "create_study",
    "describe_error",
    "engine_config",
    "finished_twin",
    "make_pruner",
    "make_sampler",
    "open_study",
    "penalty",
    "penalty_base",
    "preemptible",
    "record_outcome",
    "run_study",
    "same_configuration",
    "schedule_for",
    "step_scale",
]


def __getattr__(name: str) -> Any:
    if name in _HOMES:
        return getattr(importlib.import_module(_HOMES[name]), name)
    raise AttributeError(f"module 'convtune.study' has no attribute {name!r}")


if TYPE_CHECKING:
    from convtune.config.record import SCHEDULE_ATTR, SPEC_ATTR, cost_unit, step_scale
    from convtune.execution.executor import Executor, InProcessExecutor
    from convtune.study.objective import (
        Objective,
        TrialEvent,
        TrialFailed,
        create_study,
        engine_config,
        finished_twin,
        make_pruner,
        make_sampler,
        open_study,
        same_configuration,
        schedule_for,
    )
    from convtune.study.outcome import describe_error, penalty, penalty_base, record_outcome
    from convtune.study.run import EXECUTORS, HooksFactory, StudyHooks, check_run_arguments, run_study
    from convtune.study.signals import Preempted, preemptible
