"""Export a Recipe for the user's own training code: one registered :class:`Exporter` per format.

Formats:

* ``yaml`` / ``json`` — the whole Recipe plus where it came from (study, trial, target, measured
  or predicted time-to-target, convtune version). :func:`convtune.load_recipe` reads it back to an
  equal Recipe, so ``recipe.optimizer(model)`` / ``recipe.scheduler(opt)`` are step-for-step what
  the trial ran.
* ``hf`` — keyword arguments for ``transformers.TrainingArguments``, with notes wherever a knob
  has no exact Trainer equivalent and how to get it anyway.
* ``python`` — a standalone module (torch only; pytorch_optimizer for LAMB/LARS/Lion) defining
  ``build_optimizer``, ``build_scheduler``, ``grad_scaler``, ``autocast`` and constants. The
  recipe is written into it as one JSON string literal: values from a study are data, never code.

Export needs only a Recipe and a little metadata (the CLI picks the trial). Example::

    >>> from convtune.export import ExportDocument, export
    >>> doc = ExportDocument(recipe=recipe, study="demo", trial=3)     # doctest: +SKIP
    >>> export(doc, "hf", "best.hf.json")                              # doctest: +SKIP

A new format is one :func:`register_exporter` call.
"""

from __future__ import annotations

import abc
import json
import math
from dataclasses import dataclass, field, replace
from importlib import resources
from pathlib import Path
from typing import Any, ClassVar

import yaml

from convtune import __version__
from convtune.config.optim import OPTIMIZERS
from convtune.config.recipe import Recipe
from convtune.config.schedules import SCHEDULES
from convtune.errors import ConfigError

#: Written into every export; ``load_recipe`` uses it to tell an export from a foreign file.
EXPORT_KEY = "convtune_export"
EXPORT_VERSION = 1


@dataclass(frozen=True)
class ExportDocument:
    """A recipe and where it came from: what every format writes.

    ``source`` is ``confirmed``, ``measured``, ``trial`` (chosen with ``--trial``) or ``predicted``.
    ``time_to_target`` is measured (for ``confirmed``, the mean over the confirm seeds);
    ``predicted_time_to_target`` is a forecast (either may be None).
    """

    recipe: Recipe
    study: str | None = None
    trial: int | None = None
    source: str = "measured"
    target: str | None = None
    cost: str | None = None
    cost_unit: str | None = None
    time_to_target: float | None = None
    predicted_time_to_target: float | None = None
    status: str | None = None
    extra: dict[str, Any] = field(default_factory=dict)

    def metadata(self) -> dict[str, Any]:
        """Plain data describing the export (everything but the recipe)."""
        meta: dict[str, Any] = {
            EXPORT_KEY: EXPORT_VERSION,
            "convtune_version": __version__,
            "study": self.study,
            "trial": self.trial,
            "source": self.source,
            "status": self.status,
            "target": self.target,
            "cost": self.cost,
            "cost_unit": self.cost_unit,
            "time_to_target": _finite(self.time_to_target),
            "predicted_time_to_target": _finite(self.predicted_time_to_target),
        }
        meta.update(self.extra)
        return meta

    def to_dict(self) -> dict[str, Any]:
        """Metadata plus ``recipe`` (every knob, effective batch, total steps, world size)."""
        return {**self.metadata(), "recipe": self.recipe.to_dict()}


def _finite(value: float | None) -> float | None:
    return float(value) if value is not None and math.isfinite(value) else None


class Exporter(abc.ABC):
    """One export format. Subclasses set ``name``/``suffix`` (and a one-line ``description``),
    implement :meth:`render`, and are added with :func:`register_exporter` (example there)."""

    name: ClassVar[str]
    suffix: ClassVar[str]
    description: ClassVar[str] = ""

    @abc.abstractmethod
    def render(self, doc: ExportDocument, path: Path | None = None) -> str:
        """The file's text. ``path`` (where it will be written) may pick a sub-format."""


EXPORTERS: dict[str, Exporter] = {}


