"""Scaling fits and recommendations on synthetic studies whose optimum is known.

Trials are built with ``optuna.trial.create_trial`` and convtune-like user attrs, so every test
runs in milliseconds to a second and needs no training.
"""

from __future__ import annotations

import json
import math
from pathlib import Path

import matplotlib.image
import numpy as np
import optuna
import pytest

import convtune
from convtune.config.recipe import Recipe
from convtune.config.spec import StudySpec
from convtune.export import select_document
from convtune.report.best import best_report
from convtune.report.dashboard import study_note
from convtune.scaling import (
    CriticalBatchFit,
    ScalingModel,
    StepsFit,
    StepTimeFit,
    TrialPoint,
    params_key,
)
from convtune.study import SPEC_ATTR

# The truth every synthetic study samples: steps S(B, lr) by McCandlish with a square-root LR
# rule, and a step time in which accumulation multiplies compute but not the per-step overhead.
B_NOISE, S_MIN, ALPHA, LR_REF, B_REF, CURV = 60.0, 400.0, 0.5, 5e-3, 64.0, 0.5
A, B_PER_SAMPLE, OVERHEAD = 2e-3, 1e-4, 1e-2

SPACE = {
    "peak_lr": {"low": 1.0e-3, "high": 3.0e-2, "log": True},
    "horizon_samples": 100000,
    "schedule": "constant",
    "micro_batch_size": {"choices": [16, 32, 64]},
    "grad_accum_steps": {"choices": [1, 2, 4]},
    "optimizer": "adamw",
    "precision": "fp32",
}


def true_steps(batch: float, lr: float) -> float:
    best = LR_REF * (batch / B_REF) ** ALPHA
    return S_MIN * (1 + B_NOISE / batch) * math.exp(CURV * math.log(lr / best) ** 2)


def true_step_seconds(micro: int, accum: int) -> float:
    return accum * (A + B_PER_SAMPLE * micro) + OVERHEAD


def true_time(micro: int, accum: int, lr: float) -> float:
    return true_steps(micro * accum, lr) * true_step_seconds(micro, accum)


def spec(**overrides: object) -> StudySpec:
    data = {
        "workload": "digits",
        "space": SPACE,
        "target": "accuracy>=0.9",
        "cost": "wallclock",
        "max_cost": 1e4,
        "pruner": "none",
    }
    data.update(overrides)
    return StudySpec.from_dict(data)


def add_trial(
    study: optuna.Study,
    s: StudySpec,
    params: dict[str, object],
    *,
    noise: float = 0.0,
    status: str = "reached",
    lr_scale: float = 1.0,
    **attrs: object,
) -> None:
    """One finished trial of the synthetic truth (``lr_scale``: an optimizer whose optimum LR is
    that many times lower)."""
    recipe = s.search_space.recipe(optuna.trial.FixedTrial(params))
    micro, accum, lr = recipe.micro_batch_size, recipe.grad_accum_steps, recipe.peak_lr
    steps = true_steps(recipe.effective_batch_size, lr * lr_scale) * math.exp(noise)
    per_step = true_step_seconds(micro, accum)
    value = steps * per_step if s.cost == "wallclock" else steps * recipe.effective_batch_size
    user = {
        "recipe": recipe.to_dict(),
        "effective_batch_size": recipe.effective_batch_size,
        "status": status,
        "steps": int(steps),
        "train_seconds": steps * per_step,
        "samples_per_second": recipe.effective_batch_size / per_step,
        "curve": {"step": [], "samples": [], "seconds": [], "metric": []},
    }
    if status == "reached":
        user["time_to_target"] = value
    elif status == "diverged":
        value = 1e9
    user.update(attrs)
    study.add_trial(
        optuna.trial.create_trial(
            params=params,
            distributions={k: v for k, v in s.search_space.distributions().items() if k in params},
            value=value,
            user_attrs=user,
        )
    )


