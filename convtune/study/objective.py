"""Studies: create one from a spec, run its trials inside ``study.optimize()``, read the best.

One rule decides every trial's outcome (the brief's table), so the sampler, the dashboard and
``best`` agree:

========================  =========  ===========================================  ==========
outcome                   state      value                                        ``status``
========================  =========  ===========================================  ==========
target reached            COMPLETE   measured time-to-target                      reached
stopped by the pruner     COMPLETE   right-censored: forecast median given not    stopped
                                     reached by the cost spent (≥ that cost)
cap reached, target not   COMPLETE   forecast estimate beyond the cap, or penalty budget
diverged                  COMPLETE   penalty (and an infeasible constraint)       diverged
out of memory             COMPLETE   penalty (and an infeasible ``oom``)          oom
crashed / rank died       FAIL       –                                            failed
========================  =========  ===========================================  ==========

A stop is a pause: a stopped trial keeps its checkpoint (with ``checkpoint_dir``), and a repeat
of its configuration trains on from it instead of reusing its value.

Values are in the study's cost unit (seconds for ``wallclock``/``device_seconds``, samples for
``samples``). Reports use ``step = cost`` as an integer: samples, or milliseconds of time.
"""

from __future__ import annotations

import dataclasses
import functools
import json
import math
import shutil
import warnings
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import optuna
from optuna.trial import FrozenTrial, TrialState

from convtune import __version__
from convtune.config.recipe import Recipe
from convtune.config.record import (
    SCHEDULE_ATTR,
    SPEC_ATTR,
    TRAINED,
    TrialRecord,
    TrialStatus,
    cost_unit,
    is_enqueued_repeat,
    set_study_attr,
    step_scale,
    study_attr,
    write_status,
    write_trial,
)
from convtune.config.spec import StudySpec
from convtune.curves import LRSchedule
from convtune.errors import ConfigError, ConvtuneError, StudyError, WorkloadError
from convtune.execution.executor import Executor, InProcessExecutor
from convtune.storage import open_storage, redact, resolve_storage_url, strip_password
from convtune.study.outcome import describe_error, record_outcome
from convtune.study.signals import _lost_interrupt
from convtune.training.engine import EngineConfig, Progress, RunResult, default_device, default_threads
from convtune.training.memory import peak_memory_mb
from convtune.training.stops import StopRules

_SCHEDULE_POINTS = 256
RESUMED_FROM_ATTR = "resumed_from"
"""Trial attr of a repeat of a stopped configuration: the number of the stopped trial it resumed."""
PROMOTED_FROM_ATTR = "promoted_from"
"""User attr of a trial queued to resume a paused one (:mod:`convtune.study.promotion`): its number."""
RESUMED_AT_ATTR = "resumed_at"
"""Beside it: what that trial had spent (samples, or training seconds), included in this one's
totals when it resumed from its checkpoint (0 when it trained again from the start)."""


class TrialFailed(Exception):
    """A trial crashed (not a user error): it ends FAIL and the study goes on."""


# ---- creating and opening studies -------------------------------------------------------------


def create_study(name: str, spec: StudySpec, storage: str | None = None) -> optuna.Study:
    """Create study ``name`` holding the whole ``spec``; an existing one must have the same spec."""
    check_study_name(name)
    if spec.pruner_options:
        try:
            make_pruner(spec)
        except ValueError as exc:
            raise ConfigError(
                str(exc), where="pruner_options", fix="see TimeToTargetPruner's arguments"
            ) from None
    url = resolve_storage_url(storage or spec.storage)
    backend = open_storage(url, create=True)
    stored = spec.to_dict()
    # The storage is remembered without its password (a study's attributes are served by
    # optuna-dashboard and read by anyone with the storage), and it is not part of what makes two
    # specs the same: a rotated password, or --storage instead of $CONVTUNE_STORAGE, is one study.
    stored["storage"] = strip_password(spec.storage) if spec.storage else None
    try:
        existing = optuna.load_study(study_name=name, storage=backend)
    except KeyError:
        existing = None
    if existing is not None:
        old = {k: v for k, v in (study_attr(existing, SPEC_ATTR) or {}).items() if k != "storage"}
        new = {k: v for k, v in json.loads(json.dumps(stored)).items() if k != "storage"}
        if old != new:
            changed = sorted(k for k in set(old) | set(new) if old.get(k) != new.get(k))
            raise StudyError(
                f"study {name!r} exists with a different spec (differs in: {', '.join(changed) or 'all'})",
                where=redact(url),
                fix="choose another name, or delete it with `convtune study delete`",
            )
        return existing
    study = optuna.create_study(study_name=name, storage=backend, direction="minimize")
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", optuna.exceptions.ExperimentalWarning)
            study.set_metric_names([f"time_to_target_{cost_unit(spec.cost)}"])
        set_study_attr(study, SPEC_ATTR, stored)
        set_study_attr(study, "target", spec.target)
        set_study_attr(study, "cost", spec.cost)
        set_study_attr(study, "cost_unit", cost_unit(spec.cost))
        set_study_attr(study, "report_step_unit", "samples" if spec.cost == "samples" else "milliseconds")
        set_study_attr(study, "workload", spec.workload)
        set_study_attr(study, "convtune_version", __version__)
    except Exception:
        optuna.delete_study(study_name=name, storage=backend)  # nothing half-written
        raise
    return study


