"""Study-level plots of the scaling fits (matplotlib Agg, PNG), also uploaded for optuna-dashboard.

* ``learning_curves.png`` — every trial's metric against cost, the target line, and each
  unreached trial's forecast crossing with its interval;
* ``steps_vs_batch.png`` — steps to target against effective batch, the fit
  ``S = S_min·(1 + B_noise/B)`` and ``B_noise`` with its interval (a note says so while there
  is no fit yet);
* ``time_vs_lr.png`` — time-to-target against peak LR, one colour per effective batch and one
  marker per optimizer, with the combined model's prediction;
* ``predicted_vs_measured.png`` — after ``convtune study confirm``: prediction (interval) against
  measured (seed spread);
* ``forecasts_vs_outcomes.png`` — once a trial reached the target: the forecast each would have
  had from 10/25/50% of its run against its measured time (:mod:`convtune.report.forecasts`).

With a baseline trial, time axes also read as speed-up over it (right-hand axis).
Per-trial learning curves for the dashboard live in :mod:`convtune.report.plots`.

Example:
    >>> paths = write_plots(study, spec, "plots/")                      # doctest: +SKIP
    >>> upload_plots(study, spec, storage_url, paths)                  # doctest: +SKIP
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import optuna

from convtune.config.record import records
from convtune.report.forecasts import ForecastAudit, audit_forecasts
from convtune.scaling import ScalingModel, baseline_time, confirmations, trial_points

if TYPE_CHECKING:
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure

    from convtune.config.spec import StudySpec

_STEP_SCALE = {"samples": 1.0, "wallclock": 1000.0, "device_seconds": 1000.0}
_MARKERS = ["o", "s", "^", "D", "v", "P", "X"]  # one per optimizer in time_vs_lr


def _figure(width: float = 6.5) -> tuple[Figure, Axes]:
    from matplotlib.figure import Figure

    fig = Figure(figsize=(width, width * 0.65), dpi=100, layout="constrained")
    return fig, fig.subplots()


def _save(fig: Figure, path: Path) -> Path:
    from matplotlib.backends.backend_agg import FigureCanvasAgg

    FigureCanvasAgg(fig)  # Agg: no display, no pyplot global state
    fig.savefig(path, format="png")
    return path


def _speedup_axis(ax: Axes, base: float | None) -> None:
    """A right-hand axis reading a time as ``baseline / time`` (× faster than the baseline)."""
    if not base:
        return
    ax.axhline(base, color="grey", linestyle=":", linewidth=1)
    inv = lambda t: base / np.maximum(t, 1e-12)  # noqa: E731  (its own inverse)
    ax.secondary_yaxis("right", functions=(inv, inv)).set_ylabel("× faster than baseline")


def learning_curves(study: optuna.Study, spec: StudySpec) -> Figure:
    """Every trial's curve, the target line and each unreached trial's forecast crossing.

    The x-axis ends a little past the cap (or the longest curve): the region trials can reach.
    A forecast beyond it is drawn at the edge as ``▶`` with its value, so one far forecast
    cannot squash the rest.
    """
    from convtune.report.format import readable
    from convtune.report.plots import curve_costs, study_curves_figure

    trials = [(r.number, r.attrs) for r in records(study) if r.has_curve]
    fig = study_curves_figure(trials, spec.target, spec.cost)
    ax = fig.axes[0]
    target = spec.target_spec.value
    scale = _STEP_SCALE[spec.cost]
    longest = max((max(curve_costs(attrs, spec.cost), default=0.0) for _, attrs in trials), default=0.0)
    cap = spec.max_cost if math.isfinite(spec.max_cost) else 0.0
    edge = 1.15 * max(cap, longest) or None
    for number, attrs in trials:
        est = attrs.get("forecast_estimate")
        if attrs.get("status") in ("stopped", "budget") and est:
            low = (attrs.get("forecast_low") or est) / scale
            high = (attrs.get("forecast_high") or est) / scale
            x = est / scale
            if edge is not None and x > edge:
                ax.plot(
                    [edge], [target], marker=">", color="tab:orange", alpha=0.8, markersize=7, clip_on=False
                )
                ax.annotate(
                    f"{number}: {readable(x)}",
                    (edge, target),
                    fontsize=6,
                    alpha=0.7,
                    ha="right",
                    xytext=(-6, 4 + 8 * (number % 3)),
                    textcoords="offset points",
                )
                continue
            ax.errorbar(
                [x],
                [target],
                xerr=[[x - low], [min(high, edge or high) - x if math.isfinite(high) else 0.0]],
                fmt="x",
                color="tab:orange",
                alpha=0.7,
                markersize=5,
                capsize=2,
            )
            ax.annotate(
                f"{number}", (x, target), fontsize=6, alpha=0.6, xytext=(0, 4), textcoords="offset points"
            )
    if edge is not None:
        ax.set_xlim(0, edge)
    ax.set_title(
        "learning curves; × = forecast crossing (interval), ▶ = forecast beyond the axis", fontsize=9
    )
    return fig


def steps_vs_batch(model: ScalingModel, unit: str) -> Figure:
    fig, ax = _figure()
    pts = model.usable
    for measured, style in (
        (True, dict(color="tab:green", label="reached")),
        (False, dict(facecolors="none", edgecolors="tab:orange", label="forecast")),
    ):
        sel = [p for p in pts if p.measured == measured]
        if sel:
            ax.scatter([p.batch for p in sel], [p.steps for p in sel], s=22, **style)
    if pts:
        grid = np.geomspace(min(p.batch for p in pts) / 1.5, max(p.batch for p in pts) * 1.5, 100)
        sf = model.steps_fit
        if sf is not None and sf.b_noise is not None:
            # Steps at each batch's best LR: the LR term vanishes.
            ax.plot(grid, sf.s_min * (1 + sf.b_noise / grid), color="black", label="fit at best LR")
            ax.axvline(sf.b_noise, color="tab:blue", linestyle="--", label=f"B_noise ≈ {sf.b_noise:.3g}")
            low, high = sf.b_noise_interval or (sf.b_noise, sf.b_noise)
            ax.axvspan(max(low, grid[0]), min(high, grid[-1]), color="tab:blue", alpha=0.12)
        cb = model.critical_batch
        if cb is not None:
            ax.plot(
                grid,
                cb.steps_at(grid),
                color="grey",
                linestyle=":",
                label=f"envelope fit (B_noise ≈ {cb.b_noise:.3g})",
            )
    fitted = pts and (
        (model.steps_fit is not None and model.steps_fit.b_noise is not None)
        or model.critical_batch is not None
    )
    if not fitted:
        batches = len({p.batch for p in pts})
        ax.text(
            0.5,
            0.5,
            f"fit not drawn yet: {batches} batch size(s) with a time to target;\n"
            "S_min and B_noise need trials at several batch sizes",
            transform=ax.transAxes,
            ha="center",
            va="center",
            fontsize=8,
            color="dimgrey",
            bbox=dict(boxstyle="round", facecolor="white", edgecolor="lightgrey"),
        )
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("effective batch size B (samples per optimizer step)")
    ax.set_ylabel("optimizer steps to target")
    ax.set_title("steps to target" + (": S = S_min·(1 + B_noise/B)" if fitted else ""), fontsize=9)
    ax.grid(alpha=0.3, which="both")
    ax.legend(fontsize=7)
    return fig


def time_vs_lr(model: ScalingModel, unit: str, base: float | None) -> Figure:
    import matplotlib

    fig, ax = _figure()
    batches = sorted({p.batch for p in model.usable})
    optimizers = sorted({str(p.recipe.get("optimizer", "?")) for p in model.usable})
    marker = dict(zip(optimizers, _MARKERS * (1 + len(optimizers) // len(_MARKERS)), strict=False))
    cmap = matplotlib.colormaps["viridis"]
    for i, batch in enumerate(batches):
        colour = cmap(i / max(1, len(batches) - 1))
        sel = [p for p in model.usable if p.batch == batch]
        for optimizer in optimizers:
            mine = [p for p in sel if str(p.recipe.get("optimizer", "?")) == optimizer]
            if mine:
                ax.scatter(
                    [p.lr for p in mine], [p.time for p in mine], color=colour, s=24, marker=marker[optimizer]
                )
        ax.scatter([], [], color=colour, s=20, marker="o", label=f"B={batch}")
        best = min(sel, key=lambda p: p.time)
        # "peak_lr", or "<optimizer>.peak_lr" where optimizers have their own ranges
        lr_name = next((k for k in best.params if k.split(".")[-1] == "peak_lr"), None)
        if lr_name is None:
            continue
        dist = model.space.distributions()[lr_name]
        if isinstance(dist, optuna.distributions.CategoricalDistribution):  # LR given as choices
            lrs = np.array(sorted(float(c) for c in dist.choices))
        else:
            lrs = np.geomspace(dist.low, dist.high, 40)
        preds = model.predict([{**best.params, lr_name: float(lr)} for lr in lrs])
        ax.plot(lrs, [p.time_to_target for p in preds], color=colour, linewidth=1, alpha=0.8)
    if len(optimizers) > 1:  # the marker says which optimizer: one legend entry each
        for optimizer in optimizers:
            ax.scatter([], [], color="grey", s=24, marker=marker[optimizer], label=optimizer)
    _speedup_axis(ax, base)
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("peak LR")
    ax.set_ylabel(f"time to target ({unit})")
    ax.set_title(
        "time to target against peak LR per batch (lines: model, other knobs as the batch's best)", fontsize=8
    )
    ax.grid(alpha=0.3, which="both")
    ax.legend(fontsize=7)
    return fig


def predicted_vs_measured(confirmed: list[dict[str, Any]], unit: str, base: float | None) -> Figure:
    fig, ax = _figure(5.5)
    values = []
    for c in confirmed:
        if not c.get("measured_mean"):
            continue
        pred, (low, high) = c["predicted"], c["interval"]
        mean, lo, hi = c["measured_mean"], c["measured_min"], c["measured_max"]
        ax.errorbar(
            [pred],
            [mean],
            xerr=[[pred - low], [high - pred]],
            yerr=[[mean - lo], [hi - mean]],
            fmt="o",
            capsize=3,
        )
        ax.annotate(c["id"][:6], (pred, mean), fontsize=7, xytext=(4, 4), textcoords="offset points")
        values += [low, high, lo, hi]
    if values:
        lim = (min(values) / 1.2, max(values) * 1.2)
        ax.plot(lim, lim, color="grey", linestyle="--", linewidth=1)
        ax.set_xscale("log")
        ax.set_yscale("log")
    _speedup_axis(ax, base)
    ax.set_xlabel(f"predicted time to target ({unit}), interval; --measured: the search's one run")
    ax.set_ylabel(f"measured ({unit}), seed min–max")
    ax.set_title("confirm runs: predicted against measured", fontsize=9)
    ax.grid(alpha=0.3, which="both")
    return fig


def forecasts_vs_outcomes(audit: ForecastAudit, spec: StudySpec) -> Figure:
    """Each checked forecast's estimate (with its interval) against the trial's true crossing,
    one marker per cut; "never" and estimates past the axis sit on its top edge as ``▲``."""
    from matplotlib.ticker import FuncFormatter, LogLocator, NullFormatter

    from convtune.config.record import cost_unit
    from convtune.report.format import readable

    fig, ax = _figure(5.5)
    scale = _STEP_SCALE[spec.cost]
    reached = [c for c in audit.checks if c.reached]
    truths = [c.truth / scale for c in reached]
    top = 3.0 * max(truths) if truths else 1.0
    for marker, cut in zip(("o", "s", "D", "P", "X"), audit.cuts, strict=False):
        at = [c for c in reached if c.cut == cut]
        if not at:
            continue
        x = np.array([c.truth / scale for c in at])
        y = np.array([min(c.forecast.estimate / scale, top) for c in at])
        low = np.array([min(c.forecast.low / scale, top) for c in at])
        high = np.array([min(c.forecast.high / scale, top) for c in at])
        ax.errorbar(
            x,
            y,
            yerr=[np.maximum(y - low, 0), np.maximum(high - y, 0)],
            fmt=marker,
            capsize=2,
            alpha=0.8,
            label=f"from {cut:.0%} of the run",
        )
        for c, xi, yi in zip(at, x, y, strict=True):
            if yi >= top:
                ax.plot([xi], [top], marker="^", color="tab:red", clip_on=False)
            ax.annotate(
                f"{c.trial}", (xi, yi), fontsize=6, alpha=0.6, xytext=(3, 3), textcoords="offset points"
            )
    unit = cost_unit(spec.cost)
    if truths:
        lim = (min(truths) / 1.5, top)
        ax.plot(lim, lim, color="grey", linestyle="--", linewidth=1, label="exact")
        ax.plot(lim, [2 * v for v in lim], color="tab:red", linestyle=":", linewidth=1, label='2× ("never")')
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_ylim(lim[0], top * 1.05)
        for axis in (ax.xaxis, ax.yaxis):
            axis.set_major_locator(LogLocator(subs=(1.0, 2.0, 5.0)))
            axis.set_major_formatter(FuncFormatter(lambda v, _: readable(v)))
            axis.set_minor_formatter(NullFormatter())
        ax.legend(fontsize=7)
    else:
        ax.text(0.5, 0.5, "no trial with a known outcome to check yet", ha="center", transform=ax.transAxes)
    ax.set_xlabel(f"measured time to target ({unit})")
    ax.set_ylabel(f"forecast ({unit}), {audit.level:.0%} interval")
    ax.set_title(
        f"forecast from a prefix against measured ({len({c.trial for c in reached})} trials that reached)\n"
        "stopped trials cannot be checked; ▲ = never, or off the axis",
        fontsize=9,
    )
    ax.grid(alpha=0.3, which="both")
    return fig


def write_plots(study: optuna.Study, spec: StudySpec, out_dir: str | Path) -> list[Path]:
    """Write every plot the study's data supports into ``out_dir``; return their paths."""
    from convtune.config.record import cost_unit

    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    unit = cost_unit(spec.cost)
    base = baseline_time(study)
    paths = [_save(learning_curves(study, spec), out / "learning_curves.png")]
    if any(p.usable for p in trial_points(study, spec.cost)):
        model = ScalingModel.from_study(study, spec)
        paths.append(_save(steps_vs_batch(model, unit), out / "steps_vs_batch.png"))
        paths.append(_save(time_vs_lr(model, unit, base), out / "time_vs_lr.png"))
    confirmed = confirmations(study)
    if any(c.get("measured_mean") for c in confirmed):
        paths.append(_save(predicted_vs_measured(confirmed, unit, base), out / "predicted_vs_measured.png"))
    audit = audit_forecasts(study, spec)
    if any(c.reached for c in audit.checks):
        paths.append(_save(forecasts_vs_outcomes(audit, spec), out / "forecasts_vs_outcomes.png"))
    return paths


def upload_plots(study: optuna.Study, spec: StudySpec, storage_url: str, paths: list[Path]) -> list[str]:
    """Attach the plots to the study as Optuna artifacts (optuna-dashboard lists them)."""
    import optuna

    from convtune.storage import default_artifact_dir

    directory = Path(spec.artifacts) if spec.artifacts else default_artifact_dir(storage_url)
    directory.mkdir(parents=True, exist_ok=True)
    store = optuna.artifacts.FileSystemArtifactStore(str(directory))
    return [
        optuna.artifacts.upload_artifact(
            artifact_store=store, file_path=str(path), study_or_trial=study, mimetype="image/png"
        )
        for path in paths
    ]
