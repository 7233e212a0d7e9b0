"""The one error type users see: bad input, reported on one line without a traceback."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Self


class InputError(ValueError):
    """Input that gpuplan cannot use. The message names the field and the accepted values.

    An error made with :meth:`of` carries its message key and values, so that a face can show it
    in the reader's language (:meth:`text`); ``str(error)`` is always the English."""

    key: str | None = None
    values: Mapping[str, object] = {}

    @classmethod
    def of(cls, key: str, /, **values: object) -> Self:
        """The error whose text is message ``key`` (``gpuplan.messages``) filled with ``values``."""
        from gpuplan.i18n import translate

        error = cls(translate(key, "en", **values))
        error.key, error.values = key, values
        return error

    def text(self, lang: str) -> str:
        """The message in ``lang``; a value that is the English of a message (``a duration``) or
        an error of its own is translated too. An error made from a plain sentence stays as it is."""
        if self.key is None:
            return str(self)
        from gpuplan.i18n import translate

        values = {name: _in_language(value, lang) for name, value in self.values.items()}
        return translate(self.key, lang, **values)


@dataclass(frozen=True)
class Phrase:
    """Words inside a message that are shown in the reader's language: message ``key`` filled
    with ``values`` (each may be a phrase, an error or a message's English itself);
    ``str(phrase)`` is the English."""

    key: str
    values: Mapping[str, object] = field(default_factory=dict)

    def __str__(self) -> str:
        return self.text("en")

    def text(self, lang: str) -> str:
        from gpuplan.i18n import translate

        values = {name: _in_language(value, lang) for name, value in self.values.items()}
        return translate(self.key, lang, **values)


@dataclass(frozen=True)
class Joined:
    """Parts shown one after another, the text of message ``separator`` between them (``a
    whole number or nothing``, ``file: offer 'x': plans[0]``); each part is a phrase, an error,
    a message's English or a plain string."""

    parts: tuple[object, ...]
    separator: str

    def __str__(self) -> str:
        return self.text("en")

    def text(self, lang: str) -> str:
        from gpuplan.i18n import translate

        between = translate(self.separator, lang)
        return between.join(str(_in_language(part, lang)) for part in self.parts)


class Verbatim(str):
    """A message value shown as it is in every language: a name from the input (a CSV column
    such as ``price``) that happens to be the English of a message."""


def _in_language(value: object, lang: str) -> object:
    """A message value in ``lang``: an error's own text, a message's English translated
    (a :class:`Verbatim` value as it is)."""
    from gpuplan.i18n import translate_text

    if isinstance(value, InputError | Phrase | Joined):
        return value.text(lang)
    if isinstance(value, Verbatim):
        return str(value)
    return translate_text(value, lang) if isinstance(value, str) else value
