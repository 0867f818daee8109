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
    """Runs one trial's training somewhere and streams its records to ``on_eval`` (an extension point).

    convtune ships :class:`InProcessExecutor`, :class:`~convtune.execution.warm.WarmRankExecutor`
    and :class:`~convtune.execution.scripts.ScriptExecutor`; anything with these two methods can
    be passed to :class:`~convtune.study.objective.Objective` (a simulator replaying recorded
    curves, a cluster scheduler).
    """

    def run(self, recipe: Recipe, config: EngineConfig, on_eval: Callable[[Progress], bool]) -> RunResult:
        """Train one trial of ``recipe`` under ``config`` and return how it ended.

        The contract:

        - Call ``on_eval`` in the calling process with each evaluation's :class:`Progress`, in
          order (``cost`` in ``config.cost`` units, rising). Its True means stop now: end the
          run at that record, with ``status="stopped"``.
        - Stop on your own by the shared rules (:class:`~convtune.training.stops.StopRules`):
          divergence ends the run with ``status="diverged"``, cost at or past
          ``config.max_cost`` with ``status="budget"``; the last record is handed to
          ``on_eval`` first. A run that trains its planned horizon is ``"finished"``.
        - Return a :class:`RunResult` whose ``history`` is the records handed to ``on_eval``.
        - Raise for a trial that failed: the objective records it as failed (an out-of-memory
          error as ``oom``); a :class:`~convtune.errors.ConvtuneError` is the user's to fix and
          ends the study. Let ``KeyboardInterrupt`` through after stopping what was started.

        Example (an executor that replays one recorded curve)::

            class Replay:
                def __init__(self, curve: list[Progress]):
                    self.curve = curve

                def run(self, recipe, config, on_eval):
                    result = RunResult()
                    for record in self.curve:
                        result.history.append(record)
                        if on_eval(record):
                            result.status, result.reason = "stopped", "stopped by the caller"
                            break
                    return result

                def close(self):
                    pass
        """
        ...

    def close(self) -> None:
        """Release what the executor holds (processes, ports, files); called once, after the last trial."""
        ...


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
