"""Memory-bound bytes per op: what fusing, compiling and splitting change."""

from __future__ import annotations

import numpy as np
import pytest

from gpuplan.catalog import load_model
from gpuplan.estimate.traffic import layer_traffic_bytes_per_token, loss_traffic_bytes_per_token


def test_fused_kernels_move_fewer_bytes_than_eager_ones():
    model = load_model("llama-3.1-8b")
    fused = layer_traffic_bytes_per_token(model, True, 1, False)
    eager = layer_traffic_bytes_per_token(model, False, 1, False)
    h, q, k, f = model.hidden_size, model.q_width, model.kv_width, model.intermediate_size
    assert float(fused[0]) == pytest.approx(2 * 4 * h + 4 * (q + k) + 6 * f + 12 * h)
    assert float(eager[0]) > 2 * float(fused[0])
    assert float(eager[1]) > float(fused[1]) > float(fused[0])


def test_sequence_parallel_splits_the_hidden_wide_ops():
    model = load_model("llama-3.1-8b")
    replicated = layer_traffic_bytes_per_token(model, True, np.array([8]), np.array([False]))
    split = layer_traffic_bytes_per_token(model, True, np.array([8]), np.array([True]))
    assert float(split[0][0]) < float(replicated[0][0])
    alone = layer_traffic_bytes_per_token(model, True, 1, False)
    assert float(split[0][0]) == pytest.approx(float(alone[0]) / 8)


def test_fused_loss_moves_a_fifth_of_the_eager_bytes():
    model = load_model("llama-3.1-8b")
    fused = float(loss_traffic_bytes_per_token(model, True, 1))
    eager = float(loss_traffic_bytes_per_token(model, False, 1))
    assert fused == pytest.approx(6 * model.vocab_size)
    assert eager > 5 * fused


def test_dynamic_scaling_reads_each_tensor_once_more_than_delayed_scaling():
    from gpuplan.estimate.traffic import fp8_cast_bytes_per_layer

    model = load_model("llama-3.1-8b")
    tokens = 8192.0
    delayed = float(fp8_cast_bytes_per_layer(model, "delayed", tokens, 1))
    tensorwise = float(fp8_cast_bytes_per_layer(model, "tensorwise", tokens, 1))
    h, q, k, f = model.hidden_size, model.q_width, model.kv_width, model.intermediate_size
    inputs = tokens * (2 * h + q + f)
    gradients = tokens * (q + 2 * k + h + 2 * f + h)
    weights = model.attention_params_per_layer() + model.mlp_params(f)
    assert delayed == pytest.approx(4 * inputs + 4 * gradients + 4 * weights)
    assert tensorwise == pytest.approx(6 * inputs + 6 * gradients + 8 * weights)


def test_fp8_recipes_that_scale_along_an_axis_move_more_than_per_tensor_scaling():
    from gpuplan.estimate.traffic import fp8_cast_bytes_per_layer

    model = load_model("llama-3.1-8b")
    moved = {
        recipe: float(fp8_cast_bytes_per_layer(model, recipe, 8192.0, 1))
        for recipe in ("delayed", "tensorwise", "rowwise", "mx")
    }
    assert moved["rowwise"] > moved["tensorwise"] > moved["mx"] > moved["delayed"]


def test_rowwise_scaling_rescales_the_backward_gemm_outputs_it_cannot_scale():
    from gpuplan.estimate.traffic import FP8_CAST_BYTES, fp8_cast_bytes_per_layer

    model = load_model("llama-3.1-8b")
    tokens = 8192.0
    h, q, k, f = model.hidden_size, model.q_width, model.kv_width, model.intermediate_size
    inputs = tokens * (2 * h + q + f)
    gradients = tokens * (q + 2 * k + h + 2 * f + h)
    weights = model.attention_params_per_layer() + model.mlp_params(f)
    rowwise = float(fp8_cast_bytes_per_layer(model, "rowwise", tokens, 1))
    casts = 8 * inputs + 8 * gradients + 10 * weights
    assert rowwise == pytest.approx(casts + 4 * (inputs + weights))
    assert all(
        cost.gradient_rescale == 0 for name, cost in FP8_CAST_BYTES.items() if name != "rowwise"
    )


