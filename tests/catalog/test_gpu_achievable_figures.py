"""The published achievable figures in gpus.toml: typed on the spec, each with its own source and
date, checked for plausibility against the data sheet, and rejected when malformed."""

from __future__ import annotations

import re

import pytest

from gpuplan.catalog import (
    CatalogError,
    all_gpus,
    gpu_entries,
    load_gpu,
    resolve_gpu_id,
    uncatalogued_best_shapes,
)
from gpuplan.catalog.schema import decode
from gpuplan.errors import InputError

ACHIEVABLE_FIELDS = (
    "mamf_best_shape",
    "same_die_as",
    "achievable_tf32_fixed_shape",
    "achievable_bf16_fixed_shape",
    "achievable_hbm_copy",
    "achievable_hbm_read",
    "dcgm_hbm_floor",
    "achievable_all_reduce_busbw",
    "achievable_all_reduce_busbw_nvls",
    "nvls_min_ranks",
)
DATE = re.compile(r"^\d{4}-\d{2}(-\d{2})?$")


def entries_with(field_name: str) -> list[str]:
    return [gpu_id for gpu_id, entry in gpu_entries().items() if field_name in entry]


@pytest.mark.parametrize("field_name", ACHIEVABLE_FIELDS)
def test_every_achievable_figure_has_its_own_source_and_date(field_name: str) -> None:
    holders = entries_with(field_name)
    assert holders, field_name
    for gpu_id in holders:
        provenance = gpu_entries()[gpu_id].get("provenance", {})
        assert field_name in provenance, (gpu_id, field_name)
        source, observed = load_gpu(gpu_id).source_of(field_name)
        assert source == provenance[field_name]["source"] and source.strip()
        assert DATE.match(observed), (gpu_id, field_name, observed)


def test_hbm_figures_sit_between_the_dcgm_floor_and_the_data_sheet() -> None:
    for gpu in all_gpus():
        spec = gpu.memory_bandwidth
        if gpu.dcgm_hbm_floor is not None:
            assert spec and 0.3 * spec < gpu.dcgm_hbm_floor < spec, gpu.id
        if gpu.achievable_hbm_copy is not None:
            assert spec and (gpu.dcgm_hbm_floor or 0) < gpu.achievable_hbm_copy < spec, gpu.id
            assert gpu.achievable_hbm_read is not None
            assert gpu.achievable_hbm_copy < gpu.achievable_hbm_read < spec, gpu.id


def test_achievable_hbm_share_is_the_measured_copy_over_the_data_sheet() -> None:
    measured = [gpu for gpu in all_gpus() if gpu.achievable_hbm_copy is not None]
    assert {"h100-sxm-80gb", "h200-sxm-141gb"} <= {gpu.id for gpu in measured}
    for gpu in measured:
        assert gpu.memory_bandwidth and gpu.achievable_hbm_copy
        share = gpu.achievable_hbm_share()
        assert share == pytest.approx(gpu.achievable_hbm_copy / gpu.memory_bandwidth)
        assert 0.5 < share < 1.0
    assert load_gpu("l4-24gb").achievable_hbm_share() is None
    assert load_gpu("ascend-910b-64gb").achievable_hbm_share() is None


def test_best_shapes_are_typed_and_only_for_measured_dtypes() -> None:
    for gpu in all_gpus():
        for dtype, shape in gpu.mamf_best_shape.items():
            assert dtype in gpu.achievable_matmul, (gpu.id, dtype)
            assert len(shape) == 3 and all(isinstance(d, int) and d > 0 for d in shape)


def test_same_die_gpus_borrow_only_what_their_die_measured() -> None:
    borrowers = [gpu for gpu in all_gpus() if gpu.same_die_as]
    assert {"h200-sxm-141gb", "h800-sxm-80gb"} <= {gpu.id for gpu in borrowers}
    for gpu in borrowers:
        die = load_gpu(gpu.same_die_as)
        assert die.id != gpu.id and not die.same_die_as
        for dtype in set(gpu.achievable_matmul) - set(gpu.mamf_best_shape):
            assert dtype in die.mamf_best_shape, (gpu.id, dtype)
            assert gpu.achievable_matmul[dtype] == die.achievable_matmul[dtype], (gpu.id, dtype)


