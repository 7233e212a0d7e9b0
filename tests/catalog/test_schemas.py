"""The catalog's strict schemas: every built-in file validates, the published JSON Schema is
the one the types generate (and an independent validator accepts the catalog with it), and a
misspelled key, a wrong type or unit, or a future date is one line naming file, entry and key."""

from __future__ import annotations

import copy
import dataclasses
import datetime as dt
import json
import typing
from typing import Any

import msgspec
import pytest

from gpuplan.catalog import (
    SCHEMA_OF_FILE,
    CatalogError,
    checked_catalog_toml,
    offer_files,
    read_catalog_toml,
)
from gpuplan.catalog.schema import (
    SCHEMA_TYPES,
    decode,
    json_schema,
    json_schema_text,
    schema_type,
    shipped_schema_text,
)
from gpuplan.catalog.schema.decoding import SchemaError
from gpuplan.errors import InputError

BUILT_IN_FILES = [name for name in SCHEMA_OF_FILE if name != "offers"] + offer_files()


def schema_of(path: str) -> str:
    return SCHEMA_OF_FILE[path.split("/")[0]]


def document(path: str) -> dict[str, Any]:
    return copy.deepcopy(read_catalog_toml(*path.split("/")))


@pytest.mark.parametrize("path", BUILT_IN_FILES)
def test_every_built_in_catalog_file_validates(path: str) -> None:
    checked_catalog_toml(*path.split("/"))


@pytest.mark.parametrize("name", list(SCHEMA_TYPES))
def test_the_shipped_json_schema_is_the_generated_one(name: str) -> None:
    assert shipped_schema_text(name) == json_schema_text(name), (
        f"{name}.schema.json is out of date: run `python -m gpuplan.catalog.schema`"
    )


@pytest.mark.parametrize("path", BUILT_IN_FILES)
def test_an_independent_validator_accepts_the_catalog_with_the_shipped_schema(path: str) -> None:
    jsonschema = pytest.importorskip("jsonschema")
    schema = json.loads(shipped_schema_text(schema_of(path)))
    jsonschema.Draft202012Validator.check_schema(schema)
    errors = list(jsonschema.Draft202012Validator(schema).iter_errors(document(path)))
    assert errors == []


def test_the_shipped_schema_flags_a_misspelled_key_in_an_editor() -> None:
    jsonschema = pytest.importorskip("jsonschema")
    offers = document(offer_files()[0])
    offers["offers"][0]["regoin"] = "us-east-1"
    offers["offers"][0]["plans"][0]["granularty"] = "1m"
    validator = jsonschema.Draft202012Validator(json.loads(shipped_schema_text("offers")))
    messages = " ".join(error.message for error in validator.iter_errors(offers))
    assert "regoin" in messages and "granularty" in messages


def test_the_offers_schema_says_what_a_user_file_holds() -> None:
    schema = json_schema("offers")
    assert schema["$schema"].endswith("2020-12/schema")
    definitions = schema["$defs"]
    plan = definitions["PricePlanTable"]["properties"]
    assert {"interruptions_per_hour", "interruptions_source", "granularity"} <= set(plan)
    assert definitions["PricePlanTable"]["additionalProperties"] is False
    assert set(definitions["PricePlanTable"]["required"]) == {
        "mode",
        "price",
        "per",
        "source",
        "observed",
    }


def test_the_gpu_schema_holds_every_field_of_the_spec() -> None:
    from gpuplan.catalog.schema.gpus import GpuEntry
    from gpuplan.hardware.gpu import GPUSpec

    spec_fields = {field.name for field in dataclasses.fields(GPUSpec)} - {"id"}
    assert {field.encode_name for field in msgspec.structs.fields(GpuEntry)} == spec_fields


def test_the_vocabularies_are_those_the_code_reads() -> None:
    from gpuplan.catalog.schema.efficiency import Residuals
    from gpuplan.estimate.efficiency import FITTED_FIELDS
    from gpuplan.hardware.gpu import DTYPES
    from gpuplan.pricing.offers import FEE_UNITS, METERED_GRANULARITY, PACKAGE_TERM, FeeUnit

    assert set(typing.get_args(FeeUnit)) == set(FEE_UNITS)
    assert {field.name for field in msgspec.structs.fields(Residuals)} == set(FITTED_FIELDS)
    from gpuplan.catalog.schema.gpus import DensePeaks

    assert {field.name for field in msgspec.structs.fields(DensePeaks)} == set(DTYPES)
    from gpuplan.pricing.offers import PLAN_MODES

    assert {*METERED_GRANULARITY, *PACKAGE_TERM, "reserved", "spot"} == set(PLAN_MODES)


