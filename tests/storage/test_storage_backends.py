"""Storage URLs (``convtune.storage``): which URL is used, passwords never shown, and the embedded
storages (SQLite, journal file) opening and holding a study."""

from __future__ import annotations

import subprocess
import sys
import textwrap
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


def test_a_journal_lock_left_held_by_an_interrupt_does_not_hang_the_next_write(tmp_path: Path) -> None:
    # A Ctrl-C raised just after ``flock`` returns, before Optuna's ``try``, never releases the
    # journal lock. Then the lease thread renews and the interrupted trial is marked: neither write
    # may wait on a lock its own process holds (it hung CI once), and afterwards others may write.
    # The acquire below, with no release, is what that interrupt leaves: its timing cannot be hit
    # on purpose.
    url = f"journal:///{tmp_path}/j.log"
    optuna.create_study(study_name="s", storage=open_storage(url, heartbeat_interval=None, create=True))
    script = textwrap.dedent(
        f"""
        import threading
        import optuna
        from convtune.storage.backends import open_storage
        storage = open_storage({url!r}, heartbeat_interval=None)
        study = optuna.load_study(study_name="s", storage=storage)
        trial = study.ask()
        storage._backend._lock.acquire()  # held, as the interrupt leaves it
        lease = threading.Thread(target=storage.set_trial_user_attr, args=(trial._trial_id, "lease", 1.0))
        lease.start()
        lease.join(20)
        assert not lease.is_alive(), "the lease renewal waits on its own process's lock"
        study.tell(trial, 1.0)  # marking the trial: the same thread writes again
        print("told")
        """
    )
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=30)
    assert done.returncode == 0 and "told" in done.stdout, done.stderr[-2000:]
    # The lock is free again for another process.
    study = optuna.load_study(study_name="s", storage=open_storage(url, heartbeat_interval=None))
    study.optimize(lambda t: 2.0, n_trials=1)
    assert [t.value for t in study.trials] == [1.0, 2.0]
    assert study.trials[0].user_attrs == {"lease": 1.0}


def test_an_unknown_scheme_is_a_storage_error_without_the_password() -> None:
    with pytest.raises(StorageError) as info:
        open_storage("mysql2://root:s3cret@nowhere/db")
    message = str(info.value)
    assert "s3cret" not in message and "***" in message and "cannot open storage" in message
