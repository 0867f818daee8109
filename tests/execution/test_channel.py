"""The progress channel (``convtune.execution.channel``): hello with a token, messages both ways,
a peer's end seen as an event, strangers dropped, errors described in one line."""

from __future__ import annotations

import math
import socket
from collections.abc import Iterator

import pytest

from convtune.execution.channel import ChannelClient, ChannelServer, Event, describe_exception


@pytest.fixture
def server() -> Iterator[ChannelServer]:
    server = ChannelServer("127.0.0.1", 0, token="secret")
    yield server
    server.close()


def _next(server: ChannelServer) -> Event:
    event = server.get(timeout=10)
    assert event is not None, "no event within 10 s"
    return event


def test_messages_travel_both_ways_with_non_finite_numbers(server: ChannelServer) -> None:
    client = ChannelClient.connect(server.address, token="secret", hello={"rank": 3})
    hello = _next(server)
    assert hello.message is not None and hello.message["type"] == "hello" and hello.message["rank"] == 3
    client.send({"type": "progress", "record": {"loss": math.nan, "cost": math.inf}})
    progress = _next(server)
    assert progress.conn == hello.conn and progress.message is not None
    assert math.isnan(progress.message["record"]["loss"]) and progress.message["record"]["cost"] == math.inf
    assert server.send(hello.conn, {"type": "decision", "index": 0, "stop": True})
    assert client.recv() == {"type": "decision", "index": 0, "stop": True}
    client.close()


def test_a_peer_that_goes_away_is_an_end_event(server: ChannelServer) -> None:
    client = ChannelClient.connect(server.address, token="secret", hello={"rank": 0})
    conn = _next(server).conn
    client.close()
    end = _next(server)
    assert end.conn == conn and end.message is None
    assert not server.send(conn, {"type": "close"})  # gone: False, never an exception


def test_dropping_a_connection_ends_it_for_the_client(server: ChannelServer) -> None:
    client = ChannelClient.connect(server.address, token="secret", hello={"rank": 1})
    conn = _next(server).conn
    server.drop(conn)
    assert client.recv() is None
    client.close()


def test_a_wrong_token_is_dropped_before_anything_it_says(server: ChannelServer) -> None:
    stranger = ChannelClient.connect(server.address, token="guess", hello={"rank": 0})
    event = _next(server)
    assert event.message is None  # its hello never reaches the worker: only its end does
    stranger.close()


def test_garbage_from_a_stranger_does_not_reach_the_worker(server: ChannelServer) -> None:
    host, port = server.address.rsplit(":", 1)
    with socket.create_connection((host, int(port))) as sock:
        sock.sendall(b"\x00\x00\x00\x05hello")
    assert _next(server).message is None


def test_describe_exception_names_type_message_and_where() -> None:
    def fail() -> None:
        raise ValueError("first line\nsecond line")

    with pytest.raises(ValueError) as info:
        fail()
    text = describe_exception(info.value)
    assert text.startswith("ValueError: first line at test_channel.py:")
    assert text.endswith(" in fail") and "second line" not in text
