"""Reading YAML/JSON files into mappings, with errors that name the file and the line."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import yaml

from convtune.errors import ConfigError


def read_mapping(path: Path) -> dict[str, Any]:
    """Load a YAML or JSON file that must hold a mapping (YAML is loaded safely)."""
    if not path.is_file():
        raise ConfigError("file not found", where=str(path), fix="check the path")
    text = path.read_text(encoding="utf-8")
    try:
        data = json.loads(text) if path.suffix == ".json" else yaml.safe_load(text)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        line = f" at line {mark.line + 1}" if mark is not None else ""
        problem = getattr(exc, "problem", None) or "invalid YAML"
        raise ConfigError(f"malformed YAML{line}: {problem}", where=str(path), fix="fix the syntax") from None
    except json.JSONDecodeError as exc:
        raise ConfigError(f"malformed JSON at line {exc.lineno}: {exc.msg}", where=str(path)) from None
    if data is None:
        data = {}
    if not isinstance(data, dict):
        raise ConfigError(
            "expected a mapping at the top level", where=str(path), fix="write key: value pairs"
        )
    return data