def register_exporter(exporter: Exporter) -> Exporter:
    """Add (or replace) the export format ``exporter.name``; returns the exporter.

    ``convtune study export --format NAME`` and :func:`render` / :func:`export` then accept it.
    An exporter writes from an :class:`ExportDocument` (the recipe plus where it came from);
    ``suffix`` is the format's usual file ending. Keep values from a study as data: quote them
    into the file, never evaluate them.

    >>> from convtune.config.recipe import Recipe
    >>> from convtune.export import EXPORTERS, ExportDocument, Exporter, register_exporter, render
    >>> class EnvExporter(Exporter):
    ...     name, suffix, description = "env", ".env", "shell variables"
    ...     def render(self, doc, path=None):
    ...         r = doc.recipe
    ...         return f"LR={r.peak_lr} BATCH={r.micro_batch_size} ACCUM={r.grad_accum_steps}"
    >>> _ = register_exporter(EnvExporter())
    >>> recipe = Recipe(peak_lr=0.003, horizon_samples=4096, micro_batch_size=32, grad_accum_steps=2)
    >>> render(ExportDocument(recipe=recipe, study="demo", trial=3), "env")
    'LR=0.003 BATCH=32 ACCUM=2'
    >>> del EXPORTERS["env"]
    """
    EXPORTERS[exporter.name] = exporter
    return exporter


def _dump(data: dict[str, Any], path: Path | None) -> str:
    """JSON for ``.json`` paths, YAML otherwise (safe_dump: plain data, readable by safe_load)."""
    if path is not None and path.suffix == ".json":
        return json.dumps(data, indent=2) + "\n"
    return yaml.safe_dump(data, sort_keys=False, width=100)


class YamlExporter(Exporter):
    """The recipe file that ``convtune.load_recipe`` reads (YAML)."""

    name = "yaml"
    suffix = ".yaml"
    description = "recipe file for convtune.load_recipe"

    def render(self, doc: ExportDocument, path: Path | None = None) -> str:
        header = (
            "# convtune recipe export: recipe = convtune.load_recipe(this_file)\n"
            "# then recipe.optimizer(model), recipe.scheduler(opt), recipe.grad_scaler(), recipe.autocast()\n"
        )
        return header + yaml.safe_dump(doc.to_dict(), sort_keys=False, width=100)


class JsonExporter(Exporter):
    """The recipe file that ``convtune.load_recipe`` reads (JSON)."""

    name = "json"
    suffix = ".json"
    description = "recipe file for convtune.load_recipe"

    def render(self, doc: ExportDocument, path: Path | None = None) -> str:
        return json.dumps(doc.to_dict(), indent=2) + "\n"


# ---- Hugging Face --------------------------------------------------------------------------------

_HF_WARMUP_NOTE = (
    "warmup: Hugging Face warms up with factor step/W (its first optimizer step runs at LR 0); "
    "convtune uses (step+1)/(W+1). The LR differs by at most peak_lr/(W+1) during the first "
    "{w} steps and is identical from step {w} on. For the exact schedule, pass "
    "optimizers=(opt, sched) built from convtune.load_recipe (see 'exact')."
)


