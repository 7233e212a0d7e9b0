"""Import a SkyPilot catalog (``vms.csv``) as gpuplan offers.

SkyPilot's catalogs (github.com/skypilot-org/skypilot-catalog, ``catalogs/v7|v8/<cloud>/vms.csv``,
written by ``sky/catalog/data_fetchers/fetch_<cloud>.py``) have the columns ``InstanceType,
AcceleratorName, AcceleratorCount, vCPUs, MemoryGiB, GpuInfo, Price, SpotPrice, Region,
AvailabilityZone`` (v8 adds ``Arch``; the order differs per cloud, so columns are read by name).
``Price`` and ``SpotPrice`` are US dollars per instance-hour; ``GpuInfo`` is a Python literal
``{'Gpus': [{'Name', 'Manufacturer', 'Count', 'MemoryInfo': {'SizeInMiB'}}], ...}``.

One offer per (instance type, region): availability-zone rows are merged, the spot price being
the median over zones that list a real discount. The import applies the ingest rules of
pricing-and-catalogs.md §2 and §8.5:

* rows without an accelerator (CPU instances) are counted, not offers; a fractional count is
  skipped;
* GPU-only rows (empty ``InstanceType``, GCP's split pricing) are skipped: host and GPU must be
  joined in one region, never across regions;
* the sentinel price 700.0 (and other placeholders) rejects the row;
* a spot price at or above on-demand means "no spot offer": the spot plan is dropped;
* GPU memory below 1 GiB in ``GpuInfo`` is a unit slip (RunPod's "80 MiB"): flagged, and not
  used to tell GPUs apart;
* the accelerator name, with the memory in ``GpuInfo`` and a form factor named in the instance
  type or ``GpuInfo``'s GPU name, picks the catalog GPU (:mod:`gpuplan.pricing.accelerators`,
  names from gpus.toml ``skypilot_names``); a row no catalog GPU matches is skipped with the
  reason. SkyPilot names the Quadro RTX 6000 (24 GiB, Lambda) ``RTX6000`` and the RTX 6000 Ada
  (48 GiB, RunPod) ``RTX6000-Ada``; neither is the RTX A6000 (``RTXA6000``, ``A6000``).

The catalog carries no date: the caller gives ``observed``; by default it is the file's
modification date as an upper bound (``undated<=YYYY-MM-DD``).
"""

from __future__ import annotations

import ast
from collections import defaultdict
from decimal import Decimal
from pathlib import Path
from statistics import median
from typing import Any

from gpuplan.pricing.accelerators import match_accelerator
from gpuplan.pricing.csv_import import (
    CsvImportError,
    CsvRow,
    ImportResult,
    default_observed,
    read_csv,
    require_columns,
    slug,
)
from gpuplan.pricing.offers import Offer, PricePlan
from gpuplan.pricing.provenance import Provenance, parse_observed
from gpuplan.pricing.validate import PLACEHOLDER_PRICES

REQUIRED_COLUMNS = ("InstanceType", "AcceleratorName", "AcceleratorCount", "Price", "Region")
HOURLY_NOTE = "billing granularity not in the catalog: hourly assumed"


class SkyPilotImportError(CsvImportError):
    """A SkyPilot catalog file that cannot be read; the message names the row and column."""


def gpu_info(row: CsvRow) -> tuple[str, float | None]:
    """The GPU's name and memory in MiB from ``GpuInfo`` (``("", None)`` when unreadable)."""
    text = row.text("GpuInfo") or row.text("GPUInfo")
    try:
        gpu: dict[str, Any] = ast.literal_eval(text)["Gpus"][0]
    except (ValueError, SyntaxError, KeyError, IndexError, TypeError, MemoryError, RecursionError):
        return "", None
    name = str(gpu.get("Name") or "")
    try:
        return name, float(gpu["MemoryInfo"]["SizeInMiB"])
    except (KeyError, TypeError, ValueError):
        return name, None


