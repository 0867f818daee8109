"""Study specs for tests: a tiny digits study, cost in samples, no pruner, seed 0; the CLI
tests' tiny spec files (also the golden transcript's); and the shape of the session's shared tiny
study (the ``tiny_study`` fixture in ``conftest.py``)."""

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


# The CLI tests' spec files (``space.yaml`` and the spec naming it); tests/golden/make_golden.py
# runs the same study with the default pruner.
CLI_SPACE = {
    "peak_lr": {"low": 3.0e-3, "high": 3.0e-2, "log": True},
    "warmup_steps": {"low": 0, "high": 20},
    "horizon_samples": 8192,
    "schedule": {"choices": ["cosine", "cyclic"], "cyclic": {"half_period_steps": {"low": 10, "high": 40}}},
    "micro_batch_size": {"choices": [16, 32]},
    "optimizer": {"choices": ["adamw", "sgd"], "adamw": {"weight_decay": {"low": 0.0, "high": 0.1}}},
    "precision": "fp32",
}
CLI_SPEC = {
    "workload": "digits",
    "space": "space.yaml",
    "target": "accuracy>=0.9",
    "cost": "samples",
    "max_cost": 8192,
    "eval_every": {"samples": 1024},
    "pruner": "none",
    "seed": 0,
}

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
