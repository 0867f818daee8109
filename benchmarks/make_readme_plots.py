"""Make the README's figures from a real study: ``python benchmarks/make_readme_plots.py``.

Runs a small ``digits`` study (cost in samples, so the figures are reproducible), then writes
``docs/img/``: every trial's learning curve against cost with the target, the best trial's plot
as uploaded to optuna-dashboard, and the exported schedule against its Hugging Face equivalent.
"""

from __future__ import annotations

import argparse
import tempfile
from pathlib import Path

from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure

from convtune.config.record import TrialRecord
from convtune.config.spec import StudySpec
from convtune.export import hf_training_arguments, select_document
from convtune.report.plots import learning_curve_figure, study_curves_figure
from convtune.study import create_study, open_study, run_study

SPACE = {
    "peak_lr": {"low": 1.0e-3, "high": 3.0e-2, "log": True},
    "warmup_steps": {"low": 0, "high": 30},
    "horizon_samples": {"low": 8192, "high": 32768, "log": True},
    "schedule": {"choices": ["cosine", "linear", "constant"]},
    "micro_batch_size": {"choices": [16, 32, 64]},
    "optimizer": {"choices": ["adamw", "sgd"], "adamw": {"weight_decay": {"low": 0.0, "high": 0.1}}},
}


def save(fig: Figure, path: Path) -> None:
    FigureCanvasAgg(fig)
    fig.savefig(path, format="png", dpi=80)
    print(f"wrote {path} ({path.stat().st_size // 1024} KiB)")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--trials", type=int, default=10)
    parser.add_argument("--out", type=Path, default=Path(__file__).resolve().parent.parent / "docs" / "img")
    args = parser.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as tmp:
        url = f"sqlite:///{tmp}/readme.db"
        spec = StudySpec.from_dict(
            {
                "workload": "digits",
                "space": SPACE,
                "target": "accuracy>=0.95",
                "cost": "samples",
                "max_cost": 32768,
                "eval_every": {"samples": 1024},
                "seed": 0,
            }
        )
        create_study("readme", spec, url)
        run_study("readme", n_trials=args.trials, storage=url)
        study, spec = open_study("readme", url)
        trials = [
            (t.number, t.user_attrs) for t in study.get_trials() if TrialRecord.of(t).attrs.get("curve")
        ]
        save(study_curves_figure(trials, spec.target, spec.cost), args.out / "learning_curves.png")
        doc = select_document(study, spec)
        best = study.trials[doc.trial]
        save(
            learning_curve_figure(best.number, best.user_attrs, spec.target, spec.cost),
            args.out / "best_trial.png",
        )

        # The exported schedule, step by step, against what TrainingArguments would run.
        recipe = doc.recipe.model_copy(update={"warmup_steps": max(doc.recipe.warmup_steps, 10)})
        hf, _ = hf_training_arguments(recipe)
        w, total = hf.get("warmup_steps", 0), hf["max_steps"]
        fig = Figure(figsize=(6, 3.2), layout="constrained")
        ax = fig.subplots()
        ax.plot(recipe.lr_per_step, label="convtune (trial, yaml, python export)")
        if "lr_scheduler_type" in hf:
            import math

            def hf_factor(step: int) -> float:
                if step < w:
                    return step / max(1, w)
                progress = (step - w) / max(1, total - w)
                if hf["lr_scheduler_type"] == "linear":
                    return max(0.0, 1 - progress)
                if hf["lr_scheduler_type"].startswith("cosine"):
                    return 0.5 * (1 + math.cos(math.pi * progress))
                return 1.0

            ax.plot(
                [recipe.peak_lr * hf_factor(s) for s in range(total)],
                "--",
                label="Hugging Face Trainer (hf export)",
            )
        ax.set_xlabel("optimizer step")
        ax.set_ylabel("learning rate")
        ax.set_title(f"{recipe.schedule}, warmup {recipe.warmup_steps}: identical after warm-up", fontsize=9)
        ax.legend(fontsize=8)
        ax.grid(alpha=0.3)
        save(fig, args.out / "exported_schedule.png")


if __name__ == "__main__":
    main()
