"""``convtune replay``: tuner replays over a recorded grid, printed as the tuner-replay table.

A single command, registered on the top-level app by :mod:`convtune.cli`.
"""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Annotated, Any

import typer

from convtune.cli.common import console
from convtune.config.io import read_mapping
from convtune.errors import ConfigError


def replay_command(
    grid: Annotated[Path, typer.Argument(help="Recorded grid (.jsonl or .jsonl.gz; docs/replay.md).")],
    spec: Annotated[
        Path | None,
        typer.Option(
            "--spec",
            help="Spec YAML/JSON: target (required), cost, max_cost, space (default: the grid's knobs).",
        ),
    ] = None,
    target: Annotated[str | None, typer.Option("--target", help="Target, overriding the spec's.")] = None,
    seeds: Annotated[int, typer.Option("--seeds", help="Studies per method, seeded 0…N-1.")] = 5,
    budget: Annotated[float, typer.Option("--budget", help="Budget of each study, in full runs.")] = 20.0,
    pruner: Annotated[
        list[str] | None,
        typer.Option(
            "--pruner",
            help="Repeatable: none, time_to_target, time_to_target:epsilon=0.01, median, sha, hyperband, "
            "any of them with promote=3 (hyperband:promote=3: paused trials in the best third of all "
            "that trained as far are resumed, as ASHA promotes), "
            "or a pruner of your own as file.py:function (a function of the replay's executor and spec "
            "that returns an Optuna pruner; docs/replay.md).",
        ),
    ] = None,
    sampler: Annotated[
        list[str] | None, typer.Option("--sampler", help="Repeatable: tpe, random, gp, optuna-tpe.")
    ] = None,
    confirm: Annotated[
        int,
        typer.Option(
            "--confirm",
            help="After each study's budget, re-run its measured best and runners-up on N more seeds "
            "each (as `study confirm --measured`) and report the hits after that.",
        ),
    ] = 0,
    confirm_rounds: Annotated[
        int,
        typer.Option(
            "--confirm-rounds",
            min=1,
            help="With --confirm: as `study confirm --measured --rounds`, later rounds also confirm "
            "configurations measured within 20% of the confirmed fastest's mean.",
        ),
    ] = 1,
    json_out: Annotated[bool, typer.Option("--json", help="Print one JSON row per study instead.")] = False,
) -> None:
    """Replay seeded studies over recorded learning curves and print how each tuner did.

    Each trial replays the recorded curve of the configuration it suggests (nearest recorded
    point, one recorded seed), through the same objective a study runs. **hits**: studies whose
    pick is within 10% of the grid's best time-to-target; **cost-to-10%**: full runs spent until
    then (median over seeds, a miss counting as infinite). With ``--confirm N``, **after
    confirm**: hits once the measured best and its runners-up ran N more seeds each, and what
    those runs cost.
    """
    from convtune.replay import format_table, replay, summarize

    data: dict[str, Any] = read_mapping(spec) if spec is not None else {}
    if isinstance(data.get("space"), str):
        data["space"] = read_mapping((spec.parent if spec else Path.cwd()) / data["space"])
    data.pop("workload", None)
    if target is not None:
        data["target"] = target
    if "target" not in data:
        raise ConfigError("no target given", where="--spec", fix="set target: in the spec, or pass --target")
    rows = replay(
        grid,
        data,
        seeds=seeds,
        budget=budget,
        pruners=pruner or ["none", "time_to_target"],
        samplers=sampler or ["tpe"],
        confirm_seeds=confirm,
        confirm_rounds=confirm_rounds,
    )
    if json_out:
        for row in rows:
            print(
                json.dumps(
                    {
                        k: (None if isinstance(v, float) and not math.isfinite(v) else v)
                        for k, v in row.items()
                    }
                )
            )
        return
    console.print(format_table(summarize(rows)), markup=False, highlight=False)
