"""Study specs (``studies/*.yaml``): workload, search space, target, cost and budget.

Paths in a spec are relative to the spec file. :func:`load_spec` validates everything a study
needs (the space is inlined, the workload resolved) so a stored spec is self-contained and a later
edit of the YAML files cannot change a running study.
"""

from __future__ import annotations

import math
import os
import tempfile
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from convtune.config.io import read_mapping
from convtune.config.recipe import config_error_from
from convtune.config.space import SearchSpace
from convtune.config.target import Target
from convtune.errors import ConfigError

PRUNER_OPTIONS = (
    "epsilon",
    "epsilon_behind",
    "epsilon_before_incumbent",
    "exact_margin",
    "margin",
    "rung_ratio",
    "n_warmup_reports",
    "level",
    "prior_trials",
    "steady_reports",
    "reach_max_lowering",
    "require_behind",
    "self_check",
    "comeback_veto",
    "behind_noise",
    "plateau_references",
    "pause_behind",
    "pause_phase",
    "pause_rank",
    "pause_winners",
    "behind_reports",
    "jump_veto",
    "study_shift",
    "study_shift_z",
    "reach_trees",
    "plateau_wait",
    "plateau_stretch",
)
"""What ``pruner_options`` may set: keyword arguments of ``convtune.pruners.TimeToTargetPruner``."""


