"""A connection gunicorn is done with is closed as RFC 9112 asks (its side first, then a wait
for the client's), the wait on the worker's poller (`config.http_deadlines.Lingering`), not
on its main thread, where a client that kept its side open held every request for 2 s."""

from __future__ import annotations

import selectors
import socket
import time

import pytest

from config.http_deadlines import HeadDeadline, Lingering


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


def test_the_client_is_told_at_once_and_nothing_waits(pair):
    server, client = pair
    lingering, poller = Lingering(), selectors.DefaultSelector()
    started = time.monotonic()
    lingering.close(server, poller)
    assert time.monotonic() - started < 0.1
    client.settimeout(1)
    assert client.recv(10) == b""  # its side is closed: the client reads the end
    assert server.fileno() != -1  # open, waiting for the client's side


def test_closed_once_the_client_closes_its_side(pair):
    server, client = pair
    lingering, poller = Lingering(), selectors.DefaultSelector()
    lingering.close(HeadDeadline(server), poller)  # the socket under the reader's deadline
    client.sendall(b"the rest of a body nobody reads")
    served(poller)
    assert server.fileno() != -1  # read and dropped: the client may send more
    client.close()
    served(poller)
    assert server.fileno() == -1
    assert not lingering.read


def test_closed_after_its_seconds_if_the_client_keeps_its_side(pair, monkeypatch):
    server, _client = pair
    monkeypatch.setattr(Lingering, "SECONDS", 0.2)
    lingering, poller = Lingering(), selectors.DefaultSelector()
    lingering.close(server, poller)
    lingering.expire(poller)
    assert server.fileno() != -1
    time.sleep(0.25)
    lingering.expire(poller)
    assert server.fileno() == -1
    assert poller.get_map() == {}


def test_a_client_that_sends_on_and_on_is_closed_past_the_most_read(pair, monkeypatch):
    server, client = pair
    monkeypatch.setattr(Lingering, "MOST", 8000)
    lingering, poller = Lingering(), selectors.DefaultSelector()
    lingering.close(server, poller)
    client.sendall(b"x" * 4096)
    served(poller)
    assert server.fileno() != -1
    client.sendall(b"x" * 4096)
    served(poller)
    assert server.fileno() == -1
