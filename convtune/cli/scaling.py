"""CLI commands of the recommender: ``study confirm``, ``study plot``, ``probe lr-range`` and
``probe noise-scale``; :mod:`convtune.cli.study` registers the first two, :mod:`convtune.cli` adds ``probe_app``.
"""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.table import Table

from convtune.cli.common import StorageOpt, console
from convtune.config.record import BASELINE_ATTR, CONFIRMATIONS_ATTR, TrialRecord, set_study_attr, study_attr
from convtune.report.format import describe_recipe, readable

probe_app = typer.Typer(
    help="Cheap probes that narrow a study's space before (or while) it runs.",
    no_args_is_help=True,
    rich_markup_mode="markdown",
)

RecipeOpt = Annotated[
    Path | None, typer.Option(help="Recipe to probe with (default: baseline, best, or mid-space).")
]
WriteSpaceOpt = Annotated[
    Path | None,
    typer.Option("--write-space", help="Write the study's space, narrowed by the probe, to this YAML file."),
]


def study_confirm(
    name: Annotated[str, typer.Argument(help="Study to confirm.")],
    top: Annotated[
        int,
        typer.Option("--top", help="How many configurations to run (with --measured: at most this many)."),
    ] = 3,
    seeds: Annotated[int, typer.Option("--seeds", help="Full runs (seeds) per configuration.")] = 2,
    measured: Annotated[
        bool,
        typer.Option(
            "--measured",
            help="Run the measured best and the configurations measured within 20% of it (one seed "
            "each cannot tell them apart) instead of the predicted fastest.",
        ),
    ] = False,
    rounds: Annotated[
        int,
        typer.Option(
            "--rounds",
            min=1,
            help="With --measured: after a round, also confirm the configurations the search "
            "measured within 20% of the confirmed fastest's mean (the measured best's own seed is "
            "often lucky, so its runner-up window was drawn too low); at most this many rounds.",
        ),
    ] = 1,
    storage: StorageOpt = None,
) -> None:
    """Run the top-K predicted configurations to the target, N seeds each, unpruned.

    With ``--measured``, the measured best and its runners-up instead: what ``study best`` asks
    for when configurations lie within seed noise of the fastest. Predicted (or the search's
    one-seed measurement) against measured, with the seed spread, is recorded in the study;
    ``best`` and ``export`` then prefer confirmed results.
    """
    import optuna

    from convtune.config.record import cost_unit
    from convtune.errors import ConfigError, StudyError
    from convtune.report.best import confirm_candidates, measured_best, runners_up
    from convtune.report.dashboard import DashboardHooks
    from convtune.scaling import (
        best_confirmed,
        confirmations,
        enqueue_confirmations,
        enqueue_measured_confirmations,
    )
    from convtune.study import open_study, run_study

    study, spec = open_study(name, storage)
    if rounds > 1 and not measured:
        raise ConfigError(
            "--rounds needs --measured",
            where="--rounds",
            fix="add --measured (later rounds confirm configurations the search measured)",
        )
    if measured:
        best_trial = measured_best(study)
        if best_trial is None:
            raise StudyError(
                "no trial reached the target yet: nothing measured to confirm",
                where=f"study {name}",
                fix="run more trials first, or confirm the predicted fastest without --measured",
            )
        chosen = [best_trial, *runners_up(study, best_trial)][: max(top, 1)]
        n_planned = len(enqueue_measured_confirmations(study, chosen, spec, seeds))
    else:
        try:
            n_planned = len(enqueue_confirmations(study, spec, top, seeds))
        except ValueError as exc:
            raise StudyError(str(exc), where=f"study {name}", fix="run more trials first") from None
    rounds_run = 0
    while True:  # a round: run what is enqueued; then, with rounds left, plan the next one
        run_study(
            name,
            n_trials=n_planned * seeds,
            storage=storage,
            pruner=optuna.pruners.NopPruner(),
            hooks=DashboardHooks,
        )
        rounds_run += 1
        if rounds_run >= rounds:
            break
        study, spec = open_study(name, storage)
        so_far = confirmations(study)
        more = confirm_candidates(study, so_far)[: max(top, 1)]
        if not more:
            break
        around = (
            "the confirmed fastest's mean"
            if best_confirmed(study, so_far) is not None
            else "the fastest not confirmed yet (none confirmed reached the target on every seed)"
        )
        console.print(
            f"round {rounds_run + 1}: confirming {len(more)} more configuration(s) measured within 20% of "
            f"{around}: trials {', '.join(str(t.number) for t in more)}"
        )
        n_planned = len(enqueue_measured_confirmations(study, more, spec, seeds))
    study, spec = open_study(name, storage)
    done = confirmations(study)
    set_study_attr(study, CONFIRMATIONS_ATTR, done)  # the measured side, stored beside the plan
    unit = cost_unit(spec.cost)
    table = Table(title=f"{name}: predicted against measured ({unit})")
    table.add_column("configuration")
    for column in ("predicted", "interval", "measured mean", "seed range", "reached"):
        table.add_column(column, justify="right")
    for c in done:
        one_seed = c.get("source") == "measured"  # the search's own run, not a prediction
        table.add_row(
            f"{c['id']}: {describe_recipe(c.get('recipe'))}",
            f"{readable(c['predicted'])} (search's run)" if one_seed else readable(c["predicted"]),
            "–" if one_seed else f"{readable(c['interval'][0])}–{readable(c['interval'][1])}",
            readable(c["measured_mean"]),
            f"{readable(c['measured_min'])}–{readable(c['measured_max'])}",
            f"{c['n_reached']}/{len(c['trials'])}",
        )
    console.print(table)
    best = best_confirmed(study, done)
    if best is not None:
        console.print(
            f"confirmed fastest: {best['id']}, {readable(best['measured_mean'])} {unit} mean over "
            f"{len(best['trials'])} seeds; `convtune study export {name}` exports it"
        )
    else:
        console.print(
            "no configuration reached the target with every seed: `study best` keeps the measured best"
        )


