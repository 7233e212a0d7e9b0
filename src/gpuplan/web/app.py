"""The FastAPI application: pages, the JSON API, the language of each request, input limits."""

from __future__ import annotations

from collections.abc import Awaitable, Callable

from fastapi import FastAPI, Request
from fastapi.responses import JSONResponse, PlainTextResponse, Response

from gpuplan.errors import InputError
from gpuplan.i18n import DEFAULT_LANGUAGE, language_from_accept_header, normalize_language

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


def create_app() -> FastAPI:
    """A new application; ``gpuplan serve`` runs it with uvicorn."""
    from gpuplan import __version__
    from gpuplan.web import api, pages

    app = FastAPI(
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
        length = request.headers.get("content-length")
        if length and length.isdigit() and int(length) > REQUEST_LIMIT_BYTES:
            return PlainTextResponse("request body too large", status_code=413)
        language, remember = request_language(request)
        request.state.lang = language
        response = await call_next(request)
        if remember:
            response.set_cookie(LANGUAGE_COOKIE, language, max_age=365 * 86400, samesite="lax")
        return response

    @app.exception_handler(InputError)
    async def input_error(request: Request, error: InputError) -> JSONResponse:
        return JSONResponse({"detail": str(error)}, status_code=422)

    app.include_router(api.router)
    app.include_router(pages.router)
    return app
