"""``convtune study …``: create, run, follow, list, show, best, forecasts, delete, export, confirm, plot."""

from __future__ import annotations

import json
import math
import shlex
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Annotated, Any, NoReturn

import typer
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Table

from convtune.cli.common import StorageOpt, _say, console, err_console, print_runner_up_hint
from convtune.cli.export import study_export
from convtune.cli.scaling import study_confirm, study_plot
from convtune.report.format import describe_recipe, readable

study_app = typer.Typer(
    help="Create, run and inspect studies.", no_args_is_help=True, rich_markup_mode="markdown"
)

NNodesOpt = Annotated[int, typer.Option("--nnodes", help="Nodes per trial (torchrun rendezvous).")]
RdzvEndpointOpt = Annotated[
    str | None,
    typer.Option(
        "--rdzv-endpoint", help="HOST:PORT of the node running `study run`; its channel listens on PORT+1."
    ),
]
RdzvIdOpt = Annotated[str, typer.Option("--rdzv-id", help="Rendezvous id, the same on every node.")]
CollectiveTimeoutOpt = Annotated[
    float,
    typer.Option("--collective-timeout", help="Seconds before a rank stuck in a collective fails the trial."),
]


@study_app.command("create")
def study_create(
    name: Annotated[str, typer.Argument(help="Study name, unique within the storage.")],
    config: Annotated[
        Path | None, typer.Option("--config", "-c", help="Study spec YAML (studies/*.yaml).")
    ] = None,
    storage: StorageOpt = None,
    workload: Annotated[
        str | None, typer.Option(help="Built-in name, package.module:factory or file.py:factory.")
    ] = None,
    space: Annotated[
        str | None,
        typer.Option(help="Search space YAML, or a shipped one: default, transformer, large_batch."),
    ] = None,
    target: Annotated[
        str | None, typer.Option(help="Quality target, e.g. 'val_loss<=2.0' or 'accuracy>=0.95'.")
    ] = None,
    cost: Annotated[
        str | None, typer.Option(help="What 'fastest' means: wallclock, samples or device_seconds.")
    ] = None,
    max_cost: Annotated[
        float | None, typer.Option(help="Per-trial cap in the cost's unit (seconds or samples).")
    ] = None,
    world_size: Annotated[int | None, typer.Option(help="Ranks per trial.")] = None,
    sampler: Annotated[str | None, typer.Option(help="tpe, random or gp.")] = None,
    pruner: Annotated[
        str | None,
        typer.Option(
            help="time_to_target (default: stops a trial only when it has almost no chance to reach the "
            "target before the best one), hyperband (cheaper on most held-out workloads, but stops some "
            "trials of the best configurations: set checkpoint_dir in the spec so a stop is a pause), median "
            "or none; time_to_target_field and time_to_target_halving are deprecated and run as time_to_target."
        ),
    ] = None,
    seed: Annotated[int | None, typer.Option(help="Seed for the sampler and the training runs.")] = None,
    baseline: Annotated[
        Path | None,
        typer.Option(
            help="Your current recipe (YAML/JSON): run first, every result reported as a speed-up over it."
        ),
    ] = None,
) -> None:
    """Create a study: validate the spec and store it, search space inlined, with the study."""
    from convtune.config.spec import load_spec
    from convtune.errors import ConfigError, ConvtuneError
    from convtune.storage import redact, resolve_storage_url
    from convtune.study import create_study, open_study

    spec = load_spec(
        config,
        workload=workload,
        space=space,
        target=target,
        cost=cost,
        max_cost=max_cost,
        world_size=world_size,
        sampler=sampler,
        pruner=pruner,
        seed=seed,
        storage=storage,
    )
    # The baseline is read and checked against the space before the study exists: a bad one
    # must leave nothing behind.
    baseline_recipe = None
    if baseline is not None:
        from convtune.config.recipe import load_recipe

        baseline_recipe = load_recipe(baseline)
        try:
            open_study(name, storage or spec.storage)
            existed = True
        except ConvtuneError:
            existed = False
    study = create_study(name, spec, storage)
    if baseline_recipe is not None:
        from convtune.scaling import enqueue_baseline

        try:
            fixed = enqueue_baseline(study, spec, baseline_recipe)
        except Exception as exc:
            if not existed:  # nothing half-made: the study this command created goes
                import optuna

                optuna.delete_study(study_name=name, storage=study._storage)
            if isinstance(exc, ConvtuneError):
                raise
            raise ConfigError(
                f"the baseline does not fit the search space ({type(exc).__name__}: {exc})",
                where=str(baseline),
                fix="give every parameter the space searches",
            ) from None
        for field_name in fixed:
            _say(f"warning: baseline {field_name} is fixed by the space; the space's value runs")
    url = resolve_storage_url(storage or spec.storage)
    console.print(f"study [bold]{name}[/] ready in {redact(url)} ({len(study.trials)} trials so far)")
    console.print(f"next: {_next_command(name, url)}", soft_wrap=True, markup=False, highlight=False)


