"""Optuna pruners that judge trials by when they will reach a quality target."""

from convtune.pruners._gap import GapPruner
from convtune.pruners._time_to_target import (
    DEFAULT_BEHIND_NOISE,
    DEFAULT_COMEBACK_VETO,
    DEFAULT_EPSILON,
    DEFAULT_EPSILON_BEHIND,
    DEFAULT_EXACT_MARGIN,
    DEFAULT_JUMP_VETO,
    DEFAULT_MARGIN,
    DEFAULT_PLATEAU_REFERENCES,
    DEFAULT_REQUIRE_BEHIND,
    DEFAULT_STUDY_SHIFT,
    DISTRUSTED_ATTR,
    LR_SCHEDULE_ATTR,
    STOP_PROBABILITY_ATTR,
    STOP_THRESHOLD_ATTR,
    PruneDecision,
    TimeToTargetPruner,
    reach_probability,
)

__all__ = [
    "DEFAULT_BEHIND_NOISE",
    "DEFAULT_COMEBACK_VETO",
    "DEFAULT_EPSILON",
    "DEFAULT_EPSILON_BEHIND",
    "DEFAULT_EXACT_MARGIN",
    "DEFAULT_JUMP_VETO",
    "DEFAULT_MARGIN",
    "DEFAULT_PLATEAU_REFERENCES",
    "DEFAULT_REQUIRE_BEHIND",
    "DEFAULT_STUDY_SHIFT",
    "GapPruner",
    "DISTRUSTED_ATTR",
    "LR_SCHEDULE_ATTR",
    "STOP_PROBABILITY_ATTR",
    "STOP_THRESHOLD_ATTR",
    "PruneDecision",
    "TimeToTargetPruner",
    "reach_probability",
]
