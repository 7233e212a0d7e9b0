"""Offers written back as an offers file: the schema of ``catalog/data/offers/*.toml``, which
:func:`gpuplan.pricing.offers.parse_provider` reads."""

from __future__ import annotations

from decimal import Decimal
from typing import Any

from gpuplan.export.toml_text import toml_string
from gpuplan.pricing.offers import PACKAGE_TERM, Offer, PricePlan

OFFER_KEYS = ("id", "instance_type", "product_line", "region", "gpu", "gpus", "vcpus", "ram_gb")


def _value(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, Decimal | int):
        return str(value)
    if isinstance(value, float):
        return repr(value)
    return toml_string(str(value))


def _inline_table(fields: dict[str, Any]) -> str:
    items = ", ".join(
        f"{key} = {_value(value)}" for key, value in fields.items() if value not in (None, "")
    )
    return "{ " + items + " }"


def plan_fields(plan: PricePlan) -> dict[str, Any]:
    """A plan's keys as an offers file writes them (defaults left out)."""
    fields: dict[str, Any] = {"mode": plan.mode}
    if plan.name != plan.mode:
        fields["name"] = plan.name
    fields |= {"price": plan.price, "per": plan.per}
    if plan.kind != "package":
        fields["granularity"] = f"{plan.granularity_seconds}s"
    if plan.minimum_seconds:
        fields["minimum"] = f"{plan.minimum_seconds}s"
    if plan.term_seconds and plan.term_seconds != PACKAGE_TERM.get(plan.mode):
        fields["term"] = f"{plan.term_seconds}s"
    if plan.interruptions_per_hour is not None:
        fields["interruptions_per_hour"] = plan.interruptions_per_hour
        fields["interruptions_source"] = plan.interruptions_source
    fields |= {
        "observed": plan.provenance.observed,
        "source": plan.provenance.source,
        "notes": plan.notes,
    }
    return fields


def offers_to_toml(offers: list[Offer], provider: str, currency: str, header: str = "") -> str:
    """One provider's offers as an offers file; ``header`` becomes its leading comment."""
    lines = [f"# {line}" if line else "#" for line in header.splitlines()]
    lines += [f"provider = {_value(provider)}", f"currency = {_value(currency)}"]
    for offer in offers:
        lines += ["", "[[offers]]"]
        for key in OFFER_KEYS:
            value = getattr(offer, key)
            if value not in (None, ""):
                if key == "ram_gb":
                    value = round(float(value), 1)
                lines.append(f"{key} = {_value(value)}")
        if offer.notes:
            lines.append(f"notes = {_value(offer.notes)}")
        lines.append("plans = [")
        lines += [f"  {_inline_table(plan_fields(plan))}," for plan in offer.plans]
        lines.append("]")
    return "\n".join(lines) + "\n"
