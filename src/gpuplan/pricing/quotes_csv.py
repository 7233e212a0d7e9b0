"""Import a plain CSV of the user's own quotes as gpuplan offers.

One row is one price plan; rows with the same ``id`` (or, without ids, the same provider, GPU,
GPU count and region) are the plans of one offer. Columns, read by name in any order:

=========================  ========  ============================================================
column                     required  meaning
=========================  ========  ============================================================
``provider``               yes [1]   who sells it ("AutoDL", "Lambda")
``gpu``                    yes       catalog GPU id or alias ("h100-sxm-80gb", "H100 SXM", "4090")
``price``                  yes       a positive number: per hour for hourly, per-second, spot and
                                     reserved plans, per term for daily, weekly, monthly and yearly
``currency``               yes       CNY, USD or EUR (one per provider)
``per``                    yes       ``gpu`` or ``instance``: what the price buys
``observed``               yes [2]   when the quote was made: YYYY-MM-DD (or YYYY-MM, ...)
``gpus``                   no        GPUs per instance (default 1)
``mode``                   no        plan mode (default ``hourly``): per_second, per_minute, hourly,
                                     daily, weekly, monthly, yearly, reserved, spot, ...
``region``                 no        where
``instance_type``          no        the provider's name for the machine
``id``                     no        offer id (default: provider-gpu-xGPUS-region)
``name``                   no        plan name, when one offer has two plans of one mode
``granularity``            no        billing step (1s, 1m, 1h); the mode's default otherwise
``minimum``                no        minimum charge per run (10m, 1h)
``term``                   no        the term of a reserved plan (1y), or a package's if not the
                                     mode's own
``interruptions_per_hour`` no        spot only: reclaims per instance-hour, with
``interruptions_source``             where that rate comes from (required with it)
``source``                 no        where the quote comes from (default: this file and row)
``notes``                  no        free text
=========================  ========  ============================================================

[1] or ``--provider`` for every row; [2] or ``--observed`` for rows that leave it empty.

A wrong cell is an error naming the file, the row and the column. Each provider's rows become one
offers document, read back through :func:`gpuplan.pricing.offers.parse_provider`, so what the
import accepts is what every other command reads.
"""

from __future__ import annotations

import datetime as dt
from pathlib import Path
from typing import Any

from gpuplan.errors import InputError
from gpuplan.limits import shown
from gpuplan.pricing.csv_import import (
    CsvImportError,
    CsvRow,
    ImportResult,
    read_csv,
    require_columns,
    slug,
)
from gpuplan.pricing.offers import CURRENCIES, PLAN_MODES, PRICE_UNITS, parse_provider
from gpuplan.pricing.provenance import parse_observed
from gpuplan.units import parse_duration

REQUIRED_COLUMNS = ("gpu", "price", "currency", "per")
COLUMNS = (
    "provider",
    *REQUIRED_COLUMNS,
    "observed",
    "gpus",
    "mode",
    "region",
    "instance_type",
    "id",
    "name",
    "granularity",
    "minimum",
    "term",
    "interruptions_per_hour",
    "interruptions_source",
    "source",
    "notes",
)
OFFER_COLUMNS = ("provider", "gpu", "gpus", "region", "instance_type")
"""Columns every row of one offer must agree on."""


class QuotesCsvError(CsvImportError):
    """A quotes CSV that cannot be read; the message names the row and column."""


def _fail(row: CsvRow, column: str, key: str | InputError, **values: object) -> InputError:
    """The error naming the row and column; ``key`` is the problem's message key, or an error
    that is the problem."""
    problem = key if isinstance(key, InputError) else InputError.of(key, **values)
    return row.error(column, problem, QuotesCsvError)


def _choice(row: CsvRow, column: str, allowed: tuple[str, ...], default: str = "") -> str:
    value = row.text(column) or default
    if not value:
        raise _fail(row, column, "error.cell_missing", accepted=", ".join(allowed))
    if value not in allowed:
        raise _fail(
            row, column, "error.cell_not_one_of", value=shown(value), accepted=", ".join(allowed)
        )
    return value


def _duration(row: CsvRow, column: str) -> str | None:
    text = row.text(column)
    if not text:
        return None
    try:
        parse_duration(text)
    except InputError as error:
        raise _fail(row, column, error) from None
    return text


def _observed(row: CsvRow, default: str | None, today: dt.date) -> str:
    text = row.text("observed") or default
    if not text:
        raise _fail(row, "observed", "error.cell_observed_missing")
    try:
        latest, _ = parse_observed(text)
    except InputError as error:
        raise _fail(row, "observed", error) from None
    if latest > today:
        raise _fail(row, "observed", "error.cell_future", value=shown(text))
    return text


