"""convtune: find the training configuration that reaches a quality target in the least time."""

from convtune import _moved
from convtune.config.target import Target
from convtune.errors import ConfigError, ConvtuneError, StorageError, StudyError, WorkloadError

__version__ = "0.1.0"

_moved.install()  # old module paths (``convtune.engine``, ...) still import, with a warning

__all__ = [
    "ConfigError",
    "ConvtuneError",
    "Recipe",
    "Recommendation",
    "StorageError",
    "StudyError",
    "Target",
    "WorkloadError",
    "__version__",
    "audit_forecasts",
    "load_recipe",
    "recommend",
    "session",
]

# Imported on first use: ``import convtune`` stays cheap (the Recipe pulls in torch).
_LAZY = {"Recipe": "convtune.config.recipe", "load_recipe": "convtune.config.recipe"}
_LAZY.update(recommend="convtune.scaling", Recommendation="convtune.scaling")
_LAZY.update(audit_forecasts="convtune.report.forecasts")
# ``from convtune import session`` is the documented way in for user scripts: the module itself.
_LAZY_MODULES = {"session": "convtune.execution.session"}


def __getattr__(name: str) -> object:
    if name in _LAZY:
        import importlib

        return getattr(importlib.import_module(_LAZY[name]), name)
    if name in _LAZY_MODULES:
        import importlib

        return importlib.import_module(_LAZY_MODULES[name])
    raise AttributeError(f"module 'convtune' has no attribute {name!r}")
