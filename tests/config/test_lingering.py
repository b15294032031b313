"""A connection gunicorn is done with is closed as RFC 9112 asks (its side first, then a wait
for the client's), the wait on the worker's poller (`config.http_deadlines.Lingering`), not
on its main thread, where a client that kept its side open held every request for 2 s. The
worker counts it until it is closed (`closed`, once each): a worker that stops waits for it,
as it waited for gunicorn's own close, rather than ending with the answer perhaps unread."""

from __future__ import annotations

import selectors
import socket
import time

import pytest

from config.http_deadlines import HeadDeadline, Lingering


class Closes:
    def __init__(self) -> None:
        self.count = 0

    def __call__(self) -> None:
        self.count += 1


@pytest.fixture
def closes() -> Closes:
    return Closes()


@pytest.fixture
def lingering(closes: Closes) -> Lingering:
    return Lingering(closes)


@pytest.fixture
def poller() -> selectors.BaseSelector:
    return selectors.DefaultSelector()


@pytest.fixture
def pair():
    server, client = socket.socketpair()
    yield server, client
    server.close()
    client.close()


def served(poller: selectors.BaseSelector, seconds: float = 0.1) -> None:
    """What the worker's loop does with what is ready."""
    for key, _ in poller.select(timeout=seconds):
        key.data(key.fileobj)


def test_the_client_is_told_at_once_and_nothing_waits(pair, closes, lingering, poller):
    server, client = pair
    started = time.monotonic()
    lingering.close(server, poller)
    assert time.monotonic() - started < 0.1
    client.settimeout(1)
    assert client.recv(10) == b""  # its side is closed: the client reads the end
    assert server.fileno() != -1  # open, waiting for the client's side
    assert closes.count == 0  # still counted by the worker


def test_closed_once_the_client_closes_its_side(pair, closes, lingering, poller):
    server, client = pair
    lingering.close(HeadDeadline(server), poller)  # the socket under the reader's deadline
    client.sendall(b"the rest of a body nobody reads")
    served(poller)
    assert server.fileno() != -1  # read and dropped: the client may send more
    client.close()
    served(poller)
    assert server.fileno() == -1
    assert not lingering.read
    assert closes.count == 1


def test_closed_after_its_seconds_if_the_client_keeps_its_side(
    pair, monkeypatch, closes, lingering, poller
):
    server, _client = pair
    monkeypatch.setattr(Lingering, "SECONDS", 0.2)
    lingering.close(server, poller)
    lingering.expire(poller)
    assert server.fileno() != -1
    time.sleep(0.25)
    lingering.expire(poller)
    assert server.fileno() == -1
    assert poller.get_map() == {}
    lingering.expire(poller)
    assert closes.count == 1


def test_a_client_that_sends_on_and_on_is_closed_past_the_most_read(
    pair, monkeypatch, closes, lingering, poller
):
    server, client = pair
    monkeypatch.setattr(Lingering, "MOST", 8000)
    lingering.close(server, poller)
    client.sendall(b"x" * 4096)
    served(poller)
    assert server.fileno() != -1
    client.sendall(b"x" * 4096)
    served(poller)
    assert server.fileno() == -1
    assert closes.count == 1


def test_a_connection_whose_client_is_gone_is_closed_at_once(closes, lingering, poller):
    server, client = socket.socketpair()
    client.close()
    server.shutdown(socket.SHUT_RDWR)  # as a reset leaves it
    server.close()
    lingering.close(server, poller)
    assert closes.count == 1
