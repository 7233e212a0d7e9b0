"""Input limits in one place: every file a user gives is read here, every number a user gives
is held to a physical range here.

- Files: at most ``MAX_FILE_BYTES``, decoded as UTF-8; an unreadable, oversized or non-UTF-8
  file is a one-line error naming the file.
- YAML is composed by a safe loader that refuses nesting deeper than ``MAX_NESTING`` and
  documents whose aliases expand past ``MAX_EXPANDED_NODES`` nodes ("billion laughs"); JSON
  refuses ``NaN``/``Infinity`` and the same nesting; TOML is data only by design.
- Numbers: ``in_range`` checks a value is finite and inside the stated range and names both.
  ``ARCHITECTURE_RANGES`` bounds a model's sizes so that no per-layer loop ever sees 10^9
  layers; the bounds sit well above every published model (Llama 3.1 405B: 126 layers, 16,384
  hidden, 128 heads, 128,256 vocabulary; DeepSeek-V3: 256 experts; Gemma 3: 262,144 vocabulary).
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from gpuplan.errors import InputError

MAX_FILE_BYTES = 16 * 2**20
MAX_NESTING = 64
MAX_EXPANDED_NODES = 100_000
MAX_SHOWN_CHARACTERS = 80
"""A value echoed in an error message is cut to this many characters."""

ARCHITECTURE_RANGES: dict[str, tuple[int, int]] = {
    "num_hidden_layers": (1, 1024),
    "hidden_size": (1, 262_144),
    "intermediate_size": (1, 4_194_304),
    "num_attention_heads": (1, 16_384),
    "num_key_value_heads": (1, 16_384),
    "head_dim": (1, 65_536),
    "vocab_size": (1, 16_777_216),
    "num_experts": (1, 65_536),
    "num_experts_per_tok": (1, 65_536),
    "max_position_embeddings": (1, 1 << 40),
    "moe_intermediate_size": (1, 4_194_304),
    "shared_expert_intermediate_size": (1, 4_194_304),
    "first_k_dense_replace": (0, 1024),
    "moe_layer_freq": (1, 1024),
    "q_lora_rank": (1, 262_144),
    "kv_lora_rank": (1, 262_144),
    "qk_nope_head_dim": (1, 65_536),
    "qk_rope_head_dim": (1, 65_536),
    "v_head_dim": (1, 65_536),
    "sliding_window": (1, 1 << 40),
    "attention_chunk_size": (1, 1 << 40),
}
MAX_PARAMETERS = 10**14
"""A model's parameters: at most 100 trillion (about 70 times the largest published, and 200 TB
of bf16 weights)."""
JOB_RANGES: dict[str, tuple[float, float]] = {
    "seq_len": (1, 16_777_216),
    "document_tokens": (1, 16_777_216),
    "global_batch": (1, 1 << 30),
    "global_batch_tokens": (1, 1 << 50),
    "micro_batch": (1, 1 << 20),
    "tokens": (1, 1e18),
    "count": (1, 1 << 20),
}
"""A job's sizes: up to 16M-token sequences, 2^30 sequences a step, 10^18 training tokens
(70,000 times Llama 3's 15T) and 2^20 GPUs."""
MONEY_RANGE = (0, 1e15)
"""Any amount of money: from nothing to a quadrillion currency units."""


def shown(value: object) -> str:
    """``repr(value)``, cut to ``MAX_SHOWN_CHARACTERS`` so that an error stays one short line."""
    text = repr(value)
    if len(text) <= MAX_SHOWN_CHARACTERS:
        return text
    return text[: MAX_SHOWN_CHARACTERS - 3] + "..."


def key_name(key: object) -> str:
    """A mapping key as an error names it: as typed when it is a short printable name without
    spaces (``strategy.tp``), else as :func:`shown` quotes it (``moe.'\\n'``)."""
    if (
        isinstance(key, str)
        and key
        and key.isprintable()
        and not any(character.isspace() for character in key)
        and len(key) <= MAX_SHOWN_CHARACTERS
    ):
        return key
    return shown(key)


def check_known_keys(
    mapping: object, accepted: tuple[str, ...], where: str, error: type[InputError] = InputError
) -> Mapping[str, Any]:
    """``mapping`` when it is a table whose keys are all ``accepted``; else ``error`` naming
    the first other key (``where`` + key, with the closest accepted name as a hint)."""
    if not isinstance(mapping, Mapping):
        where_shown = where.rstrip(".") or "input"
        raise error.of("error.not_a_table", where=where_shown, accepted=", ".join(accepted))
    unknown = [key for key in mapping if key not in accepted]
    if unknown:
        import difflib

        close = difflib.get_close_matches(str(unknown[0]), accepted, n=1)
        values = {"where": where, "key": key_name(unknown[0]), "accepted": ", ".join(accepted)}
        if close:
            raise error.of("error.unknown_key_hint", **values, close=close[0])
        raise error.of("error.unknown_key", **values)
    return mapping


def plain_number(number: float) -> str:
    """``16,777,216`` for whole numbers below 10^16, ``1e+18`` and ``0.99`` otherwise."""
    if float(number).is_integer() and abs(number) < 1e16:
        return f"{int(number):,}"
    return f"{number:g}"


def in_range(
    value: float, field: str, low: float, high: float, error: type[InputError] = InputError
) -> float:
    """``value`` when finite and within ``[low, high]``; else ``error`` naming field and range."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise error.of(
            "error.not_a_number",
            field=field,
            low=plain_number(low),
            high=plain_number(high),
            value=shown(value),
        )
    if not math.isfinite(value) or not low <= value <= high:
        raise error.of(
            "error.out_of_range",
            field=field,
            low=plain_number(low),
            high=plain_number(high),
            value=shown(value),
        )
    return value


def read_text_file(path: str | Path, what: str, error: type[InputError] = InputError) -> str:
    """The file's text; ``error("cannot read WHAT file 'PATH': REASON")`` when it is missing,
    unreadable, larger than ``MAX_FILE_BYTES`` or not UTF-8."""
    where = {"file": f"{what} file", "name": shown(str(path))}
    try:
        with open(path, "rb") as stream:
            content = stream.read(MAX_FILE_BYTES + 1)
    except OSError as failure:
        reason = failure.strerror or type(failure).__name__
        raise error.of("error.file_read", **where, reason=reason) from None
    except ValueError as failure:
        raise error.of("error.file_read", **where, reason=str(failure)) from None
    if len(content) > MAX_FILE_BYTES:
        raise error.of("error.file_size", **where, limit=MAX_FILE_BYTES // 2**20)
    try:
        return content.decode("utf-8")
    except UnicodeDecodeError as failure:
        raise error.of("error.file_utf8", **where, byte=failure.start) from None


class _RefusedConstant(ValueError):
    """``NaN``, ``Infinity`` or ``-Infinity`` in a JSON text; the argument is the constant."""


def parse_json(text: str, origin: str, error: type[InputError] = InputError) -> Any:
    """JSON data; ``NaN``, ``Infinity`` and nesting past ``MAX_NESTING`` are errors."""

    def refuse_constant(name: str) -> Any:
        raise _RefusedConstant(name)

    try:
        data = json.loads(text, parse_constant=refuse_constant)
    except json.JSONDecodeError as failure:
        raise error.of(
            "error.json_syntax", origin=origin, line=failure.lineno, column=failure.colno
        ) from None
    except _RefusedConstant as failure:
        raise error.of("error.json_constant", origin=origin, name=failure.args[0]) from None
    except ValueError as failure:
        raise error.of("error.in_field", field=origin, error=str(failure)) from None
    except RecursionError:
        raise error.of("error.nesting", origin=origin, most=MAX_NESTING) from None
    _check_nesting(data, origin, error)
    return data


def _check_nesting(data: Any, origin: str, error: type[InputError]) -> None:
    pending = [(data, 1)]
    while pending:
        value, depth = pending.pop()
        if depth > MAX_NESTING:
            raise error.of("error.nesting", origin=origin, most=MAX_NESTING)
        if isinstance(value, dict):
            pending.extend((item, depth + 1) for item in value.values())
        elif isinstance(value, list):
            pending.extend((item, depth + 1) for item in value)


def parse_yaml(text: str, origin: str, error: type[InputError] = InputError) -> Any:
    """YAML data through a safe loader with a nesting limit and an alias-expansion budget."""
    import yaml

    class LimitedLoader(yaml.SafeLoader):
        depth = 0

        def compose_node(self, parent: Any, index: Any) -> Any:
            self.depth += 1
            if self.depth > MAX_NESTING:
                raise error.of("error.nesting", origin=origin, most=MAX_NESTING)
            try:
                return super().compose_node(parent, index)
            finally:
                self.depth -= 1

    loader = LimitedLoader(text)
    try:
        node = loader.get_single_node()
        if node is None:
            return None
        if _expanded_nodes(node) > MAX_EXPANDED_NODES:
            raise error.of("error.yaml_aliases", origin=origin, most=f"{MAX_EXPANDED_NODES:,}")
        return loader.construct_document(node)
    except yaml.YAMLError as failure:
        mark = getattr(failure, "problem_mark", None)
        if mark is None:
            raise error.of("error.yaml_syntax", origin=origin) from None
        raise error.of("error.yaml_syntax_line", origin=origin, line=mark.line + 1) from None
    finally:
        loader.dispose()


def _expanded_nodes(root: Any) -> int:
    """Nodes the document holds once every alias is written out (counting stops past the
    budget), without writing them out: each distinct node's size is computed once. A node that contains itself (``&a [*a]``)
    expands without end and counts as past the budget."""
    sizes: dict[int, int] = {}
    visiting: set[int] = set()
    pending = [(root, False)]
    while pending:
        node, children_done = pending.pop()
        children = _children(node)
        if children_done:
            visiting.discard(id(node))
            sizes[id(node)] = 1 + sum(sizes[id(child)] for child in children)
            if sizes[id(node)] > MAX_EXPANDED_NODES:
                return sizes[id(node)]
            continue
        if id(node) in sizes:
            continue
        visiting.add(id(node))
        pending.append((node, True))
        for child in children:
            if id(child) in visiting:
                return MAX_EXPANDED_NODES + 1
            if id(child) not in sizes:
                pending.append((child, False))
    return sizes[id(root)]


def _children(node: Any) -> list[Any]:
    value = getattr(node, "value", None)
    if not isinstance(value, list):
        return []
    children: list[Any] = []
    for item in value:
        if isinstance(item, tuple):
            children.extend(item)
        else:
            children.append(item)
    return children


def parse_toml(text: str, origin: str, error: type[InputError] = InputError) -> dict[str, Any]:
    """The TOML document; ``error("ORIGIN: malformed TOML: ...")`` when it does not parse."""
    import tomllib

    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError as failure:
        raise error.of("error.toml_syntax", origin=origin, reason=str(failure)) from None
    except RecursionError:
        raise error.of("error.toml_nesting", origin=origin) from None


def read_toml_file(path: str | Path, what: str, error: type[InputError]) -> dict[str, Any]:
    """:func:`read_text_file` then :func:`parse_toml`."""
    return parse_toml(read_text_file(path, what, error), shown(str(path)), error)
