"""Storage URLs (``convtune.storage``): which URL is used, passwords never shown, and the embedded
storages (SQLite, journal file) opening and holding a study."""

from __future__ import annotations

from pathlib import Path

import optuna
import pytest

from convtune.errors import StorageError
from convtune.storage.backends import (
    ENV_VAR,
    default_artifact_dir,
    default_storage_url,
    is_journal,
    is_sqlite,
    journal_path,
    open_storage,
    redact,
    resolve_storage_url,
)


def test_the_flag_beats_the_environment_which_beats_the_default(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(ENV_VAR, raising=False)
    assert resolve_storage_url(None) == default_storage_url() == "sqlite:///studies/convtune.db"
    monkeypatch.setenv(ENV_VAR, "journal:///tmp/env.log")
    assert resolve_storage_url(None) == "journal:///tmp/env.log"
    assert resolve_storage_url("sqlite:///flag.db") == "sqlite:///flag.db"


@pytest.mark.parametrize(
    ("url", "shown"),
    [
        ("postgresql://tuner:s3cret@db.example:5432/test", "postgresql://tuner:***@db.example:5432/test"),
        ("postgresql+psycopg://u:p%40ss@host/db", "postgresql+psycopg://u:***@host/db"),
        ("redis://:s3cret@127.0.0.1:6379/0", "redis://:***@127.0.0.1:6379/0"),
        ("rediss://user:s3cret@cache:6380/2?prefix=a", "rediss://user:***@cache:6380/2?prefix=a"),
        ("postgresql://tuner@db/test", "postgresql://tuner@db/test"),
        ("sqlite:///studies/convtune.db", "sqlite:///studies/convtune.db"),
        ("journal:///tmp/j.log", "journal:///tmp/j.log"),
    ],
)
def test_redact_hides_only_the_password_and_is_stable(url: str, shown: str) -> None:
    assert redact(url) == shown
    assert redact(shown) == shown  # redacting twice changes nothing
    assert "s3cret" not in redact(url)


def test_kinds_and_paths_read_from_the_url() -> None:
    assert is_sqlite("sqlite:///a.db") and not is_sqlite("postgresql://h/db")
    assert is_journal("journal:///a.log") and is_journal("redis://h:6379/0") and is_journal("rediss://h/0")
    assert not is_journal("sqlite:///a.db")
    assert journal_path("journal:////tmp/x/j.log") == Path("/tmp/x/j.log")  # extra slashes collapse
    assert journal_path("journal://rel/j.log") == Path("rel/j.log")
    assert default_artifact_dir("journal:///tmp/x/j.log") == Path("/tmp/x/artifacts")
    assert default_artifact_dir("sqlite:///run/s.db") == Path("run/artifacts")  # SQLAlchemy: relative
    assert default_artifact_dir("sqlite:////tmp/y/s.db") == Path("/tmp/y/artifacts")
    assert default_artifact_dir("postgresql://h/db") == Path("studies/artifacts")


@pytest.mark.parametrize("kind", ["sqlite", "journal"])
def test_embedded_storages_open_in_a_new_directory_and_hold_a_study(tmp_path: Path, kind: str) -> None:
    url = f"sqlite:///{tmp_path}/new/s.db" if kind == "sqlite" else f"journal:///{tmp_path}/new/j.log"
    storage = open_storage(url, heartbeat_interval=None, create=True)
    optuna.create_study(study_name="s", storage=storage).optimize(
        lambda t: t.suggest_float("x", 0, 1), n_trials=2
    )
    again = open_storage(url, heartbeat_interval=None)  # a second process's view of the same file
    assert len(optuna.load_study(study_name="s", storage=again).trials) == 2
    assert (tmp_path / "new").is_dir()


def test_an_unknown_scheme_is_a_storage_error_without_the_password() -> None:
    with pytest.raises(StorageError) as info:
        open_storage("mysql2://root:s3cret@nowhere/db")
    message = str(info.value)
    assert "s3cret" not in message and "***" in message and "cannot open storage" in message
