"""convtune.integrations.lightning: a Lightning script tuned by convtune, Optuna's own loop with
TimeToTargetPruner, and resuming a trial from Lightning's checkpoint.

The LR per optimizer step is the yardstick: a Lightning run built from the recipe must set
exactly ``recipe.lr_per_step``, which is what the trials ran.
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

L = pytest.importorskip("lightning.pytorch")

from convtune import load_recipe, session  # noqa: E402
from convtune.config.recipe import Recipe  # noqa: E402
from convtune.config.record import TrialRecord  # noqa: E402
from convtune.config.spec import load_spec  # noqa: E402
from convtune.export import export, select_document  # noqa: E402
from convtune.integrations import lightning as ct  # noqa: E402
from convtune.pruners import TimeToTargetPruner  # noqa: E402
from convtune.study import create_study, run_study  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
QUIET = {
    "logger": False,
    "enable_progress_bar": False,
    "enable_model_summary": False,
    "enable_checkpointing": False,
}


@pytest.fixture(autouse=True)
def quiet(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OMP_NUM_THREADS", "1")
    monkeypatch.delenv("CONVTUNE_CHANNEL", raising=False)
    monkeypatch.delenv("CONVTUNE_RECIPE", raising=False)
    torch.set_num_threads(1)


def _example() -> Any:
    spec = importlib.util.spec_from_file_location("lightning_train", ROOT / "examples" / "lightning_train.py")
    module = importlib.util.module_from_spec(spec)  # type: ignore[arg-type]
    spec.loader.exec_module(module)  # type: ignore[union-attr]
    return module


example = _example()


class Watch(L.Callback):
    """The LR each optimizer step applied and the steps at which validation ran."""

    def __init__(self, limit: int | None = None) -> None:
        self.lrs: list[float] = []
        self.validated: list[int] = []
        self.limit = limit

    def on_before_optimizer_step(self, trainer: Any, module: Any, optimizer: Any) -> None:
        self.lrs.append(float(optimizer.param_groups[0]["lr"]))

    def on_validation_end(self, trainer: Any, module: Any) -> None:
        if not trainer.sanity_checking:
            self.validated.append(trainer.global_step)

    def on_train_batch_end(self, trainer: Any, *args: Any) -> None:
        if self.limit is not None and trainer.global_step >= self.limit:
            trainer.should_stop = True


def loaders(batch: int) -> tuple[Any, Any]:
    train_set, val_set = example.digits()
    return (
        torch.utils.data.DataLoader(train_set, batch_size=batch, shuffle=True),
        torch.utils.data.DataLoader(val_set, batch_size=512),
    )


def _close(got: list[float], want: Any) -> bool:
    return len(got) == len(want) and all(
        math.isclose(a, b, rel_tol=1e-6, abs_tol=1e-12) for a, b in zip(got, want, strict=True)
    )


def _recipe_file(tmp_path: Path, recipe: Recipe) -> Path:
    path = tmp_path / "recipe.yaml"
    path.write_text(yaml.safe_dump(recipe.to_dict()))
    return path


def test_the_recipe_trains_exactly_with_accumulation_and_validation_in_optimizer_steps(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """LAMB, cyclic with warm-up, accumulating 3, clipping: the LR per optimizer step is the
    recipe's; validation every 2 optimizer steps is every 6 batches (``val_check_interval``)."""
    recipe = Recipe(
        peak_lr=0.02,
        warmup_steps=2,
        horizon_samples=8 * 3 * 10,
        micro_batch_size=8,
        grad_accum_steps=3,
        optimizer="lamb",
        schedule="cyclic",
        schedule_params={"half_period_steps": 2, "base_lr_ratio": 0.2},
        clip_norm=1.0,
    )
    monkeypatch.setenv("CONVTUNE_RECIPE", str(_recipe_file(tmp_path, recipe)))
    assert ct.batch_size(64) == 8
    watch = Watch()
    kwargs = ct.trainer_kwargs(callbacks=[watch], max_epochs=3, **QUIET)
    kwargs.update(ct.trainer_overrides(recipe, eval_every=2 * 24))
    assert kwargs["val_check_interval"] == 6 and kwargs["accumulate_grad_batches"] == 3
    trainer = L.Trainer(**kwargs, num_sanity_val_steps=0)
    train, val = loaders(ct.batch_size(64))
    trainer.fit(example.DigitsMLP(), train, val)
    assert trainer.global_step == recipe.total_steps == 10
    assert _close(watch.lrs, recipe.lr_per_step)
    assert watch.validated == [2, 4, 6, 8, 10]
    # Outside a trial and with no recipe: the script's own settings.
    monkeypatch.delenv("CONVTUNE_RECIPE")
    assert ct.batch_size(64) == 64 and ct.configure_optimizers(None, "mine") == "mine"
    plain = ct.trainer_kwargs(max_epochs=3)
    assert set(plain) == {"max_epochs", "callbacks"} and ct.fit_kwargs() == {}