# --- each bad input: one line naming the file, the entry and the key -------------------------


def first_gpu(doc: dict[str, Any]) -> tuple[str, dict[str, Any]]:
    gpu_id = next(iter(doc["gpus"]))
    return gpu_id, doc["gpus"][gpu_id]


def first_model(doc: dict[str, Any]) -> tuple[str, dict[str, Any]]:
    name = next(iter(doc["models"]))
    return name, doc["models"][name]


def refusal(doc: dict[str, Any], name: str, origin: str) -> str:
    with pytest.raises(SchemaError) as error:
        decode(doc, name, origin)
    message = str(error.value)
    assert "\n" not in message
    return message


def test_a_misspelled_offer_key_names_the_close_key_and_the_accepted_ones() -> None:
    path = offer_files()[0]
    doc = document(path)
    offer = doc["offers"][0]
    offer["regoin"] = offer.pop("region", "us-east-1")
    message = refusal(doc, "offers", path)
    assert message.startswith(f"{path}: offer {offer['id']!r}: regoin: unknown key")
    assert "(did you mean region?)" in message and "accepted: " in message


def test_a_misspelled_granularity_never_falls_back_to_hourly() -> None:
    path = offer_files()[0]
    doc = document(path)
    plan = doc["offers"][0]["plans"][0]
    plan["granularty"] = "1m"
    message = refusal(doc, "offers", path)
    assert f"offer {doc['offers'][0]['id']!r}: plans[0].granularty: unknown key" in message
    assert "did you mean granularity?" in message


def test_a_misspelled_fee_key_names_the_fee() -> None:
    path = next(p for p in offer_files() if document(p).get("fees"))
    doc = document(path)
    fee = doc["fees"][0]
    fee["unti"] = fee.pop("unit")
    message = refusal(doc, "offers", path)
    assert message.startswith(f"{path}: fee {fee['item']!r}: unti: unknown key")
    assert "did you mean unit?" in message


def test_a_misspelled_topology_key_names_the_offer() -> None:
    path, index = next(
        (p, i)
        for p in offer_files()
        for i, offer in enumerate(document(p)["offers"])
        if "topology" in offer
    )
    doc = document(path)
    topology = doc["offers"][index]["topology"]
    topology["netwrok"] = topology.pop("network")
    message = refusal(doc, "offers", path)
    assert f"offer {doc['offers'][index]['id']!r}: topology.netwrok: unknown key" in message


@pytest.mark.parametrize(
    ("key", "value", "expected"),
    [
        ("network_gbps_per_gpu", "400Gbps", "expected a rate in Gb/s"),
        ("intra_node", "nvlink9", "'nvlink9' is not one of"),
        ("p2p", "yes", "expected true or false"),
    ],
)
def test_a_wrong_type_or_unit_in_a_topology_is_refused(key: str, value: Any, expected: str) -> None:
    path, index = next(
        (p, i)
        for p in offer_files()
        for i, offer in enumerate(document(p)["offers"])
        if offer.get("topology", {}).get("network", "none") != "none"
    )
    doc = document(path)
    doc["offers"][index]["topology"][key] = value
    message = refusal(doc, "offers", path)
    assert f"offer {doc['offers'][index]['id']!r}: topology.{key}: {expected}" in message


def test_a_written_duration_is_required() -> None:
    path = offer_files()[0]
    doc = document(path)
    doc["offers"][0]["plans"][0]["granularity"] = "1 fortnight"
    message = refusal(doc, "offers", path)
    assert "plans[0].granularity: expected a duration written as" in message
    assert "'1 fortnight'" in message


def test_a_misspelled_gpu_key_names_the_gpu() -> None:
    doc = document("gpus.toml")
    gpu_id, entry = first_gpu(doc)
    entry["memory_byte"] = entry.pop("memory_bytes")
    message = refusal(doc, "gpus", "gpus.toml")
    assert message.startswith(f"gpus.toml: gpu {gpu_id!r}: memory_byte: unknown key")
    assert "did you mean memory_bytes?" in message


def test_gpu_memory_is_bytes_not_a_quoted_size() -> None:
    doc = document("gpus.toml")
    gpu_id, entry = first_gpu(doc)
    entry["memory_bytes"] = "80GB"
    message = refusal(doc, "gpus", "gpus.toml")
    assert f"gpu {gpu_id!r}: memory_bytes: expected memory in bytes" in message


def test_a_misspelled_provenance_field_names_the_gpu() -> None:
    doc = document("gpus.toml")
    gpu_id, entry = first_gpu(doc)
    entry.setdefault("provenance", {})["peak_flop"] = {"source": "s", "observed": "2026-01-01"}
    message = refusal(doc, "gpus", "gpus.toml")
    assert f"gpu {gpu_id!r}: provenance.peak_flop: unknown key (did you mean peak_flops?)" in (
        message
    )


