"""``convtune study export``: write the best (or a chosen) recipe for the user's training code.

Registered on ``study_app`` by :mod:`convtune.cli.study`.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from convtune.cli.common import StorageOpt, console, print_runner_up_hint
from convtune.report.format import readable


def study_export(
    name: Annotated[str, typer.Argument(help="Study to export from.")],
    output: Annotated[Path, typer.Option("--output", "-o", help="File to write.")],
    format: Annotated[
        str, typer.Option("--format", "-f", help="yaml, json, hf (TrainingArguments) or python.")
    ] = "yaml",
    trial: Annotated[
        int | None, typer.Option("--trial", help="Export this trial instead of the best.")
    ] = None,
    predicted: Annotated[
        bool, typer.Option("--predicted", help="Export the recommender's predicted fastest recipe.")
    ] = False,
    storage: StorageOpt = None,
) -> None:
    """Export the confirmed best, else the measured best (or --trial N, or --predicted)."""
    from convtune.export import export, get_exporter, select_document
    from convtune.study import open_study

    get_exporter(format)  # a bad --format fails before the storage is opened
    study, spec = open_study(name, storage)
    doc = select_document(study, spec, trial=trial, predicted=predicted)
    path = export(doc, format, output)
    what = f"trial {doc.trial}" if doc.trial is not None else "the predicted recipe"
    ttt = doc.time_to_target if doc.time_to_target is not None else doc.predicted_time_to_target
    n = len(doc.extra.get("confirmed_times", ()))
    if ttt is None:
        when = ""
    elif n:
        when = f", mean time to target {readable(float(ttt))} {doc.cost_unit} over {n} seed{'s' * (n != 1)}"
    else:
        when = f", time to target {readable(float(ttt))} {doc.cost_unit}"
    console.print(f"exported {what} ({doc.source}{when}) as {format} to {path}")
    if doc.source == "measured":
        from convtune.report.best import measured_best, runners_up

        best = measured_best(study)
        if best is not None:
            runners = [{"trial": t.number} for t in runners_up(study, best)]
            print_runner_up_hint(study.study_name, runners)
    if format == "hf":
        from convtune.export import hf_exactness

        exact, notes = hf_exactness(doc.recipe)
        if not exact:
            knobs = sorted({note.split(":", 1)[0] for note in notes if not note.startswith("world_size:")})
            console.print(
                f"[bold yellow]not exact:[/] TrainingArguments alone would train a different {', '.join(knobs)}; "
                "pass optimizers=(opt, recipe.scheduler(opt)) with recipe = convtune.load_recipe(the file), "
                "opt = recipe.optimizer(model) (the file's 'usage')"
            )
