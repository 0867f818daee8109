"""Tuning the user's own script: ``workload: {script: …}`` / ``{command: […]}`` with ``convtune.execution.session``.

End to end with two gloo ranks and ``examples/external_train.py``: records reach the worker, a
stop decision ends every rank at the same report, errors fail the trial with the script's own
message, and no process of the trial remains.
"""

from __future__ import annotations

import contextlib
import dataclasses
import json
import os
import sys
import time
import uuid
from pathlib import Path

import pytest
from services import follower_node, free_port_pair

from convtune.config.recipe import Recipe
from convtune.config.spec import StudySpec
from convtune.errors import ConfigError
from convtune.execution import session
from convtune.execution.launcher import ElasticExecutor, LaunchOptions, MultiNodeCommand, RankFailed
from convtune.study import create_study
from convtune.training.engine import EngineConfig

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = "examples/external_train.py"
RECIPE = Recipe(peak_lr=0.01, horizon_samples=50_000, micro_batch_size=16, world_size=2, optimizer="adamw")
CONFIG = EngineConfig(eval_every=256, eval_unit="samples", cost="samples", max_cost=20_000, seed=0)


def spec(workload: dict) -> StudySpec:
    return StudySpec(
        workload=workload, space={}, target="val_loss<=0.0", cost="samples", world_size=2, base_dir=str(ROOT)
    )


def _tagged() -> list[int]:
    needle = f"CONVTUNE_TEST_TOKEN={os.environ['CONVTUNE_TEST_TOKEN']}".encode()
    found = []
    for entry in os.listdir("/proc"):
        if entry.isdigit() and int(entry) != os.getpid():
            try:
                with open(f"/proc/{entry}/environ", "rb") as f:
                    if needle in f.read():
                        found.append(int(entry))
            except OSError:
                pass
    return found


@pytest.fixture(autouse=True)
def token(monkeypatch):
    monkeypatch.setenv("CONVTUNE_TEST_TOKEN", uuid.uuid4().hex)
    yield
    deadline = time.monotonic() + 10
    while _tagged() and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not _tagged(), "processes of the trial remain"


@pytest.mark.parametrize(
    "workload",
    [
        {"script": SCRIPT, "args": ["--hidden", "32"]},
        {
            "command": [
                sys.executable,
                "-m",
                "torch.distributed.run",
                "--standalone",
                "--nproc-per-node",
                "2",
                SCRIPT,
            ]
        },
    ],
    ids=["script", "command"],
)
def test_external_workload_reports_and_stops_on_every_rank(workload):
    with ElasticExecutor(spec(workload), LaunchOptions(collective_timeout=15)) as executor:
        seen: list[int] = []

        def on_eval(progress) -> bool:
            seen.append(progress.samples)
            assert "val_loss" in progress.metrics
            return progress.samples >= 1024

        result = executor.run(RECIPE, CONFIG, on_eval)
    assert result.status == "stopped"
    assert seen == [256, 512, 768, 1024]  # 16 × 2 ranks = 32 samples per step, a report per 256
    assert result.samples == 1024 and result.steps == 32
    assert result.world_size == 2
    # Both ranks left at that report: the script exited cleanly, so no rank waited in a collective.
    assert executor.last_timing["stop_to_exit"] < 30


def test_a_failing_script_fails_the_trial_with_its_own_error():
    with ElasticExecutor(spec({"script": SCRIPT, "args": ["--fail-at-step", "5"]})) as executor:
        with pytest.raises(
            RankFailed, match=r"RuntimeError: deliberate failure at step 5 at external_train.py:\d+ in main"
        ):
            executor.run(RECIPE, CONFIG, lambda p: False)


def test_a_script_that_exits_before_reporting_fails_the_trial_with_its_last_words(tmp_path):
    """The cause is the program's last output, not torchrun's summary of its exit."""
    script = tmp_path / "no_data.py"
    script.write_text('import sys\nsys.exit("no training data under /data/shards")\n')
    with ElasticExecutor(spec({"script": str(script)})) as executor:
        with pytest.raises(RankFailed, match=r"exited with status 1: .*no training data under /data/shards$"):
            executor.run(RECIPE, CONFIG, lambda p: False)