def synthetic_study(s: StudySpec, lrs: list[float], *, seed: int = 0) -> optuna.Study:
    study = optuna.create_study(direction="minimize")
    study.set_user_attr(SPEC_ATTR, s.to_dict())
    rng = np.random.default_rng(seed)
    for micro in (16, 32, 64):
        for accum in (1, 2, 4):
            for lr in lrs:
                params = {"peak_lr": lr, "micro_batch_size": micro, "grad_accum_steps": accum}
                add_trial(study, s, params, noise=float(rng.normal(0, 0.03)))
    return study


# ---- the fits --------------------------------------------------------------------------------


def test_steps_fit_recovers_b_noise_and_lr_exponent() -> None:
    rng = np.random.default_rng(1)
    batch, lr, steps = [], [], []
    for b in (16, 32, 64, 128, 256):
        for r in np.geomspace(1e-3, 3e-2, 5):
            batch.append(b)
            lr.append(r)
            steps.append(true_steps(b, r) * math.exp(rng.normal(0, 0.05)))
    fit = StepsFit.fit(batch, lr, steps)
    assert fit is not None
    assert fit.b_noise == pytest.approx(B_NOISE, rel=0.15)
    assert fit.lr_exponent == pytest.approx(ALPHA, abs=0.08)
    low, high = fit.b_noise_interval
    assert low < B_NOISE < high
    low, high = fit.lr_exponent_interval
    assert low < ALPHA < high
    assert fit.best_lr(B_REF) == pytest.approx(LR_REF, rel=0.15)


def test_lr_exponent_distinguishes_linear_from_sqrt_scaling() -> None:
    batch, lr, steps = [], [], []
    for b in (32, 64, 128, 256):
        best = 1e-3 * (b / 32)  # linear scaling
        for r in np.geomspace(best / 8, best * 8, 5):
            batch.append(b)
            lr.append(r)
            steps.append(1000 * (1 + 50 / b) * math.exp(0.3 * math.log(r / best) ** 2))
    fit = StepsFit.fit(batch, lr, steps)
    assert fit is not None and fit.lr_exponent == pytest.approx(1.0, abs=0.05)


def test_critical_batch_envelope_fit() -> None:
    batches = [16, 32, 64, 128, 256]
    fit = CriticalBatchFit.fit(batches, [S_MIN * (1 + B_NOISE / b) for b in batches])
    assert fit is not None
    assert fit.b_noise == pytest.approx(B_NOISE, rel=1e-3)
    assert fit.e_min == pytest.approx(S_MIN * B_NOISE, rel=1e-3)
    assert fit.samples_at(B_NOISE) == pytest.approx(2 * fit.e_min)
    assert CriticalBatchFit.fit([16, 32], [100, 80]) is None  # two batch sizes: not identifiable


def test_step_time_fit_separates_compute_from_per_step_overhead() -> None:
    points = []
    for micro in (16, 32, 64):
        for accum in (1, 2, 4):
            recipe = Recipe(
                peak_lr=1e-3, horizon_samples=10000, micro_batch_size=micro, grad_accum_steps=accum
            )
            points.append(
                TrialPoint(0, {}, recipe.to_dict(), 1.0, 0.1, True, true_step_seconds(micro, accum))
            )
    fit = StepTimeFit.fit(points, cost="wallclock")
    assert fit is not None
    a, b = fit.compute["fp32"]
    assert a == pytest.approx(A, rel=0.05) and b == pytest.approx(B_PER_SAMPLE, rel=0.05)
    assert fit.overhead[1] == pytest.approx(OVERHEAD, rel=0.05)
    assert fit.predict(128, 8, 1, "fp32") == pytest.approx(true_step_seconds(128, 8), rel=0.02)


# ---- recommend ------------------------------------------------------------------------------


