"""Tuner replays: real convtune studies whose trials replay recorded learning curves.

A recorded grid (``docs/replay.md``: a JSONL header naming the metric and the knobs, then one
line per configuration × seed with its curve) stands in for training. :class:`ReplayExecutor`
implements the :class:`convtune.study.Executor` protocol: a trial's recipe snaps to the nearest
recorded configuration, one of its recorded seeds is drawn, and the curve's evaluations are
streamed as :class:`convtune.engine.Progress` records until the study's reporter stops it, so
the shipped :class:`convtune.study.Objective` (outcome table, penalty, duplicates, pruner,
recorded attributes) is what runs. A study over a grid costs seconds instead of hours, and every
tuner sees exactly the same curves (Syne Tune's simulator backend is the model).

Example:
    >>> rows = replay("tests/data/tiny_grid.jsonl", {"target": "val_error<=0.2", "cost": "samples"},
    ...               seeds=2, budget=6, pruners=["none", "time_to_target"])   # doctest: +SKIP
    >>> print(format_table(summarize(rows)))                                     # doctest: +SKIP
"""

from __future__ import annotations

import gzip
import json
import math
import statistics
import tempfile
import warnings
from collections import Counter
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import Any

import numpy as np
import optuna

from convtune.config.recipe import Recipe
from convtune.config.record import (
    SPEC_ATTR,
    TRAINED,
    TrialRecord,
    TrialStatus,
    records,
    set_study_attr,
    write_trial,
)
from convtune.config.spec import StudySpec
from convtune.config.target import Target
from convtune.curves import time_to_target
from convtune.errors import ConfigError
from convtune.pruners import DISTRUSTED_ATTR, STOP_PROBABILITY_ATTR, GapPruner
from convtune.training.engine import EngineConfig, Progress, RunResult

GRID_VERSION = 1
NEAR_BEST = 0.10
"""A configuration is near-best when its true time-to-target is within 10% of the grid's best."""
CONFIRM_TOP = 5
"""At most this many configurations (the measured best and its runners-up) in a replay's confirm
step, as the command ``convtune study best`` suggests (``--top`` at most 5)."""

SAMPLERS = ("tpe", "random", "gp", "optuna-tpe")
_RECIPE_FIELDS = set(Recipe.model_fields) | {"optimizer", "global_batch_size"}
_NOT_FIXED = {"optimizer_name", "optimizer_params", "schedule_params", "world_size"}


# ---- the recorded grid --------------------------------------------------------------------------


@dataclass(frozen=True)
class RecordedRun:
    """One line of a grid file: one configuration trained with one seed over its planned run."""

    knobs: dict[str, Any]
    seed: int
    status: str
    horizon_samples: float
    recipe: dict[str, Any] | None
    curve: dict[str, list[Any]]

    def costs(self, cost: str) -> np.ndarray:
        """The cost at each evaluation: samples, or training seconds."""
        key = "samples" if cost == "samples" else "seconds"
        return np.asarray(self.curve[key], dtype=float)

    @property
    def metric(self) -> np.ndarray:
        return np.asarray([math.nan if v is None else v for v in self.curve["metric"]], dtype=float)


ConfigKey = tuple[Any, ...]


def near_best(truth: Mapping[ConfigKey, float]) -> set[ConfigKey]:
    """The configurations whose true time-to-target (:meth:`Grid.true_time_to_target`) is within
    :data:`NEAR_BEST` of the best.

    Example:
        >>> sorted(near_best({("a",): 100.0, ("b",): 109.0, ("c",): 120.0, ("d",): float("inf")}))
        [('a',), ('b',)]
    """
    best = min(truth.values(), default=math.inf)
    return {k for k, t in truth.items() if math.isfinite(t) and t <= best * (1 + NEAR_BEST)}


PrunerFactory = Callable[["ReplayExecutor", StudySpec], optuna.pruners.BasePruner]
"""Builds a pruner for one replayed study from its executor and spec: a pruner of your own, or a
benchmark's oracle (the executor's ``last`` names the configuration and recorded seed of the
run in progress, so an oracle can read the curve it will report)."""


