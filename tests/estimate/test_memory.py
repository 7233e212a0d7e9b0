"""Memory model: exact reproduction of Korthikanti et al. 2022 and the accounting rules."""

from __future__ import annotations

import numpy as np
import pytest

import gpuplan
from gpuplan.estimate.frameworks import FRAMEWORK_CODES
from gpuplan.estimate.memory import (
    activation_bytes_per_token_per_layer,
    korthikanti_activation_bytes,
    nf4_bytes_per_param,
    optimizer_state_bytes_per_param,
)
from gpuplan.strategy import RECOMPUTE, Layout
from gpuplan.workload.job import TrainingJob
from gpuplan.workload.model import ModelSpec

# Korthikanti et al. 2022 (arXiv 2205.05198), Table 3: the GPT configurations of the paper.
KORTHIKANTI_CONFIGS = [
    # name, heads, hidden, layers, tensor parallel, sequence length, micro-batch
    ("22B", 64, 6144, 48, 8, 2048, 4),
    ("175B", 96, 12288, 96, 8, 2048, 1),
    ("530B", 128, 20480, 105, 8, 2048, 1),
    ("1T", 160, 25600, 128, 8, 2048, 1),
]


def _layout(
    tp: int = 1, sequence_parallel: bool = False, recompute: str = "none", **extra: int
) -> Layout:
    values = {
        "dp": 1,
        "pp": 1,
        "vpp": 1,
        "cp": 1,
        "ep": 1,
        "zero": 0,
        "micro_batch": 1,
        "micro_batches": 1,
    }
    values.update(extra)
    values.setdefault("etp", tp)
    values.setdefault("shard", values["dp"] * values["cp"])
    return Layout(
        tp=np.asarray(tp),
        sequence_parallel=np.asarray(sequence_parallel),
        recompute=np.asarray(RECOMPUTE.index(recompute)),
        offload=np.asarray(0),
        dualpipe=np.asarray(False),
        **{key: np.asarray(value) for key, value in values.items()},
    )


def _gpt(heads: int, hidden: int, layers: int, sequence_length: int) -> ModelSpec:
    return ModelSpec.from_hf_config(
        {
            "model_type": "gpt2",
            "n_head": heads,
            "n_embd": hidden,
            "n_layer": layers,
            "n_positions": sequence_length,
            "vocab_size": 51200,
        },
        name="gpt",
    )


@pytest.mark.parametrize(
    ("name", "heads", "hidden", "layers", "tp", "seq", "batch"), KORTHIKANTI_CONFIGS
)
@pytest.mark.parametrize(
    ("tensor_parallel", "sequence_parallel", "recompute"),
    [
        (False, False, "none"),
        (True, False, "none"),
        (True, True, "none"),
        (True, True, "selective"),
    ],
)
def test_reproduces_korthikanti_activation_formula_exactly(
    name, heads, hidden, layers, tp, seq, batch, tensor_parallel, sequence_parallel, recompute
):
    model = _gpt(heads, hidden, layers, seq)
    t = tp if tensor_parallel else 1
    layout = _layout(tp=t, sequence_parallel=sequence_parallel, recompute=recompute)
    megatron = np.asarray(FRAMEWORK_CODES.index("megatron"))
    per_token = activation_bytes_per_token_per_layer(
        model, layout, megatron, seq, flash_attention=False, dropout=True
    )
    expected = korthikanti_activation_bytes(
        seq, batch, hidden, heads, t, sequence_parallel, recompute
    )
    norm_statistics = 2 * 8 / (t if sequence_parallel else 1)
    """The paper leaves out each LayerNorm's fp32 mean and rstd (8 bytes per token)."""
    assert float(per_token) * seq * batch == pytest.approx(
        expected + norm_statistics * seq * batch, rel=1e-12
    )


def test_korthikanti_closed_forms():
    s, b, h, a, t = 2048, 1, 12288, 96, 8
    assert korthikanti_activation_bytes(s, b, h, a) == s * b * h * (34 + 5 * a * s / h)
    assert korthikanti_activation_bytes(s, b, h, a, t, True, "selective") == 34 * s * b * h / t
    assert korthikanti_activation_bytes(s, b, h, a, t, True, "full") == 2 * s * b * h / t