# Optuna's RDB schema holds study names in VARCHAR(512); journals have no limit, but a study
# must be movable between storages, so one limit holds everywhere.
MAX_STUDY_NAME = 512


def check_study_name(name: str) -> None:
    """A study name is non-empty, printable on one line, and fits every storage."""
    if not name or not name.strip():
        raise StudyError("a study name cannot be empty", where="study name", fix="give it a name")
    if not name.isprintable():
        raise StudyError(
            f"{name!r} holds a control character (newline, tab, …)",
            where="study name",
            fix="use printable characters only",
        )
    if len(name) > MAX_STUDY_NAME:
        raise StudyError(
            f"{len(name)} characters is longer than the {MAX_STUDY_NAME} a storage holds",
            where="study name",
            fix="choose a shorter name",
        )


def open_study(name: str, storage: str | None = None, **study_kwargs: Any) -> tuple[optuna.Study, StudySpec]:
    """Load a convtune study and its stored spec."""
    url = resolve_storage_url(storage)
    backend = open_storage(url)
    try:
        study = optuna.load_study(study_name=name, storage=backend, **study_kwargs)
    except KeyError:
        raise StudyError(
            f"no study named {name!r}",
            where=redact(url),
            fix="create it with `convtune study create NAME --config studies/X.yaml`, or check --storage",
        ) from None
    raw = study_attr(study, SPEC_ATTR)
    if raw is None:
        raise StudyError(f"study {name!r} was not created by convtune", where=redact(url))
    return study, StudySpec.from_dict(raw, where=f"study {name}")


def make_sampler(spec: StudySpec) -> optuna.samplers.BaseSampler:
    """The spec's sampler; under ``stop_value: withheld``, wrapped so it is not told stopped trials."""
    sampler = _spec_sampler(spec)
    if spec.stop_value == "withheld":
        from convtune.study.withheld import StopsWithheld

        return StopsWithheld(sampler)
    return sampler


def _spec_sampler(spec: StudySpec) -> optuna.samplers.BaseSampler:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", optuna.exceptions.ExperimentalWarning)
        if spec.sampler == "random":
            return optuna.samplers.RandomSampler(seed=spec.seed)
        if spec.sampler == "gp":
            return optuna.samplers.GPSampler(seed=spec.seed)
        # group=True: conditional parameters (adamw.*, cyclic.*) are modelled within their group.
        return optuna.samplers.TPESampler(seed=spec.seed, multivariate=True, group=True, n_startup_trials=5)


def evaluations_per_run(spec: StudySpec) -> int | str:
    """How many evaluations a run capped at ``max_cost`` makes, where the spec says (cost and
    evaluations both in samples); else ``"auto"`` (Hyperband reads it off the first finished
    trial)."""
    if math.isfinite(spec.max_cost) and spec.cost == "samples" and spec.eval_unit == "samples":
        return max(1, math.ceil(spec.max_cost / spec.eval_interval))
    return "auto"


