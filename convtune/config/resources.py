"""Files shipped with convtune: the search spaces in ``search_spaces/``."""

from __future__ import annotations

from pathlib import Path

from convtune.errors import ConfigError

# In a checkout (and an editable install) the spaces sit beside the package.
_ROOT = Path(__file__).resolve().parents[2]


def shipped_space(name: str) -> Path:
    for folder in (Path("search_spaces"), _ROOT / "search_spaces"):
        path = folder / f"{name}.yaml"
        if path.is_file():
            return path
    raise ConfigError(
        f"no search space named {name!r}",
        where="space",
        fix="give a path to a YAML file or a shipped space (default, transformer, large_batch)",
    )
