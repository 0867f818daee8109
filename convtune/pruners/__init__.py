"""Optuna pruners that judge trials by when they will reach a quality target."""

from convtune.pruners._time_to_target import LR_SCHEDULE_ATTR, PruneDecision, TimeToTargetPruner

__all__ = ["LR_SCHEDULE_ATTR", "PruneDecision", "TimeToTargetPruner"]
