"""Storage URLs to Optuna storages, and the artifact store beside them.

``sqlite:///…`` and ``postgresql://…`` (any SQLAlchemy URL) open Optuna's RDB storage with
heartbeats, so a trial whose worker died is failed and retried a bounded number of times;
``journal:///path`` and ``redis://host:port/db`` open Optuna's JournalStorage. The default is an
embedded SQLite file under ``studies/``: nothing to start, one writer at a time.
"""

from __future__ import annotations

import contextlib
import copy
import functools
import json
import logging
import os
import re
import threading
import time
import uuid
import warnings
from collections.abc import Callable, Iterator, Sequence
from datetime import datetime
from pathlib import Path
from typing import Any, TypeVar

import optuna
from optuna.storages import BaseStorage
from optuna.storages.journal import JournalRedisBackend
from optuna.trial import FrozenTrial, TrialState

from convtune.errors import StorageError

_logger = logging.getLogger(__name__)

DEFAULT_DIR = Path("studies")
DEFAULT_FILE = "convtune.db"
ENV_VAR = "CONVTUNE_STORAGE"
HEARTBEAT_INTERVAL = 10
GRACE_PERIOD = 30
MAX_RETRY = 2
# Tests (and impatient users) shorten both: a dead worker's trial is failed after the grace period.
HEARTBEAT_ENV = "CONVTUNE_HEARTBEAT_INTERVAL"
GRACE_ENV = "CONVTUNE_GRACE_PERIOD"
# A lost database connection is retried with backoff (0.5 s, 1 s, 2 s, … capped at 8 s) for this long.
RECONNECT_ENV = "CONVTUNE_RECONNECT_SECONDS"
RECONNECT_SECONDS = 60.0
# The system attribute that tags a trial with the token of the call that made it RUNNING (created
# it, or took it from the queue; see ResilientRDBStorage): a retried call finds its own work by it.
CLAIM_TOKEN_KEY = "convtune:claim_token"


def _env_seconds(name: str, default: int) -> int:
    raw = os.environ.get(name)
    if not raw:
        return default
    try:
        value = int(raw)
    except ValueError:
        raise StorageError(f"{raw!r} is not a whole number of seconds", where=f"${name}") from None
    if value <= 0:
        raise StorageError(f"{value} must be positive", where=f"${name}")
    return value


def heartbeat_settings() -> tuple[int, int]:
    """Heartbeat interval and grace period in seconds ($CONVTUNE_HEARTBEAT_INTERVAL/_GRACE_PERIOD)."""
    interval = _env_seconds(HEARTBEAT_ENV, HEARTBEAT_INTERVAL)
    grace = _env_seconds(
        GRACE_ENV, max(GRACE_PERIOD, 3 * interval) if HEARTBEAT_ENV in os.environ else GRACE_PERIOD
    )
    if grace <= interval:
        raise StorageError(
            f"grace period {grace} s must exceed the heartbeat interval {interval} s",
            where=f"${GRACE_ENV}",
            fix="make it at least twice the interval",
        )
    return interval, grace


def is_sqlite(url: str) -> bool:
    return url.startswith("sqlite:")


def is_journal(url: str) -> bool:
    """Journal storages (file, Redis) have no heartbeats in Optuna 5: convtune leases their trials."""
    return url.startswith(("journal://", "redis://", "rediss://"))


def default_storage_url(directory: Path | None = None) -> str:
    directory = directory or DEFAULT_DIR
    return f"sqlite:///{directory / DEFAULT_FILE}"


def resolve_storage_url(url: str | None) -> str:
    """The URL to use: the flag's, else ``$CONVTUNE_STORAGE``, else the embedded SQLite default.

    A URL given without its password (as a study remembers it, and as convtune prints it) takes
    the password of ``$CONVTUNE_STORAGE`` when that names the same storage; otherwise the driver
    looks for one (``PGPASSWORD``, ``~/.pgpass``).
    """
    env = os.environ.get(ENV_VAR)
    if not url:
        return env or default_storage_url()
    if env and env != url and strip_password(env) == url:
        return env
    return url


