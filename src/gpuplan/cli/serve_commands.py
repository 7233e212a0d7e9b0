"""`gpuplan serve`: the web app (needs the optional ``web`` extra: FastAPI and uvicorn)."""

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


BLAS_THREAD_VARIABLES = ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS")
"""Each worker's NumPy runs one BLAS thread: the search's arrays are too small for BLAS threads
to gain wall-clock time, and N workers x M threads oversubscribe the cores."""


def serve(
    host: Annotated[
        str, typer.Option(help="Address to bind; another than loopback needs --allow-remote.")
    ] = "127.0.0.1",
    port: Annotated[int, typer.Option(help="TCP port.", min=1, max=65535)] = 8000,
    workers: Annotated[
        int,
        typer.Option(
            help="Worker processes; one plan uses one core, so up to the number of cores.",
            min=1,
            max=256,
        ),
    ] = 1,
    allow_remote: Annotated[
        bool,
        typer.Option(
            "--allow-remote",
            help="Serve a non-loopback --host (no login, no TLS: only on a network you trust).",
        ),
    ] = False,
) -> None:
    import os

    from gpuplan.errors import InputError

    for variable in BLAS_THREAD_VARIABLES:
        os.environ.setdefault(variable, "1")
    loopback = host in ("127.0.0.1", "localhost", "::1")
    if not loopback and not allow_remote:
        raise InputError.of("error.serve_remote", host=host)
    if not loopback:
        hosts = "" if host in ("0.0.0.0", "::") else f"{host},127.0.0.1,localhost"
        os.environ["GPUPLAN_SERVE_HOSTS"] = hosts
        typer.echo(f"warning: serving on {host}: anyone who can reach it can use it", err=True)
    try:
        from gpuplan.web import server
    except ImportError as missing:
        from gpuplan.extras import missing_extra_error

        what = missing.name or "a web dependency"
        raise missing_extra_error(InputError, "gpuplan serve", "web", what) from None
    typer.echo(f"gpuplan serving on http://{host}:{port}/ (Ctrl+C stops it)")
    server.run(host, port, workers)
