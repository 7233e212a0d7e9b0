"""FLOPs per token: exact counts on small models, and the published conventions reproduced
from published throughput rows."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from gpuplan.catalog import load_model
from gpuplan.estimate.flops import (
    CONVENTIONS,
    RECOMPUTE_FULL,
    RECOMPUTE_NONE,
    RECOMPUTE_SELECTIVE,
    adapter_params,
    attended_keys_per_query,
    convention_flops_per_token,
    flops_utilization,
    forward_flops_per_token,
    gpuplan_flops_per_token,
    hfu,
    llm_foundry_flops_per_token,
    megatron_core_flops_per_token,
    megatron_flops_per_token,
    megatron_three_quarters_flops_per_token,
    mfu,
    palm_flops_per_token,
    palm_params,
    tokens_per_second_from_flops_rate,
    tokens_per_second_from_utilization,
    training_flops_per_token,
)
from gpuplan.workload.job import LoraConfig, TrainingJob
from gpuplan.workload.model import ModelSpec

A100_BF16 = 312e12
H100_BF16 = 989e12


def tiny_llama() -> ModelSpec:
    """2 layers, d 8, 2 query heads of 4, 1 KV head, SwiGLU 16, vocabulary 10."""
    return ModelSpec.from_hf_config(
        {
            "model_type": "llama",
            "num_hidden_layers": 2,
            "hidden_size": 8,
            "num_attention_heads": 2,
            "num_key_value_heads": 1,
            "intermediate_size": 16,
            "vocab_size": 10,
        }
    )


def tiny_deepseek() -> ModelSpec:
    """MLA with query compression; layer 0 dense, layer 1 with 4 routed experts (top 2) and one
    shared expert."""
    return ModelSpec.from_hf_config(
        {
            "model_type": "deepseek_v3",
            "num_hidden_layers": 2,
            "hidden_size": 16,
            "num_attention_heads": 2,
            "q_lora_rank": 8,
            "kv_lora_rank": 4,
            "qk_nope_head_dim": 4,
            "qk_rope_head_dim": 2,
            "v_head_dim": 3,
            "intermediate_size": 32,
            "moe_intermediate_size": 8,
            "n_routed_experts": 4,
            "num_experts_per_tok": 2,
            "n_shared_experts": 1,
            "first_k_dense_replace": 1,
            "vocab_size": 10,
        }
    )


# --- exact counts -----------------------------------------------------------------------------


def test_tiny_llama_forward_by_hand():
    forward = forward_flops_per_token(tiny_llama(), seq_len=4)
    # q 8x8, k 8x4, v 8x4, o 8x8 = 192 weights, 2 FLOPs each, 2 layers
    assert forward.attention_projections == 2 * 192 * 2
    # gate, up, down: 3 x 8 x 16 = 384 weights
    assert forward.dense_mlp == 2 * 384 * 2
    assert forward.experts == 0
    assert forward.head == 2 * 8 * 10
    # causal: (4 + 1) / 2 keys per query; QK and AV: 2 * 2.5 * 2 heads * (4 + 4), 2 layers
    assert forward.attention_core == pytest.approx(2 * 2.5 * 2 * 8 * 2)
    assert forward.total == pytest.approx(768 + 1536 + 160 + 160)


def test_unmasked_attention_core_counts_every_key():
    forward = forward_flops_per_token(tiny_llama(), seq_len=4, causal=False)
    assert forward.attention_core == pytest.approx(2 * 4 * 2 * 8 * 2)


def test_tiny_deepseek_forward_by_hand():
    forward = forward_flops_per_token(tiny_deepseek(), seq_len=6)
    # q 16x8 + 8x(2*6); kv 16x(4+2) + 4x(2*(4+3)); o (2*3)x16 = 472 weights per layer
    assert forward.attention_projections == 2 * 472 * 2
    assert forward.dense_mlp == 2 * 3 * 16 * 32
    # router 16x4, two routed experts and one shared expert of 3 x 16 x 8
    assert forward.experts == 2 * (16 * 4 + 3 * 384)
    assert forward.head == 2 * 16 * 10
    # MLA core: QK over nope + rope = 6, AV over v = 3; 3.5 keys; 2 heads; 2 layers
    assert forward.attention_core == pytest.approx(2 * 3.5 * 2 * (6 + 3) * 2)
    assert forward.total == pytest.approx(1888 + 3072 + 2432 + 320 + 252)


def test_training_is_three_forward_passes():
    model = tiny_llama()
    flops = training_flops_per_token(TrainingJob(model=model, seq_len=4))
    assert flops.model == pytest.approx(3 * forward_flops_per_token(model, 4).total)
    assert flops.hardware == pytest.approx(flops.model)


@given(st.integers(min_value=1, max_value=300))
def test_causal_average_matches_a_counted_mask(seq_len):
    mask = np.tril(np.ones((seq_len, seq_len)))
    assert attended_keys_per_query(seq_len) == pytest.approx(mask.sum() / seq_len)


@given(st.integers(min_value=1, max_value=200), st.integers(min_value=1, max_value=200))
def test_sliding_window_average_matches_a_counted_mask(seq_len, window):
    rows = np.arange(seq_len)[:, None]
    columns = np.arange(seq_len)[None, :]
    mask = (columns <= rows) & (rows - columns < window)
    assert attended_keys_per_query(seq_len, window=window) == pytest.approx(mask.sum() / seq_len)


@given(st.integers(min_value=1, max_value=200), st.integers(min_value=1, max_value=64))
def test_chunked_average_matches_a_counted_mask(seq_len, chunk):
    rows = np.arange(seq_len)[:, None]
    columns = np.arange(seq_len)[None, :]
    same_chunk = rows // chunk == columns // chunk
    causal = (columns <= rows) & same_chunk
    assert attended_keys_per_query(seq_len, chunk=chunk) == pytest.approx(causal.sum() / seq_len)
    full = attended_keys_per_query(seq_len, causal=False, chunk=chunk)
    assert full == pytest.approx(same_chunk.sum() / seq_len)


def test_chunked_layers_attend_within_their_chunk_and_the_others_causally():
    """Llama 4 Scout at 32,768 tokens: the 36 RoPE layers see only their 8192-token chunk, the
    12 NoPE layers every earlier key."""
    model = load_model("llama-4-scout")
    seq_len, chunk = 32768, model.attention_chunk_size
    positions = np.arange(seq_len)
    chunked_keys = (positions % chunk + 1).sum() / seq_len
    full_keys = (positions + 1).sum() / seq_len
    per_key = 2.0 * model.num_attention_heads * 2 * model.head_dim
    chunked = sum(model.is_chunked_layer(index) for index in range(model.num_layers))
    assert chunked == 36
    expected = per_key * (chunked * chunked_keys + (model.num_layers - chunked) * full_keys)
    assert forward_flops_per_token(model, seq_len).attention_core == pytest.approx(expected)


def test_windowed_layers_count_a_counted_mask_and_full_layers_the_causal_one():
    """Gemma 2 at 8192 tokens: every other layer sees at most 4096 keys (its window), the
    rest see every earlier key; the core's FLOPs follow the two masks, counted row by row."""
    model = load_model("gemma-2-2b")
    seq_len, window = 8192, model.sliding_window
    assert window == 4096
    seen_by_query = np.arange(1, seq_len + 1)
    windowed_keys = np.minimum(seen_by_query, window).sum() / seq_len
    full_keys = seen_by_query.sum() / seq_len
    per_key = 2.0 * model.num_attention_heads * 2 * model.head_dim
    windowed_layers = sum(model.is_windowed_layer(index) for index in range(model.num_layers))
    assert windowed_layers == model.num_layers // 2
    expected = per_key * (
        windowed_layers * windowed_keys + (model.num_layers - windowed_layers) * full_keys
    )
    assert forward_flops_per_token(model, seq_len).attention_core == pytest.approx(expected)
    short = forward_flops_per_token(model, window).attention_core
    assert short == pytest.approx(model.num_layers * per_key * (window + 1) / 2)


