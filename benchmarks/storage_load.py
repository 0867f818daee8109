"""Storage time per report, per trial and per ``ask`` as a study grows (100, 1,000 trials).

The objective only reports (a curve of ``--reports`` points) and sets the user attributes a convtune
trial sets, so the numbers are the storage's (and the sampler's, inside ``ask``), not training's.
Storages are opened by :func:`convtune.storage.open_storage`, as ``study run`` opens them
(PostgreSQL with heartbeats, a journal file with convtune's flock lock).

    python benchmarks/storage_load.py --storage postgresql://postgres@127.0.0.1:5432/test \\
        --trials 1000 --reports 20 --sampler tpe

Printed per bucket of trials: ms per ``ask`` (split into storage reads, storage writes: the new
trial and its parameters, and the sampler's own computation),
per ``report``, per ``tell``, and per whole trial. A summary JSON line ends the output.

``--against-plain`` prices convtune's storage layer (reconnects, and the token that keeps a write
whose reply was lost from being applied twice: a claim token on each new PostgreSQL trial, a
``SET NX`` beside each Redis journal append) against the plain Optuna storage of the same URL
(``RDBStorage`` with the same heartbeats, ``JournalRedisBackend``): two studies grow side by
side, one trial of each in turn, and a table of convtune / plain ratios per bucket ends the run.

    python benchmarks/storage_load.py --storage redis://127.0.0.1:6379/0 --trials 300 --against-plain
"""

from __future__ import annotations

import argparse
import json
import statistics
import time
import uuid
import warnings
from collections.abc import Callable, Iterator
from typing import Any

import optuna

from convtune.storage import heartbeat_settings, open_storage, redact


class _Timed:
    """Accumulates the seconds spent in selected storage methods (reads inside ``ask``)."""

    def __init__(self, storage: Any, names: tuple[str, ...]):
        self.seconds = 0.0
        for name in names:
            method = getattr(storage, name)
            setattr(storage, name, self._wrap(method))

    def _wrap(self, method: Callable[..., Any]) -> Callable[..., Any]:
        def timed(*args: Any, **kwargs: Any) -> Any:
            started = time.perf_counter()
            try:
                return method(*args, **kwargs)
            finally:
                self.seconds += time.perf_counter() - started

        return timed


def make_sampler(kind: str) -> optuna.samplers.BaseSampler:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        if kind == "random":
            return optuna.samplers.RandomSampler(seed=0)
        return optuna.samplers.TPESampler(seed=0, multivariate=True, group=True, n_startup_trials=5)


def plain_storage(url: str) -> optuna.storages.BaseStorage:
    """Optuna's own storage for ``url``, as ``open_storage`` configures it but without convtune's
    reconnects and write tokens."""
    if url.startswith(("redis://", "rediss://")):
        from optuna.storages.journal import JournalRedisBackend, JournalStorage

        from convtune.storage.backends import _split_prefix

        # A journal of its own beside convtune's (``?prefix=`` is convtune's, not redis-py's),
        # the URL split as ``open_storage`` splits it.
        url, prefix = _split_prefix(url)
        return JournalStorage(JournalRedisBackend(url, prefix=f"{prefix}-plain" if prefix else "plain"))
    if url.startswith("postgresql"):
        interval, grace = heartbeat_settings()
        return optuna.storages.RDBStorage(
            url, heartbeat_interval=interval, grace_period=grace, engine_kwargs={"pool_pre_ping": True}
        )
    raise SystemExit(f"--against-plain compares PostgreSQL or Redis storages, not {redact(url)}")


def load(
    storage: optuna.storages.BaseStorage, trials: int, reports: int, sampler: str
) -> Iterator[dict[str, float]]:
    """Grow one study on ``storage`` trial by trial, yielding each trial's timings (seconds)."""
    name = f"storage-load-{uuid.uuid4().hex[:8]}"
    study = optuna.create_study(study_name=name, storage=storage, sampler=make_sampler(sampler))
    reads = _Timed(study._storage, ("get_all_trials", "get_trial", "get_study_directions"))
    writes = _Timed(study._storage, ("create_new_trial", "set_trial_param", "set_trial_state_values"))
    try:
        for number in range(trials):
            reads.seconds = writes.seconds = 0.0
            t0 = time.perf_counter()
            trial = study.ask()
            lr = trial.suggest_float("peak_lr", 1e-4, 3e-2, log=True)
            batch = trial.suggest_categorical("micro_batch_size", [16, 32, 64])
            warmup = trial.suggest_int("warmup_steps", 0, 500)
            t1 = time.perf_counter()
            ask_read, ask_write = reads.seconds, writes.seconds
            for step in range(reports):
                trial.report(1.0 / (1 + step * lr * 100) + warmup * 1e-5, step=(step + 1) * batch * 64)
            t2 = time.perf_counter()
            for key in ("recipe", "status", "curve", "samples_per_second", "peak_memory_mb", "worker"):
                trial.set_user_attr(key, {"n": number} if key in ("recipe", "curve") else number)
            t3 = time.perf_counter()
            study.tell(trial, 1.0 / (1 + lr * 100) + warmup * 1e-5)
            t4 = time.perf_counter()
            yield {
                "ask": t1 - t0,
                "ask_read": ask_read,
                "ask_write": ask_write,
                "ask_sampler": (t1 - t0) - ask_read - ask_write,
                "report": (t2 - t1) / reports,
                "attrs": (t3 - t2) / 6,
                "tell": t4 - t3,
                "trial": t4 - t0,
            }
    finally:
        optuna.delete_study(study_name=name, storage=storage)


