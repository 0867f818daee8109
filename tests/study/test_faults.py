"""Faults on the real components: killed workers, Ctrl-C, lost database connections, a full disk.

Heartbeat 1 s and grace 3 s ($CONVTUNE_HEARTBEAT_INTERVAL / $CONVTUNE_GRACE_PERIOD); the tests
assert on trial states, with loose wall-clock bounds only as timeouts.
"""

from __future__ import annotations

import contextlib
import dataclasses
import functools
import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path

import optuna
import pytest
import services
import yaml
from optuna.storages import RetryHeartbeatStaleTrialCallback
from optuna.trial import TrialState

from convtune.config.record import TrialRecord
from convtune.config.spec import StudySpec
from convtune.config.target import Target
from convtune.storage import open_storage
from convtune.storage.leases import WORKER_ATTR
from convtune.study import create_study, open_study, penalty_base, run_study
from convtune.study.workers import run_workers

SPACE = services.FAULT_SPACE
SPEC = {"workload": "digits", **services.FAULT_SPEC}


@pytest.fixture(autouse=True)
def short_heartbeat(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CONVTUNE_HEARTBEAT_INTERVAL", "1")
    monkeypatch.setenv("CONVTUNE_GRACE_PERIOD", "3")
    monkeypatch.setenv("CONVTUNE_RECONNECT_SECONDS", "30")


# Trials for a run that a signal interrupts: far more than run before it lands. With 4 the run
# could end first under load, and the signal then met a process that had already finished.
LONG_RUN = "40"


def spec(**overrides: object) -> StudySpec:
    return StudySpec.from_dict({**SPEC, **overrides})


def _running_with_reports(
    url: str, name: str, reports: int = 2, unfinished: bool = False
) -> optuna.trial.FrozenTrial | None:
    """A running trial with at least ``reports`` reports; with ``unfinished``, one whose latest
    report is below the spec's cap and short of its target (it has training left to do)."""
    study = optuna.load_study(study_name=name, storage=open_storage(url))
    target = Target.parse(str(SPEC["target"]))
    for trial in study.get_trials(deepcopy=False, states=(TrialState.RUNNING,)):
        steps = trial.intermediate_values
        if len(steps) < reports or WORKER_ATTR not in trial.user_attrs:
            continue
        latest = max(steps)
        if unfinished and (latest >= float(str(SPEC["max_cost"])) or target.is_reached(steps[latest])):
            continue
        return trial
    return None


def _wait_for(check: Callable[[], object], timeout: float, what: str) -> object:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        found = check()
        if found:
            return found
        time.sleep(0.2)
    raise AssertionError(f"timed out after {timeout:g} s waiting for {what}")


def _assert_whole_curves(trials: list[optuna.trial.FrozenTrial]) -> None:
    for t in trials:
        if t.state == TrialState.COMPLETE:
            # Sorted: an RDB storage returns intermediate values in no particular order.
            assert sorted(t.intermediate_values) == TrialRecord.of(t).attrs["curve"]["samples"], t.number


# The trial to be killed holds still for its killer: the first trial to pass its second evaluation
# (in any worker) claims the marker file, writes its worker's pid there and sleeps until the kill.
# Polling the storage for a running trial instead raced the trials themselves: under CI load all
# five finished between two polls, and no trial was killed.
HOLD_FOR_THE_KILLER = """
    if model is not getattr(self, "trial_model", None):  # a new trial: count its own steps
        self.trial_model, self.trial_steps = model, 0
    self.trial_steps += 1
    if self.trial_steps == 40:  # after the reports at steps 16 and 32 (512 samples each)
        with contextlib.suppress(FileExistsError):
            claim = os.open(os.environ["CONVTUNE_TEST_KILL_MARKER"], os.O_CREAT | os.O_EXCL | os.O_WRONLY)
            os.write(claim, str(os.getpid()).encode())
            os.close(claim)
            time.sleep(120)  # killed long before this ends
"""


@pytest.mark.parametrize("backend", ["journal", "postgresql"])
def test_sigkilled_worker_trial_fails_and_is_retried(
    backend: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    name = services.tag("kill")
    url = f"journal://{tmp_path / 'kill.log'}" if backend == "journal" else services.postgres_url()
    checkpoints = tmp_path / "ckpt"
    marker = tmp_path / "held-by"
    monkeypatch.setenv("CONVTUNE_TEST_KILL_MARKER", str(marker))  # the workers inherit it
    workload = services.digits_with_a_fault(
        tmp_path, HOLD_FOR_THE_KILLER, imports="import contextlib\nimport os\nimport time"
    )
    # Journal trials also checkpoint: the retry resumes where the killed trial left off.
    unpruned = {"pruner": "none", **workload}
    create_study(
        name,
        spec(checkpoint_dir=str(checkpoints), **unpruned) if backend == "journal" else spec(**unpruned),
        url,
    )
    killed: list[int] = []
    killed_by: list[str] = []
    errors: list[BaseException] = []

    def held_trial() -> optuna.trial.FrozenTrial | None:
        if not marker.exists() or not (pid := marker.read_text()):
            return None
        study = optuna.load_study(study_name=name, storage=open_storage(url))
        for trial in study.get_trials(deepcopy=False, states=(TrialState.RUNNING,)):
            if trial.user_attrs.get(WORKER_ATTR, "").endswith(f":{pid}"):
                return trial
        return None

    def killer() -> None:
        try:
            trial = _wait_for(held_trial, 120, "a trial held for the kill")
            assert isinstance(trial, optuna.trial.FrozenTrial)
            killed.append(trial.number)
            killed_by.append(trial.user_attrs[WORKER_ATTR])
            os.kill(int(marker.read_text()), signal.SIGKILL)
        except BaseException as error:  # reported by the test, not lost in a thread
            errors.append(error)

    thread = threading.Thread(target=killer, daemon=True)
    thread.start()
    try:
        report = run_workers(name, workers=2, n_trials=5, timeout=None, storage=url)
        thread.join(timeout=5)
        assert not errors, errors
        assert killed, "no trial was killed"
        assert report.restarts == 1 and report.exit_status == 0
        study, _ = open_study(name, url)
        trials = study.trials
        # The one failed trial is the one the kill landed on: it was held still for it.
        failed = [t for t in trials if t.state == TrialState.FAIL]
        assert len(failed) == 1, [(t.number, t.state.name) for t in trials]
        lost = failed[0]
        assert lost.number == killed[0]
        assert lost.user_attrs[WORKER_ATTR] == killed_by[0]
        assert len(lost.intermediate_values) == 2, "killed between its second and third evaluation"
        retries = [
            t for t in trials if RetryHeartbeatStaleTrialCallback.retried_trial_number(t) == lost.number
        ]
        assert len(retries) == 1 and retries[0].params == lost.params
        assert retries[0].state == TrialState.COMPLETE
        others = [t for t in trials if t.number != lost.number]
        assert all(t.state == TrialState.COMPLETE for t in others), [t.state.name for t in others]
        assert len(others) == 5, "the study still reaches its 5 trials"
        _assert_whole_curves(trials)
        if backend == "journal":
            retry = retries[0]
            assert retry.user_attrs.get("resumed_from_checkpoint") is True
            for step, value in lost.intermediate_values.items():  # the same curve so far
                assert retry.intermediate_values[step] == pytest.approx(value, abs=1e-6)
            assert not any(checkpoints.rglob("checkpoint.pt")), "finished trials leave no checkpoint"
    finally:
        if backend == "postgresql":
            services.drop_postgres_study(url, name)


def _cli(args: list[str], cwd: Path, tag: str) -> subprocess.Popen[str]:
    # PYTHONFAULTHANDLER: a run that hangs is sent SIGABRT (see _interrupt), and every one of its
    # Python processes then prints where each of its threads stood, for the failure message.
    env = {**os.environ, services.TAG_ENV: tag, "PYTHONWARNINGS": "ignore", "PYTHONFAULTHANDLER": "1"}
    return subprocess.Popen(
        [sys.executable, "-m", "convtune.cli", *args],
        cwd=cwd,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def _interrupt(
    proc: subprocess.Popen[str], timeout: float = 60, sig: signal.Signals = signal.SIGINT
) -> tuple[str, str]:
    """Ctrl-C (or ``sig``), then wait for the exit; what it printed if it did not exit in time."""
    proc.send_signal(sig)
    try:
        return proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        err = _abort_with_stacks(proc)
        raise AssertionError(
            f"still running {timeout:g} s after {sig.name}; it printed: {err[-6000:]}"
        ) from None


def _abort_with_stacks(proc: subprocess.Popen[str]) -> str:
    """Ends a hung run so that it says where it hung: SIGABRT to each of its processes (the
    fault handler, on in ``_cli``, prints their threads' stacks to the shared stderr), then
    SIGKILL; returns what it printed."""
    try:
        environ = Path(f"/proc/{proc.pid}/environ").read_bytes().split(b"\0")
        tag = next(
            v.split(b"=", 1)[1].decode() for v in environ if v.startswith(services.TAG_ENV.encode() + b"=")
        )
        pids = services.tagged_processes(tag)
    except (OSError, StopIteration):
        pids = [proc.pid]
    for pid in pids:
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGABRT)
    try:
        _, err = proc.communicate(timeout=15)
    except subprocess.TimeoutExpired:
        proc.kill()
        _, err = proc.communicate()
    for pid in pids:
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGKILL)
    return err


@pytest.mark.parametrize("workers", [1, 2])
def test_ctrl_c_marks_the_trial_stops_everything_exits_130_and_resumes(workers: int, tmp_path: Path) -> None:
    url = f"journal://{tmp_path / 'int.log'}"
    create_study("int", spec(), url)
    tag = services.tag("sigint")
    proc = _cli(
        ["study", "run", "int", "-n", LONG_RUN, "--storage", url, "--workers", str(workers)], tmp_path, tag
    )
    try:
        _wait_for(lambda: _running_with_reports(url, "int", reports=1), 120, "a running trial")
        out, err = _interrupt(proc)
    finally:
        proc.kill()
    assert proc.returncode == 130, (proc.returncode, out[-2000:], err[-2000:])
    assert "Traceback" not in err and "Aborted" not in err
    assert "Resume with: convtune study run int" in err
    assert "failed with" not in err, err[-2000:]  # Optuna's crash-like warnings are dropped
    _wait_for(lambda: not services.tagged_processes(tag), 15, "no orphan processes")
    trials = open_study("int", url)[0].trials
    interrupted = [t for t in trials if t.state == TrialState.FAIL]
    assert interrupted and all(t.user_attrs.get("status") == "interrupted" for t in interrupted), [
        (t.number, t.user_attrs.get("status"), t.user_attrs.get("error"), len(t.intermediate_values))
        for t in trials
    ]
    # Each interrupted trial is queued again exactly once (and nothing left RUNNING or unmarked).
    _assert_each_stopped_trial_requeued_once(url, "int")

    if workers > 1:
        return  # resuming is the same for both: checked once
    # The same command resumes the study.
    again = _cli(["study", "run", "int", "-n", "1", "--storage", url], tmp_path, tag)
    out, err = again.communicate(timeout=120)
    assert again.returncode == 0, err[-2000:]
    after = open_study("int", url)[0].trials
    assert len([t for t in after if t.state == TrialState.COMPLETE]) == (
        len([t for t in trials if t.state == TrialState.COMPLETE]) + 1
    )


@pytest.mark.parametrize("workers", [1, 2])
def test_sigterm_requeues_the_running_trial_and_its_retry_resumes_from_the_checkpoint(
    workers: int, tmp_path: Path
) -> None:
    url = f"journal://{tmp_path / 'term.log'}"
    create_study("term", spec(checkpoint_dir=str(tmp_path / "ckpt")), url)
    tag = services.tag("sigterm")
    proc = _cli(
        ["study", "run", "term", "-n", LONG_RUN, "--storage", url, "--workers", str(workers)], tmp_path, tag
    )
    try:
        _wait_for(lambda: _running_with_reports(url, "term", reports=2), 120, "a running trial")
        out, err = _interrupt(proc, sig=signal.SIGTERM)
    finally:
        proc.kill()
    assert proc.returncode == 143, (proc.returncode, out[-2000:], err[-2000:])
    assert "Traceback" not in err and "preempted (SIGTERM, or a signal to a worker or rank)" in err, err[
        -3000:
    ]
    _wait_for(lambda: not services.tagged_processes(tag), 15, "no orphan processes")
    trials = open_study("term", url)[0].trials
    preempted = [t for t in trials if t.state == TrialState.FAIL]
    assert preempted and all(t.user_attrs.get("status") == "preempted" for t in preempted)
    assert not [t for t in trials if t.state == TrialState.RUNNING], "no trial left running"
    retries = {
        RetryHeartbeatStaleTrialCallback.retried_trial_number(t): t
        for t in trials
        if t.state == TrialState.WAITING
    }
    assert set(retries) == {t.number for t in preempted}, "each preempted trial is queued again"
    for t in preempted:
        assert retries[t.number].params == t.params and "status" not in retries[t.number].user_attrs
        if len(t.intermediate_values) >= 2:  # written at evaluations: one just begun may have none yet
            assert (tmp_path / "ckpt" / "term" / f"trial-{t.number}" / "checkpoint.pt").exists()

    if workers > 1:
        return  # resuming is the same for both: checked once
    # The same command runs the retry first, from the checkpoint: the curve goes on, not over.
    again = _cli(["study", "run", "term", "-n", "1", "--storage", url], tmp_path, tag)
    out, err = again.communicate(timeout=120)
    assert again.returncode == 0, err[-2000:]
    (lost,) = preempted
    resumed = open_study("term", url)[0].trials[retries[lost.number].number]
    assert resumed.state == TrialState.COMPLETE and resumed.user_attrs.get("resumed_from_checkpoint")
    seen = sorted(lost.intermediate_values)
    assert [resumed.intermediate_values[s] for s in seen] == pytest.approx(
        [lost.intermediate_values[s] for s in seen]
    )
    assert max(resumed.intermediate_values) == SPEC["max_cost"]  # and on to its cap


def _starting_workers(tag: str) -> list[int]:
    """Tagged worker processes the supervisor spawned (they import torch for seconds first)."""
    found = []
    for pid in services.tagged_processes(tag):
        try:
            cmdline = Path(f"/proc/{pid}/cmdline").read_bytes()
        except OSError:
            continue
        if b"spawn_main" in cmdline:
            found.append(pid)
    return found


def test_ctrl_c_while_workers_start_exits_130_without_a_traceback(tmp_path: Path) -> None:
    url = f"journal://{tmp_path / 'early.log'}"
    create_study("early", spec(), url)
    tag = services.tag("sigint-early")
    proc = _cli(["study", "run", "early", "-n", "4", "--storage", url, "--workers", "2"], tmp_path, tag)
    try:
        # Both workers exist and are still importing torch: no trial has begun.
        _wait_for(lambda: len(_starting_workers(tag)) >= 2, 120, "two starting workers")
        out, err = _interrupt(proc)
    finally:
        proc.kill()
    assert proc.returncode == 130, (proc.returncode, out[-2000:], err[-2000:])
    assert "Traceback" not in err and "KeyboardInterrupt" not in err, err[-3000:]
    assert "Resume with: convtune study run early" in err
    _wait_for(lambda: not services.tagged_processes(tag), 15, "no orphan processes")
    trials = open_study("early", url)[0].trials
    assert not [t for t in trials if t.state == TrialState.RUNNING], "no trial left running"
    assert all(t.user_attrs.get("status") == "interrupted" for t in trials if t.state == TrialState.FAIL)


GC_INTERRUPT = """
    if self.calls == 20:  # the 20th step's Ctrl-C arrives inside a weakref callback
        garbage = _Garbage()
        self.ref = weakref.ref(garbage, _interrupted)
        del garbage  # Python prints "Exception ignored" and drops the KeyboardInterrupt
"""
GC_HELPERS = """

class _Garbage:
    pass


def _interrupted(_ref):
    raise KeyboardInterrupt  # as if SIGINT landed while the garbage collector ran this
"""


def test_ctrl_c_dropped_by_garbage_collection_still_stops_the_study(
    tmp_path: Path, capfd: pytest.CaptureFixture[str]
) -> None:
    workload = services.digits_with_a_fault(
        tmp_path, GC_INTERRUPT, imports="import weakref", helpers=GC_HELPERS
    )
    url = f"sqlite:///{tmp_path / 'gc.db'}"
    create_study("gc", spec(**workload, checkpoint_dir=str(tmp_path / "ckpt")), url)
    with pytest.raises(KeyboardInterrupt):
        run_study("gc", n_trials=3, storage=url, executor="inprocess")
    assert "Exception ignored" not in capfd.readouterr().err
    trials = open_study("gc", url)[0].trials
    # Stopped at the next evaluation of its first trial, not after three whole trials; queued again.
    assert [t.state for t in trials] == [TrialState.FAIL, TrialState.WAITING], [t.state.name for t in trials]
    assert trials[1].system_attrs.get("retry_history") == [0]
    assert trials[0].user_attrs.get("status") == "interrupted"
    assert len(trials[0].intermediate_values) < 4096 // 512
    # Re-queued, so it keeps its checkpoint: the retry trains on from it.
    assert any((tmp_path / "ckpt" / "gc" / "trial-0").glob("*checkpoint*"))


SLOW_AFTER_FIRST_EVAL = """
    if self.calls > 16 and os.environ.get("SLOW_AFTER_FIRST_EVAL"):
        time.sleep(1.0)  # a second per step: the next evaluation is ~16 s away
"""


def test_ctrl_c_stops_launched_ranks_at_once_exits_130_and_resumes(tmp_path: Path) -> None:
    url = f"journal://{tmp_path / 'eint.log'}"
    workload = services.digits_with_a_fault(tmp_path, SLOW_AFTER_FIRST_EVAL, imports="import os\nimport time")
    create_study("eint", spec(**workload, max_cost=1024), url)
    tag = services.tag("sigint-elastic")
    command = ["study", "run", "eint", "-n", "2", "--storage", url, "--executor", "elastic"]
    os.environ["SLOW_AFTER_FIRST_EVAL"] = "1"
    try:
        proc = _cli(command, tmp_path, tag)
    finally:
        del os.environ["SLOW_AFTER_FIRST_EVAL"]
    try:
        _wait_for(lambda: _running_with_reports(url, "eint", reports=1), 120, "a running trial")
        assert len(services.tagged_processes(tag)) >= 3, "torchrun and its rank run"
        proc.send_signal(signal.SIGINT)
        sent = time.monotonic()
        out, err = proc.communicate(timeout=60)
        waited = time.monotonic() - sent
    finally:
        proc.kill()
    assert proc.returncode == 130, (proc.returncode, out[-2000:], err[-2000:])
    # The ranks are mid-step, ~16 s before their next evaluation: they are not waited for.
    assert waited < 10, f"exited {waited:.1f} s after Ctrl-C"
    assert "Traceback" not in err and "Resume with: convtune study run eint" in err
    _wait_for(lambda: not services.tagged_processes(tag), 15, "no orphan processes")
    trials = open_study("eint", url)[0].trials
    assert [t.state for t in trials] == [TrialState.FAIL, TrialState.WAITING], [t.state.name for t in trials]
    assert trials[0].user_attrs.get("status") == "interrupted", trials[0].user_attrs

    # The same command resumes the study: the interrupted trial's retry runs first.
    again = _cli([*command[:3], "-n", "1", *command[5:]], tmp_path, tag)
    out, err = again.communicate(timeout=120)
    assert again.returncode == 0, err[-2000:]
    after = open_study("eint", url)[0].trials
    assert [t.state for t in after] == [TrialState.FAIL, TrialState.COMPLETE], [t.state.name for t in after]
    assert after[1].system_attrs.get("retry_history") == [0], "the retry of the interrupted trial ran"
    _wait_for(lambda: not services.tagged_processes(tag), 15, "no orphan processes")


class _Cutter(threading.Thread):
    """Cuts the study's connections every ``every`` seconds until stopped; counts the cuts."""

    def __init__(self, cut: Callable[[], int], every: float = 0.4):
        super().__init__(daemon=True)
        self.cut, self.every, self.cuts = cut, every, 0
        self.stop = threading.Event()

    def run(self) -> None:
        while not self.stop.wait(self.every):
            self.cuts += self.cut()


@pytest.mark.parametrize("backend", ["postgresql", "redis"])
def test_lost_database_connection_is_retried_and_nothing_is_half_written(backend: str) -> None:
    name = services.tag("cut")
    client = services.tag("cut-client")
    if backend == "postgresql":
        url = services.postgres_url(client)
        cutter = _Cutter(lambda: services.cut_postgres(client))
    else:
        url = services.redis_url(client, prefix=name)
        # A killed Redis client reconnects only on its next command, so many cuts find no
        # connection; cut more often than PostgreSQL's pool, or a short study sees one cut.
        cutter = _Cutter(lambda: services.cut_redis(client), every=0.1)
    try:
        create_study(name, spec(), url)
        cutter.start()
        run_study(name, n_trials=3, storage=url)
        cutter.stop.set()
        cutter.join()
        assert cutter.cuts >= 2, f"only {cutter.cuts} connections were cut"
        trials = open_study(name, url)[0].trials
        assert [t.state for t in trials] == [TrialState.COMPLETE] * 3, [t.state.name for t in trials]
        _assert_whole_curves(trials)
        for t in trials:
            assert t.user_attrs["status"] in ("budget", "reached", "stopped")
    finally:
        cutter.stop.set()
        if backend == "postgresql":
            services.drop_postgres_study(services.postgres_url(), name)
        else:
            services.drop_redis_prefix(name)


def test_full_disk_under_sqlite_is_one_clear_line(tmp_path: Path) -> None:
    """A full disk, made with a file-size limit (a tiny tmpfs needs privileges these tests lack)."""
    (tmp_path / "space.yaml").write_text(yaml.safe_dump(SPACE))
    (tmp_path / "s.yaml").write_text(yaml.safe_dump({**SPEC, "space": "space.yaml"}))
    code = (
        "import resource, signal, sys\n"
        "signal.signal(signal.SIGXFSZ, signal.SIG_IGN)\n"
        "resource.setrlimit(resource.RLIMIT_FSIZE, (32768, 32768))\n"
        "from convtune.cli import main\n"
        "sys.argv = ['convtune', 'study', 'create', 'full', '--config', 's.yaml',"
        " '--storage', 'sqlite:///full/x.db']\n"
        "main()\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", code], cwd=tmp_path, capture_output=True, text=True, timeout=120
    )
    assert result.returncode == 2, result.stderr[-2000:]
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("convtune: error: sqlite:///full/x.db"), lines
    assert "disk has space" in lines[0] and "Traceback" not in result.stderr


