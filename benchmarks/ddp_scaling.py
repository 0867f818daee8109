"""Distributed trials: throughput at world size 1 and 2, stop latency, and the tuner's overhead.

Prints three tables:

1. samples/s of the built-in workloads at world size 1 (in-process and in a warm rank) and 2
   (warm gloo ranks), global and per rank;
2. time from the stop decision to all ranks idle again: warm Workload ranks (the decision travels
   with the evaluation, so this is the end-of-trial bookkeeping) and an external script launch
   (until every rank has exited);
3. the tuner's overhead per trial for ``--trial-seconds`` trials (charlm, 2 ranks, wallclock
   cost): launch, reporting to the Optuna storage, and everything else that is not a training
   step, as shares of the trial's wall time, warm ranks against a cold launch per trial.

Run::

    python benchmarks/ddp_scaling.py                    # about 6 minutes on 2 cores
    python benchmarks/ddp_scaling.py --trial-seconds 10 --trials 2 --samples 4096   # quick look
"""

from __future__ import annotations

import argparse
import math
import tempfile
import time
from pathlib import Path

import optuna

from convtune.config.recipe import Recipe
from convtune.config.spec import StudySpec
from convtune.execution.launcher import ElasticExecutor
from convtune.study import Objective, TrialFailed, create_study, make_pruner, make_sampler
from convtune.training.engine import EngineConfig, default_threads, train
from convtune.workloads import build_workload

ROOT = Path(__file__).resolve().parent.parent
SPACE = {
    "peak_lr": 3.0e-3,
    "horizon_samples": 400_000,
    "schedule": "cosine",
    "micro_batch_size": 32,
    "optimizer": {"choices": ["adamw"]},
}


def recipe(world_size: int, micro: int = 32) -> Recipe:
    return Recipe(peak_lr=3e-3, horizon_samples=400_000, micro_batch_size=micro, world_size=world_size)


def spec_for(workload: str, world_size: int, **extra: object) -> StudySpec:
    data = {
        "workload": workload,
        "space": SPACE,
        "target": "val_loss<=0.01",
        "cost": "samples",
        "eval_every": {"samples": 2048},
        "world_size": world_size,
        "pruner": "none",
        "base_dir": str(ROOT),
    }
    data.update(extra)
    return StudySpec.from_dict(data)


def throughput(samples: int) -> list[tuple[str, str, float, list[float]]]:
    rows = []
    for workload in ("digits", "charlm"):
        config = EngineConfig(
            eval_every=samples, cost="samples", max_cost=samples, threads=default_threads(1), seed=0
        )
        built = build_workload(workload)
        train(built, recipe(1), config)  # warm up, as the ranks below are
        local = train(built, recipe(1), config)
        rows.append((workload, "1, in-process", local.samples_per_second, [local.samples_per_second]))
        for world in (1, 2):
            with ElasticExecutor(spec_for(workload, world)) as executor:
                executor.run(recipe(world), config, lambda p: False)  # warm up: launch, build
                result = executor.run(recipe(world), config, lambda p: False)
            rows.append(
                (workload, f"{world}, warm ranks", result.samples_per_second, result.rank_samples_per_second)
            )
    return rows


def stop_latency() -> dict[str, float]:
    out = {}
    config = EngineConfig(eval_every=512, cost="samples", max_cost=math.inf, seed=0)
    with ElasticExecutor(spec_for("digits", 2)) as executor:
        executor.run(recipe(2), config, lambda p: p.samples >= 1024)  # launch
        decided: list[float] = []

        def on_eval(p) -> bool:
            if p.samples >= 4096:
                decided.append(time.perf_counter())
                return True
            return False

        executor.run(recipe(2), config, on_eval)
        out["warm ranks (digits, 2 ranks): decision → ranks idle"] = time.perf_counter() - decided[0]
    script = {"script": "examples/external_train.py", "args": []}
    with ElasticExecutor(spec_for(script, 2)) as executor:  # type: ignore[arg-type]
        executor.run(recipe(2, 16), config, lambda p: p.samples >= 2048)
        out["external script (2 ranks): decision → all ranks exited"] = executor.last_timing["stop_to_exit"]
    return out