def test_nvls_rows_are_by_payload_and_grow_with_it() -> None:
    holders = [gpu for gpu in all_gpus() if gpu.achievable_all_reduce_busbw_nvls]
    assert {"h200-sxm-141gb", "b200-sxm-180gb"} <= {gpu.id for gpu in holders}
    for gpu in holders:
        rows = gpu.achievable_all_reduce_busbw_nvls
        assert all(isinstance(size, int) and size >= 2**20 for size in rows)
        ordered = [rows[size] for size in sorted(rows)]
        assert ordered == sorted(ordered), gpu.id
        assert gpu.achievable_all_reduce_busbw is not None
        assert max(ordered) > gpu.achievable_all_reduce_busbw, gpu.id
        assert gpu.nvls_min_ranks is not None and 2 <= gpu.nvls_min_ranks <= gpu.gpus_per_node


def test_a_gpu_without_published_figures_has_none() -> None:
    gpu = load_gpu("l20-48gb")
    assert gpu.mamf_best_shape == {} and gpu.same_die_as == ""
    assert gpu.achievable_hbm_copy is None and gpu.achievable_hbm_read is None
    assert gpu.dcgm_hbm_floor is None and gpu.achievable_tf32_fixed_shape is None
    assert gpu.achievable_all_reduce_busbw is None and gpu.nvls_min_ranks is None
    assert gpu.achievable_all_reduce_busbw_nvls == {}


def test_uncatalogued_shapes_are_for_accelerators_the_catalog_lacks() -> None:
    entries = uncatalogued_best_shapes()
    assert entries
    for name, entry in entries.items():
        with pytest.raises(CatalogError):
            resolve_gpu_id(name)
        with pytest.raises(CatalogError):
            resolve_gpu_id(entry["name"])
        assert "Maximum Achievable Matmul" in entry["source"]
        assert DATE.match(entry["observed"])
        assert entry["mamf_best_shape"] and set(entry["mamf_best_shape"]) <= {"bf16", "fp8"}
        for shape in entry["mamf_best_shape"].values():
            assert isinstance(shape, tuple) and len(shape) == 3


def test_json_view_carries_the_achievable_figures() -> None:
    data = load_gpu("h200-sxm-141gb").to_dict()
    assert data["mamf_best_shape"]["fp8"] == list(load_gpu("h200").mamf_best_shape["fp8"])
    assert data["same_die_as"] == "h100-sxm-80gb"
    nvls = data["achievable_all_reduce_busbw_nvls_bytes_per_second"]
    assert nvls[str(2**31)] == load_gpu("h200").achievable_all_reduce_busbw_nvls[2**31]


def entry_of(gpu_id: str, **changes: object) -> dict:
    entry = dict(gpu_entries()[gpu_id])
    entry.update(changes)
    return entry


def gpus_file_with(gpu_id: str, entry: dict) -> dict:
    return {"gpus": {**gpu_entries(), gpu_id: entry}}


def test_a_key_the_spec_does_not_know_is_rejected() -> None:
    entry = entry_of("h100-sxm-80gb", achievable_hbm_cpy=1e12)
    with pytest.raises(InputError, match="did you mean achievable_hbm_copy") as error:
        decode(gpus_file_with("h100-sxm-80gb", entry), "gpus", "gpus.toml")
    assert str(error.value).startswith("gpus.toml: gpu 'h100-sxm-80gb': achievable_hbm_cpy:")


@pytest.mark.parametrize("dims", [[2048, 2048], [2048, 0, 13312], [2048.0, 2048, 13312], "2048"])
def test_a_malformed_best_shape_names_the_field(dims: object) -> None:
    entry = entry_of("h100-sxm-80gb", mamf_best_shape={"bf16": dims})
    with pytest.raises(InputError, match=r"h100-sxm-80gb': mamf_best_shape\.bf16") as error:
        decode(gpus_file_with("h100-sxm-80gb", entry), "gpus", "gpus.toml")
    assert "\n" not in str(error.value)


def test_a_payload_that_is_not_a_byte_count_names_the_field() -> None:
    entry = entry_of("h200-sxm-141gb", achievable_all_reduce_busbw_nvls={"2GiB": 469.17e9})
    with pytest.raises(InputError, match=r"achievable_all_reduce_busbw_nvls: key '2GiB'"):
        decode(gpus_file_with("h200-sxm-141gb", entry), "gpus", "gpus.toml")
