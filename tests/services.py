"""PostgreSQL and Redis for tests: their URLs, a skip (or a CI failure) when unreachable, and cuts.

``CONVTUNE_TEST_POSTGRES`` / ``CONVTUNE_TEST_REDIS`` name the services (defaults: the local ones).
Where they are unreachable the tests skip with the reason, except under
``CONVTUNE_REQUIRE_SERVICES=1`` (set by ``.ci/run``), where they fail. Each test tags its own
connections (``application_name`` / ``client_name``) so cutting them never touches anyone else's.
"""

from __future__ import annotations

import contextlib
import os
import socket
import textwrap
import threading
import time
import uuid
from collections.abc import Callable
from pathlib import Path

import pytest

POSTGRES_DEFAULT = "postgresql://postgres@127.0.0.1:5432/test"
REDIS_DEFAULT = "redis://127.0.0.1:6379/0"


def _unreachable(what: str, url: str, exc: BaseException, env: str) -> None:
    if os.environ.get("CONVTUNE_REQUIRE_SERVICES"):
        pytest.fail(f"{what} required (CONVTUNE_REQUIRE_SERVICES=1) but unreachable at {url}: {exc}")
    cause = (str(exc).splitlines() or [""])[0]  # psycopg adds a hint line; one line in the report
    pytest.skip(f"no {what} at {url} ({type(exc).__name__}: {cause}); set {env} to run this test")


_UNREACHABLE: dict[str, BaseException] = {}  # URLs that failed every try: later tests skip at once


def _check(what: str, url: str, env: str, connect: Callable[[], object]) -> None:
    # Three tries: a service that is there can miss one 5 s connect while the two cores are
    # saturated by other tests' training (seen once as a skip, which CI turns into a failure).
    if url in _UNREACHABLE:
        _unreachable(what, url, _UNREACHABLE[url], env)
    for attempt in range(3):
        try:
            connect()
            return
        except Exception as exc:  # noqa: BLE001
            if attempt == 2:
                _UNREACHABLE[url] = exc
                _unreachable(what, url, exc, env)
            time.sleep(1.0)


TAG_ENV = "CONVTUNE_TEST_TAG"  # set in a launched run's environment; its processes inherit it


def tag(prefix: str = "convtune-test") -> str:
    return f"{prefix}-{uuid.uuid4().hex[:8]}"


def tagged_processes(tag: str) -> list[int]:
    """Live processes (not zombies) other than this one whose environment carries ``tag``."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit() or int(entry.name) == os.getpid():
            continue
        try:
            environ = (entry / "environ").read_bytes()
            state = (entry / "stat").read_text().rsplit(")", 1)[1].split()[0]  # comm may hold spaces
        except (OSError, IndexError):
            continue
        if f"{TAG_ENV}={tag}".encode() in environ and state != "Z":
            found.append(int(entry.name))
    return found


def process_roles(tag: str, supervisor: int) -> dict[str, list[int]]:
    """A run's live processes other than its supervisor (``study run``): workers, torchrun agents, ranks."""
    roles: dict[str, list[int]] = {"worker": [], "torchrun": [], "rank": []}
    for pid in tagged_processes(tag):
        try:
            cmdline = Path(f"/proc/{pid}/cmdline").read_bytes()
        except OSError:
            continue
        if pid == supervisor:
            continue
        if b"spawn_main" in cmdline:
            roles["worker"].append(pid)
        elif b"torch.distributed.run" in cmdline:
            roles["torchrun"].append(pid)
        elif b"convtune.execution._rank" in cmdline:
            roles["rank"].append(pid)
    return roles


def _with_query(url: str, key: str, value: str) -> str:
    return f"{url}{'&' if '?' in url else '?'}{key}={value}"


def postgres_url(app_name: str | None = None) -> str:
    """The test PostgreSQL URL (tagged with ``application_name``), or skip/fail."""
    base = os.environ.get("CONVTUNE_TEST_POSTGRES", POSTGRES_DEFAULT)

    def connect() -> None:
        import psycopg

        psycopg.connect(base, connect_timeout=5).close()

    _check("PostgreSQL", base, "CONVTUNE_TEST_POSTGRES", connect)
    return _with_query(base, "application_name", app_name) if app_name else base


