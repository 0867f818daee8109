"""A write whose reply never arrived is retried, and the retry must not apply it twice.

The run reaches the real server through a TCP proxy (``services.TcpProxy``) that lets the server
run one write and then drops the connection before its reply: the client cannot tell whether
the write happened, and retries it. A repeated "new trial" was a second trial that stayed
RUNNING for ever (seen in CI under Redis connection cuts); a repeated "new study" was an error
saying the study already exists (and a repeated "delete", that it does not); a repeated "take this queued trial" said another worker had
taken it, leaving it RUNNING with none; a repeated "finish" must not fail the trial.
"""

from __future__ import annotations

from collections.abc import Callable
from urllib.parse import urlsplit

import optuna
import pytest
from optuna.storages import BaseStorage
from optuna.study import StudyDirection
from optuna.trial import TrialState
from services import TcpProxy, drop_postgres_study, drop_redis_prefix, postgres_url, redis_url, tag

from convtune.storage import open_storage


def _through_proxy(backend: str, name: str) -> tuple[TcpProxy, str, str, bytes]:
    """The proxy, the URL through it, the direct URL, and what a write request contains."""
    if backend == "redis":
        direct = redis_url(prefix=name)
        base = urlsplit(direct)
        proxy = TcpProxy((base.hostname or "127.0.0.1", base.port or 6379))
        # Optuna's Redis journal appends each log with one EVAL of a Lua script.
        return proxy, f"redis://127.0.0.1:{proxy.port}{base.path}?prefix={name}", direct, b"EVAL"
    direct = postgres_url()
    base = urlsplit(direct)
    proxy = TcpProxy((base.hostname or "127.0.0.1", base.port or 5432))
    return proxy, f"postgresql://{base.username}@127.0.0.1:{proxy.port}{base.path}", direct, b"COMMIT"


def _new_study(storage: BaseStorage, name: str, arm: Callable[[], None]) -> None:
    arm()
    storage.create_new_study([StudyDirection.MINIMIZE], name)


def _new_trial(storage: BaseStorage, name: str, arm: Callable[[], None]) -> None:
    study_id = storage.create_new_study([StudyDirection.MINIMIZE], name)
    arm()
    storage.create_new_trial(study_id)


def _delete_study(storage: BaseStorage, name: str, arm: Callable[[], None]) -> None:
    study_id = storage.create_new_study([StudyDirection.MINIMIZE], name)
    storage.create_new_trial(study_id)
    arm()
    storage.delete_study(study_id)


def _take_trial(storage: BaseStorage, name: str, arm: Callable[[], None]) -> None:
    study = optuna.create_study(study_name=name, storage=storage)
    study.enqueue_trial({"x": 1.0})  # a queued trial: a retry, a confirm run, an enqueued config
    (queued,) = study.get_trials(deepcopy=False)
    arm()
    assert storage.set_trial_state_values(queued._trial_id, TrialState.RUNNING), "another took it?"


def _finish_trial(storage: BaseStorage, name: str, arm: Callable[[], None]) -> None:
    trial_id = storage.create_new_trial(storage.create_new_study([StudyDirection.MINIMIZE], name))
    arm()
    assert storage.set_trial_state_values(trial_id, TrialState.COMPLETE, [1.0])


@pytest.mark.parametrize("backend", ["redis", "postgresql"])
@pytest.mark.parametrize(
    "write",
    [_new_study, _delete_study, _new_trial, _take_trial, _finish_trial],
    ids=["study", "delete", "trial", "take", "finish"],
)
def test_a_write_whose_reply_was_lost_is_applied_once(backend: str, write: Callable[..., None]) -> None:
    name = tag("lost-reply")
    proxy, url, direct, marker = _through_proxy(backend, name)
    try:
        # Each call on the storage itself: a study's ask() reads first, and a lost reply to a
        # read proves nothing.
        write(open_storage(url, heartbeat_interval=None), name, lambda: proxy.lose_reply_after(marker))
        assert proxy.replies_lost == 1, "the fault did not happen: the test proves nothing"
        stored = open_storage(direct, heartbeat_interval=None)
        names = [s.study_name for s in stored.get_all_studies()]
        if write is _delete_study:
            assert name not in names
            return
        assert names.count(name) == 1
        trials = optuna.load_study(study_name=name, storage=stored).trials
        expected = {
            _new_study: [],
            _new_trial: [TrialState.RUNNING],
            _take_trial: [TrialState.RUNNING],
            _finish_trial: [TrialState.COMPLETE],
        }
        assert [t.state for t in trials] == expected[write], [t.state.name for t in trials]
    finally:
        proxy.close()
        if backend == "redis":
            drop_redis_prefix(name)
        else:
            drop_postgres_study(postgres_url(), name)
