"""Decode a parsed catalog document into its schema type; explain a refusal on one line.

``msgspec.convert(document, Type, strict=True)`` does the checking: exact keys, types,
ranges, patterns, enumerations. Its message names a JSON path (``$.offers[3].plans[0]``); this
module turns that into the file, the entry (``offer 'aws-p5'``, ``gpu 'h100-sxm-80gb'``, by
the entry types' ``entry_kind`` and ``entry_key``), the key, what was expected (the value
type's description, or the accepted values) and, for an unknown key, the closest accepted key
(``difflib``) and the list of accepted keys. Dates are then held to not being in the future.
"""

from __future__ import annotations

import difflib
import re
import types
from collections.abc import Iterator, Mapping
from functools import cache
from typing import Annotated, Any, Literal, TypeVar, Union, get_args, get_origin

import msgspec

from gpuplan.errors import InputError, Joined, Phrase, Verbatim
from gpuplan.limits import key_name, shown
from gpuplan.pricing.provenance import ProvenanceError, check_not_future

T = TypeVar("T")

PathToken = str | int

TYPE_WORDS = {
    "int": "schema.type.int",
    "float": "schema.type.float",
    "str": "schema.type.str",
    "bool": "schema.type.bool",
    "array": "schema.type.array",
    "object": "schema.type.object",
    "null": "schema.type.null",
}
"""msgspec's name of a JSON type -> the message that says it in words (``a whole number``)."""
DATE_FIELDS = ("observed", "purchase_price_observed")
"""Fields holding the date a figure was read: none of them may be in the future."""


class SchemaError(InputError):
    """A catalog file that does not match its schema; the message names file, entry and key."""


def decode(document: Any, schema: type[T], origin: str, error: type[InputError] = SchemaError) -> T:
    """``document`` as an instance of ``schema``; ``error`` (one line) when it does not match
    or when an observed date lies in the future."""
    try:
        decoded = msgspec.convert(document, schema, strict=True)
    except msgspec.ValidationError as failure:
        key, values = explain(str(failure), document, schema, origin)
        raise error.of(key, **values) from None
    for path, observed in _dates(decoded, []):
        where = _where(origin, schema, document, path)
        try:
            check_not_future(observed, where)
        except ProvenanceError as failure:
            if failure.key == "error.observed_future":
                raise error.of(failure.key, **failure.values) from None
            raise error.of("error.in_field", field=where, error=failure) from None
    return decoded


def explain(message: str, document: Any, schema: Any, origin: str) -> tuple[str, dict[str, object]]:
    """One line from msgspec's ``message`` about ``document``: the message key and its values
    (``gpuplan.messages``)."""
    match = re.fullmatch(r"(?s)(.*?) - at (`key` in )?`\$(.*)`", message)
    problem, in_key, raw_path = match.groups() if match else (message, None, "")
    path, node, value = _follow(schema, document, raw_path)
    if in_key:
        key = _failing_key(node, value)
        where = _where(origin, schema, document, path)
        expected = _expected(_dict_args(node)[0], problem)
        return "error.schema_key", {"where": where, "key": shown(key), "expected": expected}
    unknown = re.fullmatch(r"Object contains unknown field `(.*)`", problem)
    if unknown:
        key = unknown.group(1)
        accepted = [field.encode_name for field in _struct_fields(node, value)]
        close = difflib.get_close_matches(key, accepted, n=1, cutoff=0.6)
        where = _where(origin, schema, document, [*path, key])
        found: dict[str, object] = {"where": where, "key": "", "accepted": ", ".join(accepted)}
        if close:
            return "error.unknown_key_hint", {**found, "close": close[0]}
        return "error.unknown_key", found
    missing = re.fullmatch(r"Object missing required field `(.*)`", problem)
    if missing:
        key = missing.group(1)
        field = next((f for f in _struct_fields(node, value) if f.encode_name == key), None)
        where = _where(origin, schema, document, path)
        if field is None:
            return "error.schema_missing", {"where": where, "key": repr(key)}
        wanted = _expected(field.type, "")
        return "error.schema_missing_wanted", {"where": where, "key": repr(key), "wanted": wanted}
    where = _where(origin, schema, document, path)
    if problem.startswith("Invalid enum value"):
        accepted = [str(option) for option in _literal_values(node)]
        close = difflib.get_close_matches(str(value), accepted, n=1, cutoff=0.6)
        choice: dict[str, object] = {
            "field": where,
            "value": shown(value),
            "accepted": ", ".join(accepted),
        }
        if close:
            return "error.not_one_of_hint", {**choice, "close": close[0]}
        return "error.not_one_of", choice
    if problem.startswith("Expected"):
        found = {
            "where": where,
            "expected": _expected(node, problem),
            "value": shown(value),
        }
        return ("error.schema_date" if _is_date(value) else "error.schema_type"), found
    return "error.in_field", {"field": where, "error": problem}