def test_causal_mask_halves_the_attention_core_for_long_sequences():
    model = load_model("llama-3.1-8b")
    causal = forward_flops_per_token(model, 131072).attention_core
    full = forward_flops_per_token(model, 131072, causal=False).attention_core
    assert causal / full == pytest.approx(0.5, rel=1e-4)


def test_packed_documents_attend_within_each_document():
    """Documents of ``d`` tokens packed into ``s``: ``Σ L_i (L_i + 1) / 2 / Σ L_i`` keys per
    query, ``(d + 1) / 2`` (Megatron-LM's FLOP counter takes Σ L_i² over documents)."""
    assert float(attended_keys_per_query(4, chunk=4)) == pytest.approx(2.5)
    assert float(attended_keys_per_query(4, chunk=2)) == pytest.approx(1.5)
    model = load_model("llama-3.1-8b")
    whole = forward_flops_per_token(model, 4096).attention_core
    packed = forward_flops_per_token(model, 4096, document_tokens=256).attention_core
    assert packed / whole == pytest.approx(257 / 4097)
    job = TrainingJob(model=model, seq_len=4096, document_tokens=256)
    flops = training_flops_per_token(job)
    plain = training_flops_per_token(TrainingJob(model=model, seq_len=4096))
    assert float(flops.parts["attention_core"]) == pytest.approx(
        float(plain.parts["attention_core"]) * 257 / 4097
    )
    assert float(flops.parts["dense_mlp"]) == float(plain.parts["dense_mlp"])