# Query parameters that carry a credential (libpq's ``password``/``sslpassword``, tokens).
_SECRET_PARAMS = re.compile(
    r"([?&;](?:ssl)?(?:password|passwd|pwd|token|secret|auth|access_token)=)[^&;#\s]*", re.IGNORECASE
)
_SCHEME = re.compile(r"[A-Za-z][A-Za-z0-9+.\-]*://")


def _userinfo_span(url: str) -> tuple[int, int] | None:
    """Where the password of ``scheme://user:password@host…`` lies in ``url``, if it has one.

    The password runs from the first ``:`` after the user name to the *last* ``@`` of the URL,
    so a password holding ``/``, ``@``, ``:`` or ``?`` (base64 and generated passwords do) is
    masked whole rather than cut at its first special character.
    """
    match = _SCHEME.match(url)
    if match is None:
        return None
    rest_start = match.end()
    at = url.rfind("@", rest_start)
    if at < 0:
        return None
    colon = url.find(":", rest_start, at)
    if colon < 0 or "/" in url[rest_start:colon]:
        return None  # no password, or the ":" lies in a path (sqlite:///a:b@c.db)
    return colon + 1, at


def redact(url: str) -> str:
    """The URL with any password replaced by ``***``: safe for logs, errors, tables and storage.

    >>> redact("postgresql://bob:a/b@c@db:5432/x?sslpassword=k")
    'postgresql://bob:***@db:5432/x?sslpassword=***'
    """
    span = _userinfo_span(url)
    if span is not None:
        url = url[: span[0]] + "***" + url[span[1] :]
    return _SECRET_PARAMS.sub(r"\1***", url)


def strip_password(url: str) -> str:
    """The URL without its password (``user@host``): what a study remembers, and what to type.

    The password then comes from ``$CONVTUNE_STORAGE`` (same URL with it), ``PGPASSWORD`` or
    ``~/.pgpass`` (:func:`resolve_storage_url`).
    """
    span = _userinfo_span(url)
    if span is not None:
        url = url[: span[0] - 1] + url[span[1] :]
    url = _SECRET_PARAMS.sub(lambda m: "?" if m.group(1)[0] == "?" else "", url)
    return url.replace("?&", "?").replace("?;", "?").rstrip("?")


def url_secrets(url: str) -> list[str]:
    """Every credential in ``url``, as written and %-decoded: what must never appear in output."""
    from urllib.parse import unquote

    found: list[str] = []
    span = _userinfo_span(url)
    if span is not None:
        found.append(url[span[0] : span[1]])
    found += [m.group(0).split("=", 1)[1] for m in _SECRET_PARAMS.finditer(url)]
    decoded = [unquote(s) for s in found] + [unquote(s.replace("+", " ")) for s in found]
    return [s for s in dict.fromkeys(found + decoded) if s]


def scrub(text: str, url: str | None) -> str:
    """``text`` with every URL in it redacted and every credential of ``url`` masked.

    For error messages from drivers, which may quote the URL or its decoded password anywhere.
    """
    text = re.sub(r"[A-Za-z][A-Za-z0-9+.\-]*://\S+", lambda m: redact(m.group(0)), text)
    for secret in sorted(url_secrets(url or ""), key=len, reverse=True):
        if len(secret) >= 4:  # masking "x" everywhere would garble the message, not protect it
            text = text.replace(secret, "***")
    return text


_DEFAULT: Any = object()


