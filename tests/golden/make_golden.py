"""A CLI transcript of a small ``cost: samples`` study, volatile parts normalised.

Runs the ``convtune`` commands (create, run, show, best, confirm, export, list) in-process through
``convtune.cli.main``, the console script's entry point, in a fresh temporary directory and prints every command with its exit status and output. Paths, wall-clock
figures and dates are replaced by placeholders so two runs print the same bytes; the file
``cli_transcript.txt`` next to this script is the saved transcript, and
``tests/cli/test_golden.py`` compares a fresh run against it.

    PYTHONPATH=$PWD python tests/golden/make_golden.py > tests/golden/cli_transcript.txt
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import re
import shutil
import sys
import tempfile
from pathlib import Path
from typing import Any

import yaml

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # tests/: specs.py
from specs import CLI_SPACE, CLI_SPEC  # noqa: E402

# test_cli's tiny spec files, with the default pruner.
SPACE = CLI_SPACE
SPEC = {key: value for key, value in CLI_SPEC.items() if key != "pruner"}
COMMANDS = [
    ["study", "create", "golden", "--config", "golden.yaml"],
    ["study", "run", "golden", "--n-trials", "6"],
    ["study", "show", "golden"],
    ["study", "best", "golden"],
    ["study", "best", "golden", "--json"],
    ["study", "confirm", "golden", "--top", "1", "--seeds", "1"],
    ["study", "best", "golden", "--json"],
    ["study", "export", "golden", "--format", "yaml", "-o", "best.yaml"],
    ["study", "export", "golden", "--format", "json", "-o", "best.json", "--predicted"],
    ["study", "export", "golden", "--format", "python", "-o", "best.py"],
    ["study", "list"],
]
EXPORTS = ["best.yaml", "best.json", "best.py"]


def normalise(text: str, workdir: Path) -> str:
    """Replace what differs between runs: the temporary directory, wall-clock figures, dates."""
    text = text.replace(str(workdir.resolve()), "<DIR>").replace(str(workdir), "<DIR>")
    # Wall-clock throughput and durations (samples/s, s, ms, h:mm:ss) depend on the machine.
    text = re.sub(r"\b\d[\d,]*(\.\d+)?(\s*)(samples/s|tokens/s|steps/s|it/s)", r"<RATE>\2\3", text)
    text = re.sub(
        r'("(samples_per_second|samples_per_s|throughput|wall_s|seconds|elapsed_s|duration_s|datetime_\w+)"\s*:\s*)[^,}\n]+',
        r"\1<V>",
        text,
    )
    # The trial table's last column is samples/s: keep its width, drop the figure.
    text = re.sub(
        r"│ +[\d,.]+ │$", lambda m: "│ " + "<RATE>".rjust(len(m.group(0)) - 4) + " │", text, flags=re.M
    )
    text = re.sub(r"\b\d+:\d\d:\d\d\b", "<H:MM:SS>", text)
    text = re.sub(r"\b\d{4}-\d\d-\d\d[ T]\d\d:\d\d(:\d\d(\.\d+)?)?\b", "<DATE>", text)
    text = re.sub(r"\b\d+(\.\d+)?\s?(ms|s)\b(?! of)", "<SECONDS>", text)
    return text


def run_cli(args: list[str]) -> tuple[int, str, str]:
    """``convtune ARGS`` in-process; (exit status, stdout, stderr)."""
    from convtune.cli import main

    out, err = io.StringIO(), io.StringIO()
    argv = sys.argv
    sys.argv = ["convtune", *args]
    try:
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            main()
        code = 0
    except SystemExit as exc:
        code = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)
    finally:
        sys.argv = argv
    return code, out.getvalue(), err.getvalue()


VOLATILE_ATTRS = re.compile(
    r"throughput|per_s|second|share|wall|elapsed|memory|_mb$|heartbeat|worker|host|pid"
)
UUID = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}")


def stored_records(workdir: Path) -> str:
    """Every trial's state, value, params and stored attributes, as sorted JSON (the record format)."""
    import optuna

    optuna.logging.set_verbosity(optuna.logging.WARNING)
    study = optuna.load_study(study_name="golden", storage=f"sqlite:///{workdir}/studies/convtune.db")

    def scrub(value: Any) -> Any:
        # Wall-clock figures (nested too: a curve's seconds) vary run to run; artifact ids are random.
        if isinstance(value, dict):
            return {
                UUID.sub("<UUID>", str(k)): "<V>" if VOLATILE_ATTRS.search(str(k)) else scrub(v)
                for k, v in value.items()
            }
        if isinstance(value, list):
            return [scrub(v) for v in value]
        if isinstance(value, float):
            # A fit's last digits follow the CPU's vector paths; 9 significant digits do not.
            return float(f"{value:.9g}")
        return UUID.sub("<UUID>", value) if isinstance(value, str) else value

    trials = [
        {
            "number": trial.number,
            "state": trial.state.name,
            "value": scrub(trial.value),
            "params": trial.params,
            "user_attrs": scrub(trial.user_attrs),
            "system_attrs": scrub(trial.system_attrs),
            "intermediate_values": scrub(trial.intermediate_values),
        }
        for trial in study.get_trials(deepcopy=False)
    ]
    document = {
        "user_attrs": scrub(study.user_attrs),
        "system_attrs": scrub(study._storage.get_study_system_attrs(study._study_id)),
        "trials": trials,
    }
    text = json.dumps(document, indent=1, sort_keys=True, default=str)
    # Sampled params (and the sampler's own JSON of them) carry a fit's last digits too.
    text = LONG_FLOAT.sub(lambda m: repr(float(f"{float(m.group(0)):.9g}")), text)
    return normalise(text, workdir)


LONG_FLOAT = re.compile(r"(?<![\w.])\d+\.\d{10,}(?:e-?\d+)?")


def transcript() -> str:
    """The normalised transcript of ``COMMANDS`` and the files they export."""
    os.environ.update(OMP_NUM_THREADS="1", COLUMNS="200", TERM="dumb", NO_COLOR="1")
    os.environ.pop("CONVTUNE_STORAGE", None)
    lines: list[str] = []
    cwd = Path.cwd()
    workdir = Path(tempfile.mkdtemp(prefix="convtune-golden-"))
    try:
        os.chdir(workdir)
        (workdir / "space.yaml").write_text(yaml.safe_dump(SPACE))
        (workdir / "golden.yaml").write_text(yaml.safe_dump(SPEC))
        for args in COMMANDS:
            code, out, err = run_cli(args)
            lines.append(f"$ convtune {' '.join(args)}  [exit {code}]")
            lines.append(normalise(out, workdir).rstrip())
            if err.strip():
                lines += ["--- stderr", normalise(err, workdir).rstrip()]
        for name in EXPORTS:
            lines += [f"=== {name}", normalise((workdir / name).read_text(), workdir).rstrip()]
        lines += ["=== stored trial records", stored_records(workdir)]
    finally:
        os.chdir(cwd)
        shutil.rmtree(workdir, ignore_errors=True)
    return "\n".join(lines) + "\n"


def main() -> None:
    sys.stdout.write(transcript())


if __name__ == "__main__":
    main()
