"""Help texts in the reader's language, and ``--lang`` on every command.

Typer reads help texts (docstrings, ``help=``) when it builds a command, before any option is
parsed, so they are English in the code and translated when the command is built or its help is
shown: the gettext catalog holds each under the context ``help`` with the English text as the
``msgid`` (:func:`extract_help`, Babel's extractor for them, finds every one by walking the
commands). The language of a run is read from the whole command line before Click parses it
(:func:`language_in`), so ``gpuplan plan --lang zh --help`` is as Chinese as
``gpuplan --lang zh plan --help``; every command accepts ``--lang`` (:func:`add_language_option`).
Typer's own words (panel titles, ``[default: ...]``, ``[required]``) are its module constants,
set per language from the message catalog (:func:`localize_typer_words`).
"""

from __future__ import annotations

import inspect
from collections.abc import Iterator, Sequence
from typing import Any

from typer import _click as click
from typer.core import TyperOption

HELP_CONTEXT = "help"
LANGUAGE_OPTION = "--lang"
LANGUAGE_HELP = (
    "Language of tables, messages and reports: en or zh (default: GPUPLAN_LANG, else the locale)."
)
_ENGLISH = "_gpuplan_english_help"

TYPER_WORDS = {
    "ARGUMENTS_PANEL_TITLE": "help.arguments",
    "OPTIONS_PANEL_TITLE": "help.options",
    "COMMANDS_PANEL_TITLE": "help.commands",
    "ERRORS_PANEL_TITLE": "help.error",
    "DEFAULT_STRING": "help.default",
    "ENVVAR_STRING": "help.envvar",
    "REQUIRED_LONG_STRING": "help.required",
    "DEPRECATED_STRING": "help.deprecated",
    "ABORTED_TEXT": "help.aborted",
    "RICH_HELP": "help.try_help",
}
"""``typer.rich_utils`` constant -> message key of its text."""


def language_in(arguments: Sequence[str]) -> str | None:
    """The value of the last ``--lang X`` or ``--lang=X`` before a ``--``, else None."""
    found = None
    for position, argument in enumerate(arguments):
        if argument == "--":
            break
        if argument == LANGUAGE_OPTION and position + 1 < len(arguments):
            found = arguments[position + 1]
        elif argument.startswith(LANGUAGE_OPTION + "="):
            found = argument.split("=", 1)[1]
    return found


def language_option() -> TyperOption:
    """``--lang``, accepted by every command; its value is applied by the root group before
    parsing (:func:`language_in`), so the option only has to be known and shown."""
    return TyperOption(
        param_decls=[LANGUAGE_OPTION],
        type=str,
        default=None,
        expose_value=False,
        metavar="LANG",
        help=LANGUAGE_HELP,
    )


def add_language_option(command: click.Command) -> None:
    """Give ``command`` and every subcommand of it a ``--lang`` option, once."""
    for each in _commands(command):
        if not any(LANGUAGE_OPTION in getattr(param, "opts", ()) for param in each.params):
            each.params.append(language_option())


def translate_help(text: str | None, lang: str) -> str | None:
    """``text`` (a docstring or an option's help) in ``lang``; English without a translation."""
    if not text or lang == "en":
        return text
    from gpuplan.i18n import translations

    english = inspect.cleandoc(text)
    translated = translations(lang).pgettext(HELP_CONTEXT, english)
    return text if translated == english else translated


def localize(command: click.Command, lang: str) -> None:
    """Put the help texts of ``command``, its parameters and its subcommands in ``lang``; the
    English is kept on the command, so a second call can switch back."""
    localize_typer_words(lang)
    for each in _commands(command):
        english: dict[tuple[Any, str], str | None] = each.__dict__.setdefault(
            _ENGLISH, _help_texts(each)
        )
        for (owner, attribute), text in english.items():
            setattr(owner, attribute, translate_help(text, lang))


def localize_typer_words(lang: str) -> None:
    """Typer's panel titles, option notes and usage errors (``cli.usage_errors``) in ``lang``.
    Typer's Rich help module is imported only for a language other than English (it pulls in
    Markdown rendering, which English help of the root command does not need)."""
    import sys

    from gpuplan.i18n import translate

    rich_utils = sys.modules.get("typer.rich_utils")
    if rich_utils is None and lang == "en":
        return
    if rich_utils is None:
        from typer import rich_utils
    for constant, key in TYPER_WORDS.items():
        setattr(rich_utils, constant, translate(key, lang))
    from gpuplan.cli.usage_errors import localize_usage_errors

    localize_usage_errors(rich_utils, lang)


def _commands(command: click.Command) -> Iterator[click.Command]:
    yield command
    for sub in getattr(command, "commands", {}).values():
        yield from _commands(sub)


def _help_texts(command: click.Command) -> dict[tuple[Any, str], str | None]:
    """(object, attribute) -> English text, for the command's help, short help, epilog, each
    parameter's help and the help option's."""
    texts: dict[tuple[Any, str], str | None] = {
        (command, name): getattr(command, name) for name in ("help", "short_help", "epilog")
    }
    help_option = command.get_help_option(click.Context(command))
    params = [*command.params, *([help_option] if help_option else [])]
    for param in params:
        if getattr(param, "help", None):
            texts[(param, "help")] = param.help  # type: ignore[attr-defined]
    return texts


def help_texts(command: click.Command) -> Iterator[str]:
    """Every help text of ``command`` and its subcommands, cleaned as the catalog holds it."""
    for each in _commands(command):
        for text in _help_texts(each).values():
            if text and any(character.isalpha() for character in text):
                yield inspect.cleandoc(text)


def extract_help(
    fileobj: Any, keywords: Any, comment_tags: Any, options: Any
) -> Iterator[tuple[int, str, tuple[str, str], list[str]]]:
    """A Babel extraction method (``babel.cfg``): every help text of every command, as
    ``message("help", text)``, found by building the commands rather than by reading a file."""
    import typer.main

    from gpuplan.cli.app import app

    root = typer.main.get_command(app)
    add_language_option(root)
    found = list(help_texts(root))
    context = click.Context(root)
    for name in root.list_commands(context):  # type: ignore[attr-defined]
        built = root.get_command(context, name)  # type: ignore[attr-defined]
        found.extend(help_texts(built))
    for text in dict.fromkeys(found):
        yield 0, "message", (HELP_CONTEXT, text), []
