"""What a command line is expected to have: ``--version``, ``python -m``, shell completion, a
typed package, documented exit codes, help that Rich prints as written, install hints that work."""

from __future__ import annotations

import os
import re
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest
import typer.main
from rich.errors import StyleSyntaxError
from rich.style import Style
from rich.text import Text
from typer import _click as click
from typer.core import TyperGroup

import gpuplan
from gpuplan import extras
from gpuplan.cli import exit_codes
from gpuplan.cli.app import app
from gpuplan.cli.lazy_group import RICH_MARKUP_TAG, plain_text

ROOT = Path(__file__).resolve().parents[2]


def run(*args: str, module: bool = False, **env: str) -> subprocess.CompletedProcess[str]:
    command = [sys.executable, "-m", "gpuplan"] if module else [
        sys.executable, "-c", "from gpuplan.cli.app import main; main()"
    ]  # fmt: skip
    return subprocess.run(
        [*command, *args],
        capture_output=True,
        text=True,
        check=False,
        env={**os.environ, "COLUMNS": "200", **env},
    )


def test_version_is_the_package_version_from_one_place():
    pyproject = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    assert "version" in pyproject["project"]["dynamic"]
    assert pyproject["tool"]["setuptools"]["dynamic"]["version"] == {"attr": "gpuplan.__version__"}
    result = run("--version")
    assert result.returncode == 0 and result.stdout == f"gpuplan {gpuplan.__version__}\n"


def test_python_dash_m_is_the_same_command_line():
    by_module = run("--help", module=True)
    assert by_module.returncode == 0
    assert by_module.stdout == run("--help").stdout
    assert by_module.stdout.startswith("Usage: gpuplan ")
    assert run("--version", module=True).stdout == f"gpuplan {gpuplan.__version__}\n"


def test_shell_completion_is_offered_and_completes_commands_and_options():
    assert "--install-completion" in run("--help").stdout
    script = run("--show-completion", "bash")
    assert script.returncode == 0 and "_GPUPLAN_COMPLETE" in script.stdout
    words = {"_GPUPLAN_COMPLETE": "complete_bash", "COMP_CWORD": "1", "COMP_WORDS": "gpuplan pl"}
    assert run(**words).stdout.split() == ["plan"]
    words.update(COMP_CWORD="2", COMP_WORDS="gpuplan plan --pre")
    assert set(run(**words).stdout.split()) == {"--preset", "--precision"}


def test_the_package_is_typed_and_ships_the_marker():
    assert (Path(gpuplan.__file__).parent / "py.typed").is_file()
    pyproject = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    assert "py.typed" in pyproject["tool"]["setuptools"]["package-data"]["gpuplan"]


def test_exit_codes_are_in_the_root_help_and_the_readme():
    help_text = " ".join(run("--help").stdout.split())
    assert " ".join(exit_codes.EXIT_CODES_HELP.split()) in help_text
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    section = readme.split("### Exit status", 1)[1].split("\n#", 1)[0]
    for code in (exit_codes.ANSWER, exit_codes.NEGATIVE_VERDICT, exit_codes.BAD_INPUT):
        assert f"| {code} |" in section


# --- help that Rich prints as written ---------------------------------------------------


def _commands(command: click.Command, context: click.Context) -> list[click.Command]:
    found = [command]
    if isinstance(command, TyperGroup):
        for name in command.list_commands(context):
            child = command.get_command(context, name)
            assert child is not None
            found += _commands(child, click.Context(child, parent=context, info_name=name))
    return found


def _help_texts() -> list[tuple[str, str]]:
    root = typer.main.get_command(app)
    texts = []
    for command in _commands(root, click.Context(root, info_name="gpuplan")):
        texts += [(command.name or "gpuplan", text) for text in (command.help, command.epilog)]
        texts += [
            (f"{command.name} {param.name}", getattr(param, "help", None))
            for param in command.params
        ]
    return [(where, text) for where, text in texts if text]


def _is_style(tag: str) -> bool:
    if tag.startswith("/"):
        return True
    try:
        Style.parse(tag)
    except StyleSyntaxError:
        return False
    return True


def test_every_bracket_in_help_is_a_style_or_escaped():
    """Rich reads ``[word]`` as a style tag and drops it (``gpuplan[bench]`` printed
    ``gpuplan``): every unescaped tag in a help text must be a deliberate style."""
    texts = _help_texts()
    assert len(texts) > 50
    for where, text in texts:
        for tag in RICH_MARKUP_TAG.finditer(text):
            escaped = len(tag.group(1)) % 2 == 1
            assert escaped or _is_style(tag.group(2)), f"{where}: [{tag.group(2)}] is eaten by Rich"


def test_the_bench_help_shows_both_install_commands():
    out = " ".join(run("bench", "--help").stdout.split())
    assert "pip install 'gpuplan[bench]'" in out and "pip install -e '.[bench]'" in out
    root = " ".join(run("--help").stdout.split())
    assert "\\[" not in root


