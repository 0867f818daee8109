"""What stopped trials tell the sampler: how many of a replayed study's best-valued trials were stopped.

TPE fits its "good" density to the trials with the lowest values (about the best tenth). A trial
the pruner stopped tells it a right-censored value: the forecast's median crossing given that it
had not reached by the cost it spent. This script replays studies over a recorded grid (the
shipped :class:`convtune.study.Objective`, as ``replay_pruners.py`` does) and prints, per seed,
how many stopped trials were told a value sooner than the best reached trial's, and what the best
tenth of the study's values is made of (stopped, reached, duplicate). docs/benchmarks.md,
"Evidence for a pause, and what a paused trial tells the sampler".

    python benchmarks/stopped_values.py benchmarks/data/corpus_fresh13/ordinal_levels.jsonl.gz \\
        --target "val_mae<=0.41" --pruner median --seeds 3

``--pruner`` takes a replay pruner name (``median``, ``time_to_target:…``) with the study
options ``promote=η`` and ``after_reached=1`` as in ``replay_pruners.py``.
"""

from __future__ import annotations

import argparse
import math
import statistics
import sys
from collections import Counter
from pathlib import Path
from typing import Any

import optuna

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from replay_pruners import register_schedules  # noqa: E402

from convtune.config.record import TrialRecord  # noqa: E402
from convtune.replay import load_grid, make_replay_pruner, replay_spec, replay_study, split_option  # noqa: E402


class _Watched:
    """The study the named pruner last judged a trial of. The pruner keeps its class (the
    study's outcome asks convtune's pruner for the forecast a stop was decided on), so only its
    ``prune`` is wrapped."""

    def __init__(self) -> None:
        self.study: optuna.Study | None = None

    def watch(self, pruner: optuna.pruners.BasePruner) -> optuna.pruners.BasePruner:
        prune = pruner.prune

        def watched(study: optuna.Study, trial: optuna.trial.FrozenTrial) -> bool:
            self.study = study
            return prune(study, trial)

        pruner.prune = watched  # type: ignore[method-assign]
        return pruner


def study_view(study: optuna.Study) -> dict[str, Any]:
    """Counts over one finished study: stopped trials told a value sooner than the best reached
    trial's, and the make-up of its best tenth of values."""
    complete = study.get_trials(deepcopy=False, states=(optuna.trial.TrialState.COMPLETE,))
    status = []
    for t in complete:
        record = TrialRecord.of(t)
        if t.value is not None:
            status.append((float(t.value), record.status.value if record.status is not None else "?"))
    reached = sorted(v for v, s in status if s == "reached")
    stopped = [v for v, s in status if s == "stopped"]
    best = reached[0] if reached else math.inf
    top = sorted(status)[: max(1, len(status) // 10)]
    return {
        "trials": len(status),
        "reached": len(reached),
        "stopped": len(stopped),
        "stopped_sooner_than_best": sum(v < best for v in stopped),
        "stopped_sooner_than_median_reached": sum(
            v < (statistics.median(reached) if reached else math.inf) for v in stopped
        ),
        "best_tenth": dict(Counter(s for _, s in top)),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("grid", help="a recorded grid (.jsonl or .jsonl.gz)")
    parser.add_argument("--target", required=True, help='e.g. "val_loss<=0.103"')
    parser.add_argument("--pruner", default="median", help="a replay pruner name (see the module doc)")
    parser.add_argument("--seeds", type=int, default=3)
    parser.add_argument("--budget", type=float, default=30.0, help="full runs per study")
    parser.add_argument("--schedules", default=str(HERE / "corpus" / "schedules.py"))
    args = parser.parse_args()
    optuna.logging.set_verbosity(optuna.logging.WARNING)
    register_schedules(args.schedules)
    grid = load_grid(args.grid)
    spec = replay_spec(grid, {"target": args.target})
    name, promote = split_option(args.pruner, "promote")
    name, after_reached = split_option(name, "after_reached")
    if after_reached:
        spec = spec.model_copy(update={"stop_value": "after_reached"})
    n_evals = int(statistics.median(len(r.curve["samples"]) for r in grid.runs))
    watched = _Watched()

    def factory(executor: Any, study_spec: Any) -> optuna.pruners.BasePruner:
        return watched.watch(make_replay_pruner(name, study_spec, n_evals))

    factory.__name__ = args.pruner
    for seed in range(args.seeds):
        watched.study = None
        row = replay_study(grid, spec, seed=seed, budget=args.budget, pruner=factory, promote=promote)
        study = watched.study
        view = study_view(study) if study is not None else {}
        print(f"seed {seed} hit={row['hit']} " + " ".join(f"{k}={v}" for k, v in view.items()), flush=True)


if __name__ == "__main__":
    main()
