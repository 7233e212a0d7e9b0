"""The GPU catalog: ids, aliases, dense peaks, and a source and date behind every number."""

from __future__ import annotations

import re
from numbers import Number
from typing import Any

import pytest

from gpuplan.catalog import CatalogError, all_gpus, gpu_entries, gpu_ids, load_gpu, resolve_gpu_id
from gpuplan.errors import InputError
from gpuplan.hardware.cluster import Cluster
from gpuplan.hardware.gpu import MissingPeakError

DESIGN_IDS = [
    "a100-sxm-40gb",
    "a100-sxm-80gb",
    "a100-pcie-80gb",
    "a800-sxm-80gb",
    "h100-sxm-80gb",
    "h100-pcie-80gb",
    "h800-sxm-80gb",
    "h200-sxm-141gb",
    "h20-96gb",
    "b200-sxm-180gb",
    "gb200-186gb",
    "b300-sxm-288gb",
    "gb300-288gb",
    "l40s-48gb",
    "l20-48gb",
    "l4-24gb",
    "a10g-24gb",
    "rtx-3090-24gb",
    "rtx-4090-24gb",
    "rtx-5090-32gb",
    "rtx-a6000-48gb",
    "v100-sxm-32gb",
    "mi300x-192gb",
    "ascend-910b-64gb",
]

BF16_DENSE_TFLOPS = {
    "h100-sxm-80gb": 989,
    "h100-pcie-80gb": 756,
    "h200-sxm-141gb": 989,
    "h20-96gb": 148,
    "h800-sxm-80gb": 989,
    "a100-sxm-80gb": 312,
    "a100-pcie-80gb": 312,
    "a100-sxm-40gb": 312,
    "a800-sxm-80gb": 312,
    "l40s-48gb": 362,
    "l20-48gb": 119.5,
    "rtx-4090-24gb": 165,
    "rtx-5090-32gb": 210,
    "b200-sxm-180gb": 2250,
    "mi300x-192gb": 1307,
    "ascend-910b-64gb": 320,
}
"""bf16_dense_tflops of the 16 GPUs in shared/catalog-research/gpu_specs.csv (catalog research,
re-checked against ml-engineering, lamonoai/gpumap and ArthurChiao's data sheets)."""

DATE = re.compile(r"^\d{4}-\d{2}(-\d{2})?$")


def test_every_design_id_is_in_the_catalog() -> None:
    assert set(DESIGN_IDS) <= set(gpu_ids())
    for gpu_id in DESIGN_IDS:
        assert load_gpu(gpu_id).id == gpu_id


@pytest.mark.parametrize(
    ("alias", "gpu_id"),
    [
        ("H100 SXM", "h100-sxm-80gb"),
        ("H100", "h100-sxm-80gb"),
        ("A100-80GB", "a100-sxm-80gb"),
        ("A100 80GB", "a100-sxm-80gb"),
        ("A100", "a100-sxm-80gb"),
        ("A100-40GB", "a100-sxm-40gb"),
        ("RTX4090", "rtx-4090-24gb"),
        ("4090", "rtx-4090-24gb"),
        ("910B", "ascend-910b-64gb"),
        ("MI300X", "mi300x-192gb"),
        ("L40S", "l40s-48gb"),
        ("A10G", "a10g-24gb"),
        ("V100", "v100-sxm-32gb"),
        ("H20", "h20-96gb"),
        ("gb200 nvl72", "gb200-186gb"),
        ("h100_sxm5", "h100-sxm-80gb"),
    ],
)
def test_aliases_resolve(alias: str, gpu_id: str) -> None:
    assert resolve_gpu_id(alias) == gpu_id


def _alias_key(text: str) -> str:
    return re.sub(r"[^a-z0-9]", "", text.lower())


def test_every_alias_maps_to_exactly_one_id() -> None:
    owners: dict[str, set[str]] = {}
    for gpu_id, entry in gpu_entries().items():
        for name in [gpu_id, *entry.get("aliases", [])]:
            owners.setdefault(_alias_key(name), set()).add(gpu_id)
    shared = {key: ids for key, ids in owners.items() if len(ids) > 1}
    assert not shared


def test_an_unknown_gpu_suggests_close_names() -> None:
    with pytest.raises(CatalogError, match="did you mean") as caught:
        resolve_gpu_id("H100 SXMM")
    assert isinstance(caught.value, InputError)
    assert "\n" not in str(caught.value)


@pytest.mark.parametrize(("gpu_id", "tflops"), sorted(BF16_DENSE_TFLOPS.items()))
def test_dense_bf16_matches_the_research_table(gpu_id: str, tflops: float) -> None:
    assert load_gpu(gpu_id).peak("bf16") == tflops * 1e12


