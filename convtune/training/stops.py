"""When a trial stops on its own: divergence and the cost budget, one implementation for every executor.

The engine applies these rules after every optimizer step; the script executor applies the ones
a script's reports can show (a non-finite metric, the budget) at every report. Each check returns
the reason as a sentence, or ``""`` when the run goes on, so callers record the same words.

Example:
    >>> rules = StopRules(max_cost=1000.0, max_skipped_steps=2)
    >>> rules.after_step(step=1, loss=0.7)
    ''
    >>> rules.after_step(step=2, loss=float("nan"))
    'non-finite training loss at step 2'
    >>> rules.budget(cost=1000.0)
    'max_cost 1000 reached'
"""

from __future__ import annotations

import math
from dataclasses import dataclass


@dataclass
class StopRules:
    """Divergence (non-finite loss or metric, loss scale below 1, ``max_skipped_steps`` fp16 steps
    skipped in a row) and the budget (cost at or past ``max_cost``).

    It counts skipped steps across calls (``skipped_total`` is the run's record; a resumed run
    sets it back from its checkpoint).
    """

    max_cost: float = math.inf
    max_skipped_steps: int = 8
    skipped_in_row: int = 0
    skipped_total: int = 0

    def after_step(
        self, *, step: int, loss: float, scale_before: float | None = None, scale_after: float | None = None
    ) -> str:
        """Divergence after optimizer step ``step``: its training loss and, under a GradScaler, the
        loss scale before and after the step (a fall means the step was skipped)."""
        if not math.isfinite(loss):
            return f"non-finite training loss at step {step}"
        if scale_before is None or scale_after is None:
            return ""
        if scale_after < scale_before:
            self.skipped_in_row += 1
            self.skipped_total += 1
        else:
            self.skipped_in_row = 0
        if scale_after < 1.0:
            return f"loss scale fell below 1 at step {step}"
        if self.skipped_in_row >= self.max_skipped_steps:
            return f"{self.skipped_in_row} fp16 steps skipped in a row at step {step}"
        return ""

    @staticmethod
    def metric(name: str, value: float, *, step: int) -> str:
        """Divergence read from a reported metric: a NaN or infinite value."""
        return "" if math.isfinite(float(value)) else f"non-finite {name} at step {step}"

    def budget(self, cost: float) -> str:
        """The budget: ``cost`` (in the study's cost unit) at or past ``max_cost``."""
        return self.budget_reason if cost >= self.max_cost else ""

    @property
    def budget_reason(self) -> str:
        """Why a run ended on its budget (also where another rank's clock reached it first)."""
        return f"max_cost {self.max_cost:g} reached"


__all__ = ["StopRules"]