def test_seq_len_broadcasts():
    lengths = np.array([1024, 2048, 4096])
    totals = gpuplan_flops_per_token(load_model("llama-3.1-8b"), lengths)
    assert totals.shape == (3,)
    assert np.all(np.diff(totals) > 0)


# --- recompute and methods ---------------------------------------------------------------------


def test_recompute_codes_add_hardware_flops():
    model = load_model("llama-3.1-8b")
    job = TrainingJob(model=model, seq_len=8192)
    codes = np.array([RECOMPUTE_NONE, RECOMPUTE_SELECTIVE, RECOMPUTE_FULL])
    flops = training_flops_per_token(job, recompute=codes)
    forward = forward_flops_per_token(model, 8192)
    assert np.allclose(flops.model, 3 * forward.total)
    assert flops.hardware[0] == pytest.approx(flops.model[0])
    assert flops.hardware[1] == pytest.approx(flops.model[1] + forward.attention_core)
    assert flops.hardware[2] == pytest.approx(flops.model[2] + forward.layers)
    assert flops.hardware[2] > flops.hardware[1] > flops.model[1]


def test_lora_skips_weight_gradients_of_frozen_weights():
    model = tiny_llama()
    lora = LoraConfig(rank=2, targets=("q_proj", "v_proj"))
    job = TrainingJob(model=model, method="lora", seq_len=4, lora=lora)
    forward = forward_flops_per_token(model, 4)
    # adapters: q 2*(8+8), v 2*(8+4) per layer
    assert adapter_params(job) == 2 * (2 * 16 + 2 * 12)
    expected = (
        2 * (forward.attention_projections + forward.dense_mlp + forward.head)
        + 3 * forward.attention_core
        + 6 * adapter_params(job)
    )
    assert training_flops_per_token(job).model == pytest.approx(expected)


def test_lora_costs_less_than_full_training():
    model = load_model("llama-3.1-8b")
    full = training_flops_per_token(TrainingJob(model=model, seq_len=4096)).model
    lora = training_flops_per_token(TrainingJob(model=model, method="lora", seq_len=4096)).model
    qlora = training_flops_per_token(TrainingJob(model=model, method="qlora", seq_len=4096)).model
    assert lora < full
    assert qlora == pytest.approx(lora)
    assert 0.6 < lora / full < 0.75


def test_freeze_trains_the_top_layers_and_runs_the_rest_forward():
    model = tiny_llama()
    job = TrainingJob(model=model, method="freeze", trainable_layers=1, seq_len=4)
    top = forward_flops_per_token(model, 4, layers=range(1, 2))
    bottom = forward_flops_per_token(model, 4, layers=range(1), include_head=False)
    flops = training_flops_per_token(job, recompute=RECOMPUTE_FULL)
    assert flops.model == pytest.approx(3 * top.layers + 2 * top.head + bottom.total)
    assert flops.hardware == pytest.approx(flops.model + top.layers)


# --- published conventions ----------------------------------------------------------------------


def test_llm_foundry_reproduces_the_mpt_7b_row():
    """mosaicml/llm-foundry scripts/train/benchmarking/README.md @ 5e85bd62d4, "H100 80GB BF16
    (Large Scale)": MPT-7b, 512 GPUs, seq 2048, NumParams 6,658,859,008, 9,670 tokens/s/GPU,
    Model TFLOP 417, MFU 42.2 %."""
    mpt = ModelSpec.from_hf_config(
        {"model_type": "mpt", "n_layers": 32, "d_model": 4096, "n_heads": 32, "vocab_size": 50368}
    )
    per_token = llm_foundry_flops_per_token(mpt, 2048, num_params=6_658_859_008)
    assert per_token * 9670 / 1e12 == pytest.approx(417, abs=1)
    assert flops_utilization(9670, per_token, H100_BF16) == pytest.approx(0.422, abs=0.001)


def test_llm_foundry_hfu_with_activation_checkpointing():
    """Same README, "H100 80GB BF16": MPT-7b at seq 65,536 with activation checkpointing,
    NumParams 6,918,905,856, 1,956 tokens/s/GPU, MFU 28.59 %, HFU 38.13 %."""
    mpt = ModelSpec.from_hf_config(
        {"model_type": "mpt", "n_layers": 32, "d_model": 4096, "n_heads": 32, "vocab_size": 50368}
    )
    model_flops = llm_foundry_flops_per_token(mpt, 65536, num_params=6_918_905_856)
    hardware_flops = llm_foundry_flops_per_token(
        mpt, 65536, num_params=6_918_905_856, activation_checkpointing=True
    )
    assert flops_utilization(1956, model_flops, H100_BF16) == pytest.approx(0.2859, abs=0.0005)
    assert flops_utilization(1956, hardware_flops, H100_BF16) == pytest.approx(0.3813, abs=0.0005)