def make_pruner(spec: StudySpec) -> optuna.pruners.BasePruner:
    """The pruner the spec's ``pruner`` names, set up for a study whose trials report
    ``trial.report(metric, step=cost)`` (cost in :func:`convtune.config.record.step_scale` units).

    ``none`` is Optuna's ``NopPruner``; ``median`` its ``MedianPruner`` judging each trial's
    distance to the target at each evaluation (:class:`convtune.pruners.GapPruner`: the study
    minimises time-to-target, so the median pruner on the raw metric kept the *worst* trials of a
    maximised one such as accuracy); ``hyperband`` its ``HyperbandPruner`` on the same distance
    (:meth:`convtune.pruners.GapPruner.hyperband`, a run's evaluations from
    :func:`evaluations_per_run`); the ``time_to_target*`` names are
    :class:`convtune.pruners.TimeToTargetPruner` with the spec's target and cost cap.
    Any other Optuna ``BasePruner`` plugs in through ``run_study(..., pruner=...)``, which uses
    this function only when none is given::

        from convtune.study.run import run_study
        run_study("mystudy", storage=url, pruner=optuna.pruners.HyperbandPruner(), n_trials=20)
    """
    if spec.pruner == "none":
        return optuna.pruners.NopPruner()
    from convtune.pruners import GapPruner, TimeToTargetPruner

    if spec.pruner == "median":
        return GapPruner(optuna.pruners.MedianPruner(n_startup_trials=3, n_warmup_steps=0), spec.target_spec)
    if spec.pruner == "hyperband":
        return GapPruner.hyperband(spec.target_spec, evaluations_per_run(spec))

    return TimeToTargetPruner.for_spec(spec, **spec.pruner_options)


# ---- running trials ---------------------------------------------------------------------------


@dataclass
class TrialEvent:
    """What the CLI's progress display hears about: an evaluation or a finished trial."""

    kind: str  # "eval" or "done"
    trial: int
    cost: float = 0.0
    metric: float = math.nan
    status: str = ""
    value: float = math.nan


@dataclass
class _Reporter:
    """Turns engine records into Optuna reports and the stop decision for one trial."""

    trial: optuna.Trial
    spec: StudySpec
    recipe: Recipe
    on_event: Callable[[TrialEvent], None] | None
    pruned: bool = False
    costs: list[float] = field(default_factory=list)
    values: list[float] = field(default_factory=list)
    # The trial's peak resident memory in MB (this process's, or the highest of its ranks'); None
    # where it is not measured (script and command trials).
    memory: Callable[[], float] | None = None
    oom: str = ""
    # Why the target's metric went non-finite (NaN or inf): the trial diverged, whatever the
    # executor says (its own rules watch the training loss, not what evaluate() returns).
    diverged: str = ""
    # A repeat of a stopped trial: its reports up to this step were judged already (it resumes
    # from that trial's checkpoint, or retraces its seeded curve), so the pruner judges only past it.
    resumed_at: float = -math.inf

    def __call__(self, progress: Progress) -> bool:
        _lost_interrupt.raise_if_pending()
        target = self.spec.target_spec
        if target.metric not in progress.metrics:
            script = isinstance(self.spec.workload, dict)  # a script's reports, not evaluate()
            raise WorkloadError(
                f"{'session.report(metrics=...) got' if script else 'evaluate() returned'} "
                f"{sorted(progress.metrics)}, not the target's metric {target.metric!r}",
                where="workload",
                fix=f"{'report' if script else 'return'} the metric named in the target",
            )
        value = float(progress.metrics[target.metric])
        step = int(round(progress.cost * step_scale(self.spec.cost)))
        if not self.costs:
            write_trial(
                self.trial, {SCHEDULE_ATTR: schedule_for(self.recipe, step / max(1, progress.step)).to_dict()}
            )
        self.costs.append(float(step))
        self.values.append(value)
        if math.isfinite(value):
            self.trial.report(value, step=step)
        if self.on_event:
            self.on_event(TrialEvent("eval", self.trial.number, cost=progress.cost, metric=value))
        if not math.isfinite(value):
            self.diverged = StopRules.metric(target.metric, value, step=progress.step)
            return True
        if self.memory is not None and self.spec.max_memory_mb:
            used = self.memory()
            if used > self.spec.max_memory_mb:
                self.oom = f"peak memory {used:.0f} MB over max_memory_mb={self.spec.max_memory_mb:g}"
                return True
        if target.is_reached(value):
            return True
        if progress.cost >= self.spec.max_cost:
            return False  # the engine ends it with status "budget"
        if step <= self.resumed_at:
            return False
        if self.trial.should_prune():
            self.pruned = True
            return True
        return False