OOM_AT_STEP_3 = """
    if self.calls > 3 * 16:  # the fourth training step runs out of device memory
        raise torch.OutOfMemoryError("CUDA out of memory. Tried to allocate 2.00 GiB")
"""


@pytest.mark.parametrize("how", ["memory cap", "CUDA OOM"])
def test_out_of_memory_is_infeasible_not_a_crash(how: str, tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'oom.db'}"
    if how == "memory cap":
        the_spec = spec(max_memory_mb=1)  # every process is over 1 MB: stopped at its first evaluation
    else:
        the_spec = spec(**services.digits_with_a_fault(tmp_path, OOM_AT_STEP_3, imports="import torch"))
    create_study("oom", the_spec, url)
    study = run_study("oom", n_trials=1, storage=url)
    trial = study.trials[0]
    assert trial.state == TrialState.COMPLETE, trial.user_attrs.get("error")
    assert trial.user_attrs["status"] == "oom"
    assert trial.system_attrs["constraints:oom"] == 1.0, "infeasible: the sampler avoids the region"
    assert trial.system_attrs["constraints:diverged"] == 0.0
    assert trial.value >= penalty_base(the_spec), "the penalty, like a diverged trial"
    if how == "memory cap":
        assert "over max_memory_mb=1" in trial.user_attrs["reason"]
        assert len(trial.intermediate_values) == 1
    else:
        assert "OutOfMemoryError" in trial.user_attrs["reason"]


