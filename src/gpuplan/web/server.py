"""How ``gpuplan serve`` runs the app under uvicorn, with the connection limits that uvicorn
leaves open: a client that sends its request headers a byte at a time ("slowloris") holds a
connection for as long as it likes, since uvicorn times out only idle keep-alive connections.
:class:`HeaderDeadlineProtocol` closes a connection whose request line and headers are not all
in within ``HEADER_SECONDS`` of its opening, or of the previous response; the body's pace is
held by :class:`gpuplan.web.guard.Guard`."""

from __future__ import annotations

import asyncio
from typing import Any

import uvicorn
from uvicorn.protocols.http.h11_impl import H11Protocol

from gpuplan.web.app import create_app

HEADER_SECONDS = 10.0
KEEP_ALIVE_SECONDS = 5
MAX_HEADER_BYTES = 16 * 1024
"""h11's own default for an incomplete request line and headers, stated here."""
MAX_CONNECTIONS = 200
"""Past this many open connections a request is answered 503 at once (uvicorn's
``limit_concurrency``), so a flood of sockets cannot exhaust file descriptors."""


class HeaderDeadlineProtocol(H11Protocol):
    """uvicorn's h11 protocol with a deadline on each request's headers."""

    header_seconds = HEADER_SECONDS
    _header_deadline: asyncio.TimerHandle | None = None

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        super().connection_made(transport)
        self._arm_header_deadline()

    def handle_events(self) -> None:
        super().handle_events()
        if self.cycle is not None and not self.cycle.response_complete:
            self._cancel_header_deadline()

    def on_response_complete(self) -> None:
        super().on_response_complete()
        if not self.transport.is_closing():
            self._arm_header_deadline()

    def connection_lost(self, exc: Exception | None) -> None:
        self._cancel_header_deadline()
        super().connection_lost(exc)

    def _arm_header_deadline(self) -> None:
        self._cancel_header_deadline()
        self._header_deadline = self.loop.call_later(self.header_seconds, self._headers_late)

    def _cancel_header_deadline(self) -> None:
        if self._header_deadline is not None:
            self._header_deadline.cancel()
            self._header_deadline = None

    def _headers_late(self) -> None:
        self._header_deadline = None
        waiting = self.cycle is None or self.cycle.response_complete
        if waiting and not self.transport.is_closing():
            self.transport.close()


def server_settings(host: str, port: int, workers: int) -> dict[str, Any]:
    """The keyword arguments of ``uvicorn.run`` for ``gpuplan serve``."""
    return {
        "host": host,
        "port": port,
        "workers": workers,
        "http": HeaderDeadlineProtocol,
        "timeout_keep_alive": KEEP_ALIVE_SECONDS,
        "h11_max_incomplete_event_size": MAX_HEADER_BYTES,
        "limit_concurrency": MAX_CONNECTIONS,
        "log_level": "warning",
    }


def run(host: str, port: int, workers: int = 1) -> None:
    """Serve the app until interrupted: in this process, or ``workers`` processes sharing the
    socket (each builds its own app through the factory)."""
    settings = server_settings(host, port, workers)
    if workers == 1:
        uvicorn.run(create_app(), **settings)
    else:
        uvicorn.run("gpuplan.web.app:create_app", factory=True, **settings)