def open_storage(
    url: str | None = None,
    *,
    heartbeat_interval: int | None = _DEFAULT,
    grace_period: int | None = _DEFAULT,
    max_retry: int = MAX_RETRY,
    create: bool = False,
) -> BaseStorage:
    """Open the storage behind ``url``; a :class:`StorageError` says what is wrong and how to fix it.

    Heartbeat interval and grace period default to 10 s and 30 s, or ``$CONVTUNE_HEARTBEAT_INTERVAL``
    and ``$CONVTUNE_GRACE_PERIOD``; ``heartbeat_interval=None`` turns heartbeats off. Only
    ``create=True`` (``study create``) may make a new SQLite or journal file: every other command
    reads a study that must already exist, and a typo in its path must not leave an empty database.
    """
    url = resolve_storage_url(url)
    shown = redact(url)
    if url == os.environ.get(ENV_VAR):
        shown = f"${ENV_VAR}={shown}"
    if url.startswith("sqlite:") and (":memory:" in url or url.rstrip("/") in ("sqlite:", "sqlite:/")):
        raise StorageError(
            "an in-memory SQLite database keeps nothing once the command ends",
            where=shown,
            fix="use a file: sqlite:///studies/convtune.db",
        )
    local = journal_path(url) if url.startswith("journal://") else None
    if url.startswith("sqlite:///"):
        local = Path(url.removeprefix("sqlite:///"))
    if local is not None and not create and not local.is_file():
        raise StorageError(
            f"no storage file {local}",
            where=shown,
            fix="create a study first (`convtune study create`), or check --storage / $CONVTUNE_STORAGE",
        )
    if heartbeat_interval is _DEFAULT or grace_period is _DEFAULT:
        env_interval, env_grace = heartbeat_settings()
        heartbeat_interval = env_interval if heartbeat_interval is _DEFAULT else heartbeat_interval
        grace_period = env_grace if grace_period is _DEFAULT else grace_period
    try:
        if url.startswith("journal://"):
            from optuna.storages.journal import JournalFileBackend, JournalStorage

            path = journal_path(url)
            _ensure_parent(path, shown)
            return JournalStorage(JournalFileBackend(str(path), lock_obj=flock_journal_lock(str(path))))
        if url.startswith("redis://") or url.startswith("rediss://"):
            from optuna.storages.journal import JournalStorage

            # ``?prefix=NAME`` keeps separate journals apart in one Redis database.
            url, prefix = _split_prefix(url)
            return JournalStorage(ResilientRedisBackend(url, prefix=prefix))
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
        if url.startswith("sqlite"):
            fix = "check that its directory is writable and its disk has space"
        elif "database" in message and "does not exist" in message:
            fix = "create the database first (e.g. createdb NAME), or check the URL's database name"
        elif "parse" in message or "load plugin" in message:
            fix = "use sqlite:///path.db, postgresql://user@host/db, journal:///path.log or redis://host:port/db"
        else:
            fix = "check the URL, that the server is running, and your credentials"
        raise StorageError(f"cannot open storage: {redact(message)}", where=shown, fix=fix) from None


def _rdb_storage(
    url: str, heartbeat_interval: int | None, grace_period: int | None, max_retry: int
) -> BaseStorage:
    # Bounded retries: a trial that always kills its worker (e.g. out of memory) must not loop.
    retry = optuna.storages.RetryHeartbeatStaleTrialCallback(max_retry=max_retry)
    cls = optuna.storages.RDBStorage if url.startswith("sqlite") else ResilientRDBStorage
    delays = _reconnect_delays()
    while True:
        try:
            return cls(
                url,
                heartbeat_interval=heartbeat_interval,
                grace_period=grace_period,
                heartbeat_stale_trial_callback=retry if heartbeat_interval else None,
                engine_kwargs={"pool_pre_ping": True} if not url.startswith("sqlite") else None,
            )
        except Exception as exc:
            # Opening commits too (schema and version checks): a connection lost right then is
            # retried like any other operation; a refused connection still fails at once.
            if url.startswith("sqlite") or not _transient(exc) or _permanent(exc):
                raise
            delay = next(delays, None)
            if delay is None:
                raise
            time.sleep(delay)


# Server answers that waiting will not change: no server, no such database or role, a wrong password.
_PERMANENT = (
    "refused",
    "does not exist",
    "authentication failed",
    "no password supplied",
    "could not translate host",
)


def _permanent(exc: BaseException) -> bool:
    text = str(exc)
    return any(reason in text for reason in _PERMANENT)


_T = TypeVar("_T")


def _reconnect_budget() -> float:
    return float(os.environ.get(RECONNECT_ENV) or RECONNECT_SECONDS)


def _reconnect_delays() -> Iterator[float]:
    """Waits before each retry of a lost connection: 0.5 s doubling to 8 s, within the budget."""
    deadline, delay = time.monotonic() + _reconnect_budget(), 0.5
    while time.monotonic() + delay <= deadline:
        yield delay
        delay = min(8.0, delay * 2)


