"""Whether a trial can still beat the incumbent, read from the pair of curves.

A pruner deciding against the incumbent asks whether the trial reaches the target before the
incumbent's time-to-target (plus a margin). The trial's own calibrated forecast answers from its
prefix alone; the incumbent enters as a cost. But the incumbent is finished, its whole curve is
known, and where the trial stands against it *at the same cost* (how much farther from the
target, how much faster or slower it is closing in) is evidence the forecast does not see: held
out by workload on the curve corpus, a logistic model of the pair separates trials that still
win from those that do not better than the forecast alone (ROC AUC higher on all 11 workloads;
``benchmarks/pairwise.py``, docs/benchmarks.md).

Its low tail is less safe than the forecast's, though (on one workload unlike the others it
would stop 3% of the winners at a budget where the forecast stops none), so a pruner stops on it
only when both are low: the forecast's probability below ``epsilon_forecast / rungs`` *and* the
pair's below ``epsilon / rungs`` (:class:`PairwiseRule`; its budgets are fitted with it).

numpy only at run time; the benchmark fits the model with scikit-learn
(:meth:`convtune.curves._reach.ReachModel.fit`, the same logistic form).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

from convtune.curves._reach import ReachModel

FEATURES = (
    "logit_p",  # logit of the trial's calibrated probability of reaching before the bar
    "log_gap_ratio",  # log(trial's distance to the target / incumbent's at the same cost)
    "log_cost_over_bar",  # log(cost spent / the bar)
    "progress",  # share of the trial's planned run seen
    "slope_trial",  # d log(distance) / d log(cost) over the trial's last two reports
    "slope_incumbent",  # the same for the incumbent at that cost
    "slope_diff",  # their difference
)
_TINY = 1e-12
_P_CLIP = 1e-4


def pair_features(
    probability: float,
    costs: np.ndarray,
    gaps: np.ndarray,
    horizon: float,
    incumbent_costs: np.ndarray,
    incumbent_gaps: np.ndarray,
    incumbent_time: float,
    bar: float,
) -> np.ndarray:
    """The feature vector (:data:`FEATURES`) of a trial judged at its latest report.

    ``costs`` and ``gaps`` are the trial's reports so far (distance to the target, as
    :meth:`convtune.config.target.Target.gap`), ``incumbent_costs`` and ``incumbent_gaps`` the
    incumbent's whole curve, which reached the target at ``incumbent_time``. Past that time the
    trial is compared with the incumbent's last distance before it reached.

    Example:
        >>> x = pair_features(0.2, np.array([1.0, 2.0]), np.array([0.4, 0.2]), 10.0,
        ...                   np.array([1.0, 2.0, 4.0]), np.array([0.2, 0.1, 0.0]), 4.0, 4.4)
        >>> [round(float(v), 3) for v in x]
        [-1.386, 0.693, -0.788, 0.2, -1.0, -1.0, 0.0]
    """
    c = float(costs[-1])
    before = incumbent_costs < incumbent_time
    at = min(c, float(incumbent_costs[before][-1])) if before.any() else c
    incumbent_gap = float(np.interp(at, incumbent_costs, incumbent_gaps))
    k = int(np.searchsorted(incumbent_costs, at, side="right")) - 1
    slope_trial = _log_slope(costs, gaps, costs.size - 1)
    slope_incumbent = _log_slope(incumbent_costs, incumbent_gaps, max(k, 1))
    ratio = math.log(max(float(gaps[-1]), _TINY) / max(incumbent_gap, _TINY))
    return np.array(
        [
            float(logit_feature(np.array([probability]))[0]),
            float(np.clip(ratio, -10.0, 10.0)),
            math.log(c / bar),
            c / horizon,
            slope_trial,
            slope_incumbent,
            slope_trial - slope_incumbent,
        ]
    )


def logit_feature(probability: np.ndarray) -> np.ndarray:
    """The first feature of :func:`pair_features` for many probabilities at once (clipped to
    [1e-4, 1 - 1e-4]: below that the forecast's calibration says nothing finer)."""
    p = np.clip(np.asarray(probability, dtype=float), _P_CLIP, 1.0 - _P_CLIP)
    return np.log(p / (1.0 - p))


def _log_slope(costs: np.ndarray, gaps: np.ndarray, k: int) -> float:
    """d log(gap) / d log(cost) over the reports ``k - 1`` and ``k``, clipped to ±5 (0 where
    undefined: a distance of 0 or a cost of 0)."""
    if k < 1 or k >= costs.size or not (gaps[k] > 0 and gaps[k - 1] > 0 and costs[k - 1] > 0):
        return 0.0
    s = math.log(gaps[k] / gaps[k - 1]) / math.log(costs[k] / costs[k - 1])
    return float(np.clip(s, -5.0, 5.0)) if math.isfinite(s) else 0.0


@dataclass(frozen=True)
class PairwiseRule:
    """The pair's model and the two budgets it was fitted with.

    A trial at a rung (``rungs`` of them in its life) is stopped when its forecast's probability
    of beating the incumbent is below ``epsilon_forecast / rungs`` and :meth:`probability` of its
    :func:`pair_features` is below ``epsilon / rungs``. ``fitted_on`` names the workloads.

    Example:
        >>> rule = PairwiseRule(ReachModel(np.zeros(7), np.ones(7), np.zeros(7), -5.0), 0.03, 0.02)
        >>> round(rule.probability(np.zeros(7)), 4), rule.stops(0.001, 0.003, rungs=2)
        (0.0067, True)
    """

    model: ReachModel
    epsilon_forecast: float
    epsilon: float
    fitted_on: tuple[str, ...] = ()

    def probability(self, features: np.ndarray) -> float:
        return self.model.probability(features)

    def stops(self, forecast_probability: float, pair_probability: float, rungs: int) -> bool:
        return (
            forecast_probability < self.epsilon_forecast / rungs and pair_probability < self.epsilon / rungs
        )

    def to_dict(self) -> dict[str, Any]:
        return {
            "features": list(FEATURES),
            "epsilon_forecast": self.epsilon_forecast,
            "epsilon": self.epsilon,
            "fitted_on": list(self.fitted_on),
            "model": self.model.to_dict(),
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> PairwiseRule:
        if list(data.get("features", FEATURES)) != list(FEATURES):
            raise ValueError("the pairwise model was fitted on other features than this convtune computes")
        return cls(
            ReachModel.from_dict(data["model"]),
            float(data["epsilon_forecast"]),
            float(data["epsilon"]),
            tuple(data.get("fitted_on", ())),
        )
