"""Many workers on one study: slices of the machine, seeds, journal leases, and 8 workers on PostgreSQL."""

from __future__ import annotations

import multiprocessing as mp
import time
from pathlib import Path

import optuna
import pytest
import services
from optuna.storages import RetryHeartbeatStaleTrialCallback
from optuna.storages._heartbeat import is_heartbeat_enabled
from optuna.trial import TrialState
from specs import digits_spec

from convtune.config.record import TrialRecord
from convtune.config.spec import StudySpec
from convtune.errors import ConfigError, StorageError
from convtune.storage import open_storage
from convtune.storage.leases import LEASE_ATTR, WORKER_ATTR, Lease, sweep_stale
from convtune.study import create_study, open_study, run_study
from convtune.study.workers import check_workers, plan_slices, run_workers, worker_seed

SPACE = {**services.FAULT_SPACE, "horizon_samples": 4096}


def tiny_spec(**overrides: object) -> StudySpec:
    # Every trial must train (curves, leases, retries): no near-repeat reuses an outcome.
    defaults = {
        "space": SPACE,
        "target": "accuracy>=0.9",
        "max_cost": 2048,
        "eval_every": {"samples": 512},
        "duplicate_tolerance": 0.0,
    }
    return digits_spec(**(defaults | overrides))


def test_optuna5_journal_storage_has_no_heartbeat(tmp_path: Path) -> None:
    """The finding behind convtune's leases: journals neither beat nor fail stale trials."""
    rdb = open_storage(f"sqlite:///{tmp_path / 'x.db'}", create=True)
    journal = open_storage(f"journal://{tmp_path / 'x.log'}", create=True)
    assert is_heartbeat_enabled(rdb)
    assert not is_heartbeat_enabled(journal)
    study = optuna.create_study(storage=journal)
    study.ask()  # a worker that died right after asking
    optuna.storages.fail_stale_trials(study)  # a silent no-op on journals
    assert study.trials[0].state == TrialState.RUNNING


def test_slices_give_each_worker_its_own_gpus_or_cores() -> None:
    gpu = plan_slices(4, 2, gpus=[str(i) for i in range(8)], cpus=list(range(32)))
    assert [s.env["CUDA_VISIBLE_DEVICES"] for s in gpu] == ["0,1", "2,3", "4,5", "6,7"]
    with pytest.raises(ConfigError, match="need 10 GPUs, this node has 8"):
        plan_slices(5, 2, gpus=[str(i) for i in range(8)], cpus=list(range(32)))
    cpu = plan_slices(4, 1, gpus=[], cpus=list(range(8)))
    assert [s.cpus for s in cpu] == [(0, 1), (2, 3), (4, 5), (6, 7)]
    assert not any(s.shared for s in cpu) and all(not s.env for s in cpu)
    crowded = plan_slices(8, 1, gpus=[], cpus=[0, 1])
    assert [s.cpus for s in crowded] == [(0,), (1,)] * 4 and all(s.shared for s in crowded)


def test_every_worker_gets_its_own_sampler_seed() -> None:
    seeds = {worker_seed(0, i) for i in range(16)} | {worker_seed(0, 0, restart=1)}
    assert len(seeds) == 17
    assert worker_seed(0, 3) == worker_seed(0, 3)


def test_sqlite_refuses_more_than_one_worker() -> None:
    check_workers("sqlite:///x.db", 1)
    with pytest.raises(StorageError, match="SQLite takes one writer") as info:
        check_workers("sqlite:///x.db", 2)
    assert "journal://" in info.value.one_line() and "postgresql://" in info.value.one_line()


