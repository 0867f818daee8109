"""convtune: find the training configuration that reaches a quality target in the least time."""

from convtune.errors import ConfigError, ConvtuneError, StorageError, StudyError, WorkloadError
from convtune.target import Target

__version__ = "0.1.0"

__all__ = [
    "ConfigError",
    "ConvtuneError",
    "StorageError",
    "StudyError",
    "Target",
    "WorkloadError",
    "__version__",
]
