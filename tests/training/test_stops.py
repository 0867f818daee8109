"""The shared stop rules (``convtune.training.stops``): divergence and the budget, as sentences."""

from __future__ import annotations

import math

import pytest

from convtune.training.stops import StopRules


@pytest.mark.parametrize("loss", [math.nan, math.inf, -math.inf])
def test_a_non_finite_loss_diverges_at_once(loss: float) -> None:
    assert StopRules().after_step(step=7, loss=loss) == "non-finite training loss at step 7"


def test_a_finite_loss_without_a_scaler_goes_on() -> None:
    rules = StopRules()
    assert all(rules.after_step(step=s, loss=1e30) == "" for s in range(1, 100))
    assert rules.skipped_total == 0


def test_k_skipped_steps_in_a_row_diverge_and_an_update_resets_the_run() -> None:
    rules = StopRules(max_skipped_steps=3)
    # A falling scale is a skipped step; a held scale is an update that ends the run of skips.
    assert rules.after_step(step=1, loss=1.0, scale_before=1024, scale_after=512) == ""
    assert rules.after_step(step=2, loss=1.0, scale_before=512, scale_after=256) == ""
    assert rules.after_step(step=3, loss=1.0, scale_before=256, scale_after=256) == ""
    assert rules.skipped_in_row == 0 and rules.skipped_total == 2
    assert rules.after_step(step=4, loss=1.0, scale_before=256, scale_after=128) == ""
    assert rules.after_step(step=5, loss=1.0, scale_before=128, scale_after=64) == ""
    why = rules.after_step(step=6, loss=1.0, scale_before=64, scale_after=32)
    assert why == "3 fp16 steps skipped in a row at step 6"
    assert rules.skipped_total == 5


def test_a_loss_scale_below_one_diverges() -> None:
    rules = StopRules(max_skipped_steps=100)
    assert (
        rules.after_step(step=9, loss=1.0, scale_before=1.0, scale_after=0.5)
        == "loss scale fell below 1 at step 9"
    )


def test_a_non_finite_loss_is_not_counted_as_a_skipped_step() -> None:
    rules = StopRules()
    rules.after_step(step=1, loss=math.nan, scale_before=2.0, scale_after=1.0)
    assert rules.skipped_total == 0


@pytest.mark.parametrize("value", [math.nan, math.inf])
def test_a_non_finite_metric_diverges(value: float) -> None:
    assert StopRules.metric("val_loss", value, step=4) == "non-finite val_loss at step 4"
    assert StopRules.metric("val_loss", 3.5, step=4) == ""


def test_the_budget_is_reached_at_max_cost_not_before() -> None:
    rules = StopRules(max_cost=2048)
    assert rules.budget(2047.9) == ""
    assert rules.budget(2048) == "max_cost 2048 reached"
    assert rules.budget(5000) == "max_cost 2048 reached"
    assert StopRules().budget(1e300) == ""  # no cap
    # The reason stands on its own: a rank stops on the budget another rank's clock reached.
    assert StopRules(max_cost=2048).budget_reason == "max_cost 2048 reached"
