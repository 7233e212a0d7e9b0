"""`gpuplan plan` from the command line: presets, flags, JSON, and one-line errors."""

from __future__ import annotations

import json

import pytest


def test_preset_prints_a_ranked_table_and_an_explanation(entry_point):
    result = entry_point("plan", "--preset", "student")
    assert result.returncode == 0, result.stderr
    assert "wins on cost" in result.stdout
    assert "rtx" in result.stdout
    text = " ".join(result.stdout.split())
    assert "Job: llama-3.1-8b, qlora, 100M tokens" in text
    assert "global batch 32 sequences" in text
    assert "1 GPU, no cluster network" in text


def test_the_report_and_the_chinese_table_restate_the_job(cli):
    code, markdown, _ = cli("plan", "--preset", "student", "--format", "md", "--limit", "2")
    assert code == 0
    assert "global batch 32 sequences" in markdown
    assert "| global batch | 32 |" in markdown
    code, chinese, _ = cli("--lang", "zh", "plan", "--preset", "student", "--limit", "2")
    assert code == 0
    assert "全局批大小 32 条序列" in " ".join(chinese.split())


def test_json_output_has_the_contract_keys(entry_point):
    result = entry_point(
        "plan",
        "--model",
        "llama-3.1-8b",
        "--method",
        "qlora",
        "--tokens",
        "50M",
        "--json",
        "--limit",
        "3",
    )
    assert result.returncode == 0, result.stderr
    data = json.loads(result.stdout)
    assert set(data) >= {"plans", "evaluated", "seconds"}
    plan = data["plans"][0]
    assert plan["memory"]["peak_bytes"] > 0 and plan["duration"]["seconds"] > 0
    assert isinstance(plan["cost"]["total"], float)


def test_flags_override_the_preset(entry_point):
    result = entry_point(
        "plan", "--preset", "student", "--model", "qwen2.5-7b", "--json", "--limit", "1"
    )
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout)["plans"]


@pytest.mark.parametrize(
    ("arguments", "expected"),
    [
        (("plan", "--model", "llama-3.1-8b", "--gpu", "H1000"), "did you mean"),
        (("plan", "--model", "llama-3.1-8b", "--budget", "-3 USD"), "budget"),
        (("plan", "--model", "llama-3.1-8b", "--deadline", "soon"), "duration"),
        (("plan", "--preset", "hobbyist"), "preset"),
        (("plan",), "model"),
    ],
)
def test_bad_input_is_one_line_with_exit_code_2(entry_point, arguments, expected):
    result = entry_point(*arguments)
    assert result.returncode == 2
    assert expected in result.stderr
    assert "Traceback" not in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1


NO_PLAN = [
    (("plan", "--model", "llama-3.1-70b", "--tokens", "10B", "--deadline", "1h"), "deadline 1h"),
    (
        ("plan", "--model", "llama-3.1-405b", "--max-gpus", "2", "--gpu", "rtx4090"),
        "nothing fits",
    ),
]


@pytest.mark.parametrize(("arguments", "expected"), NO_PLAN)
def test_no_plan_is_a_negative_verdict_with_exit_code_1(entry_point, arguments, expected):
    """No plan within the limits is an answer, not bad input: the job and why, then exit 1."""
    result = entry_point(*arguments)
    assert result.returncode == 1, result.stderr
    assert result.stderr == ""
    assert "no plan: " in result.stdout and expected in result.stdout
    as_json = entry_point(*arguments, "--json")
    assert as_json.returncode == 1
    answer = json.loads(as_json.stdout)
    assert answer["plans"] == [] and expected in answer["explanation"]
