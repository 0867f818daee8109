"""What a study stores: the names of its stored attributes and the unit its values are in."""

from __future__ import annotations

SPEC_ATTR = "convtune_spec"
SCHEDULE_ATTR = "lr_schedule"


def step_scale(cost: str) -> int:
    """Report steps are integers: samples as they are, time in milliseconds."""
    return 1 if cost == "samples" else 1000


def cost_unit(cost: str) -> str:
    return "samples" if cost == "samples" else "seconds"