def bucket_ms(rows: list[dict[str, float]]) -> dict[str, float]:
    return {key: round(1e3 * statistics.mean(r[key] for r in rows), 3) for key in rows[0]}


def run(url: str, trials: int, reports: int, sampler: str, bucket: int) -> dict[str, Any]:
    rows: list[dict[str, float]] = []
    for number, row in enumerate(load(open_storage(url, create=True), trials, reports, sampler)):
        rows.append(row)
        if (number + 1) % bucket == 0:
            ms = bucket_ms(rows[-bucket:])
            print(
                f"trials {number + 2 - bucket:>5}-{number + 1:<5} ask {ms['ask']:7.2f} ms "
                f"(reads {ms['ask_read']:5.2f}, writes {ms['ask_write']:5.2f}, sampler {ms['ask_sampler']:5.2f}) | report {ms['report']:6.2f} ms | "
                f"attr {ms['attrs']:6.2f} ms | tell {ms['tell']:6.2f} ms | trial {ms['trial']:7.1f} ms",
                flush=True,
            )
    return {
        "storage": redact(url),
        "sampler": sampler,
        "trials": trials,
        "reports_per_trial": reports,
        "first_bucket_ms": bucket_ms(rows[:bucket]),
        "last_bucket_ms": bucket_ms(rows[-bucket:]),
    }


_COMPARED = ("ask_write", "report", "attrs", "tell", "trial")


def run_against_plain(url: str, trials: int, reports: int, sampler: str, bucket: int) -> dict[str, Any]:
    """Convtune's storage and plain Optuna's on the same server, one trial of each in turn."""
    ours = load(open_storage(url, create=True), trials, reports, sampler)
    plain = load(plain_storage(url), trials, reports, sampler)
    rows: dict[str, list[dict[str, float]]] = {"convtune": [], "plain": []}
    table: list[dict[str, Any]] = []
    print(f"| trials | {' | '.join(f'{k}: convtune / plain ms (×)' for k in _COMPARED)} |")
    print(f"|---|{'---|' * len(_COMPARED)}")
    for number, (row, plain_row) in enumerate(zip(ours, plain, strict=True)):
        rows["convtune"].append(row)
        rows["plain"].append(plain_row)
        if (number + 1) % bucket == 0:
            mine, theirs = bucket_ms(rows["convtune"][-bucket:]), bucket_ms(rows["plain"][-bucket:])
            cells = [f"{mine[k]:.2f} / {theirs[k]:.2f} ({mine[k] / theirs[k]:.2f}×)" for k in _COMPARED]
            print(f"| {number + 2 - bucket}–{number + 1} | {' | '.join(cells)} |", flush=True)
            table.append({"trials": number + 1, "convtune_ms": mine, "plain_ms": theirs})
    return {"storage": redact(url), "sampler": sampler, "reports_per_trial": reports, "buckets": table}


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--storage", default="postgresql://postgres@127.0.0.1:5432/test")
    parser.add_argument("--trials", type=int, default=1000)
    parser.add_argument("--reports", type=int, default=20)
    parser.add_argument("--sampler", choices=["tpe", "random"], default="tpe")
    parser.add_argument("--bucket", type=int, default=100)
    parser.add_argument(
        "--against-plain",
        action="store_true",
        help="also grow a study on plain Optuna's storage of the same URL, side by side; print ratios",
    )
    args = parser.parse_args()
    optuna.logging.set_verbosity(optuna.logging.WARNING)
    warnings.filterwarnings("ignore")
    measure = run_against_plain if args.against_plain else run
    print(json.dumps(measure(args.storage, args.trials, args.reports, args.sampler, args.bucket)))


if __name__ == "__main__":
    main()
