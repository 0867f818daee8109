"""The synthetic curve the reach-model and within-the-run tests forecast: a power law seen every
500 samples of a 20,000-sample run under a linear decay, with a target it reaches late."""

from __future__ import annotations

import numpy as np

from convtune.curves import LRSchedule

HORIZON = 20_000.0
EVERY = 500.0
TARGET = "val_loss<=0.9"


def curve(c: np.ndarray) -> np.ndarray:
    return 0.5 + 3.0 * (c / EVERY) ** -0.5


def prefix(share: float) -> tuple[np.ndarray, np.ndarray]:
    """The curve's evaluations up to ``share`` of the planned run."""
    c = np.arange(EVERY, share * HORIZON + 1, EVERY)
    return c, curve(c)


def schedule() -> LRSchedule:
    return LRSchedule.from_steps(np.linspace(1.0, 0.0, 200), cost_per_step=HORIZON / 200)