class StudySpec(BaseModel):
    """Everything ``study run`` needs, stored with the study."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    workload: str | dict[str, Any]
    workload_args: dict[str, Any] = Field(default_factory=dict)
    space: dict[str, Any]
    target: str
    cost: Literal["wallclock", "samples", "device_seconds"] = "wallclock"
    max_cost: float = Field(default=math.inf, gt=0)
    eval_every: dict[Literal["samples", "steps"], int] = Field(default_factory=lambda: {"samples": 4096})
    world_size: int = Field(default=1, gt=0)
    storage: str | None = None
    artifacts: str | None = None
    sampler: Literal["tpe", "random", "gp"] = "tpe"
    pruner: Literal[
        "time_to_target", "time_to_target_field", "time_to_target_halving", "median", "hyperband", "none"
    ] = "time_to_target"
    # Keyword arguments of pruner: time_to_target (TimeToTargetPruner), e.g. {epsilon: 0.03,
    # epsilon_behind: 0.1}; their values are checked when the study is created.
    pruner_options: dict[str, float] = Field(default_factory=dict)
    # numpy's and Optuna's samplers take seeds in [0, 2**32).
    seed: int = Field(default=0, ge=0, lt=2**32)
    max_skipped_steps: int = Field(default=8, gt=0)
    # Optional per-trial memory cap in MB, checked at every evaluation against the peak the trial
    # reports as peak_memory_mb (on a GPU the GPU's, from torch's allocator; else the peak
    # resident set of its busiest rank): a trial over it ends infeasible ("oom"), like a CUDA OOM.
    max_memory_mb: float | None = Field(default=None, gt=0)
    # Where trials checkpoint at every evaluation (a directory every worker shares): a trial whose
    # worker died is retried from its last checkpoint instead of from scratch. None: no checkpoints.
    checkpoint_dir: str | None = None
    # A sampled trial whose choices equal a finished trial's and whose every searched range lies
    # within this fraction of its (log) width reuses that trial's outcome instead of training
    # (status "duplicate"); 0 reuses exact repeats only.
    duplicate_tolerance: float = Field(default=0.05, ge=0, lt=1)
    # What a trial the pruner stopped tells the sampler: "forecast", its right-censored forecast
    # (the median crossing given it had not reached by the cost spent); "after_reached", that
    # value but never sooner than the slowest trial that reached the target, so the sampler
    # ranks a stop after every trial that reached and before every one that ran out without
    # reaching, as Optuna's TPE ranks pruned trials after complete ones. Explored, not adopted:
    # no more winners, more of them paused for good (docs/benchmarks.md, "Evidence for a pause").
    # "withheld": the forecast is stored, but the sampler is not told stopped trials at all
    # (convtune.study.withheld): it models only trials that ran to their end.
    # "censored_median": the median of its time-to-target given it had not reached by the cost
    # spent, with "never" counted as an outcome (the survival median): the cap when never
    # reaching is at least as likely as reaching, where "forecast" takes the median given it reaches.
    stop_value: Literal["forecast", "after_reached", "withheld", "censored_median"] = "forecast"
    base_dir: str = "."

    @field_validator("target")
    @classmethod
    def _target(cls, value: str) -> str:
        return str(Target.parse(value))

    @model_validator(mode="after")
    def _pruner_options(self) -> StudySpec:
        if not self.pruner_options:
            return self
        if not self.pruner.startswith("time_to_target"):
            raise ValueError(f"pruner_options apply to pruner: time_to_target only, not to {self.pruner!r}")
        unknown = sorted(set(self.pruner_options) - set(PRUNER_OPTIONS))
        if unknown:
            raise ValueError(
                f"pruner_options: unknown option {unknown[0]!r}; use {', '.join(PRUNER_OPTIONS)}"
            )
        return self

    @field_validator("eval_every")
    @classmethod
    def _eval_every(cls, value: dict[str, int]) -> dict[str, int]:
        if len(value) != 1:
            raise ValueError("give exactly one of {samples: N} or {steps: N}")
        if next(iter(value.values())) <= 0:
            raise ValueError("the interval must be positive")
        return value

    @property
    def target_spec(self) -> Target:
        return Target.parse(self.target)

    @property
    def search_space(self) -> SearchSpace:
        raw = dict(self.space)
        raw["world_size"] = self.world_size
        return SearchSpace.from_dict(raw, where="space")

    @property
    def eval_unit(self) -> Literal["samples", "steps"]:
        return next(iter(self.eval_every))  # type: ignore[return-value]

    @property
    def eval_interval(self) -> int:
        return next(iter(self.eval_every.values()))

    def to_dict(self) -> dict[str, Any]:
        data = self.model_dump()
        if math.isinf(data["max_cost"]):
            data["max_cost"] = None
        if not data["pruner_options"]:
            # Specs stored before the field existed must still equal a re-created one.
            del data["pruner_options"]
        return data

    @classmethod
    def from_dict(cls, data: Mapping[str, Any], *, where: str = "spec") -> StudySpec:
        data = dict(data)
        if data.get("max_cost") is None:
            data.pop("max_cost", None)
        try:
            return cls.model_validate(data)
        except ValidationError as exc:
            raise config_error_from(exc, where) from None


def load_spec(path: str | Path | None = None, **overrides: Any) -> StudySpec:
    """Read a spec file (or none: flags only), apply flag overrides, inline the space, validate.

    Relative paths (``space``, a ``file.py:factory`` workload) are resolved against the spec file.
    """
    if path is not None:
        path = Path(path)
        raw = read_mapping(path)
        where, base = str(path), path.parent.resolve()
    else:
        raw, where, base = {}, "flags", Path.cwd()
    raw.update({k: v for k, v in overrides.items() if v is not None})
    raw.pop("base_dir", None)
    if "workload" not in raw:
        raise ConfigError(
            "no workload given",
            where=f"{where}: workload",
            fix="set workload: charlm (or --workload)",
        )
    if "target" not in raw:
        raise ConfigError(
            "no target given",
            where=f"{where}: target",
            fix="set target: 'val_loss<=2.0' (or --target)",
        )
    space = raw.get("space", "default")
    if isinstance(space, str):
        space_path = _space_path(space, base)
        if not space_path.is_file():
            raise ConfigError(
                f"search space file {space_path} not found",
                where=f"{where}: space",
                fix="check the path",
            )
        raw["space"] = read_mapping(space_path)
        space_where = str(space_path)
    else:
        space_where = f"{where}: space"
    SearchSpace.from_dict(raw["space"], where=space_where)  # validate with file-level messages
    Target.parse(raw["target"], where="--target" if overrides.get("target") else f"{where}: target")
    raw["base_dir"] = str(base)
    spec = StudySpec.from_dict(raw, where=where)
    spec.search_space  # noqa: B018  (re-validate with world_size applied)
    _check_workload(spec, where)
    for key in ("checkpoint_dir", "artifacts"):
        if getattr(spec, key):
            check_writable_dir(Path(getattr(spec, key)), where=f"{where}: {key}")
    return spec


def check_writable_dir(path: Path, *, where: str) -> None:
    """``path`` is a writable directory, or one that can be made: its nearest existing ancestor is.

    Checked without writing anything, so a rejected spec leaves no directory behind.
    """
    probe = path
    while not probe.exists():
        if probe.parent == probe:
            break
        probe = probe.parent
    if not probe.is_dir():
        raise ConfigError(f"{probe} is not a directory", where=where, fix="choose a directory path")
    try:  # os.access says yes to root everywhere, even on /proc: try it
        os.rmdir(tempfile.mkdtemp(prefix=".convtune-check-", dir=probe))
    except OSError as exc:
        raise ConfigError(
            f"{probe} is not writable ({exc.strerror})", where=where, fix="choose a writable directory"
        ) from None


def _space_path(space: str, base: Path) -> Path:
    """A space is a path, or a name of a shipped space (``default`` → search_spaces/default.yaml)."""
    candidate = base / space
    if candidate.is_file() or "/" in space or space.endswith((".yaml", ".yml")):
        return candidate
    from convtune.config.resources import shipped_space

    return shipped_space(space)


_METRICS_FIX = (
    "write metrics: {accuracy: [0, 1], val_loss: [0, .inf]} or a list of names: [accuracy, val_loss]"
)


def _check_workload(spec: StudySpec, where: str) -> None:
    if isinstance(spec.workload, dict):
        keys = set(spec.workload)
        allowed = {"script", "command", "args", "metrics"}
        if not keys or not keys <= allowed or len(keys & {"script", "command"}) != 1:
            raise ConfigError(
                "a workload mapping takes {script: file.py, args: [...], metrics: {...}} "
                "or {command: [...], metrics: {...}}",
                where=f"{where}: workload",
            )
        if "metrics" in keys:
            metrics = script_metrics(spec.workload["metrics"], where=f"{where}: workload.metrics")
            _check_target_against(spec, metrics, where)
        if "command" in keys:
            command = spec.workload["command"]
            if "args" in keys or not isinstance(command, list) or not command:
                raise ConfigError(
                    "command must be a non-empty list of arguments (run without a shell; put args in it)",
                    where=f"{where}: workload.command",
                    fix='write it as command: ["torchrun", "--nproc-per-node", "2", "train.py"]',
                )
            return
        script = Path(spec.base_dir) / str(spec.workload["script"])
        if not script.is_file():
            raise ConfigError(
                f"script {script} not found",
                where=f"{where}: workload.script",
                fix="paths are relative to the spec file",
            )
        if not isinstance(spec.workload.get("args", []), list):
            raise ConfigError(
                "args must be a list", where=f"{where}: workload.args", fix='write args: ["--data", "x"]'
            )
        return
    from convtune.workloads import resolve_factory

    factory = resolve_factory(spec.workload, base_dir=Path(spec.base_dir))
    _check_target_metric(spec, factory, where)


def script_metrics(value: Any, *, where: str) -> dict[str, tuple[float, float] | None]:
    """A script workload's declared ``metrics``: ``{name: [low, high]}`` or a list of names.

    The names a script reports through ``session.report(metrics=...)`` and, where given, the
    range of each (YAML's ``.inf`` for an open end); ``study create`` checks the target against
    them, since a script cannot be evaluated without running it.

    >>> script_metrics({"accuracy": [0, 1], "val_loss": [0, float("inf")]}, where="s.yaml")
    {'accuracy': (0.0, 1.0), 'val_loss': (0.0, inf)}
    >>> script_metrics(["val_loss"], where="s.yaml")
    {'val_loss': None}
    """

    def bad(message: str) -> ConfigError:
        return ConfigError(message, where=where, fix=_METRICS_FIX)

    if isinstance(value, list):
        if not value or not all(isinstance(name, str) and name.strip() for name in value):
            raise bad(f"{value!r} is not a non-empty list of metric names")
        return {name: None for name in value}
    if not isinstance(value, Mapping) or not value:
        raise bad(f"{value!r} is neither a mapping of metric ranges nor a list of names")
    declared: dict[str, tuple[float, float] | None] = {}
    for name, bounds in value.items():
        if not isinstance(name, str) or not name.strip():
            raise bad(f"metric name {name!r} is not a name")
        if bounds is None:
            declared[name] = None
            continue
        if (
            not isinstance(bounds, list | tuple)
            or len(bounds) != 2
            or any(isinstance(b, bool) or not isinstance(b, int | float) or math.isnan(b) for b in bounds)
        ):
            raise bad(f"{name}: {bounds!r} is not a range [low, high] of two numbers")
        low, high = float(bounds[0]), float(bounds[1])
        if low > high:
            raise bad(f"{name}: range [{low:g}, {high:g}] has its low end above its high end")
        declared[name] = (low, high)
    return declared


def _declared_or_probed_metrics(spec: StudySpec, factory: Any) -> Mapping[str, Any] | None:
    """The workload's declared ``metrics`` ({name: (low, high)}), else the names one evaluation of
    an untrained model returns (bounds unknown), else None when the workload cannot be built here
    (a create host may lack the data; each worker checks again before its first trial)."""
    declared = getattr(factory, "metrics", None)
    if isinstance(declared, Mapping):
        return declared
    from convtune.workloads import build_workload, checked_metrics

    try:
        workload = build_workload(spec.workload, spec.workload_args, base_dir=Path(spec.base_dir))
        declared = getattr(workload, "metrics", None)
        if isinstance(declared, Mapping):
            return declared
        model = workload.build_model()
        model.eval()
        import torch

        with torch.no_grad():
            returned = workload.evaluate(model)
    except Exception:  # noqa: BLE001  (the run reports a workload that cannot be built, with its cause)
        return None
    return {name: None for name in checked_metrics(returned)}


def _check_target_metric(spec: StudySpec, factory: Any, where: str) -> None:
    """The target's metric is one the workload produces, and a value in its range can reach it."""
    metrics = _declared_or_probed_metrics(spec, factory)
    if metrics is None:
        return
    _check_target_against(spec, metrics, where, source="the workload's evaluate() gives")


def _check_target_against(
    spec: StudySpec, metrics: Mapping[str, Any], where: str, *, source: str = "workload.metrics declares"
) -> None:
    """The target's metric is among ``metrics`` ({name: (low, high) or None}) and its range can reach it."""
    target = spec.target_spec
    if target.metric not in metrics:
        raise ConfigError(
            f"{source} {', '.join(sorted(map(str, metrics))) or 'no metrics'}, not {target.metric!r}",
            where=f"{where}: target",
            fix="check the metric's spelling",
        )
    bounds = metrics[target.metric]
    if bounds is None:
        return
    low, high = (float(b) for b in bounds)
    beyond = target.value > high if not target.lower_is_better else target.value < low
    at_edge = target.value == high if not target.lower_is_better else target.value == low
    if beyond or (at_edge and target.op in ("<", ">")):
        raise ConfigError(
            f"{target} cannot be reached: {target.metric} lies in [{low:g}, {high:g}]",
            where=f"{where}: target",
            fix=f"choose a threshold within [{low:g}, {high:g}]",
        )
