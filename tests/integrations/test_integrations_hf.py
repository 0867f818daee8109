"""convtune.integrations.transformers: a Trainer script tuned by convtune, the Trainer's own
Optuna search with TimeToTargetPruner, and hf exports that never change the training silently.

The LR per optimizer step is the yardstick throughout: a Trainer built from the recipe (or from
the export) must set exactly ``recipe.lr_per_step``, which is what the trials ran.
"""

from __future__ import annotations

import importlib.util
import math
import sys
from pathlib import Path
from typing import Any

import optuna
import pytest
import torch
import yaml
from torch import nn
from torch.nn import functional as F

transformers = pytest.importorskip("transformers")
from transformers import Trainer, TrainerCallback, TrainingArguments  # noqa: E402

from convtune import load_recipe  # noqa: E402
from convtune.config.recipe import Recipe  # noqa: E402
from convtune.config.record import TrialRecord  # noqa: E402
from convtune.config.spec import load_spec  # noqa: E402
from convtune.execution.launcher import ElasticExecutor, LaunchOptions, RankFailed  # noqa: E402
from convtune.export import ExportDocument, export  # noqa: E402
from convtune.integrations import transformers as ct  # noqa: E402
from convtune.pruners import TimeToTargetPruner  # noqa: E402
from convtune.study import create_study, engine_config, run_study  # noqa: E402
from convtune.study.outcome import penalty_for_cap  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(autouse=True)
def offline(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setenv("OMP_NUM_THREADS", "1")
    monkeypatch.delenv("CONVTUNE_CHANNEL", raising=False)
    monkeypatch.delenv("CONVTUNE_RECIPE", raising=False)
    torch.set_num_threads(1)


class Regressor(nn.Module):
    """A model the Trainer accepts: ``forward(x, labels)`` returns the loss (LayerNorm and bias
    parameters make the weight-decay groups matter)."""

    def __init__(self) -> None:
        super().__init__()
        torch.manual_seed(0)
        self.net = nn.Sequential(nn.Linear(8, 16), nn.LayerNorm(16), nn.ReLU(), nn.Linear(16, 1))

    def forward(self, x: torch.Tensor, labels: torch.Tensor | None = None) -> dict[str, torch.Tensor]:
        out = self.net(x).squeeze(-1)
        return {"loss": F.mse_loss(out, labels), "logits": out}


class Rows(torch.utils.data.Dataset):
    def __init__(self, n: int, seed: int) -> None:
        g = torch.Generator().manual_seed(seed)
        self.x = torch.randn(n, 8, generator=g)
        self.y = self.x @ torch.linspace(-1, 1, 8) + 0.05 * torch.randn(n, generator=g)

    def __len__(self) -> int:
        return len(self.x)

    def __getitem__(self, i: int) -> dict[str, torch.Tensor]:
        return {"x": self.x[i], "labels": self.y[i]}


class LRPerStep(TrainerCallback):
    """The LR each optimizer step applied; stops after ``limit`` steps if given."""

    def __init__(self, limit: int | None = None) -> None:
        self.lrs: list[float] = []
        self.limit = limit

    def on_optimizer_step(
        self, args: Any, state: Any, control: Any, optimizer: Any = None, **kw: Any
    ) -> None:
        self.lrs.append(float(optimizer.param_groups[0]["lr"]))

    def on_step_end(self, args: Any, state: Any, control: Any, **kw: Any) -> None:
        if self.limit is not None and state.global_step >= self.limit:
            control.should_training_stop = True


def base_args(tmp_path: Path, **fields: Any) -> TrainingArguments:
    defaults: dict[str, Any] = dict(
        output_dir=str(tmp_path / "out"),
        report_to="none",
        disable_tqdm=True,
        save_strategy="no",
        use_cpu=True,
        dataloader_num_workers=0,
    )
    return TrainingArguments(**(defaults | fields))


def _recipe(optimizer: str, schedule: str, **fields: Any) -> Recipe:
    data: dict[str, Any] = dict(
        peak_lr=0.01, horizon_samples=8 * 12, micro_batch_size=8, optimizer=optimizer, schedule=schedule
    )
    return Recipe(**(data | fields))


# Every optimizer and a representative set of schedules, twelve steps each.
MATRIX = {
    "adamw-cosine": _recipe("adamw", "cosine", optimizer_params={"weight_decay": 0.0}),
    "adamw-linear-warmup": _recipe("adamw", "linear", warmup_steps=3),
    "adamw-constant-decay": _recipe("adamw", "constant", optimizer_params={"weight_decay": 0.05}),
    "lamb-cyclic": _recipe(
        "lamb", "cyclic", schedule_params={"half_period_steps": 3, "base_lr_ratio": 0.1}, warmup_steps=2
    ),
    "lion-onecycle": _recipe("lion", "onecycle", peak_lr=1e-3, schedule_params={"pct_start": 0.3}),
    "lars-linear": _recipe("lars", "linear", peak_lr=0.5),
    "sgd-cosine-floor": _recipe("sgd", "cosine", schedule_params={"min_lr_ratio": 0.1}, warmup_steps=2),
}


def _close(got: list[float], want: list[float] | tuple[float, ...]) -> bool:
    return len(got) == len(want) and all(
        math.isclose(a, b, rel_tol=1e-6, abs_tol=1e-12) for a, b in zip(got, want, strict=True)
    )


@pytest.mark.parametrize("name", sorted(MATRIX))
def test_an_hf_export_trains_the_recipe_or_says_loudly_that_it_does_not(tmp_path: Path, name: str) -> None:
    """Follow the export's own usage line: the Trainer's LR per step is the recipe's, exactly."""
    recipe = MATRIX[name]
    path = export(ExportDocument(recipe=recipe, study="s", trial=0), "hf", tmp_path / "best.hf.yaml")
    text = path.read_text()
    doc = yaml.safe_load(text)
    assert next(iter(doc)) == "exact"  # the first key
    model = Regressor()
    args = base_args(tmp_path, **doc["training_arguments"])
    lrs = LRPerStep()
    kwargs: dict[str, Any] = {}
    if doc["exact"]:
        assert "optimizers" not in doc["usage"]
    else:
        assert text.startswith("# NOT EXACT")
        assert "optimizers=(opt, recipe.scheduler(opt))" in doc["usage"]
        exported = load_recipe(path)
        opt = exported.optimizer(model)
        kwargs["optimizers"] = (opt, exported.scheduler(opt))
    Trainer(model=model, args=args, train_dataset=Rows(128, 0), callbacks=[lrs], **kwargs).train()
    assert _close(lrs.lrs, recipe.lr_per_step), (lrs.lrs, recipe.lr_per_step)
    if name in ("adamw-cosine",):
        assert doc["exact"]
    if name == "lamb-cyclic":
        # The flag is earned: the arguments alone would have trained something else.
        alone = LRPerStep()
        Trainer(model=Regressor(), args=args, train_dataset=Rows(128, 0), callbacks=[alone]).train()
        assert not _close(alone.lrs, recipe.lr_per_step)


@pytest.mark.parametrize(("name", "loud"), [("adamw-cosine", False), ("lamb-cyclic", True)])
def test_the_export_command_says_when_an_hf_export_is_not_exact(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, name: str, loud: bool
) -> None:
    import sys

    from specs import digits_spec

    from convtune.cli import main

    url = f"sqlite:///{tmp_path / 's.db'}"
    space = {"peak_lr": 0.01, "micro_batch_size": 8, "horizon_samples": 96}
    study = create_study("s", digits_spec(space, target="accuracy>=0.9"), url)
    attrs = {"recipe": MATRIX[name].to_dict(), "status": "reached", "time_to_target": 64.0}
    study.add_trial(optuna.trial.create_trial(value=64.0, user_attrs=attrs))
    monkeypatch.setattr(sys, "argv", ["convtune", "study", "export", "s", "--trial", "0", "--format", "hf"])
    monkeypatch.setattr(sys, "argv", [*sys.argv, "-o", str(tmp_path / "x.hf.json"), "--storage", url])
    with pytest.raises(SystemExit) as exit_:
        main()
    out = capsys.readouterr().out
    assert exit_.value.code in (0, None)
    assert ("not exact:" in out) is loud, out
    doc = yaml.safe_load((tmp_path / "x.hf.json").read_text())
    assert doc["exact"] is not loud


def test_training_arguments_and_trainer_kwargs_train_the_recipe_with_accumulation(tmp_path: Path) -> None:
    """One call each: batch, accumulation, horizon, clipping, eval interval, optimizer and
    schedule come from the recipe (LAMB with a cyclic schedule and warm-up, accumulating 2)."""
    recipe = _recipe(
        "lamb",
        "cyclic",
        schedule_params={"half_period_steps": 2, "base_lr_ratio": 0.2},
        warmup_steps=2,
        grad_accum_steps=2,
        micro_batch_size=4,
        clip_norm=1.0,
    )
    args = ct.training_arguments(base_args(tmp_path, max_steps=999, learning_rate=1.0), recipe)
    overrides = ct.training_arguments_overrides(recipe, eval_every=24)
    assert (args.max_steps, args.gradient_accumulation_steps, args.per_device_train_batch_size) == (12, 2, 4)
    assert args.max_grad_norm == 1.0 and overrides["eval_steps"] == 3  # 24 samples / 8 per step
    model = Regressor()
    lrs = LRPerStep()
    kwargs = ct.trainer_kwargs(model, recipe, callbacks=[lrs])
    assert type(kwargs["optimizers"][0]).__name__.lower() == "lamb"
    trainer = Trainer(model=model, args=args, train_dataset=Rows(128, 0), **kwargs)
    trainer.train()
    assert trainer.state.global_step == recipe.total_steps
    assert _close(lrs.lrs, recipe.lr_per_step)
    # Outside a trial, with no recipe: the script's own arguments, untouched.
    plain = base_args(tmp_path, max_steps=5)
    assert ct.training_arguments(plain) is plain
    assert "optimizers" not in ct.trainer_kwargs(model) and ct.train_kwargs() == {}


def _hp_trainer(tmp_path: Path, lrs: list[float]) -> Trainer:
    args = base_args(
        tmp_path,
        per_device_train_batch_size=16,
        max_steps=60,
        eval_strategy="steps",
        eval_steps=5,
        logging_steps=5,
        warmup_steps=5,
    )
    trainer = Trainer(
        model_init=lambda trial=None: Regressor(),
        args=args,
        train_dataset=Rows(512, 0),
        eval_dataset=Rows(128, 1),
    )
    trainer.add_callback(ct.ConvtuneCallback(trainer))
    return trainer


def test_time_to_target_pruner_inside_hyperparameter_search(tmp_path: Path) -> None:
    """Costs, not ``global_step``: steps are samples; a stopped trial ends COMPLETE (the Trainer
    would raise TrialPruned, and a study of pruned trials has no best: "Record does not exist");
    the value returned is the time-to-target; every trial carries its planned schedule."""
    rates = [0.05, 0.0003, 0.05]
    trainer = _hp_trainer(tmp_path, rates)
    pruner = TimeToTargetPruner("eval_loss<=0.6", max_cost=16 * 60)
    storage = optuna.storages.InMemoryStorage()
    best = trainer.hyperparameter_search(
        hp_space=lambda trial: {"learning_rate": rates[trial.number]},
        backend="optuna",
        n_trials=3,
        direction="minimize",
        pruner=pruner,
        sampler=optuna.samplers.RandomSampler(seed=0),
        storage=storage,
        study_name="hp",
    )
    trials = optuna.load_study(study_name="hp", storage=storage).trials
    assert [t.state for t in trials] == [optuna.trial.TrialState.COMPLETE] * 3
    assert [t.user_attrs["status"] for t in trials] == ["reached", "stopped", "reached"]
    for t in trials:
        assert all(step % (16 * 5) == 0 for step in t.intermediate_values)  # samples, every 5 steps
        schedule = TrialRecord.of(t).attrs["lr_schedule"]
        assert schedule["costs"][-1] == 16 * 60  # the planned run: max_steps × batch
    reached = trials[0]
    assert best.objective == reached.value == reached.user_attrs["time_to_target"]
    assert max(trials[1].intermediate_values) < max(reached.intermediate_values) + 16 * 5 + 1


def test_hyperparameter_search_must_minimise_the_time_to_target(tmp_path: Path) -> None:
    from convtune.errors import ConfigError

    trainer = _hp_trainer(tmp_path, [0.05])
    with pytest.raises(ConfigError, match="minimised"):
        trainer.hyperparameter_search(
            hp_space=lambda trial: {"learning_rate": 0.05},
            backend="optuna",
            n_trials=1,
            direction="maximize",
            pruner=TimeToTargetPruner("eval_loss<=0.6"),
        )


def _load_example(name: str) -> Any:
    spec = importlib.util.spec_from_file_location(name, ROOT / "examples" / f"{name}.py")
    module = importlib.util.module_from_spec(spec)  # type: ignore[arg-type]
    spec.loader.exec_module(module)  # type: ignore[union-attr]
    return module


def command(script: str, *args: str) -> dict[str, list[str]]:
    """The spec's script as a ``command`` workload: one process, as torchrun would start for a
    one-rank trial, without torchrun's own start-up (seconds per trial on a loaded machine; the
    torchrun launch of scripts is tested in test_session.py)."""
    return {"command": [sys.executable, script, *args]}


def test_a_trainer_script_study_end_to_end(tmp_path: Path) -> None:
    """studies/hf_trainer.yaml runs examples/hf_trainer.py per trial: the slow trial is stopped
    on a schedule-aware forecast, and the exported best trains the script's Trainer with the
    trial's LR at every step."""
    spec = load_spec(ROOT / "studies" / "hf_trainer.yaml", checkpoint_dir=str(tmp_path / "ckpt"))
    spec = spec.model_copy(update={"workload": command("../examples/hf_trainer.py")})
    url = f"sqlite:///{tmp_path / 'hf.db'}"
    study = create_study("hf", spec, url)
    fast = {"peak_lr": 0.006, "warmup_steps": 5, "horizon_samples": 6400, "schedule": "linear"}
    fast |= {"micro_batch_size": 16, "optimizer": "adamw"}
    slow = fast | {"optimizer": "lion", "lion.peak_lr": 1.0e-4, "schedule": "cosine"}
    study.enqueue_trial(fast)
    study.enqueue_trial(slow)
    trials = run_study("hf", n_trials=2, storage=url).trials
    assert [t.user_attrs.get("status") for t in trials] == ["reached", "stopped"], [
        t.user_attrs.get("error") for t in trials
    ]
    stopped = trials[1]
    assert stopped.user_attrs["forecast_model"] == "annealing"  # the forecast used the LR schedule
    for t in trials:
        recipe = Recipe.from_dict(TrialRecord.of(t).attrs["recipe"])
        curve = TrialRecord.of(t).attrs["curve"]
        assert "lr_schedule" in TrialRecord.of(t).attrs
        assert curve["samples"] == [s * recipe.effective_batch_size for s in curve["step"]]
        assert _close(curve["lr"], [recipe.lr_per_step[s - 1] for s in curve["step"]])
    # The reached trial keeps no checkpoint; the stopped one keeps its own (a stop is a pause: a
    # repeat of its configuration trains on from it).
    kept = {p.relative_to(tmp_path / "ckpt").parts[:2] for p in (tmp_path / "ckpt").rglob("*.safetensors")}
    assert kept == {("hf", f"trial-{stopped.number}")}, kept

    path = tmp_path / "best.yaml"
    from convtune.export import select_document

    export(select_document(study, spec), "yaml", path)
    best = load_recipe(path)
    assert best.to_dict() == TrialRecord.of(trials[0]).attrs["recipe"]
    example = _load_example("hf_trainer")
    model = example.GPT2LMHeadModel(
        example.GPT2Config(vocab_size=32, n_positions=24, n_embd=32, n_layer=1, n_head=2)
    )
    steps = 60
    lrs = LRPerStep(limit=steps)
    args = ct.training_arguments(base_args(tmp_path), best)
    trainer = Trainer(
        model=model,
        args=args,
        train_dataset=example.RuleLanguage(2048, 1),
        **ct.trainer_kwargs(model, best, callbacks=[lrs]),
    )
    trainer.train()
    assert _close(lrs.lrs, best.lr_per_step[:steps])
    curve = TrialRecord.of(trials[0]).attrs["curve"]
    assert _close(
        [lrs.lrs[s - 1] for s in curve["step"] if s <= steps],
        [lr for s, lr in zip(curve["step"], curve["lr"], strict=True) if s <= steps],
    )


def test_a_retried_trial_resumes_from_the_trainers_checkpoint(tmp_path: Path) -> None:
    """The Trainer saves into the trial's checkpoint folder; a relaunch of the same trial (as a
    retry is) resumes there, and its reports continue the first run's steps and seconds."""
    spec = load_spec(ROOT / "studies" / "hf_trainer.yaml")
    spec = spec.model_copy(update={"workload": command("../examples/hf_trainer.py", "--fail-at-step", "60")})
    recipe = Recipe(peak_lr=0.005, horizon_samples=3200, micro_batch_size=16, optimizer="adamw")
    config = engine_config(spec)
    config = type(config)(
        **{**config.__dict__, "checkpoint_dir": str(tmp_path / "trial-0"), "eval_every": 400}
    )
    with ElasticExecutor(spec, LaunchOptions(collective_timeout=60)) as executor:
        first: list[Any] = []
        with pytest.raises(RankFailed, match="exited"):
            executor.run(recipe, config, lambda p: first.append(p) or False)
        second: list[Any] = []
        result = executor.run(recipe, config, lambda p: second.append(p) or False)
    assert [p.step for p in first] == [25, 50]
    assert [p.step for p in second][:1] == [75]  # resumed from checkpoint-50, not from step 0
    assert result.steps == recipe.total_steps == 200
    assert second[0].seconds > first[-1].seconds  # the training clock continues too


class Diverging(Regressor):
    """Its loss turns NaN from the 7th forward pass on."""

    calls = 0

    def forward(self, x: torch.Tensor, labels: torch.Tensor | None = None) -> dict[str, torch.Tensor]:
        out = super().forward(x, labels)
        if self.training:
            self.calls += 1
            if self.calls >= 7:
                out["loss"] = out["loss"] * float("nan")
        return out


def test_a_non_finite_training_loss_ends_an_optuna_trial_as_diverged(tmp_path: Path) -> None:
    """``ConvtuneCallback(trial=trial)`` in Optuna's own loop: a NaN training loss stops the
    Trainer at the next log, and the trial ends COMPLETE, penalised and infeasible."""
    steps: list[int] = []

    def objective(trial: optuna.Trial) -> float:
        callback = ct.ConvtuneCallback(trial=trial)
        args = base_args(tmp_path, max_steps=40, eval_strategy="steps", eval_steps=4, logging_steps=2)
        args = ct.training_arguments(args, Recipe(peak_lr=0.01, horizon_samples=8 * 40, micro_batch_size=8))
        trainer = Trainer(
            model=Diverging(),
            args=args,
            train_dataset=Rows(512, 0),
            eval_dataset=Rows(64, 1),
            callbacks=[callback],
        )
        trainer.train()
        steps.append(trainer.state.global_step)
        return callback.value()

    study = optuna.create_study(pruner=TimeToTargetPruner("eval_loss<=0.01", max_cost=8 * 40))
    study.optimize(objective, n_trials=1)
    trial = study.trials[0]
    assert trial.state == optuna.trial.TrialState.COMPLETE
    assert (
        trial.user_attrs["status"] == "diverged" and "non-finite training loss" in trial.user_attrs["reason"]
    )
    # The penalty of a diverged `convtune study run` trial: 10 to 20 × max_cost, by the gap to the
    # target at the last finite report (eval_loss before the NaN).
    finite = [v for _, v in sorted(trial.intermediate_values.items()) if math.isfinite(v)]
    assert finite and trial.value == penalty_for_cap(8 * 40, finite[-1] - 0.01)
    assert 10 * 8 * 40 < trial.value < 20 * 8 * 40 and trial.constraints == {"diverged": 1.0}
    assert steps == [8]  # the first log after the loss turned NaN (step 7), not the planned 40
