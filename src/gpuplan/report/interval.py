"""How a predicted speed, run length or cost shows its interval (``estimate.interval``), the
same in every face: ``3.9 days (3.3–4.6)``."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from gpuplan.i18n import format_days, format_money, format_run_length, translate


def run_length_range(seconds: float, low: float, high: float) -> str:
    """``(3.3–4.6)``: the interval's run lengths in the unit ``report.plan.run_length`` shows."""
    unit = 3600 if seconds < 2 * 86400 else 86400
    return f"({low / unit:,.1f}–{high / unit:,.1f})"


def money_range(low: float, high: float, currency: str, lang: str) -> str:
    """``($10,400–$14,600)``."""
    return f"({format_money(low, currency, lang, None)}–{format_money(high, currency, lang, None)})"


def with_range(cells: Mapping[str, str], key: str, separator: str = " ") -> str:
    """A cell and its interval, e.g. ``3.9 days (3.3–4.6)``."""
    interval = cells.get(key + "_range", "")
    return f"{cells[key]}{separator}{interval}" if interval else cells[key]


def throughput_text(throughput: Mapping[str, Any]) -> str:
    """``86,900 (63,000–86,900)`` tokens per second."""
    text = f"{throughput['tokens_per_second']:,.0f}"
    low, high = throughput.get("tokens_per_second_low"), throughput.get("tokens_per_second_high")
    if low is None or high is None:
        return text
    return f"{text} ({low:,.0f}–{high:,.0f})"


def run_length_text(duration: Mapping[str, Any], lang: str) -> str:
    """``10.8 h (9.0–12.8)`` under two days, ``2.7 days (2.7–3.7)`` from there
    (``i18n.format_run_length``, :func:`run_length_range`)."""
    days = duration.get("days")
    if days is None:
        return format_days(None, lang)
    text = format_run_length(days * 86400, lang)
    low, high = duration.get("days_low"), duration.get("days_high")
    if low is None or high is None:
        return text
    return f"{text} {run_length_range(days * 86400, low * 86400, high * 86400)}"


def interval_line(interval: Mapping[str, Any] | None, lang: str) -> str:
    """Where the interval comes from, in one sentence."""
    if not interval:
        return translate("interval.none", lang)
    names = {
        "precision": {"half": "bf16/fp16", "fp8": "fp8"},
        "experts": {"dense": translate("interval.dense", lang), "moe": "MoE"},
    }
    parts = []
    for field, value in interval["basis"].items():
        if value == "*":
            continue
        if field == "scale":
            parts.append(translate("interval.gpus", lang, gpus=value))
        else:
            parts.append(names.get(field, {}).get(value, value))
    basis = ", ".join(parts)
    return translate(
        "interval.basis",
        lang,
        coverage=f"{interval['coverage']:.0%}",
        rows=interval["rows"],
        basis=basis or translate("interval.all_rows", lang),
    )