def _transient(exc: BaseException) -> bool:
    """A lost or refused database connection (worth retrying), not a bad query or a conflict."""
    import sqlalchemy.exc

    seen: BaseException | None = exc  # Optuna wraps SQLAlchemy's errors in StorageInternalError
    while seen is not None:
        if isinstance(seen, sqlalchemy.exc.DBAPIError) and seen.connection_invalidated:
            return True
        if isinstance(seen, (sqlalchemy.exc.OperationalError, sqlalchemy.exc.InterfaceError)):
            return True
        seen = seen.__cause__ or seen.__context__
    return False


class _Outage:
    """When the current loss of the database began (monotonic seconds), shared by every operation
    and thread of this process: one outage spends one reconnect budget, so a run whose server
    stays down ends within the budget, not one budget per operation that meets the outage (a
    trial's write, its failure record, the heartbeat)."""

    since: float | None = None


def _lost_connection_cause(exc: BaseException) -> str:
    """The driver's own words for why the connection failed (e.g. "Connection refused"), not the
    ORM's wrapping ("An exception is raised during the commit ...")."""
    seen: BaseException | None = exc
    while seen is not None:
        orig = getattr(seen, "orig", None)
        if isinstance(orig, BaseException) and str(orig).strip():
            return str(orig).strip().splitlines()[0]
        seen = seen.__cause__ or seen.__context__
    return str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__


_NOT_DONE = object()


def _state_set_already(self: Any, trial_id: int, state: TrialState, *_: Any, **__: Any) -> object:
    return True if self.get_trial(trial_id).state == state else _NOT_DONE


def _study_created_already(self: Any, directions: Any, study_name: str | None = None) -> object:
    return _NOT_DONE if study_name is None else self.get_study_id_from_name(study_name)


def _study_deleted_already(self: Any, study_id: int) -> object:
    return None


# A retried write whose first attempt committed before the connection broke fails as if someone
# else had done it: per operation, that error, and what the first attempt returned (or _NOT_DONE
# where it cannot have been ours). New trials and taking a queued trial carry a token instead
# (ResilientRDBStorage).
_DONE_BY_FIRST_ATTEMPT: dict[str, tuple[type[Exception], Callable[..., object]]] = {
    "set_trial_state_values": (optuna.exceptions.UpdateFinishedTrialError, _state_set_already),
    "create_new_study": (optuna.exceptions.DuplicatedStudyError, _study_created_already),
    "delete_study": (KeyError, _study_deleted_already),
}


def _with_reconnect(name: str, method: Callable[..., _T]) -> Callable[..., _T]:
    @functools.wraps(method)
    def wrapper(self: Any, *args: Any, **kwargs: Any) -> _T:
        attempt, delay = 0, 0.5
        while True:
            try:
                result = method(self, *args, **kwargs)
                _Outage.since = None
                return result
            except Exception as exc:
                done = _DONE_BY_FIRST_ATTEMPT.get(name)
                if attempt and done is not None and isinstance(exc, done[0]):
                    result = done[1](self, *args, **kwargs)
                    if result is _NOT_DONE:
                        raise
                    return result  # type: ignore[no-any-return]
                if not _transient(exc):
                    raise
                now = time.monotonic()
                if _Outage.since is None:
                    _Outage.since = now
                if now + delay > _Outage.since + _reconnect_budget():
                    raise StorageError(
                        f"lost the database connection and could not reconnect within {_reconnect_budget():g} s: "
                        f"{redact(_lost_connection_cause(exc))}",
                        where=redact(str(self.url)),
                        fix="check that the server is up; the study resumes with the same command",
                    ) from None
                # Not a warning on the terminal: the outcome (reconnected, or the one-line error
                # with its cause) is what the user needs; the log keeps each retry.
                _logger.info("storage %s: connection lost, retrying in %g s", name, delay)
                time.sleep(delay)
                attempt += 1
                delay = min(8.0, delay * 2)

    return wrapper