def _next_command(name: str, url: str) -> str:
    """The ``study run`` command that finds this study's storage, with no password in it.

    Without ``--storage`` when the default (``$CONVTUNE_STORAGE``, else the embedded file) is
    this storage; with the password-less URL otherwise, which takes its password from
    ``$CONVTUNE_STORAGE``, ``PGPASSWORD`` or ``~/.pgpass``.
    """
    from convtune.storage import resolve_storage_url, strip_password, url_secrets

    command = f"convtune study run {shlex.quote(name)} --n-trials 20"
    if resolve_storage_url(None) == url:
        return command
    bare = strip_password(url)
    command += f" --storage {shlex.quote(bare)}"
    if url_secrets(url) and resolve_storage_url(bare) != url:
        command += "  (password from $CONVTUNE_STORAGE, PGPASSWORD or ~/.pgpass)"
    return command


@study_app.command("run")
def study_run(
    name: Annotated[str, typer.Argument(help="Study to run.")],
    n_trials: Annotated[
        int | None, typer.Option("--n-trials", "-n", help="Trials to run in this process.")
    ] = None,
    timeout: Annotated[
        float | None, typer.Option(help="Stop starting trials after this many seconds.")
    ] = None,
    storage: StorageOpt = None,
    world_size: Annotated[
        int | None, typer.Option("--world-size", help="Ranks per trial (overrides the spec).")
    ] = None,
    nnodes: NNodesOpt = 1,
    rdzv_endpoint: RdzvEndpointOpt = None,
    rdzv_id: RdzvIdOpt = "convtune",
    collective_timeout: CollectiveTimeoutOpt = 600.0,
    local_workers: Annotated[
        int, typer.Option("--local-workers", help="Tuning processes sharing this machine (sets threads).")
    ] = 1,
    executor: Annotated[
        str, typer.Option(help="auto (in-process for 1-rank workloads), elastic or inprocess.")
    ] = "auto",
    workers: Annotated[
        int,
        typer.Option(
            "--workers",
            "-w",
            help="Worker processes here, each with its slice of the GPUs or cores (needs a journal "
            "or PostgreSQL storage when > 1). The same command on another machine joins the study.",
        ),
    ] = 1,
    as_json: Annotated[
        bool,
        typer.Option(
            "--json", help="Print every trial and the best as JSON at the end (progress lines go to stderr)."
        ),
    ] = False,
) -> None:
    """Run trials: real training, pruned as soon as a trial cannot beat the best so far.

    On a terminal a progress bar shows the running trial; otherwise (a pipe, a log file) one
    plain line is printed per finished trial, as it finishes.

    Ctrl-C stops the ranks, marks the running trial(s) interrupted, re-queues them and exits
    with status 130; SIGTERM (a scheduler preempting the job) does the same, marks them
    preempted and exits with 143. The same command resumes the study, re-queued trials first
    (from their checkpoints if the spec sets checkpoint_dir).
    """
    from convtune.execution.launcher import check_nodes
    from convtune.study import open_study

    launch = _launch_options(
        n_trials=n_trials,
        timeout=timeout,
        world_size=world_size,
        executor=executor,
        workers=workers,
        nnodes=nnodes,
        rdzv_endpoint=rdzv_endpoint,
        rdzv_id=rdzv_id,
        collective_timeout=collective_timeout,
        local_workers=local_workers,
    )
    _, spec = open_study(name, storage)
    check_nodes(spec, launch)  # a command workload with --nnodes > 1: one line, exit 2
    if workers > 1:
        _run_workers(name, spec, workers, n_trials, timeout, storage, world_size, executor, launch, as_json)
        return
    run_kwargs = dict(
        n_trials=n_trials,
        timeout=timeout,
        storage=storage,
        world_size=world_size,
        executor=executor,
        launch=launch,
        local_workers=local_workers,
    )
    if as_json or not console.is_terminal:
        study = _run_here(name, _plain_progress(spec, to_stderr=as_json), **run_kwargs)
        _print_summary(name, study, spec, storage, as_json)
        return
    with _progress_bar(spec, n_trials) as (on_event, stop_bar):
        study = _run_here(name, on_event, before_exit=stop_bar, **run_kwargs)
    _print_summary(name, study, spec, storage)


