"""Import a SkyPilot catalog (``vms.csv``) as gpuplan offers.

SkyPilot's catalogs (github.com/skypilot-org/skypilot-catalog, ``catalogs/v7|v8/<cloud>/vms.csv``)
have the columns ``InstanceType, AcceleratorName, AcceleratorCount, vCPUs, MemoryGiB, GpuInfo,
Price, SpotPrice, Region, AvailabilityZone`` (v8 adds ``Arch``; the order differs per cloud, so
columns are read by name). ``Price`` and ``SpotPrice`` are US dollars per instance-hour.

One offer per (instance type, region): availability-zone rows are merged, the spot price being
the median over zones that list a real discount. The import applies the ingest rules of
pricing-and-catalogs.md §2 and §8.5:

* rows without an accelerator, or with a fractional count, are not GPU offers: skipped;
* GPU-only rows (empty ``InstanceType``, GCP's split pricing) are skipped: host and GPU must be
  joined in one region, never across regions;
* the sentinel price 700.0 (and other placeholders) rejects the row;
* a spot price at or above on-demand means "no spot offer": the spot plan is dropped;
* GPU memory below 1 GiB in ``GpuInfo`` is a unit slip (RunPod's "80 MiB"): flagged;
* an accelerator name gpuplan cannot map to a catalog GPU id skips the row.

The catalog carries no date: the caller gives ``observed``; by default it is the file's
modification date as an upper bound (``undated<=YYYY-MM-DD``).
"""

from __future__ import annotations

import ast
import csv
import datetime as dt
import json
from collections import defaultdict
from dataclasses import dataclass, field
from decimal import Decimal, InvalidOperation
from pathlib import Path
from statistics import median
from typing import Any

from gpuplan.errors import InputError
from gpuplan.limits import read_text_file
from gpuplan.pricing.offers import Offer, PricePlan
from gpuplan.pricing.provenance import Provenance, parse_observed
from gpuplan.pricing.validate import PLACEHOLDER_PRICES, Finding

REQUIRED_COLUMNS = ("InstanceType", "AcceleratorName", "AcceleratorCount", "Price", "Region")

SKYPILOT_ACCELERATORS = {
    "A100": "a100-sxm-40gb",
    "A100-80GB": "a100-sxm-80gb",
    "A100-80GB-SXM": "a100-sxm-80gb",
    "H100": "h100-sxm-80gb",
    "H100-SXM": "h100-sxm-80gb",
    "H100-MEGA": "h100-sxm-80gb",
    "H200": "h200-sxm-141gb",
    "H200-SXM": "h200-sxm-141gb",
    "B200": "b200-sxm-180gb",
    "GB200": "gb200-186gb",
    "L4": "l4-24gb",
    "L40S": "l40s-48gb",
    "A10G": "a10g-24gb",
    "V100-32GB": "v100-sxm-32gb",
    "RTX4090": "rtx-4090-24gb",
    "RTX5090": "rtx-5090-32gb",
    "RTX3090": "rtx-3090-24gb",
    "RTXA6000": "rtx-a6000-48gb",
    "MI300X": "mi300x-192gb",
}
"""SkyPilot accelerator names (common/accelerators.csv) to catalog ids. On AWS and Lambda
``A100`` is the 40 GB card. Names not listed go through the GPU catalog's aliases."""


class SkyPilotImportError(InputError):
    """A SkyPilot catalog file that cannot be read; the message names the row and column."""


@dataclass
class ImportResult:
    """Offers read from a catalog, and what was skipped or flagged on the way."""

    offers: list[Offer] = field(default_factory=list)
    findings: list[Finding] = field(default_factory=list)


def _number(row: dict[str, str], column: str, where: str) -> Decimal | None:
    text = (row.get(column) or "").strip()
    if not text:
        return None
    try:
        value = Decimal(text)
    except InvalidOperation:
        raise SkyPilotImportError(f"{where}: {column} {text!r} is not a number") from None
    if not value.is_finite():
        raise SkyPilotImportError(f"{where}: {column} {text!r} is not a finite number")
    return value


def _gpu_id(name: str) -> str | None:
    if name in SKYPILOT_ACCELERATORS:
        return SKYPILOT_ACCELERATORS[name]
    try:
        from gpuplan.catalog import resolve_gpu_id

        return resolve_gpu_id(name)
    except InputError:
        return None


def _gpu_memory_mib(gpu_info: str) -> float | None:
    try:
        info = ast.literal_eval(gpu_info)
        return float(info["Gpus"][0]["MemoryInfo"]["SizeInMiB"])
    except (ValueError, SyntaxError, KeyError, IndexError, TypeError):
        return None


def _slug(text: str) -> str:
    return "".join(
        character if character.isalnum() or character in ".-" else "-" for character in text.lower()
    )


