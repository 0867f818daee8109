"""The launcher: warm ranks across trials, stop decisions, faults, and two nodes over loopback.

Rank processes carry a per-test environment token; after a test, no process with it may remain
(orphans are re-parented away from the test, so all of /proc is scanned). Timing bounds are loose.
"""

from __future__ import annotations

import os
import time
import uuid
from pathlib import Path

import optuna
import pytest
from optuna.trial import TrialState
from services import follower_node, free_port_pair

from convtune.config.recipe import Recipe
from convtune.config.spec import StudySpec
from convtune.execution.launcher import ElasticExecutor, LaunchOptions
from convtune.storage import open_storage
from convtune.study import create_study, run_study
from convtune.training.engine import EngineConfig

WORKLOAD = f"{Path(__file__).resolve().parents[1] / '_launcher_workloads.py'}:Linear"
RECIPE = Recipe(
    peak_lr=0.05,
    horizon_samples=10_000,
    schedule="constant",
    micro_batch_size=8,
    world_size=2,
    optimizer="sgd",
)
CONFIG = EngineConfig(eval_every=2, eval_unit="steps", cost="samples", max_cost=40 * 16, seed=1)
SPACE = {
    "peak_lr": 0.05,
    "horizon_samples": 10_000,
    "schedule": "constant",
    "micro_batch_size": 8,
    "optimizer": {"choices": ["sgd"], "sgd": {"momentum": 0.9, "nesterov": True}},
}


@pytest.fixture
def token(monkeypatch):
    """Tag every process the test starts; yield a function listing those still alive."""
    value = uuid.uuid4().hex
    monkeypatch.setenv("CONVTUNE_TEST_TOKEN", value)
    needle = f"CONVTUNE_TEST_TOKEN={value}".encode()

    def alive() -> list[int]:
        found = []
        for entry in os.listdir("/proc"):
            if not entry.isdigit() or int(entry) == os.getpid():
                continue
            try:
                with open(f"/proc/{entry}/environ", "rb") as f:
                    if needle in f.read():
                        with open(f"/proc/{entry}/stat") as s:
                            if s.read().rsplit(")", 1)[1].split()[0] != "Z":
                                found.append(int(entry))
            except OSError:
                continue
        return found

    yield alive
    assert _eventually(lambda: not alive()), f"processes left behind: {alive()}"


def _eventually(check, timeout: float = 15.0) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if check():
            return True
        time.sleep(0.1)
    return check()


def spec(**args) -> StudySpec:
    return StudySpec(
        workload=WORKLOAD,
        workload_args=args,
        space=SPACE,
        target="val_loss<=0.0",
        cost="samples",
        max_cost=12 * 16,
        eval_every={"steps": 2},
        pruner="none",
        world_size=2,
    )


def test_stop_reaches_every_rank_within_one_evaluation_and_nothing_remains(tmp_path, token):
    log = tmp_path / "steps.log"
    started = time.monotonic()
    executor = ElasticExecutor(spec(log=str(log)), LaunchOptions(collective_timeout=15))
    decided_at: list[int] = []

    def on_eval(progress) -> bool:
        if progress.step >= 6:
            decided_at.append(progress.step)
            return True
        return False

    result = executor.run(RECIPE, CONFIG, on_eval)
    assert result.status == "stopped" and decided_at == [6]
    steps = {}
    for line in log.read_text().split("\n"):
        if line:
            rank, _, step = line.split()
            steps[int(rank)] = max(steps.get(int(rank), 0), int(step))
    assert set(steps) == {0, 1}
    assert max(steps.values()) <= decided_at[0] + CONFIG.eval_every
    assert len(token()) >= 3  # torchrun and its two ranks, warm for the next trial
    executor.close()
    assert _eventually(lambda: not token()), "ranks outlived close()"
    assert time.monotonic() - started < 90


def test_second_trial_runs_on_warm_ranks_and_equals_a_cold_run(token):
    with ElasticExecutor(spec(), LaunchOptions(collective_timeout=15)) as warm:
        first = warm.run(RECIPE, CONFIG, lambda p: False)
        second = warm.run(RECIPE, CONFIG, lambda p: False)
        assert warm.launches == 1 and warm.last_timing["launch"] == 0.0
    with ElasticExecutor(spec(), LaunchOptions(collective_timeout=15)) as cold:
        reference = cold.run(RECIPE, CONFIG, lambda p: False)
    assert [p.metrics for p in second.history] == [p.metrics for p in reference.history]
    assert [p.metrics for p in first.history] == [p.metrics for p in reference.history]


def _study(tmp_path: Path, **args) -> str:
    storage = f"journal:///{tmp_path / 'study.log'}"
    create_study("s", spec(**args), storage)
    return storage