class ResilientRDBStorage(optuna.storages.RDBStorage):
    """Optuna's RDB storage whose operations survive a lost connection.

    Each operation runs in its own transaction, so a retried one is either wholly written or not
    at all (never a half-written trial); a retried state change that had already committed is
    recognised. After ``$CONVTUNE_RECONNECT_SECONDS`` (60 s) of failures it raises a
    :class:`StorageError`.

    Two writes are not safe to repeat when the connection breaks after their commit but before
    the acknowledgement: a new trial (the retry, Optuna's own or ours, added a second one that
    stayed RUNNING for ever) and taking a queued trial (the retry found it RUNNING and reported
    it taken by another worker, leaving it without one). Each writes a token with the trial, and
    a retry that finds its own token knows its first attempt went through.
    """

    _creating = threading.local()

    def _create_new_trial(self, study_id: int, template_trial: FrozenTrial | None = None) -> FrozenTrial:
        self._creating.token, self._creating.tries = uuid.uuid4().hex, 0
        try:
            return _create_with_reconnect(self, study_id, template_trial)
        finally:
            self._creating.token = None

    def _get_prepared_new_trial(self, study_id: int, template_trial: FrozenTrial | None, session: Any) -> Any:
        from optuna.storages._rdb import models

        token = getattr(self._creating, "token", None)
        if token is None:
            return super()._get_prepared_new_trial(study_id, template_trial, session)
        self._creating.tries += 1
        if self._creating.tries > 1:  # a retry: did the first try commit? (the study row is locked)
            attribute = models.TrialSystemAttributeModel
            found = (
                session.query(attribute)
                .join(models.TrialModel)
                .filter(models.TrialModel.study_id == study_id)
                .filter(attribute.key == CLAIM_TOKEN_KEY, attribute.value_json == json.dumps(token))
                .one_or_none()
            )
            if found is not None:
                return found.trial
        if template_trial is not None and CLAIM_TOKEN_KEY in template_trial.system_attrs:
            # A retry of a failed trial copies its attributes, and with them the old token.
            template_trial = copy.copy(template_trial)
            template_trial.system_attrs = {
                k: v for k, v in template_trial.system_attrs.items() if k != CLAIM_TOKEN_KEY
            }
        trial = super()._get_prepared_new_trial(study_id, template_trial, session)
        session.add(attribute_row := models.TrialSystemAttributeModel(trial_id=trial.trial_id))
        attribute_row.key, attribute_row.value_json = CLAIM_TOKEN_KEY, json.dumps(token)
        return trial


for _name in (
    "create_new_study",
    "delete_study",
    "set_study_user_attr",
    "set_study_system_attr",
    "get_study_id_from_name",
    "get_study_name_from_id",
    "get_study_directions",
    "get_study_user_attrs",
    "get_study_system_attrs",
    "get_all_studies",
    "set_trial_param",
    "get_trial_id_from_study_id_trial_number",
    "get_trial_number_from_id",
    "get_trial_param",
    "set_trial_state_values",
    "set_trial_intermediate_value",
    "set_trial_user_attr",
    "set_trial_system_attr",
    "get_trial",
    "get_all_trials",
    "get_n_trials",
    "get_best_trial",
    "record_heartbeat",
    "_get_stale_trial_ids",
    # What Optuna's _CachedStorage (wrapped around every RDB storage in a study) calls instead
    # of the public names above; without these a cut connection during ask() was not retried.
    "_set_trial_param",
    "_get_best_trial_id",
    "_get_trials",
    "get_trial_params",
    "get_trial_user_attrs",
    "get_trial_system_attrs",
):
    if hasattr(optuna.storages.RDBStorage, _name):
        setattr(
            ResilientRDBStorage, _name, _with_reconnect(_name, getattr(optuna.storages.RDBStorage, _name))
        )


_create_with_reconnect = _with_reconnect("_create_new_trial", optuna.storages.RDBStorage._create_new_trial)


def _take_waiting_trial(self: ResilientRDBStorage, trial_id: int, token: str) -> bool:
    """Optuna's WAITING → RUNNING, tagged with ``token``: whether this call took the trial."""
    import sqlalchemy.exc
    from optuna.storages._rdb import models
    from optuna.storages._rdb.storage import _create_scoped_session

    try:
        with _create_scoped_session(self.scoped_session) as session:
            trial = models.TrialModel.find_or_raise_by_id(trial_id, session, for_update=True)
            if trial.state == TrialState.RUNNING:  # taken: by this call's own first attempt?
                attribute = models.TrialSystemAttributeModel.find_by_trial_and_key(
                    trial, CLAIM_TOKEN_KEY, session
                )
                return attribute is not None and attribute.value_json == json.dumps(token)
            self.check_trial_is_updatable(trial_id, trial.state)
            if trial.state != TrialState.WAITING:
                return False
            trial.state, trial.datetime_start = TrialState.RUNNING, datetime.now()
            self._set_trial_attr_without_commit(
                session, models.TrialSystemAttributeModel, trial_id, CLAIM_TOKEN_KEY, token
            )
    except sqlalchemy.exc.IntegrityError:
        return False
    return True


