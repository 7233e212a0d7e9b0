"""The model catalog: names, provenance, lookups and suggestions."""

from __future__ import annotations

import re

import pytest

from gpuplan.catalog import CatalogError, all_models, load_model, model_entries, model_names

DATE = re.compile(r"^\d{4}-\d{2}(-\d{2})?$")


def test_every_entry_loads_under_its_own_name() -> None:
    models = all_models()
    assert [m.name for m in models] == model_names()


@pytest.mark.parametrize("name", model_names())
def test_every_entry_carries_source_and_date(name: str) -> None:
    entry = model_entries()[name]
    assert entry["source"].strip()
    assert DATE.match(entry["observed"])
    assert entry["reference_source"].strip()
    assert entry["reference_kind"] in ("published", "published-explained", "computed")


def test_names_are_case_insensitive() -> None:
    assert load_model("Llama-3.1-8B") == load_model("llama-3.1-8b")


def test_an_unknown_model_suggests_close_names() -> None:
    with pytest.raises(CatalogError, match="did you mean") as caught:
        load_model("llama-3.1-8")
    assert "llama-3.1-8b" in str(caught.value)
    assert "\n" not in str(caught.value)
