"""The bad input table: every user mistake is one line naming the field and the fix, exit 2.

No traceback, and nothing written: no study, no trial, no output file. ``tests/cli/test_cli.py`` holds
the create-time cases (spec, space and workload files); this table adds run-time flags, storage
URLs and the environment, workers, targets and export files.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import optuna
import pytest
import yaml
from cli_runner import cli  # the in-process CLI runner

SPACE = {
    "peak_lr": 0.02,
    "horizon_samples": 4096,
    "schedule": "constant",
    "micro_batch_size": 32,
    "optimizer": {"choices": ["sgd"], "sgd": {"momentum": 0.9}},
}
SPEC = {
    "workload": "digits",
    "space": "space.yaml",
    "target": "accuracy>=0.9",
    "cost": "samples",
    "max_cost": 1024,
    "eval_every": {"samples": 512},
    "pruner": "none",
}
DB = "studies/convtune.db"

# name: (command, args, files to write {name: text}, env {name: value}, words the line must contain)
CASES: dict[str, tuple[str, list[str], dict[str, str], dict[str, str], list[str]]] = {
    "zero trials": ("run", ["s", "--n-trials", "0"], {}, {}, ["--n-trials", "give 1 or more"]),
    "negative trials": ("run", ["s", "-n", "-3"], {}, {}, ["--n-trials", "give 1 or more"]),
    "zero timeout": ("run", ["s", "--timeout", "0"], {}, {}, ["--timeout", "positive"]),
    "zero workers": ("run", ["s", "--workers", "0"], {}, {}, ["--workers", "give 1 or more"]),
    "workers on sqlite": (
        "run",
        ["s", "--workers", "2", "-n", "2"],
        {},
        {},
        ["--workers", "SQLite takes one writer", "journal://", "postgresql://"],
    ),
    "zero ranks": (
        "run",
        ["s", "--world-size", "0", "-n", "1"],
        {},
        {},
        ["--world-size 0", "give 1 or more"],
    ),
    "zero nodes": ("run", ["s", "--nnodes", "0", "-n", "1"], {}, {}, ["--nnodes", "give 1 or more"]),
    "zero local workers": (
        "run",
        ["s", "--local-workers", "0", "-n", "1"],
        {},
        {},
        ["--local-workers 0", "give 1 or more"],
    ),
    "zero collective timeout": (
        "run",
        ["s", "--collective-timeout", "0", "-n", "1"],
        {},
        {},
        ["--collective-timeout", "positive number of seconds"],
    ),
    "negative collective timeout": (
        "run",
        ["s", "--collective-timeout", "-5", "-n", "1"],
        {},
        {},
        ["--collective-timeout -5", "positive number of seconds"],
    ),
    "unknown executor": (
        "run",
        ["s", "--executor", "gpu", "-n", "1"],
        {},
        {},
        ["--executor", "auto, elastic or inprocess"],
    ),
    "nodes without endpoint": (
        "run",
        ["s", "--nnodes", "2", "--world-size", "2", "-n", "1", "--executor", "elastic"],
        {},
        {},
        ["rdzv", "HOST:PORT"],
    ),
    "missing study": (
        "run",
        ["ghost", "-n", "1"],
        {},
        {},
        ["no study named 'ghost'", "convtune study create"],
    ),
    "bad CONVTUNE_STORAGE": (
        "run",
        ["s", "-n", "1"],
        {},
        {"CONVTUNE_STORAGE": "notaurl"},
        ["$CONVTUNE_STORAGE=notaurl", "cannot open storage", "postgresql://"],
    ),
    "unknown storage scheme": (
        "list",
        ["--storage", "ftp://host/x"],
        {},
        {},
        ["ftp://host/x", "sqlite:///", "postgresql://", "journal://", "redis://"],
    ),
    "password never shown": (
        "list",
        ["--storage", "postgresql://bob:s3cret@127.0.0.1:1/db"],
        {},
        {},
        ["postgresql://bob:***@127.0.0.1:1/db", "cannot open storage"],
    ),
    "redis password never shown": (
        "list",
        ["--storage", "redis://:s3cret@127.0.0.1:1/0"],
        {},
        {},
        ["redis://:***@127.0.0.1:1/0", "cannot open storage"],
    ),
    "unreachable redis": (
        "list",
        ["--storage", "redis://127.0.0.1:1/0"],
        {},
        {},
        ["redis://127.0.0.1:1/0", "cannot open storage", "server is running"],
    ),
    "unwritable journal directory": (
        "list",
        ["--storage", "journal:///proc/convtune/j.log"],
        {},
        {},
        ["journal:///proc/convtune/j.log", "/proc/convtune"],
    ),
    "read-only list of a missing sqlite file": (
        "list",
        ["--storage", "sqlite:///nope/x.db"],
        {},
        {},
        ["sqlite:///nope/x.db", "no storage file", "study create"],
    ),
    "read-only show of a missing journal": (
        "show",
        ["s", "--storage", "journal:///tmp/convtune-none/j.log"],
        {},
        {},
        ["no storage file /tmp/convtune-none/j.log"],
    ),
    "read-only best of a missing default": (
        "best",
        ["s"],
        {},
        {"CONVTUNE_STORAGE": "sqlite:///elsewhere/c.db"},
        ["$CONVTUNE_STORAGE=sqlite:///elsewhere/c.db", "no storage file"],
    ),
    "export from a missing sqlite file": (
        "export",
        ["s", "--storage", "sqlite:///other.db", "-o", "best.yaml"],
        {},
        {},
        ["sqlite:///other.db", "no storage file"],
    ),
    "create in a missing directory": (
        "create",
        ["n", "--config", "s.yaml", "--storage", "sqlite:///nope/dir/x.db"],
        {},
        {},
        ["sqlite:///nope/dir/x.db", "directory nope does not exist"],
    ),
    "create in an unwritable directory": (
        "create",
        ["n", "--config", "s.yaml", "--storage", "sqlite:////proc/x.db"],
        {},
        {},
        ["sqlite:////proc/x.db", "writable"],
    ),
    "create in memory": (
        "create",
        ["n", "--config", "s.yaml", "--storage", "sqlite:///:memory:"],
        {},
        {},
        ["sqlite:///:memory:", "keeps nothing"],
    ),
    "password with a slash never shown": (
        "list",
        ["--storage", "postgresql://bob:s3cret/x+y@127.0.0.1:1/db"],
        {},
        {},
        ["postgresql://bob:***@127.0.0.1:1/db", "cannot open storage"],
    ),
    "query password never shown": (
        "list",
        ["--storage", "postgresql://bob@127.0.0.1:1/db?password=s3cret"],
        {},
        {},
        ["postgresql://bob@127.0.0.1:1/db?password=***", "cannot open storage"],
    ),
    "unknown sampler": (
        "create",
        ["n", "--config", "s.yaml", "--sampler", "cmaes"],
        {},
        {},
        ["s.yaml: sampler", "'tpe', 'random' or 'gp'"],
    ),
    "unknown pruner": (
        "create",
        ["n", "--config", "s.yaml", "--pruner", "asha"],
        {},
        {},
        [
            "s.yaml: pruner",
            "'time_to_target', 'time_to_target_field', 'time_to_target_halving', 'median', 'hyperband' or 'none'",
        ],
    ),
    "unknown cost": ("create", ["n", "--config", "s.yaml", "--cost", "flops"], {}, {}, ["cost", "wallclock"]),
    "negative cap": (
        "create",
        ["n", "--config", "s.yaml", "--max-cost", "-5"],
        {},
        {},
        ["max_cost", "greater than 0"],
    ),
    "duplicate tolerance out of range": (
        "create",
        ["n", "--config", "tol.yaml"],
        {"tol.yaml": yaml.safe_dump({**SPEC, "duplicate_tolerance": 1.5})},
        {},
        ["tol.yaml: duplicate_tolerance", "less than 1"],
    ),
    "unknown pruner option": (
        "create",
        ["n", "--config", "po.yaml"],
        {
            "po.yaml": yaml.safe_dump(
                {**SPEC, "pruner": "time_to_target", "pruner_options": {"epsilonn": 0.1}}
            )
        },
        {},
        ["po.yaml", "pruner_options: unknown option 'epsilonn'", "epsilon_behind"],
    ),
    "pruner option out of range": (
        "create",
        ["n", "--config", "po.yaml"],
        {"po.yaml": yaml.safe_dump({**SPEC, "pruner": "time_to_target", "pruner_options": {"epsilon": 1.5}})},
        {},
        ["pruner_options", "epsilon must be in [0, 1), got 1.5"],
    ),
    "reach bound below one": (
        "create",
        ["n", "--config", "po.yaml"],
        {
            "po.yaml": yaml.safe_dump(
                {**SPEC, "pruner": "time_to_target", "pruner_options": {"reach_max_lowering": 0.5}}
            )
        },
        {},
        ["pruner_options", "reach_max_lowering must be >= 1, got 0.5"],
    ),
    "behind_reports not a whole number": (
        "create",
        ["n", "--config", "po.yaml"],
        {
            "po.yaml": yaml.safe_dump(
                {**SPEC, "pruner": "time_to_target", "pruner_options": {"behind_reports": 1.5}}
            )
        },
        {},
        ["pruner_options", "behind_reports must be a whole number >= 1, got 1.5"],
    ),
    "require_behind not a boolean": (
        "create",
        ["n", "--config", "po.yaml"],
        {
            "po.yaml": yaml.safe_dump(
                {**SPEC, "pruner": "time_to_target", "pruner_options": {"require_behind": "often"}}
            )
        },
        {},
        ["po.yaml", "pruner_options.require_behind", "valid number"],
    ),
    "require_behind neither true nor false": (
        "create",
        ["n", "--config", "po.yaml"],
        {
            "po.yaml": yaml.safe_dump(
                {**SPEC, "pruner": "time_to_target", "pruner_options": {"require_behind": 2}}
            )
        },
        {},
        ["pruner_options", "require_behind must be true or false, got 2.0"],
    ),
    "behind_noise below zero": (
        "create",
        ["n", "--config", "po.yaml"],
        {
            "po.yaml": yaml.safe_dump(
                {**SPEC, "pruner": "time_to_target", "pruner_options": {"behind_noise": -1}}
            )
        },
        {},
        ["pruner_options", "behind_noise must be a finite number >= 0, got -1.0"],
    ),
    "plateau_references not true or false": (
        "create",
        ["n", "--config", "po.yaml"],
        {
            "po.yaml": yaml.safe_dump(
                {**SPEC, "pruner": "time_to_target", "pruner_options": {"plateau_references": 3}}
            )
        },
        {},
        ["pruner_options", "plateau_references must be true or false, got 3.0"],
    ),
    "pruner options of another pruner": (
        "create",
        ["n", "--config", "po.yaml"],
        {"po.yaml": yaml.safe_dump({**SPEC, "pruner": "median", "pruner_options": {"epsilon": 0.05}})},
        {},
        ["po.yaml", "time_to_target only"],
    ),
    "missing spec file": ("create", ["n", "--config", "nope.yaml"], {}, {}, ["nope.yaml"]),
    "spec not a mapping": (
        "create",
        ["n", "--config", "list.yaml"],
        {"list.yaml": "- a\n- b\n"},
        {},
        ["list.yaml"],
    ),
    "two eval intervals": (
        "create",
        ["n", "--config", "two.yaml"],
        {"two.yaml": yaml.safe_dump({**SPEC, "eval_every": {"samples": 512, "steps": 4}})},
        {},
        ["two.yaml", "eval_every", "exactly one"],
    ),
    "target without a number": (
        "create",
        ["n", "--config", "s.yaml", "--target", "accuracy>="],
        {},
        {},
        ["target"],
    ),
    "no target": (
        "create",
        ["n", "--config", "nt.yaml"],
        {"nt.yaml": yaml.safe_dump({k: v for k, v in SPEC.items() if k != "target"})},
        {},
        ["nt.yaml: target", "--target"],
    ),
    "workload module missing": (
        "create",
        ["n", "--config", "s.yaml", "--workload", "no_such_pkg.mod:make"],
        {},
        {},
        ["workload", "no_such_pkg"],
    ),
    "script workload missing": (
        "create",
        ["n", "--config", "sc.yaml"],
        {"sc.yaml": yaml.safe_dump({**SPEC, "workload": {"script": "train.py"}})},
        {},
        ["workload.script", "train.py", "relative to the spec file"],
    ),
    "export format": ("export", ["s", "--format", "toml", "-o", "best.toml"], {}, {}, ["toml", "yaml"]),
    "export onto a directory": (
        "export",
        ["s", "--trial", "0", "-o", "studies"],
        {},
        {},
        ["studies"],
    ),
    "export a missing trial": (
        "export",
        ["s", "--trial", "7", "-o", "best.yaml"],
        {},
        {},
        ["no trial 7", "choose 0..0"],
    ),
}


def _create(spec: dict | None = None, space: dict | None = None, extra: list[str] | None = None) -> tuple:
    """A ``study create n`` case whose spec (in c.yaml) and space (in c-space.yaml) differ from the good ones."""
    merged = {k: v for k, v in {**SPACE, **(space or {})}.items() if v is not None}  # None: leave it out
    files = {"c-space.yaml": yaml.safe_dump(merged)}
    files["c.yaml"] = yaml.safe_dump({**SPEC, "space": "c-space.yaml", **(spec or {})})
    return "create", ["n", "--config", "c.yaml", *(extra or [])], files


# By class: every fixed value and range through the recipe's rules (types, ranges), seeds,
# paths, names, encodings, the target against what the workload declares, and run-time flags.
# name: (command, args, files, env, words)
CLASSES: dict[str, tuple[str, list[str], dict[str, str], dict[str, str], list[str]]] = {
    "type: LR a word": (
        *_create(space={"peak_lr": "fast"}),
        {},
        ["c-space.yaml: peak_lr", "'fast'", "number"],
    ),
    "type: batch a word": (
        *_create(space={"micro_batch_size": {"choices": [16, "big"]}}),
        {},
        ["c-space.yaml: micro_batch_size", "'big'"],
    ),
    "type: seed a word": (*_create(spec={"seed": "1e20"}), {}, ["c.yaml: seed", "integer"]),
    "type: bool range bound": (
        *_create(space={"warmup_steps": {"low": True, "high": 3}}),
        {},
        ["c-space.yaml: warmup_steps", "not a number"],
    ),
    "range: fixed batch 0": (
        *_create(space={"micro_batch_size": 0}),
        {},
        ["c-space.yaml: micro_batch_size", "greater than 0"],
    ),
    "range: negative LR": (
        *_create(space={"peak_lr": -0.1}),
        {},
        ["c-space.yaml: peak_lr", "-0.1", "greater than 0"],
    ),
    "range: NaN LR": (*_create(space={"peak_lr": float("nan")}), {}, ["c-space.yaml: peak_lr", "nan"]),
    "range: LR range from 0": (
        *_create(space={"peak_lr": {"low": 0.0, "high": 0.1}}),
        {},
        ["c-space.yaml: peak_lr", "greater than 0"],
    ),
    "range: horizon 0": (
        *_create(space={"horizon_samples": 0}),
        {},
        ["c-space.yaml: horizon_samples", "greater than 0"],
    ),
    "range: negative warmup": (
        *_create(space={"warmup_steps": -4}),
        {},
        ["c-space.yaml: warmup_steps", "-4"],
    ),
    "range: negative seed": (*_create(spec={"seed": -1}), {}, ["c.yaml: seed", "greater than or equal to 0"]),
    "range: huge seed": (*_create(spec={"seed": 10**20}), {}, ["c.yaml: seed", "less than"]),
    "range: empty space file": (
        "create",
        ["n", "--config", "e.yaml"],
        {"e.yaml": yaml.safe_dump({**SPEC, "space": "empty.yaml"}), "empty.yaml": ""},
        {},
        ["empty.yaml", "empty"],
    ),
    "range: space without a horizon": (
        *_create(space={"horizon_samples": None}),
        {},
        ["c-space.yaml"],
    ),
    "range: impossible accuracy": (
        *_create(spec={"target": "accuracy>=1.5"}),
        {},
        ["target", "cannot be reached", "[0, 1]"],
    ),
    "range: accuracy above 1 strictly": (
        *_create(spec={"target": "accuracy>1"}),
        {},
        ["target", "cannot be reached"],
    ),
    "range: negative loss": (*_create(spec={"target": "val_loss<=-1"}), {}, ["target", "cannot be reached"]),
    "range: metric typo": (
        *_create(spec={"target": "acuracy>=0.9"}),
        {},
        ["c.yaml: target", "'acuracy'", "accuracy"],
    ),
    "range: collective timeout": (
        "run",
        ["s", "-n", "1", "--collective-timeout", "-5"],
        {},
        {},
        ["--collective-timeout", "positive"],
    ),
    "range: local workers": (
        "run",
        ["s", "-n", "1", "--local-workers", "0"],
        {},
        {},
        ["--local-workers", "give 1 or more"],
    ),
    "path: unwritable checkpoint dir": (
        *_create(spec={"checkpoint_dir": "/proc/convtune/ckpt"}),
        {},
        ["c.yaml: checkpoint_dir", "/proc"],
    ),
    "path: checkpoint dir is a file": (
        *_create(spec={"checkpoint_dir": "space.yaml/ckpt"}),
        {},
        ["c.yaml: checkpoint_dir", "not a directory"],
    ),
    "path: artifacts under a file": (
        *_create(spec={"artifacts": "s.yaml/art"}),
        {},
        ["c.yaml: artifacts", "not a directory"],
    ),
    "path: missing baseline": (*_create(extra=["--baseline", "nope.yaml"]), {}, ["nope.yaml", "not found"]),
    "path: baseline not a recipe": (*_create(extra=["--baseline", "s.yaml"]), {}, ["s.yaml"]),
    "name: empty": ("create", ["", "--config", "s.yaml"], {}, {}, ["study name", "empty"]),
    "name: blank": ("create", ["  ", "--config", "s.yaml"], {}, {}, ["study name", "empty"]),
    "name: newline": ("create", ["a\nb", "--config", "s.yaml"], {}, {}, ["study name", "control character"]),
    "name: too long": (
        "create",
        ["x" * 600, "--config", "s.yaml"],
        {},
        {},
        ["study name", "600 characters", "512"],
    ),
    "encoding: Latin-1 spec": (
        "create",
        ["n", "--config", "l.yaml"],
        {"l.yaml": yaml.safe_dump(SPEC) + "# caf\xe9\n"},
        {},
        ["l.yaml", "not UTF-8", "line"],
    ),
    "encoding: duplicate spec key": (
        "create",
        ["n", "--config", "d.yaml"],
        {"d.yaml": yaml.safe_dump(SPEC) + "seed: 1\nseed: 2\n"},
        {},
        ["d.yaml", "duplicate key 'seed'"],
    ),
    "encoding: duplicate space key": (
        "create",
        ["n", "--config", "c.yaml"],
        {
            "c.yaml": yaml.safe_dump({**SPEC, "space": "c-space.yaml"}),
            "c-space.yaml": yaml.safe_dump(SPACE) + "peak_lr: 0.5\n",
        },
        {},
        ["c-space.yaml", "duplicate key 'peak_lr'"],
    ),
    "encoding: duplicate JSON key": (
        "create",
        ["n", "--config", "j.json"],
        {"j.json": '{"workload": "digits", "workload": "charlm", "target": "accuracy>=0.9"}'},
        {},
        ["j.json", "duplicate key 'workload'"],
    ),
}
CASES.update(CLASSES)


# Workload behaviour: a workload file whose evaluate() misbehaves. Undeclared metrics are found by
# one evaluation at create; declared ones are trusted there and checked at every evaluation.
_WORKLOAD = """
from convtune.workloads.digits import Digits


