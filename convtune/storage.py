"""Storage URLs to Optuna storages, and the artifact store beside them.

``sqlite:///…`` and ``postgresql://…`` (any SQLAlchemy URL) open Optuna's RDB storage with
heartbeats, so a trial whose worker died is failed and retried a bounded number of times;
``journal:///path`` and ``redis://host:port/db`` open Optuna's JournalStorage. The default is an
embedded SQLite file under ``studies/``: nothing to start, one writer at a time.
"""

from __future__ import annotations

import os
import re
import warnings
from pathlib import Path

import optuna
from optuna.storages import BaseStorage

from convtune.errors import StorageError

DEFAULT_DIR = Path("studies")
DEFAULT_FILE = "convtune.db"
ENV_VAR = "CONVTUNE_STORAGE"
HEARTBEAT_INTERVAL = 10
GRACE_PERIOD = 30
MAX_RETRY = 2


def default_storage_url(directory: Path | None = None) -> str:
    directory = directory or DEFAULT_DIR
    return f"sqlite:///{directory / DEFAULT_FILE}"


def resolve_storage_url(url: str | None) -> str:
    """The URL to use: the flag's, else ``$CONVTUNE_STORAGE``, else the embedded SQLite default."""
    return url or os.environ.get(ENV_VAR) or default_storage_url()


def redact(url: str) -> str:
    """The URL with any password replaced by ``***``: safe for logs, errors and tables."""
    return re.sub(r"(://[^:/@]+:)[^@]*@", r"\1***@", url)


def open_storage(
    url: str | None = None,
    *,
    heartbeat_interval: int | None = HEARTBEAT_INTERVAL,
    grace_period: int | None = GRACE_PERIOD,
    max_retry: int = MAX_RETRY,
) -> BaseStorage:
    """Open the storage behind ``url``; a :class:`StorageError` says what is wrong and how to fix it."""
    url = resolve_storage_url(url)
    shown = redact(url)
    try:
        if url.startswith("journal://"):
            from optuna.storages.journal import JournalFileBackend, JournalStorage

            path = Path(url.removeprefix("journal://"))
            _ensure_parent(path, shown)
            return JournalStorage(JournalFileBackend(str(path)))
        if url.startswith("redis://") or url.startswith("rediss://"):
            from optuna.storages.journal import JournalRedisBackend, JournalStorage

            return JournalStorage(JournalRedisBackend(url))
        if url.startswith("sqlite:///"):
            _ensure_parent(Path(url.removeprefix("sqlite:///")), shown)
        with warnings.catch_warnings():
            # Heartbeats and their retry callback are marked experimental; they are what we rely on.
            warnings.simplefilter("ignore", optuna.exceptions.ExperimentalWarning)
            return _rdb_storage(url, heartbeat_interval, grace_period, max_retry)
    except StorageError:
        raise
    except ModuleNotFoundError as exc:
        extra = "postgres" if "psycopg" in str(exc) else "redis" if "redis" in str(exc) else None
        fix = f"pip install 'convtune[{extra}]'" if extra else "install the missing driver"
        raise StorageError(f"cannot open storage: {exc}", where=shown, fix=fix) from None
    except Exception as exc:
        message = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        raise StorageError(
            f"cannot open storage: {redact(message)}",
            where=shown,
            fix="check the URL, that the server is running, and your credentials",
        ) from None


def _rdb_storage(
    url: str, heartbeat_interval: int | None, grace_period: int | None, max_retry: int
) -> BaseStorage:
    # Bounded retries: a trial that always kills its worker (e.g. out of memory) must not loop.
    retry = optuna.storages.RetryHeartbeatStaleTrialCallback(max_retry=max_retry)
    return optuna.storages.RDBStorage(
        url,
        heartbeat_interval=heartbeat_interval,
        grace_period=grace_period,
        heartbeat_stale_trial_callback=retry if heartbeat_interval else None,
        engine_kwargs={"pool_pre_ping": True} if not url.startswith("sqlite") else None,
    )


def _ensure_parent(path: Path, shown: str) -> None:
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise StorageError(f"cannot create directory {path.parent}: {exc.strerror}", where=shown) from None
    if not os.access(path.parent, os.W_OK):
        raise StorageError(
            f"directory {path.parent} is not writable",
            where=shown,
            fix="choose a writable location",
        )


def default_artifact_dir(url: str) -> Path:
    """Artifacts live beside a SQLite or journal file, else under ``studies/artifacts``."""
    for prefix in ("sqlite:///", "journal://"):
        if url.startswith(prefix):
            return Path(url.removeprefix(prefix)).parent / "artifacts"
    return DEFAULT_DIR / "artifacts"
