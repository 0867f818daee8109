"""The forecaster is honest about what it cannot know: synthetic curves with known crossings."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest

from convtune.curves import CrossingCalibration, Forecast, LRSchedule, forecast_time_to_target, time_to_target
from convtune.curves._calibration import (
    DEFAULT_THRESHOLD,
    ahead,
    blend_estimates,
    default_calibration,
    fit_blend,
    fit_threshold,
    without_trees,
)
from convtune.curves._forecast import raw_forecast
from convtune.curves._models import blind_basis, fit_exp, fit_power, predict

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
    assert f.low <= true <= f.high
    # The maps read the models' draws, which extrapolate a clean curve well. The reach trees,
    # where the table has them, read it as the recorded curves that looked like it at a quarter
    # of their run, of which a third to a half reached (check AA): less sure, still "reaching".
    maps = forecast_time_to_target(
        c[seen],
        y[seen],
        target,
        schedule=schedule,
        horizon=HORIZON,
        calibration=without_trees(default_calibration()),
    )
    assert maps.probability >= 0.5
    assert f.probability >= 0.2


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


@pytest.mark.parametrize(
    ("kind", "truth"),
    [
        ("power", (0.5, 3.0, 0.7)),
        ("power", (-2.0, 5.0, 0.05)),
        ("exp", (0.4, 2.5, 2.0)),
        ("exp", (1.0, 0.5, 0.2)),
    ],
)
def test_the_profiled_fit_recovers_a_noiseless_curve(kind: str, truth: tuple[float, float, float]) -> None:
    # The fit profiles the exponent (rate) on a grid and solves the linear parameters exactly:
    # on a noiseless curve of its own family it must land on the curve, even where the
    # parameters sit far from the grid (a tiny exponent: a nearly log-linear curve).
    c = np.linspace(200.0, 5000.0, 12)
    basis = blind_basis(c, float(c[-1]), 20_000.0, kind)
    y = predict(kind, np.array(truth), basis.u_obs, None)
    fit = (fit_exp if kind == "exp" else fit_power)(basis, y, 1e-3 * float(np.ptp(y)))
    ahead = predict(kind, fit.theta, basis.u_grid, None)
    expected = predict(kind, np.array(truth), basis.u_grid, None)
    assert np.max(np.abs(predict(kind, fit.theta, basis.u_obs, None) - y)) < 0.01 * np.ptp(y)
    assert np.max(np.abs(ahead - expected)[basis.grid <= 2 * c[-1]]) < 0.05 * np.ptp(y)


def test_the_reach_threshold_is_the_largest_that_keeps_never_rare() -> None:
    # Reaching curves with probabilities 0.05..0.95: called "not within the run" below the
    # threshold, which makes them "never"; above it their estimate is right.
    prob = np.linspace(0.05, 0.95, 19)
    called, otherwise = np.ones(19, bool), np.zeros(19, bool)
    assert fit_threshold(prob, called, otherwise, max_never=0.0) == pytest.approx(0.05)
    # 2 of 19 below 0.15 (10.5%) is too many for 10%; 1 of 19 below 0.10 is allowed.
    assert fit_threshold(prob, called, otherwise, max_never=0.1) == pytest.approx(0.10)
    # Weights: the first curve counts for nothing, so the next one may be called too.
    w = np.ones(19)
    w[0] = 0.0
    assert fit_threshold(prob, called, otherwise, w, max_never=0.06) == pytest.approx(0.15)


def test_the_estimate_is_within_the_run_exactly_when_reaching_is_likely_enough() -> None:
    c = evals()
    y = power_curve(c) + np.random.default_rng(5).normal(0, 0.01, c.size)
    seen = c <= 0.25 * HORIZON
    target = f"val_loss<={float(np.interp(0.7 * HORIZON, c, power_curve(c))):.6f}"
    raw = raw_forecast(c[seen], y[seen], target, horizon=HORIZON)
    f = raw.calibrated(CrossingCalibration())
    assert 0.0 < f.probability < 1.0
    # Blend 0: the estimate of a curve called reaching is read off the calibrated distribution.
    lenient = raw.calibrated(
        CrossingCalibration(thresholds={raw.key: f.probability - 0.01}, blends={raw.key: (0.0, 0.0)})
    )
    strict = raw.calibrated(
        CrossingCalibration(thresholds={raw.key: f.probability + 0.01}, blends={raw.key: (0.0, 0.0)})
    )
    # Likely enough: the median crossing given that it comes within the run.
    assert lenient.estimate <= HORIZON
    assert lenient.probability_before(lenient.estimate) == pytest.approx(0.5 * f.probability, abs=1e-6)
    # Not likely enough: "not within the run", the estimate beyond the horizon (or never).
    assert not strict.estimate <= HORIZON
    assert strict.low == lenient.low and strict.high == lenient.high


def test_a_late_bloomer_under_a_decaying_lr_is_not_forecast_never() -> None:
    # The LR-annealing law under a linear decay to zero: the loss keeps falling faster late in
    # the run, and the target is crossed only in the last fifth.
    steps = np.arange(1, 20_001)
    lrs = 1e-3 * (1.0 - steps / 20_001)
    schedule = LRSchedule.from_steps(lrs, 1)
    s1 = np.cumsum(lrs) / 1e-3
    s2 = np.cumsum(np.cumsum(np.full_like(lrs, 1e-3 / 20_001)) / 1e-3)
    law = 1.0 + 4.0 * (s1 / 500.0) ** -0.4 - 2e-5 * s2
    c = steps[499::500].astype(float)
    y = law[499::500]
    target = f"val_loss<={float(np.interp(0.85 * 20_000, c, y)):.6f}"
    true = time_to_target(c, y, target)
    seen = c <= 0.25 * 20_000
    f = forecast_time_to_target(c[seen], y[seen], target, schedule=schedule)
    assert math.isfinite(f.estimate) and f.estimate <= 2.0 * true and f.probability >= 0.2
    maps = forecast_time_to_target(
        c[seen], y[seen], target, schedule=schedule, calibration=without_trees(default_calibration())
    )
    assert maps.probability >= 0.3


def test_a_curve_one_evaluation_from_its_target_may_cross_before_the_next_evaluation() -> None:
    # Measured time-to-target interpolates between the last evaluation that missed and the first
    # that reached, so a curve that crosses at the next evaluation is measured anywhere between
    # the two. The draws were put *at* the next evaluation: a digits confirm run at 88.3% after
    # 2,048 samples (target 90%, evaluations every 1,024) was given 0.0008 of crossing by 2,458,
    # and it crossed at 2,432 (found by `convtune study forecasts` on the golden study).
    costs = np.arange(0.0, 8193.0, 32.0)
    schedule = LRSchedule(costs, 0.5e-2 * (1.0 + np.cos(np.pi * costs / 8192.0)))
    c, v = np.array([1024.0, 2048.0]), np.array([0.85, 0.8833333])
    raw = raw_forecast(c, v, "accuracy>=0.9", schedule=schedule)
    assert np.mean(raw.draws == 3072.0) < 0.05  # no spike at the next evaluation
    assert np.mean((raw.draws > 2048.0) & (raw.draws < 3072.0)) > 0.5
    forecast = forecast_time_to_target(c, v, "accuracy>=0.9", schedule=schedule)
    assert forecast.probability_before(2048.0 + 0.4 * 1024.0) > 0.05
    assert forecast.low < 2600.0


def test_reach_thresholds_survive_json_and_fall_back_to_an_earlier_share_of_the_run() -> None:
    cal = CrossingCalibration(thresholds={"sched:1": 0.2, "sched:all": 0.05})
    back = CrossingCalibration.from_dict(json.loads(json.dumps(cal.to_dict())))
    assert back.threshold("sched:1@0") == pytest.approx(0.2)
    # Later in the run than any fitted situation: the nearest earlier one.
    assert back.threshold("sched:3@2") == pytest.approx(0.2)
    # Earlier: the pooled one; another head: the default.
    assert back.threshold("sched:0") == pytest.approx(0.05)
    assert back.threshold("blind:1") == pytest.approx(DEFAULT_THRESHOLD)


def test_fit_blend_picks_the_estimate_that_errs_least_on_the_fitting_curves() -> None:
    truth = np.linspace(1000.0, 5000.0, 60)
    names = ["a", "b", "c"] * 20
    exact, off, missing = truth * 1.0, truth * 1.8, np.full(truth.size, math.nan)

    def rows(*columns: np.ndarray) -> np.ndarray:
        return np.stack(columns, axis=1)

    assert fit_blend(rows(off, exact, off), truth, names) == (1.0, 0.0)  # the draws' median is right
    assert fit_blend(rows(exact, off, off), truth, names) == (0.0, 0.0)  # the calibrated one is
    # The line, as far as it may go (never alone); the other quarter goes to either median
    # alike, and the tie to the blend nearer the default.
    assert fit_blend(rows(off, off, exact), truth, names) == (0.25, 0.75)
    # Off by the same factor in opposite directions: the even blend is exact; no line: its
    # weight would go to the others, so it stays at 0.
    assert fit_blend(rows(truth * 1.5, truth / 1.5, missing), truth, names) == (0.5, 0.0)


def test_blend_estimates_is_geometric_and_gives_a_missing_estimates_weight_to_the_others() -> None:
    rows = np.array(
        [
            [100.0, 400.0, math.nan],  # no line: calibrated and draws share its weight
            [math.inf, 50.0, 200.0],
            [300.0, math.inf, math.nan],
            [math.inf, math.inf, math.nan],
        ]
    )
    out = blend_estimates(rows, (0.25, 0.5))
    assert out[0] == pytest.approx(200.0)  # weights 0.25 / 0.25 over (100, 400)
    assert out[1] == pytest.approx(math.exp((0.25 * math.log(50.0) + 0.5 * math.log(200.0)) / 0.75))
    assert out[2] == pytest.approx(300.0)
    assert out[3] == math.inf
    # Weight 0 on what is there: the row falls back to what it has, unweighted.
    assert blend_estimates(np.array([[math.inf, 80.0, math.nan]]), (0.0, 0.0))[0] == pytest.approx(80.0)


def test_a_curve_called_reaching_gets_the_blend_of_its_three_estimates() -> None:
    c = evals()
    y = power_curve(c)
    seen = c <= 0.25 * HORIZON
    target = f"val_loss<={power_curve(np.array([0.7 * HORIZON]))[0]:.4f}"
    raw = raw_forecast(c[seen], y[seen], target, horizon=HORIZON)
    by_calibration = raw.calibrated(CrossingCalibration(blends={raw.key: (0.0, 0.0)}))
    by_draws = raw.calibrated(CrossingCalibration(blends={raw.key: (1.0, 0.0)}))
    by_line = raw.calibrated(CrossingCalibration(blends={raw.key: (0.0, 0.75)}))
    even = raw.calibrated(CrossingCalibration(blends={raw.key: (0.5, 0.0)}))
    assert by_calibration.probability >= DEFAULT_THRESHOLD  # called reaching: the blend applies
    assert by_draws.estimate == pytest.approx(raw.median_within())
    assert by_calibration.estimate != pytest.approx(by_draws.estimate, rel=1e-3)
    assert even.estimate == pytest.approx(math.sqrt(by_calibration.estimate * by_draws.estimate))
    assert even.low <= even.estimate <= even.high
    # The line through the last two points of this power law crosses within the run, early (it
    # keeps the recent pace, which the curve does not).
    assert raw.c_last < raw.line < HORIZON
    expected = math.exp(0.25 * math.log(by_calibration.estimate) + 0.75 * math.log(raw.line))
    assert by_line.estimate == pytest.approx(expected)
    # The blend survives the round trip of the shipped table; an older table's single weight
    # reads as the draws' weight.
    cal = CrossingCalibration(blends={"sched:1": (0.5, 0.25)})
    back = CrossingCalibration.from_dict(json.loads(json.dumps(cal.to_dict())))
    assert back.blend("sched:1@2") == (0.5, 0.25)
    assert CrossingCalibration.from_dict({"blends": {"sched:1": 0.75}}).blend("sched:1") == (0.75, 0.0)
    assert cal.blend("sched:0") == (0.5, 0.0)  # none fitted for that share of the run: the default
