"""Fees: tiers, free allowances, storage while running and while stopped, shares and tax."""

from __future__ import annotations

from decimal import Decimal

from gpuplan.notices import notice_text
from gpuplan.pricing.currency import default_rates
from gpuplan.pricing.fees import Usage, itemize_fees
from gpuplan.pricing.quote import quote
from gpuplan.units import GB, GiB

from .helpers import offer_from

EGRESS_TIERS = """
[[fees]]
category = "egress"
item = "egress"
unit = "GB"
tiers = [ { up_to = 100, price = 0.09 }, { up_to = 500, price = 0.05 }, { price = 0.01 } ]
source = "test"
observed = "2026-11-01"
"""


def _fees(fees_toml: str):
    return offer_from(['mode = "hourly", price = 1, per = "instance"'], fees=fees_toml).fees


def test_egress_tiers_are_marginal():
    (fee,) = _fees(EGRESS_TIERS)
    assert fee.cost(Decimal(50)) == Decimal("4.5")
    assert fee.cost(Decimal(300)) == Decimal(9) + Decimal(10)
    assert fee.cost(Decimal(1000)) == Decimal(9) + Decimal(20) + Decimal(5)


def test_free_allowance_comes_off_first():
    (fee,) = _fees(EGRESS_TIERS.replace('unit = "GB"', 'unit = "GB"\nfree_allowance = 100'))
    assert fee.cost(Decimal(100)) == 0
    assert fee.cost(Decimal(150)) == Decimal("4.5")


def test_storage_running_and_stopped_and_capacity_allowance():
    fees = _fees(
        """
[[fees]]
category = "storage_running"
item = "volume running"
price = 0.1
unit = "GB-month"
free_allowance = 100
source = "test"
observed = "2026-11-01"

[[fees]]
category = "storage_stopped"
item = "volume stopped"
price = 0.2
unit = "GB-month"
applies_when = "stopped"
source = "test"
observed = "2026-11-01"
"""
    )
    usage = Usage(
        instances=2, running_seconds=30 * 86400, stopped_seconds=15 * 86400, storage_bytes=600 * GB
    )
    running, stopped = itemize_fees(fees, usage, Decimal(0), "USD", default_rates())
    assert running.amount == Decimal("0.1") * 500 * 2
    assert stopped.amount == Decimal("0.2") * 600 * Decimal("0.5") * 2


def test_gib_units_are_binary():
    fees = _fees(EGRESS_TIERS.replace('unit = "GB"', 'unit = "GiB"'))
    usage = Usage(egress_bytes=50 * GiB)
    (line,) = itemize_fees(fees, usage, Decimal(0), "USD", default_rates())
    assert line.quantity == 50


def test_support_share_and_tax_last_and_hidden_fee_share():
    offer = offer_from(
        ['mode = "hourly", price = 10, per = "instance"'],
        fees="""
[[fees]]
category = "support"
item = "support plan"
price = 0.1
unit = "share"
source = "test"
observed = "2026-11-01"

[[fees]]
category = "tax"
item = "VAT"
price = 0.2
unit = "share"
source = "test"
observed = "2026-11-01"
""",
    )
    result = quote(offer, 10 * 3600)
    assert result.compute == 100
    assert result.fees == Decimal(10) + Decimal("0.2") * 110
    data = result.to_dict()
    assert data["hidden_fee_share"] == result.fees / result.total
    assert [line["category"] for line in data["lines"] if line["kind"] == "fee"] == [
        "support",
        "tax",
    ]


def test_fee_without_a_public_price_is_listed_not_charged():
    offer = offer_from(
        ['mode = "hourly", price = 1, per = "instance"'],
        fees="""
[[fees]]
category = "storage_running"
item = "host-set disk"
unit = "GB-month"
source = "test"
observed = "2026-11-01"
""",
    )
    result = quote(offer, 3600, usage=Usage(storage_bytes=1000 * GB))
    (line,) = result.fee_lines
    assert line.amount is None
    assert result.total == 1


def test_public_ip_per_instance_hour_and_long_term_discount():
    offer = offer_from(
        ['mode = "hourly", price = 1, per = "instance"'],
        fees="""
[[fees]]
category = "public_ip"
item = "IPv4"
price = 0.005
unit = "IP-hour"
source = "test"
observed = "2026-11-01"

[[discounts]]
kind = "long-term"
share = 0.05
minimum = "180d"
source = "test"
observed = "2026-11-01"
""",
    )
    short = quote(offer, 100 * 3600, instances=2)
    assert short.fees == Decimal("0.005") * 200
    long = quote(offer, 200 * 86400)
    assert long.compute == Decimal(200 * 24) * Decimal("0.95")


def test_a_tax_note_without_a_rate_takes_the_users_tax_rate():
    """An offer that only notes "prices exclude tax" is taxed at --tax-rate; one that charges
    its own rate keeps it and says that the given rate was not applied."""
    note = """
[[fees]]
category = "tax"
item = "Sales tax (rate depends on the buyer)"
unit = "none"
applies_when = "informational"
source = "test"
observed = "2026-11-01"
"""
    noted = offer_from(['mode = "hourly", price = 10, per = "instance"'], fees=note)
    assert quote(noted, 10 * 3600, tax_rate=Decimal("0.2")).fees == Decimal(20)
    charged = offer_from(
        ['mode = "hourly", price = 10, per = "instance"'],
        fees=note.replace(
            'unit = "none"\napplies_when = "informational"', 'price = 0.1\nunit = "share"'
        ),
    )
    result = quote(charged, 10 * 3600, tax_rate=Decimal("0.2"))
    assert result.fees == Decimal(10)
    texts = [notice_text(warning, "en") for warning in result.warnings]
    assert any("--tax-rate is not applied" in text for text in texts)
