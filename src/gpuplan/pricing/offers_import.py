"""``gpuplan offers import``: a SkyPilot catalog, a gpuhunt catalog or the user's own quotes, as
offers files in the user's catalog directory.

The format is told by the header (:func:`detect_format`): SkyPilot's ``InstanceType,
AcceleratorName, ...`` (:mod:`gpuplan.pricing.skypilot`), gpuhunt's ``instance_name, location,
price, ..., gpu_name, spot`` (:mod:`gpuplan.pricing.gpuhunt`), or the quotes columns ``provider,
gpu, price, currency, per, ...`` (:mod:`gpuplan.pricing.quotes_csv`). Each provider's offers
become one file in the built-in offers format, ``<format>-<provider>.toml`` in
:func:`gpuplan.user_data.user_offers_dir` (importing the same catalog again replaces it), written
atomically and read back through the offers parser before it replaces anything.
"""

from __future__ import annotations

import csv
import datetime as dt
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from gpuplan.errors import InputError
from gpuplan.limits import shown
from gpuplan.pricing.csv_import import CsvImportError, ImportResult, slug
from gpuplan.pricing.offers import Offer, read_offers_text

FORMATS = ("skypilot", "gpuhunt", "csv")
FORMAT_LABELS = {"skypilot": "SkyPilot catalog", "gpuhunt": "gpuhunt catalog", "csv": "quotes CSV"}
FILE_PREFIXES = {"skypilot": "skypilot", "gpuhunt": "gpuhunt", "csv": "quotes"}


def _signatures() -> dict[str, tuple[str, ...]]:
    from gpuplan.pricing import gpuhunt, quotes_csv, skypilot

    return {
        "skypilot": skypilot.REQUIRED_COLUMNS,
        "gpuhunt": gpuhunt.REQUIRED_COLUMNS,
        "csv": quotes_csv.REQUIRED_COLUMNS,
    }


def detect_format(path: Path) -> str:
    """The format whose required columns the file's header has."""
    try:
        with open(path, encoding="utf-8-sig", newline="") as stream:
            first = stream.readline(1 << 16)
    except (OSError, UnicodeDecodeError) as failure:
        reason = getattr(failure, "strerror", None) or str(failure)
        raise CsvImportError.of("error.import_read", path=shown(str(path)), reason=reason) from None
    header = {name.strip() for name in next(csv.reader([first]), [])}
    for name, columns in _signatures().items():
        if set(columns) <= header:
            return name
    needs = "; ".join(f"{name}: {', '.join(columns)}" for name, columns in _signatures().items())
    raise CsvImportError.of("error.import_format", path=shown(str(path)), needs=needs)


def import_file(
    path: str | Path,
    file_format: str | None = None,
    provider: str | None = None,
    observed: str | None = None,
) -> tuple[str, ImportResult]:
    """``(format, result)`` for one file; the format is detected unless given."""
    path = Path(path)
    if file_format is not None and file_format not in FORMATS:
        raise InputError.of(
            "error.not_one_of",
            field="--format",
            value=repr(file_format),
            accepted=", ".join(FORMATS),
        )
    chosen = file_format or detect_format(path)
    from gpuplan.pricing.gpuhunt import import_gpuhunt_csv
    from gpuplan.pricing.quotes_csv import import_quotes_csv
    from gpuplan.pricing.skypilot import import_vms_csv

    importers: dict[str, Callable[..., ImportResult]] = {
        "skypilot": import_vms_csv,
        "gpuhunt": import_gpuhunt_csv,
        "csv": import_quotes_csv,
    }
    return chosen, importers[chosen](path, provider=provider, observed=observed)


@dataclass(frozen=True)
class WrittenFile:
    """One offers file an import wrote, and the offers in it."""

    path: Path
    provider: str
    offers: tuple[Offer, ...]
    replaced: bool


def by_provider(offers: list[Offer]) -> dict[str, list[Offer]]:
    grouped: dict[str, list[Offer]] = {}
    for offer in offers:
        grouped.setdefault(offer.provider, []).append(offer)
    return grouped


def user_offers_path(file_format: str, provider: str) -> Path:
    """Where an import of ``provider`` from ``file_format`` goes in the user's catalog."""
    from gpuplan.user_data import user_offers_dir

    return user_offers_dir() / f"{FILE_PREFIXES[file_format]}-{slug(provider) or 'offers'}.toml"


def write_import(
    result: ImportResult,
    file_format: str,
    source: Path,
    output: Path | None = None,
    overwrite: bool = True,
) -> list[WrittenFile]:
    """Write ``result`` as one offers file per provider (``output`` instead, for a single
    provider); each is parsed back before it is written."""
    from gpuplan.pricing.offers_toml import offers_to_toml
    from gpuplan.writing import write_atomically

    groups = by_provider(result.offers)
    if output is not None and len(groups) > 1:
        raise InputError.of("error.import_output", count=len(groups), providers=", ".join(groups))
    header = (
        f"Imported by `gpuplan offers import` from {source.name} "
        f"({FORMAT_LABELS[file_format]}) on {dt.date.today().isoformat()}."
    )
    written = []
    for provider, offers in groups.items():
        target = output or user_offers_path(file_format, provider)
        text = offers_to_toml(offers, provider, offers[0].currency, header)
        read_offers_text(text, str(target))
        existed = target.exists()
        if output is None:
            target.parent.mkdir(parents=True, exist_ok=True)
        write_atomically(target, text, overwrite=overwrite)
        written.append(WrittenFile(target, provider, tuple(offers), existed))
    return written
