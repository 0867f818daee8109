"""The forecaster is honest about what it cannot know: synthetic curves with known crossings."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest

from convtune.curves import CrossingCalibration, Forecast, LRSchedule, forecast_time_to_target, time_to_target
from convtune.curves._calibration import ahead
from convtune.curves._forecast import raw_forecast

HORIZON = 20_000.0
EVERY = 500.0


def evals() -> np.ndarray:
    return np.arange(EVERY, HORIZON + 1, EVERY)


def power_curve(c: np.ndarray, floor: float = 0.5, amp: float = 3.0, alpha: float = 0.5) -> np.ndarray:
    return floor + amp * (c / EVERY) ** -alpha


def exp_curve(c: np.ndarray) -> np.ndarray:
    return 0.4 + 2.5 * np.exp(-c / 6000.0)


def log_linear_curve(c: np.ndarray) -> np.ndarray:
    return 3.0 - 0.5 * np.log(c / EVERY)


@pytest.mark.parametrize("family", [power_curve, exp_curve, log_linear_curve])
@pytest.mark.parametrize("with_schedule", [False, True])
def test_a_curve_still_improving_steadily_toward_the_target_is_never_forecast_never(
    family: object, with_schedule: bool
) -> None:
    c = evals()
    y = family(c)  # type: ignore[operator]
    # A target the curve crosses at ~60% of the planned run, forecast from 25% of it.
    target_value = float(np.interp(0.6 * HORIZON, c, y))
    target = f"val_loss<={target_value:.6f}"
    true = time_to_target(c, y, target)
    schedule = LRSchedule(np.array([0.0, HORIZON]), np.array([1e-3, 1e-3])) if with_schedule else None
    seen = c <= 0.25 * HORIZON
    f = forecast_time_to_target(c[seen], y[seen], target, schedule=schedule, horizon=HORIZON)
    assert math.isfinite(f.estimate) and f.estimate <= 2.0 * true
    assert f.probability >= 0.5
    assert f.low <= true <= f.high


def test_a_curve_that_has_levelled_off_far_from_the_target_is_not_within_the_run() -> None:
    c = evals()
    y = 1.0 + 0.5 * np.exp(-c / 1000.0) + np.random.default_rng(0).normal(0, 0.002, c.size)
    seen = c <= 0.5 * HORIZON
    f = forecast_time_to_target(c[seen], y[seen], "val_loss<=0.5", horizon=HORIZON)
    assert f.probability < 0.5 and not f.estimate <= HORIZON


def _family_draw(seed: int) -> np.ndarray:
    """A known family: power laws with a random amplitude and exponent, and evaluation noise."""
    rng = np.random.default_rng(seed)
    c = evals()
    amp, alpha = rng.uniform(2.5, 3.5), rng.uniform(0.5, 0.6)
    return power_curve(c, amp=amp, alpha=alpha) + rng.normal(0, 0.01, c.size)


def test_interval_coverage_within_bounds_over_many_draws_of_a_known_family() -> None:
    # Calibrate on draws of the family (as the shipped table is calibrated on recorded curves),
    # then check the 80% interval on fresh draws.
    # Every draw crosses 1.1 between a quarter of the run and its end.
    target, cut = "val_loss<=1.1", 0.25 * HORIZON
    c = evals()
    seen = c <= cut
    keys, raw, outcome = [], [], []
    for seed in range(120):
        y = _family_draw(seed)
        truth = time_to_target(c, y, target)
        r = raw_forecast(c[seen], y[seen], target, horizon=HORIZON)
        ts = np.linspace(1.1 * cut, HORIZON, 12)
        keys += [ahead(r.key, t, HORIZON) for t in ts]
        raw += list(r.cdf(ts))
        outcome += list((truth <= ts).astype(float))
    calibration = CrossingCalibration.fit(keys, raw, outcome)
    covered = []
    for seed in range(1000, 1150):
        y = _family_draw(seed)
        truth = time_to_target(c, y, target)
        f = forecast_time_to_target(c[seen], y[seen], target, horizon=HORIZON, calibration=calibration)
        covered.append(f.low <= truth <= f.high)
    assert 0.68 <= np.mean(covered) <= 0.92


@pytest.mark.parametrize(
    ("costs", "values"),
    [
        ([], []),
        ([500.0], [2.0]),
        ([500.0, 1000.0, 1500.0, 2000.0], [2.0] * 4),
        ([500.0, 1000.0, 1500.0], [2.0, math.nan, 1.9]),
        ([500.0, 1000.0, 1500.0], [2.0, math.inf, 1.9]),
        ([500.0, math.nan, 1500.0, math.inf], [2.0, 1.9, 1.8, 1.7]),
        ([2000.0, 1500.0, 1000.0, 500.0], [1.5, 1.7, 1.9, 2.1]),
        ([0.0, 0.0, 500.0], [3.0, 2.0, 1.8]),
        ([-500.0, 500.0, 1000.0], [3.0, 2.0, 1.8]),
    ],
)
def test_degenerate_input_never_raises_and_stays_a_distribution(
    costs: list[float], values: list[float]
) -> None:
    schedules = (None, LRSchedule(np.array([0.0, HORIZON]), np.array([1e-3, 1e-4])))
    for schedule in schedules:
        for horizon in (None, HORIZON, math.inf, 0.0):
            f = forecast_time_to_target(costs, values, "val_loss<=1.0", schedule=schedule, horizon=horizon)
            assert isinstance(f, Forecast) and not f.reached
            assert f.low <= f.estimate <= f.high
            ps = [f.probability_before(t) for t in (0.0, 1e3, 1e4, 1e5, 1e7, math.inf)]
            assert all(0.0 <= p <= 1.0 for p in ps) and ps == sorted(ps)
            back = Forecast.from_attrs(json.loads(json.dumps(f.to_attrs(), allow_nan=False)))
            assert back.probability_before(1e4) == pytest.approx(f.probability_before(1e4), abs=1e-6)


def test_probability_before_is_monotone_and_matches_probability_at_the_horizon() -> None:
    c = evals()
    y = power_curve(c) + np.random.default_rng(3).normal(0, 0.02, c.size)
    seen = c <= 0.3 * HORIZON
    f = forecast_time_to_target(c[seen], y[seen], "val_loss<=0.8", horizon=HORIZON)
    grid = np.geomspace(1.0, 100 * HORIZON, 400)
    ps = np.array([f.probability_before(t) for t in grid])
    assert np.all(np.diff(ps) >= 0) and ps[0] == 0.0
    assert f.probability_before(HORIZON) == pytest.approx(f.probability, abs=1e-9)
    # Its quantiles are the interval and the estimate.
    tail = 0.5 * (1 - f.level)
    assert f.probability_before(f.high) >= 1 - tail - 1e-9 or f.high == math.inf
    assert f.probability_before(f.quantile(0.5)) == pytest.approx(0.5, abs=1e-6)
    assert f.low <= f.estimate <= f.high
    # It survives being stored as a JSON user attribute.
    back = Forecast.from_attrs(json.loads(json.dumps(f.to_attrs(), allow_nan=False)))
    for t in (0.4 * HORIZON, HORIZON, 3 * HORIZON):
        assert back.probability_before(t) == pytest.approx(f.probability_before(t), abs=1e-6)


def test_probability_before_of_reached_and_diverged_curves() -> None:
    reached = forecast_time_to_target([100, 200, 300], [3.0, 2.0, 1.0], "val_loss<=1.5")
    assert reached.probability_before(249.0) == 0.0 and reached.probability_before(250.0) == 1.0
    diverged = forecast_time_to_target([100, 200, 300], [3.0, 2.0, math.nan], "val_loss<=1.5")
    assert diverged.diverged and diverged.probability_before(1e12) == 0.0


def test_a_calibration_table_survives_json() -> None:
    cal = CrossingCalibration.fit(
        ["sched:1"] * 60, np.linspace(0, 1, 60), (np.arange(60) % 3 == 0).astype(float)
    )
    back = CrossingCalibration.from_dict(json.loads(json.dumps(cal.to_dict())))
    p = np.linspace(0, 1, 11)
    assert np.allclose(back.apply("sched:1", p), cal.apply("sched:1", p), atol=1e-4)
    assert np.all(np.diff(cal.apply("sched:1", p)) >= 0)