def test_recommend_finds_the_known_optimum_between_tried_lrs() -> None:
    s = spec()
    tried = [1e-3, 4e-3, 1.6e-2]  # the true best LR at the best batch lies between these
    study = synthetic_study(s, tried)
    rec = convtune.recommend(study, n_candidates=1500)

    grid = [
        (true_time(m, a, lr), m, a, lr)
        for m in (16, 32, 64)
        for a in (1, 2, 4)
        for lr in np.geomspace(1e-3, 3e-2, 400)
    ]
    best_true, *_ = min(grid)
    got = true_time(rec.recipe.micro_batch_size, rec.recipe.grad_accum_steps, rec.recipe.peak_lr)
    assert got <= best_true * 1.05, (rec.params, got, best_true)
    assert not any(math.isclose(rec.recipe.peak_lr, t, rel_tol=1e-3) for t in tried)
    assert rec.measured_trial is None and rec.nearest_trial is not None
    best_measured = min(t.value for t in study.trials)
    assert got < best_measured  # a configuration no trial ran beats every one that did
    low, high = rec.interval
    assert low < rec.time_to_target < high
    assert low < got < high
    assert {"critical_batch", "lr_scaling", "step_time", "gp"} <= set(rec.supported_by)
    assert rec.fits["b_noise"] == pytest.approx(B_NOISE, rel=0.3)
    assert rec.fits["lr_exponent"] == pytest.approx(ALPHA, abs=0.15)


def test_recommend_is_deterministic_and_reports_a_measured_trial() -> None:
    s = spec(cost="samples")
    study = synthetic_study(s, [1e-3, 4e-3, 1.6e-2])
    first = convtune.recommend(study, n_candidates=500)
    second = convtune.recommend(study, n_candidates=500)
    assert first.params == second.params and first.time_to_target == second.time_to_target
    # With cost in samples the smallest batch is fastest (E grows with B).
    assert first.recipe.effective_batch_size == 16
    json.dumps(first.to_dict())


def test_diverged_region_is_never_recommended() -> None:
    s = spec()
    study = synthetic_study(s, [1e-3, 2e-3, 4e-3])
    # Everything from 6e-3 (at B_REF, scaled by √B elsewhere) diverges.
    for micro in (16, 32, 64):
        lr = 6e-3 * (micro / B_REF) ** ALPHA
        add_trial(
            study, s, {"peak_lr": lr, "micro_batch_size": micro, "grad_accum_steps": 1}, status="diverged"
        )
    model = ScalingModel.from_study(study)
    assert model.diverged_scaled_lr < math.inf
    for pred in model.top(20, n_candidates=800):
        assert (
            model._scaled_lr(pred.recipe.effective_batch_size, pred.recipe.peak_lr) < model.diverged_scaled_lr
        )


def test_best_report_has_predicted_and_baseline_speedup() -> None:
    s = spec()
    study = synthetic_study(s, [1e-3, 4e-3, 1.6e-2])
    add_trial(study, s, {"peak_lr": 1e-3, "micro_batch_size": 16, "grad_accum_steps": 1}, baseline=True)
    report = best_report(study, s)
    assert report["predicted"]["time_to_target"] > 0
    assert report["baseline"]["time_to_target"] > 0
    assert report["predicted"]["speedup_over_baseline"] > 1
    assert report["measured"]["speedup_over_baseline"] >= 1
    json.dumps(report, default=str)


def test_runners_up_are_other_configurations_measured_within_seed_noise_of_the_best() -> None:
    s = spec()
    study = synthetic_study(s, [])
    fast = {"peak_lr": 4e-3, "micro_batch_size": 16, "grad_accum_steps": 1}
    add_trial(study, s, fast)
    best = study.trials[-1].value

    def at(params: dict[str, object], ratio: float) -> None:
        # Noise that puts this configuration at ``ratio`` x the best's measured time.
        scratch = synthetic_study(s, [])
        add_trial(scratch, s, params)
        add_trial(study, s, params, noise=math.log(ratio * best / scratch.trials[-1].value))

    at(fast, 1.05)  # the best configuration again, on another seed: not a runner-up
    close = {"peak_lr": 2e-3, "micro_batch_size": 16, "grad_accum_steps": 1}
    at(close, 1.3)
    at(close, 1.12)  # its fastest trial is what counts
    at({"peak_lr": 8e-3, "micro_batch_size": 16, "grad_accum_steps": 1}, 1.35)  # beyond 20%
    report = best_report(study, s)
    assert report["measured"]["trial"] == 0
    assert [r["trial"] for r in report["runners_up"]] == [3]
    assert report["runners_up"][0]["time_to_target"] == pytest.approx(1.12 * best)
    json.dumps(report, default=str)
    # optuna-dashboard's study note says the same, with the command that re-runs them.
    note = study_note(study, s)
    assert "Within seed noise of it" in note and "trial 3. Confirm" in note
    assert f"convtune study confirm {study.study_name} --measured --top 2 --seeds 2" in note


