"""Fees besides the GPU instance, itemized from what a job uses.

For each of the offer's :class:`FeeItem` s the quantity comes from :class:`Usage`:

=====================  =============================================================
fee unit counts        quantity
=====================  =============================================================
bytes (GB, GiB, TB)    egress or ingress volume of the whole job (tiers are applied
                       to that total, as if it fell in one billing month)
byte-seconds           storage capacity above the free allowance x time, per instance:
                       running time for ``storage_running``, stopped time for
                       ``storage_stopped``, both for ``applies_when = "always"``
ip-seconds             public IPs per instance x instances x running time
instance-seconds       instances x running time, for fees marked ``required``
share                  fraction of the compute charge (support, licences, tax)
once                   one charge per job, for fees marked ``required``
=====================  =============================================================

Fees the source names without a number (``price`` absent) and informational items (minimum
balances) are listed with no amount, so the user sees them without a made-up figure.
"""

from __future__ import annotations

from dataclasses import dataclass
from decimal import Decimal
from typing import Any

from gpuplan.pricing.currency import ExchangeRates
from gpuplan.pricing.offers import FeeItem

TRANSFER_CATEGORIES = {"egress": "egress_bytes", "ingress": "ingress_bytes"}


@dataclass(frozen=True)
class Usage:
    """What a job uses besides GPU time, per instance unless named a total. Base units."""

    instances: int = 1
    running_seconds: float = 0.0
    stopped_seconds: float = 0.0
    storage_bytes: float = 0.0
    egress_bytes: float = 0.0
    ingress_bytes: float = 0.0
    public_ips: int = 1


@dataclass(frozen=True)
class FeeLine:
    """One itemized fee: quantity in the fee's unit, amount in the quote's currency."""

    fee: FeeItem
    quantity: Decimal
    amount: Decimal | None
    currency: str
    note: str = ""

    def to_dict(self) -> dict[str, Any]:
        return {
            "kind": "fee",
            "category": self.fee.category,
            "item": self.fee.item,
            "quantity": self.quantity,
            "unit": self.fee.unit,
            "unit_price": self.fee.price,
            "unit_price_currency": self.fee.currency,
            "tiers": [{"up_to": tier.up_to, "price": tier.price} for tier in self.fee.tiers],
            "free_allowance": self.fee.free_allowance,
            "amount": self.amount,
            "currency": self.currency,
            "note": self.note,
            **self.fee.provenance.to_dict(),
        }


def _decimal(value: float) -> Decimal:
    return Decimal(repr(float(value)))


def _storage_seconds(fee: FeeItem, usage: Usage) -> float:
    if fee.applies_when == "always":
        return usage.running_seconds + usage.stopped_seconds
    if fee.category == "storage_stopped" or fee.applies_when == "stopped":
        return usage.stopped_seconds
    return usage.running_seconds


def fee_quantity(fee: FeeItem, usage: Usage) -> tuple[Decimal, bool]:
    """Quantity in the fee's unit, and whether the free allowance is still to be subtracted."""
    kind = fee.quantity_kind
    if kind == "bytes":
        attribute = TRANSFER_CATEGORIES.get(fee.category)
        volume = getattr(usage, attribute) if attribute else 0.0
        return _decimal(volume) / fee.size_scale, True
    if kind == "byte-seconds":
        capacity = _decimal(usage.storage_bytes) / fee.size_scale
        chargeable = max(Decimal(0), capacity - fee.free_allowance)
        seconds = _decimal(_storage_seconds(fee, usage))
        return chargeable * seconds / fee.time_scale * usage.instances, False
    if kind == "ip-seconds":
        seconds = _decimal(usage.running_seconds) * usage.public_ips * usage.instances
        return seconds / fee.time_scale, True
    if kind == "instance-seconds" and fee.required:
        return _decimal(usage.running_seconds) * usage.instances / fee.time_scale, True
    if kind == "once" and fee.required:
        return Decimal(1), True
    return Decimal(0), True


def itemize_fees(
    fees: tuple[FeeItem, ...],
    usage: Usage,
    compute_amount: Decimal,
    currency: str,
    rates: ExchangeRates,
) -> list[FeeLine]:
    """One line per fee. Share fees (support, licences) apply to ``compute_amount``; tax last."""
    lines: list[FeeLine] = []
    taxes: list[FeeItem] = []
    for fee in fees:
        if not fee.is_charged:
            reason = "informational, not charged" if fee.is_note else "no public price; not charged"
            lines.append(FeeLine(fee, Decimal(0), None, currency, reason))
            continue
        if fee.quantity_kind == "share":
            if fee.category == "tax":
                taxes.append(fee)
                continue
            amount = compute_amount * (fee.price or Decimal(0))
            lines.append(FeeLine(fee, compute_amount, amount, currency, "share of compute"))
            continue
        quantity, apply_allowance = fee_quantity(fee, usage)
        amount = rates.convert(fee.cost(quantity, apply_allowance), fee.currency, currency)
        lines.append(FeeLine(fee, quantity, amount, currency))
    subtotal = compute_amount + sum((line.amount or Decimal(0) for line in lines), Decimal(0))
    for fee in taxes:
        amount = subtotal * (fee.price or Decimal(0))
        lines.append(FeeLine(fee, subtotal, amount, currency, "share of everything above"))
    return lines