def test_memory_cap_applies_to_launched_ranks(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'eoom.db'}"
    create_study("eoom", spec(max_memory_mb=1), url)  # every rank is over 1 MB
    study = run_study("eoom", n_trials=1, storage=url, executor="elastic", world_size=2)
    trial = study.trials[0]
    assert trial.state == TrialState.COMPLETE, trial.user_attrs.get("error")
    assert trial.user_attrs["status"] == "oom", trial.user_attrs
    assert "over max_memory_mb=1" in trial.user_attrs["reason"]
    assert trial.system_attrs["constraints:oom"] == 1.0
    assert len(trial.intermediate_values) == 1, "stopped at its first evaluation"


class _Preempted(Exception):
    """Stands for the kill: raised from the records callback after some evaluations."""


@pytest.mark.parametrize("precision", ["fp32", "fp16"])
def test_a_preempted_run_resumes_from_its_checkpoint_with_the_same_curve(
    precision: str, tmp_path: Path
) -> None:
    from convtune.config.recipe import Recipe
    from convtune.training.engine import EngineConfig, train
    from convtune.workloads import build_workload

    recipe = Recipe.from_dict(
        {
            "peak_lr": 1e-2,
            "warmup_steps": 8,
            "horizon_samples": 4096,
            "micro_batch_size": 16,
            "grad_accum_steps": 2,
            "schedule": "cosine",
            "optimizer": "adamw",
            "precision": precision,
        }
    )
    config = EngineConfig(cost="samples", eval_every=512, max_cost=3072, seed=3, threads=1)
    uninterrupted = train(build_workload("digits"), recipe, config)

    ckpt = dataclasses.replace(config, checkpoint_dir=str(tmp_path / "ckpt"))
    seen: list[int] = []

    def preempt_after_three(record: object) -> bool:
        seen.append(1)
        if len(seen) == 3:
            raise _Preempted
        return False

    with pytest.raises(_Preempted):
        train(build_workload("digits"), recipe, ckpt, preempt_after_three)
    replayed: list[int] = []
    resumed = train(build_workload("digits"), recipe, ckpt, lambda r: bool(replayed.append(r.samples)))

    assert replayed == [p.samples for p in uninterrupted.history], "the resumed run reports every point"
    assert [p.samples for p in resumed.history] == [p.samples for p in uninterrupted.history]
    for a, b in zip(uninterrupted.history, resumed.history, strict=True):
        assert b.metrics["accuracy"] == pytest.approx(a.metrics["accuracy"], abs=1e-6)
        assert b.train_loss == pytest.approx(a.train_loss, rel=1e-5, abs=1e-6)
        assert b.lr == pytest.approx(a.lr, rel=1e-9)
    assert resumed.status == uninterrupted.status and resumed.steps == uninterrupted.steps


