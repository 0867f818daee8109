"""How numbers read in the CLI's tables, the study note and trial summaries."""

from __future__ import annotations

import math
from typing import Any


def readable(value: Any) -> str:
    """``value`` for people: ``–`` for none, ``∞``, ``52,570`` from a thousand up, else 4 significant digits.

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
        return f"{value:.4g}"
    return str(value)


def describe_recipe(recipe: dict[str, Any] | None) -> str:
    """A recipe on one line: the knobs a reader compares trials by."""
    if not recipe:
        return "–"
    clip = recipe.get("clip_norm")
    return (
        f"{recipe.get('optimizer')} · {recipe.get('schedule')} · peak_lr {recipe.get('peak_lr'):.3g} · "
        f"warmup {recipe.get('warmup_steps')} · batch {recipe.get('effective_batch_size')} "
        f"({recipe.get('micro_batch_size')}×{recipe.get('grad_accum_steps')}×{recipe.get('world_size')}) · "
        f"clip {clip if clip is not None else 'off'} · {recipe.get('precision')}"
    )
