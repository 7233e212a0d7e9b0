"""The root command: lazily built subcommands, a plain root help, and a light start."""

from __future__ import annotations

import subprocess
import sys

import pytest
import typer.main

from gpuplan.cli.app import app, commands
from gpuplan.cli.lazy_group import command_name

REGISTERED = [command_name(info) for info in commands.registered_commands] + [
    command_name(group) for group in commands.registered_groups
]


def test_the_root_help_lists_every_command_with_its_first_line(cli):
    code, out, _ = cli("--help")
    assert code == 0
    listing = out.split("Commands:")[1]
    for name in REGISTERED:
        assert f"\n  {name} " in listing
    assert "Search every GPU type" in listing and "Does the machine deliver" in listing
    assert "[bold]" not in out and "[dim]" not in out


def test_no_arguments_print_the_help_and_exit_2(cli):
    code, out, _ = cli()
    assert code == 2 and "Usage:" in out and "Commands:" in out


def test_an_unknown_command_is_a_usage_error(cli):
    code, _, err = cli("plna")
    assert code == 2 and "No such command" in err


@pytest.mark.parametrize("name", REGISTERED)
def test_every_command_builds_and_shows_its_help(cli, name):
    code, out, _ = cli(name, "--help")
    assert code == 0 and f"gpuplan {name}" in out


def test_only_the_command_that_runs_is_built():
    group = typer.main.get_command(app)
    assert group.commands == {}
    context = group.make_context("gpuplan", ["gpus"])
    assert group.get_command(context, "gpus") is group.get_command(context, "gpus")
    assert list(group.commands) == ["gpus"]
    assert group.get_command(context, "nonexistent") is None


def loaded_modules(*arguments: str) -> set[str]:
    """The modules a fresh `gpuplan ARGUMENTS` process has imported by the time it exits."""
    code = (
        "import atexit, sys\n"
        "atexit.register(lambda: sys.__stderr__.write('\\nMODULES ' + ' '.join(sys.modules)))\n"
        "from gpuplan.cli.app import main\n"
        "main()\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", code, *arguments], capture_output=True, text=True, check=False
    )
    return set(result.stderr.rsplit("MODULES ", 1)[1].split())


def test_the_root_help_loads_no_models_numpy_markdown_or_pydantic():
    modules = loaded_modules("--help")
    heavy = {"numpy", "pydantic", "rich.markdown", "markdown_it", "gpuplan.estimate.memory"}
    assert not heavy & modules


def test_a_plan_loads_no_pydantic_or_markdown():
    modules = loaded_modules("plan", "--preset", "student", "--limit", "1")
    assert "gpuplan.search.plan" in modules
    assert not {"pydantic", "rich.markdown", "fastapi"} & modules


def test_a_short_estimate_shows_its_run_length_in_hours(cli, tmp_path):
    path = tmp_path / "short.yaml"
    path.write_text(
        "model: llama-3.1-8b\nmethod: lora\nseq_len: 4096\nglobal_batch: 64\ntokens: 200M\n"
        "hardware: {gpu: h100-sxm-80gb, count: 8}\n",
        encoding="utf-8",
    )
    code, out, _ = cli("estimate", str(path), "--lang", "en")
    assert code == 0
    line = next(text for text in out.splitlines() if "to train 200M tokens" in text)
    assert " h (" in line and "0.0 days" not in line
    code, out, _ = cli("estimate", str(path), "--lang", "zh")
    assert code == 0 and "小时" in next(t for t in out.splitlines() if "200M" in t and "训练" in t)