def redis_url(client_name: str | None = None, prefix: str | None = None) -> str:
    """The test Redis URL (tagged with ``client_name``, its journal under ``prefix``), or skip/fail."""
    base = os.environ.get("CONVTUNE_TEST_REDIS", REDIS_DEFAULT)

    def connect() -> None:
        import redis

        redis.Redis.from_url(base, socket_connect_timeout=5).ping()

    _check("Redis", base, "CONVTUNE_TEST_REDIS", connect)
    url = _with_query(base, "client_name", client_name) if client_name else base
    return _with_query(url, "prefix", prefix) if prefix else url


def cut_postgres(app_name: str) -> int:
    """Terminate every server connection tagged ``app_name``; how many."""
    import psycopg

    base = os.environ.get("CONVTUNE_TEST_POSTGRES", POSTGRES_DEFAULT)
    with psycopg.connect(base, autocommit=True) as conn:
        rows = conn.execute(
            "SELECT pg_terminate_backend(pid) FROM pg_stat_activity "
            "WHERE datname = current_database() AND pid <> pg_backend_pid() AND application_name = %s",
            (app_name,),
        ).fetchall()
    return len(rows)


def cut_redis(client_name: str) -> int:
    """``CLIENT KILL`` every connection named ``client_name``; how many."""
    import redis

    base = os.environ.get("CONVTUNE_TEST_REDIS", REDIS_DEFAULT)
    r = redis.Redis.from_url(base)
    killed = 0
    for client in r.client_list():
        if client.get("name") == client_name:
            killed += int(r.execute_command("CLIENT", "KILL", "ID", client["id"]))
    r.close()
    return killed


def drop_postgres_study(url: str, name: str) -> None:
    import optuna

    try:
        optuna.delete_study(study_name=name, storage=url)
    except KeyError:
        pass


def drop_redis_prefix(prefix: str) -> None:
    """Delete a test's own journal (``redis://…?prefix=NAME``): every key under its prefix."""
    import redis

    r = redis.Redis.from_url(os.environ.get("CONVTUNE_TEST_REDIS", REDIS_DEFAULT))
    keys = list(r.scan_iter(match=f"{prefix}:*", count=1000))
    if keys:
        r.delete(*keys)
    r.close()


def light_worker(url: str, name: str, n: int, reports: int) -> None:
    """A worker process whose objective only reports a curve: storage load without training."""
    import warnings

    import optuna

    from convtune.storage import open_storage

    warnings.filterwarnings("ignore")
    optuna.logging.set_verbosity(optuna.logging.WARNING)
    study = optuna.load_study(study_name=name, storage=open_storage(url))

    def objective(trial: optuna.Trial) -> float:
        x = trial.suggest_float("x", 0.0, 1.0)
        for step in range(reports):
            trial.report(x / (step + 1), step=step * 100)
        trial.set_user_attr("curve", list(range(reports)))
        return x

    study.optimize(objective, n_trials=n)


def free_port_pair() -> int:
    """A loopback port P with P + 1 also free (a rendezvous endpoint and its channel port)."""
    for _ in range(50):
        with socket.socket() as a:
            a.bind(("127.0.0.1", 0))
            port = a.getsockname()[1]
        try:
            with socket.socket() as b, socket.socket() as c:
                b.bind(("127.0.0.1", port))
                c.bind(("127.0.0.1", port + 1))
            return port
        except OSError:
            continue
    raise RuntimeError("no free port pair")


@contextlib.contextmanager
def follower_node(study: str, storage: str, endpoint: str, rdzv_id: str, env: dict[str, str] | None = None):
    """A second "node" on loopback: `convtune study follow` for ``study``, killed if still running at the end.

    Yields the process (its output piped); the caller waits for it and checks what it printed.
    ``env`` adds to its environment (what differs on that node).
    """
    import os
    import subprocess
    import sys

    follower = subprocess.Popen(
        [sys.executable, "-m", "convtune.cli", "study", "follow", study, "--storage", storage,
         "--nnodes", "2", "--rdzv-endpoint", endpoint, "--rdzv-id", rdzv_id, "--collective-timeout", "15"],
        stdout=subprocess.PIPE, stderr=subprocess.STDOUT, env={**os.environ, **(env or {})},
    )  # fmt: skip
    try:
        yield follower
    finally:
        if follower.poll() is None:
            follower.kill()
            follower.wait()


# A workload file for fault tests and `make stress`: digits, with a fault run before each step's loss.
DIGITS_WITH_A_FAULT = '''
{imports}
from convtune.workloads import build_workload
{helpers}

class DigitsWithAFault:
    """digits, with the fault under test run before each training step's loss."""

    def __init__(self):
        self.inner = build_workload("digits")
        self.calls = 0

    def __getattr__(self, name):
        return getattr(self.inner, name)

    def loss(self, model, batch):
        self.calls += 1
{fault}
        return self.inner.loss(model, batch)


def make():
    return DigitsWithAFault()
'''


