"""The built-in catalog in figures: offers, providers, GPUs with an offer, and how old its prices are.

    python benchmarks/catalog_summary.py [--today 2026-12-03] [--json]

A price's age is counted from the latest date its ``observed`` could mean (an undated copy's
date is only an upper bound, so its age is a lower bound; undated prices are counted apart).
"Chinese providers" are the providers whose offers are priced in CNY. Every figure is computed
from ``gpuplan.pricing.offers.catalog_offers()`` and the GPU catalog; nothing is counted by hand.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import statistics
from typing import Any

from gpuplan.catalog import gpu_ids, load_gpu
from gpuplan.pricing.offers import catalog_offers
from gpuplan.pricing.provenance import STALE_AFTER_DAYS


def summary(today: dt.date) -> dict[str, Any]:
    """The catalog's figures as of ``today`` (see the module docstring)."""
    offers = catalog_offers()
    providers = sorted({offer.provider for offer in offers})
    chinese = sorted({offer.provider for offer in offers if offer.currency == "CNY"})
    offered = {offer.gpu for offer in offers}
    plans = [(offer, plan) for offer in offers for plan in offer.plans]
    ages = sorted((plan.provenance.age_days(today), offer.id, plan.name) for offer, plan in plans)
    dated = [age for age, _, _ in ages]
    undated = [
        (offer.id, plan.name) for offer, plan in plans if plan.provenance.date_quality == "undated"
    ]
    oldest_age, oldest_offer, oldest_plan = ages[-1]
    return {
        "today": today.isoformat(),
        "offers": len(offers),
        "prices": len(plans),
        "providers": len(providers),
        "chinese_providers": chinese,
        "gpus": len(gpu_ids()),
        "gpus_with_offer": sorted(offered),
        "gpus_without_offer": {
            gpu_id: load_gpu(gpu_id).no_public_offer.get("reason", "")
            for gpu_id in gpu_ids()
            if gpu_id not in offered
        },
        "oldest_price": {"days": oldest_age, "offer": oldest_offer, "plan": oldest_plan},
        "median_price_age_days": statistics.median(dated),
        "prices_older_than_90_days": sum(age > STALE_AFTER_DAYS for age in dated),
        "prices_older_than_180_days": sum(age > 180 for age in dated),
        "undated_prices": len(undated),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--today", type=dt.date.fromisoformat, default=dt.date.today())
    parser.add_argument("--json", action="store_true")
    arguments = parser.parse_args()
    result = summary(arguments.today)
    if arguments.json:
        print(json.dumps(result, ensure_ascii=False, indent=1))
        return
    oldest = result["oldest_price"]
    print(f"catalog as of {result['today']}")
    print(f"  offers:                {result['offers']} ({result['prices']} prices)")
    print(f"  providers:             {result['providers']}")
    chinese = result["chinese_providers"]
    print(f"  Chinese providers:     {len(chinese)} ({', '.join(chinese)})")
    print(f"  GPUs with an offer:    {len(result['gpus_with_offer'])} of {result['gpus']}")
    for gpu_id, reason in result["gpus_without_offer"].items():
        print(f"    no offer: {gpu_id}: {reason[:100]}")
    print(f"  oldest price:          {oldest['days']} days ({oldest['offer']}, {oldest['plan']})")
    print(f"  median price age:      {result['median_price_age_days']:g} days")
    print(f"  older than 90 days:    {result['prices_older_than_90_days']} prices")
    print(f"  older than 180 days:   {result['prices_older_than_180_days']} prices")
    print(f"  undated:               {result['undated_prices']} prices (age unknown)")


if __name__ == "__main__":
    main()