def test_confirmed_results_are_preferred_and_widen_intervals() -> None:
    from convtune.scaling import CONFIRMATIONS_ATTR, best_confirmed, confirm_id

    s = spec()
    study = synthetic_study(s, [1e-3, 4e-3, 1.6e-2])
    before = convtune.recommend(study, n_candidates=300)
    cid = confirm_id(before.params)
    study.set_user_attr(
        CONFIRMATIONS_ATTR,
        [
            {
                "id": cid,
                "params": before.params,
                "predicted": before.time_to_target,
                "interval": list(before.interval),
            }
        ],
    )
    for seed, noise in enumerate((-0.3, 0.0, 0.3)):  # a wide seed-to-seed spread
        add_trial(
            study, s, before.params, noise=noise, confirm=True, confirmed=True, confirm_id=cid, seed=seed
        )
    confirmed = best_confirmed(study)
    assert confirmed is not None and confirmed["n_reached"] == 3 and confirmed["seed_sd_log"] > 0.2
    report = best_report(study, s)
    assert report["best"] == "confirmed"
    assert report["confirmed"]["id"] == cid
    # `study export` takes it too, timed by the mean over its seeds, not by its luckiest seed.
    exported = select_document(study, s)
    assert exported.source == "confirmed" and exported.trial in confirmed["trials"]
    assert exported.time_to_target == pytest.approx(confirmed["measured_mean"])
    assert exported.time_to_target > min(confirmed["times"])
    assert exported.metadata()["confirmed_times"] == confirmed["times"]
    after = convtune.recommend(study, n_candidates=300)
    width = lambda r: math.log(r.interval[1] / r.interval[0])  # noqa: E731
    assert width(after) > width(before)


def test_enqueue_confirmations_plans_the_top_k_once_and_enqueues_n_fresh_seeds_each() -> None:
    from optuna.trial import TrialState

    from convtune.scaling import CONFIRMATIONS_ATTR, confirm_id, enqueue_confirmations

    s = spec()
    study = synthetic_study(s, [1e-3, 4e-3, 1.6e-2])
    preds = enqueue_confirmations(study, s, top=2, seeds=3)
    assert len(preds) == 2 and preds[0].time_to_target <= preds[1].time_to_target
    plans = study.user_attrs[CONFIRMATIONS_ATTR]
    assert [p["id"] for p in plans] == [confirm_id(p.params) for p in preds]
    waiting = study.get_trials(states=(TrialState.WAITING,))
    assert len(waiting) == 6
    for pred in preds:
        runs = [t for t in waiting if t.user_attrs["confirm_id"] == confirm_id(pred.params)]
        # The spec's own seed ran in the search: the confirm runs take the next ones.
        assert sorted(t.user_attrs["seed"] for t in runs) == [s.seed + 1, s.seed + 2, s.seed + 3]
        assert all(t.user_attrs["confirm"] and t.system_attrs["fixed_params"] == pred.params for t in runs)
    enqueue_confirmations(study, s, top=2, seeds=1)  # confirming again adds runs, not plans
    assert len(study.user_attrs[CONFIRMATIONS_ATTR]) == 2
    waiting = study.get_trials(states=(TrialState.WAITING,))
    assert len(waiting) == 8
    # ... on a seed none of its runs took: the same seed would retrace the same seeded run.
    for pred in preds:
        runs = [t for t in waiting if t.user_attrs["confirm_id"] == confirm_id(pred.params)]
        assert sorted(t.user_attrs["seed"] for t in runs) == [s.seed + k for k in (1, 2, 3, 4)]