def _plan(row: CsvRow, path: Path, observed: str | None, today: dt.date) -> dict[str, Any]:
    """One row's plan as an offers file writes it, every cell checked."""
    price = row.number("price", QuotesCsvError)
    if price is None or price <= 0:
        if not row.text("price"):
            raise _fail(row, "price", "error.cell_price_missing")
        raise _fail(row, "price", "error.cell_price", value=shown(row.text("price")))
    mode = _choice(row, "mode", PLAN_MODES, "hourly")
    plan: dict[str, Any] = {
        "mode": mode,
        "price": price,
        "per": _choice(row, "per", PRICE_UNITS),
        "observed": _observed(row, observed, today),
        "source": row.text("source") or f"own quote, {path.name} row {row.line}",
    }
    if row.text("name"):
        plan["name"] = row.text("name")
    for column in ("granularity", "minimum", "term"):
        value = _duration(row, column)
        if value is not None:
            plan[column] = value
    if mode == "reserved" and "term" not in plan:
        raise _fail(row, "term", "error.cell_reserved_term")
    rate = row.number("interruptions_per_hour", QuotesCsvError)
    if rate is not None:
        if mode != "spot":
            raise _fail(row, "interruptions_per_hour", "error.cell_spot_only", mode=mode)
        if rate < 0:
            raise _fail(row, "interruptions_per_hour", "error.cell_non_negative")
        if not row.text("interruptions_source"):
            raise _fail(row, "interruptions_source", "error.cell_interruptions_source")
        plan["interruptions_per_hour"] = float(rate)
        plan["interruptions_source"] = row.text("interruptions_source")
    if row.text("notes"):
        plan["notes"] = row.text("notes")
    return plan


def _gpus(row: CsvRow) -> int:
    count = row.number("gpus", QuotesCsvError)
    if count is None:
        return 1
    if count < 1 or count != count.to_integral_value():
        raise _fail(row, "gpus", "error.cell_gpus", value=shown(row.text("gpus")))
    return int(count)


def _gpu_id(row: CsvRow) -> str:
    from gpuplan.catalog import CatalogError, resolve_gpu_id

    if not row.text("gpu"):
        raise _fail(row, "gpu", "error.cell_gpu_missing")
    try:
        return resolve_gpu_id(row.text("gpu"))
    except CatalogError as error:
        raise _fail(row, "gpu", error) from None


def import_quotes_csv(
    path: str | Path,
    provider: str | None = None,
    observed: str | None = None,
    today: dt.date | None = None,
) -> ImportResult:
    """Read the user's quotes CSV into offers (see the module docstring for the columns)."""
    path = Path(path)
    today = today or dt.date.today()
    header, rows = read_csv(path, "quotes CSV", QuotesCsvError)
    require_columns(path, header, REQUIRED_COLUMNS, QuotesCsvError)
    if "provider" not in header and not provider:
        raise QuotesCsvError.of("error.csv_provider", path=shown(str(path)))
    unknown = [column for column in header if column not in COLUMNS]
    if unknown:
        raise QuotesCsvError.of(
            "error.csv_columns",
            path=shown(str(path)),
            unknown=", ".join(unknown),
            accepted=", ".join(COLUMNS),
        )
    result = ImportResult()
    documents: dict[str, dict[str, Any]] = {}
    offers: dict[tuple[str, str], dict[str, Any]] = {}
    first_rows: dict[tuple[str, str], CsvRow] = {}
    plan_rows: dict[tuple[str, str, str], CsvRow] = {}
    for row in rows:
        result.rows += 1
        owner = row.text("provider") or provider
        if not owner:
            raise _fail(row, "provider", "error.cell_provider_missing")
        currency = _choice(row, "currency", CURRENCIES)
        fields = {
            "provider": owner,
            "gpu": _gpu_id(row),
            "gpus": _gpus(row),
            "region": row.text("region"),
            "instance_type": row.text("instance_type"),
        }
        plan = _plan(row, path, observed, today)
        document = documents.setdefault(
            owner, {"provider": owner, "currency": currency, "offers": [], "row": row}
        )
        if document["currency"] != currency:
            raise _fail(
                row,
                "currency",
                "error.cell_currency",
                currency=currency,
                first=document["currency"],
                provider=owner,
                first_row=document["row"].line,
            )
        offer_id = row.text("id") or slug(
            f"{owner}-{fields['gpu']}-x{fields['gpus']}-{fields['region']}"
        )
        key = (owner, offer_id)
        if key not in offers:
            offers[key] = {"id": offer_id, **fields, "plans": []}
            first_rows[key] = row
            document["offers"].append(offers[key])
        for column in OFFER_COLUMNS:
            if offers[key][column] != fields[column]:
                raise _fail(
                    row,
                    column,
                    "error.cell_offer_differs",
                    value=shown(str(fields[column])),
                    first=shown(str(offers[key][column])),
                    offer=repr(offer_id),
                    first_row=first_rows[key].line,
                )
        plan_name = plan.get("name", plan["mode"])
        earlier = plan_rows.get((owner, offer_id, plan_name))
        if earlier is not None:
            raise _fail(
                row,
                "mode",
                "error.cell_plan_twice",
                offer=repr(offer_id),
                plan=repr(plan_name),
                first_row=earlier.line,
            )
        plan_rows[(owner, offer_id, plan_name)] = row
        offers[key]["plans"].append(plan)
    for owner, document in documents.items():
        document.pop("row")
        for offer in document["offers"]:
            offer.pop("provider")
            for column in ("region", "instance_type"):
                if not offer[column]:
                    offer.pop(column)
        result.offers += parse_provider(document, f"{path} ({owner})")
    return result
