"""Export: every format rebuilds, in a plain user loop, the LR per step and optimizer state the
trial had; Hugging Face arguments follow HF's documented schedule formulas; nothing from a study
becomes code; load_recipe rejects bad and foreign files with one clear line."""

from __future__ import annotations

import importlib.util
import json
import math
import sys
from collections.abc import Callable
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest
import torch
import yaml
from specs import TinyStudy
from torch import nn

from convtune import load_recipe
from convtune.config.recipe import Recipe
from convtune.config.record import TrialRecord
from convtune.errors import ConfigError
from convtune.export import ExportDocument, export, hf_training_arguments, render

BASE = {"peak_lr": 0.05, "horizon_samples": 12 * 8, "micro_batch_size": 8}  # total_steps = 12
CASES: dict[str, dict[str, Any]] = {
    "adamw-cosine": {"schedule": "cosine", "warmup_steps": 3, "clip_norm": 1.0},
    "adamw-cosine-floor": {"schedule": "cosine", "warmup_steps": 2, "schedule_params": {"min_lr_ratio": 0.1}},
    "sgd-linear": {"schedule": "linear", "warmup_steps": 2, "optimizer": "sgd"},
    "sgd-constant": {"schedule": "constant", "warmup_steps": 4, "optimizer": "sgd", "grad_accum_steps": 2},
    "adamw-cyclic": {
        "schedule": "cyclic",
        "warmup_steps": 2,
        "schedule_params": {"half_period_steps": 3, "mode": "triangular2", "base_lr_ratio": 0.2},
    },
    "lamb-onecycle": {"schedule": "onecycle", "optimizer": "lamb", "precision": "bf16"},
    "lars-cosine": {"schedule": "cosine", "optimizer": "lars", "optimizer_params": {"weight_decay": 0.01}},
    "lion-constant": {"schedule": "constant", "optimizer": "lion"},
}
N_STEPS = 15  # past total_steps: the LR must hold there, as in the engine


def _recipe(case: str) -> Recipe:
    return Recipe(**BASE, **CASES[case])


def _model() -> nn.Module:
    torch.manual_seed(0)
    # An embedding, a matrix, biases and a norm: every weight-decay group rule is exercised.
    return nn.Sequential(nn.Embedding(10, 4), nn.Flatten(), nn.Linear(8, 6), nn.LayerNorm(6), nn.Linear(6, 3))


def user_loop(
    build_optimizer: Callable[[nn.Module], torch.optim.Optimizer],
    build_scheduler: Callable[[torch.optim.Optimizer], Any],
    total_steps: int,
) -> tuple[list[list[float]], dict[str, Any], dict[str, torch.Tensor]]:
    """A plain training loop: the LR of each param group at every optimizer step, final states."""
    model = _model()
    opt = build_optimizer(model)
    sched = build_scheduler(opt)
    gen = torch.Generator().manual_seed(1)
    lrs = []
    for step in range(N_STEPS):
        x = torch.randint(0, 10, (5, 2), generator=gen)
        model(x).pow(2).mean().backward()
        lrs.append([g["lr"] for g in opt.param_groups])
        opt.step()
        opt.zero_grad(set_to_none=True)
        if step + 1 < total_steps:
            sched.step()
    return lrs, opt.state_dict(), model.state_dict()


def _assert_same_state(a: dict[str, Any], b: dict[str, Any]) -> None:
    assert a["param_groups"] == b["param_groups"]
    assert a["state"].keys() == b["state"].keys()
    for key, state in a["state"].items():
        for name, value in state.items():
            other = b["state"][key][name]
            if isinstance(value, torch.Tensor):
                assert torch.equal(value, other), f"state {key}.{name} differs"
            else:
                assert value == other