# ---- signal patterns: what schedulers, operators and lost nodes do to a run --------------------
#
# One case per pattern, on a study shared by the cases of its storage: each run resumes what the
# previous one left (the retries run first), so the chain also checks that every stop resumes.
# Each case: a 40-trial run, the signal(s) once trials are training, then the end state: exit
# status and one "Resume with" line, every process gone within 10 s, no trial RUNNING, no FAIL
# without a status, and each preempted trial queued exactly once.


@functools.lru_cache
def _polled_storage(url: str) -> optuna.storages.BaseStorage:
    """One storage per URL for polling: opening one per poll costs more than the poll."""
    return open_storage(url)


def _training(url: str, name: str) -> list[optuna.trial.FrozenTrial]:
    study = optuna.load_study(study_name=name, storage=_polled_storage(url))
    return [
        t
        for t in study.get_trials(deepcopy=False, states=(TrialState.RUNNING,))
        if t.intermediate_values and WORKER_ATTR in t.user_attrs
    ]


def _kill(pids: list[int], sig: signal.Signals) -> None:
    for pid in pids:
        try:
            os.kill(pid, sig)
        except ProcessLookupError:
            pass


def _signal_case(
    url: str,
    name: str,
    tmp_path: Path,
    *,
    workers: int,
    send: Callable[[subprocess.Popen[str], dict[str, list[int]]], None],
    executor: str = "auto",
    ranks: int = 0,
    extra: tuple[str, ...] = (),
) -> tuple[int | None, str, float, list[int]]:
    """Start a run, wait until ``workers`` trials train (and their ranks are up), ``send`` the
    pattern; the exit status, stderr, seconds from the signal until no process remains, and the
    numbers of the trials that were training."""
    tag = services.tag("signals")
    command = ["study", "run", name, "-n", LONG_RUN, "--storage", url, "--workers", str(workers)]
    proc = _cli([*command, "--executor", executor, *extra], tmp_path, tag)
    try:
        _wait_for(lambda: len(_training(url, name)) >= workers, 120, f"{workers} training trial(s)")
        if ranks:
            _wait_for(
                lambda: len(services.process_roles(tag, proc.pid)["rank"]) >= ranks, 30, f"{ranks} rank(s)"
            )
        training = [t.number for t in _training(url, name)]
        sent = time.monotonic()
        send(proc, services.process_roles(tag, proc.pid))
        try:
            _, err = proc.communicate(timeout=60)
        except subprocess.TimeoutExpired:
            proc.kill()
            raise AssertionError(
                f"the run did not stop within 60 s: {proc.communicate()[1][-3000:]}"
            ) from None
        _wait_for(lambda: not services.tagged_processes(tag), 30, "no process of the run")
        gone = time.monotonic() - sent
    finally:
        proc.kill()
        proc.communicate()
        _kill(services.tagged_processes(tag), signal.SIGKILL)
    return proc.returncode, err, gone, training