def test_a_misspelled_model_key_names_the_model() -> None:
    doc = document("models.toml")
    name, entry = first_model(doc)
    entry["config"]["num_hiden_layers"] = entry["config"].pop("num_hidden_layers")
    message = refusal(doc, "models", "models.toml")
    assert message.startswith(f"models.toml: model {name!r}: config.num_hiden_layers: unknown")
    assert "did you mean num_hidden_layers?" in message


def test_a_model_count_must_be_whole() -> None:
    doc = document("models.toml")
    name, entry = first_model(doc)
    entry["reference_total_params"] = "8B"
    message = refusal(doc, "models", "models.toml")
    assert f"model {name!r}: reference_total_params: expected parameters" in message


def test_a_misspelled_rate_key_names_the_currency() -> None:
    doc = document("currency.toml")
    rate = doc["rates"][0]
    rate["per_unti"] = rate.pop("per_unit")
    message = refusal(doc, "currency", "currency.toml")
    assert message.startswith(f"currency.toml: rate {rate['currency']!r}: per_unti: unknown key")


def test_a_datacenter_figure_states_the_unit_the_code_reads() -> None:
    doc = document("datacenter.toml")
    doc["electricity_usd_per_kwh"]["unit"] = "CNY/kWh"
    message = refusal(doc, "datacenter", "datacenter.toml")
    assert "electricity_usd_per_kwh.unit: 'CNY/kWh' is not one of USD/kWh" in message


def test_a_fitted_residual_stays_in_its_bounds() -> None:
    doc = document("efficiency.toml")
    doc["efficiency"]["megatron"] = 7.5
    message = refusal(doc, "efficiency", "efficiency.toml")
    assert "efficiency.megatron: expected a share from 0.3 to 1.5" in message


def far_future() -> str:
    return (dt.date.today() + dt.timedelta(days=400)).isoformat()


@pytest.mark.parametrize(
    ("path", "place"),
    [
        ("gpus.toml", lambda doc: (first_gpu(doc)[1], f"gpu {first_gpu(doc)[0]!r}: observed")),
        (
            "models.toml",
            lambda doc: (first_model(doc)[1], f"model {first_model(doc)[0]!r}: observed"),
        ),
        (
            "currency.toml",
            lambda doc: (doc["rates"][0], f"rate {doc['rates'][0]['currency']!r}: observed"),
        ),
        ("datacenter.toml", lambda doc: (doc["pue"], "pue.observed")),
    ],
)
def test_a_date_in_the_future_is_refused(path: str, place: Any) -> None:
    doc = document(path)
    table, where = place(doc)
    table["observed"] = far_future()
    message = refusal(doc, schema_of(path), path)
    assert message.startswith(f"{path}: {where}: observed {far_future()!r} is in the future")


def test_a_future_plan_date_names_the_offer_and_the_plan() -> None:
    path = offer_files()[0]
    doc = document(path)
    doc["offers"][0]["plans"][0]["observed"] = far_future()
    message = refusal(doc, "offers", path)
    assert f"offer {doc['offers'][0]['id']!r}: plans[0].observed: observed" in message


def test_a_toml_date_asks_for_a_string() -> None:
    doc = document("currency.toml")
    doc["rates"][0]["observed"] = dt.date(2026, 1, 27)
    assert "write dates as strings" in refusal(doc, "currency", "currency.toml")


def test_the_loader_refuses_a_bad_built_in_file_with_a_catalog_error(monkeypatch) -> None:
    import gpuplan.catalog as catalog

    doc = document("datacenter.toml")
    doc["pue"]["vaule"] = doc["pue"].pop("value")
    monkeypatch.setattr(catalog, "read_catalog_toml", lambda *parts: doc)
    with pytest.raises(CatalogError, match=r"^datacenter.toml: pue.vaule: unknown key"):
        checked_catalog_toml("datacenter.toml")


def test_an_unknown_validation_column_names_the_close_one() -> None:
    from gpuplan.catalog.validation import check_columns

    with pytest.raises(InputError, match=r"column 'sorce': unknown column \(did you mean source"):
        check_columns(["id", "sorce"], ("id", "source"), "validation/memory.csv", InputError)
    with pytest.raises(InputError, match="missing column 'id'"):
        check_columns(["source"], ("id", "source"), "validation/memory.csv", InputError, ["id"])


def test_an_unknown_schema_name_is_an_input_error() -> None:
    with pytest.raises(InputError, match="not one of offers"):
        schema_type("offer")
