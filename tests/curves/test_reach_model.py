"""The reach model of the calibration: it only ever lowers a forecast's probability, and only
where it is confident; it survives JSON; the shipped table has one per situation."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest
from reach_curves import HORIZON, TARGET, prefix, schedule

from convtune.curves import CrossingCalibration, ReachModel, forecast_time_to_target
from convtune.curves._calibration import DEFAULT_PATH, default_calibration, without_trees
from convtune.curves._reach import TAIL, CurveSummary, feature_names, reach_features


def model(intercept: float, n: int) -> ReachModel:
    return ReachModel(np.zeros(n), np.ones(n), np.zeros(n), intercept)


def test_a_confident_reach_model_caps_the_distribution_and_never_raises_it() -> None:
    c, y = prefix(0.3)
    sched = schedule()
    n = len(feature_names(True))
    maps_only = forecast_time_to_target(
        c, y, TARGET, schedule=sched, calibration=without_trees(default_calibration())
    )
    base = default_calibration()
    hopeless = CrossingCalibration(base.maps, (), base.thresholds, base.blends, {"sched:1": model(-20.0, n)})
    capped = forecast_time_to_target(c, y, TARGET, schedule=sched, calibration=hopeless)
    assert maps_only.probability > 0.3  # the maps alone expect this curve to get there
    assert capped.probability < 1e-6 and not capped.estimate <= HORIZON
    for t in np.linspace(c[-1], HORIZON, 13):
        assert capped.probability_before(t) <= maps_only.probability_before(t) + 1e-12
    probs = np.asarray(capped.cdf_probs)
    assert np.all(np.diff(probs) >= 0)


def test_reach_max_lowering_bounds_how_far_the_model_pulls_below_the_maps() -> None:
    c, y = prefix(0.3)
    sched = schedule()
    n = len(feature_names(True))
    base = default_calibration()
    plain = CrossingCalibration(base.maps, (), base.thresholds, base.blends)
    hopeless = CrossingCalibration(base.maps, (), base.thresholds, base.blends, {"sched:1": model(-20.0, n)})
    maps = forecast_time_to_target(c, y, TARGET, schedule=sched, calibration=plain)
    unbounded = forecast_time_to_target(c, y, TARGET, schedule=sched, calibration=hopeless)
    bounded = forecast_time_to_target(
        c, y, TARGET, schedule=sched, calibration=hopeless, reach_max_lowering=10
    )
    infinite = forecast_time_to_target(
        c, y, TARGET, schedule=sched, calibration=hopeless, reach_max_lowering=math.inf
    )
    assert infinite == unbounded  # inf: no bound, as without the option (MAX_LOWERING is None)
    assert maps.probability > 0.3 and unbounded.probability < 1e-6
    assert bounded.probability == pytest.approx(maps.probability / 10, rel=1e-9)
    for t in np.linspace(c[-1], HORIZON, 13):
        m, b = maps.probability_before(t), bounded.probability_before(t)
        assert m / 10 - 1e-12 <= b <= m + 1e-12
    assert np.all(np.diff(np.asarray(bounded.cdf_probs)) >= 0)
    # A model that does not cap leaves a bound nothing to do.
    assert (
        forecast_time_to_target(c, y, TARGET, schedule=sched, calibration=plain, reach_max_lowering=10)
        == maps
    )


def test_a_reach_model_above_its_tail_changes_nothing() -> None:
    c, y = prefix(0.3)
    sched = schedule()
    n = len(feature_names(True))
    base = default_calibration()
    plain = CrossingCalibration(base.maps, (), base.thresholds, base.blends)
    unsure = CrossingCalibration(
        base.maps, (), base.thresholds, base.blends, {"sched:1": model(math.log(TAIL / (1 - TAIL)) + 1e-3, n)}
    )
    a = forecast_time_to_target(c, y, TARGET, schedule=sched, calibration=plain)
    b = forecast_time_to_target(c, y, TARGET, schedule=sched, calibration=unsure)
    assert a == b


def test_reach_models_survive_json_and_fall_back_to_an_earlier_share_of_the_run() -> None:
    rng = np.random.default_rng(0)
    x = rng.normal(size=(400, 3))
    crossed = (x[:, 0] + 0.3 * rng.normal(size=400) > 0).astype(float)
    fitted = ReachModel.fit(x, crossed)
    assert (
        fitted.probability(np.array([-3.0, 0.0, 0.0]))
        < 0.05
        < 0.95
        < fitted.probability(np.array([3.0, 0, 0]))
    )
    cal = CrossingCalibration(reach={"sched:1": fitted})
    back = CrossingCalibration.from_dict(json.loads(json.dumps(cal.to_dict())))
    probe = np.array([0.5, -1.0, 2.0])
    assert back.reach_model("sched:3") is not None  # a later share reads the nearest earlier one
    assert math.isclose(
        back.reach_model("sched:3").probability(probe), fitted.probability(probe), rel_tol=1e-4
    )
    assert back.reach_model("blind:1") is None
    older = {k: v for k, v in cal.to_dict().items() if k != "reach"}
    assert CrossingCalibration.from_dict(older).reach == {}


def test_the_shipped_table_has_a_reach_model_per_situation_of_the_right_width() -> None:
    data = json.loads(DEFAULT_PATH.read_text())
    for head, known in (("sched", True), ("blind", False)):
        for bucket in range(3):
            m = default_calibration().reach_model(f"{head}:{bucket}")
            assert m is not None and m.coef.size == len(feature_names(known))
            assert f"{head}:{bucket}" in data["reach"]


def test_features_of_degenerate_prefixes_are_finite() -> None:
    for c, y in ((np.array([]), np.array([])), (np.array([100.0]), np.array([2.0])), prefix(0.1)):
        summary = CurveSummary.of(c, y, TARGET, schedule(), HORIZON)
        x = reach_features(summary, 0.0, HORIZON)
        assert x.shape == (len(feature_names(True)),) and np.all(np.isfinite(x))


def test_a_feature_constant_but_for_float_noise_gets_no_weight_and_survives_json() -> None:
    rng = np.random.default_rng(1)
    x = rng.normal(size=(300, 2))
    x[:, 1] = np.log(4.0) + rng.normal(0.0, 1e-12, 300)  # the same share of the run seen in every record
    y = (x[:, 0] + rng.normal(0.0, 0.5, 300) > 0).astype(float)
    model = ReachModel.fit(x, y)
    assert model.scale[1] == 1.0
    back = ReachModel.from_dict(json.loads(json.dumps(model.to_dict())))
    # Another share seen at run time moves nothing: the fit could not have learned from it.
    for shifted in (np.log(2.0), np.log(8.0)):
        p = back.probability(np.array([0.3, shifted]))
        assert math.isfinite(p) and abs(p - back.probability(np.array([0.3, np.log(4.0)]))) < 0.02