def test_enqueue_measured_confirmations_reruns_the_given_trials_configurations() -> None:
    from optuna.trial import TrialState

    from convtune.report.best import measured_best, runners_up
    from convtune.scaling import CONFIRMATIONS_ATTR, confirm_id, enqueue_measured_confirmations

    s = spec()
    study = synthetic_study(s, [1e-3, 4e-3, 1.6e-2])
    best = measured_best(study)
    assert best is not None
    chosen = [best, *runners_up(study, best, margin=10.0)]  # every other configuration, here
    plans = enqueue_measured_confirmations(study, chosen, s, seeds=2)
    assert [p["params"] for p in plans] == [t.params for t in chosen]
    stored = study.user_attrs[CONFIRMATIONS_ATTR]
    # The "prediction" of a measured configuration is the search's one-seed time, marked as such.
    assert [(p["id"], p["predicted"], p["source"]) for p in stored] == [
        (confirm_id(t.params), t.value, "measured") for t in chosen
    ]
    assert all(p["recipe"] == t.user_attrs["recipe"] for p, t in zip(stored, chosen, strict=True))
    waiting = study.get_trials(states=(TrialState.WAITING,))
    assert len(waiting) == 2 * len(chosen)
    assert sorted(t.user_attrs["seed"] for t in waiting) == sorted([s.seed + 1, s.seed + 2] * len(chosen))


def test_after_a_confirm_round_configurations_near_the_confirmed_mean_are_the_next_candidates() -> None:
    """The measured best's own seed was lucky: confirmed on two more it is slower, and a
    configuration the search measured outside the runner-up window of the lucky time but within
    20% of the confirmed mean is what ``study confirm --measured --rounds`` confirms next."""
    from convtune.report.best import confirm_candidates, measured_best, runners_up
    from convtune.scaling import confirm_id, confirmations, enqueue_measured_confirmations

    s = spec()
    study = synthetic_study(s, [])
    lucky = {"peak_lr": 4e-3, "micro_batch_size": 16, "grad_accum_steps": 1}
    add_trial(study, s, lucky, noise=math.log(0.7))
    base = study.trials[-1].value / 0.7  # this configuration's time without the lucky seed
    others = {
        "within": {"peak_lr": 2e-3, "micro_batch_size": 16, "grad_accum_steps": 1},
        "beyond": {"peak_lr": 8e-3, "micro_batch_size": 16, "grad_accum_steps": 1},
    }
    for name, ratio in (("within", 1.0), ("beyond", 1.9)):
        scratch = synthetic_study(s, [])
        add_trial(scratch, s, others[name])
        add_trial(study, s, others[name], noise=math.log(ratio * base / scratch.trials[-1].value))
    best = measured_best(study)
    assert best is not None and best.params == lucky
    assert runners_up(study, best) == []  # 1.0 / 0.7 of the lucky time: outside its 20% window
    # Nothing confirmed yet: the first round is the measured best and its runners-up.
    assert [t.number for t in confirm_candidates(study, confirmations(study))] == [best.number]
    enqueue_measured_confirmations(study, [best], s, seeds=2)
    for seed_noise in (math.log(1.5), math.log(1.5)):  # the confirm runs, on seeds not lucky
        add_trial(study, s, lucky, noise=seed_noise, confirm=True, confirm_id=confirm_id(lucky))
    done = confirmations(study)
    assert done[0]["measured_mean"] == pytest.approx(1.5 * base, rel=1e-6)
    # Within 1.2 x 1.5 of the base time: the first; the second (1.9) and the pick itself are not.
    assert [t.params for t in confirm_candidates(study, done)] == [others["within"]]
    # Once confirmed, a configuration is no candidate again.
    enqueue_measured_confirmations(study, confirm_candidates(study, done), s, seeds=1)
    add_trial(study, s, others["within"], confirm=True, confirm_id=confirm_id(others["within"]))
    assert confirm_candidates(study, confirmations(study)) == []


