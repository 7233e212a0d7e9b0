"""The exchange rates behind an answer's amounts, said once under its table."""

from __future__ import annotations

from collections.abc import Iterable
from decimal import Decimal

from gpuplan.pricing.currency import ExchangeRates


def conversion_line(
    rates: ExchangeRates, target: str, currencies: Iterable[str], lang: str
) -> str | None:
    """``amounts in USD; 1 USD = 7.12 CNY (source, 2026-11-30)``: each currency priced in
    other than ``target``, at the dated rate of the table (``pricing/currency.py``) that
    converted it; None when nothing was converted."""
    from gpuplan.i18n import translate

    pairs = []
    for currency in sorted(set(currencies) - {target}):
        rate = rates.convert(Decimal(1), target, currency)
        quoted = currency if currency != rates.base else target
        described = rates.describe(quoted)
        pairs.append(
            translate(
                "money.rate",
                lang,
                target=target,
                rate=f"{float(rate):.4g}",
                currency=currency,
                source=described["source"],
                observed=described["observed"],
            )
        )
    if not pairs:
        return None
    return translate("money.converted", lang, currency=target, rates="; ".join(pairs))
