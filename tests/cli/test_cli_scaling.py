"""The scaling commands as a user runs them: baseline → run → best (predicted) → confirm → plot, and the probes."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
import yaml
from cli_runner import cli  # the in-process CLI runner

SPACE = {
    "peak_lr": {"low": 3.0e-3, "high": 3.0e-2, "log": True},
    "horizon_samples": 8192,
    "schedule": "constant",
    "micro_batch_size": {"choices": [16, 32, 64]},
    "optimizer": {"choices": ["adamw"]},
}
SPEC = {
    "workload": "digits",
    "space": "space.yaml",
    "target": "accuracy>=0.9",
    "cost": "samples",
    "max_cost": 8192,
    "eval_every": {"samples": 512},
    "pruner": "none",
    "seed": 0,
}
BASELINE = {
    "peak_lr": 3.0e-3,
    "horizon_samples": 8192,
    "schedule": "constant",
    "micro_batch_size": 32,
    "optimizer": "adamw",
}


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    (tmp_path / "space.yaml").write_text(yaml.safe_dump(SPACE))
    (tmp_path / "spec.yaml").write_text(yaml.safe_dump(SPEC))
    (tmp_path / "current.yaml").write_text(yaml.safe_dump(BASELINE))
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("CONVTUNE_STORAGE", raising=False)
    monkeypatch.setenv("CONVTUNE_DASHBOARD", "0")  # notes and per-trial plots are tested elsewhere
    return tmp_path


def test_baseline_best_confirm_plot(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = cli(capsys, "study", "create", "s", "--config", "spec.yaml", "--baseline", "current.yaml")
    assert code == 0, err
    code, _, err = cli(capsys, "study", "run", "s", "--n-trials", "6")
    assert code == 0, err

    code, out, err = cli(capsys, "study", "best", "s", "--json")
    assert code == 0, err
    report = json.loads(out)
    assert report["baseline"]["trial"] == 0, "the baseline runs as the first trial"
    measured = report["measured"]
    assert measured is not None and measured["status"] == "reached"
    predicted = report["predicted"]
    assert predicted is not None, report.get("predicted_unavailable")
    # The prediction is a time-to-target in samples, of the order of what trials measured.
    assert 0.2 * measured["time_to_target"] <= predicted["time_to_target"] <= 5 * SPEC["max_cost"]
    if report["baseline"]["time_to_target"]:
        assert measured["speedup_over_baseline"] == pytest.approx(  # rounded to 2 decimals
            report["baseline"]["time_to_target"] / measured["time_to_target"], abs=0.006
        )

    # Before confirm, the measured best is one seed's: other configurations within seed noise of
    # it are named, with the command that re-runs them (`best` and `export` alike).
    runners = report["runners_up"]
    assert all(r["time_to_target"] <= 1.2 * measured["time_to_target"] for r in runners)
    hint = f"convtune study confirm s --measured --top {min(len(runners) + 1, 5)} --seeds 2"
    for command in (("study", "best", "s"), ("study", "export", "s", "--format", "yaml", "-o", "m.yaml")):
        code, out, err = cli(capsys, *command)
        assert code == 0, err
        assert ("within seed noise:" in out) == bool(runners) and (hint in out) == bool(runners)

    # --rounds confirms configurations the search measured: it needs --measured.
    code, out, err = cli(capsys, "study", "confirm", "s", "--rounds", "2")
    assert code == 2 and "--rounds needs --measured" in err and len(err.strip().splitlines()) == 1, err
    assert json.loads(cli(capsys, "study", "best", "s", "--json")[1])["n_trials"] == 6  # nothing ran

    # What the hint says to run: the measured best and its runners-up, each on a fresh seed; later
    # rounds add any configuration measured within 20% of the confirmed fastest's mean.
    code, out, err = cli(
        capsys, "study", "confirm", "s", "--measured", "--top", "5", "--seeds", "1", "--rounds", "3"
    )
    assert code == 0, err
    more = sum(int(n) for n in re.findall(r"confirming (\d+) more configuration", out))
    assert out.count("(search's run)") == 1 + len(runners) + more, out  # one table row per configuration
    report = json.loads(cli(capsys, "study", "best", "s", "--json")[1])
    assert report["n_trials"] == 6 + 1 + len(runners) + more
    # Deterministic here: every confirm run reached, so `best` now names the confirmed pick.
    assert report["confirmed"] is not None and report["best"] == "confirmed"
    assert report["confirmed"]["source"] == "measured" and len(report["confirmed"]["trials"]) == 1
    code, out, err = cli(capsys, "study", "best", "s")
    assert code == 0, err
    assert "mean over 1 seeds" in out and "the search's run " in out
    n_before = report["n_trials"]

    code, out, err = cli(capsys, "study", "confirm", "s", "--top", "1", "--seeds", "1")
    assert code == 0, err
    assert "predicted against measured" in out
    confirm_out = out
    report = json.loads(cli(capsys, "study", "best", "s", "--json")[1])
    assert report["n_trials"] == n_before + 1
    if report["confirmed"] is not None:
        assert report["best"] == "confirmed"
        # The table names each configuration by its knobs, and the pick is said below it.
        confirmed = report["confirmed"]
        assert f"{confirmed['id']}: {confirmed['recipe']['optimizer']} · " in confirm_out
        assert f"confirmed fastest: {confirmed['id']}" in confirm_out
        code, out, err = cli(capsys, "study", "export", "s", "--format", "yaml", "-o", "best.yaml")
        assert code == 0, err
        # The configuration --measured confirmed may be planned again: its runs add up.
        n = len(confirmed["trials"])
        assert "confirmed, mean time to target" in out and f"over {n} seed{'s' * (n != 1)})" in out
        exported = yaml.safe_load((project / "best.yaml").read_text())
        assert exported["time_to_target"] == pytest.approx(confirmed["measured_mean"])
        # Without --json, each pick is one line of knobs, not a JSON dump of its recipe.
        code, out, err = cli(capsys, "study", "best", "s")
        assert code == 0, err
        assert "confirmed fastest to" in out and f"  {confirmed['recipe']['optimizer']} · " in out
        assert "{" not in out and "convtune study best s --json" in out
    else:
        assert "no configuration reached the target with every seed" in confirm_out

    code, _, err = cli(capsys, "study", "plot", "s", "-o", "plots", "--no-upload")
    assert code == 0, err
    pngs = sorted((project / "plots").glob("*.png"))
    assert pngs, "no plots written"
    for png in pngs:
        assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_probes_write_a_narrowed_space(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert cli(capsys, "study", "create", "p", "--config", "spec.yaml")[0] == 0
    code, out, err = cli(capsys, "probe", "lr-range", "p", "--steps", "60", "--write-space", "narrow.yaml")
    assert code == 0, err
    narrowed = yaml.safe_load((project / "narrow.yaml").read_text())
    low, high = narrowed["peak_lr"]["low"], narrowed["peak_lr"]["high"]
    assert 0 < low < high
    code, _, err = cli(capsys, "study", "create", "p2", "--config", "spec.yaml", "--space", "narrow.yaml")
    assert code == 0, err  # a narrowed space is a valid space

    code, out, err = cli(capsys, "probe", "noise-scale", "p", "--repeats", "6", "--warmup-steps", "10")
    assert code == 0, err
    assert "B_simple" in out or "noise" in out.lower()