class Scheduled(example.DigitsMLP):
    """The user's own optimizer and a per-step schedule (no convtune recipe)."""

    def __init__(self, lr: float) -> None:
        super().__init__()
        self.lr = lr

    def configure_optimizers(self) -> Any:
        opt = torch.optim.Adam(self.parameters(), lr=self.lr)
        sched = torch.optim.lr_scheduler.LambdaLR(opt, lambda step: max(0.1, 1.0 - step / 60))
        return {"optimizer": opt, "lr_scheduler": {"scheduler": sched, "interval": "step"}}


def test_time_to_target_pruner_in_optunas_own_loop() -> None:
    """``ConvtuneCallback(trial=trial)``: steps are samples, the planned schedule is stored, a
    stopped trial ends COMPLETE with a forecast, and ``study.best_trial`` exists."""
    rates = [0.01, 0.0002, 0.01]
    callbacks: dict[int, Any] = {}

    def objective(trial: optuna.Trial) -> float:
        torch.manual_seed(0)
        callback = ct.ConvtuneCallback(trial=trial)
        callbacks[trial.number] = watch = Watch()
        trainer = L.Trainer(
            max_steps=60,
            val_check_interval=5,
            check_val_every_n_epoch=None,  # every 5 batches across epochs, not within each
            callbacks=[callback, watch],
            num_sanity_val_steps=0,
            **QUIET,
        )
        train, val = loaders(32)
        trainer.fit(Scheduled(rates[trial.number]), train, val)
        return callback.value()

    study = optuna.create_study(pruner=TimeToTargetPruner("val_accuracy>=0.9", max_cost=32 * 60))
    study.optimize(objective, n_trials=3)
    trials = study.trials
    assert [t.state for t in trials] == [optuna.trial.TrialState.COMPLETE] * 3
    assert [t.user_attrs["status"] for t in trials] == ["reached", "stopped", "reached"]
    assert study.best_trial.number == 0
    for t in trials:
        assert all(step % (32 * 5) == 0 for step in t.intermediate_values)
        schedule = TrialRecord.of(t).attrs["lr_schedule"]
        applied = callbacks[t.number].lrs
        assert schedule["costs"][-1] == 32 * 60
        # The stored schedule is the one the run applied, at every step it ran.
        planned = [float(x) for x in torch.tensor(schedule["lrs"])]
        assert _close(applied[: len(planned)][:5], planned[:5])
    assert trials[0].value == trials[0].user_attrs["time_to_target"]
    assert trials[1].value > trials[0].value