def test_no_sparse_figures() -> None:
    assert load_gpu("h100-sxm-80gb").peak("bf16") == 989e12
    assert load_gpu("h100-sxm-80gb").peak("fp8") == 1979e12
    assert load_gpu("rtx-4090-24gb").peak("bf16") == 165e12
    assert load_gpu("b200-sxm-180gb").peak("bf16") == 2250e12
    for gpu in all_gpus():
        peaks = gpu.peak_flops
        if "bf16" in peaks and "fp8" in peaks:
            assert peaks["bf16"] <= peaks["fp8"] <= 2.05 * peaks["bf16"], gpu.id
        if "bf16" in peaks and "tf32" in peaks:
            assert peaks["tf32"] <= peaks["bf16"], gpu.id
        if "fp32" in peaks and "bf16" in peaks:
            assert peaks["fp32"] < peaks["bf16"], gpu.id


def test_fp8_only_on_architectures_that_have_it() -> None:
    with_fp8 = ("Ada Lovelace", "Hopper", "Blackwell", "Blackwell Ultra", "CDNA 3")
    for gpu in all_gpus():
        if gpu.has_fp8:
            assert gpu.architecture in with_fp8, gpu.id


def test_fp8_falls_back_to_half_precision() -> None:
    a100 = load_gpu("a100-sxm-80gb")
    assert a100.peak("fp8") == a100.peak("bf16")
    v100 = load_gpu("v100-sxm-32gb")
    assert v100.peak("fp8") == v100.peak("fp16") == 125e12


def test_a_dtype_the_gpu_lacks_is_a_clear_input_error() -> None:
    with pytest.raises(MissingPeakError, match="v100-sxm-32gb has no dense bf16 peak") as caught:
        load_gpu("V100").peak("bf16")
    assert isinstance(caught.value, InputError)
    assert isinstance(caught.value, KeyError)


def test_vendor_labels_are_binary_capacities() -> None:
    assert load_gpu("h100-sxm-80gb").memory_bytes == 80 * 2**30
    assert load_gpu("h200-sxm-141gb").memory_bytes == 141 * 2**30
    for gpu in all_gpus():
        quoted = float(gpu.memory_quoted.removesuffix("GB"))
        assert gpu.memory_bytes == quoted * 2**30, gpu.id


def test_links_are_one_direction_and_half_the_vendor_figure() -> None:
    for gpu in all_gpus():
        bidirectional = gpu.intra_node_bandwidth_vendor_bidirectional
        if bidirectional:
            assert gpu.intra_node_bandwidth <= bidirectional / 2 + 1e9, gpu.id
        if gpu.intra_node_link.startswith("pcie"):
            assert gpu.nvlink_domain_size == 1, gpu.id
    assert load_gpu("h100-sxm-80gb").intra_node_bandwidth == 450e9
    assert load_gpu("gb200-186gb").nvlink_domain_size == 72


def test_vendor_datasheet_flags() -> None:
    without = {gpu.id for gpu in all_gpus() if not gpu.vendor_datasheet}
    expected = {"h20-96gb", "l20-48gb", "ascend-910b-64gb", "rtx-5090-32gb", "mlu370-x8-48gb"}
    assert expected | {"h800-sxm-80gb", "a800-sxm-80gb"} == without


def _numeric_fields(entry: dict[str, Any]) -> list[str]:
    fields: list[str] = []
    for key, value in entry.items():
        if key == "peak_flops":
            fields.extend(f"peak_flops.{dtype}" for dtype in value)
        elif isinstance(value, Number) and not isinstance(value, bool):
            fields.append(key)
    return fields


@pytest.mark.parametrize("gpu_id", DESIGN_IDS)
def test_every_number_has_a_source_and_a_date(gpu_id: str) -> None:
    entry = gpu_entries()[gpu_id]
    gpu = load_gpu(gpu_id)
    assert entry["source"].strip()
    assert DATE.match(entry["observed"])
    for field_name in _numeric_fields(entry):
        source, observed = gpu.source_of(field_name)
        assert source.strip(), (gpu_id, field_name)
        assert DATE.match(observed), (gpu_id, field_name, observed)
    for field_name, provenance in entry.get("provenance", {}).items():
        assert field_name.split(".")[0] in entry, (gpu_id, field_name)
        assert provenance["source"].strip()
        assert DATE.match(provenance["observed"])
    if "purchase_price_usd" in entry:
        assert entry["purchase_price_source"].strip()
        assert DATE.match(entry["purchase_price_observed"])


@pytest.mark.parametrize("gpu_id", DESIGN_IDS)
def test_every_entry_has_the_core_figures(gpu_id: str) -> None:
    gpu = load_gpu(gpu_id)
    assert gpu.memory_bytes > 0
    assert gpu.peak_flops
    assert gpu.intra_node_bandwidth > 0
    assert gpu.pcie_generation in (3, 4, 5, 6)
    assert gpu.gpus_per_node in (4, 8)
    assert gpu.notes.strip()


def test_figures_a_source_lacks_are_left_out_and_said_so() -> None:
    ascend = load_gpu("910B")
    assert "tf32/fp32 peaks are not in the collected sources" in ascend.notes
    assert "tf32" not in ascend.peak_flops and "fp32" not in ascend.peak_flops
    source, _ = ascend.source_of("memory_bandwidth")
    assert ascend.memory_bandwidth and source != ascend.source and "CANN" in source
    assert load_gpu("H800").tdp_watts is None
    assert "bf16" not in load_gpu("V100").peak_flops


