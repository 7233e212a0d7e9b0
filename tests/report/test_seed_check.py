"""The seed check computes gpuplan's side and flags the article's known errors (DESIGN.md)."""

from __future__ import annotations

import pytest

from gpuplan.report import seed_check


@pytest.fixture(scope="module")
def checks():
    return seed_check.all_checks()


def _find(checks, key, **values):
    return [
        check
        for check in checks
        if check.claim[0] == key and all(check.claim[1].get(k) == v for k, v in values.items())
    ]


def test_memory_rule_of_12_bytes_is_flagged(checks):
    rows = _find(checks, "seed.claim.memory_rule")
    assert rows and all(row.verdict == seed_check.WRONG for row in rows)


def test_sparse_peaks_and_the_4090_fp16_accumulate_rate_are_flagged(checks):
    tensor = _find(checks, "seed.claim.peak_tensor")
    assert len(tensor) == 3 and all(row.verdict == seed_check.WRONG for row in tensor)
    assert _find(checks, "seed.claim.peak_fp16", gpu="RTX 4090")[0].verdict == seed_check.WRONG
    assert _find(checks, "seed.claim.peak_fp16", gpu="A100 40GB")[0].verdict == seed_check.HOLDS


def test_yearly_prices_break_the_articles_own_rule(checks):
    rows = _find(checks, "seed.claim.yearly")
    assert rows[0].ours == "¥215,280" and rows[0].verdict == seed_check.WRONG


def test_tokens_per_day_are_orders_of_magnitude_low(checks):
    for row in _find(checks, "seed.claim.tokens_day"):
        assert float(row.ours.replace(",", "")) > 1000 * float(row.seed.replace(",", ""))


def test_the_tco_table_is_reproduced(checks):
    assert _find(checks, "seed.claim.tco_buy")[0].verdict == seed_check.HOLDS
    assert _find(checks, "seed.claim.tco_rent")[0].verdict == seed_check.HOLDS


def test_both_languages_render_with_verdicts(checks):
    english = seed_check.render(checks, "en")
    chinese = seed_check.render(checks, "zh")
    assert english.startswith("# The seed article, checked")
    assert chinese.startswith("# 种子文章核对") and "## 显存" in chinese
    for mark in (seed_check.HOLDS, seed_check.CLOSE, seed_check.WRONG):
        assert f"| {mark} |" in english
