"""`gpuplan serve`: the web app (needs the optional [web] extra: FastAPI and uvicorn)."""

from __future__ import annotations

from typing import Annotated

import typer


def register(app: typer.Typer) -> None:
    app.command(
        "serve",
        help=(
            "Open plan, estimate, quote, TCO and the catalog in a browser, with a JSON API under "
            "/api/ (OpenAPI at /openapi.json). Binds 127.0.0.1 unless --host says otherwise."
        ),
    )(serve)


def serve(
    host: Annotated[str, typer.Option(help="Address to bind; 0.0.0.0 exposes it.")] = "127.0.0.1",
    port: Annotated[int, typer.Option(help="TCP port.", min=1, max=65535)] = 8000,
) -> None:
    from gpuplan.errors import InputError

    try:
        import uvicorn

        from gpuplan.web.app import create_app
    except ImportError as missing:
        raise InputError(
            f"gpuplan serve needs the web extra ({missing.name} is missing): "
            "pip install 'gpuplan[web]'"
        ) from None
    typer.echo(f"gpuplan serving on http://{host}:{port}/ (Ctrl+C stops it)")
    uvicorn.run(create_app(), host=host, port=port, log_level="warning")
