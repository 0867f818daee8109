"""Launching trials as ``world_size`` rank processes with PyTorch's own elastic launcher.

:func:`ElasticExecutor` picks the executor a spec's workload needs; both are
:class:`~convtune.execution.executor.Executor`\\ s: the study's objective hands one a Recipe and
gets back a :class:`~convtune.training.engine.RunResult`, whatever runs underneath.

- **Workload trials** (``workload: NAME``) run in *warm* ranks
  (:class:`~convtune.execution.warm.WarmRankExecutor`): one torchrun launch serves trial after
  trial; ranks are relaunched only after a failure or when a trial needs another world size.
- **Script and command trials** (``workload: {script: …}`` / ``{command: […]}``) start the user's
  program per trial (:class:`~convtune.execution.scripts.ScriptExecutor`); it talks to the worker
  through :mod:`convtune.execution.session`.

Every rank holds its own connection to the worker's channel (:mod:`convtune.execution.channel`)
and gets the same stop decision at each evaluation, so all ranks leave the loop at the same step.
A rank that raises, dies or hangs (collectives time out after ``collective_timeout`` seconds)
fails the trial (:class:`RankFailed`). Both stop a trial by the same rules as the engine
(:mod:`convtune.training.stops`).

Multi-node: every node runs torchrun against one rendezvous endpoint. The node that runs the study
(``convtune study run NAME --nnodes 2 --rdzv-endpoint HOST:PORT``) hosts the rendezvous and the
channel (on PORT+1); every other node runs :func:`convtune.execution.follow.follow` (``convtune
study follow NAME --nnodes 2 --rdzv-endpoint HOST:PORT``), whose ranks take part in every trial.
For a script workload the follower instead receives each trial's recipe over the channel and
launches the script there (:func:`convtune.execution.follow.follow_scripts`); command workloads
stay on one node.

Example:
    >>> from convtune.execution.launcher import ElasticExecutor, LaunchOptions
    >>> executor = ElasticExecutor(spec, LaunchOptions(collective_timeout=60))   # doctest: +SKIP
    >>> result = executor.run(recipe, engine_config(spec), on_eval=lambda p: False)  # doctest: +SKIP
    >>> executor.close()                                                            # doctest: +SKIP
"""

from __future__ import annotations

from convtune.config.spec import StudySpec
from convtune.execution.launch import (
    ENV_CHANNEL,
    ENV_CONFIG,
    ENV_RECIPE,
    ENV_TOKEN,
    ENV_TRIAL,
    LaunchedExecutor,
    LaunchFailed,
    LaunchOptions,
    MultiNodeCommand,
    RankFailed,
    check_gpus,
    check_nodes,
    launch_env,
    nproc_per_node,
)
from convtune.execution.scripts import ScriptExecutor
from convtune.execution.warm import WarmRankExecutor


def ElasticExecutor(  # a function under the class-like name callers have always used
    spec: StudySpec, options: LaunchOptions | None = None
) -> WarmRankExecutor | ScriptExecutor:
    """The launched executor for ``spec``'s workload: a script or command (``workload: {…}``)
    gets a :class:`ScriptExecutor`, a Workload name a :class:`WarmRankExecutor`."""
    if isinstance(spec.workload, dict):
        return ScriptExecutor(spec, options)
    return WarmRankExecutor(spec, options)


__all__ = [
    "ENV_CHANNEL",
    "ENV_CONFIG",
    "ENV_RECIPE",
    "ENV_TOKEN",
    "ENV_TRIAL",
    "ElasticExecutor",
    "LaunchFailed",
    "LaunchOptions",
    "LaunchedExecutor",
    "MultiNodeCommand",
    "RankFailed",
    "ScriptExecutor",
    "WarmRankExecutor",
    "check_gpus",
    "check_nodes",
    "launch_env",
    "nproc_per_node",
]
