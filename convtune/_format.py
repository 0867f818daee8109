"""How numbers read in the CLI's tables, the study note and trial summaries."""

from __future__ import annotations

import math
from typing import Any


def readable(value: Any, digits: int = 4) -> str:
    """``value`` for people: ``–`` for none, ``∞``, ``52,570`` from a thousand up, else ``digits`` significant.

    Times-to-target and throughputs run to tens of thousands of samples, where ``5.257e+04``
    makes a reader do arithmetic; LRs and losses keep their significant digits.
    """
    if value is None:
        return "–"
    if isinstance(value, float):
        if not math.isfinite(value):
            return "∞"
        if 1e3 <= abs(value) < 1e12:
            return f"{value:,.0f}"
        return f"{value:.{digits}g}"
    return str(value)
