"""What people read off a study: penalties near the cap, ordered by gap; a compact stored curve;
values rounded for display (through the public API and a real tiny study)."""

from __future__ import annotations

import math
from pathlib import Path

from specs import digits_spec

from convtune.config.record import TrialRecord
from convtune.config.spec import StudySpec
from convtune.study import create_study, penalty, run_study
from convtune.study.outcome import CURVE_POINTS, PENALTY_CEILING


def _spec(**overrides: object) -> StudySpec:
    space = {
        "peak_lr": 1.0e-2,
        "warmup_steps": 2,
        "horizon_samples": 6144,
        "schedule": "cosine",
        "micro_batch_size": 32,
        "optimizer": "adamw",
    }
    fields = {"target": "accuracy>=0.9", "max_cost": 6144, "eval_every": {"samples": 1024}}
    return digits_spec(space, **(fields | overrides))


def test_penalties_lie_above_the_cap_within_twenty_times_it_ordered_by_gap() -> None:
    spec = _spec()
    gaps = [0.0, 0.01, 0.1, 1.0, 10.0, 1e9, math.inf, math.nan]
    values = [penalty(spec, g) for g in gaps]
    assert all(spec.max_cost < v <= PENALTY_CEILING * spec.max_cost for v in values), values
    assert values[:7] == sorted(values[:7]) and len(set(values[:6])) == 6, "monotone, strictly"
    assert values[6] == PENALTY_CEILING * spec.max_cost == values[7], "no finite metric: the ceiling"


def test_a_long_run_stores_a_compact_curve_and_a_rounded_value(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'c.db'}"
    # 70 evaluations, a target it cannot reach: the curve is thinned, the value is a forecast or
    # a penalty, never above 20 × the cap.
    spec = _spec(target="accuracy>=0.9999", eval_every={"samples": 64}, max_cost=4480)
    create_study("long", spec, url)
    trial = run_study("long", n_trials=1, storage=url).trials[0]
    curve = TrialRecord.of(trial).attrs["curve"]
    assert trial.user_attrs["status"] == "budget"
    assert 2 <= len(curve["samples"]) <= CURVE_POINTS
    assert all(len(column) == len(curve["samples"]) for column in curve.values())
    assert curve["samples"][0] == 64 and curve["samples"][-1] == trial.user_attrs["samples"], "ends kept"
    assert curve["samples"] == sorted(curve["samples"])
    assert spec.max_cost < trial.value <= PENALTY_CEILING * spec.max_cost
    assert float(f"{trial.value:.4g}") == trial.value, "4 significant digits"


def _stopped(predicted: float, low: float, high: float) -> dict[str, object]:
    return {
        "status": "stopped",
        "curve": {"samples": [1000, 2000, 3000, 4000], "metric": [0.5, 0.6, 0.66, 0.7]},
        "predicted_time_to_target": predicted,
        "forecast_low": low,
        "forecast_high": high,
        "forecast_level": 0.8,
    }


def test_a_far_forecast_sits_at_the_axis_edge_and_every_forecast_has_its_band() -> None:
    from convtune.report.plots import learning_curve_figure

    far = learning_curve_figure(7, _stopped(50_000.0, 7_000.0, math.inf), "accuracy>=0.9", "samples").axes[0]
    assert far.get_xlim()[1] == 2.5 * 4000, "the axis ends near the curve, not at the far forecast"
    assert ">" in [line.get_marker() for line in far.get_lines()], "the forecast marked at the edge"
    labels = [t.get_text() for t in far.get_legend().get_texts()]
    assert "forecast 80% interval" in labels and "forecast 50,000 samples (beyond the axis)" in labels

    near = learning_curve_figure(8, _stopped(7_000.0, 5_500.0, 9_000.0), "accuracy>=0.9", "samples").axes[0]
    assert "x" in [line.get_marker() for line in near.get_lines()]
    assert "forecast 80% interval" in [t.get_text() for t in near.get_legend().get_texts()]