def _stop_inside(exc: BaseException) -> KeyboardInterrupt | None:
    """A Ctrl-C or SIGTERM that an error wraps: Python turns an exception raised while a class
    body runs ``__set_name__`` (a signal landing in a lazy import, e.g. ``torch._dynamo`` as the
    first optimizer is built) into a ``RuntimeError``, which must still stop the run as the
    signal would, not fail the trial."""
    seen: set[int] = set()
    cause: BaseException | None = exc
    while cause is not None and id(cause) not in seen:
        if isinstance(cause, KeyboardInterrupt):
            return cause
        seen.add(id(cause))
        cause = cause.__cause__ or cause.__context__
    return None


def _is_oom(exc: BaseException) -> bool:
    """CUDA (or any torch) out-of-memory, raised here or described by a rank."""
    text = f"{type(exc).__name__}: {exc} {getattr(exc, 'description', '')}"
    return "OutOfMemoryError" in text or "CUDA out of memory" in text


def schedule_for(recipe: Recipe, cost_per_step: float) -> LRSchedule:
    """The trial's LR against cost over its whole planned run (what the forecaster needs)."""
    return LRSchedule.from_steps(recipe.lr_per_step, cost_per_step, max_points=_SCHEDULE_POINTS)


def engine_config(spec: StudySpec, *, local_workers: int = 1) -> EngineConfig:
    """The engine settings a study's spec implies (threads: cores / (ranks × local workers))."""
    return EngineConfig(
        eval_every=spec.eval_interval,
        eval_unit=spec.eval_unit,
        max_cost=spec.max_cost,
        cost=spec.cost,
        seed=spec.seed,
        threads=default_threads(spec.world_size, local_workers),
        max_skipped_steps=spec.max_skipped_steps,
    )