def hf_training_arguments(recipe: Recipe) -> tuple[dict[str, Any], list[str]]:
    """``TrainingArguments`` keyword arguments for ``recipe``, and notes on what is not exact.

    The Trainer's schedules are ``get_scheduler(name, warmup, max_steps, **lr_scheduler_kwargs)``;
    cosine/linear/constant after warm-up use the same formulas as convtune's over ``max_steps``.
    Knobs with no Trainer equivalent are left out of the arguments and named in the notes.
    """
    notes: list[str] = []
    p = dict(recipe.optimizer_params)
    args: dict[str, Any] = {
        "learning_rate": recipe.peak_lr,
        "per_device_train_batch_size": recipe.micro_batch_size,
        "gradient_accumulation_steps": recipe.grad_accum_steps,
        # max_steps is the schedule's planned horizon; the target was reached at time_to_target.
        "max_steps": recipe.total_steps,
        # 0 disables the Trainer's clipping (its default is 1.0, which would clip when we did not).
        "max_grad_norm": recipe.clip_norm if recipe.clip_norm is not None else 0.0,
        "weight_decay": float(p.get("weight_decay", 0.0)),
        "bf16": recipe.precision == "bf16",
        "fp16": recipe.precision == "fp16",
    }
    # Optimizer.
    entry = OPTIMIZERS[recipe.optimizer_name]
    if entry.hf_optim is not None:
        args["optim"] = entry.hf_optim
    else:
        notes.append(
            f"optimizer: {recipe.optimizer_name} has no TrainingArguments.optim equivalent; "
            "pass optimizers=(recipe.optimizer(model), recipe.scheduler(opt)) to Trainer "
            "(recipe = convtune.load_recipe(this file))."
        )
    if "beta1" in p:
        args["adam_beta1"] = float(p["beta1"])
        args["adam_beta2"] = float(p["beta2"])
    if "eps" in p:
        args["adam_epsilon"] = float(p["eps"])
    if recipe.optimizer_name == "sgd" and float(p.get("momentum", 0.0)) > 0:
        notes.append(
            f"optimizer: the Trainer's optim='sgd' is torch SGD without momentum; this recipe uses "
            f"momentum={p['momentum']} nesterov={p.get('nesterov')}. Pass optimizers=(opt, sched) "
            "built by convtune.load_recipe for the measured optimizer."
        )
    if float(p.get("weight_decay", 0.0)) > 0:
        notes.append(
            "weight_decay: the Trainer exempts biases and LayerNorm weights; convtune also exempts "
            "embeddings and other norm layers. Identical for models without embeddings or other norms."
        )
    # Schedule.
    sched = SCHEDULES[recipe.schedule]
    floor = float(recipe.schedule_params.get("min_lr_ratio", 0.0))
    exact_schedule = True
    if recipe.schedule == "cosine" and floor > 0:
        args["lr_scheduler_type"] = "cosine_with_min_lr"
        args["lr_scheduler_kwargs"] = {"min_lr_rate": floor}
    elif recipe.schedule == "linear" and floor > 0:
        exact_schedule = False
        notes.append(
            f"schedule: linear decay to min_lr_ratio={floor} has no Trainer equivalent; "
            "pass optimizers=(opt, sched) built by convtune.load_recipe."
        )
    elif sched.hf_scheduler is not None:
        args["lr_scheduler_type"] = sched.hf_scheduler
        args["lr_scheduler_kwargs"] = {}
    else:
        exact_schedule = False
        notes.append(
            f"schedule: {recipe.schedule} {dict(recipe.schedule_params)} has no Trainer equivalent "
            "(lr_scheduler_type is left out); pass optimizers=(opt, sched) with "
            "recipe = convtune.load_recipe(this file), opt = recipe.optimizer(model), "
            "sched = recipe.scheduler(opt); the Trainer steps it once per optimizer step."
        )
    if exact_schedule and recipe.uses_warmup:
        args["warmup_steps"] = recipe.warmup_steps
        if recipe.warmup_steps > 0:
            notes.append(_HF_WARMUP_NOTE.format(w=recipe.warmup_steps))
    if recipe.world_size > 1:
        notes.append(
            f"world_size: the trial ran on {recipe.world_size} ranks; launch the Trainer on "
            f"{recipe.world_size} processes (torchrun --nproc-per-node ...) to keep the effective "
            f"batch of {recipe.effective_batch_size}."
        )
    return args, notes


def hf_exactness(recipe: Recipe) -> tuple[bool, list[str]]:
    """Whether ``TrainingArguments(**training_arguments)`` alone trains ``recipe`` exactly, and
    the notes that say why not. Only the world-size note leaves it exact (it is about the launch)."""
    _, notes = hf_training_arguments(recipe)
    return all(note.startswith("world_size:") for note in notes), notes


_HF_EXACT_USAGE = "TrainingArguments(output_dir=..., **training_arguments)"
_HF_OBJECTS_USAGE = (
    "recipe = convtune.load_recipe(this file); opt = recipe.optimizer(model); "
    "Trainer(model=model, args=TrainingArguments(output_dir=..., **training_arguments), ..., "
    "optimizers=(opt, recipe.scheduler(opt)))"
)


