"""The server's outer wall, as plain ASGI around the app: a request body is counted as it
streams (a chunked body has no Content-Length to check); past the limit the app is told the
client left and whatever it answers is replaced by 413; a body whose next part takes longer
than ``BODY_PART_SECONDS`` to arrive is given up the same way, with 408;
a ``Host`` header that is not the address the server is bound to is refused with 400, so a
web page elsewhere cannot reach a loopback server through DNS rebinding; every response
carries the browser's safety headers."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Iterable, MutableMapping
from typing import Any

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]

SECURITY_HEADERS = (
    (
        b"content-security-policy",
        b"default-src 'self'; img-src 'self' data:; style-src 'self' 'unsafe-inline'; "
        b"script-src 'self' 'unsafe-inline'; frame-ancestors 'none'; form-action 'self'",
    ),
    (b"x-content-type-options", b"nosniff"),
    (b"x-frame-options", b"DENY"),
    (b"referrer-policy", b"no-referrer"),
)
BODY_PART_SECONDS = 10.0
LOOPBACK_NAMES = ("127.0.0.1", "localhost", "::1", "[::1]", "testserver")
"""Host names a loopback server answers to ("testserver" is the test client's)."""


class Guard:
    """ASGI middleware: body limit and pace on the stream, Host check, security headers."""

    def __init__(
        self,
        app: ASGIApp,
        body_limit: int,
        hosts: Iterable[str] = LOOPBACK_NAMES,
        body_part_seconds: float = BODY_PART_SECONDS,
    ):
        self.app = app
        self.body_limit = body_limit
        self.body_part_seconds = body_part_seconds
        self.hosts = {host.lower() for host in hosts}

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        headers = dict(scope.get("headers") or [])
        host = headers.get(b"host", b"").decode("latin-1").lower()
        name = host.rsplit(":", 1)[0] if not host.endswith("]") else host
        if self.hosts and name not in self.hosts:
            await _plain(send, 400, "unexpected Host header")
            return
        length = headers.get(b"content-length", b"")
        if length.isdigit() and int(length) > self.body_limit:
            await _plain(send, 413, "request body too large")
            return
        received = 0
        body_done = answered = False
        refusal: tuple[int, str] | None = None

        async def counted_receive() -> Message:
            nonlocal received, body_done, refusal
            if refusal is not None:
                return {"type": "http.disconnect"}
            if body_done:
                return await receive()
            try:
                message = await asyncio.wait_for(receive(), self.body_part_seconds)
            except TimeoutError:
                refusal = (408, "request body too slow")
                return {"type": "http.disconnect"}
            if message["type"] == "http.request":
                received += len(message.get("body", b""))
                body_done = not message.get("more_body", False)
                if received > self.body_limit:
                    refusal = (413, "request body too large")
                    return {"type": "http.disconnect"}
            return message

        async def guarded_send(message: Message) -> None:
            nonlocal answered
            if refusal is not None:
                if message["type"] == "http.response.start" and not answered:
                    answered = True
                    await _plain(send, *refusal)
                return
            answered = True
            if message["type"] == "http.response.start":
                message["headers"] = [*message.get("headers", []), *SECURITY_HEADERS]
            await send(message)

        try:
            await self.app(scope, counted_receive, guarded_send)
        except Exception:
            if refusal is None:
                raise
        if refusal is not None and not answered:
            await _plain(send, *refusal)


async def _plain(send: Send, status: int, text: str) -> None:
    await send(
        {
            "type": "http.response.start",
            "status": status,
            "headers": [(b"content-type", b"text/plain; charset=utf-8"), *SECURITY_HEADERS],
        }
    )
    await send({"type": "http.response.body", "body": text.encode()})