# --- where: file, entry and key --------------------------------------------------------------


def _where(origin: str, schema: Any, document: Any, path: list[PathToken]) -> Joined:
    """``origin: offer 'x': plans[0].granularity`` for ``path`` in ``document``: the entry
    words in the reader's language, the file and the keys as they are."""
    labels: list[Phrase] = []
    keys = ""
    node: Any = schema
    value = document
    for token in path:
        node, value = _child(node, value, token)
        if isinstance(token, int):
            keys += f"[{token}]"
        else:
            keys += f".{key_name(token)}" if keys else key_name(token)
        label = _entry_label(node, value, token)
        if label:
            labels.append(label)
            keys = ""
    parts = [Verbatim(origin), *labels, *([Verbatim(keys)] if keys else [])]
    return Joined(tuple(parts), "schema.location_separator")


def _entry_label(node: Any, value: Any, token: PathToken) -> Phrase | None:
    """``offer 'x'`` when ``node`` is an entry type whose name is known, else None."""
    struct = _struct_type(_branch(node, value))
    kind = getattr(struct, "entry_kind", "") if struct is not None else ""
    if not kind or struct is None:
        return None
    key = getattr(struct, "entry_key", "")
    name = value.get(key) if key and isinstance(value, Mapping) else (None if key else token)
    if isinstance(name, str) and name:
        return Phrase(entry_word_key(kind), {"name": Verbatim(shown(name))})
    return None


def entry_word_key(kind: str) -> str:
    """The message naming an entry of ``kind`` (an entry type's ``entry_kind``)."""
    return "schema.entry." + kind.replace(" ", "_")


# --- walking a type and a document together --------------------------------------------------


@cache
def _fields(struct: type[msgspec.Struct]) -> tuple[Any, ...]:
    """``msgspec.structs.fields``, which resolves the annotations on every call, once."""
    return msgspec.structs.fields(struct)


def _strip(annotation: Any) -> Any:
    while get_origin(annotation) is Annotated:
        annotation = get_args(annotation)[0]
    return annotation


def _options(annotation: Any) -> list[Any]:
    """The alternatives of a union (without ``UnsetType``), or the annotation itself."""
    plain = _strip(annotation)
    if get_origin(plain) in (Union, types.UnionType):
        return [option for option in get_args(plain) if option is not msgspec.UnsetType]
    return [annotation]


def _struct_type(annotation: Any) -> type[msgspec.Struct] | None:
    annotation = _strip(annotation)
    if isinstance(annotation, type) and issubclass(annotation, msgspec.Struct):
        return annotation
    return None


def _branch(annotation: Any, value: Any) -> Any:
    """The alternative of a union that a table or list ``value`` is read as."""
    options = _options(annotation)
    for option in options:
        plain = _strip(option)
        if isinstance(value, Mapping) and (_struct_type(plain) or get_origin(plain) is dict):
            return option
        if isinstance(value, list) and get_origin(plain) in (list, tuple):
            return option
    return options[0] if len(options) == 1 else annotation


def _struct_fields(annotation: Any, value: Any) -> tuple[Any, ...]:
    struct = _struct_type(_branch(annotation, value))
    return _fields(struct) if struct is not None else ()


def _dict_args(annotation: Any) -> tuple[Any, Any]:
    for option in _options(annotation):
        if get_origin(_strip(option)) is dict:
            key, item = get_args(_strip(option))
            return key, item
    return str, Any


def _child(annotation: Any, value: Any, token: PathToken) -> tuple[Any, Any]:
    """The annotation and the value one step down ``token``."""
    node = _strip(_branch(annotation, value))
    struct = _struct_type(node)
    if struct is not None:
        field = next((f for f in _fields(struct) if f.encode_name == token), None)
        child = value.get(token) if isinstance(value, Mapping) else None
        return (field.type if field is not None else Any), child
    origin = get_origin(node)
    if origin is dict:
        return get_args(node)[1], value.get(token) if isinstance(value, Mapping) else None
    if origin in (list, tuple) and isinstance(token, int):
        item = value[token] if isinstance(value, list) and 0 <= token < len(value) else None
        arguments = get_args(node)
        if origin is tuple and token < len(arguments):
            return arguments[token], item
        return (arguments[0] if arguments else Any), item
    return Any, None


