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
options ``promote=η`` and ``after_reached=1`` (or another ``stop_value``) as in ``replay_pruners.py``.

``--paused-chances`` also prints, for the trials paused for standing behind the median (reason
``behind-median``), the chance their stored forecast gave of crossing before 1.2× the study's
best measured time, by what their configuration truly does on the grid (near-best, reaches
later, never reaches): how much a forecast-led promotion (Freeze-Thaw) would have to go on.
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

from convtune.config.recipe import Recipe  # noqa: E402
from convtune.config.record import TrialRecord, step_scale  # noqa: E402
from convtune.curves import Forecast  # noqa: E402
from convtune.replay import (  # noqa: E402
    Grid,
    load_grid,
    make_replay_pruner,
    near_best,
    replay_spec,
    replay_study,
    split_option,
    split_stop_value,
)


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


def paused_chances(study: optuna.Study, grid: Grid, spec: Any) -> dict[str, list[float]]:
    """Per true outcome of the configuration (``near_best``, ``reaches``, ``never``), the chance
    each trial paused behind the median was given of crossing by 1.2x the best measured time."""
    truth = grid.true_time_to_target(spec.target_spec, spec.cost)
    near = near_best(truth)
    records = [TrialRecord.of(t) for t in study.get_trials(deepcopy=False)]
    reached = [float(r.value) for r in records if r.status == "reached" and r.value is not None]
    out: dict[str, list[float]] = {"near_best": [], "reaches": [], "never": []}
    if not reached:
        return out
    bar = min(reached) * 1.2 * step_scale(spec.cost)
    for r in records:
        if r.status != "stopped" or "behind-median" not in str(r.reason) or r.recipe is None:
            continue
        key = grid.snap(grid.knobs_of(Recipe.from_dict(r.recipe)))
        kind = (
            "near_best" if key in near else "reaches" if math.isfinite(truth.get(key, math.inf)) else "never"
        )
        out[kind].append(Forecast.from_attrs(r.attrs).probability_before(bar))
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("grid", help="a recorded grid (.jsonl or .jsonl.gz)")
    parser.add_argument("--target", required=True, help='e.g. "val_loss<=0.103"')
    parser.add_argument("--pruner", default="median", help="a replay pruner name (see the module doc)")
    parser.add_argument("--seeds", type=int, default=3)
    parser.add_argument("--budget", type=float, default=30.0, help="full runs per study")
    parser.add_argument("--schedules", default=str(HERE / "corpus" / "schedules.py"))
    parser.add_argument(
        "--paused-chances",
        action="store_true",
        help="also the forecast chances of trials paused behind the median",
    )
    args = parser.parse_args()
    optuna.logging.set_verbosity(optuna.logging.WARNING)
    register_schedules(args.schedules)
    grid = load_grid(args.grid)
    spec = replay_spec(grid, {"target": args.target})
    name, promote = split_option(args.pruner, "promote")
    name, stop_value = split_stop_value(name)
    if stop_value is not None:
        spec = spec.model_copy(update={"stop_value": stop_value})
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
        if args.paused_chances and study is not None:
            for kind, chances in paused_chances(study, grid, spec).items():
                if chances:
                    print(
                        f"  paused behind the median, {kind}: {len(chances)} trials, chance of crossing by "
                        f"1.2x the best measured: median {statistics.median(chances):.2f}, "
                        f">= 0.1 in {sum(c >= 0.1 for c in chances)}, >= 0.5 in {sum(c >= 0.5 for c in chances)}",
                        flush=True,
                    )


if __name__ == "__main__":
    main()
