"""What optuna-dashboard shows for a convtune study: per-trial plots and a study note.

* After each trial, its learning curve (target line, measured or forecast crossing) is uploaded
  as a PNG to the study's artifact store (``optuna.artifacts.FileSystemArtifactStore`` at the
  spec's ``artifacts`` directory, else beside the SQLite/journal file).
* After each trial, the study note (markdown, ``optuna_dashboard.save_note``) is rewritten: the
  best measured trial (and, where the dashboard's own *Best value* is a stopped trial's forecast,
  which trial that is), the recommendation where a recommender exists, the speed-up over the
  baseline (a trial with user attribute ``baseline: true``) and the trial counts.

Neither may fail a trial: an error here is a warning, and the study goes on.

Example:
    >>> hooks = DashboardHooks(spec, "sqlite:///studies/convtune.db")          # doctest: +SKIP
    >>> study.optimize(Objective(spec, after_trial=hooks.after_trial), callbacks=[hooks])  # doctest: +SKIP
"""

from __future__ import annotations

import math
import tempfile
import warnings
from collections import Counter
from pathlib import Path
from typing import Any

import optuna
from optuna.trial import FrozenTrial, TrialState

from convtune.config.record import TrialRecord, TrialStatus, write_trial
from convtune.config.spec import StudySpec
from convtune.errors import StorageError
from convtune.report.format import describe_recipe, readable
from convtune.storage import default_artifact_dir

PLOT_PREFIX = "learning_curve"


def artifact_dir(spec: StudySpec, storage_url: str) -> Path:
    """The study's artifact directory: the spec's ``artifacts``, else beside the storage file."""
    return Path(spec.artifacts) if spec.artifacts else default_artifact_dir(storage_url)


def artifact_store(spec: StudySpec, storage_url: str) -> optuna.artifacts.FileSystemArtifactStore:
    directory = artifact_dir(spec, storage_url)
    directory.mkdir(parents=True, exist_ok=True)
    return optuna.artifacts.FileSystemArtifactStore(str(directory))


def upload_learning_curve(
    trial: optuna.Trial, spec: StudySpec, store: optuna.artifacts.FileSystemArtifactStore
) -> str:
    """Plot ``trial``'s curve and attach it as an artifact; returns the artifact id.

    The trial must still be running (Optuna attaches artifacts to unfinished trials only).
    """
    from convtune.report.plots import save_learning_curve

    with tempfile.TemporaryDirectory(prefix="convtune-plot-") as tmp:
        path = Path(tmp) / f"{PLOT_PREFIX}_trial{trial.number}.png"
        save_learning_curve(path, trial.number, TrialRecord.of(trial).attrs, spec.target, spec.cost)
        return optuna.artifacts.upload_artifact(
            artifact_store=store, file_path=str(path), study_or_trial=trial, mimetype="image/png"
        )


def trial_summary_line(attrs: dict[str, Any], spec: StudySpec) -> str:
    """``reached in 6144 samples · batch 64 · 5200 samples/s`` — status, time, batch, speed, why."""
    from convtune.config.record import cost_unit

    unit = cost_unit(spec.cost)
    status = attrs.get("status") or "running"
    if attrs.get("time_to_target") is not None:
        head = f"{status} in {_fmt(attrs['time_to_target'], unit)}"
    elif attrs.get("predicted_time_to_target") is not None:
        head = f"{status}, forecast {_fmt(attrs['predicted_time_to_target'], unit)}"
    else:
        head = status
    parts = [head, f"batch {attrs.get('effective_batch_size', '–')}"]
    if attrs.get("samples_per_second") is not None:
        parts.append(f"{readable(float(attrs['samples_per_second']))} samples/s")
    if attrs.get("reason") and status != "reached":
        parts.append(str(attrs["reason"]))
    return " · ".join(parts)


# ---- the study note ---------------------------------------------------------------------------


def _ttt(trial: FrozenTrial) -> tuple[float | None, bool]:
    """(time-to-target, is it a forecast) for a finished trial."""
    record = TrialRecord.of(trial)
    if record.time_to_target is not None:
        return float(record.time_to_target), False
    if record.predicted_time_to_target is not None:
        return float(record.predicted_time_to_target), True
    return None, False


def _fmt(value: float | None, unit: str) -> str:
    if value is None or not math.isfinite(value):
        return "–"
    return f"{readable(float(value))} {unit}"


