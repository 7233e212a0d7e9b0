"""The ``gpuplan`` command line. Each command group lives in its own module and registers here.

Heavy modules (NumPy, the models, pricing) are imported inside the commands, and the root
group builds only the command that runs (`lazy_group.py`), so that ``gpuplan --help`` starts
fast. The exit status follows one rule (`exit_codes.py`); ``--install-completion`` and
``--show-completion`` are Typer's shell completion for bash, zsh, fish and PowerShell.
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
from gpuplan.cli.exit_codes import BAD_INPUT, EXIT_CODES_HELP
from gpuplan.cli.lazy_group import LazyCommandGroup
from gpuplan.cli.localized_help import LANGUAGE_HELP
from gpuplan.errors import InputError

PROGRAM_NAME = "gpuplan"
"""The name in usage lines and completion scripts, also under ``python -m gpuplan``."""

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
    epilog=EXIT_CODES_HELP,
    cls=GpuplanGroup,
    no_args_is_help=True,
    pretty_exceptions_enable=False,
    rich_markup_mode="rich",
)


def installed_version() -> str:
    """The version of the installed distribution (its metadata), else of the running package
    (a clone on ``PYTHONPATH``); both come from ``gpuplan.__version__`` (pyproject's dynamic
    version)."""
    from importlib import metadata

    try:
        return metadata.version("gpuplan")
    except metadata.PackageNotFoundError:
        from gpuplan import __version__

        return __version__


def show_version(value: bool) -> None:
    if value:
        typer.echo(f"{PROGRAM_NAME} {installed_version()}")
        raise typer.Exit()


@app.callback()
def global_options(
    lang: Annotated[
        str | None,
        typer.Option("--lang", help=LANGUAGE_HELP, metavar="LANG"),
    ] = None,
    version: Annotated[
        bool,
        typer.Option(
            "--version", help="Print the version and exit.", is_eager=True, callback=show_version
        ),
    ] = False,
) -> None:
    """The language is already applied: the root group reads ``--lang`` from the whole command
    line before parsing (`localized_help.py`)."""


def main() -> None:
    """Entry point: run the app; bad input becomes one line on stderr and exit code 2."""
    try:
        app(prog_name=PROGRAM_NAME)
    except InputError as error:
        from gpuplan.i18n import current_language, translate

        message = error.text(current_language())
        typer.echo(translate("cli.error", message=message), err=True)
        sys.exit(BAD_INPUT)