def test_journal_lease_fails_a_stale_trial_and_retries_it_twice_at_most(tmp_path: Path) -> None:
    url = f"journal://{tmp_path / 'lease.log'}"
    study = create_study("lease", tiny_spec(), url)
    storage = study._storage

    trial = study.ask()
    trial.suggest_float("x", 0.0, 1.0)
    with Lease(storage, trial._trial_id, interval=0.2):
        first = storage.get_trial(trial._trial_id).user_attrs[LEASE_ATTR]
        time.sleep(0.5)
        renewed = storage.get_trial(trial._trial_id).user_attrs[LEASE_ATTR]
        assert renewed > first, "the lease thread must renew while the trial runs"
        assert sweep_stale(study, grace=3.0, max_retry=2) == [], "a live lease is not stale"
    # The worker died: its lease is no longer renewed. After the grace period it is failed.
    numbers = [trial.number]
    for _ in range(3):
        time.sleep(1.1)
        assert sweep_stale(study, grace=1.0, max_retry=2) == [numbers[-1]]
        assert sweep_stale(study, grace=1.0, max_retry=2) == [], "one sweep per stale trial"
        failed = study._storage.get_trial(study.trials[numbers[-1]]._trial_id)
        assert failed.state == TrialState.FAIL and failed.user_attrs["status"] == "failed"
        waiting = study.get_trials(states=(TrialState.WAITING,))
        if len(numbers) == 3:  # the original and two retries: no third retry
            assert waiting == []
            break
        assert len(waiting) == 1 and waiting[0].params == {"x": trial.params["x"]}
        assert RetryHeartbeatStaleTrialCallback.retried_trial_number(waiting[0]) == trial.number
        assert "status" not in waiting[0].user_attrs, "the retry starts clean"
        retry = study.ask()  # a worker pops the retry ... and dies too
        assert retry.number == waiting[0].number
        numbers.append(retry.number)
    assert [t.state for t in study.trials] == [TrialState.FAIL] * 3


