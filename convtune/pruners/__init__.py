"""Optuna pruners that judge trials by when they will reach a quality target."""

from convtune.pruners._time_to_target import (
    LR_SCHEDULE_ATTR,
    STOP_PROBABILITY_ATTR,
    STOP_THRESHOLD_ATTR,
    PruneDecision,
    TimeToTargetPruner,
    reach_probability,
)

__all__ = [
    "LR_SCHEDULE_ATTR",
    "STOP_PROBABILITY_ATTR",
    "STOP_THRESHOLD_ATTR",
    "PruneDecision",
    "TimeToTargetPruner",
    "reach_probability",
]