def _recommendation_line(study: optuna.Study, spec: StudySpec, unit: str) -> str | None:
    """One line on the recommender's prediction, where ``convtune.scaling`` exists and can fit."""
    try:
        from convtune.scaling import recommend
    except ImportError:
        return None
    try:
        rec = recommend(study, spec)
    except Exception as exc:  # too few trials to fit: say so rather than fail
        why = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        return f"**Predicted fastest:** not yet ({why})"
    low, high = rec.interval
    ran = (
        f"ran as trial {rec.measured_trial} ({_fmt(rec.measured_time, unit)})"
        if rec.measured_trial is not None
        else "a configuration no trial ran yet"
    )
    return (
        f"**Predicted fastest:** {_fmt(rec.time_to_target, unit)} "
        f"({rec.level:.0%} interval {readable(low)}–{readable(high)}) — {describe_recipe(rec.recipe.to_dict())}; {ran}. "
        f"Export it with `--predicted`."
    )


def _value_legend(spec: StudySpec, unit: str) -> str:
    """How to read a trial's value: the ``status`` column says which kind it is."""
    from convtune.study.outcome import PENALTY_CEILING, penalty_base

    if not math.isfinite(spec.max_cost):
        return "Values: measured time (`reached`), else a forecast (`stopped`, `budget`), else a penalty."
    return (
        "Values (see each trial's `status`): measured time-to-target (`reached`); a forecast "
        f"(`stopped`, `budget`) below {_fmt(penalty_base(spec), unit)}; a penalty from "
        f"{_fmt(penalty_base(spec), unit)} to {_fmt(PENALTY_CEILING * spec.max_cost, unit)}, by how far "
        "the trial stayed from the target (no target, no usable forecast; `diverged`, `oom`)."
    )


def study_note(study: optuna.Study, spec: StudySpec) -> str:
    """The markdown summary optuna-dashboard shows on the study page."""
    from convtune.config.record import cost_unit
    from convtune.report.best import RUNNER_UP_MARGIN, confirm_command, measured_best, runners_up
    from convtune.scaling import best_confirmed

    unit = cost_unit(spec.cost)
    trials = study.get_trials(deepcopy=False)
    counts = Counter(r.stored_status or r.state.lower() for r in map(TrialRecord.of, trials))
    lines = [
        f"## {study.study_name}: fastest to `{spec.target}`",
        "",
        f"Workload `{spec.workload}`, cost **{spec.cost}** ({unit}), per-trial cap {_fmt(spec.max_cost, unit)}.",
        "",
        _value_legend(spec, unit),
        "",
    ]
    best = measured_best(study)
    if best is not None:
        lines.append(
            f"**Best measured:** trial {best.number}, {_fmt(best.value, unit)} — "
            f"{describe_recipe(TrialRecord.of(best).recipe)}"
        )
        close = runners_up(study, best)
        if close and best_confirmed(study) is None:
            lines.append(
                f"Within seed noise of it (other configurations within {RUNNER_UP_MARGIN:.0%}, one seed each): "
                f"trial {', '.join(str(t.number) for t in close[:5])}. Confirm before you export: "
                f"`{confirm_command(study.study_name, len(close))}`."
            )
    else:
        lines.append(f"**Best measured:** no trial reached `{spec.target}` yet.")
    optuna_best = _optuna_best(trials)
    shown = None if optuna_best is None else TrialRecord.of(optuna_best)
    if optuna_best is not None and shown is not None and shown.status is not TrialStatus.REACHED:
        # Optuna's "Best value" is the lowest value of any COMPLETE trial; under pauses
        # (`pruner: median`) that can be a stopped trial's right-censored forecast.
        kind = "forecast" if shown.status in (TrialStatus.STOPPED, TrialStatus.BUDGET) else "penalty"
        lines.append(
            f"The dashboard's *Best value* (trial {optuna_best.number}, {_fmt(optuna_best.value, unit)}) is "
            f"a `{shown.stored_status}` trial's {kind}, not a measured time."
        )
    rec = _recommendation_line(study, spec, unit)
    if rec:
        lines.append("")
        lines.append(rec)
    baselines = [t for t in trials if TrialRecord.of(t).baseline and t.state == TrialState.COMPLETE]
    if baselines:
        base = baselines[0]
        base_ttt, forecast = _ttt(base)
        lines.append("")
        text = f"**Baseline:** trial {base.number}, {_fmt(base_ttt, unit)}" + (
            " (forecast)" if forecast else ""
        )
        if best is not None and base_ttt and best.value:
            text += f" → best is **{base_ttt / best.value:.2f}× faster**"
        lines.append(text)
    lines += [
        "",
        "**Trials:** "
        + ", ".join(f"{n} {status}" for status, n in sorted(counts.items(), key=lambda kv: -kv[1]))
        + f" ({len(trials)} in all)",
        "",
        _forecasts_line(study, spec),
        "",
        "| trial | status | time to target | recipe |",
        "|---:|---|---:|---|",
    ]
    finished = [t for t in trials if t.state == TrialState.COMPLETE and t.value is not None]
    for t in sorted(finished, key=lambda t: t.value)[:5]:
        value, forecast = _ttt(t)
        shown = ("~" if forecast else "") + _fmt(value, unit)
        record = TrialRecord.of(t)
        lines.append(f"| {t.number} | {record.stored_status} | {shown} | {describe_recipe(record.recipe)} |")
    lines += [
        "",
        f"Export: `convtune study export {study.study_name} --format yaml -o best.yaml` "
        "(also `json`, `hf`, `python`). Each trial's learning curve is under its Artifacts.",
    ]
    return "\n".join(lines) + "\n"


