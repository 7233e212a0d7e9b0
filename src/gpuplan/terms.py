"""Catalog words in the reader's language: billing modes and plan names, objectives, recompute
and offload settings.

The catalog and the JSON keep their ids (``per_second``, ``cost``, ``selective``); a face shows
each through the message catalog under ``billing.<id>``, ``objective.<id>``, ``recompute.<id>``
or ``offload.<id>``. An id without a message (a plan name of the user's own offers file) is shown
as it is.
"""

from __future__ import annotations

import re
from functools import cache

from gpuplan.i18n import translate
from gpuplan.messages import ENGLISH

BILLING_NAMES = {
    "per_second": "billing.per_second",
    "per_minute": "billing.per_minute",
    "hourly": "billing.hourly",
    "hourly (per second)": "billing.hourly_per_second",
    "daily": "billing.daily",
    "weekly": "billing.weekly",
    "monthly": "billing.monthly",
    "yearly": "billing.yearly",
    "spot": "billing.spot",
    "reserved": "billing.reserved",
    "reserved 1y": "billing.reserved_1y",
    "reserved 3y": "billing.reserved_3y",
    "capacity_block": "billing.capacity_block",
    "capacity block": "billing.capacity_block",
    "nothing to pay": "billing.nothing",
}
"""Billing mode or plan name as the catalog spells it -> message key."""


def term(kind: str, value: str, lang: str | None = None) -> str:
    """``value`` of ``kind`` (``objective``, ``recompute``, ``offload``) in ``lang``."""
    key = f"{kind}.{value}"
    return translate(key, lang) if key in ENGLISH else value


def billing_name(name: str, lang: str | None = None) -> str:
    """A billing mode or plan name in ``lang``: ``per_second`` -> ``按秒计费``."""
    key = BILLING_NAMES.get(name)
    return translate(key, lang) if key else name


@cache
def _billing_pattern() -> re.Pattern[str]:
    names = sorted(BILLING_NAMES, key=len, reverse=True)
    return re.compile(r"(?<![\w-])(" + "|".join(map(re.escape, names)) + r")(?![\w-])")


def billing_text(text: str, lang: str | None = None) -> str:
    """Every billing name in a billing mix (``2 x monthly + 13.7h hourly``) in ``lang``."""
    return _billing_pattern().sub(lambda found: billing_name(found.group(1), lang), text)