class W(Digits):
    metrics = {declared}

    def evaluate(self, model):
        return {returns}


def make():
    return W()
"""


def _workload(returns: str, declared: str = "None") -> dict[str, str]:
    return {"wl.py": _WORKLOAD.format(returns=returns, declared=declared)}


CASES.update(
    {
        "workload: evaluate returns a word": (
            "create",
            ["n", "--config", "s.yaml", "--workload", "wl.py:make"],
            _workload("{'accuracy': 'high'}"),
            {},
            ["workload.evaluate", "'high'", "not a number"],
        ),
        "workload: evaluate returns None": (
            "create",
            ["n", "--config", "s.yaml", "--workload", "wl.py:make"],
            _workload("None"),
            {},
            ["workload.evaluate", "NoneType", "not a dict"],
        ),
        "workload: target metric it does not return": (
            "create",
            ["n", "--config", "s.yaml", "--workload", "wl.py:make"],
            _workload("{'acc': 0.5}"),
            {},
            ["target", "gives acc", "not 'accuracy'"],
        ),
        "workload: target beyond its declared range": (
            "create",
            ["n", "--config", "s.yaml", "--workload", "wl.py:make", "--target", "accuracy>=2"],
            _workload("{'accuracy': 0.5}", declared="{'accuracy': (0, 1)}"),
            {},
            ["target", "cannot be reached", "[0, 1]"],
        ),
    }
)


# Script and command workloads declare their metrics in the spec (``workload.metrics``): a
# mapping of ranges or a list of names, checked at create like a Workload class's ``metrics``.
_TRAIN = "from convtune.execution import session\nsession.recipe()\n"


def _script(
    metrics: object, target: str = "accuracy>=0.9", command: bool = False
) -> tuple[str, list[str], dict[str, str]]:
    workload = {"command": ["python", "train.py"]} if command else {"script": "train.py"}
    command_, args, files = _create(spec={"workload": {**workload, "metrics": metrics}, "target": target})
    return command_, args, {**files, "train.py": _TRAIN}


CASES.update(
    {
        "workload: script metrics without the target's": (
            *_script({"val_loss": [0, float("inf")]}),
            {},
            ["c.yaml: target", "workload.metrics declares val_loss", "not 'accuracy'"],
        ),
        "workload: command metric names without the target's": (
            *_script(["val_loss", "acc"], command=True),
            {},
            ["c.yaml: target", "declares acc, val_loss", "not 'accuracy'"],
        ),
        "workload: target beyond the script's declared range": (
            *_script({"accuracy": [0, 1]}, target="accuracy>=1.5"),
            {},
            ["c.yaml: target", "cannot be reached", "[0, 1]"],
        ),
        "workload: script metric range of one number": (
            *_script({"accuracy": [1]}),
            {},
            ["c.yaml: workload.metrics", "accuracy", "[low, high]", "metrics: {accuracy: [0, 1]"],
        ),
        "workload: script metric range reversed": (
            *_script({"accuracy": [1, 0]}),
            {},
            ["c.yaml: workload.metrics", "low end above"],
        ),
        "workload: script metric range of words": (
            *_script({"accuracy": ["low", "high"]}),
            {},
            ["c.yaml: workload.metrics", "'low'", "two numbers"],
        ),
        "workload: script metrics a bare word": (
            *_script("accuracy"),
            {},
            ["c.yaml: workload.metrics", "'accuracy'", "list of names"],
        ),
        "workload: script metrics an empty list": (
            *_script([]),
            {},
            ["c.yaml: workload.metrics", "non-empty list"],
        ),
    }
)


@pytest.fixture(scope="module")
def seeded(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A project with study ``s`` holding one finished trial (run once for the whole table)."""
    root = tmp_path_factory.mktemp("seeded")
    (root / "space.yaml").write_text(yaml.safe_dump(SPACE))
    (root / "s.yaml").write_text(yaml.safe_dump(SPEC))
    url = f"sqlite:///{root / DB}"
    from convtune.config.spec import load_spec
    from convtune.study import create_study, run_study

    create_study("s", load_spec(root / "s.yaml"), url)
    run_study("s", n_trials=1, storage=url)
    return root


