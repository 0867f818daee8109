"""`convtune study forecasts` and `audit_forecasts`: the forecaster scored on a study's own trials.

The synthetic study below is built from Optuna's own trial records (``create_trial``) with curves
whose crossing is known, so what each check must say is known too; the tiny study is a real one.
"""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import optuna
import pytest
from cli_runner import cli
from specs import TINY_SPACE, TinyStudy, digits_spec

from convtune.config.spec import StudySpec
from convtune.curves import time_to_target
from convtune.report.forecasts import audit_forecasts
from convtune.report.scaling_plots import write_plots

TARGET = "accuracy>=0.9"
MAX_COST = 8000.0
COSTS = np.arange(400.0, MAX_COST + 1, 400.0)


def spec() -> StudySpec:
    return digits_spec(TINY_SPACE, target=TARGET, max_cost=MAX_COST)


def add(study: optuna.Study, status: str, costs: np.ndarray, values: np.ndarray, value: float) -> None:
    study.add_trial(
        optuna.trial.create_trial(
            state=optuna.trial.TrialState.COMPLETE,
            value=value,
            intermediate_values={int(c): float(v) for c, v in zip(costs, values, strict=True)},
            user_attrs={"status": status},
        )
    )


def steady(costs: np.ndarray) -> np.ndarray:
    """Accuracy closing in on 1 as a power law: crosses 0.9 near 5,000 samples."""
    return 1.0 - 0.1 * (costs / 5000.0) ** -0.7


def late_bloomer(costs: np.ndarray) -> np.ndarray:
    """Flat at 0.5 for most of the run, then a jump past the target at 7,200 samples."""
    return np.where(costs < 7000.0, 0.5 + 1e-4 * np.sin(costs), 0.95)


def study_of_known_outcomes() -> optuna.Study:
    study = optuna.create_study(direction="minimize")
    reach = steady(COSTS)
    crossed = int(np.argmax(reach >= 0.9)) + 1
    add(study, "reached", COSTS[:crossed], reach[:crossed], 5000.0)  # trial 0: reached
    add(study, "budget", COSTS, 0.6 - 0.1 * np.exp(-COSTS / 1000.0), 1e6)  # trial 1: levelled off far away
    add(study, "stopped", COSTS[:4], reach[:4], 9000.0)  # trial 2: outcome unknown
    late = late_bloomer(COSTS)
    crossed = int(np.argmax(late >= 0.9)) + 1
    add(study, "reached", COSTS[:crossed], late[:crossed], 7200.0)  # trial 3: a late bloomer
    add(study, "duplicate", COSTS[:0], late[:0], 7200.0)  # trial 4: not trained
    return study


def test_each_trial_with_a_known_outcome_is_checked_at_shares_of_its_planned_run() -> None:
    study = study_of_known_outcomes()
    audit = audit_forecasts(study, spec())

    assert (audit.trained, audit.checked, audit.stopped) == (4, 3, 1)
    assert {c.trial for c in audit.checks} == {0, 1, 3}
    steady_checks = [c for c in audit.checks if c.trial == 0]
    truth = time_to_target(COSTS, steady(COSTS), TARGET)
    # Cut at 10/25/50% of the run (max_cost: no schedule was reported), each forecast from the
    # reports up to there; the truth is the measured crossing of the whole curve.
    assert [c.cut for c in steady_checks] == [0.1, 0.25, 0.5]
    assert [c.seen for c in steady_checks] == [800.0, 2000.0, 4000.0]
    assert all(c.truth == pytest.approx(truth) and c.end == MAX_COST for c in steady_checks)
    assert [c.forecast.n_points for c in steady_checks] == [2, 5, 10]
    # A curve closing in steadily is never forecast "never" from half of its run, nor put in
    # its forecast's far tail.
    half = steady_checks[-1]
    assert not half.said_never and half.error < 0.5 and not half.in_far_tail(audit.epsilon)
    # The run that levelled off far from the target is called "not within the run" once the
    # curve shows it (from two points, at a tenth of the run, the forecast stays open).
    levelled = {c.cut: c for c in audit.checks if c.trial == 1}
    assert not any(c.reached for c in levelled.values())
    assert levelled[0.25].called_not_within and levelled[0.5].called_not_within
    summary = audit.summary(0.5)
    assert (summary.n_reached, summary.n_not_reached, summary.called) == (2, 1, 1)
    # The study's own bias: what the forecasts said of reaching within the run against what did.
    # At half the run the late bloomer was given no chance and reached, so the forecasts ran low
    # and the offset that would correct them is positive.
    said = [c.forecast.probability for c in audit.checks if c.cut == 0.5]
    assert summary.mean_probability == pytest.approx(np.mean(said))
    assert summary.reached_share == pytest.approx(2 / 3) and summary.mean_probability < 2 / 3
    assert summary.study_offset > 0
    assert "stopped trial" in " ".join(audit.notes)


