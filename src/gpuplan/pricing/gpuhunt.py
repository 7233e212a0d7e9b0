"""Import a gpuhunt offline catalog (``<provider>.csv``) as gpuplan offers.

dstack's gpuhunt (github.com/dstackai/gpuhunt) publishes one CSV per provider (``aws.csv``,
``runpod.csv``, ... in ``catalog.zip``), written by ``gpuhunt._internal.storage.dump`` with the
columns of ``CATALOG_V2_FIELDS``: ``instance_name, location, price, cpu, memory, gpu_count,
gpu_name, gpu_memory, spot, disk_size, gpu_vendor, flags, cpu_arch, provider_data``. ``price``
is US dollars per instance-hour, ``memory`` the host RAM and ``gpu_memory`` each GPU's memory
in GB as gpuhunt writes them (whole GiB: ``correct_gpu_memory_gib``), ``spot`` is ``True`` or
``False``; the provider is the file's name (a ``provider`` column, where present, wins).

One offer per (instance, location, GPU count): its on-demand row gives an hourly plan and its
spot row a spot plan (dropped when not below on-demand); duplicate rows keep the lowest price.
Rows without GPUs are counted, not offers. ``gpu_name`` with ``gpu_memory`` and a form factor
named in ``instance_name`` (RunPod's "NVIDIA H100 PCIe") pick the catalog GPU
(:mod:`gpuplan.pricing.accelerators`, names from gpus.toml ``gpuhunt_names``). The catalog
carries no date: ``observed`` defaults to ``undated<=`` the file's modification day.
"""

from __future__ import annotations

from collections import defaultdict
from decimal import Decimal
from pathlib import Path

from gpuplan.errors import InputError
from gpuplan.limits import shown
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

REQUIRED_COLUMNS = ("instance_name", "location", "price", "gpu_count", "gpu_name", "spot")
HOURLY_NOTE = "billing granularity not in the catalog: hourly assumed"


class GpuhuntImportError(CsvImportError):
    """A gpuhunt catalog file that cannot be read; the message names the row and column."""


def _spot(row: CsvRow) -> bool:
    text = row.text("spot").lower()
    if text not in ("true", "false"):
        problem = InputError.of("error.cell_true_false", value=shown(row.text("spot")))
        raise row.error("spot", problem, GpuhuntImportError)
    return text == "true"


def _gpu_count(row: CsvRow) -> int:
    count = row.number("gpu_count", GpuhuntImportError)
    if count is None or count < 0 or count != count.to_integral_value():
        problem = InputError.of("error.cell_gpu_count", value=shown(row.text("gpu_count")))
        raise row.error("gpu_count", problem, GpuhuntImportError)
    return int(count)


def import_gpuhunt_csv(
    path: str | Path, provider: str | None = None, observed: str | None = None
) -> ImportResult:
    """Read a gpuhunt catalog CSV into offers (see the module docstring for the rules)."""
    path = Path(path)
    header, rows = read_csv(path, "gpuhunt catalog", GpuhuntImportError)
    require_columns(path, header, REQUIRED_COLUMNS, GpuhuntImportError)
    observed = observed or default_observed(path)
    parse_observed(observed)
    source = f"gpuhunt catalog {path.name} ({path})"
    result = ImportResult()
    groups: dict[tuple[str, str, str, int], dict[bool, tuple[Decimal, CsvRow]]] = defaultdict(dict)
    matched: dict[tuple[str, str, str, int], str] = {}
    for row in rows:
        result.rows += 1
        count = _gpu_count(row)
        price = row.number("price", GpuhuntImportError)
        spot = _spot(row)
        instance = row.text("instance_name")
        location = row.text("location")
        name = row.text("gpu_name")
        label = f"{instance} {location} (row {row.line})"
        if count == 0 or not name:
            result.rows_without_gpu += 1
            continue
        if price is None or price <= 0:
            result.skip(label, "price", f"price {row.text('price') or 'missing'}: row rejected")
            continue
        memory = row.number("gpu_memory", GpuhuntImportError) if "gpu_memory" in header else None
        match = match_accelerator(
            "gpuhunt_names",
            name,
            float(memory) * 2**30 if memory is not None else None,
            f"{instance} {name}",
            "gpuhunt",
        )
        if match.gpu_id is None:
            result.skip(label, "gpu_name", f"{match.reason}: skipped")
            continue
        owner = (row.text("provider") if "provider" in header else "") or provider or path.stem
        key = (owner, instance, location, count)
        matched[key] = match.gpu_id
        kept = groups[key].get(spot)
        if kept is not None:
            result.skip(label, "price", "duplicate row: the lowest price is kept")
        if kept is None or price < kept[0]:
            groups[key][spot] = (price, row)

    counts: dict[tuple[str, str, str], set[int]] = defaultdict(set)
    for owner, instance, location, count in groups:
        counts[(owner, instance, location)].add(count)
    for key, by_mode in groups.items():
        owner, instance, location, count = key
        label = f"{instance} {location}"
        provenance = Provenance.from_fields({"source": source, "observed": observed}, label)
        plans = []
        on_demand = by_mode.get(False)
        if on_demand is not None:
            plans.append(
                PricePlan(
                    "hourly",
                    "hourly",
                    on_demand[0],
                    "USD",
                    "instance",
                    3600,
                    provenance,
                    3600,
                    notes=HOURLY_NOTE,
                )
            )
        spot_row = by_mode.get(True)
        if spot_row is not None and (on_demand is None or spot_row[0] < on_demand[0]):
            plans.append(
                PricePlan(
                    "spot",
                    "spot",
                    spot_row[0],
                    "USD",
                    "instance",
                    3600,
                    provenance,
                    3600,
                    notes=HOURLY_NOTE,
                )
            )
        elif spot_row is not None:
            result.skip(label, "price", "spot at or above on-demand: treated as no spot offer")
        if not plans:
            continue
        first = next(iter(by_mode.values()))[1]
        several = len(counts[(owner, instance, location)]) > 1
        vcpus = first.number("cpu", GpuhuntImportError) if "cpu" in header else None
        ram = first.number("memory", GpuhuntImportError) if "memory" in header else None
        result.offers.append(
            Offer(
                id=slug(f"{owner}-{instance}-{location}" + (f"-x{count}" if several else "")),
                provider=owner,
                gpu=matched[key],
                gpus=count,
                currency="USD",
                plans=tuple(plans),
                product_line="gpuhunt catalog",
                region=location,
                instance_type=instance,
                vcpus=int(vcpus) if vcpus is not None else None,
                ram_gb=float(ram) if ram is not None else None,
                origin=str(path),
            )
        )
    return result
