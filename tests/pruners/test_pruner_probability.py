"""TimeToTargetPruner's stops from probabilities: what a stop is decided on, and what never stops."""

from __future__ import annotations

import math
from collections.abc import Iterator

import numpy as np
import optuna
import pytest

from convtune.config.record import STATUS_ATTR, TrialStatus
from convtune.curves import Forecast, shift_probability, study_offset
from convtune.pruners import (
    DEFAULT_COMEBACK_VETO,
    DEFAULT_JUMP_VETO,
    DEFAULT_MARGIN,
    DEFAULT_PLATEAU_REFERENCES,
    DEFAULT_PLATEAU_STRETCH,
    DEFAULT_PLATEAU_WAIT,
    DEFAULT_STUDY_SHIFT,
    DEFAULT_STUDY_SHIFT_Z,
    LR_SCHEDULE_ATTR,
    STOP_PROBABILITY_ATTR,
    STOP_THRESHOLD_ATTR,
    PruneDecision,
    TimeToTargetPruner,
    reach_probability,
)

optuna.logging.set_verbosity(optuna.logging.WARNING)
TARGET = "val_loss<=1.9"
EVERY = 1000
EXACT = {"diverged", "max-cost", "slower-than-measured-best"}  # stops that need no forecast


def loss(speed: float, floor: float, cost: float, noise: float = 0.0) -> float:
    return floor + 4.0 * (speed * cost) ** -0.5 + noise


def study_of(pruner: TimeToTargetPruner, n_trials: int, seed: int = 0) -> optuna.Study:
    rng = np.random.default_rng(seed)

    def objective(trial: optuna.Trial) -> float:
        speed = trial.suggest_float("speed", 1e-3, 1e-1, log=True)
        floor = trial.suggest_float("floor", 1.0, 2.5)
        for i in range(1, 31):
            value = loss(speed, floor, i * EVERY, float(rng.normal(0, 0.01)))
            trial.report(value, step=i * EVERY)
            if value <= 1.9:
                return i * EVERY
            if trial.should_prune():
                raise optuna.TrialPruned()
        return 1e9

    study = optuna.create_study(pruner=pruner, sampler=optuna.samplers.RandomSampler(seed=seed))
    study.optimize(objective, n_trials=n_trials)
    return study


@pytest.mark.parametrize(("epsilon", "forecast_stops"), [(0.01, False), (0.1, True)])
def test_every_forecast_stop_was_decided_on_a_probability_below_epsilon(
    epsilon: float, forecast_stops: bool
) -> None:
    pruner = TimeToTargetPruner(TARGET, epsilon=epsilon, max_cost=30 * EVERY)
    study = study_of(pruner, 25)
    stopped = [t for t in study.trials if t.state == optuna.trial.TrialState.PRUNED]
    assert stopped, "the study must stop some trials for the test to mean anything"
    for trial in stopped:
        probability = trial.user_attrs[STOP_PROBABILITY_ATTR]
        threshold = trial.user_attrs[STOP_THRESHOLD_ATTR]
        assert probability is not None and threshold is not None
        assert probability < threshold <= epsilon
    # Judged at a few rungs (not every report), epsilon / rungs is a bound the calibrated
    # probability does fall below: at epsilon = 0.1 stops come from forecasts too (probability
    # above 0; the exact stops record 0), not only from the exact rules.
    if forecast_stops:
        assert any(t.user_attrs[STOP_PROBABILITY_ATTR] > 0 for t in stopped)


def forecast_decisions(pruner: TimeToTargetPruner, study: optuna.Study) -> Iterator[PruneDecision]:
    """Every decision but the exact rules', over trials of several speeds and floors (each
    trial ends at its first exact decision and is failed, so it never becomes the incumbent)."""
    for speed in (0.002, 0.005, 0.01, 0.03):
        for floor in (1.4, 1.85, 2.0):
            trial = study.ask()
            for i in range(1, 9):
                trial.report(loss(speed, floor, i * EVERY), step=i * EVERY)
                decision = pruner.decide(study, study._storage.get_trial(trial._trial_id))
                if decision.reason in EXACT:
                    break
                yield decision
            study.tell(trial, state=optuna.trial.TrialState.FAIL)


def test_a_decision_whose_probability_is_above_the_threshold_never_stops() -> None:
    # The forecast-alone rule (require_behind off), so every decision's threshold is the one used.
    pruner = TimeToTargetPruner(TARGET, epsilon=0.03, max_cost=30 * EVERY, require_behind=False)
    checked = 0
    for decision in forecast_decisions(pruner, study_of(pruner, 12, seed=1)):
        if not decision.probability < decision.threshold:
            assert not decision.prune, decision
            checked += 1
        else:
            assert decision.prune
    assert checked > 10


@pytest.mark.parametrize("epsilon_behind", [0.0, 0.1])
def test_with_an_incumbent_the_reported_threshold_is_the_one_require_behind_applies(
    epsilon_behind: float,
) -> None:
    # Under require_behind (the default) a trial is held only to epsilon_behind's bound once a
    # trial has reached; the decision must report that bound, not the forecast-alone one it
    # skipped, so "probability >= threshold never stops" holds for what the dashboard shows.
    pruner = TimeToTargetPruner(TARGET, epsilon=0.03, epsilon_behind=epsilon_behind, max_cost=30 * EVERY)
    judged = 0
    for decision in forecast_decisions(pruner, study_of(pruner, 12, seed=1)):
        if decision.reason != "may-beat-incumbent":
            continue
        assert math.isfinite(decision.incumbent)
        judged += 1
        assert not decision.prune
        if epsilon_behind == 0.0:
            assert decision.threshold == 0.0, decision  # no forecast stop applies
        else:
            assert 0.0 < decision.threshold <= epsilon_behind, decision
    assert judged > 10


def test_without_an_incumbent_a_steadily_improving_trial_is_not_stopped_for_max_cost() -> None:
    # No finished trial: the only bar is max_cost. The curve falls toward the target at every
    # report on a line that gets there in time, although a forecast from a short prefix may
    # doubt it (a study of a workload convtune never saw stopped every such trial at 25-40%).
    pruner = TimeToTargetPruner(TARGET, max_cost=20 * EVERY, prior_trials=0)
    study = optuna.create_study(pruner=pruner)
    trial = study.ask()
    for i in range(1, 16):
        trial.report(2.6 - 0.045 * i, step=i * EVERY)  # reaches 1.9 at report 16, before the cap
        decision = pruner.decide(study, study._storage.get_trial(trial._trial_id))
        assert decision.reason != "cannot-reach-by-max-cost" or i < 4, (i, decision)
        assert not (i >= 4 and decision.prune), (i, decision)


