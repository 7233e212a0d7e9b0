"""Fuzzed command lines: every command with any values for its options ends with exit code
0, 1 or 2, one error line at most, and no traceback (an exception would escape ``main``)."""

from __future__ import annotations

import sys

import pytest
from hypothesis import event, given
from hypothesis import strategies as st

from gpuplan.cli.app import main

from .bounds import bounded, fuzz_settings
from .strategies import unit_strings

pytestmark = pytest.mark.fuzz

texts = unit_strings | st.text(max_size=12) | st.sampled_from(["nan", "inf", "-1", "0", "1e400"])


def valid(*choices: str) -> st.SearchStrategy[str]:
    return st.sampled_from(choices)


COMMANDS: dict[tuple[str, ...], dict[str, st.SearchStrategy[str]]] = {
    ("plan", "--model", "llama-3.1-8b", "--method", "qlora"): {
        "--tokens": valid("100M", "1B", "2.5e8"), "--seq-len": valid("1024", "4096"),
        "--global-batch": valid("16", "64"), "--budget": valid("$500", "¥2000", "1e4"),
        "--deadline": valid("30d", "12h"), "--max-gpus": valid("1", "8", "64"),
        "--headroom": valid("0.1", "0"), "--currency": valid("USD", "CNY"),
        "--gpu": valid("h100", "rtx-4090", "A100-80GB"), "--lora-rank": valid("8", "64"),
        "--precision": valid("bf16", "fp8"), "--limit": valid("1", "5"),
        "--objective": valid("cost", "time", "pareto"), "--billing": valid("hourly", "spot"),
    },
    ("memory", "--model", "llama-3.1-8b", "--gpu", "h100"): {
        "--gpu": valid("h100", "910B", "rtx-4090"), "--seq-len": valid("2048", "8192"),
        "--method": valid("full", "lora", "qlora"), "--count": valid("1", "8"),
        "--micro-batch": valid("1", "4"), "--tp": valid("1", "2"), "--pp": valid("1", "2"),
        "--zero": valid("0", "3"), "--recompute": valid("none", "selective", "full"),
        "--lora-rank": valid("16"), "--trainable-layers": valid("4"),
        "--offload": valid("none", "optimizer"),
    },
    ("quote", "--offer", "xingyu-a100-40gb-x4", "--duration", "40d"): {
        "--duration": valid("40d", "3h", "1y"), "--tokens": valid("1B"),
        "--tax-rate": valid("0.06", "0"), "--count": valid("1", "3"),
        "--currency": valid("USD", "CNY"), "--storage": valid("500GB", "2TiB"),
        "--tokens-per-second": valid("5000"), "--interruptions-per-hour": valid("0.05"),
        "--idle": valid("2d"), "--egress": valid("100GB"), "--public-ips": valid("1"),
        "--restart-overhead": valid("30m"), "--discount": valid("星宇智算=0.9"),
        "--fx": valid("USD/CNY=7.1", "CNY=7.1", "EUR=0.92"),
    },
    ("offers",): {
        "--gpu": valid("H100", "rtx-4090"), "--provider": valid("Lambda", "星宇智算"),
        "--stale-after": valid("90d", "1y"), "--discount": valid("Lambda=0.8"),
        "--fx": valid("USD/CNY=7.1", "CNY=7.1"),
    },
    ("model",): {},
    ("gpu",): {},
}  # fmt: skip
"""Each command with a valid value for each option; a drawn case changes at most one."""
POSITIONAL = {("model",): valid("llama-3.1-8b", "qwen3-30b-a3b"), ("gpu",): valid("h100")}


@st.composite
def command_lines(draw: st.DrawFn) -> list[str]:
    command = draw(st.sampled_from(sorted(COMMANDS)))
    arguments = list(command)
    options = COMMANDS[command]
    chosen = (
        draw(st.lists(st.sampled_from(sorted(options)), unique=True, max_size=4)) if options else []
    )
    slots = ["positional"] if command in POSITIONAL else []
    slots += chosen
    hostile_slot = draw(st.sampled_from([None, *slots]))
    if command in POSITIONAL:
        arguments.append(draw(texts if hostile_slot == "positional" else POSITIONAL[command]))
    for option in chosen:
        arguments += [option, draw(texts if option == hostile_slot else options[option])]
    if draw(st.booleans()):
        arguments.append("--json")
    return arguments


@fuzz_settings(share=1.0)
@given(arguments=command_lines())
def test_a_fuzzed_command_line_exits_0_1_or_2(arguments, capsys):
    def run() -> int:
        sys.argv = ["gpuplan", *arguments]
        try:
            main()
        except SystemExit as done:
            return done.code if isinstance(done.code, int) else 1
        return 0

    saved = sys.argv
    try:
        code = bounded(run)
    finally:
        sys.argv = saved
    captured = capsys.readouterr()
    event(f"{arguments[0]}: exit {code}")
    assert code in (0, 1, 2), (arguments, code, captured.err[-500:])
    if code == 2:
        assert captured.err.count("\n") <= 2 or "Usage" in captured.err, captured.err[-500:]
        assert len(captured.err) < 4000
