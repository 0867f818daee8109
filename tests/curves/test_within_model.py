"""The within-the-run model (check R, docs/benchmarks.md): it sets ``P(crossed by the planned end)``
from the curve and the study's finished runs, within a factor of the maps', and scales the whole
crossing distribution with it; without one the forecast is what the maps make it."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest
from reach_curves import EVERY, HORIZON, TARGET, curve, prefix, schedule

from convtune.curves import CrossingCalibration, ReachModel, ReferenceRun, forecast_time_to_target
from convtune.curves._calibration import default_calibration
from convtune.curves._reach import (
    REFERENCE_FEATURES,
    WITHIN_MAX_FACTOR,
    CurveSummary,
    reference_features,
    within_feature_names,
)


def maps_only() -> CrossingCalibration:
    """The shipped table without within-the-run models or reach trees (whether it has them or not)."""
    return replace(default_calibration(), within={}, trees={})


def with_within(model: ReachModel) -> CrossingCalibration:
    return replace(maps_only(), within={"sched:1": model})


def counted(c_last: float) -> ReferenceRun:
    """A finished run that counts for a prefix ending at ``c_last``: worse there, then reached."""
    full = np.arange(EVERY, HORIZON + 1, EVERY)
    return ReferenceRun.of(full, np.where(full <= c_last, curve(full) + 0.05, 0.85), TARGET)


def constant(probability: float, n: int) -> ReachModel:
    """A model that says ``probability`` whatever the features."""
    return ReachModel(np.zeros(n), np.ones(n), np.zeros(n), float(np.log(probability / (1 - probability))))


def test_the_model_sets_the_chance_by_the_end_and_scales_the_distribution_with_it() -> None:
    c, y = prefix(0.3)
    sched = schedule()
    n = len(within_feature_names(True))
    refs = [counted(c[-1])]
    maps = forecast_time_to_target(c, y, TARGET, schedule=sched, calibration=maps_only(), references=refs)
    assert 0.1 < maps.probability < 0.9
    target_p = maps.probability * 0.5
    cal = with_within(constant(target_p, n))
    lowered = forecast_time_to_target(c, y, TARGET, schedule=sched, calibration=cal, references=refs)
    assert lowered.probability == pytest.approx(target_p, rel=1e-6)
    # The same distribution, halved: where it comes, if it comes, is unchanged.
    assert lowered.cdf_costs == maps.cdf_costs
    for t in np.linspace(c[-1], HORIZON, 9):
        assert lowered.probability_before(t) == pytest.approx(0.5 * maps.probability_before(t), abs=1e-9)
    assert np.all(np.diff(np.asarray(lowered.cdf_probs)) >= 0)
    # Without a finished run that counts, the maps speak: from the curve alone the model read
    # steadily improving synthetic curves as hopeless (check R).
    alone = forecast_time_to_target(c, y, TARGET, schedule=sched, calibration=cal)
    assert alone == forecast_time_to_target(c, y, TARGET, schedule=sched, calibration=maps_only())
    early = np.arange(EVERY, c[-1] + 1, EVERY)
    unknown = ReferenceRun.of(early, curve(early), TARGET)  # stopped at this cost: its outcome is unknown
    assert (
        forecast_time_to_target(c, y, TARGET, schedule=sched, calibration=cal, references=[unknown]) == alone
    )


def test_the_model_may_move_the_maps_by_at_most_its_factor_either_way() -> None:
    c, y = prefix(0.3)
    sched = schedule()
    n = len(within_feature_names(True))
    refs = [counted(c[-1])]
    maps = forecast_time_to_target(c, y, TARGET, schedule=sched, calibration=maps_only(), references=refs)
    hopeless = forecast_time_to_target(
        c, y, TARGET, schedule=sched, calibration=with_within(constant(1e-9, n)), references=refs
    )
    sure = forecast_time_to_target(
        c, y, TARGET, schedule=sched, calibration=with_within(constant(1 - 1e-9, n)), references=refs
    )
    assert hopeless.probability == pytest.approx(maps.probability / WITHIN_MAX_FACTOR, rel=1e-6)
    assert sure.probability == pytest.approx(min(1.0, maps.probability * WITHIN_MAX_FACTOR), rel=1e-6)
    assert not hopeless.estimate <= HORIZON  # below the situation's threshold: "not within the run"
    assert sure.estimate <= HORIZON


def test_references_reach_the_model_through_the_public_forecast() -> None:
    c, y = prefix(0.3)
    sched = schedule()
    names = within_feature_names(True)
    # A model that reads only "reached among the runs that stood no worse": more such runs, more hope.
    coef = np.zeros(len(names))
    coef[names.index("worse_reached")] = 1.0
    model = ReachModel(np.zeros(len(names)), np.ones(len(names)), coef, -1.0)
    cal = with_within(model)
    worse = counted(c[-1])
    assert np.isfinite(worse.crossing)
    once = forecast_time_to_target(c, y, TARGET, schedule=sched, calibration=cal, references=[worse])
    thrice = forecast_time_to_target(c, y, TARGET, schedule=sched, calibration=cal, references=[worse] * 3)
    assert thrice.probability > once.probability
    assert once.probability == pytest.approx(1 / (1 + np.exp(-(np.log(1.5 / 0.5) - 1.0))), rel=1e-6)


def test_reference_features_count_only_runs_whose_outcome_is_known() -> None:
    c, y = prefix(0.3)
    summary = CurveSummary.of(c, y, TARGET, schedule(), HORIZON)
    full = np.arange(EVERY, HORIZON + 1, EVERY)
    better_failed = ReferenceRun.of(
        full, np.full(full.size, 0.95) - 1e-3 * np.arange(full.size) / full.size, TARGET
    )
    stopped_early = ReferenceRun.of(
        full[:20], curve(full[:20]) + 0.05, TARGET
    )  # outcome unknown at the horizon
    already_crossed = ReferenceRun.of(
        full, np.full(full.size, 0.8), TARGET
    )  # crossed before this run's last cost
    neutral = reference_features(summary, [], HORIZON)
    assert neutral.tolist() == [0.0, 0.0, 0.0, 0.0]
    assert reference_features(summary, [stopped_early, already_crossed], HORIZON).tolist() == neutral.tolist()
    x = dict(zip(REFERENCE_FEATURES, reference_features(summary, [better_failed], HORIZON), strict=True))
    assert x["better_failed"] > 0 and x["n_better"] > 0 and x["n_worse"] == 0 and x["worse_reached"] == 0


def test_within_models_survive_json_and_the_shipped_table_loads_without_them() -> None:
    n = len(within_feature_names(False))
    cal = CrossingCalibration(within={"blind:0": constant(0.3, n)})
    back = CrossingCalibration.from_dict(cal.to_dict())
    assert back.within_model("blind:2") is not None  # an earlier share of the run stands in
    assert back.within_model("sched:1") is None
    assert back.within_model("blind:1").probability(np.zeros(n)) == pytest.approx(0.3)
    assert "within" not in CrossingCalibration().to_dict()


def test_a_plateau_prefix_is_left_to_the_plateau_references() -> None:
    c = np.arange(EVERY, 0.3 * HORIZON + 1, EVERY)
    y = 2.0 + 0.01 * np.where(np.arange(c.size) % 2 == 0, 1.0, -1.0)  # has not moved from its start
    full = np.arange(EVERY, HORIZON + 1, EVERY)
    dropped = ReferenceRun.of(full, np.where(full <= c[-1], 2.02, 0.85), TARGET)
    n = len(within_feature_names(False))
    cal = replace(maps_only(), within={"blind:1": constant(0.9, n)})
    told = forecast_time_to_target(c, y, TARGET, horizon=HORIZON, calibration=cal, references=[dropped])
    plain = forecast_time_to_target(
        c, y, TARGET, horizon=HORIZON, calibration=maps_only(), references=[dropped]
    )
    assert told == plain