def test_reach_probability_reads_the_interval_when_the_forecast_has_no_distribution() -> None:
    forecast = Forecast(2000.0, 1000.0, 4000.0, False, 0.9, 0.8, model="power")
    costs = [200.0, 500.0, 1000.0, 2000.0, 4000.0, 8000.0, 1e6]
    probabilities = [reach_probability(forecast, c) for c in costs]
    assert probabilities == sorted(probabilities)  # non-decreasing in cost
    assert probabilities[2] == pytest.approx(0.1, abs=1e-6) and probabilities[3] == pytest.approx(0.5)
    assert probabilities[-1] <= 0.9  # never above the chance of reaching at all
    assert math.isnan(reach_probability(Forecast(math.inf, 10.0, math.inf, False, math.nan, 0.8), 50.0))
    assert (
        reach_probability(Forecast(math.inf, math.inf, math.inf, False, 0.0, 0.8, diverged=True), 50.0) == 0.0
    )


def test_reach_probability_prefers_the_forecasts_own() -> None:
    class Calibrated(Forecast):
        def probability_before(self, cost: float) -> float:
            return 0.25

    assert reach_probability(Calibrated(2000.0, 1000.0, 4000.0, False, 0.9, 0.8, model="power"), 10.0) == 0.25


def test_a_blown_up_trial_is_judged_on_how_often_blow_ups_recover() -> None:
    # Improved, then ended twice above its start: some such curves come back when a cyclic or
    # stepped LR falls (the shipped calibration measured how many), so it is no exact stop. Without
    # an incumbent its chance of reaching by max_cost is that share, well above epsilon / rungs.
    pruner = TimeToTargetPruner(TARGET, epsilon=0.03, max_cost=30 * EVERY)
    study = optuna.create_study(pruner=pruner)
    trial = study.ask()
    values = [2.6, 2.3, 2.1, 2.0, 2.3, 2.7, 2.8, 2.9]  # report 8 is a rung
    for i, value in enumerate(values, start=1):
        trial.report(value, step=i * EVERY)
    decision = pruner.decide(study, study._storage.get_trial(trial._trial_id))
    assert decision.forecast is not None and decision.forecast.model == "blew-up"
    assert decision.reason == "may-beat-incumbent" and not decision.prune
    assert decision.probability == pytest.approx(decision.forecast.probability) and decision.probability > 0
    # A non-finite value is still an exact stop.
    trial.report(math.nan, step=9 * EVERY)
    decision = pruner.decide(study, study._storage.get_trial(trial._trial_id))
    assert decision.prune and decision.reason == "diverged"


def test_a_trial_is_judged_against_the_incumbent_plus_the_seed_to_seed_margin() -> None:
    # The incumbent reached at 10,000; this trial will at about 10,500 (5% slower: within the
    # spread between seeds of one configuration). By default the bar is 10% above the incumbent.
    pruner = TimeToTargetPruner(TARGET, epsilon=0.03, max_cost=30_000, prior_trials=0)
    study = optuna.create_study(pruner=pruner)

    def curve(speed: float, cost: float) -> float:
        return 1.5 + 4.0 * (speed * cost) ** -0.5

    incumbent = study.ask()
    for cost in range(100, 10_001, 100):
        incumbent.report(curve(0.01, cost), step=cost)
    study.tell(incumbent, 10_000.0)
    trial = study.ask()
    decisions = []
    for cost in range(100, 6_401, 100):
        trial.report(curve(0.0095, cost), step=cost)
        decision = pruner.decide(study, study._storage.get_trial(trial._trial_id))
        if decision.forecast is not None and not decision.forecast.reached:
            decisions.append(decision)
    assert decisions and DEFAULT_MARGIN == pytest.approx(0.1)
    for decision in decisions:
        assert decision.incumbent == 10_000.0 and decision.forecast is not None
        bar = reach_probability(decision.forecast, 10_000.0 * (1 + DEFAULT_MARGIN))
        assert decision.probability == pytest.approx(bar)
    last = decisions[-1]
    assert last.forecast is not None and last.probability > reach_probability(last.forecast, 10_000.0)


def test_a_trial_behind_the_median_at_equal_cost_has_a_second_budget_and_one_ahead_does_not() -> None:
    # epsilon_behind: a trial farther from the target than the median of the finished trials at
    # the same cost is also stopped below epsilon_behind / rungs; the forecast still vetoes the
    # equal-cost verdict (a stop needs both), and a trial ahead of that median never meets it.
    finished: dict[float, dict[int, float]] = {}
    for speed in (0.01, 0.015, 0.02, 0.03):
        finished[speed] = {}
        for i in range(1, 31):
            finished[speed][i * EVERY] = loss(speed, 1.5, i * EVERY)
            if finished[speed][i * EVERY] <= 1.9:
                break

    def median_there(cost: int) -> float:
        return float(np.median([curve[cost] for curve in finished.values() if max(curve) >= cost]))

    plain = {"max_cost": 30 * EVERY, "prior_trials": 0, "require_behind": False}
    off = TimeToTargetPruner(TARGET, epsilon=0.01, epsilon_behind=0.0, **plain)
    on = TimeToTargetPruner(TARGET, epsilon=0.01, epsilon_behind=0.5, **plain)
    with pytest.raises(ValueError, match="epsilon_behind"):
        TimeToTargetPruner(TARGET, epsilon_behind=1.0)
    behind_stops: dict[tuple[float, float], int] = {}
    for speed, floor in ((0.004, 1.5), (0.006, 1.6), (0.05, 1.8), (0.5, 1.95), (0.08, 1.5)):
        study = optuna.create_study(pruner=off)
        for curve in finished.values():
            study.add_trial(
                optuna.trial.create_trial(
                    value=float(max(curve)), intermediate_values=curve, distributions={}, params={}
                )
            )
        trial = study.ask()
        behind_stops[(speed, floor)] = 0
        for i in range(1, 8):
            value = loss(speed, floor, i * EVERY)
            trial.report(value, step=i * EVERY)
            frozen = study._storage.get_trial(trial._trial_id)
            with_budget, without = on.decide(study, frozen), off.decide(study, frozen)
            if without.prune:
                assert with_budget.prune  # the second budget only adds stops
            if with_budget.reason == "behind-and-unlikely":
                assert value > median_there(i * EVERY), (speed, floor, i)  # behind, at equal cost
                # Decided on a probability below the second budget's bound, above the first's.
                assert without.threshold <= with_budget.probability < with_budget.threshold, with_budget
                behind_stops[(speed, floor)] += 1
            if with_budget.prune or without.prune:
                break
    assert behind_stops[(0.004, 1.5)] == 1, behind_stops  # far behind: stopped on the second budget
    assert behind_stops[(0.08, 1.5)] == 0, behind_stops  # ahead all along


