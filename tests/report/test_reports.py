"""Reports: self-contained HTML with SVG charts and the answer first, Markdown, and Chinese."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from gpuplan.report import render
from gpuplan.report.html import render_html
from gpuplan.report.markdown import render_markdown

ROOT = Path(__file__).resolve().parents[2]
STUDENT = {
    "model": "llama-3.1-8b",
    "method": "qlora",
    "seq_len": 2048,
    "global_batch": 32,
    "tokens": "100M",
}
STARTUP = {
    "model": "llama-3.1-70b",
    "method": "full",
    "tokens": "2B",
    "seq_len": 4096,
    "global_batch": 256,
}


def _plan_report(scenario, lang, **options):
    from gpuplan.api import plan_search
    from gpuplan.report.plan import build_plan_report, collect_plan_details

    result = plan_search(scenario, **options)
    details = collect_plan_details(result, scenario, options)
    return build_plan_report(result, scenario, details, lang, options)


@pytest.fixture(scope="module")
def startup_report():
    return _plan_report(
        STARTUP, "en", budget="¥100000", deadline="30d", max_gpus=64, gpus=("h100-sxm-80gb",)
    )


def _assert_self_contained(html: str) -> None:
    assert not re.search(r"""(?:src|href)\s*=\s*["']?\s*(?:https?:)?//""", html, re.I)
    assert "<script" not in html.lower()
    assert "<link" not in html.lower()
    assert "@import" not in html


def test_plan_html_is_self_contained_with_every_chart(startup_report):
    html = render_html(startup_report)
    _assert_self_contained(html)
    assert html.count("<svg") == 5  # memory, step time, Pareto, billing modes, buy vs rent
    for anchor in ("memory", "step-time", "pareto", "billing", "tco", "assumptions"):
        assert f'id="{anchor}"' in html
    assert "@media print" in html
    assert html.index('id="answer"') < html.index('id="job"')
    assert startup_report.answer[0].startswith("Job: llama-3.1-70b, full, 2B tokens")
    assert "Rent " in startup_report.answer[1]


def test_plan_assumptions_name_sources_and_dates(startup_report):
    html = render_html(startup_report)
    assert "efficiency.toml" in html
    assert "fitted speed efficiencies" in html
    assert re.search(r"exchange rate USD/CNY", html)
    assert "GPU h100-sxm-80gb: specs" in html


def test_plan_markdown_has_pipe_tables_and_no_svg(startup_report):
    text = render_markdown(startup_report)
    assert text.startswith("# GPU rental plan")
    assert "| # | GPUs | offer | machine | layout |" in text
    assert "<svg" not in text
    assert "(chart in the HTML report)" in text


def test_chinese_report_has_chinese_headings():
    report = _plan_report(STUDENT, "zh", budget="¥2000", max_gpus=4)
    html = render(report, "html")
    assert '<html lang="zh-CN">' in html
    for heading in ("结论", "训练任务", "每卡显存", "单步耗时", "费用与天数", "假设与数据来源"):
        assert heading in html
    assert report.answer[0].startswith("任务：llama-3.1-8b")
    assert "租用" in report.answer[1]
    assert "小时" in report.answer[1] or "天" in report.answer[1]


def test_no_plan_report_says_why():
    report = _plan_report(STARTUP, "en", budget="¥10", max_gpus=8)
    assert report.answer[1].startswith("No plan meets the request")
    _assert_self_contained(render_html(report))


def test_user_text_is_escaped():
    from gpuplan.report.document import Paragraph, Report, Section

    report = Report("plan", "<b>t</b>", "en", ["<script>alert(1)</script>"])
    report.sections.append(Section("<i>s</i>", [Paragraph("a & <b>")]))
    html = render_html(report)
    assert "<script>alert" not in html and "&lt;script&gt;" in html
    assert "a &amp; &lt;b&gt;" in html


def test_estimate_report_has_memory_and_step_charts():
    from gpuplan.api import estimate
    from gpuplan.report.estimate import build_estimate_report

    scenario = {**STUDENT, "hardware": {"gpu": "rtx-4090-24gb", "count": 1}}
    report = build_estimate_report(estimate(scenario), "en", scenario)
    html = render_html(report)
    assert html.count("<svg") == 2
    assert "GiB, 2^30 bytes" in html
    _assert_self_contained(html)


def test_quote_report_compares_billing_modes():
    from gpuplan.pricing.offers import OfferBook
    from gpuplan.pricing.quote import quote
    from gpuplan.report.quote import build_quote_report

    offer = OfferBook.build().get("xingyu-a100-40gb-x4")
    result = quote(offer, 400 * 86400).to_dict()
    report = build_quote_report(result, "zh")
    html = render_html(report)
    assert "monthly" in html and "yearly" in html
    assert "所选报价的各计费方式" in html
    assert "总费用（CNY）" in html


def test_tco_report_reproduces_the_seed_table():
    from gpuplan.pricing.tco import compare, load_tco_file
    from gpuplan.report.tco import build_tco_report

    result = compare(load_tco_file(ROOT / "examples" / "seed-tco.toml"))
    english = build_tco_report(result, "en")
    chinese = build_tco_report(result, "zh")
    assert "¥9,840,000" in english.answer[0] and "¥3,841,200" in english.answer[0]
    assert "¥984.00万" in chinese.answer[0]
    assert "cumulative cost (CNY)" in render_html(english)


@pytest.mark.parametrize(
    ("text", "css"),
    [
        ("2026-08-22", "nowrap"),
        ("2026-03", "nowrap"),
        ("$38.93", "nowrap"),
        ("¥1.2万", "nowrap"),
        ("12.5 h", "nowrap"),
        ("autodl-h800-80gb-x1", "nowrap"),
        ("8x h100-sxm-80gb", "nowrap"),
        ("算家云, 10.82h hourly", ""),
        ("1 GPU, no cluster network", ""),
    ],
)
def test_dates_amounts_and_ids_never_wrap_and_prose_does(text, css):
    from gpuplan.report.html import cell_class

    assert cell_class(text, numeric=False) == css
    assert cell_class(text, numeric=True) == "num"


def test_tables_scroll_in_their_own_box():
    from gpuplan.report.document import Table
    from gpuplan.report.html import STYLE, render_block

    html = render_block(Table(["when", "what"], [["2026-08-22", "a long note"]]))
    assert html.startswith('<div class="table-scroll"><table>')
    assert '<td class="nowrap">2026-08-22</td><td>a long note</td>' in html
    assert ".table-scroll { overflow-x: auto" in STYLE
    assert "word-break: break-word" not in STYLE


def test_layout_text_names_a_hybrid_shard_group_only():
    from gpuplan.report.common import layout_text

    whole = {"dp": 16, "cp": 1, "zero": 3, "shard_group": 16, "micro_batch": 1}
    assert "shard" not in layout_text(whole)
    assert "zero3 shard8 mb1" in layout_text({**whole, "shard_group": 8})
