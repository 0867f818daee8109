"""Quality targets: ``metric op value`` such as ``val_loss<=1.9`` or ``accuracy>=0.95``."""

from __future__ import annotations

import math
import operator
import re
from collections.abc import Callable
from dataclasses import dataclass

from convtune.errors import TargetError

_OPS: dict[str, Callable[[float, float], bool]] = {
    "<=": operator.le,
    ">=": operator.ge,
    "<": operator.lt,
    ">": operator.gt,
}
_PATTERN = re.compile(
    r"^\s*([A-Za-z_][A-Za-z0-9_./-]*)\s*(<=|>=|<|>)\s*([-+]?[0-9]*\.?[0-9]+(?:[eE][-+]?[0-9]+)?)\s*$"
)


@dataclass(frozen=True)
class Target:
    """A quality target on one evaluation metric.

    Example:
        >>> t = Target.parse("val_loss<=1.9")
        >>> t.is_reached(1.85), t.gap(2.0)
        (True, 0.1...)
    """

    metric: str
    op: str
    value: float

    @classmethod
    def parse(cls, text: str | Target, *, where: str = "target") -> Target:
        if isinstance(text, Target):
            return text
        match = _PATTERN.match(str(text))
        if not match:
            raise TargetError(
                f"malformed target {text!r}",
                where=where,
                fix="write 'metric op value' with op one of <, <=, >, >=, e.g. 'val_loss<=1.9'",
            )
        metric, op, value = match.groups()
        return cls(metric=metric, op=op, value=float(value))

    @property
    def lower_is_better(self) -> bool:
        return self.op in ("<", "<=")

    def is_reached(self, metric_value: float) -> bool:
        if not math.isfinite(metric_value):
            return False
        return _OPS[self.op](metric_value, self.value)

    def gap(self, metric_value: float) -> float:
        """How far a value is from the target (0 once reached; ``inf`` for non-finite values)."""
        if not math.isfinite(metric_value):
            return math.inf
        signed = metric_value - self.value if self.lower_is_better else self.value - metric_value
        return max(0.0, signed)

    def __str__(self) -> str:
        return f"{self.metric}{self.op}{self.value:g}"
