"""Studies: create and open them, the Objective that runs one trial (the outcome table), the run loop, its worker processes."""

from convtune.study.objective import (
    Objective,
    TrialEvent,
    TrialFailed,
    create_study,
    describe_error,
    engine_config,
    finished_twin,
    make_pruner,
    make_sampler,
    open_study,
    penalty,
    penalty_base,
    record_outcome,
    same_configuration,
    schedule_for,
)
from convtune.study.run import (
    EXECUTORS,
    HooksFactory,
    StudyHooks,
    check_run_arguments,
    run_study,
)
from convtune.study.signals import (
    Preempted,
    preemptible,
)

__all__ = [
    "EXECUTORS",
    "HooksFactory",
    "Objective",
    "Preempted",
    "StudyHooks",
    "TrialEvent",
    "TrialFailed",
    "check_run_arguments",
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
]

# Names other modules and user code import from ``convtune.study``; their homes are lower layers.
from convtune.config.record import SCHEDULE_ATTR, SPEC_ATTR, cost_unit, step_scale  # noqa: E402
from convtune.execution.executor import Executor, InProcessExecutor  # noqa: E402

__all__ += ["SCHEDULE_ATTR", "SPEC_ATTR", "Executor", "InProcessExecutor", "cost_unit", "step_scale"]