def test_a_late_bloomer_the_forecast_gave_no_chance_is_named_in_the_verdict() -> None:
    audit = audit_forecasts(study_of_known_outcomes(), spec())

    late = {c.cut: c for c in audit.checks if c.trial == 3}
    # Flat at a quarter and at half of the run: the forecast gave the jump no chance.
    assert late[0.25].said_never and late[0.5].said_never
    assert late[0.25].probability_by_truth < audit.epsilon and late[0.5].probability_by_truth < audit.epsilon
    assert audit.far_tail == [3]
    assert "trial(s) 3 reached the target" in audit.verdict()
    assert "pruner: none" in audit.verdict()
    data = audit.to_dict()
    assert data["far_tail"] == [3] and [row["cut"] for row in data["cuts"]] == [0.1, 0.25, 0.5]
    json.dumps(data)  # JSON as it is: no inf or nan objects


def test_an_empty_study_has_nothing_to_check() -> None:
    audit = audit_forecasts(optuna.create_study(), spec())
    assert (audit.checks, audit.checked, audit.trained) == ([], 0, 0)
    assert audit.verdict().startswith("nothing to check yet")
    assert math.isnan(audit.summary(0.25).median_error)


def test_the_plot_shows_forecasts_against_outcomes(tmp_path: Path) -> None:
    paths = write_plots(study_of_known_outcomes(), spec(), tmp_path)
    assert tmp_path / "forecasts_vs_outcomes.png" in paths
    assert (tmp_path / "forecasts_vs_outcomes.png").stat().st_size > 10_000


def test_the_command_prints_the_checks_of_a_real_study(
    capsys: pytest.CaptureFixture[str], tiny_study: TinyStudy
) -> None:
    code, out, err = cli(capsys, "study", "forecasts", tiny_study.name, "--storage", tiny_study.url)
    assert code == 0, err
    assert "forecasts against outcomes" in out and "median error" in out and "checked" in out
    # The study's own bias: what the forecasts said of reaching within the run against what did.
    assert "the forecasts' mean probability → the share that did: " in out
    code, out, err = cli(capsys, "study", "forecasts", tiny_study.name, "--storage", tiny_study.url, "--json")
    assert code == 0, err
    data = json.loads(out)
    study = optuna.load_study(study_name=tiny_study.name, storage=tiny_study.url)
    statuses = [t.user_attrs.get("status") for t in study.trials]
    # Both trials of the tiny study trained with no pruner: each has a known outcome.
    assert data["trained"] == len(statuses) == 2 and data["stopped_unknown"] == 0
    reached = sum(row["reached"] for row in data["cuts"])
    for row in data["cuts"]:
        if row["reached"] + row["not_reached"]:
            assert 0.0 <= row["mean_probability"] <= 1.0 and math.isfinite(row["study_offset"])
    assert reached + sum(row["not_reached"] for row in data["cuts"]) == len(data["checks"])
    for check in data["checks"]:
        trial = study.trials[check["trial"]]
        curve = sorted(trial.intermediate_values.items())
        truth = time_to_target([c for c, _ in curve], [v for _, v in curve], "accuracy>=0.9")
        assert check["truth"] == (truth if truth <= check["end"] else None)
        assert check["seen"] <= check["cut"] * check["end"]


