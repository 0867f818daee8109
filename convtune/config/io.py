"""Reading YAML/JSON files into mappings, with errors that name the file and the line."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import yaml

from convtune.errors import ConfigError


class _UniqueKeyLoader(yaml.SafeLoader):
    """PyYAML's safe loader, except that a key given twice in one mapping is an error.

    YAML says keys are unique, yet PyYAML keeps the last: a second ``peak_lr:`` further down
    would silently replace the first.
    """

    def construct_mapping(self, node: yaml.MappingNode, deep: bool = False) -> dict[Any, Any]:
        seen: set[Any] = set()
        for key_node, _ in node.value:
            key = self.construct_object(key_node, deep=deep)  # type: ignore[no-untyped-call]
            if isinstance(key, list | dict) or key is None:
                continue  # unhashable or merge keys: the base loader reports them
            if key in seen:
                raise yaml.constructor.ConstructorError(
                    None, None, f"duplicate key {key!r}", key_node.start_mark
                )
            seen.add(key)
        return super().construct_mapping(node, deep=deep)


def _unique_json_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    keys = [k for k, _ in pairs]
    duplicate = next((k for k in keys if keys.count(k) > 1), None)
    if duplicate is not None:
        raise ValueError(f"duplicate key {duplicate!r}")
    return dict(pairs)


def load_yaml(text: str) -> Any:
    """YAML as :func:`yaml.safe_load` reads it, with duplicate keys refused."""
    return yaml.load(text, Loader=_UniqueKeyLoader)  # noqa: S506 (a SafeLoader subclass)


def read_mapping(path: Path) -> dict[str, Any]:
    """Load a YAML or JSON file that must hold a mapping (YAML is loaded safely, keys unique)."""
    if not path.is_file():
        raise ConfigError("file not found", where=str(path), fix="check the path")
    try:
        text = path.read_text(encoding="utf-8")
    except UnicodeDecodeError as exc:
        line = path.read_bytes()[: exc.start].count(b"\n") + 1
        raise ConfigError(
            f"not UTF-8 text (byte {exc.object[exc.start]:#04x} at line {line})",
            where=str(path),
            fix="save the file as UTF-8",
        ) from None
    except OSError as exc:
        raise ConfigError(f"cannot read it: {exc.strerror}", where=str(path)) from None
    try:
        if path.suffix == ".json":
            data = json.loads(text, object_pairs_hook=_unique_json_keys)
        else:
            data = load_yaml(text)
    except ValueError as exc:
        if isinstance(exc, json.JSONDecodeError):
            raise ConfigError(f"malformed JSON at line {exc.lineno}: {exc.msg}", where=str(path)) from None
        raise ConfigError(str(exc), where=str(path), fix="give each key once") from None
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        line = f" at line {mark.line + 1}" if mark is not None else ""
        problem = getattr(exc, "problem", None) or "invalid YAML"
        fix = "give each key once" if problem.startswith("duplicate key") else "fix the syntax"
        raise ConfigError(f"malformed YAML{line}: {problem}", where=str(path), fix=fix) from None
    if data is None:
        data = {}
    if not isinstance(data, dict):
        raise ConfigError(
            "expected a mapping at the top level", where=str(path), fix="write key: value pairs"
        )
    return data
