"""The reach trees (check AA, docs/benchmarks.md): a gradient-boosted classifier of "reaches within
the planned run", read with numpy from JSON numbers, that sets ``P(crossed by the planned end)``
and its own reach threshold, only on curves whose features lie within the range it was fitted on."""

from __future__ import annotations

import math
from dataclasses import replace

import numpy as np
import pytest
from reach_curves import HORIZON, TARGET, prefix, schedule

from convtune.curves import CrossingCalibration, ReachTrees, forecast_time_to_target
from convtune.curves._calibration import default_calibration
from convtune.curves._reach import CurveSummary, tree_features


def maps_only() -> CrossingCalibration:
    """The shipped table without trees (whether it has them or not)."""
    return replace(default_calibration(), trees={})


def constant(
    probability: float, low: np.ndarray, high: np.ndarray, thresholds: tuple[float, ...]
) -> ReachTrees:
    """Trees that say ``probability`` for every curve within ``low``..``high``."""
    one = np.zeros((1, 1), dtype=int)
    value = np.array([[math.log(probability / (1 - probability))]])
    return ReachTrees(one, np.zeros((1, 1)), one, one, value, 0.0, low, high, thresholds)


def features_at(share: float) -> np.ndarray:
    c, y = prefix(share)
    return tree_features(CurveSummary.of(c, y, TARGET, schedule(), HORIZON))


def test_trees_read_back_from_scikit_learn_and_json_give_its_probabilities() -> None:
    from sklearn.ensemble import HistGradientBoostingClassifier

    rng = np.random.default_rng(0)
    x = rng.normal(size=(3000, 4))
    y = (x[:, 0] + x[:, 1] ** 2 - 0.5 * x[:, 2] * x[:, 3] + rng.normal(scale=0.5, size=3000) > 0.8).astype(
        int
    )
    fitted = HistGradientBoostingClassifier(max_iter=40, max_leaf_nodes=15, random_state=0).fit(x, y)
    trees = ReachTrees.from_sklearn(fitted, x, (0.1, 0.2))
    again = CrossingCalibration.from_dict(CrossingCalibration(trees={"sched": trees}).to_dict()).reach_trees(
        "sched:1@2"
    )
    assert again is not None
    probe = rng.normal(size=(200, 4))
    expected = fitted.predict_proba(probe)[:, 1]
    assert np.allclose([trees.probability(p) for p in probe], expected, atol=1e-12)
    assert np.allclose([again.probability(p) for p in probe], expected, atol=1e-9)
    assert np.array_equal(again.low, x.min(axis=0)) and again.thresholds == (0.1, 0.2)
    assert trees.covers(x[0]) and not trees.covers(x.max(axis=0) + 1.0)
    assert trees.threshold(1) == 0.2 and trees.threshold(5) == 0.2  # beyond the fitted buckets: the last


def test_trees_set_the_chance_by_the_end_and_their_threshold_makes_the_call() -> None:
    c, y = prefix(0.3)
    sched = schedule()
    x = features_at(0.3)
    maps = forecast_time_to_target(c, y, TARGET, schedule=sched, calibration=maps_only())
    assert 0.1 < maps.probability < 0.9 and maps.estimate <= HORIZON
    wide = (x - 1.0, x + 1.0)
    half = replace(maps_only(), trees={"sched": constant(maps.probability / 2, *wide, (0.0, 0.0, 0.0))})
    lowered = forecast_time_to_target(c, y, TARGET, schedule=sched, calibration=half)
    assert lowered.probability == pytest.approx(maps.probability / 2, rel=1e-6)
    assert lowered.cdf_costs == maps.cdf_costs  # the same distribution, scaled
    for t in np.linspace(c[-1], HORIZON, 7):
        assert lowered.probability_before(t) == pytest.approx(0.5 * maps.probability_before(t), abs=1e-9)
    assert lowered.estimate <= HORIZON  # above the trees' threshold: called reaching
    # The same probability under a threshold above it (the bucket of 30% of the run seen is 1).
    strict = replace(maps_only(), trees={"sched": constant(maps.probability / 2, *wide, (0.0, 0.99, 0.0))})
    assert not forecast_time_to_target(c, y, TARGET, schedule=sched, calibration=strict).estimate <= HORIZON
    # A forecast not told the schedule reads the "blind" trees, here none: the maps speak.
    blind = forecast_time_to_target(c, y, TARGET, horizon=HORIZON, calibration=half)
    assert blind == forecast_time_to_target(c, y, TARGET, horizon=HORIZON, calibration=maps_only())


def test_a_curve_outside_the_range_the_trees_were_fitted_on_is_left_to_the_maps() -> None:
    c, y = prefix(0.3)
    sched = schedule()
    x = features_at(0.3)
    maps = forecast_time_to_target(c, y, TARGET, schedule=sched, calibration=maps_only())
    low, high = x - 1.0, x + 1.0
    high[0] = x[0] - 0.5  # one feature beyond what the trees saw
    cal = replace(maps_only(), trees={"sched": constant(0.01, low, high, (0.5,))})
    assert forecast_time_to_target(c, y, TARGET, schedule=sched, calibration=cal) == maps
