"""Reading a Hugging Face ``config.json``: the file, its key names and its typed values.

Every family spells a few sizes its own way (GPT-2's ``n_layer``, ChatGLM's ``num_layers``);
a family lists those spellings as ``key_aliases`` (canonical name -> its names) and
:func:`normalise_keys` maps them onto config.json's common names, over the family's
``transformers`` defaults. The readers (:func:`positive_int`, :func:`optional_int`,
:func:`flag`) turn a value into the type a size needs or raise one line naming the key.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from gpuplan.errors import InputError
from gpuplan.limits import shown

KeyAliases = Mapping[str, tuple[str, ...]]

REQUIRED_SIZE_KEYS = ("num_hidden_layers", "hidden_size")
"""Sizes no family default may stand in for: without them a config names no model at all."""

ACCEPTED_KEYS = "num_hidden_layers, hidden_size, num_attention_heads"


class ConfigError(InputError):
    """A model configuration that cannot describe a supported architecture."""


def read_config_file(path: Path) -> dict[str, Any]:
    """The JSON object of a config.json file (bounded read, one-line errors)."""
    from gpuplan.limits import parse_json, read_text_file

    text = read_text_file(path, "model config", ConfigError)
    data = parse_json(text, f"model: {shown(str(path))}", ConfigError)
    if not isinstance(data, dict):
        raise ConfigError.of("error.config_object", path=repr(str(path)))
    return data


def gives(raw: Mapping[str, Any], key: str, key_aliases: KeyAliases) -> bool:
    """Whether a config gives ``key`` under its own name or one of its family's names for it."""
    return any(raw.get(name) is not None for name in (key, *key_aliases.get(key, ())))


def require_sizes(raw: Mapping[str, Any], key_aliases: KeyAliases) -> None:
    """Raise unless the config gives every key of :data:`REQUIRED_SIZE_KEYS`."""
    missing = [key for key in REQUIRED_SIZE_KEYS if not gives(raw, key, key_aliases)]
    if missing:
        raise ConfigError.of(
            "error.config_sizes",
            missing=" and ".join(missing),
            required=", ".join(REQUIRED_SIZE_KEYS),
        )


def defaults_taken(
    raw: Mapping[str, Any], defaults: Mapping[str, Any], key_aliases: KeyAliases
) -> tuple[str, ...]:
    """The keys of the family's ``defaults`` that ``raw`` gives under none of their names (the
    key or an alias of it), in the defaults' order: what :func:`normalise_keys` fills from the
    family's ``transformers`` defaults rather than from the config."""

    def names(key: str) -> tuple[str, ...]:
        for canonical, aliases in key_aliases.items():
            if key == canonical or key in aliases:
                return (canonical, *aliases)
        return (key,)

    return tuple(
        key for key in defaults if not any(raw.get(name) is not None for name in names(key))
    )


def normalise_keys(
    raw: Mapping[str, Any], defaults: Mapping[str, Any], key_aliases: KeyAliases
) -> dict[str, Any]:
    """The config's keys over the family's ``defaults``, each canonical key filled from the
    first of its aliases the config gives (or, failing that, the defaults give)."""
    values: dict[str, Any] = {**defaults, **raw}
    for canonical, aliases in key_aliases.items():
        if raw.get(canonical) is not None:
            continue
        given = next((raw[alias] for alias in aliases if raw.get(alias) is not None), None)
        if given is None and values.get(canonical) is None:
            given = next((values[a] for a in aliases if values.get(a) is not None), None)
        if given is not None:
            values[canonical] = given
    return values


def positive_int(
    values: Mapping[str, Any], key: str, *, allow_zero: bool = False, field: str | None = None
) -> int:
    """``values[key]`` as a whole number above zero (or zero when ``allow_zero``); errors name
    ``model.<field>`` (``field`` defaults to ``key``)."""
    value = values.get(key)
    where = f"model.{field or key}"
    if value is None or isinstance(value, bool):
        raise ConfigError.of("error.config_missing", field=where, accepted=ACCEPTED_KEYS)
    try:
        number = int(value)
    except (TypeError, ValueError, OverflowError) as error:
        raise ConfigError.of("error.whole_number", field=where, value=repr(value)) from error
    if number != value and not (isinstance(value, float) and value.is_integer()):
        raise ConfigError.of("error.whole_number", field=where, value=repr(value))
    if number < 0 or (number == 0 and not allow_zero):
        raise ConfigError.of("error.positive_whole_number", field=where, value=repr(value))
    return number


def optional_int(values: Mapping[str, Any], key: str) -> int | None:
    """``values[key]`` as a whole number of zero or more, ``None`` when absent."""
    if values.get(key) is None:
        return None
    return positive_int(values, key, allow_zero=True)


def flag(values: Mapping[str, Any], key: str, default: bool) -> bool:
    """``values[key]`` as true or false, ``default`` when absent."""
    value = values.get(key)
    if value is None:
        return default
    if isinstance(value, bool):
        return value
    raise ConfigError.of("error.true_or_false", field=f"model.{key}", value=repr(value))


def layer_list(
    values: Mapping[str, Any], key: str, layers: int, accepted: tuple[Any, ...]
) -> list[Any]:
    """``values[key]`` as a per-layer list of ``accepted`` values, at least ``layers`` long
    (a longer list is cut to the model's layers, as transformers reads it)."""
    entries = values.get(key)
    if not isinstance(entries, list | tuple) or len(entries) < layers:
        raise ConfigError.of("error.config_layers", field=f"model.{key}", layers=layers)
    for entry in entries:
        if isinstance(entry, bool | float) or entry not in accepted:
            shown_accepted = ", ".join(repr(value) for value in accepted)
            raise ConfigError.of(
                "error.not_one_of",
                field=f"model.{key}",
                value=shown(entry),
                accepted=shown_accepted,
            )
    return list(entries[:layers])
