"""Markdown output: every string is plain text, so a user's ``<script>`` or ``[link](url)``
renders as typed, never as HTML, a link, a heading or a broken table."""

from __future__ import annotations

import pytest

from gpuplan.report.document import Paragraph, Report, Section, Table
from gpuplan.report.markdown import markdown_table, plain_markdown, render_markdown

HOSTILE = "<script>alert(1)</script> [x](http://e) *b* _i_ `c` a|b &amp; ~~s~~"


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("<script>", "\\<script\\>"),
        ("[x](y)", "\\[x\\](y)"),
        ("a|b", "a\\|b"),
        ("&amp;", "\\&amp;"),
        ("# heading", "\\# heading"),
        ("> quote", "\\> quote"),
        ("- item", "\\- item"),
        ("12. item", "12\\. item"),
        ("3.4 h and -5 and llama-3.1-8b", "3.4 h and -5 and llama-3.1-8b"),
        ("two\nlines", "two lines"),
    ],
)
def test_plain_markdown_escapes_what_would_be_markup(text: str, expected: str) -> None:
    assert plain_markdown(text) == expected


def test_a_report_of_hostile_strings_has_no_raw_markup() -> None:
    report = Report(
        "estimate",
        HOSTILE,
        "en",
        [HOSTILE],
        [Section(HOSTILE, [Paragraph(HOSTILE), Table(["name"], [[HOSTILE]])])],
        warnings=[HOSTILE],
        generated=HOSTILE,
    )
    text = render_markdown(report)
    for raw in ("<script>", "[x]", "*b*", "_i_", "`c`", "a|b", " &amp;", "~~s~~"):
        assert raw not in text
    assert text.count("\\<script\\>") == 7


def test_markup_tables_keep_the_projects_own_markdown() -> None:
    table = Table(["reason"], [["`gpuplan tco` a|b"]])
    assert "| `gpuplan tco` a\\|b |" in markdown_table(table, markup=True)
    assert "| \\`gpuplan tco\\` a\\|b |" in markdown_table(table)