class HfExporter(Exporter):
    """``TrainingArguments`` keyword arguments (JSON for ``.json`` paths, YAML otherwise).

    ``exact`` (the file's first key) says whether the arguments alone train the recipe. When
    they do not (LAMB, LARS, Lion, SGD with momentum, cyclic or one-cycle schedules, convtune's
    warm-up, its weight-decay exemptions), ``usage`` passes the recipe's own optimizer and
    scheduler, which is exact step for step; the file holds the recipe for that::

        doc = json.load(open("best.hf.json"))
        recipe = convtune.load_recipe("best.hf.json")
        opt = recipe.optimizer(model)
        trainer = Trainer(model=model, args=TrainingArguments(output_dir="out", **doc["training_arguments"]),
                          optimizers=(opt, recipe.scheduler(opt)), ...)
    """

    name = "hf"
    suffix = ".hf.json"
    description = "Hugging Face TrainingArguments keyword arguments"

    def render(self, doc: ExportDocument, path: Path | None = None) -> str:
        args, _ = hf_training_arguments(doc.recipe)
        exact, notes = hf_exactness(doc.recipe)
        data = {
            "exact": exact,
            **doc.metadata(),
            "format": "hf",
            "usage": _HF_EXACT_USAGE if exact else _HF_OBJECTS_USAGE,
            "training_arguments": args,
            "notes": notes,
            "exact_objects": _HF_OBJECTS_USAGE,
            "recipe": doc.recipe.to_dict(),
        }
        text = _dump(data, path)
        if not exact and not (path is not None and path.suffix == ".json"):
            text = (
                "# NOT EXACT: TrainingArguments(**training_arguments) alone trains another optimizer or\n"
                "# schedule than the trial did; pass optimizers= as 'usage' says (see 'notes').\n" + text
            )
        return text


# ---- standalone Python module --------------------------------------------------------------------

_PLACEHOLDER = '_DOCUMENT = "{}"\n'


class PythonExporter(Exporter):
    """A standalone module (torch only) that rebuilds the trial's optimizer and schedule.

    The module is a fixed template (``convtune/export/_template.py``); the only thing written
    into it is one line, ``_DOCUMENT = <repr of a JSON string>``. ``repr`` of a ``str`` is always
    a valid, inert string literal, and the JSON is ASCII-escaped, so optimizer names, parameters
    or study names cannot become code.
    """

    name = "python"
    suffix = ".py"
    description = "standalone PyTorch module"

    def render(self, doc: ExportDocument, path: Path | None = None) -> str:
        template = resources.files("convtune.export").joinpath("_template.py").read_text("utf-8")
        if template.count(_PLACEHOLDER) != 1:  # pragma: no cover - guards edits of the template
            raise RuntimeError("the export template must hold exactly one _DOCUMENT placeholder")
        payload = json.dumps(doc.to_dict(), ensure_ascii=True, sort_keys=True)
        return template.replace(_PLACEHOLDER, f"_DOCUMENT = {payload!r}\n")


register_exporter(YamlExporter())
register_exporter(JsonExporter())
register_exporter(HfExporter())
register_exporter(PythonExporter())


def get_exporter(name: str) -> Exporter:
    if name not in EXPORTERS:
        raise ConfigError(
            f"unknown export format {name!r}",
            where="--format",
            fix=f"choose one of {', '.join(EXPORTERS)}",
        )
    return EXPORTERS[name]


def render(doc: ExportDocument, format: str, path: str | Path | None = None) -> str:
    """The text of ``doc`` in ``format``."""
    return get_exporter(format).render(doc, Path(path) if path is not None else None)


def export(doc: ExportDocument, format: str, path: str | Path) -> Path:
    """Write ``doc`` to ``path`` in ``format``; a :class:`ConfigError` if the path is unwritable."""
    path = Path(path)
    text = render(doc, format, path)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    except OSError as exc:
        raise ConfigError(f"cannot write the export: {exc.strerror}", where=str(path)) from None
    return path


# ---- choosing what to export from a study ----------------------------------------------------------


def document_for_trial(study: Any, spec: Any, trial: Any, source: str) -> ExportDocument:
    """An :class:`ExportDocument` for one finished trial (a ``FrozenTrial``) of a convtune study."""
    from convtune.config.record import TrialRecord, cost_unit

    record = TrialRecord.of(trial)
    if not record.recipe:
        raise ConfigError(
            f"trial {trial.number} has no recipe (state {trial.state.name})",
            where=f"study {study.study_name}",
            fix="choose a trial that ran",
        )
    return ExportDocument(
        recipe=Recipe.from_dict(dict(record.recipe), where=f"study {study.study_name} trial {trial.number}"),
        study=study.study_name,
        trial=trial.number,
        source=source,
        status=record.stored_status,
        target=spec.target,
        cost=spec.cost,
        cost_unit=cost_unit(spec.cost),
        time_to_target=record.time_to_target,
        predicted_time_to_target=record.predicted_time_to_target,
    )