def test_tensor_parallel_ranks_cast_whole_tensors_unless_they_gather_fp8_shards():
    from gpuplan.estimate.traffic import fp8_cast_bytes_per_layer

    model = load_model("llama-3.1-8b")
    tokens, tp = 8192.0, 8
    h, q, f = model.hidden_size, model.q_width, model.intermediate_size

    def moved(recipe: str, sequence_parallel: bool) -> float:
        return float(
            fp8_cast_bytes_per_layer(
                model, recipe, tokens, tp, sequence_parallel=np.array([sequence_parallel])
            )[0]
        )

    alone = float(fp8_cast_bytes_per_layer(model, "tensorwise", tokens, 1))
    assert moved("tensorwise", True) == pytest.approx(alone / tp)
    whole_inputs, whole_gradients = tokens * 2 * h * (1 - 1 / tp), tokens * 2 * h * (1 - 1 / tp)
    assert moved("tensorwise", False) - moved("tensorwise", True) == pytest.approx(
        6 * whole_inputs + 6 * whole_gradients
    )
    rescaled_input_gradients = tokens * (2 * h + (q + f) / tp)
    shards = tokens * (2 * h + q + f) / tp
    assert moved("rowwise", True) - float(
        fp8_cast_bytes_per_layer(model, "rowwise", tokens, 1)
    ) / tp == pytest.approx(
        8 * whole_inputs + 8 * whole_gradients + 4 * (rescaled_input_gradients - shards)
    )


def test_a_stack_that_caches_fp8_weights_casts_them_once_per_step():
    from gpuplan.estimate.traffic import fp8_cast_bytes_per_layer

    model = load_model("llama-3.1-8b")
    weights = model.attention_params_per_layer() + model.mlp_params(model.intermediate_size)

    def moved(micro_batches: int, caches: bool) -> float:
        return float(
            fp8_cast_bytes_per_layer(
                model, "delayed", 4096.0, 1, micro_batches=micro_batches, caches_weights=caches
            )
        )

    assert moved(1, True) - moved(4, True) == pytest.approx(4 * weights * 3 / 4)
    assert moved(1, False) == pytest.approx(moved(4, False))


def test_weights_gathered_in_fp8_leave_only_their_transpose_to_write():
    from gpuplan.estimate.traffic import fp8_cast_bytes_per_layer, fp8_gathered_bytes_per_param

    model = load_model("llama-3.1-8b")
    weights = model.attention_params_per_layer() + model.mlp_params(model.intermediate_size)
    cast = float(fp8_cast_bytes_per_layer(model, "tensorwise", 8192.0, 1))
    gathered = float(
        fp8_cast_bytes_per_layer(model, "tensorwise", 8192.0, 1, gathers_fp8_weights=True)
    )
    assert cast - gathered == pytest.approx((8 - 2) * weights)
    assert 1.0 < fp8_gathered_bytes_per_param(model) < 1.2


def test_fp8_all_gather_halves_the_fsdp_gathers_and_needs_fp8():
    import gpuplan
    from gpuplan.errors import InputError

    base = {
        "model": "llama-3.1-8b",
        "precision": "fp8",
        "framework": "torchtitan",
        "hardware": {"gpu": "h100-sxm-80gb", "count": 64},
        "strategy": {"zero": 3, "tp": 1, "pp": 1},
    }
    plain = gpuplan.estimate(base)
    gathered = gpuplan.estimate({**base, "fp8_all_gather": True})
    assert gathered["throughput"]["tokens_per_second"] > plain["throughput"]["tokens_per_second"]
    assert gathered["memory"]["peak_bytes"] < plain["memory"]["peak_bytes"]
    with pytest.raises(InputError, match="fp8_all_gather"):
        gpuplan.estimate({**base, "precision": "bf16", "fp8_all_gather": True})


