"""Small offers written inline, so each test states the terms it prices."""

from __future__ import annotations

from gpuplan.pricing.offers import Offer, read_offers_text

SOURCE = 'source = "test fixture", observed = "2026-11-01"'


def offer_from(
    plans: list[str], gpus: int = 1, currency: str = "USD", fees: str = "", extra: str = ""
) -> Offer:
    """One offer with the given inline plan tables (each without source/observed)."""
    plan_lines = ",\n".join(f"  {{ {plan}, {SOURCE} }}" for plan in plans)
    text = f"""
provider = "Test"
currency = "{currency}"
{extra}

[[offers]]
id = "test-offer"
gpu = "h100-sxm-80gb"
gpus = {gpus}
plans = [
{plan_lines}
]
{fees}
"""
    return read_offers_text(text, "test")[0]