def test_session_outside_convtune(tmp_path, monkeypatch):
    monkeypatch.delenv("CONVTUNE_CHANNEL", raising=False)
    monkeypatch.delenv("CONVTUNE_RECIPE", raising=False)
    monkeypatch.setattr(session, "_recipe", None)
    monkeypatch.setattr(session, "_client", None)
    assert not session.active()
    assert session.report(step=1, samples=32, metrics={"val_loss": 1.0}) is False
    with pytest.raises(ConfigError, match="CONVTUNE_RECIPE"):
        session.recipe()
    path = tmp_path / "best.json"
    path.write_text(json.dumps(RECIPE.to_dict()))
    monkeypatch.setenv("CONVTUNE_RECIPE", str(path))
    assert session.recipe() == RECIPE


def test_a_script_spans_two_nodes_over_loopback(tmp_path):
    """`study follow` launches the script on the second "node" for each trial, with its recipe."""
    storage = f"journal:///{tmp_path / 'study.log'}"
    study_spec = spec({"script": SCRIPT, "args": ["--hidden", "32"]})
    create_study("s", study_spec, storage)
    endpoint = f"127.0.0.1:{free_port_pair()}"
    with follower_node("s", storage, endpoint, "scripts") as follower:
        options = LaunchOptions(nnodes=2, rdzv_endpoint=endpoint, rdzv_id="scripts", collective_timeout=15)
        with ElasticExecutor(study_spec, options) as executor:
            for stop_at in (512, 256):  # two trials: the follower relaunches for each
                seen: list[int] = []

                def on_eval(progress, seen=seen, stop_at=stop_at) -> bool:
                    seen.append(progress.samples)
                    return progress.samples >= stop_at

                result = executor.run(RECIPE, CONFIG, on_eval)
                # One rank per node; rank 0's reports recorded, both ranks left at the stop.
                assert result.status == "stopped" and result.world_size == 2
                assert seen == list(range(256, stop_at + 1, 256)) and result.samples == stop_at
        out, _ = follower.communicate(timeout=60)
        assert follower.returncode == 0, out.decode()[-2000:]
        assert b"after 2 trial(s)" in out


FOLLOWER_ABORTS_SCRIPT = """
import os
from convtune.execution import session

session.recipe()
for step in range(1, 1000):
    if session.report(step=step, samples=32 * step, metrics={"val_loss": 1.0 / step}):
        break
if os.environ["GROUP_RANK"] == "1":
    os.abort()  # the other node's rank dies in teardown, after it acknowledged the stop
"""


@contextlib.contextmanager
def script_on_two_nodes(tmp_path: Path, source: str, rdzv_id: str):
    """A study of the script ``source`` whose trials span this process and a `study follow` on
    loopback; yields the executor and a dict that holds the follower's output once it has ended."""
    script = tmp_path / f"{rdzv_id}.py"
    script.write_text(source)
    storage = f"journal:///{tmp_path / 'study.log'}"
    study_spec = spec({"script": str(script)})
    create_study("s", study_spec, storage)
    endpoint = f"127.0.0.1:{free_port_pair()}"
    followed: dict[str, bytes] = {}
    with follower_node("s", storage, endpoint, rdzv_id) as follower:
        options = LaunchOptions(nnodes=2, rdzv_endpoint=endpoint, rdzv_id=rdzv_id, collective_timeout=15)
        with ElasticExecutor(study_spec, options) as executor:
            yield executor, followed
        out, _ = follower.communicate(timeout=60)
        assert follower.returncode == 0, out.decode()[-2000:]
        followed["output"] = out


def test_a_rank_failing_on_another_node_after_the_stop_does_not_hold_the_study(tmp_path):
    """The study's torchrun would wait 300 s in its exit barrier for the other node's agent, which
    never comes (its rank failed): once every rank has left, the study's node ends it and goes on."""
    config = dataclasses.replace(CONFIG, eval_every=32)
    with script_on_two_nodes(tmp_path, FOLLOWER_ABORTS_SCRIPT, "aborts") as (executor, followed):
        result = executor.run(RECIPE, config, lambda progress: progress.samples >= 64)
        # The outcome stands, with a warning that names the other node.
        assert result.status == "stopped" and result.samples == 64
        (warning,) = result.warnings
        assert "waited for another node" in warning and "study follow" in warning
        # Not torchrun's 300 s exit barrier: the grace after the last rank left, and the launch's own exit.
        assert executor.last_timing["stop_to_exit"] < executor.exit_grace + 30
    assert b"SIGABRT" in followed["output"]  # the failure shows on the node where it happened