def _follow(schema: Any, document: Any, raw_path: str) -> tuple[list[PathToken], Any, Any]:
    """Read msgspec's path (``.offers[0].plans[1]``, ``[...]`` for a table key) against the
    type and the document: the path's tokens, and the annotation and value it ends at."""
    path: list[PathToken] = []
    node: Any = schema
    value = document
    rest = raw_path
    while rest:
        token: PathToken | None = None
        if rest.startswith("[...]"):
            token, rest = _failing_entry(node, value), rest[5:]
        elif rest.startswith("["):
            index, _, rest = rest[1:].partition("]")
            token = int(index) if index.isdigit() else None
        elif rest.startswith("."):
            token, rest = _field_name(node, value, rest[1:])
        if token is None:
            break
        path.append(token)
        node, value = _child(node, value, token)
    return path, node, value


def _field_name(node: Any, value: Any, text: str) -> tuple[str | None, str]:
    """The longest field name ``text`` starts with (names may hold dots)."""
    names = [field.encode_name for field in _struct_fields(node, value)]
    for name in sorted(names, key=len, reverse=True):
        if text.startswith(name) and text[len(name) : len(name) + 1] in ("", ".", "["):
            return name, text[len(name) :]
    name = re.match(r"[^.\[]*", text)
    token = name.group(0) if name else text
    return token, text[len(token) :]


def _failing_entry(node: Any, value: Any) -> str | None:
    """The first key of table ``value`` whose value does not convert to the table's type."""
    if not isinstance(value, Mapping):
        return None
    _, item = _dict_args(node)
    for key, entry in value.items():
        try:
            msgspec.convert(entry, item, strict=True)
        except msgspec.ValidationError:
            return str(key)
    return None


def _failing_key(node: Any, value: Any) -> object:
    key_type, _ = _dict_args(node)
    for key in value if isinstance(value, Mapping) else ():
        try:
            msgspec.convert(key, key_type, strict=True)
        except msgspec.ValidationError:
            return key
    return None


def _dates(value: Any, path: list[PathToken]) -> Iterator[tuple[list[PathToken], str]]:
    """Every ``(path, text)`` of a :data:`DATE_FIELDS` value in a decoded document."""
    if isinstance(value, msgspec.Struct):
        names = value.__struct_fields__
        for name, key in zip(names, value.__struct_encode_fields__, strict=True):
            item = getattr(value, name)
            if key in DATE_FIELDS and isinstance(item, str):
                yield [*path, key], item
            elif isinstance(item, msgspec.Struct | list | dict):
                yield from _dates(item, [*path, key])
    elif isinstance(value, dict):
        for key, item in value.items():
            if isinstance(item, msgspec.Struct | list | dict):
                yield from _dates(item, [*path, key])
    elif isinstance(value, list):
        for index, item in enumerate(value):
            if isinstance(item, msgspec.Struct | list | dict):
                yield from _dates(item, [*path, index])


# --- what was expected ------------------------------------------------------------------------


def _literal_values(annotation: Any) -> list[object]:
    values: list[object] = []
    for option in _options(annotation):
        if get_origin(_strip(option)) is Literal:
            values.extend(get_args(_strip(option)))
    return values


def _descriptions(annotation: Any) -> list[str]:
    found = []
    for option in _options(annotation):
        if get_origin(option) is Annotated:
            for meta in get_args(option)[1:]:
                text = getattr(meta, "description", None)
                if text:
                    found.append(str(text))
    return found


def _expected(annotation: Any, problem: str) -> Joined | Phrase:
    """What ``annotation`` accepts, in words: its description, its values, or its type. A
    description is the English of a message (``schema.describe.*``), so it reads in the
    reader's language too."""
    described = _descriptions(annotation)
    if described:
        return Joined(tuple(described), "schema.or")
    values = _literal_values(annotation)
    if values:
        return Phrase("schema.one_of", {"values": Verbatim(", ".join(str(v) for v in values))})
    if any(_struct_type(option) for option in _options(annotation)):
        return Phrase(TYPE_WORDS["object"])
    stated = re.match(r"Expected `([^`]*)`(.*)", problem)
    if stated:
        words = Joined(
            tuple(
                Phrase(TYPE_WORDS[name.strip()])
                if name.strip() in TYPE_WORDS
                else Verbatim(name.strip())
                for name in stated.group(1).split("|")
            ),
            "schema.or",
        )
        rest = re.sub(r",\s*got `[^`]*`", "", stated.group(2)).strip()
        if rest:
            return Phrase("schema.bounded", {"words": words, "bound": Verbatim(rest)})
        return words
    return Phrase("schema.documented_type")


def _is_date(value: Any) -> bool:
    import datetime as dt

    return isinstance(value, dt.date | dt.time)
