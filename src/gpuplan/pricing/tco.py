"""Buy versus rent over N years (total cost of ownership).

Owning, in a cash view, year by year (pricing-and-catalogs.md §9.8):

* capex ``C`` = GPUs + servers + network + storage + installation + other, paid at the start;
* financing: with a yearly cost of capital ``r`` the capex is repaid in ``n`` equal yearly
  instalments ``A = C r (1+r)^n / ((1+r)^n - 1)`` (the capital recovery factor); the interest
  ``n A - C`` is spread evenly over the years;
* power = GPU TDP x GPUs per node + host watts, x nodes, x PUE x 8,760 h x utilization x price
  per kWh (or a flat yearly figure);
* operations: staff, colocation, maintenance, other, each per year; technology refresh per year;
* residual value at the end: ``residual_share x C``, or, without it, the straight-line book value
  ``C x max(0, 1 - years / depreciation_years)``; it comes off the last year.
  Depreciation is reported (``C / depreciation_years`` a year) but is not a cash cost: adding it
  on top of capex counts the hardware twice.

Renting: a flat monthly rent (``monthly``, 12 months a year), or an offer quoted by the quote
engine for ``utilization x years x 365`` days on ``instances`` instances.

Break-even utilization assumes rent scales with the hours used (pay-as-you-go at the same
average rate) while owning costs the same whatever the use except power:
``u* = fixed / (rent at full use - power at full use)``; none when ``u*`` exceeds 1.
Break-even month: the first month when cumulative rent reaches cumulative owning cost.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, replace
from decimal import Decimal
from pathlib import Path
from typing import Any

from gpuplan.errors import InputError
from gpuplan.limits import read_toml_file
from gpuplan.pricing.offers import CURRENCIES, to_decimal

HOURS_PER_YEAR = 8760
CAPEX_ITEMS = ("gpus", "servers", "network", "storage", "installation", "other")
OPERATION_ITEMS = ("staff", "colocation", "maintenance", "power", "other")


class TCOError(InputError):
    """A TCO input file that cannot be used; the message names the field."""


@dataclass(frozen=True)
class PowerInputs:
    """What the owned cluster draws, to price electricity."""

    gpu_tdp_watts: Decimal
    gpus_per_node: int
    nodes: int
    host_watts_per_node: Decimal
    pue: Decimal
    price_per_kwh: Decimal

    def yearly_cost(self, utilization: Decimal) -> Decimal:
        """``(TDP x GPUs per node + host) x nodes / 1000 x PUE x 8760 x utilization x price``."""
        kilowatts = (
            (self.gpu_tdp_watts * self.gpus_per_node + self.host_watts_per_node) * self.nodes / 1000
        )
        return kilowatts * self.pue * HOURS_PER_YEAR * utilization * self.price_per_kwh


@dataclass(frozen=True)
class TCOInputs:
    """Everything the buy-versus-rent comparison needs, in one currency."""

    currency: str
    years: int
    utilization: Decimal
    capex: Mapping[str, Decimal]
    cost_of_capital: Decimal
    depreciation_years: Decimal | None
    residual_share: Decimal | None
    operations: Mapping[str, Decimal]
    refresh_per_year: Decimal
    power: PowerInputs | None
    rent_monthly: Decimal | None
    rent_offer: str | None
    rent_instances: int
    gpus: int | None
    sources: Mapping[str, str]


def in_currency(inputs: TCOInputs, currency: str, rates: Any) -> TCOInputs:
    """``inputs`` with every amount (capex, operations, refresh, the electricity price and the
    monthly rent) converted to ``currency`` at ``rates`` (``pricing.currency.ExchangeRates``):
    the comparison is linear in money, so its answer converts the same way."""
    if currency == inputs.currency:
        return inputs

    def convert(amount: Decimal) -> Decimal:
        return Decimal(rates.convert(amount, inputs.currency, currency))

    power = inputs.power
    if power is not None:
        power = replace(power, price_per_kwh=convert(power.price_per_kwh))
    return replace(
        inputs,
        currency=currency,
        capex={item: convert(amount) for item, amount in inputs.capex.items()},
        operations={item: convert(amount) for item, amount in inputs.operations.items()},
        refresh_per_year=convert(inputs.refresh_per_year),
        power=power,
        rent_monthly=None if inputs.rent_monthly is None else convert(inputs.rent_monthly),
    )


LARGEST_TCO_FIGURE = Decimal("1e15")


def _decimal_field(
    table: Mapping[str, Any], key: str, where: str, default: Decimal | None = None
) -> Decimal | None:
    if key not in table:
        return default
    value = to_decimal(table[key], f"{where}.{key}")
    if not value.is_finite() or value < 0 or value > LARGEST_TCO_FIGURE:
        raise TCOError.of("error.tco_figure", field=f"{where}.{key}", value=value)
    return value


def _count(table: Mapping[str, Any], key: str, where: str, default: int | None) -> int | None:
    """A positive whole number of GPUs, nodes or instances (at most 2^20)."""
    value = table.get(key, default)
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= 1 << 20:
        raise TCOError.of("error.tco_count", field=f"{where}.{key}", value=repr(value))
    return value


def _power_usage_effectiveness(table: Mapping[str, Any], where: str) -> Decimal:
    """PUE: facility power over IT power, at least 1 (1.1-1.6 in published data centres)."""
    pue = _decimal_field(table, "pue", where, Decimal(1))
    if pue is None or not Decimal(1) <= pue <= Decimal(5):
        raise TCOError.of("error.tco_pue", field=where, value=pue)
    return pue


def _table(document: Mapping[str, Any], key: str, origin: str) -> Mapping[str, Any]:
    value = document.get(key, {})
    if not isinstance(value, Mapping):
        raise TCOError.of("error.tco_table", origin=origin, key=key)
    return value


def parse_tco(document: Mapping[str, Any], origin: str) -> TCOInputs:
    """Read TCO inputs from a parsed TOML document (see examples/seed-tco.toml)."""
    try:
        settings = _table(document, "tco", origin)
        buy = _table(document, "buy", origin)
        operations = _table(document, "operations", origin)
        rent = _table(document, "rent", origin)
        currency = settings.get("currency")
        if currency not in CURRENCIES:
            raise TCOError.of(
                "error.tco_currency",
                origin=origin,
                accepted=", ".join(CURRENCIES),
                value=repr(currency),
            )
        years = settings.get("years")
        if isinstance(years, bool) or not isinstance(years, int) or not 1 <= years <= 30:
            raise TCOError.of("error.tco_years", origin=origin, value=repr(years))
        utilization = _decimal_field(settings, "utilization", f"{origin}: tco", Decimal(1))
        assert utilization is not None
        if not Decimal(0) < utilization <= Decimal(1):
            raise TCOError.of("error.tco_utilization", origin=origin, value=utilization)
        capex = {
            item: _decimal_field(buy, item, f"{origin}: buy") or Decimal(0) for item in CAPEX_ITEMS
        }
        unknown = (
            set(buy)
            - set(CAPEX_ITEMS)
            - {"cost_of_capital", "depreciation_years", "residual_share", "sources"}
        )
        if unknown:
            raise TCOError.of(
                "error.tco_unknown_field",
                field=f"{origin}: buy.{sorted(unknown)[0]}",
                accepted=", ".join(
                    (*CAPEX_ITEMS, "cost_of_capital", "depreciation_years", "residual_share")
                ),
            )
        yearly = {
            item: _decimal_field(operations, item, f"{origin}: operations") or Decimal(0)
            for item in OPERATION_ITEMS
        }
        unknown = set(operations) - set(OPERATION_ITEMS) - {"refresh", "sources"}
        if unknown:
            raise TCOError.of(
                "error.tco_unknown_field",
                field=f"{origin}: operations.{sorted(unknown)[0]}",
                accepted=", ".join((*OPERATION_ITEMS, "refresh")),
            )
        power_table = document.get("power")
        power = None
        if power_table is not None:
            where = f"{origin}: power"
            power = PowerInputs(
                gpu_tdp_watts=_decimal_field(power_table, "gpu_tdp_watts", where) or Decimal(0),
                gpus_per_node=_count(power_table, "gpus_per_node", where, 8) or 8,
                nodes=_count(power_table, "nodes", where, 1) or 1,
                host_watts_per_node=_decimal_field(power_table, "host_watts_per_node", where)
                or Decimal(0),
                pue=_power_usage_effectiveness(power_table, where),
                price_per_kwh=_decimal_field(power_table, "price_per_kwh", where) or Decimal(0),
            )
            if yearly["power"]:
                raise TCOError.of("error.tco_power_twice", field=where)
        rent_monthly = _decimal_field(rent, "monthly", f"{origin}: rent")
        rent_offer = rent.get("offer")
        if (rent_monthly is None) == (rent_offer is None):
            raise TCOError.of("error.tco_rent", origin=origin)
        instances = _count(rent, "instances", f"{origin}: rent", 1) or 1
        gpus = _count(settings, "gpus", f"{origin}: tco", None)
        if gpus is None and power is not None:
            gpus = power.gpus_per_node * power.nodes
        sources: dict[str, str] = {}
        for name, table in (
            ("tco", settings),
            ("buy", buy),
            ("operations", operations),
            ("rent", rent),
        ):
            for key, value in dict(table.get("sources", {})).items():
                sources[f"{name}.{key}"] = str(value)
        return TCOInputs(
            currency=str(currency),
            years=years,
            utilization=utilization,
            capex=capex,
            cost_of_capital=_decimal_field(buy, "cost_of_capital", f"{origin}: buy") or Decimal(0),
            depreciation_years=_decimal_field(buy, "depreciation_years", f"{origin}: buy"),
            residual_share=_decimal_field(buy, "residual_share", f"{origin}: buy"),
            operations=yearly,
            refresh_per_year=_decimal_field(operations, "refresh", f"{origin}: operations")
            or Decimal(0),
            power=power,
            rent_monthly=rent_monthly,
            rent_offer=str(rent_offer) if rent_offer is not None else None,
            rent_instances=instances,
            gpus=int(gpus) if gpus is not None else None,
            sources=sources,
        )
    except (TypeError, ValueError) as error:
        if isinstance(error, InputError):
            raise
        raise TCOError.of("error.in_field", field=origin, error=str(error)) from None


def load_tco_file(path: str | Path) -> TCOInputs:
    return parse_tco(read_toml_file(path, "TCO", TCOError), str(path))


def _capital_recovery_interest(capex: Decimal, rate: Decimal, years: int) -> Decimal:
    """Total interest when ``capex`` is repaid in ``years`` equal instalments at ``rate``
    (the annuity ``capex * r (1 + r)^n / ((1 + r)^n - 1)``); none at a rate too small to change
    ``(1 + r)^n`` at Decimal's precision, the formula's limit as ``r`` goes to 0."""
    if rate == 0 or capex == 0:
        return Decimal(0)
    growth = (1 + rate) ** years
    if growth == 1:
        return Decimal(0)
    instalment = capex * rate * growth / (growth - 1)
    return instalment * years - capex


def compare(inputs: TCOInputs, rent_cost_for_years: Any = None) -> dict[str, Any]:
    """Buy versus rent, with a yearly cumulative table and break-even points.

    ``rent_cost_for_years(years: Decimal, utilization: Decimal) -> Decimal`` prices renting an
    offer (the CLI passes the quote engine); a flat monthly rent needs none.
    """
    capex = sum(inputs.capex.values(), Decimal(0))
    years = inputs.years
    interest = _capital_recovery_interest(capex, inputs.cost_of_capital, years)
    power_full = inputs.power.yearly_cost(Decimal(1)) if inputs.power else Decimal(0)
    power_yearly = power_full * inputs.utilization if inputs.power else inputs.operations["power"]
    operations_yearly = sum(
        (value for key, value in inputs.operations.items() if key != "power"), Decimal(0)
    )
    yearly_owning = operations_yearly + power_yearly + inputs.refresh_per_year + interest / years
    if inputs.residual_share is not None:
        residual = capex * inputs.residual_share
    elif inputs.depreciation_years:
        residual = capex * max(Decimal(0), 1 - Decimal(years) / inputs.depreciation_years)
    else:
        residual = Decimal(0)

    def rent_cumulative(year_fraction: Decimal, utilization: Decimal) -> Decimal:
        if inputs.rent_monthly is not None:
            return inputs.rent_monthly * 12 * year_fraction * utilization / inputs.utilization
        if rent_cost_for_years is None:
            raise TCOError.of("error.tco_quote_engine", offer=repr(inputs.rent_offer))
        return Decimal(rent_cost_for_years(year_fraction, utilization))

    def buy_cumulative(year_fraction: Decimal) -> Decimal:
        end = residual if year_fraction >= years else Decimal(0)
        return capex + yearly_owning * year_fraction - end

    table = []
    for year in range(years + 1):
        buy = buy_cumulative(Decimal(year))
        rent = rent_cumulative(Decimal(year), inputs.utilization)
        table.append(
            {
                "year": year,
                "buy_cumulative": buy,
                "rent_cumulative": rent,
                "buy_minus_rent": buy - rent,
            }
        )
    buy_total = buy_cumulative(Decimal(years))
    rent_total = rent_cumulative(Decimal(years), inputs.utilization)

    break_even_month = None
    for month in range(1, 12 * years + 1):
        fraction = Decimal(month) / 12
        if rent_cumulative(fraction, inputs.utilization) >= buy_cumulative(fraction):
            break_even_month = month
            break

    fixed = buy_total - power_yearly * years
    rent_full = rent_cumulative(Decimal(years), Decimal(1))
    margin = rent_full - power_full * years
    break_even_utilization = fixed / margin if margin > 0 else None
    if break_even_utilization is not None and break_even_utilization > 1:
        break_even_utilization = None

    delivered_gpu_hours = (
        Decimal(inputs.gpus * HOURS_PER_YEAR * years) * inputs.utilization if inputs.gpus else None
    )
    return {
        "currency": inputs.currency,
        "years": years,
        "utilization": inputs.utilization,
        "buy": {
            "capex": dict(inputs.capex),
            "capex_total": capex,
            "financing_interest": interest,
            "depreciation_per_year": capex / inputs.depreciation_years
            if inputs.depreciation_years
            else None,
            "operations_per_year": dict(inputs.operations, power=power_yearly),
            "refresh_per_year": inputs.refresh_per_year,
            "residual_value": residual,
            "total": buy_total,
        },
        "rent": {
            "monthly": inputs.rent_monthly,
            "offer": inputs.rent_offer,
            "instances": inputs.rent_instances,
            "total": rent_total,
        },
        "table": table,
        "buy_total": buy_total,
        "rent_total": rent_total,
        "rent_saving": buy_total - rent_total,
        "rent_saving_share": (buy_total - rent_total) / buy_total if buy_total else None,
        "break_even_month": break_even_month,
        "break_even_utilization": break_even_utilization,
        "buy_per_delivered_gpu_hour": buy_total / delivered_gpu_hours
        if delivered_gpu_hours
        else None,
        "rent_per_delivered_gpu_hour": rent_total / delivered_gpu_hours
        if delivered_gpu_hours
        else None,
        "sources": dict(inputs.sources),
    }
