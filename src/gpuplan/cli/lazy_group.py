"""The root command group: builds a subcommand only when it runs.

Typer turns every registered function into a Click command up front: it reads each signature
and builds each parameter, about 1.5 ms a command. `gpuplan plan` needs one command, and
`gpuplan --help` needs none, only names and first lines of help, which the registry already
holds. This group keeps the registry and builds on demand, through Typer's own
`get_command_from_info` / `get_group_from_info`, so a subcommand behaves exactly as if Typer had
built it. The root help is Click's plain text: Typer's Rich help imports Markdown rendering
(about 80 ms) that a list of command names does not need; subcommands keep their Rich help.
"""

from __future__ import annotations

import inspect
import re

import typer
import typer.main
from typer import _click as click
from typer.core import TyperGroup
from typer.models import CommandInfo, TyperInfo

from gpuplan.cli.localized_help import add_language_option, language_in, localize, translate_help
from gpuplan.i18n import current_language, set_language, translate

RICH_MARKUP_TAG = re.compile(r"(\\*)\[([a-z#/@][^[]*?)]")
"""A Rich markup tag with the backslashes before it: Rich's own pattern (``rich.markup.RE_TAGS``)."""


def plain_text(markup: str) -> str:
    """``markup`` as Rich prints it, without styles: tags removed, ``\\[`` an escaped bracket
    (Rich's rule: of the backslashes before a tag, each pair prints one, an odd one escapes it)."""

    def shown(tag: re.Match[str]) -> str:
        backslashes, escaped = divmod(len(tag.group(1)), 2)
        return "\\" * backslashes + (f"[{tag.group(2)}]" if escaped else "")

    return RICH_MARKUP_TAG.sub(shown, markup)


def command_name(info: CommandInfo | TyperInfo) -> str:
    """The name a registered command or group is called by."""
    if info.name:
        return str(info.name)
    callback = info.callback
    assert callback is not None, "a registered command needs a name or a callback"
    return typer.main.get_command_name(callback.__name__)


def first_line_of_help(info: CommandInfo | TyperInfo, width: int, lang: str = "en") -> str:
    """The root listing's line for a command: its help's first paragraph in `lang`, markup
    removed, cut to `width` columns (at a word in English; a CJK character counts two)."""
    if isinstance(info, TyperInfo):
        text = typer.main.solve_typer_info_help(info)
    else:
        text = info.help if isinstance(info.help, str) else (info.callback.__doc__ or "")
    text = translate_help(inspect.cleandoc(text), lang) or ""
    paragraph = plain_text(text).split("\n\n")[0]
    line = " ".join(paragraph.split())
    if _columns(line) <= width:
        return line
    if line.isascii():
        return line[: max(width - 3, 1)].rsplit(" ", 1)[0] + "..."
    cut = ""
    for character in line:
        if _columns(cut + character) > width - 3:
            break
        cut += character
    return cut + "..."


def _columns(text: str) -> int:
    """Terminal columns of `text`: East Asian wide and full-width characters take two."""
    from unicodedata import east_asian_width

    return sum(2 if east_asian_width(character) in "WF" else 1 for character in text)


class LazyCommandGroup(TyperGroup):
    """A Typer group whose subcommands come from `registry` and are built when first asked for."""

    registry: typer.Typer

    def _infos(self) -> dict[str, CommandInfo | TyperInfo]:
        infos: dict[str, CommandInfo | TyperInfo] = {}
        for info in self.registry.registered_commands:
            infos[command_name(info)] = info
        for group in self.registry.registered_groups:
            infos[command_name(group)] = group
        return infos

    def list_commands(self, ctx: click.Context) -> list[str]:
        return list(self._infos())

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        if cmd_name not in self.commands:
            info = self._infos().get(cmd_name)
            if info is None:
                return None
            command = self._build(info)
            add_language_option(command)
            self.commands[cmd_name] = command
        localize(self.commands[cmd_name], current_language())
        return self.commands[cmd_name]

    def _build(self, info: CommandInfo | TyperInfo) -> click.Command:
        settings = self.registry.pretty_exceptions_short
        markup = self.registry.rich_markup_mode
        if isinstance(info, TyperInfo):
            return typer.main.get_group_from_info(
                info,
                pretty_exceptions_short=settings,
                suggest_commands=self.registry.suggest_commands,
                rich_markup_mode=markup,
            )
        return typer.main.get_command_from_info(
            info, pretty_exceptions_short=settings, rich_markup_mode=markup
        )

    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        set_language(language_in(args))
        localize(self, current_language())
        if not args and self.no_args_is_help and not ctx.resilient_parsing:
            click.echo(ctx.get_help(), color=ctx.color)
            ctx.exit(2)
        return super().parse_args(ctx, args)

    def format_help(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        click.Command.format_help(self, ctx, formatter)

    def format_options(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        rows = [row for param in self.get_params(ctx) if (row := param.get_help_record(ctx))]
        if rows:
            with formatter.section(translate("help.options")):
                formatter.write_dl(rows)
        self.format_commands(ctx, formatter)

    def format_commands(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        shown = {
            name: info
            for name, info in self._infos().items()
            if not (isinstance(info, CommandInfo) and info.hidden)
        }
        width = formatter.width - 6 - max(map(len, shown), default=0)
        rows = [
            (name, first_line_of_help(info, width, current_language()))
            for name, info in shown.items()
        ]
        if rows:
            with formatter.section(translate("help.commands")):
                formatter.write_dl(rows)