def test_before_any_trial_reaches_the_decisions_spend_their_own_budget() -> None:
    # epsilon_before_incumbent replaces epsilon only while no trial has reached the target (the
    # bar is then max_cost); once one has, decisions against the incumbent use epsilon again.
    default = TimeToTargetPruner(
        TARGET, epsilon=0.01, max_cost=30 * EVERY, prior_trials=0, epsilon_behind=0.0
    )
    looser = TimeToTargetPruner(
        TARGET,
        epsilon=0.01,
        epsilon_before_incumbent=0.3,
        max_cost=30 * EVERY,
        prior_trials=0,
        epsilon_behind=0.0,
    )
    with pytest.raises(ValueError, match="epsilon_before_incumbent"):
        TimeToTargetPruner(TARGET, epsilon_before_incumbent=1.0)
    study = optuna.create_study(pruner=default)
    extra_stops = 0
    for speed, floor in ((0.002, 1.85), (0.003, 1.8), (0.004, 1.88), (0.01, 1.89), (0.05, 1.5)):
        trial = study.ask()
        for i in range(1, 30):
            trial.report(loss(speed, floor, i * EVERY), step=i * EVERY)
            frozen = study._storage.get_trial(trial._trial_id)
            a, b = default.decide(study, frozen), looser.decide(study, frozen)
            if a.prune:
                assert b.prune  # the looser budget only adds stops
            if b.reason == "cannot-reach-by-max-cost" and b.probability is not None:
                assert b.threshold == pytest.approx(30 * a.threshold)  # 0.3 / n against 0.01 / n
            if b.prune and not a.prune:
                assert b.reason == "cannot-reach-by-max-cost", b
                assert a.threshold <= b.probability < b.threshold, (a, b)
                extra_stops += 1
            if a.prune or b.prune:
                break
        study.tell(trial, state=optuna.trial.TrialState.FAIL)
    assert extra_stops >= 1  # the test must exercise the looser budget

    # With an incumbent both judge against its time on the same epsilon.
    study.add_trial(
        optuna.trial.create_trial(
            value=5 * EVERY,
            intermediate_values={i * EVERY: 2.5 - 0.15 * i for i in range(1, 6)},
            distributions={},
            params={},
            user_attrs={"time_to_target": 5 * EVERY},
        )
    )
    trial = study.ask()
    for i in range(1, 5):
        trial.report(loss(0.003, 1.8, i * EVERY), step=i * EVERY)
        frozen = study._storage.get_trial(trial._trial_id)
        a, b = default.decide(study, frozen), looser.decide(study, frozen)
        assert math.isfinite(a.incumbent) and a.reason != "cannot-reach-by-max-cost", a
        assert (a.prune, a.reason, a.threshold) == (b.prune, b.reason, b.threshold)
        if a.prune:
            break


