"""Recompute a bill from usage records under an offer's terms, to check an invoice.

A usage file is CSV with one row per run of an instance:

    instance,start,stop,gpus,storage_gb,egress_gb
    pod-a,2026-11-02T08:00:00Z,2026-11-02T20:30:00Z,1,500,20

``start`` and ``stop`` are ISO 8601 times (no zone means UTC); ``gpus`` the GPUs the run held;
``storage_gb`` the persistent storage attached (decimal GB); ``egress_gb`` the data sent out during
the run. For every run the compute charge is the plan's rate with its billing granularity and
minimum applied to that run alone (``PricePlan.run_cost``); between two runs of the same instance
its storage is billed at the provider's stopped rate. Egress tiers apply to the total of the file;
shares (support, licences) to the compute total; tax last.
"""

from __future__ import annotations

import csv
import datetime as dt
from collections import defaultdict
from dataclasses import dataclass
from decimal import Decimal, InvalidOperation
from pathlib import Path
from typing import Any

from gpuplan.errors import InputError, Verbatim
from gpuplan.limits import JOB_RANGES, plain_number, read_text_file, shown
from gpuplan.pricing.currency import ExchangeRates, default_rates
from gpuplan.pricing.fees import FeeLine, Usage, itemize_fees
from gpuplan.pricing.offers import Offer, PricePlan
from gpuplan.units import GB

COLUMNS = ("instance", "start", "stop", "gpus", "storage_gb", "egress_gb")
LARGEST_GPU_COUNT = int(JOB_RANGES["count"][1])
LARGEST_USAGE_GB = Decimal(10**12)
"""Storage or egress in one row: up to 10^12 GB (a zettabyte)."""


class UsageFileError(InputError):
    """A usage file that cannot be read; the message names the row and column."""


@dataclass(frozen=True)
class UsageRecord:
    """One run of one instance, in base units."""

    row: int
    instance: str
    start: dt.datetime
    stop: dt.datetime
    gpus: int
    storage_bytes: float
    egress_bytes: float

    @property
    def seconds(self) -> float:
        return (self.stop - self.start).total_seconds()


def _time(text: str, path: str | Path, row: int, column: str) -> dt.datetime:
    try:
        moment = dt.datetime.fromisoformat(text.strip())
    except ValueError:
        raise UsageFileError.of(
            "error.usage_time", path=path, row=row, column=Verbatim(column), value=repr(text)
        ) from None
    return moment if moment.tzinfo else moment.replace(tzinfo=dt.UTC)


def _non_negative(text: str, path: str | Path, row: int, column: str) -> Decimal:
    where = {"path": path, "row": row, "column": Verbatim(column)}
    try:
        value = Decimal((text or "0").strip() or "0")
    except InvalidOperation:
        raise UsageFileError.of("error.usage_number", **where, value=repr(text)) from None
    if not value.is_finite() or not 0 <= value <= LARGEST_USAGE_GB:
        raise UsageFileError.of(
            "error.usage_range",
            **where,
            value=shown(text),
            high=plain_number(float(LARGEST_USAGE_GB)),
        )
    return value


def read_usage(path: str | Path) -> list[UsageRecord]:
    """Usage records from a CSV file (columns in :data:`COLUMNS`; extra columns are ignored)."""
    text = read_text_file(path, "usage", UsageFileError)
    reader = csv.DictReader(text.splitlines())
    missing = [column for column in COLUMNS[:4] if column not in (reader.fieldnames or [])]
    if missing:
        raise UsageFileError.of(
            "error.usage_columns",
            path=path,
            missing=", ".join(missing),
            accepted=", ".join(COLUMNS),
        )
    records = []
    for number, row in enumerate(reader, start=2):
        if None in row:
            raise UsageFileError.of("error.usage_extra_fields", path=path, row=number)
        instance = (row.get("instance") or "").strip()
        if not instance:
            raise UsageFileError.of("error.usage_instance", path=path, row=number)
        start = _time(row.get("start") or "", path, number, "start")
        stop = _time(row.get("stop") or "", path, number, "stop")
        if stop <= start:
            raise UsageFileError.of(
                "error.usage_order",
                path=path,
                row=number,
                stop=stop.isoformat(),
                start=start.isoformat(),
            )
        gpus_text = (row.get("gpus") or "").strip()
        if not (gpus_text.isascii() and gpus_text.isdigit()) or not 1 <= int(gpus_text) <= (
            LARGEST_GPU_COUNT
        ):
            raise UsageFileError.of(
                "error.usage_gpus",
                path=path,
                row=number,
                value=shown(gpus_text),
                high=plain_number(LARGEST_GPU_COUNT),
            )
        records.append(
            UsageRecord(
                row=number,
                instance=instance,
                start=start,
                stop=stop,
                gpus=int(gpus_text),
                storage_bytes=float(
                    _non_negative(row.get("storage_gb") or "0", path, number, "storage_gb")
                )
                * GB,
                egress_bytes=float(
                    _non_negative(row.get("egress_gb") or "0", path, number, "egress_gb")
                )
                * GB,
            )
        )
    if not records:
        raise UsageFileError.of("error.usage_empty", path=path)
    return records