def study_plot(
    name: Annotated[str, typer.Argument(help="Study to plot.")],
    out: Annotated[Path, typer.Option("--out", "-o", help="Directory for the PNG files.")] = Path("plots"),
    upload: Annotated[bool, typer.Option(help="Also attach them to the study as Optuna artifacts.")] = True,
    storage: StorageOpt = None,
) -> None:
    """Learning curves with forecasts, steps vs batch with B_noise, time vs LR, predicted vs measured,
    forecasts vs outcomes."""
    from convtune.report.scaling_plots import upload_plots, write_plots
    from convtune.storage import resolve_storage_url
    from convtune.study import open_study

    study, spec = open_study(name, storage)
    paths = write_plots(study, spec, out)
    for path in paths:
        console.print(f"wrote {path}")
    if upload:
        upload_plots(study, spec, resolve_storage_url(storage or spec.storage), paths)
        console.print(f"attached {len(paths)} plots to study {name} (optuna-dashboard: Artifacts)")


# ---- probes -------------------------------------------------------------------------------------


def _probe_setup(name: str, storage: str | None, recipe_file: Path | None) -> tuple[Any, Any, Any, Any]:
    """The study, its spec, its workload, and the recipe to probe with (file, baseline, best, centre)."""
    import optuna

    from convtune.config.recipe import Recipe, load_recipe
    from convtune.errors import StudyError
    from convtune.report.best import measured_best
    from convtune.study import open_study
    from convtune.workloads import build_workload

    study, spec = open_study(name, storage)
    if not isinstance(spec.workload, str):
        raise StudyError("probes need a Workload (a built-in or factory), not a script", where="workload")
    if recipe_file is not None:
        recipe = load_recipe(recipe_file)
    elif study_attr(study, BASELINE_ATTR):
        recipe = Recipe.from_dict(study_attr(study, BASELINE_ATTR))
    elif (best := measured_best(study)) is not None:
        recipe = Recipe.from_dict(dict(TrialRecord.of(best).recipe or {}))
    else:
        recipe = spec.search_space.recipe(optuna.trial.FixedTrial(space_centre(spec.search_space)))
    workload = build_workload(spec.workload, spec.workload_args, base_dir=Path(spec.base_dir))
    return study, spec, workload, recipe