def import_module_from(path: Path, name: str) -> ModuleType:
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.mark.parametrize("case", sorted(CASES))
def test_every_format_rebuilds_the_trials_lr_and_optimizer_state(case: str, tmp_path: Path) -> None:
    recipe = _recipe(case)
    # The trial's own path: what the engine calls (recipe.optimizer / recipe.scheduler).
    ref_lrs, ref_state, ref_model = user_loop(recipe.optimizer, recipe.scheduler, recipe.total_steps)
    assert [lr[0] for lr in ref_lrs[: recipe.total_steps]] == pytest.approx(list(recipe.lr_per_step), abs=0)
    doc = ExportDocument(recipe=recipe, study="s", trial=3, target="accuracy>=0.9", time_to_target=96.0)

    loaded: list[tuple[str, Recipe]] = []
    for fmt, name in (
        ("yaml", "best.yaml"),
        ("json", "best.json"),
        ("hf", "best.hf.json"),
        ("hf", "best.hf.yaml"),
    ):
        loaded.append((name, load_recipe(export(doc, fmt, tmp_path / name))))
    for name, back in loaded:
        assert back == recipe, name
        lrs, state, weights = user_loop(back.optimizer, back.scheduler, back.total_steps)
        assert lrs == ref_lrs, name
        _assert_same_state(state, ref_state)
        assert all(torch.equal(weights[k], ref_model[k]) for k in ref_model), name

    module = import_module_from(export(doc, "python", tmp_path / f"best_{case.replace('-', '_')}.py"), "best")
    assert module.TOTAL_STEPS == recipe.total_steps
    assert module.MICRO_BATCH_SIZE == recipe.micro_batch_size
    assert module.GRAD_ACCUM_STEPS == recipe.grad_accum_steps
    assert module.EFFECTIVE_BATCH_SIZE == recipe.effective_batch_size
    assert module.CLIP_NORM == recipe.clip_norm
    assert module.META["trial"] == 3 and module.META["study"] == "s"
    lrs, state, weights = user_loop(module.build_optimizer, module.build_scheduler, module.TOTAL_STEPS)
    assert lrs == ref_lrs
    _assert_same_state(state, ref_state)
    assert all(torch.equal(weights[k], ref_model[k]) for k in ref_model)
    assert module.grad_scaler("cpu").is_enabled() == recipe.grad_scaler("cpu").is_enabled()
    assert type(module.autocast("cpu")) is type(recipe.autocast("cpu"))


def test_export_documents_carry_target_time_version_study_and_trial(tmp_path: Path) -> None:
    recipe = _recipe("adamw-cosine")
    doc = ExportDocument(
        recipe=recipe, study="demo", trial=7, target="val_loss<=2", cost="samples", time_to_target=1234.5
    )
    data = yaml.safe_load(export(doc, "yaml", tmp_path / "b.yaml").read_text())
    assert data["study"] == "demo" and data["trial"] == 7 and data["target"] == "val_loss<=2"
    assert data["time_to_target"] == 1234.5 and data["convtune_version"]
    assert data["recipe"]["effective_batch_size"] == recipe.effective_batch_size
    assert data["recipe"]["world_size"] == 1 and data["recipe"]["precision"] == "fp32"
    assert json.loads(render(doc, "json"))["recipe"] == recipe.to_dict()


def test_lightning_optimizers_steps_the_same_schedule_per_step() -> None:
    recipe = _recipe("adamw-cyclic")
    conf = recipe.lightning_optimizers(_model())
    assert set(conf) == {"optimizer", "lr_scheduler"}
    assert conf["lr_scheduler"]["interval"] == "step" and conf["lr_scheduler"]["frequency"] == 1
    opt, sched = conf["optimizer"], conf["lr_scheduler"]["scheduler"]
    lrs = []
    for _ in range(recipe.total_steps):  # Lightning: optimizer step, then scheduler step
        lrs.append(opt.param_groups[0]["lr"])
        opt.step()
        sched.step()
    assert lrs == list(recipe.lr_per_step)


# ---- Hugging Face: the documented get_scheduler formulas (transformers is not a dependency) ------


def hf_lambda(name: str, warmup: int, total: int, **kwargs: float) -> Callable[[int], float]:
    """``transformers.get_scheduler(name, num_warmup_steps, num_training_steps, scheduler_specific_kwargs)``."""

    def warm(step: int) -> float:
        return step / max(1, warmup)

    def linear(step: int) -> float:
        if step < warmup:
            return warm(step)
        return max(0.0, (total - step) / max(1, total - warmup))

    def cosine(step: int, min_lr_rate: float = 0.0) -> float:
        if step < warmup:
            return warm(step)
        progress = (step - warmup) / max(1, total - warmup)
        factor = 0.5 * (1.0 + math.cos(math.pi * 2.0 * 0.5 * progress))
        return max(0.0, factor * (1 - min_lr_rate) + min_lr_rate)

    def constant_with_warmup(step: int) -> float:
        return warm(step) if step < warmup else 1.0

    table = {
        "linear": linear,
        "cosine": cosine,
        "cosine_with_min_lr": lambda s: cosine(s, **kwargs),
        "constant_with_warmup": constant_with_warmup,
    }
    return table[name]


