"""A trial's learning-rate schedule against cost, compact enough to live in an Optuna user attr."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

MAX_POINTS = 256


@dataclass(frozen=True, eq=False)
class LRSchedule:
    """The learning rate a trial uses at every cost of its whole planned run.

    ``costs`` is increasing and its last entry is the planned end of the run (the ``horizon``);
    ``lrs[i]`` is the LR in effect at ``costs[i]``; in between, the LR is linearly interpolated
    (``np.interp``), and outside it is held at the first / last value. The forecaster integrates
    this function, so what matters is the area and the timing of LR changes, not every step.

    Example:
        >>> s = LRSchedule.from_steps([0.1, 0.1, 0.05, 0.0], cost_per_step=32)
        >>> float(s.horizon), round(float(s.lr_at(80)), 6)
        (128.0, 0.075)
        >>> LRSchedule.from_dict(s.to_dict()).horizon == s.horizon
        True
    """

    costs: np.ndarray
    lrs: np.ndarray

    def __post_init__(self) -> None:
        costs = np.asarray(self.costs, dtype=float).reshape(-1)
        lrs = np.asarray(self.lrs, dtype=float).reshape(-1)
        if costs.size == 0 or costs.size != lrs.size:
            raise ValueError("LRSchedule needs as many costs as lrs, at least one")
        if not (np.all(np.isfinite(costs)) and np.all(np.isfinite(lrs))):
            raise ValueError("LRSchedule costs and lrs must be finite")
        if np.any(np.diff(costs) < 0):
            raise ValueError("LRSchedule costs must be non-decreasing")
        costs.setflags(write=False)
        lrs.setflags(write=False)
        object.__setattr__(self, "costs", costs)
        object.__setattr__(self, "lrs", lrs)

    @classmethod
    def from_steps(
        cls,
        lrs: Sequence[float] | np.ndarray,
        cost_per_step: float | Sequence[float] | np.ndarray = 1.0,
        *,
        max_points: int = MAX_POINTS,
    ) -> LRSchedule:
        """Build from the LR of every optimizer step of the planned run.

        ``cost_per_step`` is one number or one per step. Step ``i`` runs at ``lrs[i]`` and ends
        at the cumulative cost of steps ``0..i``. The result keeps at most ``max_points``
        points: piecewise-linear schedules (warm-up, linear decay, triangular cycles) are kept
        exactly by their breakpoints; otherwise the LR is averaged over equal cost bins, which
        keeps the LR area (what the loss responds to) and smooths cycles too fast to store.
        """
        lr = np.asarray(lrs, dtype=float).reshape(-1)
        if lr.size == 0:
            raise ValueError("LRSchedule.from_steps needs at least one step")
        per = np.broadcast_to(np.asarray(cost_per_step, dtype=float), lr.shape)
        costs = np.cumsum(per)
        return cls._compress(costs, lr, max_points)

    @classmethod
    def _compress(cls, costs: np.ndarray, lrs: np.ndarray, max_points: int) -> LRSchedule:
        n = costs.size
        if n <= max_points:
            return cls(costs, lrs)
        scale = max(float(np.max(np.abs(lrs))), 1e-300)
        slope = np.diff(lrs) / np.maximum(np.diff(costs), 1e-300)
        bends = np.flatnonzero(np.abs(np.diff(slope)) * np.diff(costs)[1:] > 1e-9 * scale) + 1
        keep = np.unique(np.concatenate(([0], bends, [n - 1])))
        if keep.size <= max_points:
            # Tiny per-step curvature (a cosine over 10^5 steps) hides below the bend test:
            # accept the breakpoints only if they reproduce every step.
            rebuilt = np.interp(costs, costs[keep], lrs[keep])
            if np.max(np.abs(rebuilt - lrs)) <= 1e-6 * scale:
                return cls(costs[keep], lrs[keep])
        # Bin-average: exact area per bin, at the bin's cost midpoint; endpoints kept so the
        # horizon and the starting LR survive. Bins are equal in cost plus LR variation, so a
        # short warm-up gets as many points as a long, slow decay.
        bins = max_points - 2
        variation = np.concatenate(([0.0], np.cumsum(np.abs(np.diff(lrs)))))
        progress = (costs - costs[0]) / max(costs[-1] - costs[0], 1e-300)
        if variation[-1] > 0:
            progress = progress + variation / variation[-1]
        edges = np.linspace(progress[0], progress[-1], bins + 1)
        which = np.clip(np.searchsorted(edges, progress, side="right") - 1, 0, bins - 1)
        counts = np.bincount(which, minlength=bins)
        sums = np.bincount(which, weights=lrs, minlength=bins)
        first = np.bincount(which, weights=costs, minlength=bins)
        filled = counts > 0
        mids = first[filled] / counts[filled]
        new_costs = np.concatenate(([costs[0]], mids, [costs[-1]]))
        new_lrs = np.concatenate(([lrs[0]], sums[filled] / counts[filled], [lrs[-1]]))
        return cls(new_costs, new_lrs)

    @property
    def horizon(self) -> float:
        """The cost at which the planned run ends."""
        return float(self.costs[-1])

    @property
    def peak(self) -> float:
        return float(np.max(self.lrs))

    def lr_at(self, costs: float | Sequence[float] | np.ndarray) -> np.ndarray:
        """The LR at the given costs (held constant before the first and after the last point)."""
        return np.interp(np.asarray(costs, dtype=float), self.costs, self.lrs)

    def to_dict(self) -> dict[str, Any]:
        """A compact JSON-able form (at most ``MAX_POINTS`` points, 7 significant digits)."""
        sched = self
        if self.costs.size > MAX_POINTS:
            sched = LRSchedule._compress(self.costs, self.lrs, MAX_POINTS)
        return {
            "costs": [float(f"{c:.7g}") for c in sched.costs],
            "lrs": [float(f"{v:.7g}") for v in sched.lrs],
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> LRSchedule:
        return cls(np.asarray(data["costs"], dtype=float), np.asarray(data["lrs"], dtype=float))

    @classmethod
    def from_record(cls, data: Any) -> LRSchedule | None:
        """The schedule a trial recorded (its ``lr_schedule`` attr), or ``None`` where it recorded
        none or one that cannot be read (a trial from an older convtune, or not convtune's): the
        forecast then goes on without it, as for any script that reports no schedule.

        Example:
            >>> LRSchedule.from_record({"costs": [0, 10], "lrs": [0.1, 0.0]}).horizon, LRSchedule.from_record(None)
            (10.0, None)
        """
        if not isinstance(data, Mapping):
            return None
        try:
            return cls.from_dict(data)
        except (KeyError, TypeError, ValueError):
            return None

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, LRSchedule):
            return NotImplemented
        return np.array_equal(self.costs, other.costs) and np.array_equal(self.lrs, other.lrs)

    def __hash__(self) -> int:
        return hash((self.costs.tobytes(), self.lrs.tobytes()))