def test_full_recompute_casts_the_forward_operands_again():
    from gpuplan.estimate.traffic import fp8_cast_bytes_per_layer

    model = load_model("llama-3.1-8b")
    h, q, f = model.hidden_size, model.q_width, model.intermediate_size
    weights = model.attention_params_per_layer() + model.mlp_params(f)
    once = float(fp8_cast_bytes_per_layer(model, "tensorwise", 2048.0, 1))
    twice = float(fp8_cast_bytes_per_layer(model, "tensorwise", 2048.0, 1, forward_passes=2.0))
    assert twice - once == pytest.approx(6 * 2048 * (2 * h + q + f) + 5 * weights)


def test_expert_parallelism_splits_the_routed_expert_weights():
    from gpuplan.estimate.traffic import linear_weight_elements_per_layer

    moe = load_model("qwen3-30b-a3b")
    alone = float(linear_weight_elements_per_layer(moe, 1))
    split = float(linear_weight_elements_per_layer(moe, 8))
    experts = moe.num_experts * moe.expert_params()
    assert alone - split == pytest.approx(experts * 7 / 8)


def test_routed_experts_quantize_one_copy_of_the_token_each():
    from gpuplan.estimate.traffic import linear_input_elements_per_token

    dense = load_model("llama-3.1-8b")
    h, q, f = dense.hidden_size, dense.q_width, dense.intermediate_size
    assert linear_input_elements_per_token(dense) == 2 * h + q + f
    moe = load_model("qwen3-30b-a3b")
    k, h, width = moe.num_experts_per_token, moe.hidden_size, moe.moe_intermediate_size
    assert linear_input_elements_per_token(moe) == h + moe.q_width + k * h + k * width


def test_fp8_recipe_is_a_scenario_choice():
    import gpuplan
    from gpuplan.errors import InputError

    base = {"model": "llama-3.1-8b", "precision": "fp8", "hardware": {"gpu": "h100-sxm-80gb"}}
    tensorwise = gpuplan.estimate({**base, "fp8_recipe": "tensorwise"})["throughput"]
    rowwise = gpuplan.estimate({**base, "fp8_recipe": "rowwise"})["throughput"]
    assert rowwise["breakdown"]["memory_bound"] > tensorwise["breakdown"]["memory_bound"]
    with pytest.raises(InputError, match="fp8_recipe"):
        gpuplan.estimate({**base, "fp8_recipe": "delayed-ish"})


def test_auto_fp8_recipe_is_the_stacks_own():
    import gpuplan

    base = {"model": "llama-3.1-8b", "precision": "fp8", "hardware": {"gpu": "h100-sxm-80gb"}}

    def memory_bound(framework: str, recipe: str) -> float:
        scenario = {**base, "framework": framework, "fp8_recipe": recipe}
        return float(gpuplan.estimate(scenario)["throughput"]["breakdown"]["memory_bound"])

    assert memory_bound("megatron", "auto") == memory_bound("megatron", "delayed")
    assert memory_bound("torchtitan", "auto") == memory_bound("torchtitan", "tensorwise")
    assert memory_bound("torchtitan", "auto") > memory_bound("torchtitan", "delayed")


def test_fused_kernels_cut_the_memory_bound_time_of_an_eager_stack():
    import gpuplan

    base = {"model": "llama-3.1-8b", "framework": "hf", "hardware": {"gpu": "rtx-4090-24gb"}}
    eager = gpuplan.estimate(base)["throughput"]
    fused = gpuplan.estimate({**base, "fused_kernels": True})["throughput"]
    assert fused["breakdown"]["memory_bound"] < 0.6 * eager["breakdown"]["memory_bound"]
    assert fused["tokens_per_second"] > eager["tokens_per_second"]