@pytest.mark.parametrize("fault", ["kill", "raise"])
def test_a_failing_rank_fails_its_trial_and_the_next_trial_runs(tmp_path, token, fault):
    marker = tmp_path / "marker"
    storage = _study(tmp_path, fault=fault, fault_rank=1, fault_step=3, marker=str(marker))
    study = run_study("s", n_trials=2, storage=storage, launch=LaunchOptions(collective_timeout=15))
    first, second = study.get_trials(deepcopy=False)
    assert marker.exists()
    assert first.state == TrialState.FAIL and first.user_attrs["status"] == "failed"
    if fault == "kill":
        assert "rank 1" in first.user_attrs["error"]
    else:
        assert first.user_attrs["error"].startswith(
            "RuntimeError: deliberate failure in rank 1 at _launcher_workloads.py:"
        )
    assert second.state == TrialState.COMPLETE and second.user_attrs["status"] == "budget"
    assert second.user_attrs["world_size"] == 2 and second.user_attrs["backend"] == "gloo"


def test_a_rank_hanging_in_a_collective_fails_the_trial_after_the_timeout(tmp_path, token):
    marker = tmp_path / "marker"
    storage = _study(tmp_path, fault="hang", fault_rank=1, fault_step=3, marker=str(marker))
    started = time.monotonic()
    study = run_study("s", n_trials=2, storage=storage, launch=LaunchOptions(collective_timeout=8))
    first, second = study.get_trials(deepcopy=False)
    assert first.state == TrialState.FAIL
    assert "timed out" in first.user_attrs["error"].lower() or "timeout" in first.user_attrs["error"].lower()
    assert second.state == TrialState.COMPLETE
    assert time.monotonic() - started < 120


def test_two_nodes_over_loopback(tmp_path, token):
    storage = _study(tmp_path)
    for _ in range(2):  # the space is one configuration: asked for by name, each trial trains
        optuna.load_study(study_name="s", storage=open_storage(storage)).enqueue_trial({})
    port = free_port_pair()
    endpoint = f"127.0.0.1:{port}"
    with follower_node("s", storage, endpoint, "loopback") as follower:
        options = LaunchOptions(nnodes=2, rdzv_endpoint=endpoint, rdzv_id="loopback", collective_timeout=15)
        study = run_study("s", n_trials=2, storage=storage, launch=options)
        trials = study.get_trials(deepcopy=False)
        assert [t.state for t in trials] == [TrialState.COMPLETE] * 2
        assert all(
            t.user_attrs["world_size"] == 2 and len(t.user_attrs["rank_samples_per_second"]) == 2
            for t in trials
        )
        assert follower.wait(timeout=60) == 0, follower.stdout.read().decode()[-2000:]


def test_a_follower_launch_failing_before_its_ranks_connect_fails_the_trial_at_once(tmp_path, token):
    """The other node cannot join the process group (here: a network interface that is not
    there). Its `study follow` reports the failed launch with its last lines, so the trial fails
    at once naming the cause, instead of after the process group's timeout (120 s here, 10 min
    by default) with a store timeout; and the follower ends when the study does."""
    storage = _study(tmp_path)
    optuna.load_study(study_name="s", storage=open_storage(storage)).enqueue_trial({})
    endpoint = f"127.0.0.1:{free_port_pair()}"
    with follower_node("s", storage, endpoint, "bad-nic", env={"GLOO_SOCKET_IFNAME": "nope0"}) as follower:
        started = time.monotonic()
        options = LaunchOptions(nnodes=2, rdzv_endpoint=endpoint, rdzv_id="bad-nic", collective_timeout=120)
        (trial,) = run_study("s", n_trials=1, storage=storage, launch=options).get_trials(deepcopy=False)
        assert time.monotonic() - started < 60
        assert trial.state == TrialState.FAIL
        error = trial.user_attrs["error"]
        assert "the launch on another node" in error and "before its ranks connected" in error, error
        assert "Unable to find address for: nope0" in error, error
        assert follower.wait(timeout=30) == 0, follower.stdout.read().decode()[-2000:]


def test_following_a_study_node_that_never_comes_up_is_a_clear_error():
    from convtune.errors import StudyError
    from convtune.execution.follow import follow

    options = LaunchOptions(nnodes=2, rdzv_endpoint=f"127.0.0.1:{free_port_pair()}", start_timeout=1)
    with pytest.raises(StudyError, match="could not reach the study's node at 127.0.0.1:") as raised:
        follow(2, options)
    assert raised.value.where == "--rdzv-endpoint" and "convtune study run" in raised.value.fix


optuna.logging.set_verbosity(optuna.logging.WARNING)
