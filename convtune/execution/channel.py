"""The progress channel between a worker (the tuning process) and its rank processes.

Length-prefixed JSON messages over TCP. JSON, not pickle, because the port may be reachable from
other nodes: a stray client can at worst send a wrong number, never run code. Each rank holds its
own connection, so a rank that dies shows up as an end-of-file on its connection at once, and the
worker keeps everything it has already received: the channel survives any rank's crash.

Messages (``type``):

- rank → worker: ``hello`` {rank, world_size, pid, host, token}, ``progress`` {trial, record},
  ``result`` {trial, result}, ``error`` {trial, rank, error, time}
- worker → rank: ``trial`` {trial, recipe, config, workload, workload_args, base_dir},
  ``decision`` {trial, index, stop}, ``close``

Example:
    >>> server = ChannelServer("127.0.0.1", 0, token="t")      # doctest: +SKIP
    >>> client = ChannelClient.connect(server.address, token="t", hello={"rank": 0})  # doctest: +SKIP
"""

from __future__ import annotations

import json
import math
import os
import queue
import socket
import struct
import threading
import time
from dataclasses import dataclass
from typing import Any

_HEADER = struct.Struct("!I")
_MAX_MESSAGE = 64 * 2**20


def _encode(message: dict[str, Any]) -> bytes:
    # NaN/inf are valid metrics (a diverged loss); JSON gets them as strings and back.
    body = json.dumps(message, default=_jsonable, allow_nan=True).encode()
    return _HEADER.pack(len(body)) + body


def _jsonable(value: Any) -> Any:
    if hasattr(value, "item"):
        return value.item()
    if isinstance(value, float) and not math.isfinite(value):
        return repr(value)
    raise TypeError(f"cannot send {type(value).__name__} over the channel")


def _read_exact(sock: socket.socket, size: int) -> bytes | None:
    chunks = bytearray()
    while len(chunks) < size:
        chunk = sock.recv(size - len(chunks))
        if not chunk:
            return None
        chunks += chunk
    return bytes(chunks)


def recv_message(sock: socket.socket) -> dict[str, Any] | None:
    """One message, or None at end of file (the peer closed or died)."""
    header = _read_exact(sock, _HEADER.size)
    if header is None:
        return None
    (size,) = _HEADER.unpack(header)
    if size > _MAX_MESSAGE:
        raise ConnectionError(f"channel message of {size} bytes is too large")
    body = _read_exact(sock, size)
    if body is None:
        return None
    return json.loads(body)


class ChannelClient:
    """A rank's end: blocking send and receive of one message at a time."""

    def __init__(self, sock: socket.socket):
        self.sock = sock
        self._lock = threading.Lock()

    @classmethod
    def connect(
        cls, address: str, *, token: str, hello: dict[str, Any], timeout: float = 60.0
    ) -> ChannelClient:
        """Connect to ``host:port`` (retrying while the worker starts listening) and say hello."""
        host, _, port = address.rpartition(":")
        deadline = time.monotonic() + timeout
        while True:
            try:
                sock = socket.create_connection((host, int(port)), timeout=10)
                break
            except OSError:
                if time.monotonic() > deadline:
                    raise
                time.sleep(0.2)
        sock.settimeout(None)
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        client = cls(sock)
        client.send(
            {"type": "hello", "token": token, "pid": os.getpid(), "host": socket.gethostname(), **hello}
        )
        return client

    def send(self, message: dict[str, Any]) -> None:
        with self._lock:
            self.sock.sendall(_encode(message))

    def recv(self) -> dict[str, Any] | None:
        return recv_message(self.sock)

    def close(self) -> None:
        try:
            self.sock.close()
        except OSError:
            pass


@dataclass
class Event:
    """What the worker hears: a message from a connection, or that connection's end (``eof``)."""

    conn: int
    message: dict[str, Any] | None
    time: float


class ChannelServer:
    """The worker's end: accepts rank connections and queues their messages as :class:`Event` s.

    Reader threads only enqueue; all decisions happen in the thread that calls :meth:`get`.
    """

    def __init__(self, host: str = "127.0.0.1", port: int = 0, *, token: str):
        self.token = token
        self.events: queue.Queue[Event] = queue.Queue()
        self._listener = socket.create_server((host, port), reuse_port=False)
        self._conns: dict[int, socket.socket] = {}
        self._ranks: dict[int, int] = {}  # connection id → rank, once it said hello
        self._lock = threading.Lock()
        self._next_id = 0
        self._closed = False
        threading.Thread(target=self._accept, name="convtune-channel", daemon=True).start()

    @property
    def address(self) -> str:
        host, port = self._listener.getsockname()[:2]
        return f"{host}:{port}"

    @property
    def port(self) -> int:
        return int(self._listener.getsockname()[1])

    def _accept(self) -> None:
        while not self._closed:
            try:
                sock, _ = self._listener.accept()
            except OSError:
                return
            sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            with self._lock:
                conn, self._next_id = self._next_id, self._next_id + 1
                self._conns[conn] = sock
            threading.Thread(target=self._read, args=(conn, sock), daemon=True).start()

    def _read(self, conn: int, sock: socket.socket) -> None:
        greeted = False
        while True:
            try:
                message = recv_message(sock)
            except (OSError, ValueError, ConnectionError):
                message = None
            if message is not None and not greeted:
                if message.get("type") != "hello" or message.get("token") != self.token:
                    message = None  # a stranger: drop it silently
                else:
                    greeted = True
                    with self._lock:
                        self._ranks[conn] = int(message.get("rank", -1))
            self.events.put(Event(conn, message, time.time()))
            if message is None:
                with self._lock:
                    self._conns.pop(conn, None)
                    self._ranks.pop(conn, None)
                try:
                    sock.close()
                except OSError:
                    pass
                return

    def get(self, timeout: float) -> Event | None:
        try:
            return self.events.get(timeout=timeout)
        except queue.Empty:
            return None

    def send(self, conn: int, message: dict[str, Any]) -> bool:
        """Send to one connection; False when it is gone (its end of file is already queued)."""
        with self._lock:
            sock = self._conns.get(conn)
        if sock is None:
            return False
        try:
            sock.sendall(_encode(message))
            return True
        except OSError:
            return False

    def drop(self, conn: int) -> None:
        with self._lock:
            sock = self._conns.pop(conn, None)
            self._ranks.pop(conn, None)
        if sock is not None:
            try:
                sock.shutdown(socket.SHUT_RDWR)
                sock.close()
            except OSError:
                pass

    def drain(self) -> None:
        while not self.events.empty():
            self.events.get_nowait()

    def close(self) -> None:
        self._closed = True
        try:
            self._listener.close()
        except OSError:
            pass
        with self._lock:
            conns = list(self._conns)
        for conn in conns:
            self.drop(conn)


def describe_exception(exc: BaseException) -> str:
    """First line of the error and where it was raised: ``Type: message at file.py:12 in func``."""
    import traceback
    from pathlib import Path

    frames = traceback.extract_tb(exc.__traceback__)
    where = f" at {Path(frames[-1].filename).name}:{frames[-1].lineno} in {frames[-1].name}" if frames else ""
    first = str(exc).splitlines()[0] if str(exc) else ""
    return f"{type(exc).__name__}: {first}{where}"