@pytest.mark.parametrize(
    "markup",
    [
        "plain",
        "[bold]Examples[/bold] and [dim]# a comment[/dim]",
        r"pip install 'gpuplan\[bench]'",
        r"a \\[bold]literal backslash[/bold]",
        "[1] stays, [red]a[/] goes",
    ],
)
def test_the_root_listing_strips_markup_as_rich_does(markup):
    assert plain_text(markup) == Text.from_markup(markup).plain


# --- exit codes, command by command ------------------------------------------------------

EXAMPLE = ROOT / "examples" / "llama-8b-fsdp-8xh100.yaml"


@pytest.fixture
def too_big(tmp_path: Path) -> Path:
    """The example at a micro-batch that cannot fit 80 GB (its activations grow with it)."""
    text = EXAMPLE.read_text(encoding="utf-8")
    path = tmp_path / "too-big.yaml"
    path.write_text(re.sub(r"micro_batch: \d+", "micro_batch: 8", text), encoding="utf-8")
    assert gpuplan.estimate(path)["memory"]["fits"] is False
    return path


def test_estimate_exits_0_when_it_fits_and_1_when_it_does_not(cli, too_big):
    assert cli("estimate", str(EXAMPLE))[0] == exit_codes.ANSWER
    code, out, err = cli("estimate", str(too_big))
    assert code == exit_codes.NEGATIVE_VERDICT and err == ""
    assert "does not fit" in " ".join(out.split())
    code, out, _ = cli("estimate", str(too_big), "--json")
    assert code == exit_codes.NEGATIVE_VERDICT
    import json

    assert json.loads(out)["memory"]["fits"] is False


def test_memory_exits_1_when_it_does_not_fit(cli):
    fits = ("memory", "--model", "llama-3.1-8b", "--method", "qlora", "--gpu", "rtx-4090-24gb",
            "--seq-len", "4096", "--recompute", "full")  # fmt: skip
    assert cli(*fits)[0] == exit_codes.ANSWER
    code, out, _ = cli("memory", "--model", "llama-3.1-70b", "--gpu", "rtx-4090-24gb", "--json")
    assert code == exit_codes.NEGATIVE_VERDICT and '"fits": false' in out


def test_memory_takes_a_hybrid_shard_group(cli):
    """``--shard-group 8`` on 64 GPUs keeps 8x the optimizer states of full sharding, says the
    group in the layout, and a group that does not divide the ranks is a one-line error."""
    import json

    flags = ("memory", "--model", "llama-3.1-8b", "--gpu", "h100", "--count", "64", "--zero", "3",
             "--framework", "fsdp")  # fmt: skip
    full = json.loads(cli(*flags, "--json")[1])
    hybrid = json.loads(cli(*flags, "--shard-group", "8", "--json")[1])
    assert hybrid["parts"]["optimizer"] == pytest.approx(8 * full["parts"]["optimizer"])
    assert "shard_group=8" in " ".join(cli(*flags, "--shard-group", "8")[1].split())
    code, out, err = cli(*flags, "--shard-group", "7")
    assert code == exit_codes.BAD_INPUT and out == "" and "strategy.shard_group" in err


def test_a_quote_of_a_scenario_that_does_not_fit_says_so_and_exits_1(cli, too_big):
    offer = ("quote", "--offer", "lambda-h100-sxm-x8")
    assert cli(*offer, str(EXAMPLE))[0] == exit_codes.ANSWER
    code, out, _ = cli(*offer, str(too_big))
    assert code == exit_codes.NEGATIVE_VERDICT
    assert "does not fit on h100-sxm-80gb" in " ".join(out.split())


def test_bad_input_exits_2_on_one_line(cli, tmp_path):
    code, out, err = cli("estimate", str(tmp_path / "missing.yaml"))
    assert code == exit_codes.BAD_INPUT and out == "" and err.count("\n") == 1


# --- install hints -----------------------------------------------------------------------


def test_from_this_checkout_the_hint_installs_the_checkout(monkeypatch):
    assert extras.source_checkout() == ROOT
    monkeypatch.chdir(ROOT)
    assert extras.install_hint("bench") == "pip install -e '.[bench]'"
    monkeypatch.chdir(ROOT / "tests")
    assert extras.install_hint("web") == f"pip install -e '{ROOT}[web]'"


@pytest.mark.parametrize(
    ("origin", "hint"),
    [
        (("/src/gpuplan", True), "pip install -e '/src/gpuplan[hf]'"),
        (
            ("/tmp/gpuplan-0.1.0-py3-none-any.whl", False),
            "pip install '/tmp/gpuplan-0.1.0-py3-none-any.whl[hf]'",
        ),
        (None, "pip install 'gpuplan[hf]'"),
    ],
)
def test_an_installed_copy_is_told_where_it_came_from(monkeypatch, origin, hint):
    monkeypatch.setattr(extras, "source_checkout", lambda: None)
    monkeypatch.setattr(extras, "_installed_from", lambda: origin)
    assert extras.install_hint("hf") == hint


def test_a_missing_extra_is_one_line_naming_it_and_the_command():
    message = extras.missing_extra_message("gpuplan serve", "web", "fastapi")
    assert "\n" not in message and "web extra" in message and "fastapi is not installed" in message
    assert message.endswith(extras.install_hint("web"))
