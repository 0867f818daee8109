"""The CLI end to end, as a user types it: create → run → show → best, and every bad input.

Commands run in-process through ``convtune.cli.main`` (the console-script entry point) for speed;
one test also runs the installed ``convtune`` executable to prove the exit status and that no
traceback reaches the user.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from cli_runner import cli
from specs import CLI_SPACE, CLI_SPEC

REPO = Path(__file__).resolve().parents[2]
MAX_COST = 4096


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A temporary project directory holding a tiny spec and space; the CWD for the test."""
    (tmp_path / "space.yaml").write_text(yaml.safe_dump(CLI_SPACE))
    # A trial that has not reached the target by half its planned run stops there: what these
    # tests check does not need the second half (the golden transcript runs the full spec).
    (tmp_path / "tiny.yaml").write_text(yaml.safe_dump({**CLI_SPEC, "max_cost": MAX_COST}))
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("CONVTUNE_STORAGE", raising=False)
    return tmp_path


def test_create_run_show_best(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = cli(capsys, "study", "create", "tiny", "--config", "tiny.yaml")
    assert code == 0, err
    assert (project / "studies" / "convtune.db").is_file()  # the embedded default

    code, out, err = cli(capsys, "study", "run", "tiny", "--n-trials", "3")
    assert code == 0, err
    assert "optuna-dashboard sqlite:///studies/convtune.db" in out

    code, out, _ = cli(capsys, "study", "show", "tiny")
    assert code == 0
    for number in ("0", "1", "2"):
        assert f"│ {number} " in out
    # Large numbers print with separators, not as 1.5e+04: the tiny digits MLP trains at well over
    # 1,000 samples/s on any CPU, so the samples/s column holds some.
    assert re.search(r"\d,\d{3}\b", out) and "e+0" not in out

    code, out, _ = cli(capsys, "study", "best", "tiny", "--json")
    assert code == 0
    report = json.loads(out)
    assert report["study"] == "tiny" and report["n_trials"] == 3
    assert report["target"] == "accuracy>=0.9" and report["cost_unit"] == "samples"
    if report["measured"] is not None:
        measured = report["measured"]
        assert measured["status"] == "reached"
        assert 0 < measured["time_to_target"] <= MAX_COST
        assert measured["recipe"]["effective_batch_size"] == measured["recipe"]["micro_batch_size"]

    code, out, _ = cli(capsys, "study", "list")
    assert code == 0 and "tiny" in out


def test_create_is_idempotent_but_refuses_a_changed_spec(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert cli(capsys, "study", "create", "s", "--config", "tiny.yaml")[0] == 0
    assert cli(capsys, "study", "create", "s", "--config", "tiny.yaml")[0] == 0
    code, _, err = cli(capsys, "study", "create", "s", "--config", "tiny.yaml", "--target", "accuracy>=0.8")
    assert code == 2
    assert "exists with a different spec" in err and "target" in err


def test_stored_spec_is_self_contained(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Editing or deleting the YAML files after create cannot change the study."""
    assert cli(capsys, "study", "create", "frozen", "--config", "tiny.yaml")[0] == 0
    (project / "space.yaml").write_text("peak_lr: {low: 5, high: 1}\n")
    (project / "tiny.yaml").unlink()
    code, _, err = cli(capsys, "study", "run", "frozen", "--n-trials", "1")
    assert code == 0, err


def _write(path: Path, text: str) -> str:
    path.write_text(text)
    return path.name


BAD_INPUTS = {
    # name: (files to write {name: text}, CLI args, words the one-line error must contain)
    "malformed yaml": (
        {"bad.yaml": "workload: digits\ntarget: [unclosed\n"},
        ["--config", "bad.yaml"],
        ["bad.yaml", "malformed YAML", "line"],
    ),
    "unknown spec key": (
        {"bad.yaml": "workload: digits\ntarget: accuracy>=0.9\nspace: space.yaml\nmax_cots: 5\n"},
        ["--config", "bad.yaml"],
        ["bad.yaml", "max_cots", "unknown key"],
    ),
    "unknown space key": (
        {"bad.yaml": "learning_rate: 0.1\n"},
        ["--workload", "digits", "--target", "accuracy>=0.9", "--space", "bad.yaml"],
        ["bad.yaml", "learning_rate", "unknown parameter"],
    ),
    "low > high": (
        {"bad.yaml": "peak_lr: {low: 0.1, high: 0.01}\n"},
        ["--workload", "digits", "--target", "accuracy>=0.9", "--space", "bad.yaml"],
        ["bad.yaml", "peak_lr", "low (0.1) > high (0.01)", "swap"],
    ),
    "log with low <= 0": (
        {"bad.yaml": "peak_lr: {low: 0.0, high: 0.01, log: true}\n"},
        ["--workload", "digits", "--target", "accuracy>=0.9", "--space", "bad.yaml"],
        ["bad.yaml", "peak_lr", "log scale needs low > 0"],
    ),
    "unknown optimizer": (
        {"bad.yaml": "optimizer: {choices: [adamw, adam]}\n"},
        ["--workload", "digits", "--target", "accuracy>=0.9", "--space", "bad.yaml"],
        ["bad.yaml", "optimizer", "unknown optimizer 'adam'", "adamw"],
    ),
    "unknown schedule": (
        {"bad.yaml": "schedule: cosine_restarts\n"},
        ["--workload", "digits", "--target", "accuracy>=0.9", "--space", "bad.yaml"],
        ["bad.yaml", "schedule", "cosine_restarts"],
    ),
    "unknown conditional parameter": (
        {"bad.yaml": "optimizer: {choices: [sgd], sgd: {beta2: 0.9}}\n"},
        ["--workload", "digits", "--target", "accuracy>=0.9", "--space", "bad.yaml"],
        ["bad.yaml", "sgd", "beta2"],
    ),
    "unknown workload": (
        {},
        ["--workload", "imagenet", "--target", "accuracy>=0.9", "--space", "space.yaml"],
        ["workload", "imagenet", "charlm"],
    ),
    "missing workload file": (
        {},
        ["--workload", "nowhere.py:make", "--target", "accuracy>=0.9", "--space", "space.yaml"],
        ["workload", "nowhere.py", "does not exist"],
    ),
    "missing factory": (
        {"wl.py": "X = 1\n"},
        ["--workload", "wl.py:make", "--target", "accuracy>=0.9", "--space", "space.yaml"],
        ["workload", "make"],
    ),
    "malformed target": (
        {},
        ["--workload", "digits", "--target", "accuracy=>0.9", "--space", "space.yaml"],
        ["target", "malformed target", "op"],
    ),
    "unopenable storage": (
        {},
        ["--config", "tiny.yaml", "--storage", "postgresql://nobody@127.0.0.1:1/none"],
        ["postgresql://nobody@127.0.0.1:1/none", "cannot open storage"],
    ),
    "unwritable sqlite location": (
        {},
        ["--config", "tiny.yaml", "--storage", "sqlite:////proc/convtune/x.db"],
        ["sqlite:////proc/convtune/x.db"],
    ),
    "global batch does not divide": (
        {"bad.yaml": "micro_batch_size: {choices: [16, 48]}\nglobal_batch_size: 64\n"},
        ["--workload", "digits", "--target", "accuracy>=0.9", "--space", "bad.yaml"],
        ["bad.yaml", "global_batch_size", "not a multiple"],
    ),
}


@pytest.mark.parametrize("case", sorted(BAD_INPUTS))
def test_bad_input_is_one_line_exit_2_nothing_written(
    case: str, project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    files, args, words = BAD_INPUTS[case]
    for name, text in files.items():
        (project / name).write_text(text)
    code, out, err = cli(capsys, "study", "create", "bad", *args)
    assert code == 2, (out, err)
    lines = [line for line in err.splitlines() if line.strip()]
    assert len(lines) == 1, err
    assert lines[0].startswith("convtune: error: ")
    assert "Traceback" not in err + out
    for word in words:
        assert word in lines[0], (word, lines[0])
    assert not (project / "studies" / "convtune.db").exists(), "a rejected create must write nothing"


def test_missing_study_and_raising_factory(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = cli(capsys, "study", "run", "ghost", "--n-trials", "1")
    assert code == 2 and "no storage file" in err and len(err.strip().splitlines()) == 1
    assert not (project / "studies").exists(), "a command that reads must not create a database"

    (project / "wl.py").write_text(
        "def make():\n    raise RuntimeError('dataset missing: run prepare.py first')\n"
    )
    assert (
        cli(capsys, "study", "create", "raises", "--config", "tiny.yaml", "--workload", "wl.py:make")[0] == 0
    )
    code, _, err = cli(capsys, "study", "run", "raises", "--n-trials", "1")
    assert code == 2
    assert "dataset missing: run prepare.py first" in err and "Traceback" not in err
    import optuna

    study = optuna.load_study(study_name="raises", storage="sqlite:///studies/convtune.db")
    assert study.trials == [], "a workload that cannot be built must not leave failed trials behind"


def test_executable_exits_2_without_traceback(project: Path) -> None:
    exe = shutil.which("convtune") or str(Path(sys.executable).parent / "convtune")
    result = subprocess.run(
        [
            exe,
            "study",
            "create",
            "x",
            "--workload",
            "digits",
            "--target",
            "accuracy>=",
            "--space",
            "space.yaml",
        ],
        capture_output=True,
        text=True,
        env={**os.environ, "PYTHONWARNINGS": "ignore"},
        timeout=120,
    )
    assert result.returncode == 2
    assert "Traceback" not in result.stderr
    assert result.stderr.strip().startswith("convtune: error: ")
    assert len(result.stderr.strip().splitlines()) == 1


def test_the_executable_skips_the_teardown_but_runs_exit_handlers_and_keeps_its_status(project: Path) -> None:
    """``console_main`` (the ``convtune`` executable) ends in ``os._exit``: the interpreter's
    teardown took ~1 s after Python restored SIGINT's default action, so a Ctrl-C then killed
    the process silently or aborted it. Exit handlers must still run and statuses pass through."""
    program = (
        "import atexit, sys\n"
        "class Teardown:\n"
        "    def __del__(self): print('teardown ran', flush=True)\n"
        "keep = Teardown()  # collected in the interpreter's teardown, if there is one\n"
        "atexit.register(lambda: print('exit handler ran', flush=True))\n"
        "from convtune.cli import console_main\n"
        "sys.argv = ['convtune', *sys.argv[1:]]\n"
        "console_main()\n"
    )
    storage = ["--storage", f"sqlite:///{project / 'x.db'}"]
    import optuna

    optuna.create_study(study_name="other", storage=storage[1])  # read-only commands need a storage
    env = {**os.environ, "PYTHONWARNINGS": "ignore"}
    for args, status in ((["study", "list"], 0), (["study", "show", "missing"], 2)):
        result = subprocess.run(
            [sys.executable, "-c", program, *args, *storage],
            capture_output=True,
            text=True,
            env=env,
            timeout=120,
        )
        assert result.returncode == status, (args, result.stderr[-2000:])
        assert result.stdout.rstrip().endswith("exit handler ran"), result.stdout[-500:]
        assert "teardown ran" not in result.stdout
        assert "Traceback" not in result.stderr


def test_help_explains_commands(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = cli(capsys, "--help")
    assert code == 0
    for step in ("study create NAME --config", "study run NAME", "study best NAME", "study export NAME"):
        assert step in out  # the workflow, start to finish
    code, out, _ = cli(capsys, "study", "--help")
    assert code == 0
    for command in ("create", "run", "show", "best", "list"):
        assert command in out
    code, out, _ = cli(capsys, "study", "run", "--help")
    assert code == 0 and "--n-trials" in out and "--storage" in out


def test_ctrl_c_while_the_summary_prints_exits_130_with_every_trial_stored(
    project: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    import convtune.cli.study

    assert cli(capsys, "study", "create", "tiny", "--config", "tiny.yaml")[0] == 0

    def ctrl_c(*_: object) -> None:  # stands in for a SIGINT that lands while the table prints
        raise KeyboardInterrupt

    print_best = convtune.cli.study._print_best
    monkeypatch.setattr(convtune.cli.study, "_print_best", ctrl_c)
    code, _, err = cli(capsys, "study", "run", "tiny", "--n-trials", "1")
    assert code == 130
    assert "every trial is stored" in err and "convtune study best tiny" in err
    assert "Traceback" not in err
    monkeypatch.setattr(convtune.cli.study, "_print_best", print_best)
    code, out, _ = cli(capsys, "study", "best", "tiny", "--json")
    assert code == 0 and json.loads(out)["n_trials"] == 1


def test_scripting_version_json_and_plain_progress(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from convtune import __version__

    code, out, _ = cli(capsys, "--version")
    assert code == 0 and out.strip() == f"convtune {__version__}"

    assert cli(capsys, "study", "create", "tiny", "--config", "tiny.yaml")[0] == 0
    # Not a terminal (captured): one plain line per finished trial, no progress bar.
    code, out, err = cli(capsys, "study", "run", "tiny", "--n-trials", "1")
    assert code == 0, err
    assert re.search(r"^trial 0: (reached|stopped|budget|diverged|oom)", out, re.MULTILINE), out
    before_table = [line for line in out.split("tiny: target")[0].splitlines() if line.strip()]
    assert before_table and all(line.startswith("trial ") for line in before_table), "no progress bar"

    # --json: stdout is one JSON document; the progress lines go to stderr.
    code, out, err = cli(capsys, "study", "run", "tiny", "--n-trials", "1", "--json")
    assert code == 0, err
    ran = json.loads(out)
    assert [t["trial"] for t in ran["trials"]] == [0, 1] and ran["best"]["n_trials"] == 2
    assert re.search(r"^trial 1: ", err, re.MULTILINE), err

    code, out, _ = cli(capsys, "study", "show", "tiny", "--json")
    shown = json.loads(out)
    assert code == 0 and [t["trial"] for t in shown] == [0, 1]
    assert {t["status"] for t in shown} <= {"reached", "stopped", "budget", "diverged", "oom", "duplicate"}
    assert shown == ran["trials"], "show --json prints what run --json printed"

    code, out, _ = cli(capsys, "study", "list", "--json")
    (listed,) = json.loads(out)
    assert code == 0 and listed["study"] == "tiny" and listed["trials"] == 2
    assert listed["target"] == CLI_SPEC["target"] and listed["cost"] == CLI_SPEC["cost"]
