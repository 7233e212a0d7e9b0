"""The validation tables carried in the package: complete, consistent and loadable."""

from __future__ import annotations

from collections import Counter

import pytest

from gpuplan.catalog import load_gpu, load_model
from gpuplan.catalog.validation import (
    MEMORY_USES,
    USES,
    MemoryRow,
    ThroughputRow,
    ValidationRow,
    memory_rows,
    throughput_rows,
)
from gpuplan.estimate.frameworks import FRAMEWORK_CODES
from gpuplan.workload.model import ModelSpec

MEMORY = memory_rows()
THROUGHPUT = throughput_rows()
ALL: list[ValidationRow] = [*MEMORY, *THROUGHPUT]

METHODS = {"full", "lora", "qlora", "freeze"}
PRECISIONS = {"bf16", "bf16-pure", "fp16", "fp8", "fp32"}
FRAMEWORKS = set(FRAMEWORK_CODES)
RECOMPUTE = {"none", "selective", "full"}
OFFLOAD = {"none", "optimizer", "optimizer+params"}
METRICS = {"allocated", "reserved", "active", "nvidia-smi", "unknown"}
FLOPS_DEFINITIONS = {
    "llm-foundry", "megatron", "megatron-3/4", "palm", "internevo", "nanotron", "torchtitan", "unknown",
}  # fmt: skip


def test_tables_are_not_empty():
    assert len(MEMORY) > 100
    assert len(THROUGHPUT) > 500


@pytest.mark.parametrize("rows", [MEMORY, THROUGHPUT], ids=["memory", "throughput"])
def test_ids_unique(rows: list[ValidationRow]):
    # Within a table; one run measured for both memory and speed has the same id in both.
    counts = Counter(row.id for row in rows)
    assert [row_id for row_id, n in counts.items() if n > 1] == []


@pytest.mark.parametrize("row", ALL, ids=lambda row: row.id)
def test_row_has_provenance_and_valid_codes(row: ValidationRow):
    assert row.source and row.source_ref and row.table
    assert row.method in METHODS
    assert row.precision is None or row.precision in PRECISIONS
    assert row.framework is None or row.framework in FRAMEWORKS
    assert row.recompute is None or row.recompute in RECOMPUTE
    assert row.offload is None or row.offload in OFFLOAD
    assert row.zero is None or row.zero in (0, 1, 2, 3)
    if row.method in ("lora", "qlora"):
        assert row.lora_rank is None or row.lora_rank > 0
    if row.use == "sanity":
        assert "sanity" in row.notes, "a sanity row says why in its notes"


@pytest.mark.parametrize("row", ALL, ids=lambda row: row.id)
def test_model_resolves_or_arch_builds(row: ValidationRow):
    assert not (row.model and row.arch), "model and arch are exclusive"
    if row.model:
        spec = load_model(row.model)
    elif row.arch is not None:
        spec = ModelSpec.from_hf_config(row.arch)
    else:
        assert row.use == "sanity", "only sanity rows may leave the architecture unpinned"
        return
    assert spec.total_params > 0
    assert row.model_spec().total_params == spec.total_params


@pytest.mark.parametrize("row", [r for r in ALL if r.gpu], ids=lambda row: row.id)
def test_gpu_resolves(row: ValidationRow):
    assert load_gpu(row.gpu).id == row.gpu


@pytest.mark.parametrize("row", ALL, ids=lambda row: row.id)
def test_layout_multiplies_to_gpu_count(row: ValidationRow):
    sizes = (row.dp, row.tp, row.pp, row.cp)
    if row.num_gpus is None or any(size is None for size in sizes):
        return
    dp, tp, pp, cp = sizes
    assert dp * tp * pp * cp == row.num_gpus
    if row.ep is not None and row.ep > 1:
        assert (dp * cp) % row.ep == 0, "expert parallelism lives inside the data-parallel ranks"


@pytest.mark.parametrize("row", MEMORY, ids=lambda row: row.id)
def test_memory_values(row: MemoryRow):
    assert row.use in MEMORY_USES
    assert row.metric in METRICS
    if row.oom:
        assert row.measured_bytes is None
    else:
        assert row.measured_bytes is not None and row.measured_bytes > 0
        # Per-GPU peaks lie between 1 GB and the largest GPU in the table.
        assert 1e9 < row.measured_bytes < 200e9
    if row.capacity_bytes is not None:
        assert row.capacity_bytes > 0


@pytest.mark.parametrize("row", THROUGHPUT, ids=lambda row: row.id)
def test_throughput_values(row: ThroughputRow):
    assert row.use in USES
    values = (row.tokens_per_second_per_gpu, row.tflops_per_gpu, row.mfu, row.hfu)
    assert any(value is not None for value in values), "a row carries at least one measurement"
    for value in values:
        assert value is None or value > 0
    for fraction in (row.mfu, row.hfu):
        assert fraction is None or fraction < 1
    if row.tflops_per_gpu is not None or row.mfu is not None or row.hfu is not None:
        assert row.flops_definition in FLOPS_DEFINITIONS