def _confirmed_document(study: Any, spec: Any) -> ExportDocument | None:
    """The fastest reached trial of the best confirmed configuration, if any was confirmed.

    ``convtune study confirm`` re-runs predicted configurations over seeds (confirmation trials); the best configuration is the one whose every seed reached the target with
    the lowest mean (``convtune.scaling.best_confirmed``), and the document is timed by that
    mean (``confirmed_times`` holds each seed's): the fastest seed alone would flatter it.
    Without the recommender, any reached confirmation trial counts, by its own time.
    """
    from optuna.trial import TrialState

    from convtune.config.record import TrialRecord

    reached = [
        t
        for t in study.get_trials(deepcopy=False, states=(TrialState.COMPLETE,))
        if (record := TrialRecord.of(t)).confirmation and record.reached
    ]
    try:
        from convtune.scaling import best_confirmed
    except ImportError:
        best = None
    else:
        best = best_confirmed(study)
    if best is not None:
        reached = [t for t in reached if t.number in set(best.get("trials", ()))] or reached
    if not reached:
        return None
    trial = min(reached, key=lambda t: t.value)
    doc = document_for_trial(study, spec, trial, "confirmed")
    if best is None or trial.number not in best.get("trials", ()):
        return doc
    return replace(
        doc,
        time_to_target=best["measured_mean"],
        extra={"confirmed_times": best["times"], "confirmed_trials": best["trials"]},
    )


def predicted_document(study: Any, spec: Any) -> ExportDocument:
    """The recommender's predicted fastest recipe (``convtune.scaling.recommend``), if it exists."""
    from convtune.config.record import cost_unit

    try:
        from convtune.scaling import recommend  # written alongside; optional until it lands
    except ImportError:
        raise ConfigError(
            "no prediction available yet (this convtune has no recommender)",
            where=f"study {study.study_name}",
            fix="export the measured best (drop --predicted) or a trial with --trial N",
        ) from None
    try:
        rec = recommend(study, spec)
    except Exception as exc:  # too few trials to fit is the user's situation, not a crash
        why = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        raise ConfigError(
            f"no prediction available yet: {why}",
            where=f"study {study.study_name}",
            fix="run more trials, or export the measured best (drop --predicted)",
        ) from None
    recipe = rec.recipe
    if not isinstance(recipe, Recipe):
        recipe = Recipe.from_dict(recipe, where="recommendation")
    return ExportDocument(
        recipe=recipe,
        study=study.study_name,
        trial=rec.measured_trial,  # None: a configuration no trial ran
        source="predicted",
        target=spec.target,
        cost=spec.cost,
        cost_unit=cost_unit(spec.cost),
        time_to_target=rec.measured_time,
        predicted_time_to_target=rec.time_to_target,
        extra={"predicted_interval": [float(v) for v in rec.interval], "predicted_level": rec.level},
    )


def select_document(
    study: Any, spec: Any, *, trial: int | None = None, predicted: bool = False
) -> ExportDocument:
    """What ``convtune study export`` writes: ``--trial N``, ``--predicted``, else the confirmed
    best, else the measured best (a trial that reached the target)."""
    from convtune.report.best import measured_best

    if trial is not None and predicted:
        raise ConfigError("give --trial or --predicted, not both", where="study export")
    if predicted:
        return predicted_document(study, spec)
    if trial is not None:
        trials = study.get_trials(deepcopy=False)
        if not 0 <= trial < len(trials):
            raise ConfigError(
                f"no trial {trial}", where=f"study {study.study_name}", fix=f"choose 0..{len(trials) - 1}"
            )
        chosen = next(t for t in trials if t.number == trial)
        return document_for_trial(study, spec, chosen, "trial")
    confirmed = _confirmed_document(study, spec)
    if confirmed is not None:
        return confirmed
    best = measured_best(study)
    if best is None:
        raise ConfigError(
            f"no trial reached {spec.target} yet",
            where=f"study {study.study_name}",
            fix="run more trials, or export one with --trial N (or --predicted)",
        )
    return document_for_trial(study, spec, best, "measured")
