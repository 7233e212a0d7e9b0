"""Click's usage errors in the reader's language (``cli.usage_errors``)."""

from __future__ import annotations

import re

import pytest

from gpuplan.cli.usage_errors import SENTENCES, translate_usage_error, translate_usage_line
from gpuplan.messages import ENGLISH

CJK = re.compile(r"[\u4e00-\u9fff]")

EXAMPLES = {
    "No such option: --bogus (Possible options: --gpu)": ["--bogus", "--gpu"],
    "No such option: --bogus. Did you mean '--gpu'?": ["--bogus", "'--gpu'"],
    "No such option: --bogus": ["--bogus"],
    "No such command 'plann'. Did you mean 'plan'?": ["'plann'", "'plan'"],
    "No such command 'plann'.": ["'plann'"],
    "Missing argument 'FILE'.": ["'FILE'"],
    "Missing option '--offer'.": ["'--offer'"],
    "Missing parameter 'x'.": ["'x'"],
    "Invalid value for '--max-gpus': 'x' is not a valid int.": ["'--max-gpus'", "'x'"],
    "Invalid value: 'x' is not one of 'cost', 'time'.": ["'x'", "'cost', 'time'"],
    "'x' is not one of 'cost', 'time'.": ["'x'", "'cost', 'time'"],
    "'x' is not a valid float.": ["'x'"],
    "Got unexpected extra argument(s) (a b)": ["a b"],
    "Option '--gpu' requires an argument.": ["'--gpu'"],
    "Option '--fx' requires 2 arguments.": ["'--fx'", "2"],
    "Option '--wide' does not take a value.": ["'--wide'"],
}


def test_every_shape_names_a_message_and_has_an_example() -> None:
    keys = {key for _, key in SENTENCES}
    assert keys <= set(ENGLISH)
    matched = {key for text in EXAMPLES for pattern, key in SENTENCES if pattern.fullmatch(text)}
    assert matched == keys


@pytest.mark.parametrize("english", list(EXAMPLES))
def test_each_shape_reads_in_chinese_with_its_parts_kept(english: str) -> None:
    chinese = translate_usage_error(english, "zh")
    assert CJK.search(chinese), chinese
    assert not re.search(r"\b(Invalid|Missing|such|option|not one of|valid|requires)\b", chinese)
    for part in EXAMPLES[english]:
        assert part in chinese, (part, chinese)
    assert translate_usage_error(english, "en") == english


def test_a_sentence_of_no_known_shape_stays_as_it_is() -> None:
    assert translate_usage_error("something else went wrong", "zh") == "something else went wrong"
    assert translate_usage_line("Usage: gpuplan plan [OPTIONS]", "zh").startswith("用法：gpuplan")


def test_the_command_line_shows_usage_errors_in_its_language(entry_point) -> None:
    chinese = entry_point("plan", "--lang", "zh", "--bogus")
    assert chinese.returncode == 2
    assert "用法：gpuplan plan" in chinese.stderr and "没有这个选项：--bogus" in chinese.stderr
    assert "No such option" not in chinese.stderr and "Usage:" not in chinese.stderr
    english = entry_point("plan", "--bogus")
    assert english.returncode == 2
    assert "Usage: gpuplan plan" in english.stderr and "No such option: --bogus" in english.stderr
    missing = entry_point("quote", "--lang", "zh")
    assert missing.returncode == 2 and "缺少选项 '--offer'" in missing.stderr