_take_with_reconnect = _with_reconnect("take_waiting_trial", _take_waiting_trial)
_set_state_with_reconnect = ResilientRDBStorage.set_trial_state_values


def _set_trial_state_values(
    self: ResilientRDBStorage, trial_id: int, state: TrialState, values: Sequence[float] | None = None
) -> bool:
    if state == TrialState.RUNNING and values is None:
        return _take_with_reconnect(self, trial_id, uuid.uuid4().hex)
    return _set_state_with_reconnect(self, trial_id, state, values)


ResilientRDBStorage.set_trial_state_values = _set_trial_state_values  # type: ignore[method-assign]

_record_heartbeat_or_raise = ResilientRDBStorage.record_heartbeat


def _record_heartbeat(self: ResilientRDBStorage, trial_id: int) -> None:
    """A heartbeat that cannot be written is skipped, not raised: it runs in Optuna's background
    thread, where an error is a traceback on the terminal and a dead heartbeat; the run's own
    next write meets the same outage and ends the run with it, in one line."""
    try:
        _record_heartbeat_or_raise(self, trial_id)
    except StorageError as exc:
        _logger.info("heartbeat of trial id %s not recorded: %s", trial_id, exc)


ResilientRDBStorage.record_heartbeat = _record_heartbeat  # type: ignore[method-assign]


def _resilient_redis_client(url: str) -> Any:
    import redis
    from redis.backoff import ExponentialBackoff
    from redis.retry import Retry

    # A dropped connection (restart, CLIENT KILL, failover) is retried with backoff, as RDB
    # operations are; redis-py's default gives up after a few quick tries.
    retries = max(1, int(_reconnect_budget() / 8) + 4)
    return redis.Redis.from_url(
        url,
        retry=Retry(ExponentialBackoff(cap=8.0, base=0.5), retries),
        retry_on_error=[redis.exceptions.ConnectionError, redis.exceptions.TimeoutError],
    )


def _refuse_fast(url: str) -> None:
    """Open as RDB storages do: a refused connection (no server there) fails at once.

    Only lost connections are worth the reconnect budget; without this check a mistyped port
    kept the user waiting the whole budget (60 s) for "cannot open storage".
    """
    import redis
    from redis.backoff import NoBackoff
    from redis.retry import Retry

    client = redis.Redis.from_url(url, retry=Retry(NoBackoff(), 0))
    try:
        client.ping()
    except redis.exceptions.ConnectionError as exc:
        if "refused" in str(exc):
            raise
    finally:
        client.close()


# Optuna's append script, made idempotent: a retried EVAL whose first run went through (its reply
# lost with the connection) finds its token and appends nothing. Without it the retry appended the
# log again, and a repeated "create trial" log is a second trial that stays RUNNING for ever.
_APPEND_ONCE = """
if not redis.call('set', string.format('%s:appended:%s', ARGV[1], ARGV[3]), 1, 'NX', 'EX', ARGV[4]) then
  return 0
end
local i = redis.call('incr', string.format('%s:log_number', ARGV[1]))
redis.call('set', string.format('%s:log:%d', ARGV[1], i), ARGV[2])
return 1
"""