def test_an_rdb_trial_whose_worker_died_before_its_first_heartbeat_is_failed_and_retried(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("CONVTUNE_HEARTBEAT_INTERVAL", "1")
    monkeypatch.setenv("CONVTUNE_GRACE_PERIOD", "2")
    url = f"sqlite:///{tmp_path / 'orphan.db'}"
    study = create_study("orphan", tiny_spec(), url)
    orphan = study.ask()  # asked, then the worker died: no heartbeat, no worker attr
    orphan.suggest_float("peak_lr", 3.0e-3, 3.0e-2, log=True)
    claimed = study.ask()  # a live worker's trial: marked as its own (its heartbeat covers it)
    claimed.set_user_attr(WORKER_ATTR, "elsewhere:1")
    time.sleep(2.5)
    optuna.storages.fail_stale_trials(study)  # Optuna's heartbeat sees neither (no first beat)
    assert [t.state for t in study.get_trials()] == [TrialState.RUNNING] * 2

    run_study("orphan", n_trials=1, storage=url)
    trials = open_study("orphan", url)[0].trials
    assert trials[orphan.number].state == TrialState.FAIL
    assert "never claimed" in trials[orphan.number].user_attrs["error"]
    assert trials[claimed.number].state == TrialState.RUNNING, "claimed trials are the heartbeat's"

    # The supervisor saw a worker die: its trial fails at once, a live worker's long one does not.
    dead = study.ask()
    dead.set_user_attr(WORKER_ATTR, "host:404")
    assert sweep_stale(study, grace=2.0, max_retry=2, dead_workers={"host:404"}, unclaimed_only=True) == [
        dead.number
    ]
    assert study._storage.get_trial(claimed._trial_id).state == TrialState.RUNNING
    (retry,) = [
        t for t in trials if RetryHeartbeatStaleTrialCallback.retried_trial_number(t) == orphan.number
    ]
    assert retry.state == TrialState.COMPLETE and retry.params["peak_lr"] == orphan.params["peak_lr"]


def test_two_local_workers_share_a_journal_study(tmp_path: Path) -> None:
    url = f"journal://{tmp_path / 'two.log'}"
    create_study("two", tiny_spec(), url)
    events: list[str] = []
    report = run_workers(
        "two", workers=2, n_trials=4, timeout=None, storage=url, on_event=lambda e: events.append(e.kind)
    )
    assert report.exit_status == 0 and report.error is None
    study, _ = open_study("two", url)
    trials = study.trials
    assert [t.state for t in trials] == [TrialState.COMPLETE] * 4, [t.state for t in trials]
    assert len({t.user_attrs[WORKER_ATTR] for t in trials}) == 2, "both workers must run trials"
    assert len({t.params["peak_lr"] for t in trials}) == 4, "workers must not suggest the same config"
    for t in trials:
        assert list(t.intermediate_values) == TrialRecord.of(t).attrs["curve"]["samples"]
    assert events.count("done") == 4


def test_eight_workers_on_postgres_lose_and_duplicate_nothing() -> None:
    app = services.tag("load")
    url = services.postgres_url(app)
    name = services.tag("load-study")
    try:
        optuna.create_study(study_name=name, storage=open_storage(url, create=True))
        ctx = mp.get_context("spawn")
        # The workers import this light module (not this file, which imports torch).
        procs = [ctx.Process(target=services.light_worker, args=(url, name, 4, 10)) for _ in range(8)]
        for p in procs:
            p.start()
        for p in procs:
            p.join(timeout=180)
        assert [p.exitcode for p in procs] == [0] * 8
        trials = optuna.load_study(study_name=name, storage=url).trials
        assert sorted(t.number for t in trials) == list(range(32)), "no lost or duplicated trial"
        assert all(t.state == TrialState.COMPLETE for t in trials)
        for t in trials:
            assert sorted(t.intermediate_values) == [s * 100 for s in range(10)], "whole curve"
            assert TrialRecord.of(t).attrs["curve"] == list(range(10))
    finally:
        services.drop_postgres_study(services.postgres_url(), name)


def test_wallclock_studies_warn_when_workers_share_cores() -> None:
    from convtune.study.workers import contention_warning

    cpu = plan_slices(2, 1, gpus=[], cpus=[0, 1, 2, 3])
    gpu = plan_slices(2, 1, gpus=["0", "1"], cpus=[0, 1, 2, 3])
    warning = contention_warning(tiny_spec(cost="wallclock"), cpu)
    assert warning and "include their contention" in warning
    assert contention_warning(tiny_spec(cost="samples"), cpu) is None, "samples do not depend on speed"
    assert contention_warning(tiny_spec(cost="wallclock"), gpu) is None, "each worker has its own GPU"
    assert contention_warning(tiny_spec(cost="wallclock"), cpu[:1]) is None


def test_a_worker_is_known_dead_here_by_host_pid_and_start_time() -> None:
    """Never by PID alone: a live process with the worker's PID but another start time is not it."""
    import os
    import subprocess

    from convtune.storage.leases import WORKER_START_ATTR, dead_here, process_started, worker_id

    host = worker_id().rsplit(":", 1)[0]
    # Alive while its start time is read ("sleep 0" could be gone by then), then ended.
    ended = subprocess.Popen(["sleep", "60"])
    started = process_started(ended.pid)
    ended.kill()
    ended.wait()
    me = process_started(os.getpid())
    assert started is not None and me is not None
    assert dead_here({WORKER_ATTR: f"{host}:{ended.pid}", WORKER_START_ATTR: started})
    assert not dead_here({WORKER_ATTR: worker_id(), WORKER_START_ATTR: me}), "alive"
    # This process's PID, another start time: the recorded worker is gone, its PID reused.
    assert dead_here({WORKER_ATTR: worker_id(), WORKER_START_ATTR: started})
    # Another host, or no start time recorded: not known here (the lease or heartbeat decides).
    assert not dead_here({WORKER_ATTR: f"elsewhere:{ended.pid}", WORKER_START_ATTR: started})
    assert not dead_here({WORKER_ATTR: f"{host}:{ended.pid}"})
    # Another PID namespace (a container sharing the hostname): not judged from here.
    other_ns = started.replace(started.split("/")[1], "pid:[1]")
    assert not dead_here({WORKER_ATTR: f"{host}:{ended.pid}", WORKER_START_ATTR: other_ns})


def test_a_worker_checks_the_spec_paths_before_its_first_trial(tmp_path: Path) -> None:
    """`study create` may run on a login node: a path that is no directory on this host fails
    the run with one error before any trial is asked."""
    url = f"sqlite:///{tmp_path / 'paths.db'}"
    create_study("paths", tiny_spec(checkpoint_dir=str(tmp_path / "ckpt")), url)
    (tmp_path / "ckpt").write_text("a file where the checkpoints should go")
    with pytest.raises(ConfigError, match="checkpoint_dir"):
        run_study("paths", n_trials=1, storage=url)
    assert open_study("paths", url)[0].trials == []