@dataclass
class Grid:
    """A recorded grid: its header and runs, grouped by configuration (the knobs' values)."""

    header: dict[str, Any]
    runs: list[RecordedRun]
    configurations: dict[ConfigKey, list[RecordedRun]] = field(init=False)

    def __post_init__(self) -> None:
        if self.header.get("convtune_grid") != GRID_VERSION:
            raise ConfigError(
                f"not a convtune grid v{GRID_VERSION} header: {str(self.header)[:80]}",
                where="grid line 1",
                fix="see docs/replay.md for the format",
            )
        if not self.runs:
            raise ConfigError("the grid holds no recorded runs", where="grid")
        self.configurations = {}
        labelled: dict[ConfigKey, set[str]] = {}
        for run in self.runs:
            key = self.key(run.knobs)
            self.configurations.setdefault(key, []).append(run)
            labelled.setdefault(key, set()).add(json.dumps([run.knobs.get(n) for n in self.labels]))
        if any(len(v) > 1 for v in labelled.values()):
            raise ConfigError(
                f"knobs {', '.join(self.labels)} are not recipe fields and do not follow from those that are",
                where="grid header: knobs",
                fix="record every knob that varies under the recipe's names",
            )
        for runs in self.configurations.values():
            runs.sort(key=lambda r: r.seed)

    @property
    def workload(self) -> str:
        return str(self.header.get("workload", "grid"))

    @property
    def metric(self) -> str:
        return str(self.header["metric"])

    @property
    def knobs(self) -> dict[str, dict[str, Any]]:
        """The knobs a configuration is told by: the header's, less its labels (see ``labels``)."""
        return {k: v for k, v in self.header.get("knobs", {}).items() if k not in self.labels}

    @cached_property
    def labels(self) -> tuple[str, ...]:
        """Header knobs a recipe does not carry (e.g. an LR level next to the LR it names).

        They only label configurations, so each must follow from the recipe's knobs.
        """
        return tuple(
            name
            for name in self.header.get("knobs", {})
            if name not in _RECIPE_FIELDS and not _is_optimizer_or_schedule_param(name)
        )

    def key(self, knobs: Mapping[str, Any]) -> ConfigKey:
        try:
            return tuple(knobs[name] for name in self.knobs)
        except KeyError as exc:
            raise ConfigError(f"a recorded run lacks knob {exc.args[0]!r}", where="grid") from None

    def values(self, name: str) -> list[Any]:
        """The recorded values of one knob, sorted."""
        return sorted({run.knobs[name] for run in self.runs}, key=lambda v: (str(type(v)), v))

    def snap(self, knobs: Mapping[str, Any]) -> ConfigKey:
        """The recorded configuration a suggestion maps to (the header's ``snap: nearest``).

        Categorical knobs must match (where no recorded configuration has the suggested
        combination, the fewest differing ones win); numeric knobs go to the nearest recorded
        value, on the log scale where the knob is ``log``, each knob's distance measured as a
        share of its recorded range. Ties break by the recorded order, so a snap is deterministic.
        """
        wanted = [knobs.get(name) for name in self.knobs]
        best: tuple[float, float] | None = None
        chosen: ConfigKey | None = None
        for key in self.configurations:
            mismatched, distance = 0, 0.0
            for scale, value, recorded in zip(self._scales.values(), wanted, key, strict=True):
                if scale is None or value is None:
                    mismatched += value != recorded
                else:
                    distance += abs(scale(float(value)) - scale(float(recorded)))
            score = (float(mismatched), distance)
            if best is None or score < best:
                best, chosen = score, key
        assert chosen is not None
        return chosen

    @cached_property
    def _scales(self) -> dict[str, Callable[[float], float] | None]:
        """Per knob, the map to the scale snapping measures on (``None``: categorical): log where
        the knob is log, divided by the recorded range so every knob weighs alike."""
        out: dict[str, Callable[[float], float] | None] = {}
        for name, info in self.knobs.items():
            if info.get("type") == "categorical":
                out[name] = None
                continue
            values = [float(v) for v in self.values(name)]
            log = bool(info.get("log")) and min(values) > 0
            lo, hi = (math.log(min(values)), math.log(max(values))) if log else (min(values), max(values))
            width = hi - lo if hi > lo else 1.0
            if log:
                out[name] = lambda v, w=width: math.log(v) / w if v > 0 else -math.inf
            else:
                out[name] = lambda v, w=width: v / w
        return out

    def knobs_of(self, recipe: Recipe) -> dict[str, Any]:
        """The grid knobs' values in a trial's recipe (conditional parameters included)."""
        data = recipe.to_dict()
        data["global_batch_size"] = recipe.effective_batch_size
        out = {}
        for name in self.knobs:
            if name in data:
                out[name] = data[name]
            elif name in data.get("optimizer_params", {}):
                out[name] = data["optimizer_params"][name]
            elif name in data.get("schedule_params", {}):
                out[name] = data["schedule_params"][name]
            else:
                raise ConfigError(
                    f"grid knob {name!r} is not a recipe field or optimizer/schedule parameter",
                    where="grid header: knobs",
                    fix="record knobs under the recipe's names",
                )
        return out

    def full_run(self, cost: str) -> float:
        """The cost of one planned run (the median over complete runs): the unit of a budget."""
        complete = [r for r in self.runs if r.status == "complete"] or self.runs
        if cost == "samples":
            return float(statistics.median(r.horizon_samples for r in complete))
        return float(statistics.median(float(r.costs(cost)[-1]) for r in complete))

    def true_time_to_target(self, target: Target, cost: str) -> dict[ConfigKey, float]:
        """Each configuration's time-to-target: the median over its seeds (``inf``: not reached)."""
        out = {}
        for key, runs in self.configurations.items():
            times = [time_to_target(r.costs(cost), r.metric, target) for r in runs]
            out[key] = float(np.median(times))
        return out

    def search_space(self) -> dict[str, Any]:
        """A convtune search space over the recorded knobs (what a spec without ``space`` gets).

        Categorical knobs become choices, integer knobs choices of their recorded values, float
        knobs ranges over the recorded values (log where the header says so); a float knob whose
        recorded values differ by optimizer (each optimizer's own LR grid) becomes a range per
        optimizer. Recipe fields outside the knobs are fixed at their most common recorded value.
        """
        space: dict[str, Any] = {}
        for name, info in self.knobs.items():
            if name not in _RECIPE_FIELDS:
                raise ConfigError(
                    f"cannot derive a search space over knob {name!r} (an optimizer or schedule parameter)",
                    where="grid header: knobs",
                    fix="give the spec a space",
                )
            values = self.values(name)
            if info.get("type") == "categorical" or info.get("type") == "int":
                space[name] = {"choices": values}
            else:
                space[name] = _range(values, bool(info.get("log")))
        optimizer = space.get("optimizer")
        if isinstance(optimizer, dict) and "peak_lr" in space and "peak_lr" in self.knobs:
            per = {
                choice: sorted({r.knobs["peak_lr"] for r in self.runs if r.knobs["optimizer"] == choice})
                for choice in optimizer["choices"]
            }
            if len({tuple(v) for v in per.values()}) > 1:
                log = bool(self.knobs["peak_lr"].get("log"))
                for choice, values in per.items():
                    optimizer[choice] = {"peak_lr": _range(values, log)}
                del space["peak_lr"]
        recipes = [r.recipe for r in self.runs if r.recipe]
        for name in sorted(
            set(Recipe.model_fields) - _NOT_FIXED - set(space) - set(self.knobs) - set(self.labels)
        ):
            if name == "horizon_samples":
                space[name] = int(statistics.median(r.horizon_samples for r in self.runs))
                continue
            seen = [json.dumps(r.get(name)) for r in recipes if r.get(name) is not None]
            if seen:
                space[name] = json.loads(max(set(seen), key=seen.count))
        return space


