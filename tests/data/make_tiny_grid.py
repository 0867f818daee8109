"""Writes tiny_grid.jsonl: a synthetic convtune grid v1 for the replay tests (seconds to replay).

Two optimizers × four LRs × two schedules × two seeds, 12 evaluations each; the error falls
fastest near each optimizer's best LR, the cosine runs end lower, and SGD at the top LR diverges.
Run ``python tests/data/make_tiny_grid.py`` to regenerate it.
"""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np

from convtune.config.recipe import Recipe
from convtune.study.objective import schedule_for

BEST_LR = {"adamw": 3e-3, "sgd": 1e-2}
EVERY, HORIZON, BATCH = 512, 6144, 32


def main() -> None:
    header = {
        "convtune_grid": 1,
        "workload": "tiny",
        "kind": "synthetic",
        "metric": "val_error",
        "direction": "minimize",
        "metric_bounds": [0.0, 1.0],
        "knobs": {
            "optimizer": {"type": "categorical", "choices": ["adamw", "sgd"]},
            "peak_lr": {"type": "float", "log": True},
            "schedule": {"type": "categorical", "choices": ["constant", "cosine"]},
        },
        "snap": "nearest",
        "eval_every_samples": EVERY,
        "description": "synthetic curves for tests",
    }
    lines = [header]
    for optimizer in ("adamw", "sgd"):
        for lr in (1e-3, 3e-3, 1e-2, 3e-2):
            for schedule in ("constant", "cosine"):
                recipe = Recipe(
                    optimizer=optimizer,
                    peak_lr=lr,
                    schedule=schedule,
                    micro_batch_size=BATCH,
                    horizon_samples=HORIZON,
                )
                for seed in (0, 1):
                    rng = np.random.default_rng([seed, int(lr * 1e4), len(optimizer), len(schedule)])
                    samples = np.arange(EVERY, HORIZON + 1, EVERY)
                    speed = math.exp(-abs(math.log(lr / BEST_LR[optimizer])))
                    floor = 0.08 if schedule == "cosine" else 0.13
                    error = floor + 0.8 * np.exp(-3.0 * speed * samples / HORIZON * (1.2 if seed else 1.0))
                    error = error + rng.normal(0, 0.004, samples.size)
                    diverged = optimizer == "sgd" and lr == 3e-2
                    metric = [round(float(v), 5) for v in error]
                    if diverged:
                        metric = metric[:3] + [None]
                        samples = samples[:4]
                    lines.append(
                        {
                            "knobs": {"optimizer": optimizer, "peak_lr": lr, "schedule": schedule},
                            "seed": seed,
                            "status": "diverged" if diverged else "complete",
                            "horizon_samples": HORIZON,
                            "recipe": recipe.to_dict(),
                            "schedule": schedule_for(recipe, BATCH).to_dict(),
                            "curve": {
                                "step": [int(s) // BATCH for s in samples],
                                "samples": [int(s) for s in samples],
                                "seconds": [round(float(s) / 4000, 4) for s in samples],
                                "metric": metric,
                                "lr": [lr] * len(samples),
                            },
                        }
                    )
    path = Path(__file__).with_name("tiny_grid.jsonl")
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))


if __name__ == "__main__":
    main()
