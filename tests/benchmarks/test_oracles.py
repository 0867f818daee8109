"""The oracle pruners of ``benchmarks/oracles.py``, replayed on the tiny recorded grid.

They know the run being replayed, so their promises can be checked exactly: the clairvoyant
stops every trial of a configuration that is not near-best and no other, and the perfect
forecast stops a trial only when its run truly cannot beat the incumbent (probability 0).
"""

from __future__ import annotations

import math
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "benchmarks"))

from oracles import ORACLES  # noqa: E402

from convtune.replay import load_grid, replay_spec, replay_study  # noqa: E402

GRID = ROOT / "tests" / "data" / "tiny_grid.jsonl"
TARGET = "val_error<=0.2"


def test_the_clairvoyant_stops_exactly_the_trials_of_configurations_that_are_not_near_best() -> None:
    grid = load_grid(GRID)
    spec = replay_spec(grid, {"target": TARGET})
    rows = [replay_study(grid, spec, seed=s, budget=3, pruner=ORACLES["clairvoyant"]) for s in range(3)]
    for row in rows:
        assert row["pruner"] == "clairvoyant"
        assert row["near_best_trials"] > 0 and row["near_best_stopped_share"] == 0.0
        stopped = round(row["stopped_share"] * row["trained"])
        assert stopped == row["trained"] - row["near_best_trials"] > 0
        assert row["hit"] and row["cost_to_10"] <= row["spent"]


def test_the_perfect_forecast_stops_only_what_cannot_beat_the_incumbent_and_costs_less() -> None:
    grid = load_grid(GRID)
    spec = replay_spec(grid, {"target": TARGET})
    oracle = [
        replay_study(grid, spec, seed=s, budget=4, pruner=ORACLES["perfect-forecast"]) for s in range(3)
    ]
    default = [replay_study(grid, spec, seed=s, budget=4, pruner="time_to_target") for s in range(3)]
    by_forecast = [p for row in oracle for p in row["stop_probabilities"] if p is not None and p > 0]
    assert by_forecast == []  # a forecast stop is a certainty (probability 0), never a bet
    reasons = {r for row in oracle for r in row["stop_reasons"]}
    assert reasons & {"pruned: cannot-beat-incumbent", "pruned: cannot-reach-by-max-cost"}, reasons
    assert all(row["hit"] for row in oracle)
    # Knowing the future never costs more here than the shipped forecasts.
    assert sum(r["cost_to_10"] for r in oracle) <= sum(r["cost_to_10"] for r in default) + 1e-9
    assert all(math.isfinite(r["cost_to_10"]) for r in oracle)


def test_a_perfect_forecast_for_one_kind_of_decision_leaves_the_other_to_the_shipped_forecast() -> None:
    grid = load_grid(GRID)
    spec = replay_spec(grid, {"target": TARGET})
    rows = {
        name: [replay_study(grid, spec, seed=s, budget=4, pruner=ORACLES[name]) for s in range(3)]
        for name in ("perfect-before-incumbent", "perfect-after-incumbent")
    }
    before = [
        (r, p)
        for row in rows["perfect-before-incumbent"]
        for r, p in zip(row["stop_reasons"], row["stop_probabilities"], strict=True)
    ]
    after = [
        (r, p)
        for row in rows["perfect-after-incumbent"]
        for r, p in zip(row["stop_reasons"], row["stop_probabilities"], strict=True)
    ]
    # Certain (probability 0) where it knows; the shipped forecast's own probability elsewhere.
    assert all(p == 0 for r, p in before if r == "pruned: cannot-reach-by-max-cost")
    assert all(p == 0 for r, p in after if r == "pruned: cannot-beat-incumbent")
    assert any(r == "pruned: cannot-beat-incumbent" and p > 0 for r, p in before), before


def test_the_median_incumbent_judges_against_configurations_median_times_and_its_control_as_shipped() -> None:
    # median-incumbent reads every finished trial that reached as its configuration's median
    # time over the recorded seeds; shipped-control is the same plumbing with the measured times
    # kept, so it must replay exactly as the default pruner does.
    grid = load_grid(GRID)
    spec = replay_spec(grid, {"target": TARGET})
    truth = grid.true_time_to_target(spec.target_spec, spec.cost)
    built = []

    def capture(name: str):  # the pruner the replay builds, kept to look inside afterwards
        def factory(executor, spec):
            built.append(ORACLES[name](executor, spec))
            return built[-1]

        return factory

    for seed in range(3):
        control = replay_study(grid, spec, seed=seed, budget=4, pruner=capture("shipped-control"))
        default = replay_study(grid, spec, seed=seed, budget=4, pruner="time_to_target")
        for key in ("hit", "cost_to_10", "trained", "stop_reasons", "spent"):
            assert control[key] == default[key], (seed, key)
        replay_study(grid, spec, seed=seed, budget=4, pruner=capture("median-incumbent"))
    controls, medians = built[0::2], built[1::2]
    judged = 0
    for pruner in medians:
        for (_, number, _), summary in pruner._finished.items():
            if math.isfinite(summary.time_to_target):
                assert summary.time_to_target == truth[pruner.keys[number]]
                judged += 1
    assert judged > 0
    measured = {
        s.time_to_target for p in controls for s in p._finished.values() if math.isfinite(s.time_to_target)
    }
    assert measured - set(truth.values()), "the tiny grid's seeds should differ from their medians"
