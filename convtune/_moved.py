"""Old module paths kept importable: each shim replaces itself with the module's new home.

A shim module calls :func:`moved` and nothing else; importing it warns once (DeprecationWarning)
and yields the new module itself, so attributes, private helpers and monkeypatching all reach the
one real module::

    # convtune/engine.py
    from convtune._moved import moved

    moved(__name__, "convtune.training.engine")
"""

from __future__ import annotations

import importlib
import sys
import warnings


def moved(old: str, new: str) -> None:
    """Warn that ``old`` moved to ``new`` and make ``import old`` return the ``new`` module."""
    warnings.warn(
        f"{old} moved to {new}; import it from there ({old} will be removed)",
        DeprecationWarning,
        stacklevel=_importer_stacklevel(),
    )
    sys.modules[old] = importlib.import_module(new)


def _importer_stacklevel() -> int:
    """The stack level of the code that imported the shim, past the import machinery's frames."""
    frame = sys._getframe(2)  # the shim module's body
    level = 3
    while frame is not None and (
        frame.f_code.co_filename.startswith("<frozen importlib")
        or frame.f_globals.get("__name__") == "importlib"
    ):
        frame = frame.f_back
        level += 1
    return level