def _assert_each_stopped_trial_requeued_once(
    url: str, name: str, training: list[int] = ()
) -> list[optuna.trial.FrozenTrial]:
    """No trial RUNNING or FAIL without a status; each preempted trial has exactly one retry;
    each trial that was ``training`` at the signal finished first or was preempted."""
    trials = open_study(name, url)[0].trials
    for number in training:
        trial = trials[number]
        assert trial.state == TrialState.COMPLETE or TrialRecord.of(trial).status == "preempted", (
            number,
            trial.state.name,
            TrialRecord.of(trial).attrs.get("error"),
        )
    assert not [t.number for t in trials if t.state == TrialState.RUNNING], "no trial left running"
    unmarked = [t.number for t in trials if t.state == TrialState.FAIL and not TrialRecord.of(t).status]
    assert not unmarked, f"FAIL without a status: {unmarked}"
    retries: dict[int, int] = {}
    for t in trials:
        history = t.system_attrs.get("retry_history")
        if history:
            retries[history[-1]] = retries.get(history[-1], 0) + 1
    lost = [t.number for t in trials if t.state == TrialState.FAIL]
    assert all(retries.get(n) == 1 for n in lost), {n: retries.get(n) for n in lost}
    _assert_whole_curves(trials)
    return trials


def _preempted_run(returncode: int | None, err: str, gone: float, _training: list[int]) -> None:
    assert returncode == 143, (returncode, err[-3000:])
    assert "Traceback" not in err and err.count("Resume with: convtune study run") == 1, err[-3000:]
    assert gone < 10, f"processes remained {gone:.1f} s after the signal"