class Objective:
    """Runs one trial of a convtune study and returns its value by the outcome table."""

    def __init__(
        self,
        spec: StudySpec,
        *,
        executor: Executor | None = None,
        local_workers: int = 1,
        on_event: Callable[[TrialEvent], None] | None = None,
        after_trial: Callable[[optuna.Trial], None] | None = None,
    ):
        self.spec = spec
        # Runs once the outcome is recorded, while the trial is still open (plots, artifacts).
        self.after_trial = after_trial
        self.space = spec.search_space
        self.on_event = on_event
        self.executor = executor or InProcessExecutor(spec)
        self.config = engine_config(spec, local_workers=local_workers)

    def __call__(self, trial: optuna.Trial) -> float:
        recipe = self.space.recipe(trial)
        write_trial(
            trial,
            {
                "recipe": recipe.to_dict(),
                "effective_batch_size": recipe.effective_batch_size,
                "total_steps": recipe.total_steps,
                "world_size": recipe.world_size,
            },
        )
        twin = promoted_twin(trial) or finished_twin(trial, self.spec.duplicate_tolerance)
        paused: FrozenTrial | None = None
        if twin is not None and TrialRecord.of(twin).status is TrialStatus.STOPPED:
            paused = twin  # a stop is a pause, not a verdict: this repeat trains on from it
        elif twin is not None:
            return self._repeat(trial, twin)
        reporter = _Reporter(trial, self.spec, recipe, self.on_event)
        if isinstance(self.executor, InProcessExecutor):
            # The trial trains in this process, on its device: that device's peak is the trial's.
            reporter.memory = functools.partial(peak_memory_mb, default_device(self.config.device))
        else:  # launched ranks (warm, or the user's script) send theirs with their reports
            reporter.memory = getattr(self.executor, "peak_memory_mb", None)
        # An enqueued trial may carry its own training seed (``confirm`` repeats one config
        # over seeds); every other trial trains with the spec's.
        seed = TrialRecord.of(trial).seed
        config = self.config if seed is None else dataclasses.replace(self.config, seed=int(seed))
        checkpoints = self._checkpoint_dir(trial)
        if paused is not None:
            reporter.resumed_at = self._resume(trial, paused, checkpoints)
        if checkpoints is not None:
            config = dataclasses.replace(config, checkpoint_dir=str(checkpoints))
            if any(checkpoints.glob("*checkpoint*")):
                write_trial(trial, {"resumed_from_checkpoint": True})
        keep = False
        try:
            return self._run(trial, recipe, config, reporter)
        except KeyboardInterrupt:  # Preempted or Ctrl-C: either way the trial is re-queued
            keep = True  # and its retry resumes from this checkpoint
            raise
        finally:
            # A stopped trial keeps its state: a repeat of its configuration resumes from it.
            # Any other finished (or failed, or interrupted) trial is never resumed: drop it.
            keep = keep or reporter.pruned
            if checkpoints is not None and not keep:
                shutil.rmtree(checkpoints, ignore_errors=True)

    def _resume(self, trial: optuna.Trial, paused: FrozenTrial, checkpoints: Path | None) -> float:
        """Take over the stopped trial ``paused``: its checkpoint moves to this trial's directory
        (the engine resumes from it and reports the curve so far again, so the pruner sees one
        curve), and this trial records where it resumed. Returns the step it resumed at: reports
        up to it were judged already. Without checkpoints the run retraces the seeded curve from
        the start, judged again only past that step.
        """
        record = TrialRecord.of(paused)
        steps = sorted(paused.intermediate_values)
        resumed_at = float(steps[-1]) if steps else -math.inf
        source = self._checkpoint_dir_of(trial.study, paused)
        moved = False
        if checkpoints is not None and source is not None and source.is_dir() and not checkpoints.exists():
            checkpoints.parent.mkdir(parents=True, exist_ok=True)
            shutil.move(str(source), str(checkpoints))
            moved = True
        spent_key = "samples" if self.spec.cost == "samples" else "train_seconds"
        write_trial(
            trial,
            {
                RESUMED_FROM_ATTR: paused.number,
                # What the stopped trial had spent (samples, or training seconds): with its
                # checkpoint, this trial's totals include it.
                RESUMED_AT_ATTR: float(record.attrs.get(spent_key) or 0.0) if moved else 0.0,
                "reason_resumed": (
                    f"a repeat of trial {paused.number}'s configuration, stopped at step {resumed_at:g}: "
                    + ("trains on from its checkpoint" if moved else "trains again (no checkpoint kept)")
                ),
            },
        )
        return resumed_at

    def _repeat(self, trial: optuna.Trial, twin: FrozenTrial) -> float:
        """The outcome of a trial that trained these params (or nearly: ``duplicate_tolerance``)
        with the same seed: no rerun.

        Training is seeded, so a rerun would retrace the twin's curve (or differ only by
        timing noise, which cannot make a configuration faster); samplers suggest such repeats
        often once they converge (docs/benchmarks.md counts them). The value is the twin's, so
        the sampler learns the same; ``status: duplicate`` keeps it out of the measured best, the
        scaling fits and the pruner's incumbent and prior.
        """
        status = TrialRecord.of(twin).status
        same = "same" if twin.params == trial.params else "nearly the same"
        write_status(
            trial,
            TrialStatus.DUPLICATE,
            duplicate_of=twin.number,
            reason=f"{same} configuration and seed as trial {twin.number} ({status}): its outcome, not trained again",
        )
        trial.set_constraint("diverged", float(status == "diverged"))
        trial.set_constraint("oom", float(status == "oom"))
        value = float(twin.value)  # type: ignore[arg-type]
        if self.on_event:
            self.on_event(TrialEvent("done", trial.number, status="duplicate", value=value))
        return value

    def _checkpoint_dir(self, trial: optuna.Trial) -> Path | None:
        """One directory per original trial: its retries resume from the same checkpoint."""
        return self._checkpoint_dir_of(trial.study, trial.study._storage.get_trial(trial._trial_id))

    def _checkpoint_dir_of(self, study: optuna.Study, frozen: FrozenTrial) -> Path | None:
        if not self.spec.checkpoint_dir:
            return None
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", optuna.exceptions.ExperimentalWarning)
            original = optuna.storages.RetryHeartbeatStaleTrialCallback.retried_trial_number(frozen)
        number = frozen.number if original is None else original
        return Path(self.spec.checkpoint_dir) / study.study_name / f"trial-{number}"

    def _run(self, trial: optuna.Trial, recipe: Recipe, config: EngineConfig, reporter: _Reporter) -> float:
        try:
            result = self.executor.run(recipe, config, reporter)
        except ConvtuneError:
            raise
        except Exception as exc:  # Ctrl-C and SIGTERM pass: _Leased marks the trial
            if (stop := _stop_inside(exc)) is not None:
                raise stop from None
            if _is_oom(exc):  # out of memory: infeasible, not a crash (the sampler must avoid it)
                result = RunResult(status="oom", reason=describe_error(exc))  # type: ignore[arg-type]
                return self._finish(trial, result, reporter)
            write_status(trial, TrialStatus.FAILED, error=describe_error(exc))
            if self.on_event:
                self.on_event(TrialEvent("done", trial.number, status="failed"))
            raise TrialFailed(describe_error(exc)) from exc
        if reporter.oom:
            result = dataclasses.replace(result, status="oom", reason=reporter.oom)  # type: ignore[arg-type]
        elif reporter.diverged and result.status != "diverged":
            result = dataclasses.replace(result, status="diverged", reason=reporter.diverged)  # type: ignore[arg-type]
        return self._finish(trial, result, reporter)

    def _finish(self, trial: optuna.Trial, result: RunResult, reporter: _Reporter) -> float:
        value = record_outcome(trial, self.spec, result, reporter.costs, reporter.values, reporter.pruned)
        if self.after_trial:
            self.after_trial(trial)
        if self.on_event:
            self.on_event(
                TrialEvent("done", trial.number, status=TrialRecord.of(trial).status or "", value=value)
            )
        return value