def _is_optimizer_or_schedule_param(name: str) -> bool:
    from convtune.config.optim import OPTIMIZERS
    from convtune.config.schedules import SCHEDULES

    return any(name in entry.defaults for entry in (*OPTIMIZERS.values(), *SCHEDULES.values()))


def _range(values: Sequence[Any], log: bool) -> dict[str, Any]:
    low, high = min(values), max(values)
    if low == high:
        return {"choices": [low]}
    return {"low": float(low), "high": float(high), "log": log}


def load_grid(source: str | Path | Grid | Iterable[Mapping[str, Any]]) -> Grid:
    """Read a grid file (``.jsonl``, or ``.jsonl.gz``: gzip by its suffix), or wrap its lines."""
    if isinstance(source, Grid):
        return source
    if isinstance(source, str | Path):
        path = Path(source)
        if not path.is_file():
            raise ConfigError(f"grid file {path} not found", where=str(path))
        opener: Callable[..., Any] = gzip.open if path.suffix == ".gz" else open
        with opener(path, "rt") as handle:
            lines = [json.loads(line) for line in handle if line.strip()]
    else:
        lines = [dict(line) for line in source]
    if not lines:
        raise ConfigError("the grid is empty", where="grid")
    header, *rest = lines
    runs = [
        RecordedRun(
            knobs=dict(line["knobs"]),
            seed=int(line.get("seed", 0)),
            status=str(line.get("status", "complete")),
            horizon_samples=float(line.get("horizon_samples") or line["curve"]["samples"][-1]),
            recipe=line.get("recipe"),
            curve=dict(line["curve"]),
        )
        for line in rest
        if line.get("curve") and line["curve"].get("samples")
    ]
    return Grid(header, runs)


# ---- the executor -------------------------------------------------------------------------------


class ReplayExecutor:
    """An :class:`convtune.study.Executor` that replays recorded curves instead of training.

    Each ``run`` snaps the recipe to the nearest recorded configuration and draws one of its
    recorded seeds (from ``seed``, so a replay is reproducible; with ``fresh_seeds`` one of those
    drawn least often for it so far, never one in ``confirmed_seeds[key]`` while another is
    recorded), then streams the recorded
    evaluations as :class:`Progress` records: the caller's stop decision ends the run
    (``stopped``), so does ``config.max_cost`` (``budget``, at the first evaluation at or past
    it) and a non-finite metric or the end of a diverged run (``diverged``). ``last`` holds the
    configuration and recorded seed of the latest run.

    With ``config.checkpoint_dir`` set it checkpoints as the engine does where it matters: a run
    the caller stops leaves its configuration, recorded seed and position there, and a run
    started on that directory resumes it, reporting the curve so far again and going on from
    the stop (a repeat of a stopped configuration, :class:`convtune.study.Objective`).
    """

    def __init__(self, grid: str | Path | Grid, *, seed: int = 0) -> None:
        self.grid = load_grid(grid)
        self._rng = np.random.default_rng(seed)
        self.last: tuple[ConfigKey, int] | None = None
        self._drawn: dict[ConfigKey, Counter[int]] = {}
        # Off: any recorded seed, drawn with replacement (what every stored replay row used).
        # On (a replay's confirm step): one of the seeds drawn least often for the configuration
        # so far, as a repeat on a fresh seed trains another curve, not the same one again.
        self.fresh_seeds = False
        # The seeds of the search runs a confirm step re-runs: a study confirms on seeds after
        # the spec's, so a confirm run never retraces the run it confirms (a lucky one, often).
        self.confirmed_seeds: dict[ConfigKey, set[int]] = {}

    def run(self, recipe: Recipe, config: EngineConfig, on_eval: Callable[[Progress], bool]) -> RunResult:
        paused = _load_replay_checkpoint(config.checkpoint_dir)
        if paused is not None:
            key = tuple(paused["key"])
            run = next(r for r in self.grid.configurations[key] if r.seed == paused["seed"])
        else:
            key = self.grid.snap(self.grid.knobs_of(recipe))
            runs = self.grid.configurations[key]
            if self.fresh_seeds:
                others = [r for r in runs if r.seed not in self.confirmed_seeds.get(key, ())]
                runs = others or runs
                drawn = self._drawn.get(key, Counter())
                fewest = min(drawn[r.seed] for r in runs)
                runs = [r for r in runs if drawn[r.seed] == fewest]
            run = runs[int(self._rng.integers(len(runs)))]
        # Resumes count too: a configuration's paused run is one of its seeds already trained.
        self._drawn.setdefault(key, Counter())[run.seed] += 1
        self.last = (key, run.seed)
        curve, metric = run.curve, run.metric
        costs = run.costs(config.cost)
        n = len(curve["samples"])
        lrs = curve.get("lr") or [math.nan] * n
        steps = curve.get("step") or [0] * n
        seconds = curve.get("seconds") or [0.0] * n
        result = RunResult(status="finished", reason="planned run done", backend="replay")
        for i in range(n):
            record = Progress(
                step=int(steps[i]),
                samples=int(curve["samples"][i]),
                seconds=float(seconds[i]),
                cost=float(costs[i]),
                train_loss=math.nan,
                metrics={self.grid.metric: float(metric[i])},
                lr=float(lrs[i]) if lrs[i] is not None else math.nan,
                loss_scale=1.0,
                skipped_steps=0,
            )
            result.history.append(record)
            stop = bool(on_eval(record))
            if not math.isfinite(metric[i]):
                result.status, result.reason = "diverged", f"non-finite {self.grid.metric} (recorded)"
                break
            if stop:
                result.status, result.reason = "stopped", "stopped by the caller"
                if config.checkpoint_dir:
                    _save_replay_checkpoint(config.checkpoint_dir, key, run.seed, i + 1)
                break
            if record.cost >= config.max_cost:
                result.status, result.reason = "budget", f"max_cost {config.max_cost:g} reached"
                break
        else:
            if run.status == "diverged":
                result.status, result.reason = "diverged", "diverged (recorded)"
        last = result.history[-1]
        result.steps, result.samples, result.seconds = last.step, last.samples, last.seconds
        return result

    def close(self) -> None:
        """Nothing to release: the grid stays loaded for the next study."""


