"""HTTP as raw bytes: requests no client library would send, and the answer read off the socket
until the server closes it. For the tests of what a server answers before any app reads the
request (gunicorn's and uvicorn's own refusals); and a free port for such a server."""

from __future__ import annotations

import socket


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def read_answer(sock: socket.socket) -> tuple[str, dict[str, str], bytes]:
    """Everything the server sends until it closes: (status line, headers as sent, body, its
    chunks joined)."""
    raw = b""
    while chunk := sock.recv(65536):
        raw += chunk
    head, _, body = raw.partition(b"\r\n\r\n")
    status, *lines = head.decode("latin-1").split("\r\n")
    headers = dict(line.split(": ", 1) for line in lines)
    if headers.get("Transfer-Encoding", headers.get("transfer-encoding")) == "chunked":
        body = dechunked(body)
    return status, headers, body


def dechunked(body: bytes) -> bytes:
    data = b""
    while body:
        size, _, body = body.partition(b"\r\n")
        length = int(size.split(b";")[0], 16)
        if length == 0:
            break
        data, body = data + body[:length], body[length + 2 :]
    return data


def exchange(
    host: str, port: int, request: bytes, timeout: float = 30
) -> tuple[str, dict[str, str], bytes]:
    with socket.create_connection((host, port), timeout=timeout) as sock:
        sock.sendall(request)
        return read_answer(sock)