def test_flash_attention_stores_no_score_matrix():
    model = _gpt(32, 4096, 4, 8192)
    megatron = np.asarray(FRAMEWORK_CODES.index("megatron"))
    short = activation_bytes_per_token_per_layer(
        model, _layout(), megatron, 1024, flash_attention=True
    )
    long = activation_bytes_per_token_per_layer(
        model, _layout(), megatron, 8192, flash_attention=True
    )
    assert float(short) == float(long)
    eager = activation_bytes_per_token_per_layer(
        model, _layout(), megatron, 8192, flash_attention=False
    )
    assert float(eager) > 2 * float(long)


def _tiny_llama() -> ModelSpec:
    return ModelSpec.from_hf_config(
        {
            "model_type": "llama",
            "num_hidden_layers": 22,
            "hidden_size": 2048,
            "num_attention_heads": 32,
            "num_key_value_heads": 4,
            "intermediate_size": 5632,
            "vocab_size": 32000,
        },
        name="tiny-llama",
    )


def test_eager_full_fine_tune_layer_matches_the_saved_tensor_count():
    """litgpt 0.4.12's full fine-tune of TinyLlama, every tensor saved for backward counted once
    per storage on fake tensors (docs/accuracy.md): 30 h + 8 F + 4 a + 8 bytes per token per
    layer. fp32 RMSNorm input and output and the rstd (8 h + 4, twice), attention input 2 h, Q
    and the K and V repeated to all 32 heads (6 h), flash attention's output and the output
    projection's contiguous copy of it (4 h: litgpt builds Q with ``torch.cat``), MLP input 2 h,
    SwiGLU 8 F, the fp32 log-sum-exp 4 a."""
    model = _tiny_llama()
    eager = np.asarray(FRAMEWORK_CODES.index("hf"))
    per_token = activation_bytes_per_token_per_layer(model, _layout(), eager, 512)
    h, f, a = 2048, 5632, 32
    assert float(per_token) == 30 * h + 8 * f + 4 * a + 8


def test_fused_stack_keeps_grouped_kv_and_bf16_norm_inputs():
    model = _tiny_llama()
    megatron = np.asarray(FRAMEWORK_CODES.index("megatron"))
    eager = np.asarray(FRAMEWORK_CODES.index("hf"))
    fused = float(activation_bytes_per_token_per_layer(model, _layout(), megatron, 512))
    unfused = float(activation_bytes_per_token_per_layer(model, _layout(), eager, 512))
    h, kv, f = 2048, 256, 5632
    norms_saved = 2 * 8 * h - 2 * 2 * h
    repeated_kv = 2 * 2 * (h - kv)
    swiglu_saved = 8 * f - 6 * f
    output_copy = 2 * h
    assert unfused - fused == norms_saved + repeated_kv + swiglu_saved + output_copy


def test_lora_dropout_keeps_a_masked_copy_per_target():
    """PEFT's adapters each drop their input: a 1-byte mask and the bf16 copy per target; litgpt
    projects Q, K and V with one layer and one adapter input."""
    model = _tiny_llama()
    targets = ("q_proj", "v_proj")

    def kept(framework: str, **options: object) -> float:
        code = np.asarray(FRAMEWORK_CODES.index(framework))
        return float(
            activation_bytes_per_token_per_layer(
                model, _layout(), code, 512, lora_targets=targets, **options
            )
        )

    h, f = 2048, 5632
    without_dropout, with_dropout = kept("deepspeed"), kept("deepspeed", lora_dropout=True)
    assert with_dropout - without_dropout == 2 * 3 * h - 2 * h
    assert kept("hf", lora_dropout=True) - kept("hf") == 3 * h - 2 * h
    qlora = kept("deepspeed", lora_dropout=True, frozen_linear_keeps_input=True)
    assert qlora - with_dropout == 2 * (h + h + f)


def test_fsdp_gradient_accumulation_holds_unsharded_gradients():
    scenario = {
        "model": "llama-2-7b",
        "method": "full",
        "precision": "bf16-pure",
        "framework": "fsdp",
        "seq_len": 512,
        "micro_batch": 4,
        "hardware": {"gpu": "a10g-24gb", "count": 4},
        "strategy": {"zero": 3, "recompute": "full"},
    }
    one_step = gpuplan.estimate({**scenario, "global_batch": 16})["memory"]["parts"]
    accumulating = gpuplan.estimate({**scenario, "global_batch": 64})["memory"]["parts"]
    params = 6_738_415_616
    assert one_step["gradients"] == pytest.approx(2 * params / 4, rel=1e-3)
    assert accumulating["gradients"] == pytest.approx(2 * params, rel=1e-3)