def _launch_options(
    *,
    n_trials: int | None,
    timeout: float | None,
    world_size: int | None,
    executor: str,
    workers: int,
    nnodes: int,
    rdzv_endpoint: str | None,
    rdzv_id: str,
    collective_timeout: float,
    local_workers: int,
) -> Any:
    """Check ``study run``'s options (one typed error naming the bad one) and build the launch
    options; a missing or malformed ``--rdzv-endpoint`` fails here, before any trial."""
    from convtune.errors import ConfigError
    from convtune.execution.launcher import LaunchOptions
    from convtune.study import check_run_arguments

    check_run_arguments(n_trials=n_trials, timeout=timeout, world_size=world_size, executor=executor)
    if workers < 1:
        raise ConfigError(f"--workers {workers}", where="--workers", fix="give 1 or more")
    if nnodes < 1:
        raise ConfigError(f"--nnodes {nnodes}", where="--nnodes", fix="give 1 or more nodes")
    if local_workers < 1:
        raise ConfigError(f"--local-workers {local_workers}", where="--local-workers", fix="give 1 or more")
    if not collective_timeout > 0 or not math.isfinite(collective_timeout):
        raise ConfigError(
            f"--collective-timeout {collective_timeout:g}",
            where="--collective-timeout",
            fix="give a positive number of seconds",
        )
    launch = LaunchOptions(
        nnodes=nnodes,
        rdzv_endpoint=rdzv_endpoint,
        rdzv_id=rdzv_id,
        collective_timeout=collective_timeout,
        local_workers=local_workers,
    )
    if nnodes > 1:
        launch.channel_address()
    return launch


def _run_here(
    name: str,
    on_event: Callable[[Any], None],
    *,
    storage: str | None,
    before_exit: Callable[[], None] = lambda: None,
    **run_kwargs: Any,
) -> Any:
    """Run the study in this process; Ctrl-C or SIGTERM ends the command (130 or 143) with the
    line that says how to resume, after ``before_exit`` (a progress bar stops first)."""
    from convtune.report.dashboard import DashboardHooks
    from convtune.study import Preempted, preemptible, run_study

    try:
        with preemptible():
            return run_study(name, storage=storage, on_event=on_event, hooks=DashboardHooks, **run_kwargs)
    except KeyboardInterrupt as stop:
        before_exit()
        _interrupted(name, storage, preempted=isinstance(stop, Preempted))


