"""Study specs for tests: a tiny digits study, cost in samples, no pruner, seed 0."""

from __future__ import annotations

from typing import Any

from convtune.config.spec import StudySpec


def digits_spec(space: dict[str, Any], **fields: Any) -> StudySpec:
    """A digits spec over ``space``; ``fields`` (target, max_cost, eval_every, ...) override the defaults."""
    data: dict[str, Any] = {
        "workload": "digits",
        "space": space,
        "cost": "samples",
        "pruner": "none",
        "seed": 0,
    }
    return StudySpec.from_dict(data | fields)