def import_vms_csv(
    path: str | Path, provider: str | None = None, observed: str | None = None
) -> ImportResult:
    """Read a SkyPilot ``vms.csv`` into offers (see the module docstring for the rules)."""
    path = Path(path)
    text = read_text_file(path, "SkyPilot catalog", SkyPilotImportError)
    if observed is None:
        modified = dt.datetime.fromtimestamp(path.stat().st_mtime, tz=dt.UTC).date()
        observed = f"undated<={modified.isoformat()}"
    parse_observed(observed)
    provider = provider or (path.parent.name if path.parent.name else "skypilot")
    source = f"SkyPilot catalog {path.name} ({path})"
    reader = csv.DictReader(text.splitlines())
    missing = [column for column in REQUIRED_COLUMNS if column not in (reader.fieldnames or [])]
    if missing:
        raise SkyPilotImportError(f"{path}: missing column(s) {', '.join(missing)}")
    result = ImportResult()
    groups: dict[tuple[str, str], list[tuple[dict[str, str], Decimal | None, Decimal | None]]] = (
        defaultdict(list)
    )
    for line_number, row in enumerate(reader, start=2):
        where = f"{path}: row {line_number}"
        if None in row:
            raise SkyPilotImportError(f"{where}: more fields than the header has columns")
        accelerator = (row.get("AcceleratorName") or "").strip()
        count = _number(row, "AcceleratorCount", where)
        price = _number(row, "Price", where)
        spot = _number(row, "SpotPrice", where) if "SpotPrice" in row else None
        instance = (row.get("InstanceType") or "").strip()
        label = instance or f"{accelerator} (row {line_number})"
        if not accelerator or count is None or count <= 0:
            continue
        if count != count.to_integral_value():
            result.findings.append(
                Finding(
                    "warning", label, "AcceleratorCount", f"fractional GPU count {count}: skipped"
                )
            )
            continue
        if not instance:
            result.findings.append(
                Finding(
                    "warning",
                    label,
                    "InstanceType",
                    "GPU-only row (host priced separately): skipped",
                )
            )
            continue
        if price is not None and (price <= 0 or price in PLACEHOLDER_PRICES):
            result.findings.append(
                Finding("error", label, "Price", f"placeholder price {price}: row rejected")
            )
            continue
        if _gpu_id(accelerator) is None:
            result.findings.append(
                Finding(
                    "warning",
                    label,
                    "AcceleratorName",
                    f"unknown accelerator {accelerator!r}: skipped",
                )
            )
            continue
        memory = _gpu_memory_mib(row.get("GpuInfo") or row.get("GPUInfo") or "")
        if memory is not None and memory < 1024:
            result.findings.append(
                Finding(
                    "warning",
                    label,
                    "GpuInfo",
                    f"GPU memory {memory:g} MiB: a unit slip (GB written as MiB?)",
                )
            )
        groups[(instance, (row.get("Region") or "").strip())].append((row, price, spot))

    for (instance, region), rows in groups.items():
        first = rows[0][0]
        label = f"{instance} {region}"
        prices = [price for _, price, _ in rows if price is not None]
        on_demand = min(prices) if prices else None
        spots = [spot for _, _, spot in rows if spot is not None and spot > 0]
        real_spots = [spot for spot in spots if on_demand is None or spot < on_demand]
        if len(real_spots) < len(spots):
            result.findings.append(
                Finding(
                    "warning",
                    label,
                    "SpotPrice",
                    "spot at or above on-demand in some zones: treated as no spot there",
                )
            )
        provenance = Provenance.from_fields({"source": source, "observed": observed}, label)
        plans = []
        note = "billing granularity not in the catalog: hourly assumed"
        if on_demand is not None:
            plans.append(
                PricePlan(
                    "hourly",
                    "hourly",
                    on_demand,
                    "USD",
                    "instance",
                    3600,
                    provenance,
                    3600,
                    notes=note,
                )
            )
        if real_spots:
            zones = len(real_spots)
            plans.append(
                PricePlan(
                    "spot",
                    "spot",
                    Decimal(median(real_spots)),
                    "USD",
                    "instance",
                    3600,
                    provenance,
                    3600,
                    notes=f"median over {zones} zone(s) with a spot discount; {note}",
                )
            )
        if not plans:
            continue
        vcpus = _number(first, "vCPUs", label) if "vCPUs" in first else None
        memory_gib = _number(first, "MemoryGiB", label) if "MemoryGiB" in first else None
        result.offers.append(
            Offer(
                id=_slug(f"{provider}-{instance}-{region}"),
                provider=provider,
                gpu=_gpu_id(first["AcceleratorName"].strip()) or "",
                gpus=int(Decimal(first["AcceleratorCount"])),
                currency="USD",
                plans=tuple(plans),
                product_line="SkyPilot catalog",
                region=region,
                instance_type=instance,
                vcpus=int(vcpus) if vcpus is not None else None,
                ram_gb=float(memory_gib) * 2**30 / 1e9 if memory_gib is not None else None,
                origin=str(path),
            )
        )
    return result


# --- writing offers as TOML ------------------------------------------------------------------


def _toml_value(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, Decimal | int):
        return str(value)
    if isinstance(value, float):
        return repr(value)
    return json.dumps(str(value), ensure_ascii=False)


def _inline_table(fields: dict[str, Any]) -> str:
    items = ", ".join(
        f"{key} = {_toml_value(value)}" for key, value in fields.items() if value not in (None, "")
    )
    return "{ " + items + " }"


def offers_to_toml(offers: list[Offer], provider: str, currency: str = "USD") -> str:
    """An offers file (the schema of ``catalog/data/offers/*.toml``) for ``offers``."""
    lines = [
        "# Imported from a SkyPilot catalog by `gpuplan offers import-skypilot`.",
        f"provider = {_toml_value(provider)}",
        f"currency = {_toml_value(currency)}",
    ]
    for offer in offers:
        lines += ["", "[[offers]]"]
        for key in (
            "id",
            "instance_type",
            "product_line",
            "region",
            "gpu",
            "gpus",
            "vcpus",
            "ram_gb",
        ):
            value = getattr(offer, key)
            if value not in (None, ""):
                if key == "ram_gb":
                    value = round(float(value), 1)
                lines.append(f"{key} = {_toml_value(value)}")
        lines.append("plans = [")
        for plan in offer.plans:
            fields = {
                "mode": plan.mode,
                "price": plan.price,
                "per": plan.per,
                "granularity": f"{plan.granularity_seconds}s",
                "observed": plan.provenance.observed,
                "source": plan.provenance.source,
                "notes": plan.notes,
            }
            lines.append(f"  {_inline_table(fields)},")
        lines.append("]")
    return "\n".join(lines) + "\n"
