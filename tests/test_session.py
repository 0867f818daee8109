"""Tuning the user's own script: ``workload: {script: …}`` / ``{command: […]}`` with ``convtune.session``.

End to end with two gloo ranks and ``examples/external_train.py``: records reach the worker, a
stop decision ends every rank at the same report, errors fail the trial with the script's own
message, and no process of the trial remains.
"""

from __future__ import annotations

import json
import os
import sys
import time
import uuid
from pathlib import Path

import pytest

from convtune import session
from convtune.engine import EngineConfig
from convtune.errors import ConfigError
from convtune.launcher import ElasticExecutor, LaunchOptions, RankFailed
from convtune.recipe import Recipe
from convtune.spec import StudySpec

ROOT = Path(__file__).resolve().parent.parent
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