def test_a_round_can_confirm_configurations_stopped_against_the_lucky_time() -> None:
    """Stopped as slower than a lucky measured best, a configuration has no measured time: with
    ``stopped`` the round after the pick confirms slower takes it too, if it was stopped before
    the window's far edge; without it, it is never compared (bearing_range_tracking, batch 42)."""
    from convtune.report.best import SLOWER_THAN_MEASURED_BEST, confirm_candidates
    from convtune.scaling import confirm_id, confirmations, enqueue_measured_confirmations

    s = spec()
    study = synthetic_study(s, [])
    lucky = {"peak_lr": 4e-3, "micro_batch_size": 16, "grad_accum_steps": 1}
    add_trial(study, s, lucky, noise=math.log(0.7))
    base = study.trials[-1].value / 0.7
    cut_short, cut_farther, cut_late = (
        {"peak_lr": lr, "micro_batch_size": 16, "grad_accum_steps": 1} for lr in (2e-3, 1e-3, 8e-3)
    )
    # All stopped at 1.2 x the lucky time or later, without reaching: the first two before the
    # confirmed window's far edge (the first closer to the target), the third far beyond it.
    for params, spent, gap in ((cut_short, 0.84, 0.01), (cut_farther, 0.9, 0.05), (cut_late, 2.0, 0.01)):
        add_trial(
            study,
            s,
            params,
            status="stopped",
            reason=SLOWER_THAN_MEASURED_BEST,
            censored_at=spent * base,
            final_gap=gap,
        )
    enqueue_measured_confirmations(study, confirm_candidates(study, confirmations(study)), s, seeds=2)
    for _ in range(2):  # the pick confirms at 1.5 x: the window's far edge is 1.2 x 1.5 = 1.8
        add_trial(study, s, lucky, noise=math.log(1.5), confirm=True, confirm_id=confirm_id(lucky))
    done = confirmations(study)
    assert confirm_candidates(study, done) == []
    assert [t.params for t in confirm_candidates(study, done, stopped=2)] == [cut_short, cut_farther]
    assert [t.params for t in confirm_candidates(study, done, stopped=1)] == [cut_short]  # the closest
    # Once confirmed, a configuration is no candidate again.
    enqueue_measured_confirmations(study, confirm_candidates(study, done, stopped=1), s, seeds=1)
    add_trial(study, s, cut_short, confirm=True, confirm_id=confirm_id(cut_short))
    assert [t.params for t in confirm_candidates(study, confirmations(study), stopped=1)] == [cut_farther]


def test_when_no_configuration_confirms_on_every_seed_the_next_round_moves_to_the_next_fastest() -> None:
    """A pick that crossed the target on a lucky noise dip misses it on a confirm seed: nothing
    is confirmed, and the next round confirms the fastest configuration not tried yet (and
    those within 20% of it) instead of leaving the study with the unconfirmed pick."""
    from convtune.report.best import confirm_candidates, measured_best
    from convtune.scaling import best_confirmed, confirm_id, confirmations, enqueue_measured_confirmations

    s = spec()
    study = synthetic_study(s, [])
    configs = [{"peak_lr": lr, "micro_batch_size": 16, "grad_accum_steps": 1} for lr in (4e-3, 2e-3, 8e-3)]
    add_trial(study, s, configs[0], noise=math.log(0.5))  # the dip
    base = study.trials[-1].value / 0.5
    for params, ratio in ((configs[1], 1.0), (configs[2], 1.15)):
        scratch = synthetic_study(s, [])
        add_trial(scratch, s, params)
        add_trial(study, s, params, noise=math.log(ratio * base / scratch.trials[-1].value))
    best = measured_best(study)
    assert best is not None and best.params == configs[0]
    enqueue_measured_confirmations(study, [best], s, seeds=2)
    add_trial(study, s, configs[0], confirm=True, confirm_id=confirm_id(configs[0]))
    add_trial(study, s, configs[0], status="budget", confirm=True, confirm_id=confirm_id(configs[0]))
    assert best_confirmed(study) is None
    # Around the fastest configuration not confirmed yet: both others lie within 20% of it.
    assert [t.params for t in confirm_candidates(study, confirmations(study))] == configs[1:]