def _snapshot(root: Path) -> tuple[list[str], int]:
    files = sorted(str(p.relative_to(root)) for p in root.rglob("*") if p.is_file())
    studies = optuna.get_all_study_summaries(f"sqlite:///{root / DB}")
    return files, sum(s.n_trials for s in studies) * 1000 + len(studies)


@pytest.mark.parametrize("case", sorted(CASES))
def test_bad_input_is_one_line_exit_2_nothing_written(
    case: str,
    seeded: Path,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    command, args, files, env, words = CASES[case]
    project = tmp_path / "p"
    shutil.copytree(seeded, project)
    for name, text in files.items():
        (project / name).write_bytes(text.encode("latin-1" if "\xe9" in text else "utf-8"))
    monkeypatch.chdir(project)
    monkeypatch.delenv("CONVTUNE_STORAGE", raising=False)
    for key, value in env.items():
        monkeypatch.setenv(key, value)
    before = _snapshot(project)

    code, out, err = cli(capsys, "study", command, *args)

    assert code == 2, (code, out[-1000:], err[-1000:])
    lines = [line for line in err.splitlines() if line.strip()]
    assert len(lines) == 1, err
    assert lines[0].startswith("convtune: error: "), lines[0]
    assert "Traceback" not in out + err
    for word in words:
        assert word in lines[0], (word, lines[0])
    assert "s3cret" not in out + err
    assert _snapshot(project) == before, "a rejected command must write nothing"


def test_every_numeric_option_of_study_run_has_an_out_of_range_case() -> None:
    """A numeric flag added to ``study run`` needs a case here showing its bad values are refused."""
    import typing

    import typer

    from convtune.cli import app
    from convtune.cli.study import study_run

    run = typer.main.get_command(app).commands["study"].commands["run"]  # type: ignore[attr-defined]
    hints = typing.get_type_hints(study_run)
    numeric = {
        tuple(param.opts)
        for param in run.params
        if set(typing.get_args(hints[param.name]) or [hints[param.name]]) & {int, float}
    }
    assert ("--timeout",) in numeric and ("--workers", "-w") in numeric  # the check sees the flags
    tested = {arg for command, args, *_ in CASES.values() if command == "run" for arg in args}
    missing = sorted(opts[0] for opts in numeric if not set(opts) & tested)
    assert not missing, f"no bad-input case for {missing}"


def test_passwords_never_reach_tables_or_the_dashboard_command(
    seeded: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from convtune.cli.study import _print_best, _print_trials
    from convtune.storage import redact
    from convtune.study import open_study

    study, spec = open_study("s", f"sqlite:///{seeded / DB}")
    secret_url = "postgresql://bob:s3cret@db-host:5432/studies"
    _print_trials(study, spec)
    _print_best(study, spec, secret_url)
    out, err = capsys.readouterr()
    assert "optuna-dashboard 'postgresql://bob:***@db-host:5432/studies'" in out
    assert "s3cret" not in out + err
    assert redact("redis://:s3cret@h:6379/0") == "redis://:***@h:6379/0"
    assert redact("rediss://default:s3cret@h/0") == "rediss://default:***@h/0"


@pytest.mark.parametrize(
    ("returns", "words"),
    [
        ("None", ["workload.evaluate", "NoneType"]),
        ("{'accuracy': 'high'}", ["workload.evaluate", "'high'"]),
        ("{'val_loss': 1.0}", ["evaluate() returned ['val_loss']", "'accuracy'"]),
    ],
)
def test_a_workload_misbehaving_at_run_time_stops_the_study_in_one_line(
    returns: str,
    words: list[str],
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """Declared metrics pass create; the first evaluation's bad value ends the run, not every trial."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("CONVTUNE_STORAGE", raising=False)
    (tmp_path / "space.yaml").write_text(yaml.safe_dump(SPACE))
    (tmp_path / "s.yaml").write_text(yaml.safe_dump(SPEC))
    (tmp_path / "wl.py").write_text(_WORKLOAD.format(returns=returns, declared="{'accuracy': (0, 1)}"))
    assert cli(capsys, "study", "create", "w", "--config", "s.yaml", "--workload", "wl.py:make")[0] == 0
    code, out, err = cli(capsys, "study", "run", "w", "-n", "3")
    lines = [line for line in err.splitlines() if line.strip()]
    assert code == 2 and len(lines) == 1 and "Traceback" not in out + err, err
    for word in words:
        assert word in lines[0], (word, lines[0])
    study = optuna.load_study(study_name="w", storage=f"sqlite:///{tmp_path / DB}")
    assert len(study.trials) == 1, "the study stops at the first bad evaluation"


_REPORTING = """
from convtune.execution import session

session.recipe()
for step in range(1, 50):
    if session.report(step=step, samples=512 * step, metrics={metrics}):
        break
"""


def _script_study(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, metrics: str) -> None:
    """A project whose study ``w`` runs a command workload reporting ``metrics`` (declared: accuracy)."""
    import sys

    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("CONVTUNE_STORAGE", raising=False)
    (tmp_path / "space.yaml").write_text(yaml.safe_dump(SPACE))
    workload = {"command": [sys.executable, "report.py"], "metrics": {"accuracy": [0, 1]}}
    (tmp_path / "s.yaml").write_text(yaml.safe_dump({**SPEC, "workload": workload}))
    (tmp_path / "report.py").write_text(_REPORTING.format(metrics=metrics))


@pytest.mark.parametrize(
    ("metrics", "words"),
    [
        (
            "{'accuracy': 'high'}",
            ["session.report(metrics=...) got 'high'", "'accuracy'", "report plain numbers"],
        ),
        ("{'accuracy': object()}", ["session.report(metrics=...) got", "object", "not a number"]),
        ("{'val_loss': 1.0}", ["session.report(metrics=...) got ['val_loss']", "'accuracy'"]),
    ],
)
def test_a_script_reporting_bad_metrics_stops_the_study_in_one_line(
    metrics: str,
    words: list[str],
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """A script's declared metrics pass create; its first bad report ends the run, not every trial."""
    _script_study(tmp_path, monkeypatch, metrics)
    assert cli(capsys, "study", "create", "w", "--config", "s.yaml")[0] == 0
    code, out, err = cli(capsys, "study", "run", "w", "-n", "3")
    lines = [line for line in err.splitlines() if line.strip()]
    assert code == 2 and len(lines) == 1 and "Traceback" not in out + err, err
    for word in words:
        assert word in lines[0], (word, lines[0])
    study = optuna.load_study(study_name="w", storage=f"sqlite:///{tmp_path / DB}")
    assert len(study.trials) == 1, "the study stops at the first bad report"


@pytest.mark.parametrize("source", ["script", "workload"])
def test_a_nan_metric_is_divergence_with_its_reason(
    source: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """A NaN target metric (training loss still finite) ends the trial ``diverged``, not ``budget``."""
    from convtune.config.record import TrialRecord

    _script_study(tmp_path, monkeypatch, "{'accuracy': float('nan')}")
    args = ["study", "create", "w", "--config", "s.yaml"]
    if source == "workload":
        (tmp_path / "wl.py").write_text(
            _WORKLOAD.format(returns="{'accuracy': float('nan')}", declared="{'accuracy': (0, 1)}")
        )
        args += ["--workload", "wl.py:make"]
    assert cli(capsys, *args)[0] == 0
    code, out, err = cli(capsys, "study", "run", "w", "-n", "1")
    assert code == 0, err
    (trial,) = optuna.load_study(study_name="w", storage=f"sqlite:///{tmp_path / DB}").trials
    record = TrialRecord.of(trial)
    assert record.status == "diverged", record.attrs
    assert record.attrs["reason"].startswith("non-finite accuracy at step "), record.attrs
    assert record.attrs["samples"] == 512, "it stops at the first NaN, not at max_cost"


def test_more_ranks_than_gpus_is_refused_in_one_line_before_any_trial(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """world_size 2 on a node with one GPU: each rank would fail at its first CUDA call in every
    trial ("invalid device ordinal"). Test double at the GPU boundary: there is no GPU here, so
    torch is told it sees one (on an H200 the same refusal is benchmarks/gpu_check.py's check 5)."""
    import torch

    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("CONVTUNE_STORAGE", raising=False)
    (tmp_path / "space.yaml").write_text(yaml.safe_dump(SPACE))
    (tmp_path / "s.yaml").write_text(yaml.safe_dump(SPEC))
    assert cli(capsys, "study", "create", "w", "--config", "s.yaml")[0] == 0
    monkeypatch.setattr(torch.cuda, "device_count", lambda: 1)
    code, out, err = cli(capsys, "study", "run", "w", "-n", "1", "--world-size", "2")
    lines = [line for line in err.splitlines() if line.strip()]
    assert code == 2 and len(lines) == 1 and "Traceback" not in out + err, err
    assert "world_size" in lines[0] and "1 GPU" in lines[0] and "world_size 1 or fewer" in lines[0], lines[0]
    study = optuna.load_study(study_name="w", storage=f"sqlite:///{tmp_path / DB}")
    assert study.trials == [], "refused before the first trial"
    # A node that follows a two-node study checks its own share (2 of 4 ranks) the same way.
    code, out, err = cli(
        capsys,
        "study",
        "follow",
        "w",
        "--nnodes",
        "2",
        "--rdzv-endpoint",
        "127.0.0.1:29599",
        "--world-size",
        "4",
    )
    lines = [line for line in err.splitlines() if line.strip()]
    assert code == 2 and len(lines) == 1 and "2 ranks on each of 2 nodes on 1 GPU" in lines[0], err
    monkeypatch.setattr(torch.cuda, "device_count", lambda: 0)  # a CPU node: its ranks train on the CPU
    code, out, err = cli(capsys, "study", "run", "w", "-n", "1", "--world-size", "2")
    assert code == 0, err
