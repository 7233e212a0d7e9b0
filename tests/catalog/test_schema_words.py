"""A schema error reads in the reader's language: every field description, type word and entry
word it can show is the English of a message."""

from __future__ import annotations

import importlib
import pkgutil
from typing import Annotated, Any, get_args, get_origin

import msgspec
import pytest

import gpuplan.catalog.schema as schema_package
from gpuplan.catalog.schema.decoding import TYPE_WORDS, SchemaError, decode, entry_word_key
from gpuplan.catalog.schema.offers import OffersFile
from gpuplan.messages import ENGLISH


def _schema_types() -> list[Any]:
    found = []
    for module_info in pkgutil.iter_modules(schema_package.__path__):
        module = importlib.import_module(f"{schema_package.__name__}.{module_info.name}")
        for value in vars(module).values():
            if (isinstance(value, type) and issubclass(value, msgspec.Struct)) or get_origin(
                value
            ) is Annotated:
                found.append(value)
    return found


def _descriptions_and_kinds() -> tuple[set[str], set[str]]:
    descriptions: set[str] = set()
    kinds: set[str] = set()
    seen: set[int] = set()

    def walk(annotation: Any) -> None:
        if id(annotation) in seen:
            return
        seen.add(id(annotation))
        if get_origin(annotation) is Annotated:
            for meta in get_args(annotation)[1:]:
                if getattr(meta, "description", None):
                    descriptions.add(str(meta.description))
            walk(get_args(annotation)[0])
            return
        for argument in get_args(annotation):
            walk(argument)
        if isinstance(annotation, type) and issubclass(annotation, msgspec.Struct):
            if getattr(annotation, "entry_kind", ""):
                kinds.add(annotation.entry_kind)
            for field in msgspec.structs.fields(annotation):
                walk(field.type)

    for annotation in _schema_types():
        walk(annotation)
    return descriptions, kinds


def test_every_description_type_word_and_entry_word_is_a_message() -> None:
    descriptions, kinds = _descriptions_and_kinds()
    assert len(descriptions) > 30 and {"offer", "gpu", "model"} <= kinds
    english = set(ENGLISH.values())
    assert sorted(descriptions - english) == []
    assert all(entry_word_key(kind) in ENGLISH for kind in kinds)
    assert all(key in ENGLISH for key in TYPE_WORDS.values())


@pytest.mark.parametrize(
    ("document", "english", "chinese"),
    [
        (
            {"provider": "x", "currency": "USD", "offers": [{"id": "a", "gpus": "two"}]},
            "offer 'a': gpus: expected GPUs per instance, at least 1, got 'two'",
            "报价 'a': gpus：应为每个实例的 GPU 数，至少 1",
        ),
        (
            {"provider": "x", "currency": "USD", "offers": [{"id": "a", "colour": "red"}]},
            "offer 'a': colour: unknown key",
            "报价 'a': colour：未知的键",
        ),
    ],
)
def test_a_schema_error_names_entry_and_expectation_in_the_language(
    document: dict[str, Any], english: str, chinese: str
) -> None:
    with pytest.raises(SchemaError) as caught:
        decode(document, OffersFile, "offers.toml")
    assert english in str(caught.value)
    assert chinese in caught.value.text("zh")