def gpt3_175b() -> ModelSpec:
    return ModelSpec.from_hf_config(
        {
            "model_type": "gpt2",
            "n_layer": 96,
            "n_embd": 12288,
            "n_head": 96,
            "vocab_size": 51200,
            "n_positions": 2048,
        }
    )


def test_megatron_formula_reproduces_the_175b_example():
    """NVIDIA/Megatron-LM README, "GPT-3 Example" (examples/pretrain_gpt3_175B.sh): 1024 A100,
    global batch 1536 of 2048 tokens, "each iteration takes around 32 seconds resulting in 138
    teraFLOPs per GPU which is 44% of the theoretical peak" (full recompute: the 96 formula)."""
    tokens_per_second_per_gpu = 1536 * 2048 / 32 / 1024
    per_token = megatron_flops_per_token(gpt3_175b(), 2048, full_recompute=True)
    assert per_token * tokens_per_second_per_gpu / 1e12 == pytest.approx(138, abs=0.5)
    utilization = flops_utilization(tokens_per_second_per_gpu, per_token, A100_BF16)
    assert utilization == pytest.approx(0.44, abs=0.005)


def test_megatron_model_flops_are_three_quarters_without_the_head_term():
    model = gpt3_175b()
    ratio = megatron_flops_per_token(model, 2048) / megatron_flops_per_token(
        model, 2048, full_recompute=True
    )
    assert 0.75 < ratio < 0.751


def test_flash_attention_convention_reproduces_gpt3_1_3b():
    """Dao-AILab/flash-attention training/README.md: GPT3-1.3B on 8xA100 80GB at 169k tokens/s
    (table), "reaching up to 189 TFLOPs/sec per A100" (bar label), Megatron formula x 3/4."""
    model = ModelSpec.from_hf_config(
        {
            "model_type": "gpt2",
            "n_layer": 24,
            "n_embd": 2048,
            "n_head": 16,
            "vocab_size": 50257,
            "n_positions": 2048,
        }
    )
    per_token = megatron_three_quarters_flops_per_token(model, 2048)
    assert per_token * 169_000 / 8 / 1e12 == pytest.approx(189, abs=1)


def test_palm_convention_drops_the_embedding_table():
    model = load_model("llama-3.1-8b")
    assert palm_params(model) == model.total_params - model.vocab_size * model.hidden_size
    expected = 6 * palm_params(model) + 12 * 32 * 32 * 128 * 8192
    assert palm_flops_per_token(model, 8192) == pytest.approx(expected)


def test_palm_convention_keeps_a_tied_head():
    model = load_model("llama-3.2-1b")
    assert model.tie_word_embeddings
    assert palm_params(model) == model.total_params


def test_megatron_core_is_our_count_without_the_causal_mask():
    model = load_model("llama-3.1-8b")
    unmasked = megatron_core_flops_per_token(model, 8192)
    assert unmasked == pytest.approx(gpuplan_flops_per_token(model, 8192, causal=False))
    assert gpuplan_flops_per_token(model, 8192) < unmasked


def test_every_convention_is_reachable_by_name():
    model = load_model("llama-3.1-8b")
    for name in CONVENTIONS:
        assert convention_flops_per_token(name, model, 4096) > 6 * 7e9
    with pytest.raises(ValueError, match="convention"):
        convention_flops_per_token("chinchilla", model, 4096)


# --- utilization ---------------------------------------------------------------------------------


def test_mfu_and_hfu_use_model_and_hardware_flops():
    job = TrainingJob(model=load_model("llama-3.1-8b"), seq_len=8192)
    flops = training_flops_per_token(job, recompute=RECOMPUTE_FULL)
    assert hfu(3000, flops, H100_BF16) > mfu(3000, flops, H100_BF16)
    assert mfu(3000, flops, H100_BF16) == pytest.approx(3000 * flops.model / H100_BF16)


@given(
    st.floats(min_value=0.01, max_value=1.0),
    st.floats(min_value=1e9, max_value=1e13),
    st.floats(min_value=1e13, max_value=1e16),
)
def test_utilization_and_tokens_per_second_invert(utilization, flops_per_token, peak):
    tokens = tokens_per_second_from_utilization(utilization, flops_per_token, peak)
    assert flops_utilization(tokens, flops_per_token, peak) == pytest.approx(utilization)
    rate = tokens_per_second_from_flops_rate(utilization * peak, flops_per_token)
    assert rate == pytest.approx(tokens)