@pytest.mark.parametrize("case", ["adamw-cosine", "adamw-cosine-floor", "sgd-linear", "sgd-constant"])
@pytest.mark.parametrize("warmup", [0, 3])
def test_hf_arguments_give_the_same_lr_after_warmup(case: str, warmup: int) -> None:
    recipe = _recipe(case).model_copy(update={"warmup_steps": warmup})
    args, notes = hf_training_arguments(recipe)
    assert args["max_steps"] == recipe.total_steps
    assert args["learning_rate"] == recipe.peak_lr and args["warmup_steps"] == warmup
    assert args["per_device_train_batch_size"] == recipe.micro_batch_size
    assert args["gradient_accumulation_steps"] == recipe.grad_accum_steps
    assert args["max_grad_norm"] == (recipe.clip_norm or 0.0)
    hf = hf_lambda(args["lr_scheduler_type"], warmup, args["max_steps"], **args["lr_scheduler_kwargs"])
    for step, lr in enumerate(recipe.lr_per_step):
        expected = args["learning_rate"] * hf(step)
        if step >= warmup:  # identical formulas from the end of warm-up on
            assert lr == pytest.approx(expected, rel=1e-12, abs=1e-15), step
        else:  # HF: step/W, convtune: (step+1)/(W+1); the note quantifies the gap
            assert abs(lr - expected) <= recipe.peak_lr / (warmup + 1) + 1e-15
    assert any("warmup" in n for n in notes) == (warmup > 0)


def test_hf_arguments_for_adamw_and_precision() -> None:
    recipe = Recipe(
        **BASE, optimizer_params={"beta2": 0.95, "eps": 1e-6, "weight_decay": 0.0}, precision="bf16"
    )
    args, notes = hf_training_arguments(recipe)
    assert args["optim"] == "adamw_torch"
    assert (args["adam_beta1"], args["adam_beta2"], args["adam_epsilon"]) == (0.9, 0.95, 1e-6)
    assert args["bf16"] is True and args["fp16"] is False and args["weight_decay"] == 0.0
    assert notes == []  # exact: warmup 0, cosine, AdamW, no weight decay


@pytest.mark.parametrize(
    ("case", "fragment"),
    [
        ("adamw-cyclic", "schedule: cyclic"),
        ("lamb-onecycle", "schedule: onecycle"),
        ("lamb-onecycle", "optimizer: lamb"),
        ("lars-cosine", "optimizer: lars"),
        ("lion-constant", "optimizer: lion"),
        ("sgd-linear", "SGD without momentum"),
    ],
)
def test_hf_notes_say_what_has_no_trainer_equivalent_and_how_to_get_it(case: str, fragment: str) -> None:
    args, notes = hf_training_arguments(_recipe(case))
    note = next((n for n in notes if fragment in n), None)
    assert note is not None, notes
    assert "optimizers=" in note and "load_recipe" in note
    if fragment.startswith("schedule"):
        assert "lr_scheduler_type" not in args  # never a silently different schedule
    if fragment.startswith("optimizer: l"):
        assert "optim" not in args


# ---- no code injection through the python export ------------------------------------------------


def test_python_export_writes_study_strings_as_data_never_code(tmp_path: Path) -> None:
    marker = tmp_path / "pwned"
    evil = f"cos\"\"\"\n'''\nimport pathlib; pathlib.Path({str(marker)!r}).touch()\n#"
    recipe = Recipe(**BASE, schedule="onecycle", schedule_params={"anneal_strategy": evil})
    doc = ExportDocument(recipe=recipe, study=f"x\n{evil}", target=evil, trial=0)
    path = export(doc, "python", tmp_path / "evil.py")
    compile(path.read_text(), str(path), "exec")  # still valid Python
    module = import_module_from(path, "evil")
    assert not marker.exists()
    assert module.SCHEDULE_PARAMS["anneal_strategy"] == evil
    assert module.META["study"] == f"x\n{evil}" and module.META["target"] == evil
    # Only the one data line differs from the shipped template.
    template = (Path(__file__).resolve().parents[2] / "convtune" / "export" / "_template.py").read_text()
    changed = set(path.read_text().splitlines()) - set(template.splitlines())
    assert len(changed) == 1 and next(iter(changed)).startswith("_DOCUMENT = ")
    with pytest.raises(ValueError):  # an unknown strategy is torch's error at build time, not code
        module.build_scheduler(module.build_optimizer(_model()))
    assert not marker.exists()


# ---- load_recipe: bad and foreign files -----------------------------------------------------------


@pytest.mark.parametrize(
    ("name", "content", "fragment"),
    [
        ("spec.yaml", {"workload": "digits", "target": "accuracy>=0.9"}, "not a convtune recipe"),
        ("wrapped.yaml", {"recipe": [1, 2]}, "'recipe' key must hold a mapping"),
        ("bad.yaml", {"recipe": {**BASE, "peak_lr": -1}}, "peak_lr"),
        ("unknown.json", {"recipe": {**BASE, "optimizer": "adam9"}}, "unknown optimizer"),
        ("derived.yaml", {**BASE, "total_steps": 5}, "total_steps is 5"),
        ("list.yaml", [1, 2], "expected a mapping"),
    ],
)
def test_load_recipe_rejects_bad_and_foreign_files(
    tmp_path: Path, name: str, content: Any, fragment: str
) -> None:
    path = tmp_path / name
    path.write_text(json.dumps(content) if name.endswith(".json") else yaml.safe_dump(content))
    with pytest.raises(ConfigError) as info:
        load_recipe(path)
    assert fragment in str(info.value) and str(path) in str(info.value)
    assert "\n" not in str(info.value)


