"""optuna-dashboard over a study made by convtune: the real server (``convtune dashboard``),
read through its HTTP API — trials, intermediate values, user attributes, the study note and the
per-trial learning-curve PNGs. Also: plotting failures never fail a trial."""

from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path
from typing import Any

import pytest
from specs import TinyStudy, digits_spec

from convtune.config.spec import StudySpec
from convtune.report.best import measured_best, runners_up
from convtune.report.dashboard import DashboardHooks
from convtune.study import create_study, open_study, run_study

SPACE = {
    "peak_lr": {"choices": [3.0e-3, 1.0e-2]},
    "warmup_steps": 2,
    "horizon_samples": 6144,
    "schedule": "cosine",
    "micro_batch_size": 32,
    "optimizer": "adamw",
}
PNG_MAGIC = b"\x89PNG\r\n\x1a\n"


def tiny_spec(**overrides: Any) -> StudySpec:
    fields = {"target": "accuracy>=0.9", "max_cost": 6144, "eval_every": {"samples": 1024}}
    return digits_spec(SPACE, **(fields | overrides))


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def _get(url: str) -> bytes:
    with urllib.request.urlopen(url, timeout=10) as response:  # noqa: S310 (loopback only)
        return response.read()


@pytest.fixture(scope="module")
def server(tiny_study: TinyStudy) -> Any:
    """``convtune dashboard tiny`` on a free loopback port; yields its base URL, then stops it."""
    port = _free_port()
    exe = shutil.which("convtune", path=str(Path(sys.executable).parent)) or "convtune"
    proc = subprocess.Popen(
        [exe, "dashboard", tiny_study.name, "--storage", tiny_study.url, "--port", str(port)],
        cwd=tiny_study.directory,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        env={**os.environ, "PYTHONUNBUFFERED": "1"},
    )
    base = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                _get(f"{base}/api/meta")
                break
            except OSError:
                if proc.poll() is not None or time.monotonic() > deadline:
                    output = proc.stdout.read().decode() if proc.stdout else ""
                    pytest.fail(f"dashboard did not start (exit {proc.poll()}):\n{output}")
                time.sleep(0.3)
        yield base
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


def test_dashboard_serves_trials_curves_attrs_note_and_plots(server: str, tiny_study: TinyStudy) -> None:
    studies = json.loads(_get(f"{server}/api/studies"))["study_summaries"]
    (summary,) = [s for s in studies if s["study_name"] == tiny_study.name]
    study_id = summary["study_id"]
    detail = json.loads(_get(f"{server}/api/studies/{study_id}"))

    assert detail["objective_names"] == ["time_to_target_samples"]
    trials = detail["trials"]
    assert len(trials) == 2
    for trial in trials:
        assert trial["state"] == "Complete"
        steps = [v["step"] for v in trial["intermediate_values"]]
        assert steps and steps == sorted(steps) and steps[0] == 1024  # learning curve against cost
        attrs = {a["key"]: a["value"] for a in trial["user_attrs"]}
        assert attrs["status"] == "reached"
        assert "reached in" in attrs["summary"] and "batch 32" in attrs["summary"]
        assert attrs["effective_batch_size"] == "32" and "samples_per_second" in attrs

        (artifact,) = trial["artifacts"]
        assert artifact["mimetype"] == "image/png" and artifact["filename"].endswith(".png")
        png = _get(f"{server}/artifacts/{study_id}/{trial['trial_id']}/{artifact['artifact_id']}")
        assert png.startswith(PNG_MAGIC) and len(png) > 2000

    note = detail["note"]["body"]
    assert note.startswith("## tiny: fastest to `accuracy>=0.9`")
    assert "**Best measured:** trial" in note and "**Baseline:** trial 0" in note and "faster" in note
    assert "convtune study export tiny" in note
    # The study attributes describe the spec and the target.
    study, _ = open_study(tiny_study.name, tiny_study.url)
    # Other configurations within seed noise of the best are named, with the confirm command.
    close = runners_up(study, measured_best(study))
    assert ("Within seed noise of it" in note) == bool(close)
    assert ("convtune study confirm tiny --top" in note) == bool(close)
    assert study.user_attrs["target"] == "accuracy>=0.9" and study.user_attrs["cost_unit"] == "samples"


def test_a_plot_that_fails_only_warns(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import convtune.report.plots

    def broken(*args: Any, **kwargs: Any) -> None:
        raise RuntimeError("no fonts today")

    monkeypatch.setattr(convtune.report.plots, "save_learning_curve", broken)
    url = f"sqlite:///{tmp_path / 'study.db'}"
    create_study("broken", tiny_spec(max_cost=2048), url)
    with pytest.warns(UserWarning, match="could not upload trial 0's plot: no fonts today"):
        run_study("broken", n_trials=1, storage=url, hooks=DashboardHooks)
    study, _ = open_study("broken", url)
    (trial,) = study.get_trials()
    assert trial.state.name == "COMPLETE" and trial.user_attrs["status"]
    assert not [k for k in trial.system_attrs if k.startswith("artifacts:")]
