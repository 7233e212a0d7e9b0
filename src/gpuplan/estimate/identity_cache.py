"""A cache keyed on the identity of its arguments, for hot functions of large frozen values.

``functools.lru_cache`` hashes its arguments on every call, and a frozen dataclass recomputes
its hash field by field each time: for a ``TrainingJob`` that costs more than the lookup saves.
The search passes the same job and the same profile tuple to every machine, so identity is
the key that hits.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import wraps
from typing import Any, TypeVar

Result = TypeVar("Result")


def cached_by_identity(
    maxsize: int = 256,
) -> Callable[[Callable[..., Result]], Callable[..., Result]]:
    """Cache ``function``'s result per tuple of argument identities (keywords by name and identity).
    The cache holds the arguments themselves, so an identity is never reused while cached; it
    is emptied when it reaches ``maxsize`` entries."""

    def decorate(function: Callable[..., Result]) -> Callable[..., Result]:
        entries: dict[tuple[Any, ...], tuple[Any, Result]] = {}

        @wraps(function)
        def cached(*args: Any, **keywords: Any) -> Result:
            key = tuple(map(id, args)) + tuple((name, id(keywords[name])) for name in keywords)
            entry = entries.get(key)
            if entry is not None:
                return entry[1]
            if len(entries) >= maxsize:
                entries.clear()
            result = function(*args, **keywords)
            entries[key] = ((args, keywords), result)
            return result

        cached.cache_clear = entries.clear  # type: ignore[attr-defined]
        return cached

    return decorate