def test_load_recipe_refuses_a_python_export(tmp_path: Path) -> None:
    path = export(ExportDocument(recipe=_recipe("adamw-cosine")), "python", tmp_path / "best.py")
    with pytest.raises(ConfigError, match="python export is a module"):
        load_recipe(path)


# ---- from a real study, through the CLI -------------------------------------------------------------


def cli(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    from convtune.cli import main

    argv, sys.argv = sys.argv, ["convtune", *args]
    try:
        main()
        code = 0
    except SystemExit as exc:
        code = exc.code if isinstance(exc.code, int) else 0
    finally:
        sys.argv = argv
    out, err = capsys.readouterr()
    return code, out, err


def test_cli_exports_the_confirmed_best_and_its_lr_matches_the_trials_record(
    tiny_study: TinyStudy, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from convtune.study import open_study

    study, _ = open_study(tiny_study.name, tiny_study.url)
    trials = study.get_trials()
    assert all(t.user_attrs["status"] == "reached" for t in trials), [t.user_attrs for t in trials]
    confirmed = trials[1]

    code, out, err = cli(
        capsys,
        "study",
        "export",
        tiny_study.name,
        "--storage",
        tiny_study.url,
        "-o",
        str(tmp_path / "b.yaml"),
    )
    assert code == 0, err
    data = yaml.safe_load((tmp_path / "b.yaml").read_text())
    assert data["source"] == "confirmed" and data["trial"] == confirmed.number
    assert data["time_to_target"] == pytest.approx(confirmed.user_attrs["time_to_target"])
    assert load_recipe(tmp_path / "b.yaml") == Recipe.from_dict(TrialRecord.of(confirmed).attrs["recipe"])

    for trial in trials:
        path = tmp_path / f"trial{trial.number}.py"
        code, _, err = cli(
            capsys, "study", "export", tiny_study.name, "--storage", tiny_study.url, "--trial", str(trial.number),
            "--format", "python", "-o", str(path),
        )  # fmt: skip
        assert code == 0, err
        module = import_module_from(path, f"trial{trial.number}")
        opt = module.build_optimizer(_model())
        sched = module.build_scheduler(opt)
        lr_at = [opt.param_groups[0]["lr"]]
        for step in range(1, max(TrialRecord.of(trial).attrs["curve"]["step"]) + 1):
            opt.step()
            if step < module.TOTAL_STEPS:
                sched.step()
            lr_at.append(opt.param_groups[0]["lr"])
        # The engine records, at each evaluation after `step` optimizer steps, the LR it will use next.
        curve = TrialRecord.of(trial).attrs["curve"]
        assert [lr_at[s] for s in curve["step"]] == curve["lr"]


def test_cli_export_errors_are_one_line(
    tiny_study: TinyStudy, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out_file = str(tmp_path / "x.yaml")
    for args, fragment in (
        (["--format", "xml"], "unknown export format"),
        (["--trial", "99"], "no trial 99"),
        (["--trial", "0", "--predicted"], "not both"),
    ):
        code, _, err = cli(
            capsys, "study", "export", tiny_study.name, "--storage", tiny_study.url, "-o", out_file, *args
        )
        assert code == 2 and fragment in err and err.count("\n") == 1, err
    code, _, err = cli(capsys, "study", "export", "nope", "--storage", tiny_study.url, "-o", out_file)
    assert code == 2 and "no study named 'nope'" in err


def test_cli_exports_the_prediction_of_a_study_with_reached_trials(
    tiny_study: TinyStudy, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "pred.json"
    code, _, err = cli(
        capsys, "study", "export", tiny_study.name, "--storage", tiny_study.url, "--predicted",
        "-o", str(path), "-f", "json",
    )  # fmt: skip
    assert code == 0, err  # every trial of the tiny study reached the target: there is a fit
    data = json.loads(path.read_text())
    assert data["source"] == "predicted" and load_recipe(path) == Recipe.from_dict(data["recipe"])
    assert data["predicted_time_to_target"] > 0


def test_cli_says_there_is_no_prediction_for_a_study_without_trials(
    tiny_study: TinyStudy, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from convtune.study import create_study, open_study

    _, spec = open_study(tiny_study.name, tiny_study.url)
    url = f"sqlite:///{tmp_path / 'empty.db'}"
    create_study("empty", spec, url)
    path = tmp_path / "pred.json"
    code, _, err = cli(capsys, "study", "export", "empty", "--storage", url, "--predicted", "-o", str(path))
    assert code == 2 and "no prediction available yet" in err and err.count("\n") == 1, err
    assert not path.exists()


if __name__ == "__main__":  # pragma: no cover
    sys.exit(pytest.main([__file__, "-q"]))
