"""Results about offers files: the findings of ``gpuplan offers --check --json`` and what
``gpuplan offers import --json`` read and wrote."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class OfferFinding:
    """One finding (``gpuplan.pricing.validate.Finding``): ``level`` ``error`` (the offer is
    rejected) or ``warning``, the file it came from (``origin``, empty when none), the offer or
    row, the field and the message."""

    level: str
    origin: str
    offer: str
    field: str
    message: str


@dataclass(frozen=True)
class OffersCheck:
    """``gpuplan offers --check --json``: how many offers were checked, how many findings are
    errors, and every finding."""

    offers: int
    errors: int
    findings: list[OfferFinding]


@dataclass(frozen=True)
class ImportedFile:
    """One offers file an import wrote: its path, provider, whether it replaced a file there,
    and the ids of the offers in it."""

    path: str
    provider: str
    replaced: bool
    offers: list[str]


@dataclass(frozen=True)
class OffersImport:
    """``gpuplan offers import --json``: the format read, the data rows and those without a
    GPU (counted, not listed), the offers imported, the files written and each finding."""

    format: str
    rows: int
    rows_without_gpu: int
    imported: int
    files: list[ImportedFile]
    findings: list[OfferFinding]