@contextmanager
def _progress_bar(
    spec: Any, n_trials: int | None
) -> Iterator[tuple[Callable[[Any], None], Callable[[], None]]]:
    """A terminal's progress: a bar over trials and one over the running trial's cost; yields
    ``on_event`` for :func:`run_study` and the bar's ``stop``."""
    unit = "samples" if spec.cost == "samples" else "s"
    cap = spec.max_cost if math.isfinite(spec.max_cost) else None
    with Progress(
        TextColumn("[bold]{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        TextColumn("{task.fields[info]}"),
        console=console,
        transient=False,
    ) as progress:
        trials_task = progress.add_task("trials", total=n_trials, info="")
        current = progress.add_task("trial", total=cap, info="", visible=False)
        best: list[float] = []

        def on_event(event: Any) -> None:
            if event.kind == "eval":
                progress.update(
                    current,
                    description=f"trial {event.trial}",
                    completed=min(event.cost, cap) if cap else event.cost,
                    info=f"{spec.target_spec.metric}={readable(event.metric)} at {readable(event.cost)} {unit}",
                    visible=True,
                )
                return
            if event.status == "reached":
                best.append(event.value)
            info = f"trial {event.trial}: {event.status}" + (
                f" in {readable(event.value)} {unit}" if event.status == "reached" else ""
            )
            if best:
                info += f" · best {readable(min(best))} {unit}"
            progress.update(trials_task, advance=1, info=info)
            progress.reset(current, total=cap, visible=False)

        yield on_event, progress.stop


def _plain_progress(spec: Any, *, to_stderr: bool = False) -> Any:
    """``on_event`` printing one plain line per finished trial, flushed at once (for pipes and logs).

    Example line: ``trial 3: reached in 5322 samples · best 5322 samples``.
    """
    import sys

    unit = "samples" if spec.cost == "samples" else "s"
    best: list[float] = []
    stream = sys.stderr if to_stderr else sys.stdout

    def on_event(event: Any) -> None:
        if event.kind != "done":
            return
        line = f"trial {event.trial}: {event.status}"
        if event.status == "reached":
            best.append(event.value)
            line += f" in {readable(event.value)} {unit}"
        if best:
            line += f" · best {readable(min(best))} {unit}"
        print(line, file=stream, flush=True)

    return on_event


def _print_summary(name: str, study: Any, spec: Any, storage: str | None, as_json: bool = False) -> None:
    """The trial table and the best/predicted configuration; Ctrl-C here loses nothing."""
    if as_json:
        from convtune.report.best import best_report

        print(
            json.dumps(
                {"trials": _trials_json(study), "best": best_report(study, spec)}, indent=2, default=str
            )
        )
        return
    try:
        _print_trials(study, spec)
        _print_best(study, spec, storage)
    except KeyboardInterrupt:
        again = _study_command("best", name, storage)
        _say(f"interrupted while printing the summary; every trial is stored. Show it with: {again}")
        raise SystemExit(130) from None


def _study_command(verb: str, name: str, storage: str | None) -> str:
    from convtune.storage import strip_password

    return f"convtune study {verb} {shlex.quote(name)}" + (
        f" --storage {shlex.quote(strip_password(storage))}" if storage else ""
    )


def _interrupted(name: str, storage: str | None, preempted: bool = False) -> NoReturn:
    """Ctrl-C: exit status 130 (click would say "Aborted!" and exit 1); SIGTERM: 143."""
    again = _study_command("run", name, storage)
    what = (
        "preempted (SIGTERM, or a signal to a worker or rank); the running trial is re-queued and runs again (from its checkpoint "
        "if checkpoint_dir is set)"
        if preempted
        else "interrupted; the running trial is marked interrupted and re-queued: it runs again (from its "
        "checkpoint if checkpoint_dir is set)"
    )
    _say(f"{what}. Resume with: {again}")
    if preempted:
        # Every trial is marked and re-queued, every launch stopped: exit now. The interpreter's
        # teardown (torch's modules) takes seconds on a loaded machine, of the ~10 s a scheduler
        # leaves before its SIGKILL.
        import os
        import sys

        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(143)
    raise SystemExit(130)


def _run_workers(
    name: str,
    spec: Any,
    workers: int,
    n_trials: int | None,
    timeout: float | None,
    storage: str | None,
    world_size: int | None,
    executor: str,
    launch: Any,
    as_json: bool = False,
) -> None:
    from convtune.report.dashboard import DashboardHooks
    from convtune.storage import resolve_storage_url
    from convtune.study import open_study
    from convtune.study.workers import check_workers, run_workers

    check_workers(resolve_storage_url(storage or spec.storage), workers)
    on_event = _plain_progress(spec, to_stderr=as_json)

    try:
        report = run_workers(
            name,
            workers=workers,
            n_trials=n_trials,
            timeout=timeout,
            storage=storage,
            world_size=world_size,
            executor=executor,
            launch=launch,
            on_event=on_event,
            on_note=_say,
            hooks=DashboardHooks,
        )
    except KeyboardInterrupt:
        _interrupted(name, storage)
    if report.exit_status in (130, 143):
        _interrupted(name, storage, preempted=report.exit_status == 143)
    if report.error is not None:
        _say(f"error: {report.error}")
        raise SystemExit(2)
    study, _ = open_study(name, storage)
    _print_summary(name, study, spec, storage, as_json)
    if report.exit_status:
        raise SystemExit(report.exit_status)


@study_app.command("follow")
def study_follow(
    name: Annotated[str, typer.Argument(help="Study whose trials this node takes part in.")],
    rdzv_endpoint: RdzvEndpointOpt = None,
    nnodes: NNodesOpt = 2,
    rdzv_id: RdzvIdOpt = "convtune",
    storage: StorageOpt = None,
    world_size: Annotated[
        int | None, typer.Option("--world-size", help="Ranks per trial, as given to `study run`.")
    ] = None,
    collective_timeout: CollectiveTimeoutOpt = 600.0,
) -> None:
    """Lend this node's ranks to a multi-node study run by another node (same rendezvous options).

    Relaunches its ranks after a failed trial, as the study's node does; returns when that node
    finishes the study.
    """
    from convtune.execution.follow import follow, follow_scripts
    from convtune.execution.launcher import LaunchOptions, check_gpus, check_nodes
    from convtune.study import open_study

    _, spec = open_study(name, storage)
    options = LaunchOptions(
        nnodes=nnodes, rdzv_endpoint=rdzv_endpoint, rdzv_id=rdzv_id, collective_timeout=collective_timeout
    )
    check_nodes(spec, options)
    check_gpus(spec.model_copy(update={"world_size": world_size or spec.world_size}), options)
    if isinstance(spec.workload, dict):  # a script: launched here for every trial, with its recipe
        trials = follow_scripts(
            spec,
            world_size or spec.world_size,
            options,
            on_trial=lambda n: err_console.print(f"follow: trial {n} joining {rdzv_endpoint}"),
        )
        console.print(f"study {name}: the study's node closed the trials after {trials} trial(s)")
        return
    launches = follow(
        world_size or spec.world_size,
        options,
        on_launch=lambda n: err_console.print(f"follow: launch {n} joining {rdzv_endpoint}"),
    )
    console.print(f"study {name}: the study's node closed the trials after {launches} launch(es)")


def _trials_json(study: Any) -> list[dict[str, Any]]:
    """Every trial as ``show --json`` prints it (the same fields as ``best --json``'s trials)."""
    from convtune.report.best import trial_summary

    return [trial_summary(trial) for trial in study.get_trials(deepcopy=False)]


def _print_trials(study: Any, spec: Any) -> None:
    from convtune.report.best import trial_summary

    unit = "samples" if spec.cost == "samples" else "s"
    table = Table(title=f"{study.study_name}: target {spec.target}, cost {spec.cost}")
    for column in (
        "#",
        "status",
        f"time to target ({unit})",
        "eff. batch",
        "optimizer",
        "schedule",
        "peak_lr",
        "precision",
        "samples/s",
    ):
        table.add_column(
            column, justify="right" if column not in ("status", "optimizer", "schedule") else "left"
        )
    for trial in study.get_trials(deepcopy=False):
        row = trial_summary(trial)
        recipe = row["recipe"] or {}
        if row["time_to_target"] is not None:
            ttt = readable(row["time_to_target"])
        elif row["predicted_time_to_target"] is not None:
            ttt = f"~{readable(row['predicted_time_to_target'])} (forecast)"
        else:
            ttt = "–"
        table.add_row(
            str(row["trial"]),
            row["status"] or trial.state.name.lower(),
            ttt,
            readable(row["effective_batch_size"]),
            recipe.get("optimizer", "–"),
            recipe.get("schedule", "–"),
            readable(recipe.get("peak_lr")),
            recipe.get("precision", "–"),
            readable(row["samples_per_second"]),
        )
    console.print(table)


def _print_best(study: Any, spec: Any, storage: str | None) -> None:
    from convtune.report.best import best_report
    from convtune.storage import default_artifact_dir, redact, resolve_storage_url

    report = best_report(study, spec)
    unit = report["cost_unit"]
    best = report["measured"]

    def faster(entry: dict[str, Any] | None) -> str:
        x = (entry or {}).get("speedup_over_baseline")
        return f", {x:.2f}× the baseline's speed" if x else ""

    if report.get("baseline"):
        b = report["baseline"]
        console.print(f"baseline: trial {b['trial']} ({b['status']}), {readable(b['time_to_target'])} {unit}")
    if report.get("confirmed"):
        c = report["confirmed"]
        before = "the search's run" if c.get("source") == "measured" else "predicted"
        console.print(
            f"[bold green]confirmed fastest to {spec.target}:[/] {readable(c['measured_mean'])} {unit} mean over "
            f"{len(c['trials'])} seeds (range {readable(c['measured_min'])}–{readable(c['measured_max'])}; "
            f"{before} {readable(c['predicted'])}){faster(c)}"
        )
        console.print(f"  {describe_recipe(c.get('recipe'))}")
    if best:
        console.print(
            f"[bold green]fastest measured to {spec.target}:[/] trial {best['trial']} in "
            f"{readable(best['time_to_target'])} {unit}{faster(best)}"
        )
        console.print(f"  {describe_recipe(best['recipe'])}")
        if not report.get("confirmed"):
            print_runner_up_hint(study.study_name, report["runners_up"])
    else:
        console.print(f"[bold yellow]no trial reached {spec.target} yet[/]")
        if report["best_forecast"]:
            f = report["best_forecast"]
            console.print(
                f"closest: trial {f['trial']}, forecast {readable(f['predicted_time_to_target'])} {unit}"
            )
    if report["forecasts"]["far_tail"]:
        console.print(
            f"[bold yellow]forecasts:[/] {report['forecasts']['verdict']} (convtune study forecasts "
            f"{shlex.quote(study.study_name)})",
            soft_wrap=True,
            highlight=False,
        )
    pred = report.get("predicted")
    if pred:
        low, high = pred["interval"]
        ran = (
            f"measured by trial {pred['measured_trial']}"
            if pred["measured_trial"] is not None
            else f"no trial ran it; nearest is trial {pred['nearest_trial']}"
        )
        console.print(
            f"[bold cyan]predicted fastest:[/] {readable(pred['time_to_target'])} {unit} "
            f"({pred['level']:.0%} interval {readable(low)}–{readable(high)}; {ran}; fits: "
            f"{', '.join(pred['supported_by']) or 'none'}){faster(pred)}"
        )
        console.print(f"  {describe_recipe(pred['recipe'])}")
    elif report.get("predicted_unavailable"):
        console.print(f"predicted fastest: not yet ({report['predicted_unavailable']})")
    name = shlex.quote(study.study_name)
    if best or report.get("confirmed") or pred:
        console.print(
            f"every knob: convtune study best {name} --json; into your code: convtune study export {name} "
            f"--format yaml|json|hf|python (--predicted for the prediction)"
        )
    url = resolve_storage_url(storage or spec.storage)
    artifacts = spec.artifacts or str(default_artifact_dir(url))
    console.print(
        f"open in optuna-dashboard: optuna-dashboard {shlex.quote(redact(url))} --artifact-dir {shlex.quote(artifacts)}"
    )


@study_app.command("list")
def study_list(
    storage: StorageOpt = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print a JSON list instead of a table.")] = False,
) -> None:
    """List the studies in a storage."""
    import optuna

    from convtune.config.record import study_attrs
    from convtune.storage import open_storage

    summaries = optuna.get_all_study_summaries(open_storage(storage), include_best_trial=False)
    if as_json:
        rows = [
            {
                "study": s.study_name,
                "trials": s.n_trials,
                "target": study_attrs(s).get("target"),
                "cost": study_attrs(s).get("cost"),
                "created": s.datetime_start.isoformat() if s.datetime_start else None,
            }
            for s in summaries
        ]
        print(json.dumps(rows, indent=2))
        return
    table = Table()
    for column in ("study", "trials", "target", "cost", "created"):
        table.add_column(column)
    for s in summaries:
        table.add_row(
            s.study_name,
            str(s.n_trials),
            str(study_attrs(s).get("target", "–")),
            str(study_attrs(s).get("cost", "–")),
            s.datetime_start.strftime("%Y-%m-%d %H:%M") if s.datetime_start else "–",
        )
    console.print(table)


@study_app.command("show")
def study_show(
    name: Annotated[str, typer.Argument(help="Study to show.")],
    storage: StorageOpt = None,
    as_json: Annotated[
        bool, typer.Option("--json", help="Print every trial as JSON (the fields of `best --json`).")
    ] = False,
) -> None:
    """Show every trial: status, time-to-target (measured or forecast) and its knobs."""
    _print_study(name, storage, as_json, lambda study, _spec: _trials_json(study), _print_trials)


@study_app.command("best")
def study_best(
    name: Annotated[str, typer.Argument(help="Study to read.")],
    storage: StorageOpt = None,
    as_json: Annotated[
        bool, typer.Option("--json", help="Print the documented JSON instead of text.")
    ] = False,
) -> None:
    """The fastest configuration to the target, with its time-to-target."""
    from convtune.report.best import best_report

    _print_study(name, storage, as_json, best_report, lambda study, spec: _print_best(study, spec, storage))


@study_app.command("forecasts")
def study_forecasts(
    name: Annotated[str, typer.Argument(help="Study to check.")],
    storage: StorageOpt = None,
    as_json: Annotated[
        bool, typer.Option("--json", help="Print the summary and every check as JSON.")
    ] = False,
) -> None:
    """How well the forecaster did on this study's own trials, whose outcome is known.

    Each trial that reached the target or ran to its end is cut at 10%, 25% and 50% of its
    planned run and forecast from that prefix, as the pruner would have; the forecast is scored
    against how the trial really ended, and the study's own bias is shown: the mean probability
    the forecasts gave of reaching within the run against the share that did (`--json`:
    `mean_probability` and `study_offset`, the logit shift that closes the gap).
    Stopped trials cannot be checked (their outcome is unknown), so a study with `pruner: none`,
    or its `convtune study confirm` runs, gives the most to check. Trains nothing.
    """
    from convtune.report.forecasts import audit_forecasts

    _print_study(
        name,
        storage,
        as_json,
        lambda study, spec: audit_forecasts(study, spec).to_dict(),
        lambda study, spec: _print_forecasts(study, spec, audit_forecasts(study, spec)),
    )


def _print_forecasts(study: Any, spec: Any, audit: Any) -> None:
    from convtune.config.record import cost_unit, step_scale

    def share(k: int, n: int) -> str:
        return f"{k} of {n}" if n else "–"

    table = Table(title=f"{study.study_name}: forecasts against outcomes (target {spec.target})")
    for column in (
        "cut (of the run)",
        "reached later",
        "median error",
        "within 20%",
        f"{audit.level:.0%} interval covers",
        "estimate ÷ truth",
        f"gave < {audit.epsilon:g}",
        "did not reach",
        'called "not within the run"',
    ):
        table.add_column(column, justify="right")
    rows = [audit.summary(cut) for cut in audit.cuts]
    for row in rows:
        far = ", ".join(str(n) for n in row.far_tail)
        table.add_row(
            f"{row.cut:.0%}",
            str(row.n_reached),
            "–" if math.isnan(row.median_error) else f"{row.median_error:.2f}",
            share(row.within, row.n_reached),
            share(row.covered, row.n_reached),
            "–"
            if math.isnan(row.late_ratio)
            else f"{row.late_ratio:.2f}"
            if row.late_ratio < 100
            else "≥ 100",
            f"trial {far}" if far else ("none" if row.n_reached else "–"),
            str(row.n_not_reached),
            share(row.called, row.n_not_reached),
        )
    console.print(
        f"{audit.checked} of {audit.trained} trained trials have a known outcome and were checked",
        highlight=False,
    )
    console.print(table)
    judged = [row for row in rows if not math.isnan(row.mean_probability)]
    if judged:
        said = [f"{row.mean_probability:.2f} → {row.reached_share:.2f} at {row.cut:.0%}" for row in judged]
        offsets = [row.study_offset for row in judged]
        lean = (
            ": the forecasts ran low on this study"
            if min(offsets) > 0.5
            else ": the forecasts ran high on this study"
            if max(offsets) < -0.5
            else ""
        )
        console.print(
            "reaching within the run, the forecasts' mean probability → the share that did: "
            + ", ".join(said)
            + lean,
            soft_wrap=True,
            highlight=False,
        )
    colour = "yellow" if audit.far_tail else "green"
    console.print(f"[bold {colour}]{audit.verdict()}[/]", soft_wrap=True, highlight=False)
    scale, unit = step_scale(spec.cost), cost_unit(spec.cost)
    for check in audit.checks:
        if check.in_far_tail(audit.epsilon):
            f = check.forecast
            said = "not within the run" if check.called_not_within else readable(f.estimate / scale)
            console.print(
                f"  trial {check.trial}, from {check.cut:.0%} of its run ({readable(check.seen / scale)} {unit}): "
                f"forecast {said} ({audit.level:.0%} interval "
                f"{readable(f.low / scale)}–{readable(f.high / scale)}), {check.probability_by_truth:.2g} of "
                f"crossing by {readable(check.truth / scale)}, where it crossed",
                soft_wrap=True,
                highlight=False,
            )
    for note in audit.notes:
        console.print(f"note: {note}", soft_wrap=True, highlight=False)
    console.print(
        "for comparison, on workloads the forecaster was not fitted on: median error 0.23 at 25% of "
        "the run, 0.14 at 50% (README, Results)",
        soft_wrap=True,
        highlight=False,
    )


def _print_study(
    name: str,
    storage: str | None,
    as_json: bool,
    as_data: Callable[[Any, Any], Any],
    as_text: Callable[[Any, Any], None],
) -> None:
    """Open study ``name`` and print ``as_data(study, spec)`` as JSON, or ``as_text`` it."""
    from convtune.study import open_study

    study, spec = open_study(name, storage)
    if as_json:
        print(json.dumps(as_data(study, spec), indent=2, default=str))
        return
    as_text(study, spec)


@study_app.command("delete")
def study_delete(
    name: Annotated[str, typer.Argument(help="Study to delete.")],
    storage: StorageOpt = None,
    yes: Annotated[bool, typer.Option("--yes", help="Do not ask for confirmation.")] = False,
) -> None:
    """Delete a study and all its trials."""
    import optuna

    from convtune.study import open_study

    study, _ = open_study(name, storage)
    if not yes and not typer.confirm(f"delete study {name!r} and its {len(study.trials)} trials?"):
        raise typer.Exit(1)
    optuna.delete_study(study_name=name, storage=study._storage)
    console.print(f"deleted {name}")


study_app.command("export")(study_export)
study_app.command("confirm")(study_confirm)
study_app.command("plot")(study_plot)