def test_cambricon_mlu370_x8_is_a_fabric_card_answered_for_memory_only() -> None:
    mlu = load_gpu("思元370")
    assert mlu.id == resolve_gpu_id("MLU370-X8") == "mlu370-x8-48gb"
    assert mlu.memory_bytes == 48 * 2**30 and mlu.memory_bandwidth == 614.4e9
    assert mlu.peak("bf16") == mlu.peak("fp16") == 3 * mlu.peak("fp32")
    assert "fp8" not in mlu.peak_flops and "tf32" not in mlu.peak_flops
    assert mlu.intra_node_bandwidth == mlu.intra_node_bandwidth_vendor_bidirectional / 2
    cluster = Cluster(gpu=mlu, count=8)
    assert cluster.intra_node_kind == "nvlink" and cluster.nodes == 1
    assert "CNCL" in mlu.speed_model_gap and mlu.no_public_offer["reason"]
    assert not mlu.vendor_datasheet


def test_json_view_uses_stable_keys() -> None:
    data = load_gpu("h100").to_dict()
    assert data["memory_bytes"] == 85_899_345_920
    assert data["peak_flops"]["bf16"] == 989e12
    assert data["source"] and data["observed"]


def test_measured_matmul_ceilings_are_below_the_dense_peak_and_sourced():
    measured = [gpu for gpu in all_gpus() if gpu.achievable_matmul]
    assert {"h100-sxm-80gb", "b200-sxm-180gb", "gb200-186gb", "b300-sxm-288gb"} <= {
        gpu.id for gpu in measured
    }
    for gpu in measured:
        source, observed = gpu.source_of("achievable_matmul")
        assert "mamf" in source.lower() and observed
        for dtype, flops in gpu.achievable_matmul.items():
            ceiling = 1.15 if gpu.form_factor == "PCIe consumer" else 0.95
            assert 0.4 < flops / gpu.peak(dtype) < ceiling, (gpu.id, dtype)


def test_geforce_boards_reach_past_the_peak_rated_at_their_boost_clock():
    assert load_gpu("rtx-4090-24gb").matmul_ceiling_share("bf16") == pytest.approx(178.8 / 165)
    assert load_gpu("rtx-3090-24gb").matmul_ceiling_share("bf16") > 1.0
    assert load_gpu("rtx-a6000-48gb").matmul_ceiling_share("bf16") < 1.0


def test_the_unmeasured_rule_is_the_median_of_the_measured_nvidia_shares():
    import statistics

    from gpuplan.hardware.gpu import UNMEASURED_MATMUL_SHARE

    for dtype, share in UNMEASURED_MATMUL_SHARE.items():
        shares = {
            round(gpu.achievable_matmul[dtype] / gpu.peak(dtype), 4)
            for gpu in all_gpus()
            if gpu.vendor == "NVIDIA" and dtype in gpu.achievable_matmul
        }
        assert statistics.median(sorted(shares)) == pytest.approx(share, abs=5e-4)
    assert load_gpu("l20-48gb").matmul_ceiling_share("bf16") == UNMEASURED_MATMUL_SHARE["bf16"]
    assert load_gpu("gb300-288gb").matmul_ceiling_share("fp8") == UNMEASURED_MATMUL_SHARE["fp8"]
    assert load_gpu("b200-sxm-180gb").matmul_ceiling_share("fp8") == pytest.approx(3432.5 / 4500)


def test_the_sustained_clock_share_is_the_fixed_shape_rate_over_the_best_shape_one():
    import statistics

    from gpuplan.hardware.gpu import UNMEASURED_SUSTAINED_CLOCK_SHARE

    assert load_gpu("h100-sxm-80gb").sustained_clock_share() == pytest.approx(730 / 794.5)
    assert load_gpu("a100-sxm-80gb").sustained_clock_share() == pytest.approx(270 / 271.2)
    assert load_gpu("gb200-186gb").sustained_clock_share() == pytest.approx(1550 / 1822)
    assert load_gpu("b200-sxm-180gb").sustained_clock_share() == pytest.approx(1237 / 1450, 1e-3)
    measured = {
        round(gpu.sustained_clock_share(), 4)
        for gpu in all_gpus()
        if gpu.achievable_bf16_fixed_shape is not None or gpu.sustained_kernel_share is not None
    }
    assert len(measured) >= 4
    assert statistics.median(sorted(measured)) == pytest.approx(
        UNMEASURED_SUSTAINED_CLOCK_SHARE, abs=5e-4
    )
    assert load_gpu("h200-sxm-141gb").sustained_clock_share() == pytest.approx(730 / 794.5)
    assert load_gpu("l40s-48gb").sustained_clock_share() == UNMEASURED_SUSTAINED_CLOCK_SHARE


def test_same_die_entries_share_the_sustained_rate_of_their_die():
    for gpu in all_gpus():
        if gpu.same_die_as and gpu.achievable_bf16_fixed_shape is not None:
            die = load_gpu(gpu.same_die_as)
            assert gpu.achievable_bf16_fixed_shape == die.achievable_bf16_fixed_shape, gpu.id
            assert gpu.sustained_clock_share() == die.sustained_clock_share(), gpu.id
