"""The Executor protocol (where one trial's training runs) and the in-process executor."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Protocol

from convtune.config.recipe import Recipe
from convtune.config.spec import StudySpec
from convtune.errors import StudyError
from convtune.training.engine import EngineConfig, Progress, RunResult, train
from convtune.workloads import Workload, build_workload


class Executor(Protocol):
    """Runs one trial's training somewhere and streams its records to ``on_eval``.

    ``on_eval`` runs in the tuning process; its True must stop every rank.
    """

    def run(self, recipe: Recipe, config: EngineConfig, on_eval: Callable[[Progress], bool]) -> RunResult: ...

    def close(self) -> None: ...


class InProcessExecutor:
    """One rank, in this process: the workload is built once and reused across trials."""

    def __init__(self, spec: StudySpec):
        self.spec = spec
        self._workload: Workload | None = None

    @property
    def workload(self) -> Workload:
        if self._workload is None:
            if not isinstance(self.spec.workload, str):
                raise StudyError("script and command workloads need the launcher", where="workload")
            self._workload = build_workload(
                self.spec.workload, self.spec.workload_args, base_dir=Path(self.spec.base_dir)
            )
        return self._workload

    def run(self, recipe: Recipe, config: EngineConfig, on_eval: Callable[[Progress], bool]) -> RunResult:
        return train(self.workload, recipe, config, on_eval)

    def close(self) -> None:
        self._workload = None
