"""The server's connection limits: slow headers and slow bodies are cut off, a search too
large for one request is refused, and a real uvicorn server keeps answering meanwhile."""

from __future__ import annotations

import asyncio
import socket
import threading
import time
from collections.abc import Iterator

import pytest

pytest.importorskip("fastapi")
pytest.importorskip("uvicorn")

import uvicorn
from fastapi.testclient import TestClient

from gpuplan.web import services
from gpuplan.web.app import create_app
from gpuplan.web.guard import Guard
from gpuplan.web.server import HeaderDeadlineProtocol, server_settings


class QuickDeadline(HeaderDeadlineProtocol):
    header_seconds = 0.5


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@pytest.fixture(scope="module")
def served() -> Iterator[int]:
    port = _free_port()
    settings = {**server_settings("127.0.0.1", port, 1), "http": QuickDeadline}
    settings.pop("workers")
    server = uvicorn.Server(uvicorn.Config(create_app(), **settings))
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 10
    while not server.started and time.monotonic() < deadline:
        time.sleep(0.02)
    assert server.started
    yield port
    server.should_exit = True
    thread.join(5)


def _get(port: int, path: str) -> bytes:
    with socket.create_connection(("127.0.0.1", port), timeout=5) as connection:
        connection.sendall(f"GET {path} HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n".encode())
        return connection.recv(200)


def test_headers_sent_too_slowly_are_cut_off(served: int) -> None:
    with socket.create_connection(("127.0.0.1", served), timeout=5) as slow:
        slow.sendall(b"GET /api/gpus HTTP/1.1\r\nHost: 127.0.0.1\r\n")
        started = time.monotonic()
        assert slow.recv(100) == b""
        assert time.monotonic() - started < 3
    assert _get(served, "/api/gpus").startswith(b"HTTP/1.1 200")


def _read_response(connection: socket.socket) -> bytes:
    """One whole response (headers, then Content-Length bytes of body)."""
    received = b""
    while b"\r\n\r\n" not in received:
        received += connection.recv(65536)
    head, body = received.split(b"\r\n\r\n", 1)
    length = next(
        int(line.split(b":", 1)[1])
        for line in head.split(b"\r\n")
        if line.lower().startswith(b"content-length:")
    )
    while len(body) < length:
        body += connection.recv(65536)
    return head


def test_the_deadline_holds_for_each_request_of_a_kept_alive_connection(served: int) -> None:
    with socket.create_connection(("127.0.0.1", served), timeout=5) as connection:
        connection.sendall(b"GET /api/gpus HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
        assert _read_response(connection).startswith(b"HTTP/1.1 200")
        connection.sendall(b"GET /api/gpus HTTP/1.1\r\n")
        started = time.monotonic()
        assert connection.recv(100) == b""
        assert time.monotonic() - started < 3


def test_a_body_that_stalls_is_408() -> None:
    async def app(scope, receive, send):
        await receive()
        await receive()
        await send({"type": "http.response.start", "status": 200, "headers": []})
        await send({"type": "http.response.body", "body": b"read it all"})

    parts = [{"type": "http.request", "body": b"{", "more_body": True}]

    async def receive():
        if parts:
            return parts.pop()
        await asyncio.sleep(5)
        return {"type": "http.request", "body": b"}"}

    sent: list[dict] = []

    async def send(message):
        sent.append(message)

    scope = {"type": "http", "headers": [(b"host", b"127.0.0.1")]}
    started = time.monotonic()
    asyncio.run(Guard(app, 1024, body_part_seconds=0.2)(scope, receive, send))
    assert time.monotonic() - started < 2
    assert sent[0]["status"] == 408


def test_a_search_past_the_layout_limit_is_422_naming_it(monkeypatch) -> None:
    monkeypatch.setattr(services, "MAX_LAYOUTS_PER_REQUEST", 1_000)
    response = TestClient(create_app()).post(
        "/api/plan", json={"model": "llama-3.1-70b", "tokens": "1T", "max_gpus": 512}
    )
    assert response.status_code == 422 and "max_layouts" in response.text


def test_the_plan_search_itself_honours_max_layouts() -> None:
    from gpuplan.api import plan_search
    from gpuplan.search import LayoutLimitError

    scenario = {"model": "llama-3.1-70b", "tokens": "1T"}
    with pytest.raises(LayoutLimitError, match="max_layouts"):
        plan_search(scenario, max_gpus=512, max_layouts=1_000)
    assert plan_search(scenario, max_gpus=512, max_layouts=10**7)["evaluated"] > 1_000


def test_health_answers_with_the_version() -> None:
    from gpuplan import __version__

    response = TestClient(create_app()).get("/api/health")
    assert response.json() == {"status": "ok", "version": __version__}
