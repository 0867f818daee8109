"""Quality targets (``convtune.config.target``): parsing, reached, gap, and errors that say the fix."""

from __future__ import annotations

import math

import pytest

from convtune.config.target import Target
from convtune.errors import TargetError


@pytest.mark.parametrize(
    ("text", "metric", "op", "value"),
    [
        ("val_loss<=1.9", "val_loss", "<=", 1.9),
        (" accuracy >= 0.95 ", "accuracy", ">=", 0.95),
        ("eval/ppl<30", "eval/ppl", "<", 30.0),
        ("bleu>2.5e1", "bleu", ">", 25.0),
        ("loss<=-1", "loss", "<=", -1.0),
    ],
)
def test_parse_reads_metric_operator_and_value(text: str, metric: str, op: str, value: float) -> None:
    target = Target.parse(text)
    assert (target.metric, target.op, target.value) == (metric, op, value)
    assert Target.parse(str(target)) == target  # the printed form parses back
    assert Target.parse(target) is target


@pytest.mark.parametrize("text", ["val_loss", "val_loss=1", "val_loss<=", "<=1", "1<=val_loss", "loss<=1 2"])
def test_malformed_targets_name_where_and_how_to_write_one(text: str) -> None:
    with pytest.raises(TargetError) as info:
        Target.parse(text, where="spec.target")
    message = str(info.value)
    assert "malformed target" in message and "spec.target" in message and "val_loss<=1.9" in message


def test_reached_and_gap_follow_the_direction() -> None:
    lower = Target.parse("val_loss<=2")
    assert lower.lower_is_better
    assert lower.is_reached(2.0) and lower.is_reached(1.5) and not lower.is_reached(2.1)
    assert lower.gap(2.5) == pytest.approx(0.5) and lower.gap(1.0) == 0.0
    higher = Target.parse("accuracy>0.9")
    assert not higher.lower_is_better
    assert higher.is_reached(0.91) and not higher.is_reached(0.9)  # strict
    assert higher.gap(0.8) == pytest.approx(0.1) and higher.gap(0.95) == 0.0


@pytest.mark.parametrize("value", [math.nan, math.inf, -math.inf])
def test_non_finite_values_never_reach_and_are_infinitely_far(value: float) -> None:
    for text in ("val_loss<=2", "accuracy>=0.9"):
        target = Target.parse(text)
        assert not target.is_reached(value)
        assert target.gap(value) == math.inf