REPLAY_CHECKPOINT = "replay_checkpoint.json"
"""The replay's checkpoint file: the paused run's configuration, recorded seed and evaluations."""


def _save_replay_checkpoint(directory: str, key: ConfigKey, seed: int, evals: int) -> None:
    path = Path(directory)
    path.mkdir(parents=True, exist_ok=True)
    (path / REPLAY_CHECKPOINT).write_text(json.dumps({"key": list(key), "seed": seed, "evals": evals}))


def _load_replay_checkpoint(directory: str | None) -> dict[str, Any] | None:
    if not directory:
        return None
    path = Path(directory) / REPLAY_CHECKPOINT
    return json.loads(path.read_text()) if path.is_file() else None


def parse_pruner(name: str) -> tuple[str, dict[str, float]]:
    """A replay's pruner name split into the pruner and its options.

    Example:
        >>> parse_pruner("time_to_target:epsilon=0.03+rung_ratio=4")
        ('time_to_target', {'epsilon': 0.03, 'rung_ratio': 4.0})
    """
    base, _, options = name.partition(":")
    pairs = (item.partition("=") for item in options.split("+") if item)
    return base, {key: float(value) for key, _, value in pairs}


def is_factory_ref(name: str) -> bool:
    """Whether a replay's pruner name is a :data:`PrunerFactory` reference, ``file.py:function``
    or ``package.module:function``, rather than a built-in with options.

    Example:
        >>> is_factory_ref("mypruners.py:make"), is_factory_ref("time_to_target:epsilon=0.03")
        (True, False)
    """
    base, sep, attr = name.partition(":")
    return bool(sep) and "." in base and attr.isidentifier()


def load_pruner_factory(ref: str) -> PrunerFactory:
    """The :data:`PrunerFactory` that ``file.py:function`` or ``package.module:function`` names
    (resolved as a workload reference is; a relative file from the working directory)."""
    from convtune.errors import WorkloadError
    from convtune.workloads import resolve_factory

    try:
        return resolve_factory(ref, base_dir=Path.cwd())
    except WorkloadError as exc:
        raise ConfigError(
            exc.message,
            where="--pruner",
            fix="name a pruner factory as file.py:function or package.module:function",
        ) from None


def make_replay_pruner(name: str, spec: StudySpec, n_evals: int) -> optuna.pruners.BasePruner:
    """The pruner a replay names: a spec's pruner (``time_to_target``, ``none``, …) as a study
    would build it, ``time_to_target:epsilon=0.03`` for an option of convtune's pruner, or an
    Optuna baseline (``median``, ``sha``, ``hyperband``) judged on the distance to the target.
    """
    from convtune.pruners import TimeToTargetPruner
    from convtune.study.objective import make_pruner

    base, options = parse_pruner(name)
    if base == "hyperband":  # as ``pruner: hyperband`` builds it, with the grid's evaluations
        return GapPruner.hyperband(spec.target_spec, max(1, n_evals))
    if base == "sha":
        return GapPruner(optuna.pruners.SuccessiveHalvingPruner(), spec.target_spec)
    if options:
        if not base.startswith("time_to_target"):
            raise ConfigError(f"pruner {base!r} takes no options", where="--pruner")
        return TimeToTargetPruner.for_spec(spec.model_copy(update={"pruner": base}), **options)
    try:
        return make_pruner(spec.model_copy(update={"pruner": base}))
    except Exception as exc:
        raise ConfigError(f"unknown pruner {name!r}", where="--pruner") from exc


def make_replay_sampler(name: str, spec: StudySpec, seed: int) -> optuna.samplers.BaseSampler:
    """``tpe``/``random``/``gp`` as a convtune study builds them; ``optuna-tpe``: Optuna's defaults."""
    from convtune.study.objective import make_sampler

    if name == "optuna-tpe":
        return optuna.samplers.TPESampler(seed=seed)
    if name not in SAMPLERS:
        raise ConfigError(
            f"unknown sampler {name!r}", where="--sampler", fix=f"use one of {', '.join(SAMPLERS)}"
        )
    return make_sampler(spec.model_copy(update={"sampler": name, "seed": seed}))


# ---- one replayed study, and many -------------------------------------------------------------


def replay_spec(grid: Grid, spec: StudySpec | Mapping[str, Any] | None = None) -> StudySpec:
    """The spec a replay runs: ``spec`` with the grid's workload, and a search space derived from
    the grid's knobs when it has none; ``cost`` defaults to samples, ``max_cost`` to the planned
    run. A spec's target must name the grid's metric.
    """
    if isinstance(spec, StudySpec):
        data = spec.to_dict()
    else:
        data = dict(spec or {})
    data.setdefault("workload", grid.workload)
    data.setdefault("cost", "samples")
    if not data.get("space"):
        data["space"] = grid.search_space()
    if "target" not in data:
        raise ConfigError(
            "the replay spec has no target", where="spec", fix=f"set target: '{grid.metric}<=…'"
        )
    out = StudySpec.from_dict(data, where="replay spec")
    if out.target_spec.metric != grid.metric:
        raise ConfigError(
            f"the target's metric {out.target_spec.metric!r} is not the grid's {grid.metric!r}",
            where="spec: target",
        )
    return out


