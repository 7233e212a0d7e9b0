"""The ``gpuplan`` command line. Each command group lives in its own module and registers here.

Heavy modules (NumPy, the models, pricing) are imported inside the commands, and the root
group builds only the command that runs (`lazy_group.py`), so that ``gpuplan --help`` starts
fast.
"""

from __future__ import annotations

import sys
from typing import Annotated

import typer

from gpuplan.cli import (
    bench_commands,
    catalog_commands,
    estimate_commands,
    plan_commands,
    pricing_commands,
    serve_commands,
)
from gpuplan.cli.lazy_group import LazyCommandGroup
from gpuplan.errors import InputError

commands = typer.Typer(
    add_completion=False, pretty_exceptions_enable=False, rich_markup_mode="rich"
)
plan_commands.register(commands)
catalog_commands.register(commands)
estimate_commands.register(commands)
pricing_commands.register(commands)
bench_commands.register(commands)
serve_commands.register(commands)


class GpuplanGroup(LazyCommandGroup):
    registry = commands


app = typer.Typer(
    name="gpuplan",
    help=(
        "Plan GPU rentals for LLM training: what fits, how long it takes, what it really "
        "costs, and whether the machine delivers what was sold."
    ),
    cls=GpuplanGroup,
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
    rich_markup_mode="rich",
)


@app.callback()
def global_options(
    lang: Annotated[
        str | None,
        typer.Option(
            "--lang", help="Language of tables, messages and reports: en or zh (default: locale)."
        ),
    ] = None,
) -> None:
    from gpuplan.i18n import set_language

    set_language(lang)


def main() -> None:
    """Entry point: run the app; bad input becomes one line on stderr and exit code 2."""
    try:
        app()
    except InputError as error:
        typer.echo(f"error: {error}", err=True)
        sys.exit(2)
