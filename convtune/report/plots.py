"""Plots of convtune trials (matplotlib, Agg: no display needed, safe in worker threads).

:func:`learning_curve_figure` draws one trial's target metric against cost, with the target
line, the measured crossing or the forecast crossing and its interval. It reads only the trial's
stored record (``curve``, ``status``, ``time_to_target``, ``forecast_*``), so it works on a
live ``optuna.Trial``, a ``FrozenTrial`` or attributes loaded from anywhere.

Example:
    >>> attrs = TrialRecord.of(trial).attrs                                   # doctest: +SKIP
    >>> fig = learning_curve_figure(trial.number, attrs, "accuracy>=0.95", "samples")  # doctest: +SKIP
    >>> fig.savefig("trial.png")                                                                # doctest: +SKIP
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from convtune.config.target import Target
from convtune.report.format import readable

if TYPE_CHECKING:
    from matplotlib.figure import Figure

# Forecast attrs are stored in report-step units (samples, or milliseconds of time).
_STEP_SCALE = {"samples": 1.0, "wallclock": 1000.0, "device_seconds": 1000.0}
_STATUS_COLOURS = {
    "reached": "tab:green",
    "stopped": "tab:orange",
    "budget": "tab:purple",
    "diverged": "tab:red",
    "failed": "tab:gray",
}


def curve_costs(attrs: Mapping[str, Any], cost: str) -> list[float]:
    """Each evaluation's cost in the study's unit (samples, or seconds of training)."""
    curve = attrs.get("curve") or {}
    if cost == "samples":
        return [float(s) for s in curve.get("samples", [])]
    seconds = [float(s) for s in curve.get("seconds", [])]
    if cost == "device_seconds":
        world = int((attrs.get("recipe") or {}).get("world_size", attrs.get("world_size", 1)) or 1)
        return [s * world for s in seconds]
    return seconds


def _finite_pairs(xs: Sequence[float], ys: Sequence[Any]) -> tuple[list[float], list[float]]:
    pairs = [(x, float(y)) for x, y in zip(xs, ys, strict=False) if y is not None and math.isfinite(float(y))]
    return [p[0] for p in pairs], [p[1] for p in pairs]


def learning_curve_figure(
    number: int, attrs: Mapping[str, Any], target: str | Target, cost: str, *, width: float = 6.0
) -> Figure:
    """One trial's learning curve with the target line and the measured or forecast crossing."""
    from matplotlib.figure import Figure

    target = Target.parse(target)
    unit = "samples" if cost == "samples" else "seconds"
    curve = attrs.get("curve") or {}
    xs, ys = _finite_pairs(curve_costs(attrs, cost), curve.get("metric", []))
    status = str(attrs.get("status") or "running")
    colour = _STATUS_COLOURS.get(status, "tab:blue")

    fig = Figure(figsize=(width, width * 0.6), dpi=80, layout="constrained")
    ax = fig.subplots()
    ax.plot(xs, ys, marker="o", markersize=3, color=colour, label=f"trial {number} ({status})")
    ax.axhline(target.value, color="black", linestyle="--", linewidth=1, label=f"target {target}")
    measured = attrs.get("time_to_target")
    predicted = attrs.get("predicted_time_to_target")
    if measured is not None:
        ax.axvline(measured, color=colour, linestyle=":", linewidth=1)
        ax.plot([measured], [target.value], marker="*", markersize=12, color=colour,
                label=f"reached at {readable(float(measured))} {unit}")  # fmt: skip
    elif predicted is not None and math.isfinite(predicted):
        # The axis ends at 2.5× the cost trained: a far forecast sits at the edge (▶, its value in
        # the legend) rather than squashing the curve into the left margin.
        edge = 2.5 * xs[-1] if xs else None
        far = edge is not None and predicted > edge
        shown_x = edge if far else predicted
        scale = _STEP_SCALE.get(cost, 1.0)
        low, high = attrs.get("forecast_low"), attrs.get("forecast_high")
        if low is not None and math.isfinite(low):
            hi = high / scale if high is not None and math.isfinite(high) else math.inf
            lo, hi = low / scale, min(hi, edge) if edge is not None else hi
            if math.isfinite(hi) and hi > lo:
                level = attrs.get("forecast_level")
                label = f"forecast {level:.0%} interval" if level else "forecast interval"
                ax.axvspan(lo, hi, color=colour, alpha=0.15, label=label)
        if xs:
            ax.plot([xs[-1], shown_x], [ys[-1], target.value], color=colour, linestyle="--", alpha=0.6)
        ax.plot([shown_x], [target.value], marker=">" if far else "x", markersize=10, color=colour,
                clip_on=False, label=f"forecast {readable(float(predicted))} {unit}" + (" (beyond the axis)" if far else ""))  # fmt: skip
        if edge is not None:
            ax.set_xlim(0, edge)
    ax.set_xlabel(f"cost ({unit})")
    ax.set_ylabel(target.metric)
    reason = attrs.get("reason")
    ax.set_title(f"trial {number}: {status}" + (f" — {reason}" if reason and status != "reached" else ""),
                 fontsize=9)  # fmt: skip
    ax.grid(alpha=0.3)
    ax.legend(fontsize=7, loc="best")
    return fig


def save_learning_curve(
    path: str | Path, number: int, attrs: Mapping[str, Any], target: str | Target, cost: str
) -> Path:
    """Write :func:`learning_curve_figure` as a PNG and return its path."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg

    path = Path(path)
    fig = learning_curve_figure(number, attrs, target, cost)
    FigureCanvasAgg(fig)  # the Agg canvas: no display, no pyplot global state
    fig.savefig(path, format="png")
    return path


def study_curves_figure(
    trials: Sequence[tuple[int, Mapping[str, Any]]], target: str | Target, cost: str, *, width: float = 7.0
) -> Figure:
    """Every trial's curve on one axis, coloured by status (for notebooks and the README)."""
    from matplotlib.figure import Figure

    target = Target.parse(target)
    fig = Figure(figsize=(width, width * 0.6), dpi=90, layout="constrained")
    ax = fig.subplots()
    seen: set[str] = set()
    for number, attrs in trials:
        curve = attrs.get("curve") or {}
        xs, ys = _finite_pairs(curve_costs(attrs, cost), curve.get("metric", []))
        if not xs:
            continue
        status = str(attrs.get("status") or "running")
        label = status if status not in seen else None
        seen.add(status)
        ax.plot(xs, ys, color=_STATUS_COLOURS.get(status, "tab:blue"), alpha=0.8, linewidth=1.2, label=label)
        ax.annotate(str(number), (xs[-1], ys[-1]), fontsize=6, alpha=0.7)
    ax.axhline(target.value, color="black", linestyle="--", linewidth=1, label=f"target {target}")
    ax.set_xlabel(f"cost ({'samples' if cost == 'samples' else 'seconds'})")
    ax.set_ylabel(target.metric)
    ax.grid(alpha=0.3)
    ax.legend(fontsize=8)
    return fig