def end_kind(record: TrialRecord, *, first_success: bool) -> str:
    """How a replayed trial ended, for ``cost_by_end``: its status, or for a stopped trial the
    stop's reason (``stopped: cannot-beat-incumbent``), marked ``(before any reached)`` when no
    earlier trial had reached the target (a pruner then has only ``max_cost`` to judge by).

    Example:
        >>> from convtune.config.record import TrialRecord, TrialStatus
        >>> record = TrialRecord(number=0, state="COMPLETE", value=None, params={}, status=TrialStatus.BUDGET)
        >>> end_kind(record, first_success=True)
        'budget (before any reached)'
    """
    status = record.status.value if record.status is not None else "unknown"
    if record.status is TrialStatus.STOPPED and record.reason:
        status = "stopped: " + str(record.reason).removeprefix("pruned: ")
    return status + (" (before any reached)" if first_success else "")


def replay_study(
    grid: Grid,
    spec: StudySpec,
    *,
    seed: int,
    budget: float,
    pruner: str | PrunerFactory = "time_to_target",
    sampler: str = "tpe",
    max_trials: int | None = None,
    resume: bool = True,
    confirm_seeds: int = 0,
    confirm_rounds: int = 1,
    confirm_stopped: int = 0,
    promote: float | None = None,
    audit: bool = False,
) -> dict[str, Any]:
    """Run one seeded study over ``grid`` until ``budget`` full runs are spent; one result row.

    The study lives in memory and is named by its seed (``replay-seed<N>``), so Hyperband's
    brackets, which follow the study name, are seeded too. The row holds ``hit`` (the measured
    best is a configuration within 10% of the grid's best true time-to-target), ``cost_to_10``
    (full runs spent when the pick became, for good, such a configuration; ``inf`` on a miss),
    ``stopped_share`` (of trained trials), ``near_best_stopped_share`` (of trained trials of
    near-best configurations) and ``near_best_configurations`` (each near-best configuration
    trained, as a JSON list of its knobs: the reasons its trials were stopped),
    ``near_best_stopped_runs`` (per stopped trial of a near-best configuration, its
    configuration as in ``near_best_configurations``, its reason and the time-to-target of the
    recorded run it replayed over the best's, ``None`` if that run never reaches: a
    configuration is near-best by its seeds' median, a stop judges one run) and
    ``cost_by_end`` (full runs spent until ``cost_to_10``, or in all on a miss, by how each
    trial ended: :func:`end_kind`). With ``resume``
    (the default) stopped trials keep a checkpoint and a repeat of a stopped configuration
    resumes it, as in a study with ``checkpoint_dir``:
    only what it trains past the stop is spent again; ``resumed`` counts such trials.

    ``pruner`` is a name (:func:`make_replay_pruner`), or a :data:`PrunerFactory` (or its
    reference, ``file.py:function``), called once with the study's executor and spec, to replay
    a pruner of your own; the row's ``pruner`` is then the factory's ``__name__`` (or the
    reference).

    With ``confirm_seeds`` > 0 the study then does what ``convtune study confirm --measured``
    does: its measured best and runners-up (at most :data:`CONFIRM_TOP` configurations) run
    ``confirm_seeds`` more times each, unpruned, on the seeds the study drew least often for
    them; the row adds ``confirm_hit`` (the product's confirmed pick,
    :func:`convtune.scaling.best_confirmed`, or the measured one when none is confirmed, is
    near-best), ``confirm_spent`` (full runs the confirm runs cost) and ``confirm_pick_ratio``.
    With ``promote`` (η, or the pruner name's option ``promote=η``, e.g. ``median:promote=3``)
    the study resumes a paused trial before each new one where
    :func:`convtune.study.promotion.promotion_candidate` names one (asynchronous successive
    halving's promotions); the row adds ``promoted`` (such trials) and
    ``near_best_paused_for_good`` (near-best configurations whose last trial stayed stopped).
    ``confirm_rounds`` > 1 does what ``--rounds`` adds: after each round, the configurations
    measured within 20% of the confirmed fastest's mean and not confirmed yet
    (:func:`convtune.report.best.confirm_candidates`) are confirmed too; the row then also
    holds the first round's ``confirm_first_hit``, ``confirm_first_spent`` and
    ``confirm_first_pick_ratio`` (the same study, so the rounds compare paired) and
    ``confirm_rounds_run``. ``confirm_stopped`` lets each later round take up to that many configurations
    stopped as slower than a measured best the round withdrew (``confirm_candidates(stopped=N)``,
    an option under test).
    With ``audit``, the row adds ``audit``: the study's own forecasts checked against the trials
    whose outcome is known (:func:`convtune.report.forecasts.audit_forecasts`, before any confirm
    run), with the study's prior and without it (``prior_trials=0``): per variant, the
    probability each reaching check gave its true crossing (``probability_by_truth``; below
    the pruner's ε, the pruner could have stopped it) and of reaching within the run at all
    (``probability``; their ratio is where the crossing fell given that it came), whether it was
    of a near-best configuration, and the share of the run it was cut at.
    """
    with tempfile.TemporaryDirectory(prefix="convtune-replay-") as checkpoints:
        if resume and not spec.checkpoint_dir:
            spec = spec.model_copy(update={"checkpoint_dir": checkpoints})
        return _replay_study(
            grid,
            spec,
            seed=seed,
            budget=budget,
            pruner=pruner,
            sampler=sampler,
            max_trials=max_trials,
            confirm_seeds=confirm_seeds,
            confirm_rounds=confirm_rounds,
            confirm_stopped=confirm_stopped,
            promote=promote,
            audit=audit,
        )


def _run_ratio(grid: Grid, key: ConfigKey, seed: Any, target: Target, cost: str, best: float) -> float | None:
    """The time-to-target of the recorded run a trial replayed (its configuration's run of
    ``seed``) over the grid's best; ``None`` where that run never reaches the target or its seed
    is unknown."""
    run = next(
        (r for r in grid.configurations.get(key, ()) if seed is not None and r.seed == int(seed)), None
    )
    if run is None or best <= 0:
        return None
    time = time_to_target(run.costs(cost), run.metric, target)
    return float(time / best) if math.isfinite(time) else None