def promoted_twin(trial: optuna.Trial) -> FrozenTrial | None:
    """The paused trial ``trial`` was queued to resume (:mod:`convtune.study.promotion`), while it
    is still paused: stopped, and resumed by no other trial."""
    number = TrialRecord.of(trial).attrs.get(PROMOTED_FROM_ATTR)
    if number is None:
        return None
    storage, study_id = trial.study._storage, trial.study._study_id
    paused = storage.get_trial(storage.get_trial_id_from_study_id_trial_number(study_id, int(number)))
    if TrialRecord.of(paused).status is not TrialStatus.STOPPED:
        return None
    if paused.number in resumed_numbers(trial.study.get_trials(deepcopy=False), but=trial.number):
        return None
    return paused


def resumed_numbers(trials: list[FrozenTrial], *, but: int | None = None) -> set[int]:
    """The numbers of the stopped trials that a trial of ``trials`` (other than ``but``) resumed:
    each is that trial's past, its curve carried on by the resuming one."""
    numbers = set()
    for t in trials:
        number = TrialRecord.of(t).attrs.get(RESUMED_FROM_ATTR)
        if number is not None and t.number != but:
            numbers.add(int(number))
    return numbers


def finished_twin(trial: optuna.Trial, tolerance: float = 0.0) -> FrozenTrial | None:
    """A finished trial that trained ``trial``'s params (within ``tolerance``, see
    ``same_configuration``) with the spec's seed, if any; an exact repeat first. A stopped trial
    that a later one resumed does not count (the later one carries its curve on).

    Enqueued trials (a baseline, ``confirm`` runs, retries of a lost trial) always train: they
    were asked for by name.
    """
    frozen = trial.study._storage.get_trial(trial._trial_id)
    if is_enqueued_repeat(frozen):
        return None
    every = trial.study.get_trials(deepcopy=False)
    # A stopped trial another trial resumed is that trial's past: the twin is the resuming one.
    resumed = resumed_numbers(every, but=trial.number)
    trained = [
        other
        for other in every
        if other.state == TrialState.COMPLETE
        and other.number != trial.number
        and (record := TrialRecord.of(other)).status in TRAINED
        and record.seed is None
        and not (record.status is TrialStatus.STOPPED and other.number in resumed)
    ]
    exact = next((other for other in trained if other.params == frozen.params), None)
    if exact is not None or tolerance <= 0:
        return exact
    return next(
        (
            other
            for other in trained
            if same_configuration(frozen.params, other.params, frozen.distributions, tolerance)
        ),
        None,
    )


def same_configuration(
    params: Mapping[str, Any],
    other: Mapping[str, Any],
    distributions: Mapping[str, optuna.distributions.BaseDistribution],
    tolerance: float,
) -> bool:
    """Whether two trials' params are one configuration: the same names and choices, and every
    range within ``tolerance`` of its width (on the log scale where the range is log).

    Example:
        >>> lr = optuna.distributions.FloatDistribution(1e-4, 1e-1, log=True)
        >>> same_configuration({"peak_lr": 0.010}, {"peak_lr": 0.0103}, {"peak_lr": lr}, 0.05)
        True
    """
    if params.keys() != other.keys():
        return False
    for name, value in params.items():
        dist = distributions.get(name)
        if not isinstance(
            dist, optuna.distributions.FloatDistribution | optuna.distributions.IntDistribution
        ):
            if value != other[name]:
                return False
            continue
        low, high, a, b = float(dist.low), float(dist.high), float(value), float(other[name])
        if dist.log:
            low, high, a, b = math.log(low), math.log(high), math.log(a), math.log(b)
        if abs(a - b) > tolerance * (high - low):
            return False
    return True
