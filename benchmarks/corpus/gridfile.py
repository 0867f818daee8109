"""Reading and writing grid files (convtune grid v1: a header line, then one line per run).

``load_grid(path)`` reads ``.jsonl`` or ``.jsonl.gz`` (gzip by the suffix; a multi-member gzip,
as appending produces, reads as one stream) and skips a last line cut short by an interrupted
writer, so a file being recorded can be read at any time.

Example:
    >>> header, runs = load_grid("benchmarks/data/corpus/moons_accuracy.jsonl")  # doctest: +SKIP
    >>> header["metric"], runs[0]["curve"]["metric"][:3]                          # doctest: +SKIP
"""

from __future__ import annotations

import gzip
import json
from collections.abc import Iterator
from pathlib import Path
from typing import IO, Any

GRID_SUFFIXES = (".jsonl", ".jsonl.gz")


def _open_text(path: Path, mode: str) -> IO[str]:
    if path.name.endswith(".gz"):
        return gzip.open(path, mode + "t", encoding="utf-8")  # type: ignore[return-value]
    return path.open(mode, encoding="utf-8")


def _lines(path: Path) -> Iterator[str]:
    with _open_text(path, "r") as fh:
        try:
            yield from fh
        except EOFError:  # a gzip member cut short by an interrupted writer
            return


def load_grid(path: str | Path) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """The header and every complete run line of a grid file, in file order."""
    path = Path(path)
    header: dict[str, Any] | None = None
    runs: list[dict[str, Any]] = []
    for line in _lines(path):
        line = line.strip()
        if not line:
            continue
        try:
            record = json.loads(line)
        except ValueError:
            continue  # a line cut short by an interrupted writer: that run is simply redone
        if header is None:
            if record.get("convtune_grid") != 1:
                raise ValueError(f"{path}: the first line is not a convtune grid v1 header")
            header = record
        else:
            runs.append(record)
    if header is None:
        raise ValueError(f"{path}: empty grid file")
    return header, runs


def grid_path(out_dir: str | Path, workload: str) -> Path:
    """The workload's file in ``out_dir``: an existing ``.jsonl.gz`` wins, else ``.jsonl``."""
    out_dir = Path(out_dir)
    gz = out_dir / f"{workload}.jsonl.gz"
    return gz if gz.exists() else out_dir / f"{workload}.jsonl"


def grid_files(out_dir: str | Path) -> list[Path]:
    """Every grid file in ``out_dir``, sorted by name."""
    out_dir = Path(out_dir)
    return sorted(p for p in out_dir.iterdir() if p.name.endswith(GRID_SUFFIXES)) if out_dir.is_dir() else []


def append_line(path: Path, record: dict[str, Any]) -> None:
    """Append one JSON line and flush it to disk at once (readers may use partial files)."""
    with _open_text(path, "a") as fh:
        fh.write(json.dumps(record, separators=(",", ":")) + "\n")
        fh.flush()