def test_params_key_is_stable_under_float_noise() -> None:
    assert params_key({"a": 0.1 + 0.2, "b": 1}) == params_key({"b": 1, "a": 0.3})


# ---- plots -------------------------------------------------------------------------------------


def test_plots_are_valid_pngs(tmp_path: Path) -> None:
    from convtune.report.scaling_plots import write_plots

    s = spec()
    study = synthetic_study(s, [1e-3, 4e-3, 1.6e-2])
    paths = write_plots(study, s, tmp_path)
    assert {p.name for p in paths} >= {"learning_curves.png", "steps_vs_batch.png", "time_vs_lr.png"}
    for path in paths:
        assert path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
        image = matplotlib.image.imread(path)
        assert image.shape[0] > 100 and image.shape[1] > 100


def test_no_prediction_before_any_trial_reached_the_target() -> None:
    """Forecast-only studies give no prediction (scaled forecasts were nonsense), not a number."""
    s = spec()
    study = optuna.create_study(direction="minimize")
    study.set_user_attr(SPEC_ATTR, s.to_dict())
    for lr in (1e-3, 3e-3):
        add_trial(
            study,
            s,
            {"peak_lr": lr, "micro_batch_size": 32, "grad_accum_steps": 1},
            status="budget",
            predicted_time_to_target=50.0,
            extrapolated=True,
        )
    with pytest.raises(ValueError, match="no trial reached the target"):
        convtune.recommend(study, s)
    report = best_report(study, s)
    assert report["predicted"] is None and "no trial reached" in report["predicted_unavailable"]


def test_steps_fit_with_one_batch_and_two_lrs_fits_the_level_only() -> None:
    """Only ``S_min`` is free (no bounds to speak of): the fit still runs."""
    fit = StepsFit.fit([32, 32, 32, 32], [1e-3, 1e-3, 2e-3, 2e-3], [100.0, 110.0, 90.0, 95.0])
    assert fit is not None and fit.free == ("log_s_min",)
    assert 90 < fit.s_min < 110
    assert fit.b_noise is None and fit.lr_exponent is None


def test_too_few_trials_for_any_fit_recommend_the_best_measured_one() -> None:
    """Three trials: no steps fit, no GP. The pick is the fastest measured trial, at its time."""
    s = spec()
    study = optuna.create_study(direction="minimize")
    study.set_user_attr(SPEC_ATTR, s.to_dict())
    for lr in (1e-3, 4e-3, 2e-2):
        add_trial(study, s, {"peak_lr": lr, "micro_batch_size": 32, "grad_accum_steps": 1})
    rec = convtune.recommend(study, n_candidates=300)
    fastest = min(study.trials, key=lambda t: t.value)
    assert rec.measured_trial == fastest.number
    assert rec.time_to_target == pytest.approx(fastest.value)
    low, high = rec.interval
    assert low < fastest.value < high


def test_an_unconfident_gain_does_not_displace_the_best_measured_trial() -> None:
    """Scattered trials (log-noise 0.3) leave a wide model: the measured best stays the pick."""
    s = spec()
    study = optuna.create_study(direction="minimize")
    study.set_user_attr(SPEC_ATTR, s.to_dict())
    rng = np.random.default_rng(3)
    for micro, lr in [(16, 1e-3), (32, 3e-3), (64, 1e-2), (16, 2e-2), (64, 2e-3), (32, 1.5e-3)]:
        params = {"peak_lr": lr, "micro_batch_size": micro, "grad_accum_steps": 1}
        add_trial(study, s, params, noise=float(rng.normal(0, 0.3)))
    rec = convtune.recommend(study, n_candidates=500)
    fastest = min(study.trials, key=lambda t: t.value)
    assert rec.measured_trial == fastest.number, (rec.params, rec.time_to_target, fastest.params)


