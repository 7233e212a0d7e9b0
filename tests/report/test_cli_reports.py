"""`--report`, `--format md` and `--lang zh` on the answering commands."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def _run(*arguments: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-c", "from gpuplan.cli.app import main; main()", *arguments],
        capture_output=True,
        text=True,
        check=False,
        cwd=ROOT,
        env={"COLUMNS": "200", "PATH": "/usr/bin:/bin", **(env or {})},
    )


def test_plan_writes_an_html_report(tmp_path):
    target = tmp_path / "plan.html"
    result = _run("plan", "--preset", "student", "--limit", "3", "--report", str(target))
    assert result.returncode == 0, result.stderr
    html = target.read_text("utf-8")
    assert html.startswith("<!DOCTYPE html>") and "<svg" in html
    assert f"wrote {target}" in result.stdout


def test_plan_prints_markdown_in_chinese():
    result = _run("--lang", "zh", "plan", "--preset", "student", "--limit", "2", "--format", "md")
    assert result.returncode == 0, result.stderr
    assert result.stdout.startswith("# GPU 租用方案")
    assert "| # | GPU | 报价 | 机器 | 并行布局 |" in result.stdout


def test_the_locale_picks_chinese_table_headings():
    result = _run("tco", "examples/seed-tco.toml", env={"LANG": "zh_CN.UTF-8"})
    assert result.returncode == 0, result.stderr
    assert "自建" in result.stdout and "租用" in result.stdout


def test_estimate_quote_and_tco_reports(tmp_path):
    for arguments in (
        ("estimate", "examples/qlora-8b-rtx4090.yaml"),
        ("quote", "--offer", "xingyu-rtx-4090-x1", "--duration", "40d"),
        ("tco", "examples/seed-tco.toml"),
    ):
        target = tmp_path / f"{arguments[0]}.md"
        result = _run(*arguments, "--report", str(target))
        assert result.returncode == 0, result.stderr
        assert target.read_text("utf-8").startswith("# ")


def test_bad_language_and_format_are_one_line_errors():
    result = _run("--lang", "fr", "tco", "examples/seed-tco.toml")
    assert result.returncode == 2 and result.stderr.startswith("error: --lang")
    result = _run("tco", "examples/seed-tco.toml", "--format", "pdf")
    assert result.returncode == 2 and "--format" in result.stderr
