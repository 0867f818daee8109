"""Old module paths kept importable: ``import convtune.engine`` still works, with one warning.

The modules moved into subpackages (``convtune.engine`` is now ``convtune.training.engine``).
No file stays at an old path: an import hook (installed by ``convtune/__init__.py``) answers
for the old names, warns once (``DeprecationWarning``, pointing at the importing line) and yields
the module at its new path itself, so attributes, private helpers and monkeypatching all reach
the one real module::

    >>> import warnings
    >>> import convtune.training.engine
    >>> with warnings.catch_warnings(record=True):  # the DeprecationWarning, kept out of the way
    ...     warnings.simplefilter("always")
    ...     import convtune.engine
    >>> convtune.engine is convtune.training.engine
    True
"""

from __future__ import annotations

import importlib
import importlib.abc
import importlib.machinery
import sys
import types
import warnings

# old module -> its new home
MOVED = {
    "convtune._channel": "convtune.execution.channel",
    "convtune._export_template": "convtune.export._template",
    "convtune._format": "convtune.report.format",
    "convtune._memory": "convtune.training.memory",
    "convtune._rank": "convtune.execution._rank",
    "convtune.cli_export": "convtune.cli.export",
    "convtune.cli_scaling": "convtune.cli.scaling",
    "convtune.dashboard": "convtune.report.dashboard",
    "convtune.engine": "convtune.training.engine",
    "convtune.io": "convtune.config.io",
    "convtune.launcher": "convtune.execution.launcher",
    "convtune.optim": "convtune.config.optim",
    "convtune.plots": "convtune.report.plots",
    "convtune.probes": "convtune.training.probes",
    "convtune.recipe": "convtune.config.recipe",
    "convtune.resources": "convtune.config.resources",
    "convtune.scaling_plots": "convtune.report.scaling_plots",
    "convtune.schedules": "convtune.config.schedules",
    "convtune.session": "convtune.execution.session",
    "convtune.space": "convtune.config.space",
    "convtune.spec": "convtune.config.spec",
    "convtune.target": "convtune.config.target",
    "convtune.workers": "convtune.study.workers",
}


class _MovedLoader(importlib.abc.Loader):
    """Loads an old name as the module at its new path."""

    def __init__(self, old: str, new: str):
        self.old, self.new = old, new

    def create_module(self, spec: importlib.machinery.ModuleSpec) -> types.ModuleType:
        module = importlib.import_module(self.new)
        self._real_spec = module.__spec__  # the import system sets the old name's spec on it
        return module

    def exec_module(self, module: types.ModuleType) -> None:
        module.__spec__ = self._real_spec
        warnings.warn(
            f"{self.old} moved to {self.new}; import it from there (the old path will be removed)",
            DeprecationWarning,
            stacklevel=2,  # the importing line: warnings skips the import machinery's frames
        )


class _MovedFinder(importlib.abc.MetaPathFinder):
    """Answers for the old names in :data:`MOVED` only."""

    def find_spec(
        self, fullname: str, path: object = None, target: object = None
    ) -> importlib.machinery.ModuleSpec | None:
        new = MOVED.get(fullname)
        if new is None:
            return None
        return importlib.machinery.ModuleSpec(fullname, _MovedLoader(fullname, new))


def install() -> None:
    """Install the hook once (``convtune/__init__.py`` does)."""
    if not any(isinstance(finder, _MovedFinder) for finder in sys.meta_path):
        sys.meta_path.insert(0, _MovedFinder())  # before any path finder: an old file must not shadow it