def test_a_lightning_script_study_end_to_end(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """studies/lightning.yaml runs examples/lightning_train.py per trial: the slow trial is
    stopped, every trial records its schedule and applied LRs, and the exported best trains the
    script's module with the trial's LR at every step."""
    spec = load_spec(ROOT / "studies" / "lightning.yaml", checkpoint_dir=str(tmp_path / "ckpt"))
    # One process, as torchrun starts for a one-rank trial, without torchrun's own start-up
    # (seconds per trial on a loaded machine; launching scripts is tested in test_session.py).
    spec = spec.model_copy(
        update={"workload": {"command": [sys.executable, "../examples/lightning_train.py"]}}
    )
    url = f"sqlite:///{tmp_path / 'pl.db'}"
    study = create_study("pl", spec, url)
    fast = {"peak_lr": 0.01, "warmup_steps": 5, "horizon_samples": 8000, "schedule": "linear"}
    fast |= {"micro_batch_size": 32, "grad_accum_steps": 2, "optimizer": "adamw", "clip_norm": 1.0}
    slow = fast | {"optimizer": "sgd", "peak_lr": 0.0005, "schedule": "cosine", "clip_norm": None}
    study.enqueue_trial(fast)
    study.enqueue_trial(slow)
    trials = run_study("pl", n_trials=2, storage=url).trials
    assert [t.user_attrs.get("status") for t in trials] == ["reached", "stopped"], [
        t.user_attrs.get("error") for t in trials
    ]
    assert trials[1].user_attrs["forecast_model"] == "annealing"  # the forecast used the LR schedule
    for t in trials:
        recipe = Recipe.from_dict(TrialRecord.of(t).attrs["recipe"])
        curve = TrialRecord.of(t).attrs["curve"]
        assert "lr_schedule" in TrialRecord.of(t).attrs
        assert curve["samples"] == [s * recipe.effective_batch_size for s in curve["step"]]
        assert _close(curve["lr"], [recipe.lr_per_step[s - 1] for s in curve["step"]])

    path = export(select_document(study, spec), "yaml", tmp_path / "best.yaml")
    best = load_recipe(path)
    assert best.to_dict() == TrialRecord.of(trials[0]).attrs["recipe"]
    monkeypatch.setenv("CONVTUNE_RECIPE", str(path))
    watch = Watch(limit=40)
    trainer = L.Trainer(**ct.trainer_kwargs(callbacks=[watch], **QUIET))
    train, val = loaders(ct.batch_size(64))
    trainer.fit(example.DigitsMLP(), train, val)
    assert _close(watch.lrs, best.lr_per_step[:40])
    curve = TrialRecord.of(trials[0]).attrs["curve"]
    ran = [(s, lr) for s, lr in zip(curve["step"], curve["lr"], strict=True) if s <= 40]
    assert ran and _close([watch.lrs[s - 1] for s, _ in ran], [lr for _, lr in ran])


def test_a_resumed_trial_continues_from_lightnings_checkpoint(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Inside a trial with a checkpoint folder, ``ModelCheckpoint`` keeps ``last.ckpt`` there and
    ``fit_kwargs`` resumes from it: the second run reports from where the first stopped, with
    its training seconds carried over."""
    recipe = Recipe(peak_lr=0.01, horizon_samples=32 * 20, micro_batch_size=32, optimizer="adamw")
    folder = tmp_path / "trial-0"
    reports: list[dict[str, Any]] = []
    monkeypatch.setattr(session, "active", lambda: True)
    monkeypatch.setattr(session, "recipe", lambda: recipe)
    monkeypatch.setattr(
        session,
        "config",
        lambda: {"eval_every": 32 * 4, "eval_unit": "samples", "checkpoint_dir": str(folder)},
    )

    def report(**record: Any) -> bool:
        reports.append(record)
        return record["step"] >= 8  # convtune says stop at the second evaluation

    monkeypatch.setattr(session, "report", report)
    for _ in range(2):
        assert ct.fit_kwargs() == ({"ckpt_path": str(folder / "last.ckpt")} if reports else {})
        trainer = L.Trainer(**ct.trainer_kwargs(**QUIET))
        train, val = loaders(ct.batch_size(64))
        trainer.fit(example.DigitsMLP(), train, val, **ct.fit_kwargs())
        if len(reports) == 2:
            state = torch.load(folder / "last.ckpt", weights_only=False)["callbacks"]
            saved = next(v["train_seconds"] for k, v in state.items() if "ConvtuneCallback" in k)
            monkeypatch.setattr(session, "report", lambda **record: reports.append(record) or False)
    assert [r["step"] for r in reports] == [4, 8, 12, 16, 20]
    assert [r["samples"] for r in reports] == [128, 256, 384, 512, 640]
    assert reports[2]["seconds"] >= saved > 0  # the clock continues from the checkpoint's


class Diverging(example.DigitsMLP):
    def training_step(self, batch: Any, batch_idx: int) -> torch.Tensor:
        loss = super().training_step(batch, batch_idx)
        return loss * float("nan") if self.global_step >= 5 else loss


def test_a_non_finite_training_loss_is_reported_as_divergence(monkeypatch: pytest.MonkeyPatch) -> None:
    """Inside a trial: the batch whose loss is NaN is reported at once, with the evaluation's
    metrics non-finite (convtune's rule for ``diverged``), and training stops there."""
    recipe = Recipe(peak_lr=0.01, horizon_samples=32 * 50, micro_batch_size=32, optimizer="adamw")
    reports: list[dict[str, Any]] = []
    monkeypatch.setattr(session, "active", lambda: True)
    monkeypatch.setattr(session, "recipe", lambda: recipe)
    monkeypatch.setattr(session, "config", lambda: {"eval_every": 32 * 4, "eval_unit": "samples"})
    monkeypatch.setattr(session, "report", lambda **record: reports.append(record) or False)
    trainer = L.Trainer(**ct.trainer_kwargs(**QUIET))
    train, val = loaders(ct.batch_size(64))
    trainer.fit(Diverging(), train, val)
    assert [r["step"] for r in reports] == [4, 6]
    last = reports[-1]["metrics"]
    assert math.isnan(last["val_loss"]) and math.isnan(last["train_loss"])
    assert trainer.global_step == 6
