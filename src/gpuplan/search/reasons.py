"""Why the search chose its top plan, or why nothing qualifies: structured reasons, rendered to
words in the reader's language.

A reason is ``{"code": ..., "values": {...}}``; its message is ``reason.<code>`` in the message
catalog. Values stay numbers and ids until they are rendered: ``*_bytes`` in GiB, ``*_ram`` in GB
(host memory), ``run_length`` (seconds) in hours or days as fits, ``mfu`` as a percentage, ``cost`` (``{"amount",
"currency"}``) as money, ``deadline_seconds`` as a duration, ``objective`` and ``machine`` (an
instance's topology) through ``terms`` and ``hardware.topology``, a list of reasons joined, a
reason nested. JSON carries the reasons and, as ``explanation``, their English text.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

Reason = dict[str, Any]


def reason(code: str, **values: Any) -> Reason:
    """One reason: message ``reason.<code>`` with ``values``."""
    return {"code": code, "values": values}


def reasons_text(reasons: Sequence[Mapping[str, Any]], lang: str = "en") -> str:
    """The reasons in ``lang``, joined by the language's separator (``; `` / ``；``)."""
    from gpuplan.i18n import translate

    separator = translate("reason.separator", lang)
    return separator.join(reason_text(each, lang) for each in reasons)


def reason_text(item: Mapping[str, Any], lang: str = "en") -> str:
    """One reason in ``lang``."""
    from gpuplan.i18n import translate

    values = {name: _value(name, value, lang) for name, value in item["values"].items()}
    return translate(f"reason.{item['code']}", lang, **values)


def _value(name: str, value: Any, lang: str) -> str:
    from gpuplan.hardware.topology import machine_summary
    from gpuplan.i18n import format_money, format_run_length, format_share
    from gpuplan.terms import billing_text, term
    from gpuplan.units import format_bytes, format_duration

    if isinstance(value, list):
        return reasons_text(value, lang)
    if name == "machine":
        return machine_summary(value, lang)
    if isinstance(value, Mapping) and "code" in value:
        return reason_text(value, lang)
    if name == "cost":
        return format_money(float(value["amount"]), value["currency"], lang, None)
    if name.endswith("_bytes"):
        return format_bytes(value)
    if name.endswith("_ram"):
        return format_bytes(value, binary=False)
    if name == "run_length":
        return format_run_length(value, lang)
    if name == "mfu":
        return format_share(value)
    if name == "deadline_seconds":
        return format_duration(value)
    if name == "objective":
        return term("objective", value, lang)
    if name == "billing":
        return billing_text(value, lang)
    return str(value)


def explanation(result: Mapping[str, Any], lang: str = "en") -> str:
    """A plan result's explanation in ``lang``: its reasons rendered, else its English text."""
    if "reasons" in result:
        return reasons_text(result["reasons"], lang)
    return str(result.get("explanation", ""))
