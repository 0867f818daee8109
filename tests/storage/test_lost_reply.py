"""A write whose reply never arrived is retried, and the retry must not apply it twice.

The run reaches the real server through a TCP proxy (``services.TcpProxy``) that lets the server
run one write and then drops the connection before its reply: the client cannot tell whether
the write happened. A duplicated trial here is a trial that stays RUNNING forever in a study
(seen once in CI under Redis connection cuts).
"""

from __future__ import annotations

from urllib.parse import urlsplit

import optuna
import pytest
from services import TcpProxy, drop_postgres_study, drop_redis_prefix, postgres_url, redis_url, tag

from convtune.storage import open_storage


def _through_proxy(backend: str, name: str) -> tuple[TcpProxy, str, str, bytes]:
    """The proxy, the URL through it, the direct URL, and the request that creates a trial."""
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


@pytest.mark.parametrize("backend", ["redis", "postgresql"])
def test_a_new_trial_whose_reply_was_lost_is_created_once(backend: str) -> None:
    name = tag("lost-reply")
    proxy, url, direct, marker = _through_proxy(backend, name)
    try:
        storage = open_storage(url, heartbeat_interval=None)
        study = optuna.create_study(study_name=name, storage=storage)
        proxy.lose_reply_after(marker)
        # The storage call itself: ask() reads first, and a lost reply to a read proves nothing.
        trial_id = storage.create_new_trial(study._study_id)
        trial = optuna.Trial(study, trial_id)
        assert proxy.replies_lost == 1, "the fault did not happen: the test proves nothing"
        trials = optuna.load_study(study_name=name, storage=open_storage(direct)).trials
        assert [t.number for t in trials] == [trial.number] == [0], [t.state.name for t in trials]
        study.tell(trial, 1.0)
        assert optuna.load_study(study_name=name, storage=open_storage(direct)).best_value == 1.0
    finally:
        proxy.close()
        if backend == "redis":
            drop_redis_prefix(name)
        else:
            drop_postgres_study(postgres_url(), name)
