"""Click's usage errors in the reader's language.

Typer parses the command line with its own copy of Click (``typer._click``), whose errors are
English sentences built with f-strings (``No such option: --bogus (Possible options: --gpu)``,
``Missing option '--model'.``), so no gettext catalog can reach them. Each sentence it writes has
a fixed shape: :data:`SENTENCES` matches each shape and names the message that says it in
another language, with the shape's parts (an option's name, the accepted values) kept as they
are. :func:`localize_usage_errors` makes Typer's error printer (``rich_utils.rich_format_error``)
show the usage line and the message so translated; a sentence of no known shape stays English.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

SENTENCES: tuple[tuple[re.Pattern[str], str], ...] = (
    (
        re.compile(r"No such option: (?P<name>\S+) \(Possible options: (?P<options>.+)\)"),
        "usage.no_such_option_possible",
    ),
    (
        re.compile(r"No such option: (?P<name>\S+)\. Did you mean (?P<options>.+)\?"),
        "usage.no_such_option_possible",
    ),
    (re.compile(r"No such option: (?P<name>\S+)"), "usage.no_such_option"),
    (
        re.compile(r"No such command (?P<name>'[^']*')\. Did you mean (?P<options>.+)\?"),
        "usage.no_such_command_possible",
    ),
    (re.compile(r"No such command (?P<name>'[^']*')\."), "usage.no_such_command"),
    (re.compile(r"Missing argument (?P<name>.+?)\.(?P<rest>.*)"), "usage.missing_argument"),
    (re.compile(r"Missing option (?P<name>.+?)\.(?P<rest>.*)"), "usage.missing_option"),
    (re.compile(r"Missing parameter (?P<name>.+?)\.(?P<rest>.*)"), "usage.missing_parameter"),
    (
        re.compile(r"Invalid value for (?P<name>.+?): (?P<problem>.+)", re.DOTALL),
        "usage.invalid_value_for",
    ),
    (re.compile(r"Invalid value: (?P<problem>.+)", re.DOTALL), "usage.invalid_value"),
    (
        re.compile(r"(?P<value>'.*') is not one of (?P<choices>.+)\."),
        "usage.not_one_of",
    ),
    (
        re.compile(r"(?P<value>'.*') is not a valid (?P<kind>[\w ]+)\."),
        "usage.not_a_valid",
    ),
    (
        re.compile(r"Got unexpected extra argument\(s\) \((?P<arguments>.+)\)"),
        "usage.extra_arguments",
    ),
    (
        re.compile(r"Option (?P<name>'[^']*') requires an argument\."),
        "usage.requires_an_argument",
    ),
    (
        re.compile(r"Option (?P<name>'[^']*') requires (?P<count>\d+) arguments\."),
        "usage.requires_arguments",
    ),
    (
        re.compile(r"Option (?P<name>'[^']*') does not take a value\."),
        "usage.takes_no_value",
    ),
)
"""Each English sentence shape of ``typer._click`` and Typer and the key of its message. The
more specific shape of a sentence comes first."""

NESTED = ("problem", "rest")
"""Parts of a sentence that are sentences themselves (the problem with an invalid value)."""

USAGE_PREFIX = "Usage: "
"""How ``typer._click``'s ``HelpFormatter.write_usage`` opens the usage line."""


def translate_usage_error(text: str, lang: str) -> str:
    """``text``, a usage error's message, in ``lang`` when it has a known shape; else as it is."""
    from gpuplan.i18n import translate
    from gpuplan.messages import ENGLISH

    if lang == "en":
        return text
    stripped = text.strip()
    for pattern, key in SENTENCES:
        match = pattern.fullmatch(stripped)
        if match is None:
            continue
        values = {
            name: translate_usage_error(value, lang) if name in NESTED and value else value
            for name, value in match.groupdict(default="").items()
        }
        if "kind" in values and f"usage.kind.{values['kind']}" in ENGLISH:
            values["kind"] = translate(f"usage.kind.{values['kind']}", lang)
        if values.get("rest"):
            values["rest"] = " " + values["rest"].strip()
        return translate(key, lang, **values)
    return text


def translate_usage_line(text: str, lang: str) -> str:
    """The usage line, ``Usage: gpuplan plan [OPTIONS]``, with its opening word in ``lang``."""
    from gpuplan.i18n import translate

    if lang == "en" or not text.startswith(USAGE_PREFIX):
        return text
    return translate("usage.usage", lang) + text[len(USAGE_PREFIX) :]


def localized_error_printer(print_error: Callable[[Any], None], lang: str) -> Callable[[Any], None]:
    """Typer's ``rich_format_error`` showing the usage line and the message in ``lang``."""

    def print_localized(error: Any) -> None:
        message = translate_usage_error(error.format_message(), lang)
        error.format_message = lambda: message
        context = getattr(error, "ctx", None)
        if context is not None:
            usage = translate_usage_line(context.get_usage(), lang)
            context.get_usage = lambda: usage
        print_error(error)

    print_localized.__wrapped__ = print_error  # type: ignore[attr-defined]
    return print_localized


def localize_usage_errors(rich_utils: Any, lang: str) -> None:
    """Make ``rich_utils`` print usage errors in ``lang`` (English: Typer's own printer)."""
    english = getattr(rich_utils.rich_format_error, "__wrapped__", rich_utils.rich_format_error)
    rich_utils.rich_format_error = (
        english if lang == "en" else localized_error_printer(english, lang)
    )