class _Cold:
    """A fresh launch per trial: what a launcher without warm ranks pays."""

    def __init__(self, spec: StudySpec):
        self.spec = spec
        self.last_timing: dict[str, float] = {}

    def run(self, recipe, config, on_eval):
        with ElasticExecutor(self.spec) as executor:
            result = executor.run(recipe, config, on_eval)
            self.last_timing = executor.last_timing
        return result

    def close(self) -> None:
        pass


class _Timed(Objective):
    """The study's objective, timing each trial from the sampler's hand-off to its last attribute."""

    timings: list[dict[str, float]]

    def __call__(self, trial: optuna.Trial) -> float:
        started = time.perf_counter()
        value = super().__call__(trial)
        timing = dict(self.executor.last_timing)  # type: ignore[attr-defined]
        timing["wall"] = time.perf_counter() - started
        self.timings.append(timing)
        return value


def overhead(trial_seconds: float, trials: int) -> list[tuple[str, dict[str, float]]]:
    rows = []
    for mode in ("warm", "cold"):
        folder = tempfile.mkdtemp(prefix="convtune-bench-")
        storage = f"journal:///{folder}/study.log"
        spec = spec_for(
            "charlm",
            2,
            cost="wallclock",
            max_cost=trial_seconds,
            target="val_loss<=0.01",
            storage=storage,
        )
        study = create_study(f"bench-{mode}", spec, storage)
        study.sampler, study.pruner = make_sampler(spec), make_pruner(spec)
        executor = ElasticExecutor(spec) if mode == "warm" else _Cold(spec)
        timings: list[dict[str, float]] = []

        objective = _Timed(spec, executor=executor)
        objective.timings = timings
        try:
            study.optimize(objective, n_trials=trials, catch=(TrialFailed,))
        finally:
            executor.close()
        # Warm: the first trial pays the launch; the rest are the steady state.
        steady = timings[1:] if mode == "warm" and len(timings) > 1 else timings
        mean = {k: sum(t[k] for t in steady) / len(steady) for k in ("wall", "train", "launch", "report")}
        rows.append((mode, mean))
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--samples", type=int, default=4096, help="samples per throughput run")
    parser.add_argument("--trial-seconds", type=float, default=30.0)
    parser.add_argument("--trials", type=int, default=3)
    args = parser.parse_args()
    optuna.logging.set_verbosity(optuna.logging.WARNING)

    print(f"## throughput ({args.samples} samples, micro-batch 32, fp32, gloo on CPU)")
    print(f"{'workload':8} {'world size':16} {'samples/s':>10}  per rank")
    for workload, world, sps, per_rank in throughput(args.samples):
        print(f"{workload:8} {world:16} {sps:10.0f}  {', '.join(f'{s:.0f}' for s in per_rank)}")

    print("\n## stop decision → ranks idle")
    for what, seconds in stop_latency().items():
        print(f"{what:60} {seconds:6.2f} s")

    print(
        f"\n## tuner overhead per trial (charlm, 2 ranks, {args.trial_seconds:g} s trials, journal storage)"
    )
    print(
        f"{'launch':6} {'wall s':>7} {'train s':>8} {'launch':>8} {'report':>8} {'other':>8} {'tuner share':>12} {'not training':>13}"
    )
    for mode, t in overhead(args.trial_seconds, args.trials):
        other = t["wall"] - t["train"] - t["launch"] - t["report"]
        tuner = (t["launch"] + t["report"]) / t["wall"]
        print(
            f"{mode:6} {t['wall']:7.2f} {t['train']:8.2f} {t['launch']:8.2f} {t['report']:8.3f} {other:8.2f}"
            f" {tuner:11.1%} {1 - t['train'] / t['wall']:12.1%}"
        )
    print(
        "\ntuner share = (launch + reporting/storage) / trial wall time; 'other' is setup (model and "
        "data build), evaluation and end-of-trial bookkeeping, off the wallclock cost."
    )


if __name__ == "__main__":
    main()