# The fault tests' study and ``make stress``'s (benchmarks/stress_signals.py): digits, a target it
# never reaches (every trial runs to its cap), and no near-repeat reusing an outcome (every trial
# must train: curves, leases, retries). The workload is each caller's own.
FAULT_SPACE = {
    "peak_lr": {"low": 3.0e-3, "high": 3.0e-2, "log": True},
    "horizon_samples": 8192,
    "schedule": "constant",
    "micro_batch_size": 32,
    "optimizer": {"choices": ["sgd"], "sgd": {"momentum": 0.9, "nesterov": True}},
}
FAULT_SPEC = {
    "space": FAULT_SPACE,
    "target": "accuracy>=0.99",
    "cost": "samples",
    "max_cost": 4096,
    "eval_every": {"samples": 512},
    "pruner": "none",
    "seed": 0,
    "duplicate_tolerance": 0.0,
}


def digits_with_a_fault(tmp_path: Path, fault: str, imports: str = "", helpers: str = "") -> dict[str, str]:
    """Writes a digits workload whose ``loss`` runs ``fault`` first; the spec fields that use it."""
    module = f"fault_{uuid.uuid4().hex[:8]}"
    code = DIGITS_WITH_A_FAULT.format(
        imports=imports, helpers=helpers, fault=textwrap.indent(textwrap.dedent(fault).strip(), " " * 8)
    )
    (tmp_path / f"{module}.py").write_text(code)
    return {"workload": f"{module}.py:make", "base_dir": str(tmp_path)}


class TcpProxy:
    """Forwards 127.0.0.1:<port> to ``upstream`` (a real server), with two faults a test can cause.

    :meth:`close` cuts everything at once; after it every new connection is refused, as from a
    stopped server. :meth:`lose_reply_after` lets the server run the next request that contains
    ``marker`` and then drops that connection before its reply reaches the client: the client
    cannot tell whether its write happened, the case a retried write must not apply twice.
    """

    def __init__(self, upstream: tuple[str, int]):
        self.upstream = upstream
        self.listener = socket.create_server(("127.0.0.1", 0))
        self.port = self.listener.getsockname()[1]
        self.sockets: list[socket.socket] = []
        self.lock = threading.Lock()
        self.closed = False
        self.replies_lost = 0
        self._marker: bytes | None = None
        threading.Thread(target=self._accept, daemon=True).start()

    def lose_reply_after(self, marker: bytes) -> None:
        self._marker = marker

    def _accept(self) -> None:
        while True:
            try:
                client, _ = self.listener.accept()
            except OSError:
                return  # closed
            with self.lock:
                if self.closed:  # accepted as it closed: refuse it too
                    client.close()
                    return
                server = socket.create_connection(self.upstream)
                self.sockets += [client, server]
            doomed = threading.Event()  # this connection's next reply is to be lost
            threading.Thread(target=self._requests, args=(client, server, doomed), daemon=True).start()
            threading.Thread(target=self._replies, args=(server, client, doomed), daemon=True).start()

    def _requests(self, client: socket.socket, server: socket.socket, doomed: threading.Event) -> None:
        with contextlib.suppress(OSError):
            while data := client.recv(65536):
                if self._marker is not None and self._marker in data:
                    self._marker = None
                    doomed.set()
                server.sendall(data)
        self._cut(client, server)

    def _replies(self, server: socket.socket, client: socket.socket, doomed: threading.Event) -> None:
        with contextlib.suppress(OSError):
            while data := server.recv(65536):
                if doomed.is_set():  # the server has run the request: drop its answer
                    self.replies_lost += 1
                    break
                client.sendall(data)
        self._cut(server, client)

    @staticmethod
    def _cut(*sockets: socket.socket) -> None:
        for sock in sockets:
            with contextlib.suppress(OSError):
                sock.shutdown(socket.SHUT_RDWR)

    def close(self) -> None:
        with self.lock:
            self.closed = True
            # shutdown() wakes the thread blocked in accept(); close() alone would leave it listening.
            with contextlib.suppress(OSError):
                self.listener.shutdown(socket.SHUT_RDWR)
            self.listener.close()
            self._cut(*self.sockets)
            for sock in self.sockets:
                sock.close()