def split_option(pruner: str, key: str) -> tuple[str, float | None]:
    """A replay's pruner name without its study-level option ``key`` (``promote=η``,
    ``after_reached=1``), and that option's value (None without it).

    Example:
        >>> split_option("median:promote=3", "promote")
        ('median', 3.0)
        >>> split_option("time_to_target:epsilon=0.01+after_reached=1", "after_reached")
        ('time_to_target:epsilon=0.01', 1.0)
    """
    base, options = parse_pruner(pruner)
    if key not in options:
        return pruner, None
    rest = [item for item in pruner.partition(":")[2].split("+") if item and not item.startswith(f"{key}=")]
    return base + (":" + "+".join(rest) if rest else ""), options[key]


STOP_VALUES = ("after_reached", "withheld", "censored_median")
"""The spec's ``stop_value`` choices a replay's pruner name may carry as ``value=1``."""


def split_stop_value(pruner: str) -> tuple[str, str | None]:
    """A replay's pruner name without its ``stop_value`` option, and that value (None: the
    spec's own).

    Example:
        >>> split_stop_value("median:withheld=1"), split_stop_value("median")
        (('median', 'withheld'), ('median', None))
    """
    chosen = None
    for value in STOP_VALUES:
        pruner, on = split_option(pruner, value)
        if on:
            chosen = value
    return pruner, chosen


