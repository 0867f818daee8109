"""A plateau's forecast told the study's own finished runs (``references``), and the logit offset
that corrects a study's own bias (``study_offset``)."""

from __future__ import annotations

import math

import numpy as np
import pytest

from convtune.curves import ReferenceRun, forecast_time_to_target, shift_probability, study_offset

HORIZON = 1000.0
COSTS = np.arange(50.0, HORIZON + 1, 50.0)
TARGET = "val_loss<=1.0"


def _plateau_then(drop_at: float | None, seed: int) -> np.ndarray:
    """A loss that sits at 2.0 (noise 0.01) and, from ``drop_at`` on, falls to 0.5."""
    rng = np.random.default_rng(seed)
    values = 2.0 + 0.01 * rng.standard_normal(COSTS.size)
    if drop_at is not None:
        after = COSTS >= drop_at
        values[after] = 0.5 + 1.5 * np.exp(-(COSTS[after] - drop_at) / 60.0)
    return values


def _forecast(values: np.ndarray, seen: float, references: list[ReferenceRun]):
    keep = COSTS <= seen
    return forecast_time_to_target(COSTS[keep], values[keep], TARGET, horizon=HORIZON, references=references)


def test_on_a_plateau_the_study_runs_that_stood_there_too_move_the_probability_their_way() -> None:
    trial = _plateau_then(None, seed=0)
    alone = _forecast(trial, 300.0, [])
    dropped = [ReferenceRun.of(COSTS, _plateau_then(500.0, seed=s), TARGET) for s in range(1, 11)]
    stuck = [ReferenceRun.of(COSTS, _plateau_then(None, seed=s), TARGET) for s in range(1, 11)]
    waiting = _forecast(trial, 300.0, dropped)
    hopeless = _forecast(trial, 300.0, stuck)
    # Ten runs of this study sat on the same plateau, then all reached: a drop is likely.
    assert waiting.probability > alone.probability + 0.3
    assert waiting.probability > 0.5 and math.isfinite(waiting.estimate)
    # Where they crossed (about 580-620) is where the forecast now puts the crossing.
    assert 450.0 < waiting.estimate < 800.0
    # Runs that sat there and never reached in their run pull it down instead (by the weight
    # of those that matched: noise alone moves a few of these ten past 3σ by that cost).
    assert hopeless.probability <= 0.5 * alone.probability
    # Still a distribution: non-decreasing, and `probability` is its value at the horizon.
    for f in (waiting, hopeless):
        grid = np.linspace(300.0, 3000.0, 60)
        before = [f.probability_before(t) for t in grid]
        assert all(b >= a - 1e-12 for a, b in zip(before, before[1:], strict=False))
        assert f.probability_before(HORIZON) == f.probability


def test_runs_that_say_nothing_of_this_plateau_leave_the_forecast_alone() -> None:
    trial = _plateau_then(None, seed=0)
    alone = _forecast(trial, 300.0, [])
    # Stopped early without reaching: their outcome is unknown.
    stopped = [ReferenceRun.of(COSTS[:8], _plateau_then(None, seed=s)[:8], TARGET) for s in range(1, 6)]
    # Already moving (or reached) by the trial's last cost: not on a plateau there.
    moving = [ReferenceRun.of(COSTS, _plateau_then(100.0, seed=s), TARGET) for s in range(1, 6)]
    assert _forecast(trial, 300.0, stopped + moving) == alone


def test_a_moving_prefix_is_not_changed_by_references() -> None:
    trial = _plateau_then(100.0, seed=0)  # falling since 100: moved many noise units by 200
    stuck = [ReferenceRun.of(COSTS, _plateau_then(None, seed=s), TARGET) for s in range(1, 11)]
    assert _forecast(trial, 200.0, stuck) == _forecast(trial, 200.0, [])


def test_a_run_that_diverged_counts_as_one_that_never_reached() -> None:
    values = 2.0 + 0.01 * (-1.0) ** np.arange(COSTS.size)  # flat: under 1σ from its start
    values[12:] = math.nan
    ref = ReferenceRun.of(COSTS, values, TARGET)
    assert ref.crossing == math.inf and ref.observed_to == math.inf
    trial = _plateau_then(None, seed=0)
    assert _forecast(trial, 300.0, [ref] * 5).probability < _forecast(trial, 300.0, []).probability


def test_the_study_offset_is_the_penalised_likelihood_optimum_and_shifts_toward_the_outcomes() -> None:
    probabilities = [0.1, 0.3, 0.2, 0.6, 0.05]
    reached = [True, True, False, True, False]
    offset = study_offset(probabilities, reached)
    # The optimum of the log-likelihood under sigma(logit p + b) with the normal prior (sd 1), on a grid.
    z = np.log(np.array(probabilities) / (1 - np.array(probabilities)))
    y = np.array(reached, dtype=float)
    grid = np.linspace(-5, 5, 100_001)
    t = z[None, :] + grid[:, None]
    loss = np.sum(np.logaddexp(0.0, t) - y * t, axis=1) + 0.5 * grid**2
    assert offset == pytest.approx(grid[np.argmin(loss)], abs=1e-3)
    # These forecasts ran low (3 of 5 reached, a mean forecast of 0.25): the shift raises them.
    assert offset > 0 and shift_probability(0.25, offset) > 0.25
    # The prior: the same evidence from one run moves it less than from ten; none, not at all.
    assert 0 < study_offset([0.2], [True]) < study_offset([0.2] * 10, [True] * 10)
    assert study_offset([], []) == 0.0 and shift_probability(0.3, 0.0) == 0.3
    # One offset on the logit scale keeps the order of a study's forecasts.
    assert shift_probability(0.1, -1.5) < shift_probability(0.4, -1.5) < 0.4
    with pytest.raises(ValueError, match="2 probabilities but 1 outcomes"):
        study_offset([0.1, 0.2], [True])