def space_centre(space: Any) -> dict[str, Any]:
    """A deterministic mid-space configuration: each range's (log) midpoint, each choice's first."""
    out: dict[str, Any] = {}

    def walk(param: Any) -> None:
        if param.is_fixed:
            value = param.value
        elif param.choices is not None:
            value = out[param.optuna_name] = param.choices[0]
        else:
            low, high = float(param.low), float(param.high)
            value = math.sqrt(low * high) if param.log else (low + high) / 2
            value = out[param.optuna_name] = int(round(value)) if param.is_int else value
        for child in param.children.get(value, ()):
            walk(child)

    for param in space.params:
        walk(param)
    return out


def _write_space(path: Path, raw: dict[str, Any]) -> None:
    import yaml

    path.write_text(yaml.safe_dump(raw, sort_keys=False))
    console.print(f"wrote narrowed space to {path} (use it with `convtune study create … --space {path}`)")


@probe_app.command("lr-range")
def probe_lr_range(
    name: Annotated[str, typer.Argument(help="Study whose workload to probe.")],
    min_lr: Annotated[float, typer.Option(help="First LR.")] = 1e-5,
    max_lr: Annotated[
        float, typer.Option(help="Last LR (the test stops earlier when the loss blows up).")
    ] = 10.0,
    steps: Annotated[int, typer.Option(help="Optimizer steps over the sweep.")] = 100,
    recipe: RecipeOpt = None,
    write_space: WriteSpaceOpt = None,
    storage: StorageOpt = None,
) -> None:
    """LR range test (Smith 2017): loss against an exponentially growing LR; narrows peak_lr."""
    from convtune.training.probes import lr_range_test, narrow_lr

    study, spec, workload, base = _probe_setup(name, storage, recipe)
    found = lr_range_test(workload, base, min_lr=min_lr, max_lr=max_lr, steps=steps, seed=spec.seed)
    record = found.to_dict() | {"optimizer": base.optimizer_name, "micro_batch_size": base.micro_batch_size}
    set_study_attr(study, "probe_lr_range", record)
    low, high = found.suggested_bounds
    console.print(
        f"{base.optimizer_name}, batch {base.effective_batch_size}: loss falls fastest at lr {readable(found.steepest_lr)}, "
        f"lowest at {readable(found.min_loss_lr)}, blows up at {readable(found.blowup_lr)}; suggested peak_lr {readable(low)}–{readable(high)}"
    )
    if write_space is not None:
        _write_space(write_space, narrow_lr(spec.space, found.suggested_bounds, base.optimizer_name))


@probe_app.command("noise-scale")
def probe_noise_scale(
    name: Annotated[str, typer.Argument(help="Study whose workload to probe.")],
    b_small: Annotated[
        int | None, typer.Option(help="Small batch (default: the recipe's micro-batch).")
    ] = None,
    b_big: Annotated[int | None, typer.Option(help="Big batch (default: 8× the small one).")] = None,
    repeats: Annotated[int, typer.Option(help="Gradient measurements per batch size.")] = 20,
    warmup_steps: Annotated[int, typer.Option(help="Training steps before measuring.")] = 20,
    recipe: RecipeOpt = None,
    write_space: WriteSpaceOpt = None,
    storage: StorageOpt = None,
) -> None:
    """Gradient noise scale B_simple = tr(Σ)/|G|² (McCandlish et al. 2018); bounds the useful batch."""
    from convtune.training.probes import narrow_batch, noise_scale

    study, spec, workload, base = _probe_setup(name, storage, recipe)
    found = noise_scale(
        workload,
        base,
        b_small=b_small,
        b_big=b_big,
        repeats=repeats,
        warmup_steps=warmup_steps,
        seed=spec.seed,
    )
    set_study_attr(study, "probe_noise_scale", json.loads(json.dumps(found.to_dict(), default=str)))
    low, high = found.interval
    lo_b, hi_b = found.useful_batch_range
    console.print(
        f"B_simple ≈ {readable(found.b_simple)} ({found.level:.0%} interval {readable(low)}–{readable(high)}); "
        f"useful effective batch {readable(lo_b)}–{readable(hi_b)}"
    )
    if write_space is not None:
        _write_space(write_space, narrow_batch(spec.space, found.useful_batch_range))