class ResilientRedisBackend(JournalRedisBackend):
    """Optuna's Redis journal backend whose client reconnects with backoff, and whose retried
    appends are applied once."""

    def __init__(self, url: str, use_cluster: bool = False, prefix: str = "") -> None:
        _refuse_fast(url)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", optuna.exceptions.ExperimentalWarning)
            super().__init__(url, use_cluster=use_cluster, prefix=prefix)
        self._redis = _resilient_redis_client(url)

    def __setstate__(self, state: dict[Any, Any]) -> None:
        super().__setstate__(state)
        self._redis = _resilient_redis_client(self._url)

    def append_logs(self, logs: list[dict[str, Any]]) -> None:
        if self._use_cluster:  # a Lua script's keys must share a cluster slot; Optuna's own path
            super().append_logs(logs)
            return
        # A token outlives every retry of its append (they end within the reconnect budget).
        expiry = int(_reconnect_budget()) + 3600
        self._redis.setnx(f"{self._prefix}:log_number", -1)
        for log in logs:
            self._redis.eval(_APPEND_ONCE, 0, self._prefix, json.dumps(log), uuid.uuid4().hex, expiry)


def flock_journal_lock(path: str) -> Any:
    """A journal file lock the kernel releases when its holder dies.

    Optuna's default (a symlink lock file) outlives a worker killed while holding it, and every
    other worker then waits 30 s for its forced release, long enough for their own leases to lapse.
    ``flock`` on ``PATH.flock`` has no such state (local disks; NFS emulates it with fcntl locks).

    One descriptor serves every thread of a process (Optuna's ``JournalStorage`` lets one thread at
    a time write), and locking it again is a no-op. A Ctrl-C raised between ``flock`` returning and
    Optuna's ``try`` (or on entering ``release``) leaves the lock held; with a descriptor per acquire
    the next write (marking the trial interrupted, or a lease renewal that then holds Optuna's
    thread lock) would wait forever on a lock its own process holds. With one descriptor that next
    write takes the lock it already has and releases it.
    """
    import fcntl

    from optuna.storages.journal._file import BaseJournalFileLock

    class FlockLock(BaseJournalFileLock):
        def __init__(self) -> None:
            self._fd: int | None = None
            self._pid = 0

        def _descriptor(self) -> int:
            if self._fd is None or self._pid != os.getpid():
                # A forked child opens its own: it must not share a lock its parent may hold.
                self._fd, self._pid = os.open(path + ".flock", os.O_RDWR | os.O_CREAT, 0o644), os.getpid()
            return self._fd

        def acquire(self) -> bool:
            fcntl.flock(self._descriptor(), fcntl.LOCK_EX)
            return True

        def release(self) -> None:
            fcntl.flock(self._descriptor(), fcntl.LOCK_UN)

        def __del__(self) -> None:
            if self._fd is not None and self._pid == os.getpid():
                with contextlib.suppress(OSError):
                    os.close(self._fd)

    return FlockLock()


def _split_prefix(url: str) -> tuple[str, str]:
    from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

    parts = urlsplit(url)
    query = parse_qsl(parts.query, keep_blank_values=True)
    prefix = next((v for k, v in query if k == "prefix"), "")
    rest = urlencode([(k, v) for k, v in query if k != "prefix"])
    return urlunsplit(parts._replace(query=rest)), prefix


def _ensure_parent(path: Path, shown: str) -> None:
    # One missing level is made (studies/ beside a project); a deeper miss is likely a typo.
    if not path.parent.parent.is_dir():
        raise StorageError(
            f"directory {path.parent.parent} does not exist", where=shown, fix="check the path, or create it"
        )
    try:
        path.parent.mkdir(exist_ok=True)
    except OSError as exc:
        raise StorageError(f"cannot create directory {path.parent}: {exc.strerror}", where=shown) from None
    if not os.access(path.parent, os.W_OK):
        raise StorageError(
            f"directory {path.parent} is not writable",
            where=shown,
            fix="choose a writable location",
        )


def journal_path(url: str) -> Path:
    """The file behind ``journal:///path/file.log``.

    Extra leading slashes are collapsed: POSIX keeps ``//tmp`` distinct from ``/tmp``, which
    would put the artifact store outside its own base path as Optuna checks it.
    """
    path = url.removeprefix("journal://")
    return Path("/" + path.lstrip("/")) if path.startswith("/") else Path(path)


def default_artifact_dir(url: str) -> Path:
    """Artifacts live beside a SQLite or journal file, else under ``studies/artifacts``."""
    if url.startswith("journal://"):
        return journal_path(url).parent / "artifacts"
    if url.startswith("sqlite:///"):
        return Path(url.removeprefix("sqlite:///")).parent / "artifacts"
    return DEFAULT_DIR / "artifacts"
