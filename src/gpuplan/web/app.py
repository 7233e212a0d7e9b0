"""The FastAPI application: pages, the JSON API, the language of each request, input limits."""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator, Awaitable, Callable, Iterable
from typing import Any

from fastapi import FastAPI, Request
from fastapi.responses import JSONResponse, Response

from gpuplan.errors import InputError
from gpuplan.i18n import DEFAULT_LANGUAGE, language_from_accept_header, normalize_language

COMPUTE_THREADS = 2
"""Threads that run the handlers' computations (the thread pool's size; anyio's default is 40).
A search holds the GIL; with 40 of them the event loop waits its turn behind each, and a
health probe takes 200 ms under load (benchmarks/web_load.py); more cores are used with
``--workers``, not threads."""
REQUEST_LIMIT_BYTES = 256 * 1024
"""Whole request bodies above this are refused (uploads themselves are limited to 64 KiB)."""
LANGUAGE_COOKIE = "gpuplan_lang"


def request_language(request: Request) -> tuple[str, bool]:
    """``(language, remember)``: ``?lang=`` (to be remembered in a cookie), else the cookie,
    else the browser's Accept-Language, else English."""
    asked = normalize_language(request.query_params.get("lang"))
    if asked:
        return asked, True
    remembered = normalize_language(request.cookies.get(LANGUAGE_COOKIE))
    if remembered:
        return remembered, False
    return language_from_accept_header(
        request.headers.get("accept-language")
    ) or DEFAULT_LANGUAGE, False


def create_app(hosts: Iterable[str] | None = None) -> Any:
    """A new application wrapped in ``guard.Guard``; ``gpuplan serve`` runs it with uvicorn.
    ``hosts``: the Host names it answers to (default: ``$GPUPLAN_SERVE_HOSTS``, comma-separated,
    which ``gpuplan serve`` sets for its workers; else the loopback names; empty: any)."""
    import os

    from fastapi.exceptions import RequestValidationError

    from gpuplan import __version__
    from gpuplan.web import api, pages
    from gpuplan.web.guard import LOOPBACK_NAMES, Guard

    @contextlib.asynccontextmanager
    async def lifespan(_: FastAPI) -> AsyncIterator[None]:
        import anyio.to_thread

        anyio.to_thread.current_default_thread_limiter().total_tokens = COMPUTE_THREADS
        yield

    app = FastAPI(
        lifespan=lifespan,
        title="gpuplan",
        version=__version__,
        description="Plan GPU rentals for LLM training: the CLI's answers as a JSON API.",
        docs_url=None,
        redoc_url=None,
    )

    @app.middleware("http")
    async def limits_and_language(
        request: Request, call_next: Callable[[Request], Awaitable[Response]]
    ) -> Response:
        language, remember = request_language(request)
        request.state.lang = language
        response = await call_next(request)
        if remember:
            response.set_cookie(LANGUAGE_COOKIE, language, max_age=365 * 86400, samesite="lax")
        return response

    @app.exception_handler(InputError)
    async def input_error(request: Request, error: InputError) -> JSONResponse:
        language = str(getattr(request.state, "lang", DEFAULT_LANGUAGE))
        return JSONResponse({"detail": error.text(language)}, status_code=422)

    @app.exception_handler(RequestValidationError)
    async def invalid_request(request: Request, error: RequestValidationError) -> JSONResponse:
        """422 naming each field; the rejected values are left out (NaN cannot be JSON)."""
        details = [
            {"loc": list(item["loc"]), "msg": item["msg"], "type": item["type"]}
            for item in error.errors()
        ]
        return JSONResponse({"detail": details}, status_code=422)

    app.include_router(api.router)
    app.include_router(pages.router)
    if hosts is None:
        configured = os.environ.get("GPUPLAN_SERVE_HOSTS")
        hosts = LOOPBACK_NAMES if configured is None else [h for h in configured.split(",") if h]
    return Guard(app, REQUEST_LIMIT_BYTES, hosts)