def test_megatron_unfused_vocab_parallel_loss_moves_its_eager_ops_bytes_unless_fused():
    model = load_model("llama-3.1-8b")
    vocab_parallel = float(loss_traffic_bytes_per_token(model, True, 2, True))
    assert vocab_parallel == pytest.approx(52 * model.vocab_size / 2)
    named_fused = float(loss_traffic_bytes_per_token(model, True, 2, True, fused_loss=True))
    assert named_fused == pytest.approx(6 * model.vocab_size / 2)
    rows = loss_traffic_bytes_per_token(model, np.array([True, False]), 1, np.array([True, False]))
    assert list(rows) == pytest.approx([52 * model.vocab_size, 32 * model.vocab_size])


def test_the_megatron_profile_runs_the_vocab_parallel_loss_and_internevo_a_fused_one():
    from gpuplan.estimate.frameworks import PRESETS

    assert PRESETS["megatron"].megatron_vocab_parallel_loss
    assert not PRESETS["internevo"].megatron_vocab_parallel_loss
    assert not PRESETS["fsdp"].megatron_vocab_parallel_loss


def test_optimizer_step_bytes_follow_the_implementation_and_the_dtypes():
    """A fused AdamW over an fp32 master (Megatron-LM) moves 2 x 4 (master) + 2 x 4 (fp32
    gradient) + 2 x 8 (moments) + 2 (the bf16 compute copy) = 34 bytes per parameter;
    ``torch.optim.AdamW``'s foreach step over bf16 weights, gradients and moments 4 x 2 + 6 x 2
    + 7 x 4 = 48; the same over fp32 (FSDP's fp32 shard) 96, with no compute copy, since FSDP
    casts while gathering; bitsandbytes' fused 8-bit step 2 x 2 + 2 x 2 + 2 x 2."""
    from gpuplan.estimate.frameworks import resolve_profile
    from gpuplan.estimate.traffic import optimizer_step_bytes_per_param
    from gpuplan.workload.job import TrainingJob

    model = load_model("llama-3.1-8b")

    def step_bytes(framework: str, precision: str = "bf16", optimizer: str = "adamw") -> float:
        job = TrainingJob(
            model, framework=framework, precision=precision, optimizer=optimizer, global_batch=8
        )
        return optimizer_step_bytes_per_param(job, resolve_profile(framework, job))

    assert step_bytes("megatron") == pytest.approx(34.0)
    assert step_bytes("hf", "bf16-pure") == pytest.approx(48.0)
    assert step_bytes("fsdp") == pytest.approx(96.0)
    assert step_bytes("hf", "bf16") > step_bytes("hf", "bf16-pure") > step_bytes("megatron")
    # bitsandbytes' 8-bit AdamW updates in one fused pass over 1-byte moments
    assert step_bytes("hf", "bf16-pure", "adamw-8bit") == pytest.approx(4 + 4 + 2 * 2, rel=0.01)


def test_the_optimizer_term_of_a_step_is_its_bytes_at_the_hbm_rate():
    """Over bf16 weights, gradients and moments a fused step moves 2 x 2 + 2 x 2 + 2 x 4 = 16
    bytes per parameter and the foreach step 48: three times as long."""
    from gpuplan.api import estimate
    from gpuplan.scenario import parse_scenario

    def optimizer_seconds(framework: str) -> float:
        scenario = parse_scenario(
            {
                "model": "llama-3.2-1b",
                "hardware": {"gpu": "h100-sxm-80gb", "count": 1},
                "precision": "bf16-pure",
                "framework": framework,
                "global_batch": 8,
                "micro_batch": 8,
                "seq_len": 2048,
            }
        )
        return float(estimate(scenario)["throughput"]["breakdown"]["optimizer"])

    assert optimizer_seconds("hf") == pytest.approx(optimizer_seconds("megatron") * 48 / 16)