def _plan(mode: str, price: Decimal, provenance: Provenance, notes: str) -> PricePlan:
    return PricePlan(mode, mode, price, "USD", "instance", 3600, provenance, 3600, notes=notes)


def import_vms_csv(
    path: str | Path, provider: str | None = None, observed: str | None = None
) -> ImportResult:
    """Read a SkyPilot ``vms.csv`` into offers (see the module docstring for the rules)."""
    path = Path(path)
    header, rows = read_csv(path, "SkyPilot catalog", SkyPilotImportError)
    require_columns(path, header, REQUIRED_COLUMNS, SkyPilotImportError)
    observed = observed or default_observed(path)
    parse_observed(observed)
    provider = provider or (path.parent.name if path.parent.name else "skypilot")
    source = f"SkyPilot catalog {path.name} ({path})"
    result = ImportResult()
    groups: dict[tuple[str, str], list[tuple[CsvRow, str, Decimal | None, Decimal | None]]] = (
        defaultdict(list)
    )
    for row in rows:
        result.rows += 1
        accelerator = row.text("AcceleratorName")
        count = row.number("AcceleratorCount", SkyPilotImportError)
        price = row.number("Price", SkyPilotImportError)
        spot = row.number("SpotPrice", SkyPilotImportError) if "SpotPrice" in header else None
        instance = row.text("InstanceType")
        label = f"{instance or accelerator} (row {row.line})"
        if not accelerator or count is None or count <= 0:
            result.rows_without_gpu += 1
            continue
        if count != count.to_integral_value():
            result.skip(label, "AcceleratorCount", f"fractional GPU count {count}: skipped")
            continue
        if not instance:
            result.skip(label, "InstanceType", "GPU-only row (host priced separately): skipped")
            continue
        if price is not None and (price <= 0 or price in PLACEHOLDER_PRICES):
            result.skip(label, "Price", f"placeholder price {price}: row rejected", "error")
            continue
        gpu_name, memory_mib = gpu_info(row)
        if memory_mib is not None and memory_mib < 1024:
            result.skip(
                label, "GpuInfo", f"GPU memory {memory_mib:g} MiB: a unit slip (GB written as MiB?)"
            )
            memory_mib = None
        match = match_accelerator(
            "skypilot_names",
            accelerator,
            memory_mib * 2**20 if memory_mib is not None else None,
            f"{instance} {gpu_name} {accelerator}",
            "SkyPilot",
        )
        if match.gpu_id is None:
            result.skip(label, "AcceleratorName", f"{match.reason}: skipped")
            continue
        groups[(instance, row.text("Region"))].append((row, match.gpu_id, price, spot))

    for (instance, region), members in groups.items():
        first, gpu_id, _, _ = members[0]
        label = f"{instance} {region}"
        prices = [price for _, _, price, _ in members if price is not None]
        on_demand = min(prices) if prices else None
        spots = [spot for _, _, _, spot in members if spot is not None and spot > 0]
        real_spots = [spot for spot in spots if on_demand is None or spot < on_demand]
        if len(real_spots) < len(spots):
            result.skip(
                label,
                "SpotPrice",
                "spot at or above on-demand in some zones: treated as no spot there",
            )
        provenance = Provenance.from_fields({"source": source, "observed": observed}, label)
        plans = []
        if on_demand is not None:
            plans.append(_plan("hourly", on_demand, provenance, HOURLY_NOTE))
        if real_spots:
            notes = f"median over {len(real_spots)} zone(s) with a spot discount; {HOURLY_NOTE}"
            plans.append(_plan("spot", Decimal(median(real_spots)), provenance, notes))
        if not plans:
            continue
        vcpus = first.number("vCPUs", SkyPilotImportError)
        memory_gib = first.number("MemoryGiB", SkyPilotImportError)
        result.offers.append(
            Offer(
                id=slug(f"{provider}-{instance}-{region}"),
                provider=provider,
                gpu=gpu_id,
                gpus=int(Decimal(first.text("AcceleratorCount"))),
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
