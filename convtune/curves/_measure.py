"""Measured time-to-target: where a recorded curve first crossed the target."""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

from convtune.config.target import Target


def as_target(target: Target | str) -> Target:
    return target if isinstance(target, Target) else Target.parse(target)


def merge_repeats(c: np.ndarray, y: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Points at the same cost merged into one at their mean value, in cost order: a fit never
    sees a vertical jump.

    Example:
        >>> merge_repeats(np.array([2.0, 1.0, 2.0]), np.array([3.0, 5.0, 1.0]))
        (array([1., 2.]), array([5., 2.]))
    """
    if not c.size:
        return c, y
    unique, inverse = np.unique(c, return_inverse=True)
    return unique, np.bincount(inverse, weights=y) / np.bincount(inverse)


def time_to_target(
    costs: Sequence[float] | np.ndarray,
    values: Sequence[float] | np.ndarray,
    target: Target | str,
) -> float:
    """The cost at which a recorded curve first reached ``target``; ``math.inf`` if it never did.

    The crossing is interpolated linearly between the two evaluations around it (the last one
    that missed and the first one that reached), as the design's "measured time-to-target"
    says. When the very first evaluation already reaches, its cost is returned. Points are
    taken in cost order; non-finite values never count as reaching.

    Example:
        >>> time_to_target([100, 200, 300], [3.0, 2.0, 1.0], "val_loss<=1.5")
        250.0
    """
    tgt = as_target(target)
    c = np.asarray(costs, dtype=float).reshape(-1)
    v = np.asarray(values, dtype=float).reshape(-1)
    n = min(c.size, v.size)
    if n == 0:
        return math.inf
    c, v = c[:n], v[:n]
    ok = np.isfinite(c)
    c, v = c[ok], v[ok]
    order = np.argsort(c, kind="stable")
    c, v = c[order], v[order]
    for i in range(c.size):
        if not tgt.is_reached(float(v[i])):
            continue
        if i == 0 or not math.isfinite(v[i - 1]):
            return float(c[i])
        v0, v1, c0, c1 = float(v[i - 1]), float(v[i]), float(c[i - 1]), float(c[i])
        if v1 == v0:
            return c1
        frac = min(1.0, max(0.0, (tgt.value - v0) / (v1 - v0)))
        return c0 + frac * (c1 - c0)
    return math.inf