@dataclass(frozen=True)
class RunCharge:
    """The compute charge of one usage record."""

    record: UsageRecord
    instances: int
    billed_seconds: int
    amount: Decimal

    def to_dict(self) -> dict[str, Any]:
        return {
            "kind": "compute",
            "row": self.record.row,
            "instance": self.record.instance,
            "start": self.record.start.isoformat(),
            "stop": self.record.stop.isoformat(),
            "gpus": self.record.gpus,
            "seconds": self.record.seconds,
            "billed_seconds": self.billed_seconds,
            "amount": self.amount,
        }


def _default_plan(offer: Offer) -> PricePlan:
    metered = offer.plans_of_kind("metered")
    if not metered:
        raise InputError.of("error.audit_no_metered", offer=repr(offer.id))
    return min(metered, key=lambda plan: plan.per_gpu_hour(offer.gpus))


def _charge(record: UsageRecord, plan: PricePlan, offer: Offer) -> RunCharge:
    if plan.per == "gpu":
        return RunCharge(
            record,
            1,
            plan.billed_seconds(record.seconds),
            plan.run_cost(record.seconds, record.gpus),
        )
    if record.gpus % offer.gpus:
        raise UsageFileError.of(
            "error.usage_instances",
            row=record.row,
            gpus=record.gpus,
            instance_gpus=offer.gpus,
            offer=offer.id,
        )
    instances = record.gpus // offer.gpus
    amount = plan.run_cost(record.seconds, offer.gpus) * instances
    return RunCharge(record, instances, plan.billed_seconds(record.seconds), amount)


def _accumulate(totals: dict[int, list[Any]], lines: list[FeeLine]) -> None:
    for line in lines:
        entry = totals.setdefault(id(line.fee), [line.fee, Decimal(0), None])
        entry[1] += line.quantity
        if line.amount is not None:
            entry[2] = (entry[2] or Decimal(0)) + line.amount


def audit(
    records: list[UsageRecord],
    offer: Offer,
    plan_name: str | None = None,
    rates: ExchangeRates | None = None,
    invoiced: Decimal | None = None,
) -> dict[str, Any]:
    """Recompute the bill for ``records`` on ``offer``; amounts in the offer's currency."""
    rates = rates or default_rates()
    plan = offer.plan(plan_name) if plan_name else _default_plan(offer)
    if plan.kind == "package":
        raise InputError.of("error.audit_package", plan=repr(plan.name))
    charges = [_charge(record, plan, offer) for record in records]
    compute = sum((charge.amount for charge in charges), Decimal(0))

    fees = tuple(fee for fee in offer.fees if fee.category != "tax")
    taxes = tuple(fee for fee in offer.fees if fee.category == "tax")
    totals: dict[int, list[Any]] = {}
    by_instance: dict[str, list[UsageRecord]] = defaultdict(list)
    for record in records:
        by_instance[record.instance].append(record)
    stopped_seconds_total = 0.0
    for runs in by_instance.values():
        runs.sort(key=lambda record: record.start)
        for index, record in enumerate(runs):
            running = Usage(
                instances=1,
                running_seconds=record.seconds,
                storage_bytes=record.storage_bytes,
                public_ips=1,
            )
            _accumulate(
                totals,
                [
                    line
                    for line in itemize_fees(fees, running, Decimal(0), offer.currency, rates)
                    if line.fee.quantity_kind not in ("bytes", "share", "once")
                ],
            )
            if index + 1 < len(runs):
                gap = max(0.0, (runs[index + 1].start - record.stop).total_seconds())
                stopped_seconds_total += gap
                stopped = Usage(
                    instances=1,
                    stopped_seconds=gap,
                    storage_bytes=record.storage_bytes,
                    public_ips=0,
                )
                _accumulate(
                    totals,
                    [
                        line
                        for line in itemize_fees(fees, stopped, Decimal(0), offer.currency, rates)
                        if line.fee.quantity_kind == "byte-seconds"
                    ],
                )
    egress = Usage(
        instances=1, egress_bytes=sum(record.egress_bytes for record in records), public_ips=0
    )
    _accumulate(
        totals,
        [
            line
            for line in itemize_fees(fees, egress, compute, offer.currency, rates)
            if line.fee.quantity_kind in ("bytes", "share", "once", "none") or line.amount is None
        ],
    )
    fee_lines = [
        FeeLine(fee, quantity, amount, offer.currency) for fee, quantity, amount in totals.values()
    ]
    subtotal = compute + sum((line.amount or Decimal(0) for line in fee_lines), Decimal(0))
    fee_lines += itemize_fees(taxes, Usage(), subtotal, offer.currency, rates)
    fees_total = sum((line.amount or Decimal(0) for line in fee_lines), Decimal(0))
    total = compute + fees_total
    result: dict[str, Any] = {
        "offer": offer.id,
        "provider": offer.provider,
        "plan": plan.name,
        "currency": offer.currency,
        "records": len(records),
        "running_seconds": sum(record.seconds for record in records),
        "stopped_seconds": stopped_seconds_total,
        "compute": compute,
        "fees": fees_total,
        "total": total,
        "hidden_fee_share": fees_total / total if total else Decimal(0),
        "lines": [charge.to_dict() | {"currency": offer.currency} for charge in charges]
        + [line.to_dict() for line in fee_lines],
        "plan_terms": plan.to_dict(offer.gpus),
    }
    if invoiced is not None:
        result["invoiced"] = invoiced
        result["invoice_minus_recomputed"] = invoiced - total
    return result
