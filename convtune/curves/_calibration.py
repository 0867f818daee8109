"""Calibration of forecast crossing distributions, learned from recorded learning curves.

A curve model's own spread (Laplace draws of a handful of parameters fitted to a few points)
says little about how far off an extrapolation really is: families level off short of a target
the curve later reaches, and schedules change the curve in ways no prefix shows. So the raw
crossing distribution ``F`` (the share of model draws that cross by a cost ``t``) is mapped
through a monotone function ``g`` learned on recorded curves: ``P(crossed by t) = g(F(t))``
(distribution calibration, Kuleshov et al. 2018, by isotonic regression). Because ``g`` is
non-decreasing, ``g(F(t))`` is still a distribution over ``t``.

One map is learned per *situation*: whether the LR schedule is known, and how much of the
planned run has been seen (a tenth of a run says less than half of one). The shipped table,
``calibration.json`` beside this module, is regenerated on the recorded curve corpus by::

    python benchmarks/forecast.py --write-calibration convtune/curves/calibration.json

numpy/scipy only.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Any

import numpy as np
from scipy.optimize import isotonic_regression

DEFAULT_PATH = Path(__file__).with_name("calibration.json")
# Edges of the "share of the planned run seen" buckets; each bucket has its own map.
PROGRESS_EDGES = (0.15, 0.35, 0.6)
# Raw probabilities are pooled into at most this many bins before the isotonic fit: it keeps
# the shipped table small and the map smooth where data are sparse.
_MAX_BINS = 40


def situation(schedule_known: bool, progress: float | None) -> str:
    """The calibration key of a forecast: ``"sched:1"`` = schedule known, second progress bucket.

    ``progress`` is the share of the planned run seen (``None`` when there is no horizon).
    """
    head = "sched" if schedule_known else "blind"
    if progress is None or not math.isfinite(progress):
        return f"{head}:all"
    return f"{head}:{int(np.searchsorted(PROGRESS_EDGES, progress, side='right'))}"


@dataclass(frozen=True)
class CrossingCalibration:
    """Monotone maps from a raw crossing probability to a calibrated one, per situation.

    ``maps[key] = (x, y)``: knots of a non-decreasing piecewise-linear function on ``[0, 1]``.
    A key with no map (a situation never seen in fitting) falls back to the ``"<head>:all"``
    map, then to the identity.

    Example:
        >>> cal = CrossingCalibration({"sched:all": (np.array([0.0, 1.0]), np.array([0.1, 0.7]))})
        >>> float(cal.apply("sched:2", 0.5))
        0.4
    """

    maps: Mapping[str, tuple[np.ndarray, np.ndarray]] = field(default_factory=dict)
    fitted_on: tuple[str, ...] = ()

    def apply(self, key: str, p: float | np.ndarray) -> np.ndarray:
        knots = self.maps.get(key) or self.maps.get(key.split(":")[0] + ":all")
        p = np.clip(np.asarray(p, dtype=float), 0.0, 1.0)
        if knots is None:
            return p
        x, y = knots
        return np.interp(p, x, y)

    def to_dict(self) -> dict[str, Any]:
        return {
            "fitted_on": list(self.fitted_on),
            "progress_edges": list(PROGRESS_EDGES),
            "maps": {
                k: {"x": [round(float(a), 5) for a in x], "y": [round(float(b), 5) for b in y]}
                for k, (x, y) in sorted(self.maps.items())
            },
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> CrossingCalibration:
        maps = {
            str(k): (np.asarray(v["x"], dtype=float), np.asarray(v["y"], dtype=float))
            for k, v in data.get("maps", {}).items()
        }
        return cls(maps, tuple(data.get("fitted_on", ())))

    def save(self, path: str | Path) -> None:
        Path(path).write_text(json.dumps(self.to_dict(), indent=1) + "\n")

    @classmethod
    def load(cls, path: str | Path) -> CrossingCalibration:
        return cls.from_dict(json.loads(Path(path).read_text()))

    @classmethod
    def fit(
        cls,
        keys: Sequence[str],
        raw: Sequence[float] | np.ndarray,
        outcome: Sequence[float] | np.ndarray,
        weight: Sequence[float] | np.ndarray | None = None,
        *,
        fitted_on: Sequence[str] = (),
    ) -> CrossingCalibration:
        """Fit one map per key (and a pooled ``"<head>:all"`` map per head).

        Each record is a raw probability ``F(t)`` that a curve had crossed by some cost ``t``,
        and whether it had (1) or not (0). ``weight`` lets each workload count equally.
        """
        keys_arr = np.asarray(keys)
        p = np.clip(np.asarray(raw, dtype=float), 0.0, 1.0)
        y = np.asarray(outcome, dtype=float)
        w = np.ones_like(p) if weight is None else np.asarray(weight, dtype=float)
        maps: dict[str, tuple[np.ndarray, np.ndarray]] = {}
        groups: dict[str, np.ndarray] = {k: keys_arr == k for k in np.unique(keys_arr)}
        for head in {str(k).split(":")[0] for k in groups}:
            groups[f"{head}:all"] = np.char.startswith(keys_arr.astype(str), head + ":")
        for key, sel in groups.items():
            if np.count_nonzero(sel) >= 50:
                maps[str(key)] = _isotonic_map(p[sel], y[sel], w[sel])
        return cls(maps, tuple(fitted_on))


def _isotonic_map(p: np.ndarray, y: np.ndarray, w: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    order = np.argsort(p, kind="stable")
    p, y, w = p[order], y[order], w[order]
    # Equal-weight bins, with every exact tie (raw 0 and raw 1 are common) in one bin.
    cum = np.cumsum(w) / max(float(np.sum(w)), 1e-300)
    bins = np.minimum((cum * _MAX_BINS).astype(int), _MAX_BINS - 1)
    _, first = np.unique(p, return_index=True)
    tie_bin = bins[first][np.searchsorted(p[first], p, side="right") - 1]
    bins = tie_bin
    ids, inverse = np.unique(bins, return_inverse=True)
    bw = np.bincount(inverse, weights=w)
    bx = np.bincount(inverse, weights=w * p) / bw
    by = np.bincount(inverse, weights=w * y) / bw
    fitted = isotonic_regression(by, weights=bw, increasing=True).x
    x = np.concatenate(([0.0], bx, [1.0]))
    yy = np.concatenate(([fitted[0]], fitted, [fitted[-1]]))
    # np.interp needs increasing x; merge knots that coincide.
    x, keep = np.unique(x, return_index=True)
    return x, np.clip(yy[keep], 0.0, 1.0)


@lru_cache(maxsize=1)
def default_calibration() -> CrossingCalibration:
    """The shipped table (identity maps if it is missing)."""
    if DEFAULT_PATH.exists():
        return CrossingCalibration.load(DEFAULT_PATH)
    return CrossingCalibration()
