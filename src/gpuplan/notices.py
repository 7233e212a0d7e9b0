"""Notices: warnings that change a decision, carried as a code and its values.

A notice is rendered at the edge in the reader's language (``i18n`` key ``notice.<code>``), so
the JSON, the terminal table, the reports and the web page say the same thing in English and in
Chinese. JSON carries ``{"code", "values", "text"}`` with the English text.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

NOTICE_CODES = (
    "no_cluster_network",
    "unlisted_topology",
    "stale_price",
    "undated_price",
    "seed_claims",
    "bubble",
    "startup",
    "communication",
    "config_defaults",
    "spot",
    "discount_not_applied",
    "own_tax_rate",
    "tax_included",
    "tax_excluded",
    "spot_not_cheaper",
    "estimated_price",
    "undated_plan",
)
"""``no_cluster_network``: instances that list no network between them, joined anyway
(``--allow-unlisted-network``); ``unlisted_topology``: the offer states no topology, so the
GPU's usual server was modelled; ``stale_price``: the price a plan pays is older than
``pricing.provenance.STALE_AFTER_DAYS``; ``undated_price``: it comes from an undated source;
``seed_claims``: prices that are an article's claims, not a price list; ``bubble``: the pipeline
bubble is over 20 % of the step; ``startup``: start-up is over 10 % of the run;
``communication``: exposed communication is over half the step; ``config_defaults``: a model
config left out keys that its family's ``transformers`` defaults filled
(``ModelSpec.defaults_taken``); ``spot``: the plan is priced on spot, with the interruption rate
and the time each interruption loses, and their sources; ``discount_not_applied``: a discount
the offer lists that the quote cannot apply; ``own_tax_rate``, ``tax_included``,
``tax_excluded``: how ``--tax-rate`` meets the offer's own tax terms; ``spot_not_cheaper``: a
spot price not below on-demand; ``estimated_price``, ``undated_plan``: a billing plan whose price
is an estimate or comes from an undated source."""


@dataclass(frozen=True)
class Notice:
    """One warning: ``code`` from :data:`NOTICE_CODES` and the values its message needs."""

    code: str
    values: Mapping[str, Any] = field(default_factory=dict)

    def text(self, lang: str = "en") -> str:
        """The notice in ``lang``; a value that is the English of a message (a catalog claim
        such as ``seed article``) is translated too."""
        from gpuplan.i18n import translate, translate_text

        values = {
            name: translate_text(value, lang) if isinstance(value, str) else value
            for name, value in self.values.items()
        }
        return translate(f"notice.{self.code}", lang, **values)

    def to_dict(self) -> dict[str, Any]:
        return {"code": self.code, "values": dict(self.values), "text": self.text("en")}


def config_defaults_notices(model: Any) -> list[dict[str, Any]]:
    """The ``config_defaults`` notice (as JSON) for a ``ModelSpec`` whose config left keys to
    its family's defaults; none for a complete config or a catalog model."""
    if not model.defaults_taken:
        return []
    values = {"model": model.name, "family": model.family, "keys": ", ".join(model.defaults_taken)}
    return [Notice("config_defaults", values).to_dict()]


def notice_text(notice: Mapping[str, Any] | str, lang: str) -> str:
    """A notice from JSON (``{"code", "values"}``) in ``lang``; plain strings pass through."""
    if isinstance(notice, str):
        return notice
    return Notice(str(notice["code"]), notice.get("values", {})).text(lang)