def test_signal_patterns_on_postgresql_with_two_workers(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    url = services.postgres_url()
    name = services.tag("preempt-pg")
    # Only the dead-process check can recover a killed run's trials at once: the grace is long.
    monkeypatch.setenv("CONVTUNE_GRACE_PERIOD", "300")
    # Trials slow down after their first evaluation: every signal lands inside a trial.
    monkeypatch.setenv("SLOW_AFTER_FIRST_EVAL", "1")
    workload = services.digits_with_a_fault(tmp_path, SLOW_AFTER_FIRST_EVAL, imports="import os\nimport time")
    create_study(name, spec(**workload, checkpoint_dir=str(tmp_path / "ckpt")), url)
    try:
        # Workers only, a mix: SIGINT to one (not from the supervisor: preemption), SIGTERM to the other.
        def workers_only(_proc: subprocess.Popen[str], roles: dict[str, list[int]]) -> None:
            first, second = roles["worker"]
            os.kill(first, signal.SIGINT)
            os.kill(second, signal.SIGTERM)

        case = _signal_case(url, name, tmp_path, workers=2, send=workers_only)
        _preempted_run(*case)
        _assert_each_stopped_trial_requeued_once(url, name, case[3])

        # SIGKILL of the supervisor: its workers stop by themselves and re-queue their trials.
        code, err, gone, training = _signal_case(
            url, name, tmp_path, workers=2, send=lambda proc, _roles: proc.send_signal(signal.SIGKILL)
        )
        assert code == -signal.SIGKILL and gone < 10, (code, gone, err[-2000:])
        _assert_each_stopped_trial_requeued_once(url, name, training)

        # SIGKILL of every process (a lost node): trials stay RUNNING until a run resumes...
        def everything(proc: subprocess.Popen[str], roles: dict[str, list[int]]) -> None:
            _kill([proc.pid, *roles["worker"]], signal.SIGKILL)

        _signal_case(url, name, tmp_path, workers=2, send=everything)
        killed = [t.number for t in open_study(name, url)[0].trials if t.state == TrialState.RUNNING]
        assert len(killed) == 2
        # ...which fails and re-queues them at its start, well within the 300 s grace period
        # (in this process: the same start as a worker's, without starting one).
        monkeypatch.delenv("SLOW_AFTER_FIRST_EVAL")
        run_study(name, n_trials=1, storage=url)
        trials = _assert_each_stopped_trial_requeued_once(url, name)
        for number in killed:
            assert "its process died" in TrialRecord.of(trials[number]).attrs.get("error", "")
        # The one retry this run took went on from its killed trial's checkpoint, to its cap.
        (retry,) = [
            t
            for t in trials
            if t.system_attrs.get("retry_history", [None])[-1] in killed and t.state.is_finished()
        ]
        assert retry.state == TrialState.COMPLETE and TrialRecord.of(retry).attrs.get(
            "resumed_from_checkpoint"
        )
        assert max(retry.intermediate_values) == SPEC["max_cost"]
    finally:
        services.drop_postgres_study(url, name)


def test_signal_patterns_on_sqlite_with_launched_ranks(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    url = f"sqlite:///{tmp_path / 'ranks.db'}"
    monkeypatch.setenv("SLOW_AFTER_FIRST_EVAL", "1")  # every signal lands inside a trial
    workload = services.digits_with_a_fault(tmp_path, SLOW_AFTER_FIRST_EVAL, imports="import os\nimport time")
    create_study("ranks", spec(**workload), url)

    # The ranks alone (a scheduler's signal to part of the job), a mix: SIGTERM to one of two,
    # SIGINT to the other. The run stops; the trial is preempted, not failed.
    def ranks_only(_proc: subprocess.Popen[str], roles: dict[str, list[int]]) -> None:
        first, second = roles["rank"]
        os.kill(first, signal.SIGTERM)
        os.kill(second, signal.SIGINT)

    case = _signal_case(
        url,
        "ranks",
        tmp_path,
        workers=1,
        executor="elastic",
        ranks=2,
        extra=("--world-size", "2"),
        send=ranks_only,
    )
    _preempted_run(*case)
    trials = _assert_each_stopped_trial_requeued_once(url, "ranks", case[3])
    assert [TrialRecord.of(t).status for t in trials if t.state == TrialState.FAIL] == ["preempted"]

    # SIGTERM to every process at once (Slurm, Kubernetes, systemd): supervisor, torchrun, ranks.
    def everything(proc: subprocess.Popen[str], roles: dict[str, list[int]]) -> None:
        _kill([proc.pid, *roles["torchrun"], *roles["rank"]], signal.SIGTERM)

    case = _signal_case(url, "ranks", tmp_path, workers=1, executor="elastic", ranks=1, send=everything)
    _preempted_run(*case)
    trials = _assert_each_stopped_trial_requeued_once(url, "ranks", case[3])
    assert [TrialRecord.of(t).status for t in trials if t.state == TrialState.FAIL] == ["preempted"] * 2