FOLLOWER_CANNOT_START_SCRIPT = """
import datetime, os, sys
import torch.distributed as dist
from convtune.execution import session

if os.environ["GROUP_RANK"] == "1":
    sys.exit("the data is not on this node")  # before its rank joins the process group
session.recipe()
dist.init_process_group("gloo", timeout=datetime.timedelta(seconds=180))
for step in range(1, 1000):
    if session.report(step=step, samples=32 * step, metrics={"val_loss": 1.0 / step}):
        break
dist.destroy_process_group()
"""


def test_a_launch_failing_on_another_node_fails_the_trial_at_once(tmp_path):
    """Without word from the other node, this node's rank would wait out its process group's
    timeout (180 s here; 30 min by default) for a rank that never comes."""
    with script_on_two_nodes(tmp_path, FOLLOWER_CANNOT_START_SCRIPT, "cannot-start") as (executor, followed):
        started = time.monotonic()
        with pytest.raises(RankFailed, match=r"another node.*exit(ed)? .*the data is not on this node"):
            executor.run(RECIPE, CONFIG, lambda progress: progress.samples >= 64)
        assert time.monotonic() - started < 90
    assert b"the data is not on this node" in followed["output"]  # the follower's terminal shows it too


def test_a_command_workload_refuses_more_nodes():
    options = LaunchOptions(nnodes=2, rdzv_endpoint="127.0.0.1:29400")
    with pytest.raises(MultiNodeCommand, match="command workload runs on one node"):
        ElasticExecutor(spec({"command": [sys.executable, SCRIPT]}), options)


def test_max_memory_mb_applies_to_a_script_trial(tmp_path):
    """Each rank of the script sends its peak resident memory with its reports: over the cap, oom."""
    from optuna.trial import TrialState

    from convtune.study import run_study

    storage = f"sqlite:///{tmp_path / 'mem.db'}"
    raw = spec({"script": SCRIPT, "args": ["--hidden", "32"]}).to_dict()
    raw.update(
        space={"peak_lr": 0.01, "micro_batch_size": 16, "horizon_samples": 50_000, "optimizer": "adamw"},
        max_cost=20_000,
        eval_every={"samples": 256},
        max_memory_mb=1,  # every Python process is over 1 MB: stopped at its first report
    )
    create_study("mem", StudySpec.from_dict(raw), storage)
    trial = run_study("mem", n_trials=1, storage=storage).trials[0]
    assert trial.state == TrialState.COMPLETE, trial.user_attrs.get("error")
    assert trial.user_attrs["status"] == "oom", trial.user_attrs
    assert "over max_memory_mb=1" in trial.user_attrs["reason"]
    assert len(trial.intermediate_values) == 1


ABORTING_SCRIPT = """
import os, sys
from convtune.execution import session

session.recipe()
for step in range(1, 1000):
    if sys.argv[1] == "before" and step == 3:
        os.abort()  # before the stop: the trial fails
    if session.report(step=step, samples=32 * step, metrics={"val_loss": 1.0 / step}):
        break
os.abort()  # after every rank acknowledged the stop (an abort in teardown): the outcome stands
"""


@pytest.mark.parametrize("when", ["after", "before"])
def test_a_rank_aborting_after_the_acknowledged_stop_keeps_the_outcome(tmp_path, when):
    """SIGABRT after the stop reached every rank is a warning on the finished trial; before it, FAIL."""
    from optuna.trial import TrialState

    from convtune.config.record import TrialRecord
    from convtune.study import run_study

    script = tmp_path / "aborting.py"
    script.write_text(ABORTING_SCRIPT)
    storage = f"sqlite:///{tmp_path / 'abort.db'}"
    raw = spec({"command": [sys.executable, str(script), when]}).to_dict()
    raw.update(
        world_size=1,
        space={"peak_lr": 0.01, "micro_batch_size": 32, "horizon_samples": 4096, "optimizer": "sgd"},
        max_cost=128,  # the budget stops the trial at its 4th report
        eval_every={"samples": 32},
    )
    create_study("abort", StudySpec.from_dict(raw), storage)
    trial = run_study("abort", n_trials=1, storage=storage).trials[0]
    record = TrialRecord.of(trial)
    if when == "after":
        assert trial.state == TrialState.COMPLETE, record.attrs.get("error")
        assert record.status == "budget" and sorted(trial.intermediate_values) == [32, 64, 96, 128]
        (warning,) = record.attrs["warnings"]
        assert "after the stop was acknowledged by every rank" in warning and "SIGABRT" in warning
    else:
        assert trial.state == TrialState.FAIL and record.status == "failed"
        assert "SIGABRT" in record.attrs["error"]
