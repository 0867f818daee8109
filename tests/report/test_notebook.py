"""notebooks/analyze_study.ipynb runs headlessly (nbclient, the venv's python3 kernel) on the
session's tiny study, and the copy in git carries no outputs."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import nbformat
import pytest
from specs import TinyStudy

NOTEBOOK = Path(__file__).resolve().parents[2] / "notebooks" / "analyze_study.ipynb"


def test_notebook_in_git_has_no_outputs() -> None:
    nb = nbformat.read(NOTEBOOK, as_version=4)
    for cell in nb.cells:
        if cell.cell_type == "code":
            assert not cell.outputs and cell.execution_count is None, "clear the notebook's outputs"


def test_notebook_runs_on_a_small_study(
    tiny_study: TinyStudy, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from nbclient import NotebookClient

    # A project laid out as the repository is: the study in studies/convtune.db (the CLI's default),
    # the kernel started in notebooks/ as `jupyter execute notebooks/…` starts it. The study is
    # the session's tiny one (a baseline and a confirmation run), copied: the notebook only reads.
    (tmp_path / "studies").mkdir()
    (tmp_path / "notebooks").mkdir()
    shutil.copyfile(tiny_study.directory / "study.db", tmp_path / "studies" / "convtune.db")

    out = tmp_path / "out"
    monkeypatch.setenv("CONVTUNE_STUDY", tiny_study.name)
    monkeypatch.delenv("CONVTUNE_STORAGE", raising=False)  # found from the project root
    monkeypatch.setenv("CONVTUNE_NOTEBOOK_OUT", str(out))
    monkeypatch.setenv("MPLBACKEND", "Agg")
    nb = nbformat.read(NOTEBOOK, as_version=4)
    NotebookClient(
        nb, timeout=300, kernel_name="python3", resources={"metadata": {"path": str(tmp_path / "notebooks")}}
    ).execute()

    text = "\n".join(
        o.get("text", "")
        + str(o.get("data", {}).get("text/plain", ""))
        + str(o.get("data", {}).get("text/markdown", ""))
        for c in nb.cells
        if c.cell_type == "code"
        for o in c.outputs
    )
    assert f"study {tiny_study.name}: target accuracy>=0.9" in text
    assert "**Forecasts on this study:** no trial that reached" in text  # both tiny trials: steady
    assert any("image/png" in o.get("data", {}) for c in nb.cells if c.cell_type == "code" for o in c.outputs)
    for name in ("best.yaml", "best.json", "best.hf.json", "best.py"):
        assert (out / name).is_file(), name
    assert "Traceback" not in text and os.environ.get("CONVTUNE_STUDY") == tiny_study.name
    assert not (tmp_path / "notebooks" / "studies").exists(), "reading created a database"