def test_a_bounded_reach_model_cannot_turn_a_likely_trial_into_a_stop(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A reach model that calls every curve hopeless (as the unbounded one did for a near-best
    run of a workload unlike those it was fitted on) stops trials the maps would let run; with
    ``reach_max_lowering`` it pulls the maps' probability down tenfold at most."""
    from convtune.curves import CrossingCalibration, ReachModel, _forecast
    from convtune.curves._calibration import default_calibration
    from convtune.curves._reach import feature_names

    base = default_calibration()
    maps_only = CrossingCalibration(base.maps, (), base.thresholds, base.blends)
    hopeless = {
        f"{head}:all": ReachModel(np.zeros(n), np.ones(n), np.zeros(n), -30.0)
        for head, n in (("blind", len(feature_names(False))), ("sched", len(feature_names(True))))
    }
    confident = CrossingCalibration(base.maps, (), base.thresholds, base.blends, hopeless)
    using = {"calibration": maps_only}
    monkeypatch.setattr(_forecast, "default_calibration", lambda: using["calibration"])
    pruners = {
        "unbounded": TimeToTargetPruner(TARGET, max_cost=30 * EVERY, require_behind=False),
        "bounded": TimeToTargetPruner(
            TARGET, max_cost=30 * EVERY, reach_max_lowering=10, require_behind=False
        ),
    }
    study = study_of(TimeToTargetPruner(TARGET, max_cost=30 * EVERY), 12, seed=1)  # an incumbent
    rescued = 0
    for speed in (0.005, 0.01, 0.03):
        for floor in (1.4, 1.7, 1.85):
            trial = study.ask()
            for i in range(1, 9):
                trial.report(loss(speed, floor, i * EVERY), step=i * EVERY)
                frozen = study._storage.get_trial(trial._trial_id)
                using["calibration"] = maps_only
                maps = pruners["unbounded"].decide(study, frozen)
                using["calibration"] = confident
                unbounded, bounded = (pruners[k].decide(study, frozen) for k in ("unbounded", "bounded"))
                if maps.reason in EXACT or maps.probability is None or math.isnan(maps.probability):
                    continue
                assert unbounded.probability <= bounded.probability <= maps.probability + 1e-12
                assert bounded.probability >= maps.probability / 10 - 1e-12
                rescued += unbounded.prune and not bounded.prune and not maps.prune
            study.tell(trial, state=optuna.trial.TrialState.FAIL)
    assert rescued > 0, "some decisions the maps let run must be stops without the bound"


def test_with_require_behind_no_trial_is_stopped_on_its_forecast_alone_once_one_has_reached() -> None:
    """``require_behind``: once a trial has reached the target, a forecast stop also needs the
    finished trials' median at equal cost against the trial (``behind-and-unlikely``); the
    stops that need no forecast and the decisions before any trial reaches are unchanged."""
    alone = TimeToTargetPruner(
        TARGET, epsilon=0.03, max_cost=30 * EVERY, prior_trials=0, require_behind=False
    )
    behind = TimeToTargetPruner(TARGET, epsilon=0.03, max_cost=30 * EVERY, prior_trials=0)  # the default
    study = optuna.create_study()
    for speed in (0.004, 0.006, 0.008, 0.012):  # they reach at 25,000 … 9,000 samples
        curve = {}
        for i in range(1, 31):
            curve[i * EVERY] = loss(speed, 1.5, i * EVERY)
            if curve[i * EVERY] <= 1.9:
                break
        study.add_trial(
            optuna.trial.create_trial(
                value=float(max(curve)), intermediate_values=curve, distributions={}, params={}
            )
        )
    spared = kept = 0
    for speed in (0.001, 0.003, 0.005, 0.01, 0.03):
        for floor in (1.4, 1.7, 1.85, 2.0):
            trial = study.ask()
            for i in range(1, 12):
                trial.report(loss(speed, floor, i * EVERY), step=i * EVERY)
                frozen = study._storage.get_trial(trial._trial_id)
                a, b = alone.decide(study, frozen), behind.decide(study, frozen)
                assert math.isfinite(b.incumbent)
                if b.prune:
                    assert a.prune  # it only takes stops away
                    assert b.reason in EXACT | {"behind-and-unlikely"}, b
                    kept += b.reason == "behind-and-unlikely"
                if a.prune and not b.prune:
                    assert a.reason == "cannot-beat-incumbent", a
                    spared += 1
                if a.prune or b.prune:
                    break
            study.tell(trial, state=optuna.trial.TrialState.FAIL)
    assert spared > 0 and kept > 0, (spared, kept)

    # Before any trial has reached, both decide alike.
    fresh = optuna.create_study()
    compared = 0
    for speed, floor in ((0.002, 1.85), (0.004, 1.88), (0.05, 1.5)):
        trial = fresh.ask()
        for i in range(1, 12):
            trial.report(loss(speed, floor, i * EVERY), step=i * EVERY)
            frozen = fresh._storage.get_trial(trial._trial_id)
            a, b = alone.decide(fresh, frozen), behind.decide(fresh, frozen)
            assert (a.prune, a.reason, a.threshold) == (b.prune, b.reason, b.threshold) or (
                math.isnan(a.threshold) and (a.prune, a.reason) == (b.prune, b.reason)
            )
            compared += 1
            if a.prune:
                break
        fresh.tell(trial, state=optuna.trial.TrialState.FAIL)
    assert compared > 5


def finished_study(curves: list[dict[int, float]]) -> optuna.Study:
    """A study whose finished trials have these curves (reports by cost)."""
    study = optuna.create_study()
    for curve in curves:
        study.add_trial(
            optuna.trial.create_trial(value=1.0, intermediate_values=curve, distributions={}, params={})
        )
    return study


def equal_cost_decisions(
    finished: list[dict[int, float]],
    level: float,
    plain: TimeToTargetPruner,
    changed: TimeToTargetPruner,
    first: float | None = None,
) -> tuple[PruneDecision, PruneDecision]:
    """Both pruners' decisions on a new trial at its second report (``level``, after ``first``,
    by default ``level + 0.005``), in a study whose finished trials have these curves."""
    study = finished_study(finished)
    trial = study.ask()
    first = level + 0.005 if first is None else first
    for cost, value in zip((EVERY, 2 * EVERY), (first, level), strict=True):
        trial.report(value, step=cost)
    frozen = study._storage.get_trial(trial._trial_id)
    return plain.decide(study, frozen), changed.decide(study, frozen)


def test_comeback_veto_keeps_a_trial_behind_by_no_more_than_a_finished_winner_once_stood() -> None:
    # The equal-cost verdict says a trial behind the finished trials' median is slow. A finished
    # trial that stood as far from the target at that cost and still reached first says otherwise
    # (a plateau before a drop: sparse parity in docs/benchmarks.md). comeback_veto holds the
    # behind-and-unlikely stop back then (the default); a trial farther behind than any such
    # winner is stopped.
    costs = [i * EVERY for i in range(1, 9)]
    late_bloomer = dict(zip(costs, [2.70, 2.69, 2.69, 2.68, 2.30, 1.85, 1.80, 1.78], strict=True))
    steady = [{c: loss(speed, 2.0, c) for c in costs} for speed in (0.02, 0.03, 0.05)]
    plain = {"max_cost": 30 * EVERY, "prior_trials": 0, "epsilon_behind": 0.5}
    assert DEFAULT_COMEBACK_VETO
    default = TimeToTargetPruner(TARGET, **plain)
    plain_verdict = TimeToTargetPruner(TARGET, comeback_veto=False, **plain)
    with pytest.raises(ValueError, match="comeback_veto"):
        TimeToTargetPruner(TARGET, comeback_veto=2)

    finished = [late_bloomer, *steady]
    within = equal_cost_decisions(finished, 2.68, plain_verdict, default)
    beyond = equal_cost_decisions(finished, 2.75, plain_verdict, default)
    for without_veto, _ in (within, beyond):
        assert (without_veto.prune, without_veto.reason) == (True, "behind-and-unlikely"), without_veto
    assert not within[1].prune and within[1].reason == "may-beat-incumbent", within[1]
    assert (beyond[1].prune, beyond[1].reason) == (True, "behind-and-unlikely"), beyond[1]


PLATEAU_COSTS = [i * EVERY for i in range(1, 17)]


def plateau_winners() -> list[dict[int, float]]:
    """Three finished trials that wander around 2.69 by the validation set's noise for ten
    reports, then drop and reach the target (1.9) by the thirteenth."""
    plateau, drop = [2.70, 2.69, 2.70, 2.69, 2.69, 2.68, 2.69, 2.68, 2.68, 2.68], [2.40, 2.05, 1.86]
    tail = [1.84, 1.83, 1.82]
    return [
        {
            c: v + shift + 0.01 * sign * (-1) ** i
            for i, (c, v) in enumerate(zip(PLATEAU_COSTS, plateau + drop + tail, strict=True))
        }
        for shift, sign in ((0.0, 1), (0.01, -1), (-0.01, 1))
    ]


def test_behind_noise_counts_a_trial_behind_only_by_more_than_the_evaluation_noise() -> None:
    # Three finished trials wander around 2.69 by the validation set's noise before they drop
    # and reach the target. A trial 0.03 behind their median at equal cost (and behind all of
    # them, so comeback_veto does not apply) is behind by noise: behind_noise = 2 keeps it, the
    # plain rule (behind_noise = 0, the default) stops it. One 0.11 behind is stopped by both.
    finished = plateau_winners()
    plain = {"max_cost": 30 * EVERY, "prior_trials": 0, "epsilon_behind": 0.5}
    noise_tolerant = TimeToTargetPruner(TARGET, behind_noise=2.0, **plain)
    default = TimeToTargetPruner(TARGET, **plain)
    with pytest.raises(ValueError, match="behind_noise"):
        TimeToTargetPruner(TARGET, behind_noise=-1.0)

    by_noise = equal_cost_decisions(finished, 2.72, default, noise_tolerant)
    by_more = equal_cost_decisions(finished, 2.80, default, noise_tolerant)
    for plain_rule, _ in (by_noise, by_more):
        assert (plain_rule.prune, plain_rule.reason) == (True, "behind-and-unlikely"), plain_rule
    assert not by_noise[1].prune and by_noise[1].reason == "may-beat-incumbent", by_noise[1]
    assert (by_more[1].prune, by_more[1].reason) == (True, "behind-and-unlikely"), by_more[1]


def decision_after(
    finished: list[dict[int, float]], reports: list[float], pruner: TimeToTargetPruner
) -> PruneDecision:
    """The pruner's decision on a new trial that reported these values at EVERY, 2 EVERY, …, in a
    study whose finished trials have these curves."""
    study = finished_study(finished)
    trial = study.ask()
    for i, value in enumerate(reports, start=1):
        trial.report(value, step=i * EVERY)
    return pruner.decide(study, study._storage.get_trial(trial._trial_id))


def test_plateau_wait_holds_a_flat_trial_back_until_it_has_spent_that_share_of_the_time_to_beat() -> None:
    # Three finished trials dropped at once and reached the target (1.9) between 7 and 8 EVERY
    # (the incumbent's time). A trial still flat at 2.69 at its second report stands behind all
    # of them, and no finished trial stood as far back (comeback_veto does not apply): the plain
    # rule stops it. plateau_wait = 0.45 holds it back until it has spent 0.45 of the time to
    # beat, the incumbent's + 10% (by its fourth report, the next rung), and then stops it if it
    # is still flat. A trial that fell from 2.80 to the same 2.69 (an eighth of its distance)
    # is not on its first plateau and is stopped at once by both.
    costs = [i * EVERY for i in range(1, 10)]
    fast = [2.30, 2.10, 2.02, 1.98, 1.95, 1.93, 1.91, 1.88, 1.86]
    finished = [{c: v + shift for c, v in zip(costs, fast, strict=True)} for shift in (0.0, 0.005, 0.01)]
    plain = {"max_cost": 30 * EVERY, "prior_trials": 0, "epsilon_behind": 0.5}
    assert DEFAULT_PLATEAU_WAIT == 0.0
    default = TimeToTargetPruner(TARGET, **plain)
    waiting = TimeToTargetPruner(TARGET, plateau_wait=0.45, **plain)
    for bad in (-0.5, math.inf, True):
        with pytest.raises(ValueError, match="plateau_wait"):
            TimeToTargetPruner(TARGET, plateau_wait=bad)

    flat = [2.70, 2.69]
    assert (
        decision_after(finished, flat, default).prune,
        decision_after(finished, flat, default).reason,
    ) == (
        True,
        "behind-and-unlikely",
    )
    held = decision_after(finished, flat, waiting)
    assert (held.prune, held.reason) == (False, "may-beat-incumbent"), held
    still_flat = decision_after(finished, [2.70, 2.69, 2.70, 2.69], waiting)
    assert (still_flat.prune, still_flat.reason) == (True, "behind-and-unlikely"), still_flat
    fell = [2.80, 2.69]
    for pruner in (default, waiting):
        decision = decision_after(finished, fell, pruner)
        assert (decision.prune, decision.reason) == (True, "behind-and-unlikely"), decision


def test_plateau_stretch_holds_a_flat_trial_back_while_a_winner_sat_on_its_plateau_that_long() -> None:
    # Three finished trials, reporting every half EVERY, sat at 2.70 for two reports, left that
    # plateau at their third (1.5 EVERY: 2.55) and reached the target (1.9) near 5 EVERY. A new
    # trial still at 2.69 at its second report (2 EVERY) stands behind all of them there, farther
    # than they ever stood at that cost (comeback_veto does not apply): the plain rule stops it.
    # plateau_stretch = 1.5 holds it back while its plateau is at most 1.5 times as long as a
    # winner's (up to 2.25 EVERY), and stops it at its fourth report if it is still flat. Winners
    # that left their first report's level at once (at their second report) never sat on a
    # plateau, and hold nothing.
    costs = [i * EVERY // 2 for i in range(1, 13)]
    descent = [2.45, 2.35, 2.25, 2.15, 2.05, 1.95, 1.88, 1.86, 1.85]
    sat, fell = [2.70, 2.70, 2.55, *descent], [2.70, 2.55, *descent, 1.84]
    plain = {"max_cost": 30 * EVERY, "prior_trials": 0, "epsilon_behind": 0.5}
    assert DEFAULT_PLATEAU_STRETCH == 0.0
    default = TimeToTargetPruner(TARGET, **plain)
    stretching = TimeToTargetPruner(TARGET, plateau_stretch=1.5, **plain)
    for bad in (-1.0, math.inf, True):
        with pytest.raises(ValueError, match="plateau_stretch"):
            TimeToTargetPruner(TARGET, plateau_stretch=bad)

    def finished(curve: list[float]) -> list[dict[int, float]]:
        return [{c: v + shift for c, v in zip(costs, curve, strict=True)} for shift in (0.0, 0.005, 0.01)]

    flat, still_flat = [2.71, 2.69], [2.71, 2.69, 2.70, 2.69]
    plain_stop = decision_after(finished(sat), flat, default)
    assert (plain_stop.prune, plain_stop.reason) == (True, "behind-and-unlikely"), plain_stop
    held = decision_after(finished(sat), flat, stretching)
    assert (held.prune, held.reason) == (False, "may-beat-incumbent"), held
    longer = decision_after(finished(sat), still_flat, stretching)
    assert (longer.prune, longer.reason) == (True, "behind-and-unlikely"), longer
    no_plateau_seen = decision_after(finished(fell), flat, stretching)
    assert (no_plateau_seen.prune, no_plateau_seen.reason) == (True, "behind-and-unlikely"), no_plateau_seen


def test_behind_reports_asks_that_a_trial_stood_behind_at_its_last_reports_in_a_row() -> None:
    # Three finished trials reached the target (the fastest at 2 EVERY). A new trial ahead of
    # their median at its first report jumps far behind at its second (a GAN's energy does:
    # docs/benchmarks.md, "Check S"): the plain rule (behind_reports = 1, without the jump veto)
    # stops it on that one report, behind_reports = 2 keeps it. One behind at both reports is stopped by
    # both.
    costs = [i * EVERY for i in range(1, 9)]
    finished = [{c: loss(speed, 1.5, c) for c in costs} for speed in (0.02, 0.03, 0.05)]
    plain = {"max_cost": 30 * EVERY, "prior_trials": 0, "epsilon_behind": 0.5, "jump_veto": False}
    default = TimeToTargetPruner(TARGET, **plain)
    two_in_a_row = TimeToTargetPruner(TARGET, behind_reports=2, **plain)
    for wrong in (0, 1.5, math.inf, True):
        with pytest.raises(ValueError, match="behind_reports"):
            TimeToTargetPruner(TARGET, behind_reports=wrong)  # type: ignore[arg-type]

    median_at_first = float(np.median([curve[EVERY] for curve in finished]))
    jumped = equal_cost_decisions(finished, 2.6, default, two_in_a_row, first=median_at_first - 0.1)
    behind_twice = equal_cost_decisions(finished, 2.6, default, two_in_a_row, first=median_at_first + 0.1)
    for plain_rule, _ in (jumped, behind_twice):
        assert (plain_rule.prune, plain_rule.reason) == (True, "behind-and-unlikely"), plain_rule
    assert (jumped[1].prune, jumped[1].reason) == (False, "may-beat-incumbent"), jumped[1]
    assert jumped[1].probability == jumped[0].probability  # the forecast is not what changed
    assert (behind_twice[1].prune, behind_twice[1].reason) == (True, "behind-and-unlikely"), behind_twice[1]


def test_jump_veto_asks_for_the_earlier_report_only_where_the_trial_moved_away_from_the_target() -> None:
    # The finished trials of the behind_reports test. jump_veto (the default since session 39,
    # "Check U") keeps a trial that was ahead of
    # their median at its first report and jumped far behind at its second; it stops, as the
    # default does, one that improved at its second report and is still behind (no jump), and one
    # that stood behind before its jump too.
    costs = [i * EVERY for i in range(1, 9)]
    finished = [{c: loss(speed, 1.5, c) for c in costs} for speed in (0.02, 0.03, 0.05)]
    plain = {"max_cost": 30 * EVERY, "prior_trials": 0, "epsilon_behind": 0.5}
    assert DEFAULT_JUMP_VETO
    default = TimeToTargetPruner(TARGET, jump_veto=False, **plain)
    vetoed = TimeToTargetPruner(TARGET, **plain)
    with pytest.raises(ValueError, match="jump_veto"):
        TimeToTargetPruner(TARGET, jump_veto=2)

    median_at_first = float(np.median([curve[EVERY] for curve in finished]))
    jumped = equal_cost_decisions(finished, 2.6, default, vetoed, first=median_at_first - 0.1)
    improved = equal_cost_decisions(finished, 2.6, default, vetoed, first=2.9)
    behind_then_jumped = equal_cost_decisions(finished, 2.6, default, vetoed, first=median_at_first + 0.1)
    for plain_rule, _ in (jumped, improved, behind_then_jumped):
        assert (plain_rule.prune, plain_rule.reason) == (True, "behind-and-unlikely"), plain_rule
    assert (jumped[1].prune, jumped[1].reason) == (False, "may-beat-incumbent"), jumped[1]
    for _, with_veto in (improved, behind_then_jumped):
        assert (with_veto.prune, with_veto.reason) == (True, "behind-and-unlikely"), with_veto


def test_study_shift_moves_the_probability_by_how_the_finished_trials_forecasts_came_out() -> None:
    # The three plateau winners were each forecast, at the share of their run a new trial has
    # reached, a low chance of reaching within it, and all three reached: the forecaster ran low
    # on this study. study_shift fits that bias (convtune.curves.study_offset) and moves the
    # probability a stop reads, which keeps a trial the unshifted forecast stops. A finished trial
    # the pruner stopped says nothing of its own outcome, so it is not counted.
    plain = {"max_cost": 30 * EVERY, "prior_trials": 0, "epsilon_behind": 0.5, "comeback_veto": False}
    assert not DEFAULT_STUDY_SHIFT
    unshifted = TimeToTargetPruner(TARGET, **plain)
    shifted = TimeToTargetPruner(TARGET, study_shift=True, **plain)
    with pytest.raises(ValueError, match="study_shift"):
        TimeToTargetPruner(TARGET, study_shift=2)
    study = finished_study(plateau_winners())
    stopped = {c: 2.9 for c in PLATEAU_COSTS[:4]}
    study.add_trial(
        optuna.trial.create_trial(
            value=1.0,
            intermediate_values=stopped,
            distributions={},
            params={},
            user_attrs={STATUS_ATTR: TrialStatus.STOPPED.value},
        )
    )
    trial = study.ask()
    for cost in PLATEAU_COSTS[:2]:
        trial.report(2.80, step=cost)
    frozen = study._storage.get_trial(trial._trial_id)
    before, after = unshifted.decide(study, frozen), shifted.decide(study, frozen)

    winners = study.get_trials(states=(optuna.trial.TrialState.COMPLETE,))[:3]
    said = [unshifted.forecast_prefix(study, t, PLATEAU_COSTS[1]).probability for t in winners]
    offset = study_offset(said, [True] * len(said))  # same share, same planned end (max_cost)
    assert max(said) < 0.5 and offset > 0.5
    assert after.probability == pytest.approx(shift_probability(before.probability, offset))
    assert (before.prune, before.reason) == (True, "behind-and-unlikely"), before
    assert before.probability < before.threshold <= after.probability
    assert (after.prune, after.reason) == (False, "may-beat-incumbent"), after

    # study_shift_z (check O) applies the offset only where three outcomes put it that many
    # posterior sds from 0: a gate below the offset's standing keeps the shift, one above it
    # leaves the unshifted stop.
    assert study_offset(said, [True] * len(said), min_z=1.0) == pytest.approx(offset)
    assert study_offset(said, [True] * len(said), min_z=10.0) == 0.0
    low_gate = TimeToTargetPruner(TARGET, study_shift=True, study_shift_z=1.0, **plain).decide(study, frozen)
    high_gate = TimeToTargetPruner(TARGET, study_shift=True, study_shift_z=10.0, **plain).decide(
        study, frozen
    )
    assert (low_gate.prune, low_gate.probability) == (False, pytest.approx(after.probability))
    assert (high_gate.prune, high_gate.probability) == (True, pytest.approx(before.probability))
    assert DEFAULT_STUDY_SHIFT_Z == 0.0
    for bad in (-1.0, True, math.inf):
        with pytest.raises(ValueError, match="study_shift_z"):
            TimeToTargetPruner(TARGET, study_shift=True, study_shift_z=bad)
    with pytest.raises(ValueError, match="study_shift_z applies under study_shift only"):
        TimeToTargetPruner(TARGET, study_shift_z=2.0)


def test_plateau_references_keep_a_trial_on_the_plateau_every_finished_winner_sat_on() -> None:
    # Three finished trials sat on a plateau around 2.69 for ten reports, then dropped and
    # reached the target. A new trial sits on the plateau too, 0.1 farther from the target than
    # any of them stood (so comeback_veto has no comeback to point at): the calibrated forecast
    # alone gives it little chance and the equal-cost rule stops it. With plateau_references the
    # forecast reads that every trial of this study that sat on a plateau there went on to reach,
    # and keeps it.
    finished = plateau_winners()
    plain = {"max_cost": 30 * EVERY, "prior_trials": 0, "epsilon_behind": 0.5}
    assert not DEFAULT_PLATEAU_REFERENCES
    default = TimeToTargetPruner(TARGET, **plain)
    with_references = TimeToTargetPruner(TARGET, plateau_references=True, **plain)
    with pytest.raises(ValueError, match="plateau_references"):
        TimeToTargetPruner(TARGET, plateau_references=2)

    study = finished_study(finished)
    trial = study.ask()
    for i, cost in enumerate(PLATEAU_COSTS[:4]):
        trial.report(2.80 + 0.01 * (-1) ** i, step=cost)
    frozen = study._storage.get_trial(trial._trial_id)
    alone, told = default.decide(study, frozen), with_references.decide(study, frozen)
    assert (alone.prune, alone.reason) == (True, "behind-and-unlikely"), alone
    assert (told.prune, told.reason) == (False, "may-beat-incumbent"), told
    # Three of three matched trials reached, the forecast weighing five: at least 3/8 by the bar.
    assert told.probability >= 3 / 8 > alone.probability
    # The forecast a stopped trial would record is the one the decision used.
    assert with_references.forecast_trial(study, frozen).probability == told.forecast.probability


def test_pause_behind_pauses_a_trial_behind_the_median_at_any_report_with_no_forecast_asked() -> None:
    # pause_behind: once a trial has reached, one farther from the target than the finished
    # trials' median at equal cost is paused at its first report, before any rung and whatever
    # its forecast says (MedianPruner's evidence, as a pause); one ahead of that median is not,
    # and the comeback veto still holds the pause back where a winner once stood as far.
    costs = [i * EVERY for i in range(1, 9)]
    steady = [{c: loss(speed, 1.5, c) for c in costs} for speed in (0.02, 0.03, 0.05)]
    plain = {"max_cost": 30 * EVERY, "prior_trials": 0, "n_warmup_reports": 4}
    default = TimeToTargetPruner(TARGET, **plain)
    pausing = TimeToTargetPruner(TARGET, pause_behind=True, **plain)
    with pytest.raises(ValueError, match="pause_behind"):
        TimeToTargetPruner(TARGET, pause_behind=2)

    median_at_2000 = float(np.median([curve[2 * EVERY] for curve in steady]))
    behind = equal_cost_decisions(steady, median_at_2000 + 0.05, default, pausing)
    ahead = equal_cost_decisions(steady, median_at_2000 - 0.05, default, pausing)
    assert (behind[0].prune, behind[0].reason) == (False, "warm-up"), behind[0]
    assert (behind[1].prune, behind[1].reason) == (True, "behind-median"), behind[1]
    assert math.isnan(behind[1].probability) and behind[1].forecast is None  # no forecast asked
    assert (ahead[1].prune, ahead[1].reason) == (False, "warm-up"), ahead[1]

    # The incumbent stood 2.70 at that cost before it dropped and reached (the others never
    # reach): a trial behind the median but no farther back than it stood is not paused, one
    # farther back is, and without the veto both are.
    late_bloomer = dict(zip(costs, [2.71, 2.70, 2.69, 2.68, 2.30, 1.85, 1.80, 1.78], strict=True))
    comeback = [late_bloomer, *({c: loss(speed, 2.0, c) for c in costs} for speed in (0.02, 0.03, 0.05))]
    within = equal_cost_decisions(comeback, 2.69, default, pausing)[1]
    beyond = equal_cost_decisions(comeback, 2.75, default, pausing)[1]
    assert not within.prune and (beyond.prune, beyond.reason) == (True, "behind-median"), (within, beyond)
    without_veto = TimeToTargetPruner(TARGET, pause_behind=True, comeback_veto=False, **plain)
    assert equal_cost_decisions(comeback, 2.69, default, without_veto)[1].reason == "behind-median"

    # Before any trial has reached the target there is no pause: nothing to be behind yet.
    unreached = [{c: 2.5 - 0.01 * i for i, c in enumerate(costs)} for _ in range(3)]
    assert not equal_cost_decisions(unreached, 2.6, default, pausing)[1].prune


def test_pause_phase_compares_a_trial_only_with_runs_no_further_into_their_lr_decay() -> None:
    # Under pause_phase, a trial still at its peak LR (warmup-stable-decay, step) is not paused
    # for standing behind runs whose LR had already decayed at that cost: its own drop is still
    # to come. A trial as far into its decay as they were is paused as under pause_behind alone,
    # and one still warming up is never paused.
    costs = [i * EVERY for i in range(1, 9)]
    horizon = 8 * EVERY
    steps = list(range(0, horizon + 1, EVERY // 2))
    cosine = {"costs": steps, "lrs": [0.5 * (1 + math.cos(math.pi * c / horizon)) for c in steps]}
    constant = {"costs": [0, horizon], "lrs": [1.0, 1.0]}
    warming = {"costs": [0, 3 * EVERY, horizon], "lrs": [0.1, 1.0, 1.0]}
    annealed = {"costs": [0, EVERY, horizon], "lrs": [1.0, 0.2, 0.2]}  # decay 0.8 from the first report

    def decision(trial_schedule: dict[str, list[float]], pruner: TimeToTargetPruner) -> PruneDecision:
        study = optuna.create_study()
        for speed in (0.02, 0.03, 0.05):
            study.add_trial(
                optuna.trial.create_trial(
                    value=1.0,
                    intermediate_values={c: loss(speed, 1.5, c) for c in costs},
                    distributions={},
                    params={},
                    user_attrs={LR_SCHEDULE_ATTR: annealed},
                )
            )
        median = float(np.median([loss(speed, 1.5, 2 * EVERY) for speed in (0.02, 0.03, 0.05)]))
        trial = study.ask()
        trial.set_user_attr(LR_SCHEDULE_ATTR, trial_schedule)
        for cost, value in zip((EVERY, 2 * EVERY), (median + 0.055, median + 0.05), strict=True):
            trial.report(value, step=cost)
        return pruner.decide(study, study._storage.get_trial(trial._trial_id))

    plain = {"max_cost": 30 * EVERY, "prior_trials": 0, "n_warmup_reports": 4, "pause_behind": True}
    behind_only = TimeToTargetPruner(TARGET, **plain)
    phased = TimeToTargetPruner(TARGET, pause_phase=True, **plain)
    with pytest.raises(ValueError, match="pause_phase"):
        TimeToTargetPruner(TARGET, pause_phase=2)
    for schedule in (constant, cosine, warming, annealed):
        assert decision(schedule, behind_only).reason == "behind-median"
    # At 2000 the finished runs' LR had decayed by 0.8; cosine's by 0.15, constant's not at all.
    assert decision(constant, phased).reason == "warm-up"  # not paused: judged later, at rungs
    assert decision(cosine, phased).reason == "warm-up"
    assert decision(warming, phased).reason == "warm-up"
    assert (decision(annealed, phased).prune, decision(annealed, phased).reason) == (True, "behind-median")


def test_pause_rank_pauses_only_where_the_studys_finished_runs_ranked_early_as_they_finished() -> None:
    # pause_rank: under pause_behind, a trial behind the median is paused only if the finished
    # runs' distances at that cost ranked them as their outcomes did. Where the runs that
    # reached first stood farthest back there (late bloomers), the same trial is not paused;
    # with fewer than five runs counted, or runs the pruner stopped, there is no evidence.
    costs = [i * EVERY for i in range(1, 9)]
    in_order = [{c: loss(speed, 1.5, c) for c in costs} for speed in (0.012, 0.015, 0.02, 0.029, 0.03)]
    bloomers = []
    for k in range(5):  # k = 0 reaches first (at 3000) but stood farthest back at 2000
        drop = 3 + k
        bloomers.append({c: 2.60 + 0.02 * (4 - k) if c < drop * EVERY else 1.85 for c in costs})
    plain = {"max_cost": 30 * EVERY, "prior_trials": 0, "n_warmup_reports": 4, "pause_behind": True}
    behind_only = TimeToTargetPruner(TARGET, **plain)
    ranked = TimeToTargetPruner(TARGET, pause_rank=0.5, **plain)
    with pytest.raises(ValueError, match="pause_rank"):
        TimeToTargetPruner(TARGET, pause_rank=1.5)

    far_behind = 2.75  # behind every run at 2000, so no comeback veto either
    assert equal_cost_decisions(in_order, far_behind, behind_only, ranked)[1].reason == "behind-median"
    plain_decision, ranked_decision = equal_cost_decisions(bloomers, far_behind, behind_only, ranked)
    assert plain_decision.reason == "behind-median"
    assert (ranked_decision.prune, ranked_decision.reason) == (False, "warm-up"), ranked_decision
    # Four runs are not enough evidence.
    assert equal_cost_decisions(in_order[:4], far_behind, behind_only, ranked)[1].reason == "warm-up"

    # Runs the pruner stopped (or paused) end early; their outcome says nothing of their rank.
    study = optuna.create_study()
    for i, curve in enumerate(in_order):
        attrs = {"status": "stopped"} if i < 2 else {}
        study.add_trial(
            optuna.trial.create_trial(
                value=1.0, intermediate_values=curve, distributions={}, params={}, user_attrs=attrs
            )
        )
    trial = study.ask()
    for cost, value in zip((EVERY, 2 * EVERY), (far_behind + 0.005, far_behind), strict=True):
        trial.report(value, step=cost)
    frozen = study._storage.get_trial(trial._trial_id)
    assert behind_only.decide(study, frozen).reason == "behind-median"
    assert ranked.decide(study, frozen).reason == "warm-up"


def test_pause_winners_pauses_only_where_no_finished_winner_would_have_been_paused() -> None:
    # pause_winners: under pause_behind, a trial behind the median is paused only once two
    # finished runs reached the target by the bar and neither stood behind the median at that
    # cost. One winner that stood behind there (a late bloomer, not as far back as the trial,
    # so the comeback veto does not apply) keeps every trial there from being paused.
    costs = [i * EVERY for i in range(1, 9)]
    steady = [{c: loss(speed, 1.5, c) for c in costs} for speed in (0.012, 0.015, 0.02, 0.029, 0.03)]
    bloomer = dict(zip(costs, [2.71, 2.70, 2.00, 1.50, 1.45, 1.40, 1.38, 1.37], strict=True))  # reaches first
    plain = {"max_cost": 30 * EVERY, "prior_trials": 0, "n_warmup_reports": 4, "pause_behind": True}
    behind_only = TimeToTargetPruner(TARGET, **plain)
    vouched = TimeToTargetPruner(TARGET, pause_winners=True, **plain)
    with pytest.raises(ValueError, match="pause_winners"):
        TimeToTargetPruner(TARGET, pause_winners=2)

    far_behind = 2.75
    assert equal_cost_decisions(steady, far_behind, behind_only, vouched)[1].reason == "behind-median"
    with_bloomer = [bloomer, *steady[:3], steady[4]]
    plain_decision, vouched_decision = equal_cost_decisions(with_bloomer, far_behind, behind_only, vouched)
    assert plain_decision.reason == "behind-median"
    assert (vouched_decision.prune, vouched_decision.reason) == (False, "warm-up"), vouched_decision
    # One winner by the bar is not enough evidence.
    assert equal_cost_decisions(steady[:4], far_behind, behind_only, vouched)[1].reason == "warm-up"


def test_the_pruner_reads_the_maps_unless_told_to_read_the_reach_trees(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """``reach_trees`` (off by default): the stop rules were measured on the maps' probability,
    so the pruner's forecasts leave the calibration's reach trees out unless asked (check AB)."""
    from dataclasses import replace

    from convtune.curves import ReachTrees, _forecast
    from convtune.curves._calibration import default_calibration

    base = replace(default_calibration(), trees={})
    n = 11  # tree_features without a schedule
    value = np.array([[math.log(0.3 / 0.7)]])
    zero = np.zeros((1, 1), dtype=int)
    sure = ReachTrees(
        zero, np.zeros((1, 1)), zero, zero, value, 0.0, np.full(n, -1e9), np.full(n, 1e9), (0.0,)
    )
    monkeypatch.setattr(_forecast, "default_calibration", lambda: replace(base, trees={"blind": sure}))
    with pytest.raises(ValueError, match="reach_trees"):
        TimeToTargetPruner(TARGET, reach_trees="yes")  # type: ignore[arg-type]
    study = study_of(TimeToTargetPruner(TARGET, max_cost=30 * EVERY), 6, seed=2)
    trial = study.ask()
    for i in range(1, 5):
        trial.report(loss(0.01, 1.7, i * EVERY), step=i * EVERY)
    frozen = study._storage.get_trial(trial._trial_id)
    plain = TimeToTargetPruner(TARGET, max_cost=30 * EVERY, prior_trials=0).forecast_trial(study, frozen)
    trees = TimeToTargetPruner(TARGET, max_cost=30 * EVERY, prior_trials=0, reach_trees=True).forecast_trial(
        study, frozen
    )
    costs = [i * EVERY for i in range(1, 5)]
    values = [loss(0.01, 1.7, c) for c in costs]
    maps = _forecast.forecast_time_to_target(costs, values, TARGET, horizon=30 * EVERY, calibration=base)
    assert plain.probability == pytest.approx(maps.probability, abs=1e-12)
    assert trees.probability == pytest.approx(0.3, abs=1e-9) and maps.probability != pytest.approx(
        0.3, abs=1e-3
    )