def _replay_study(
    grid: Grid,
    spec: StudySpec,
    *,
    seed: int,
    budget: float,
    pruner: str | PrunerFactory,
    sampler: str,
    max_trials: int | None,
    confirm_seeds: int = 0,
    confirm_rounds: int = 1,
    confirm_stopped: int = 0,
    promote: float | None = None,
    audit: bool = False,
) -> dict[str, Any]:
    from convtune.study.objective import PROMOTED_FROM_ATTR, RESUMED_AT_ATTR, RESUMED_FROM_ATTR, Objective
    from convtune.study.promotion import promote as promote_paused

    target = spec.target_spec
    full_run = grid.full_run(spec.cost)
    truth = grid.true_time_to_target(target, spec.cost)
    best = min(truth.values())
    near_best_keys = near_best(truth)
    n_evals = int(statistics.median(len(r.curve["samples"]) for r in grid.runs))
    if not math.isfinite(spec.max_cost):
        spec = spec.model_copy(update={"max_cost": float(full_run)})
    pruner_name = pruner if isinstance(pruner, str) else getattr(pruner, "__name__", repr(pruner))
    if isinstance(pruner, str) and is_factory_ref(pruner):
        pruner = load_pruner_factory(pruner)
    elif isinstance(pruner, str):
        pruner, named_eta = split_option(pruner, "promote")
        promote = promote if promote is not None else named_eta
        pruner, stop_value = split_stop_value(pruner)
        if stop_value is not None:  # the study's stop_value, named with the pruner: one method
            spec = spec.model_copy(update={"stop_value": stop_value})
    executor = ReplayExecutor(grid, seed=seed)
    objective = Objective(spec, executor=executor)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", optuna.exceptions.ExperimentalWarning)
        study = optuna.create_study(
            study_name=f"replay-seed{seed}",
            direction="minimize",
            sampler=make_replay_sampler(sampler, spec, seed),
            pruner=make_replay_pruner(pruner, spec, n_evals)
            if isinstance(pruner, str)
            else pruner(executor, spec),
        )
    set_study_attr(study, SPEC_ATTR, spec.to_dict())
    configs: dict[int, ConfigKey] = {}

    def tracked(trial: optuna.Trial) -> float:
        executor.last = None
        value = objective(trial)
        if executor.last is not None:
            configs[trial.number] = executor.last[0]
            write_trial(trial, {"replay_seed": executor.last[1]})
        else:  # a duplicate: the configuration its twin trained
            twin = TrialRecord.of(trial).attrs.get("duplicate_of")
            if twin is not None and twin in configs:
                configs[trial.number] = configs[twin]
        return value

    def stored(number: int) -> optuna.trial.FrozenTrial:
        # One trial alone (``study.trials`` deep-copies them all: quadratic in a study).
        return study._storage.get_trial(
            study._storage.get_trial_id_from_study_id_trial_number(study._study_id, number)
        )

    spent, cost_to_10 = 0.0, math.inf
    limit = max_trials if max_trials is not None else int(50 * budget) + 50
    events: list[tuple[float, bool]] = []
    measured: tuple[float, int] | None = None
    n_trials = 0

    def run_one(number: int) -> tuple[optuna.trial.FrozenTrial, float]:
        """Run the next trial (it will be number ``number``); it and the full runs it spent."""
        study.optimize(tracked, n_trials=1, catch=(Exception,))
        trial = stored(number)
        record = TrialRecord.of(trial)
        if record.status not in TRAINED:
            return trial, 0.0
        total = float(record.attrs.get("samples" if spec.cost == "samples" else "train_seconds") or 0.0)
        # A resumed trial's totals include what the stopped trial it continues had spent.
        return trial, (total - float(record.attrs.get(RESUMED_AT_ATTR) or 0.0)) / full_run

    ends: list[tuple[float, str]] = []  # per trial: full runs spent, how it ended
    while spent < budget and n_trials < limit:
        if promote is not None:
            promote_paused(study, target, promote)
        trial, cost = run_one(n_trials)
        n_trials += 1
        spent += cost
        record = TrialRecord.of(trial)
        ends.append((cost, end_kind(record, first_success=measured is None)))
        if record.reached and trial.value is not None:
            if measured is None or trial.value < measured[0]:
                measured = (trial.value, trial.number)
        events.append((spent, measured is not None and configs.get(measured[1]) in near_best_keys))
    hit = bool(events and events[-1][1])
    if hit:
        for spent_then, within in reversed(events):
            if not within:
                break
            cost_to_10 = spent_then
    # What the study spent until its cost-to-10% (all of it on a miss), by how trials ended.
    cost_by_end: dict[str, float] = {}
    for (cost, kind), (spent_then, _) in zip(ends, events, strict=True):
        if spent_then - cost >= cost_to_10:
            break
        if cost > 0:
            cost_by_end[kind] = cost_by_end.get(kind, 0.0) + cost
    audited = _audit(study, spec, configs, near_best_keys) if audit else None
    trials = records(study)
    trained = [t for t in trials if t.status in TRAINED]
    stopped = [t for t in trained if t.status is TrialStatus.STOPPED]
    near = [t for t in trained if configs.get(t.number) in near_best_keys]
    near_stopped = [t for t in near if t.status is TrialStatus.STOPPED]
    # Per near-best configuration trained, why its trials were stopped (the promise is
    # about configurations: repeats of one configuration are one chance to lose it).
    near_configs: dict[str, list[str]] = {json.dumps(list(configs[t.number])): [] for t in near}
    for t in near_stopped:
        near_configs[json.dumps(list(configs[t.number]))].append(str(t.reason))
    # A near-best configuration is paused for good when its last trial stayed stopped.
    last_of: dict[ConfigKey, TrialRecord] = {}
    for t in near:
        last_of[configs[t.number]] = t
    paused_for_good = sum(1 for t in last_of.values() if t.status is TrialStatus.STOPPED)
    # A near-best configuration's time-to-target is its seeds' median, but a stop judges one run:
    # a run of a near-best configuration that never reaches (one unlucky seed) is stopped rightly.
    near_stopped_runs = [
        [
            json.dumps(list(configs[t.number])),
            str(t.reason),
            _run_ratio(grid, configs[t.number], t.attrs.get("replay_seed"), target, spec.cost, best),
        ]
        for t in near_stopped
    ]
    pick = configs.get(measured[1]) if measured else None
    confirmed: dict[str, Any] = {}
    if confirm_seeds > 0:
        from convtune.report.best import SLOWER_THAN_MEASURED_BEST, confirm_candidates, runners_up
        from convtune.scaling import best_confirmed, confirmations, enqueue_measured_confirmations

        confirm_pick, confirm_spent = pick, 0.0
        by_round: list[tuple[bool, float, float]] = []  # per round: hit, spent so far, pick ratio
        from_stopped: set[ConfigKey | None] = set()  # configurations confirmed after a stop
        if measured is not None:
            best_trial = stored(measured[1])
            candidates = [best_trial, *runners_up(study, best_trial)]
            study.pruner = optuna.pruners.NopPruner()  # confirm runs are unpruned, as the CLI's
            executor.fresh_seeds = True
            seen: set[ConfigKey | None] = set()
            for _ in range(confirm_rounds):
                # Trials whose params differ can replay one recorded configuration (the grid snaps
                # them to it): one place each, as a study would confirm a configuration once.
                chosen = []
                for t in candidates:
                    if configs.get(t.number) not in seen and len(chosen) < CONFIRM_TOP:
                        seen.add(configs.get(t.number))
                        chosen.append(t)
                if not chosen:
                    break
                from_stopped.update(
                    configs.get(t.number)
                    for t in chosen
                    if TrialRecord.of(t).reason == SLOWER_THAN_MEASURED_BEST
                )
                for t in chosen:
                    run_seed = TrialRecord.of(t).attrs.get("replay_seed")
                    if configs.get(t.number) is not None and run_seed is not None:
                        executor.confirmed_seeds.setdefault(configs[t.number], set()).add(int(run_seed))
                plans = enqueue_measured_confirmations(study, chosen, spec, confirm_seeds)
                for _ in range(len(plans) * confirm_seeds):
                    confirm_spent += run_one(n_trials)[1]
                    n_trials += 1
                done = best_confirmed(study)
                if done is not None:
                    confirm_pick = configs.get(done["trials"][0], pick)
                by_round.append(
                    (
                        confirm_pick in near_best_keys,
                        confirm_spent,
                        truth[confirm_pick] / best if confirm_pick is not None and best > 0 else math.inf,
                    )
                )
                candidates = confirm_candidates(study, confirmations(study), stopped=confirm_stopped)
        confirmed = {
            "confirm_hit": confirm_pick in near_best_keys,
            "confirm_spent": confirm_spent,
            "confirm_pick_ratio": truth[confirm_pick] / best
            if confirm_pick is not None and best > 0
            else math.inf,
            "confirm_stopped_taken": len(from_stopped),
            "confirm_pick_was_stopped": confirm_pick is not None and confirm_pick in from_stopped,
        }
        if confirm_rounds > 1:
            # The first round alone, from the same study: a paired comparison of the rounds.
            first = (
                by_round[0] if by_round else (confirmed["confirm_hit"], 0.0, confirmed["confirm_pick_ratio"])
            )
            confirmed.update(
                confirm_rounds=confirm_rounds,
                confirm_rounds_run=len(by_round),
                confirm_first_hit=first[0],
                confirm_first_spent=first[1],
                confirm_first_pick_ratio=first[2],
            )
    return {
        "grid": grid.workload,
        "target": spec.target,
        "pruner": pruner_name,
        "sampler": sampler,
        "seed": seed,
        "budget": budget,
        "hit": hit,
        "cost_to_10": cost_to_10,
        "spent": spent,
        "trials": len(trials),
        "trained": len(trained),
        "stopped_share": len(stopped) / len(trained) if trained else 0.0,
        "near_best_trials": len(near),
        "near_best_stopped_share": len(near_stopped) / len(near) if near else 0.0,
        "pick_ratio": truth[pick] / best if pick is not None and best > 0 else math.inf,
        "resumed": sum(1 for t in trials if t.attrs.get(RESUMED_FROM_ATTR) is not None),
        "promoted": sum(1 for t in trials if t.attrs.get(PROMOTED_FROM_ATTR) is not None),
        # Trials ``self_check`` kept from a forecast stop (the study's forecasts were distrusted).
        "forecast_distrusted": sum(1 for t in trials if DISTRUSTED_ATTR in t.attrs),
        "near_best_paused_for_good": paused_for_good,
        "stop_probabilities": [t.attrs.get(STOP_PROBABILITY_ATTR) for t in stopped],
        "stop_reasons": [t.reason for t in stopped],
        "near_best_stop_reasons": [t.reason for t in near_stopped],
        "near_best_configurations": near_configs,
        "near_best_stopped_runs": near_stopped_runs,
        "cost_by_end": cost_by_end,
        **({"audit": audited} if audited is not None else {}),
        **confirmed,
    }