def test_recommend_searches_each_optimizers_own_lr_range() -> None:
    """Lion has its own LR range (5× lower optimum, 30% fewer steps in this synthetic truth):
    the recommendation is a Lion configuration whose LR comes from Lion's range, near its optimum."""
    space = {
        **SPACE,
        "optimizer": {
            "choices": ["adamw", "lion"],
            "lion": {"peak_lr": {"low": 2.0e-4, "high": 6.0e-3, "log": True}},
        },
    }
    s = spec(space=space)
    study = optuna.create_study(direction="minimize")
    study.set_user_attr(SPEC_ATTR, s.to_dict())
    rng = np.random.default_rng(0)
    for micro in (16, 32, 64):
        for accum in (1, 2):
            for lr in (1e-3, 4e-3, 1.6e-2):
                add_trial(
                    study,
                    s,
                    {
                        "optimizer": "adamw",
                        "peak_lr": lr,
                        "micro_batch_size": micro,
                        "grad_accum_steps": accum,
                    },
                    noise=float(rng.normal(0, 0.03)),
                )
            for lr in (2e-4, 8e-4, 3.2e-3):
                # Lion's truth: AdamW's curve at 5× the LR, 30% fewer steps.
                params = {
                    "optimizer": "lion",
                    "lion.peak_lr": lr,
                    "micro_batch_size": micro,
                    "grad_accum_steps": accum,
                }
                add_trial(study, s, params, noise=float(np.log(0.7) + rng.normal(0, 0.03)), lr_scale=5.0)
    rec = convtune.recommend(study, n_candidates=1500)
    assert rec.recipe.optimizer_name == "lion"
    assert "lion.peak_lr" in rec.params and "peak_lr" not in rec.params
    assert 2e-4 <= rec.recipe.peak_lr <= 6e-3
    batch = rec.recipe.effective_batch_size
    lion_best = LR_REF * (batch / B_REF) ** ALPHA / 5
    assert lion_best / 3 < rec.recipe.peak_lr < lion_best * 3, (rec.recipe.peak_lr, lion_best)


def test_forecasts_from_fewer_than_three_evaluations_are_left_out_of_the_fits() -> None:
    """The halving pruner stops many trials at their first evaluations; a forecast from one point
    is mostly the curve prior, so it must not pull the recommendation (here: 10× too fast)."""
    s = spec()
    study = optuna.create_study(direction="minimize")
    study.set_user_attr(SPEC_ATTR, s.to_dict())
    for micro, lr in [(32, 2e-3), (32, 5e-3), (32, 1e-2), (64, 5e-3), (64, 1e-2), (16, 3e-3)]:
        add_trial(study, s, {"peak_lr": lr, "micro_batch_size": micro, "grad_accum_steps": 1})
    fastest = min(t.value for t in study.trials)
    # Two one- and two-point forecasts 10× too fast; a three-point one close to the truth.
    for n_points, lr in [(1, 2.5e-2), (2, 2.8e-2), (3, 1.5e-3)]:
        predicted = true_time(16, 4, lr) * 1.2 if n_points == 3 else fastest / 10
        add_trial(
            study,
            s,
            {"peak_lr": lr, "micro_batch_size": 16, "grad_accum_steps": 4},
            status="stopped",
            predicted_time_to_target=predicted,
            forecast_low=predicted / 2,
            forecast_high=predicted * 2,
            forecast_level=0.8,
            forecast_n_points=n_points,
            extrapolated=True,
        )
    model = ScalingModel.from_study(study)
    stopped = {p.number: p.usable for p in model.points if not p.measured}
    assert stopped == {6: False, 7: False, 8: True}
    rec = convtune.recommend(study, n_candidates=500)
    assert rec.params["peak_lr"] < 2e-2 and rec.time_to_target > fastest / 3