def test_optimizer_bytes_per_parameter():
    model = _gpt(12, 768, 2, 1024)
    assert optimizer_state_bytes_per_param(TrainingJob(model, optimizer="adamw")) == 8
    assert optimizer_state_bytes_per_param(TrainingJob(model, optimizer="sgd")) == 4
    assert (
        optimizer_state_bytes_per_param(
            TrainingJob(model, optimizer="adamw", precision="bf16-pure")
        )
        == 4
    )
    assert 2 < optimizer_state_bytes_per_param(TrainingJob(model, optimizer="adamw-8bit")) < 2.01
    assert optimizer_state_bytes_per_param(TrainingJob(model, optimizer="adafactor")) < 0.1


def test_qlora_constants_match_the_paper():
    # Dettmers et al. 2023, section 3: double quantization cuts constants from 0.5 to 0.127 bits/param.
    assert (nf4_bytes_per_param(False) - 0.5) * 8 == pytest.approx(0.5)
    assert (nf4_bytes_per_param(True) - 0.5) * 8 == pytest.approx(0.127, abs=1e-3)


def _estimate(**overrides):
    scenario = {
        "model": "llama-3.1-8b",
        "seq_len": 4096,
        "micro_batch": 1,
        "hardware": {"gpu": "h100-sxm-80gb", "count": 8},
        "strategy": {"zero": 1},
    }
    scenario.update(overrides)
    return gpuplan.estimate(scenario)


def test_mixed_precision_adam_is_sixteen_bytes_per_parameter_without_sharding():
    result = _estimate(
        framework="deepspeed", hardware={"gpu": "h100", "count": 1}, strategy={"zero": 0}
    )
    parts = result["memory"]["parts"]
    states = parts["weights"] + parts["gradients"] + parts["optimizer"]
    assert states == pytest.approx(16 * 8_030_261_248, rel=1e-9)


def test_zero_stages_shard_more_and_more():
    totals = []
    for zero in (0, 1, 2, 3):
        parts = _estimate(framework="deepspeed", strategy={"zero": zero})["memory"]["parts"]
        totals.append(parts["weights"] + parts["gradients"] + parts["optimizer"])
    assert totals[0] > totals[1] > totals[2] > totals[3]
    assert totals[3] == pytest.approx(16 * 8_030_261_248 / 8, rel=1e-9)


def test_gradients_divide_by_tensor_and_pipeline_parallel():
    base = _estimate(
        framework="megatron", hardware={"gpu": "h100", "count": 1}, strategy={"zero": 0}
    )
    split = _estimate(
        framework="megatron",
        hardware={"gpu": "h100", "count": 8},
        strategy={"zero": 0, "tp": 4, "pp": 2},
    )
    ratio = base["memory"]["parts"]["gradients"] / split["memory"]["parts"]["gradients"]
    assert 6 < ratio < 8


def test_recompute_lowers_activations():
    activations = [
        _estimate(strategy={"zero": 1, "recompute": mode})["memory"]["parts"]["activations"]
        for mode in ("none", "selective", "full")
    ]
    assert activations[0] >= activations[1] > activations[2]


def test_qlora_weights_are_about_four_bits():
    result = _estimate(method="qlora", hardware={"gpu": "rtx-4090-24gb", "count": 1}, strategy={})
    weights = result["memory"]["parts"]["weights"]
    assert 0.5 * 7e9 < weights < 6.5e9


def test_peak_is_reserved_plus_context_and_parts_add_up():
    memory = _estimate()["memory"]
    assert memory["allocated_bytes"] < memory["reserved_bytes"] < memory["peak_bytes"]
    assert sum(memory["parts"].values()) == pytest.approx(memory["peak_bytes"])


def test_seventy_billion_full_fine_tune_does_not_fit_one_gpu():
    memory = _estimate(model="llama-3.1-70b", hardware={"gpu": "h100", "count": 1}, strategy={})[
        "memory"
    ]
    assert not memory["fits"]