def _audit(
    study: optuna.Study, spec: StudySpec, configs: Mapping[int, ConfigKey], near_best_keys: set[ConfigKey]
) -> dict[str, Any]:
    """What ``replay_study(audit=True)`` records: the forecasts' check, with and without the prior."""
    from convtune.report.forecasts import audit_forecasts

    out: dict[str, Any] = {}
    no_prior = spec.model_copy(
        update={"pruner": "time_to_target", "pruner_options": {**spec.pruner_options, "prior_trials": 0}}
    )
    for name, variant in (("prior", spec), ("no_prior", no_prior)):
        result = audit_forecasts(study, variant)
        reached = [c for c in result.checks if c.reached]
        out[name] = {
            "epsilon": result.epsilon,
            "checked": result.checked,
            "not_reached_checks": len(result.checks) - len(reached),
            "called": sum(c.called_not_within for c in result.checks if not c.reached),
            "probability_by_truth": [round(c.probability_by_truth, 5) for c in reached],
            "probability": [round(c.forecast.probability, 5) for c in reached],
            "near_best": [configs.get(c.trial) in near_best_keys for c in reached],
            "cut": [c.cut for c in reached],
        }
    return out


def replay(
    grid: str | Path | Grid,
    spec: StudySpec | Mapping[str, Any] | None,
    *,
    seeds: int | Iterable[int],
    budget: float,
    pruners: Sequence[str] = ("none", "time_to_target"),
    samplers: Sequence[str] = ("tpe",),
    confirm_seeds: int = 0,
    confirm_rounds: int = 1,
) -> list[dict[str, Any]]:
    """Replay seeded studies over a recorded grid: one row per (pruner, sampler, seed).

    ``grid`` is a grid file or a loaded :class:`Grid`; ``spec`` a :class:`StudySpec` or its dict
    (its target is required; a missing space is derived from the grid's knobs); ``seeds`` a
    count (0…N-1) or the seeds themselves; ``budget`` is in full runs (the grid's planned run).
    Pruners: a spec's (``none``, ``time_to_target``), ``time_to_target:epsilon=0.03``, or
    Optuna's ``median``, ``sha``, ``hyperband`` judged on the distance to the target. Samplers: ``tpe``,
    ``random``, ``gp`` as a study builds them, ``optuna-tpe`` with Optuna's defaults.
    ``confirm_seeds``, ``confirm_rounds``: each study ends with the confirm step of
    :func:`replay_study`.
    """
    loaded = load_grid(grid)
    study_spec = replay_spec(loaded, spec)
    seed_list = list(range(seeds)) if isinstance(seeds, int) else list(seeds)
    optuna.logging.set_verbosity(optuna.logging.ERROR)
    rows = []
    for pruner in pruners:
        for sampler in samplers:
            for seed in seed_list:
                rows.append(
                    replay_study(
                        loaded,
                        study_spec,
                        seed=seed,
                        budget=budget,
                        pruner=pruner,
                        sampler=sampler,
                        confirm_seeds=confirm_seeds,
                        confirm_rounds=confirm_rounds,
                    )
                )
    return rows


def summarize(rows: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """One line per (grid, pruner, sampler): hits, median cost-to-10% (a miss counts as
    infinite, so the median is finite only when most seeds hit), shares stopped."""
    groups: dict[tuple[str, str, str], list[Mapping[str, Any]]] = {}
    for row in rows:
        groups.setdefault((row["grid"], row["pruner"], row["sampler"]), []).append(row)
    out = []
    for (grid, pruner, sampler), group in groups.items():
        near = sum(r["near_best_trials"] for r in group)
        out.append(
            {
                "grid": grid,
                "pruner": pruner,
                "sampler": sampler,
                "seeds": len(group),
                "hits": sum(bool(r["hit"]) for r in group),
                "median_cost_to_10": float(np.median([r["cost_to_10"] for r in group])),
                "stopped_share": float(np.mean([r["stopped_share"] for r in group])),
                "near_best_stopped_share": (
                    sum(r["near_best_stopped_share"] * r["near_best_trials"] for r in group) / near
                    if near
                    else 0.0
                ),
            }
        )
        if all("confirm_hit" in r for r in group):
            out[-1]["confirm_hits"] = sum(bool(r["confirm_hit"]) for r in group)
            out[-1]["confirm_spent"] = float(np.mean([r["confirm_spent"] for r in group]))
    return out


def format_table(summary: Sequence[Mapping[str, Any]]) -> str:
    """The tuner-replay table as Markdown (with the confirm step's columns when every line has them)."""
    confirmed = bool(summary) and all("confirm_hits" in s for s in summary)
    extra = " hits after confirm | confirm cost (full runs per study) |" if confirmed else ""
    lines = [
        "| grid | pruner | sampler | hits within 10% | median cost-to-10% (full runs) "
        "| trials stopped | near-best trials stopped |" + extra,
        "|---|---|---|---|---|---|---|" + "---|---|" * confirmed,
    ]
    for s in summary:
        cost = s["median_cost_to_10"]
        line = (
            f"| {s['grid']} | {s['pruner']} | {s['sampler']} | {s['hits']}/{s['seeds']} "
            f"| {f'{cost:.1f}' if math.isfinite(cost) else '–'} "
            f"| {s['stopped_share']:.0%} | {s['near_best_stopped_share']:.0%} |"
        )
        if confirmed:
            line += f" {s['confirm_hits']}/{s['seeds']} | {s['confirm_spent']:.1f} |"
        lines.append(line)
    return "\n".join(lines)
