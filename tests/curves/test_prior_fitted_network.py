"""The prior-data-fitted network shipped in ``convtune.curves``, and the pruner option that reads it.

The network's answers are checked for what follows from any sensible crossing distribution
(non-decreasing, a curve closing in on the target more likely to reach it than a flat one), and
the combination with a calibrated forecast for what it promises: the mean logit within the run,
the calibrated estimate kept, nothing changed where the network has nothing to say.
"""

from __future__ import annotations

import filecmp
import math
from pathlib import Path

import numpy as np
import optuna
import pytest

from convtune.config.spec import StudySpec
from convtune.curves import Forecast, LRSchedule, forecast_time_to_target
from convtune.curves._pfn import BINS, WEIGHTS, combine_with_pfn, pfn_crossing_cdf, reach_by
from convtune.pruners import LR_SCHEDULE_ATTR, TimeToTargetPruner, reach_probability
from convtune.study.objective import make_pruner

ROOT = Path(__file__).resolve().parents[2]
TARGET = "val_loss<=1.0"
SCHEDULE = LRSchedule.from_steps(np.linspace(1.0, 0.0, 100), cost_per_step=10)  # 1,000 samples
COSTS = np.arange(1, 9) * 40.0  # a third of the run seen


def logit(p: float) -> float:
    p = min(max(p, 1e-4), 1 - 1e-4)
    return math.log(p / (1 - p))


def test_the_shipped_weights_are_the_network_the_benchmarks_scored() -> None:
    assert filecmp.cmp(WEIGHTS, ROOT / "benchmarks" / "data" / "pfn" / "pfn.pt", shallow=False)


def test_reach_by_reads_the_cumulative_bins_linearly_within_one() -> None:
    cdf = np.linspace(0.0, 0.5, BINS + 1)[1:]  # 0.5 reached within the run, evenly
    assert reach_by(cdf, 1.0) == pytest.approx(0.5)
    assert reach_by(cdf, 0.5) == pytest.approx(0.25)
    assert reach_by(cdf, 0.5 / BINS) == pytest.approx(0.5 * cdf[0])
    values = [reach_by(cdf, s) for s in np.linspace(0.0, 1.0, 37)]
    assert values == sorted(values)


def test_a_curve_closing_in_is_likelier_to_reach_than_a_flat_one_and_the_cdf_only_rises() -> None:
    closing = pfn_crossing_cdf(COSTS, 2.0 - 0.0025 * COSTS, TARGET, SCHEDULE)
    flat = pfn_crossing_cdf(COSTS, np.full(COSTS.size, 2.0), TARGET, SCHEDULE)
    assert closing is not None and flat is not None and closing.shape == (BINS,)
    for cdf in (closing, flat):
        assert np.all(np.diff(cdf) >= -1e-7) and 0.0 <= cdf[0] and cdf[-1] <= 1.0 + 1e-6
    assert closing[-1] > flat[-1] + 0.2
    # Nothing to say about a prefix that already reached, or one with a non-finite value.
    assert pfn_crossing_cdf(COSTS, np.linspace(1.5, 0.9, COSTS.size), TARGET, SCHEDULE) is None
    assert pfn_crossing_cdf(COSTS, np.r_[2.0, np.nan, np.full(6, 1.5)], TARGET, SCHEDULE) is None
    assert pfn_crossing_cdf([], [], TARGET, SCHEDULE) is None


def test_the_combination_is_the_mean_logit_within_the_run_and_keeps_the_estimate() -> None:
    values = 2.0 - 0.002 * COSTS
    alone = forecast_time_to_target(COSTS, values, TARGET, schedule=SCHEDULE)
    both = forecast_time_to_target(COSTS, values, TARGET, schedule=SCHEDULE, pfn=True)
    cdf = pfn_crossing_cdf(COSTS, values, TARGET, SCHEDULE)
    assert cdf is not None
    for cost in (500.0, 700.0, 1000.0):  # bin edges: both answers are read exactly there
        expected = 1 / (
            1 + math.exp(-0.5 * (logit(alone.probability_before(cost)) + logit(reach_by(cdf, cost / 1000))))
        )
        assert both.probability_before(cost) == pytest.approx(expected, abs=1e-6)
    assert both.probability == pytest.approx(both.probability_before(1000.0))
    assert (both.estimate, both.low, both.high) == (alone.estimate, alone.low, alone.high)
    costs = np.linspace(COSTS[-1], 3000.0, 200)
    assert np.all(np.diff([both.probability_before(c) for c in costs]) >= -1e-12)
    # Without a schedule the network has no run to place the crossing in: the forecast is unchanged.
    assert forecast_time_to_target(
        COSTS, values, TARGET, horizon=1000.0, pfn=True
    ) == forecast_time_to_target(COSTS, values, TARGET, horizon=1000.0)
    reached = Forecast(300.0, 300.0, 300.0, True, 1.0, 0.8, model="measured")
    assert combine_with_pfn(reached, cdf, 1000.0, 320.0) is reached


def test_the_pruner_option_decides_on_the_combined_probability() -> None:
    def pruner(options: dict[str, float]) -> TimeToTargetPruner:
        spec = StudySpec.from_dict(
            {"workload": "digits", "space": {"peak_lr": 0.01}, "target": TARGET, "cost": "samples",
             "max_cost": 1000, "pruner_options": options}
        )  # fmt: skip
        built = make_pruner(spec)  # as `convtune study run` builds it
        assert isinstance(built, TimeToTargetPruner)
        return built

    with_network, without = pruner({"pfn": 1}), pruner({})
    study = optuna.create_study()
    trial = study.ask()
    trial.set_user_attr(LR_SCHEDULE_ATTR, SCHEDULE.to_dict())
    costs = np.array([40.0, 80.0])  # the first rung is the 2nd report
    for cost in costs:
        trial.report(2.0 - 0.001 * cost, step=int(cost))
    frozen = study._storage.get_trial(trial._trial_id)
    on, off = with_network.decide(study, frozen), without.decide(study, frozen)
    assert on.reason == off.reason == "may-beat-incumbent"  # no trial has reached: the bar is max_cost
    expected = forecast_time_to_target(costs, 2.0 - 0.001 * costs, TARGET, schedule=SCHEDULE, pfn=True)
    assert on.probability == pytest.approx(reach_probability(expected, 1000.0), rel=1e-4)
    assert on.probability != pytest.approx(off.probability, rel=0.05)
