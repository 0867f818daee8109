"""Study specs for tests: a tiny digits study, cost in samples, no pruner, seed 0; and the
shape of the session's shared tiny study (the ``tiny_study`` fixture in ``conftest.py``)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
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


TINY_SPACE = {
    "peak_lr": {"choices": [3.0e-3, 1.0e-2]},
    "warmup_steps": 4,
    "horizon_samples": 8192,
    "schedule": "cosine",
    "micro_batch_size": 32,
    "optimizer": "adamw",
}


@dataclass(frozen=True)
class TinyStudy:
    """A finished digits study (cost: samples, no pruner) stored in ``directory/study.db``.

    Trial 0 is the baseline (``peak_lr`` 3e-3); trial 1 (``peak_lr`` 1e-2) is a confirmation
    run marked the way earlier versions marked them (``confirmed``), so reading old studies is
    exercised too. Both reach ``accuracy>=0.9``; both carry the dashboard's plot and summary.
    """

    name: str
    directory: Path

    @property
    def url(self) -> str:
        return f"sqlite:///{self.directory / 'study.db'}"