def _optuna_best(trials: list[FrozenTrial]) -> FrozenTrial | None:
    """The trial Optuna calls best (``study.best_trial``): the lowest value of a COMPLETE trial."""
    finished = [t for t in trials if t.state == TrialState.COMPLETE and t.value is not None]
    return min(finished, key=lambda t: (t.value, t.number), default=None)


def _forecasts_line(study: optuna.Study, spec: StudySpec) -> str:
    """What the forecasts' check on the study's own trials says (``convtune study forecasts``)."""
    from convtune.report.forecasts import audit_forecasts

    audit = audit_forecasts(study, spec)
    text = f"**Forecasts on this study:** {audit.verdict()}."
    half = audit.summary(0.5) if 0.5 in audit.cuts else None
    if half is not None and half.n_reached:
        text += f" Median error from half of a run: {half.median_error:.2f} ({half.n_reached} trials)."
    return text + f" Details: `convtune study forecasts {study.study_name}`."


def refresh_note(study: optuna.Study, spec: StudySpec) -> None:
    """Rewrite the study note (optuna-dashboard keeps every version; it shows the latest)."""
    from optuna_dashboard import save_note

    save_note(study, study_note(study, spec))


class DashboardHooks:
    """Plot upload (inside the objective) and note refresh (an ``optimize`` callback).

    Both run between trials in the tuning process, never inside the training loop; a failure is
    a warning. ``enabled=False`` (or ``CONVTUNE_DASHBOARD=0``) turns both off.
    """

    def __init__(self, spec: StudySpec, storage_url: str, *, enabled: bool | None = None):
        import os

        self.spec = spec
        self.storage_url = storage_url
        self.enabled = enabled if enabled is not None else os.environ.get("CONVTUNE_DASHBOARD", "1") != "0"
        self._store: optuna.artifacts.FileSystemArtifactStore | None = None

    def after_trial(self, trial: optuna.Trial) -> None:
        """Upload the trial's learning-curve plot (the trial is still running, as Optuna needs)."""
        if not self.enabled:
            return
        try:
            # One line to read at a glance in the dashboard's user-attribute table.
            write_trial(trial, {"summary": trial_summary_line(TrialRecord.of(trial).attrs, self.spec)})
        except StorageError:
            raise  # the database is gone for good: the run ends, not the plot
        except Exception as exc:
            warnings.warn(f"convtune: could not summarise trial {trial.number}: {exc}", stacklevel=2)
        try:
            if self._store is None:
                self._store = artifact_store(self.spec, self.storage_url)
            upload_learning_curve(trial, self.spec, self._store)
        except StorageError:
            raise
        except Exception as exc:  # a plot must never cost a trial
            warnings.warn(f"convtune: could not upload trial {trial.number}'s plot: {exc}", stacklevel=2)

    def __call__(self, study: optuna.Study, trial: FrozenTrial) -> None:
        """``study.optimize`` callback: refresh the study note once the trial is recorded."""
        if not self.enabled:
            return
        try:
            refresh_note(study, self.spec)
        except StorageError:
            raise
        except Exception as exc:
            warnings.warn(f"convtune: could not refresh the study note: {exc}", stacklevel=2)