def test_an_unknown_study_is_a_one_line_error(
    capsys: pytest.CaptureFixture[str], tiny_study: TinyStudy
) -> None:
    code, out, err = cli(capsys, "study", "forecasts", "no-such-study", "--storage", tiny_study.url)
    assert code == 2 and "no-such-study" in err and "Traceback" not in err


def test_best_and_the_dashboard_note_say_when_a_winner_fell_in_a_forecast_s_far_tail(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    from convtune.report.dashboard import study_note
    from convtune.study import create_study

    url = f"sqlite:///{tmp_path / 'audit.db'}"
    study = create_study("known", spec(), url)
    for trial in study_of_known_outcomes().trials:
        study.add_trial(trial)

    code, out, err = cli(capsys, "study", "best", "known", "--storage", url)
    assert code == 0, err
    assert "forecasts: trial(s) 3 reached the target" in out and "convtune study forecasts known" in out
    code, out, err = cli(capsys, "study", "forecasts", "known", "--storage", url)
    assert code == 0, err
    # Each far-tail check is spelled out: where the forecast was made, what it said, where the trial crossed.
    assert "trial 3, from 25% of its run (2,000 samples): forecast not within the run" in out
    assert "of crossing by 7,156, where it crossed" in out
    code, out, err = cli(capsys, "study", "best", "known", "--storage", url, "--json")
    assert code == 0, err
    assert json.loads(out)["forecasts"] == {
        "checked": 3,
        "far_tail": [3],
        "verdict": audit_forecasts(study, spec()).verdict(),
    }
    assert "**Forecasts on this study:** trial(s) 3 reached the target" in study_note(study, spec())


def test_a_study_whose_forecasts_held_gets_no_warning(
    capsys: pytest.CaptureFixture[str], tiny_study: TinyStudy
) -> None:
    code, out, err = cli(capsys, "study", "best", tiny_study.name, "--storage", tiny_study.url, "--json")
    assert code == 0, err
    # Both trials of the tiny study reached the target on steady curves, after a quarter of their run.
    assert json.loads(out)["forecasts"]["checked"] == 2
    assert json.loads(out)["forecasts"]["far_tail"] == []
    code, out, err = cli(capsys, "study", "best", tiny_study.name, "--storage", tiny_study.url)
    assert code == 0 and "forecasts:" not in out


def test_the_dashboard_note_says_when_optunas_best_value_is_a_stopped_trials_forecast(tmp_path: Path) -> None:
    # Optuna's "Best value" (the dashboard's, `study.best_trial`) is the lowest value of any
    # complete trial. A stopped trial's right-censored forecast can be below every measured time
    # (under `pruner: median`, say); the note names it, and its best measured trial stays the one
    # that reached.
    from convtune.report.dashboard import study_note
    from convtune.study import create_study

    study = create_study("paused", spec(), f"sqlite:///{tmp_path / 'paused.db'}")
    for trial in study_of_known_outcomes().trials:
        study.add_trial(trial)
    note = study_note(study, spec())
    assert "Best value" not in note  # the lowest value is trial 0's measured 5,000
    add(study, "stopped", COSTS[:3], steady(COSTS[:3]), 4200.0)
    note = study_note(study, spec())
    stopped = study.best_trial
    assert stopped.value == 4200.0
    assert "**Best measured:** trial 0, 5,000 samples" in note
    assert (
        f"The dashboard's *Best value* (trial {stopped.number}, 4,200 samples) is a `stopped` trial's forecast"
        in note
    )