def test_filter_by_use():
    assert {row.use for row in memory_rows(use="test")} == {"test"}
    assert {row.use for row in throughput_rows(use="fit")} == {"fit"}
    assert len(throughput_rows(use="fit")) + len(throughput_rows(use="test")) + len(
        throughput_rows(use="sanity")
    ) == len(THROUGHPUT)
    with pytest.raises(ValueError):
        memory_rows(use="train")


@pytest.mark.parametrize(
    "source",
    [
        "mosaicml/llm-foundry",
        "pytorch/torchtitan",
        "InternLM/InternEvo",
        "NVIDIA/NeMo",
        "NVIDIA/Megatron-LM README",
        "Korthikanti et al. 2022",
        "NVIDIA/NeMo-Megatron-Launcher",
        "Dao-AILab/flash-attention",
    ],
)
def test_fit_test_split_non_empty_for_main_throughput_sources(source: str):
    uses = Counter(row.use for row in THROUGHPUT if row.source == source)
    assert uses["fit"] > 0 and uses["test"] > 0, uses


@pytest.mark.parametrize(
    "source",
    [
        "pytorch/torchtitan",
        "Lightning-AI/litgpt",
        "pytorch/torchtune",
        "AnswerDotAI/fsdp_qlora",
        "QwenLM/Qwen",
    ],
)
def test_memory_test_rows_for_main_sources(source: str):
    assert any(row.use == "test" for row in MEMORY if row.source == source)


def test_split_keeps_identical_configurations_together():
    # Rows of one configuration published twice (revisions, two tables) share a split, so a
    # fitted constant is never tested on a copy of a row it was fitted on.
    nemo = [r for r in THROUGHPUT if r.source == "NVIDIA/NeMo" and r.id.startswith("nemo2407-")]
    by_config: dict[str, set[str]] = {}
    for row in nemo:
        by_config.setdefault(row.id.rsplit("-", 1)[0], set()).add(row.use)
    assert all(len(uses) == 1 for uses in by_config.values())


def test_scenario_mapping():
    row = next(r for r in MEMORY if r.id == "torchtitan-l31-8b-8g-s8k")
    scenario = row.scenario()
    assert scenario["model"] == "llama-3.1-8b"
    assert scenario["hardware"] == {"gpu": "h100-sxm-80gb", "count": 8}
    assert scenario["strategy"]["zero"] == 3
    assert scenario["micro_batch"] == 2 and scenario["seq_len"] == 8192
    assert row.capacity_bytes == 96 * 2**30
    assert row.measured_bytes == round(82.4 * 2**30)

    lora = next(r for r in MEMORY if r.id == "litgpt-llama-2-7b-lora-1g-mb2")
    assert lora.scenario()["lora"] == {"rank": 32, "alpha": 16, "targets": "q,v", "dropout": 0.05}
    assert lora.scenario()["precision"] == "bf16-pure"

    mpt = next(r for r in THROUGHPUT if r.source == "mosaicml/llm-foundry")
    assert isinstance(mpt.scenario()["model"], dict)


def test_a_stacks_kernels_and_checkpointing_reach_the_scenario():
    """NeMo AutoModel's MoE rows run Transformer Engine's fused norms and cuDNN attention with
    DeepEP, the round-robin balanced gate and activation checkpointing (their benchmark
    configs); its 8B LoRA row, a Hugging Face model, Liger's fused norms and no checkpointing
    (``use_liger_kernel`` defaults on)."""
    moe = next(r for r in THROUGHPUT if r.id == "automodel-qwen3-moe-30b-full-8g-2026-06")
    scenario = moe.scenario()
    assert scenario["attention_kernel"] == "cudnn" and scenario["fused_kernels"]
    assert scenario["moe"] == {"dispatch": "deepep", "routing": "round_robin"}
    assert scenario["strategy"]["recompute"] == "full"
    lora = next(r for r in THROUGHPUT if r.id == "automodel-llama3-8b-lora-1g-2026-06")
    assert "attention_kernel" not in lora.scenario() and lora.scenario()["fused_kernels"]
    assert not lora.scenario().get("fused_loss")
    assert lora.scenario()["strategy"]["recompute"] == "none"


def test_llmfoundry_architectures_match_published_parameter_counts():
    # llm-foundry prints NumParams for every row; the arch JSON reproduces it exactly
    # (biases on, learned positions of max_seq_len rows).
    sizes = {
        row.arch["max_seq_len"]: row
        for row in THROUGHPUT
        if row.id.startswith("llmfoundry-mpt-7b-")
    }
    assert sizes[2048].model_spec().total_params == 6_658_859_008
    assert sizes[65536].model_spec().total_params == 6_918_905_856


def test_unsloth_capacity_rows_record_max_context():
    rows = [r for r in MEMORY if r.source == "unslothai/unsloth" and not r.oom]
    assert rows and all(r.use == "sanity" and r.seq_len and r.capacity_bytes for r in rows)
