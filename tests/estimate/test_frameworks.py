"""Framework profiles as parts: each preset's bytes per parameter against the allocations of the
code it cites, the scenario's overrides, and the one-line errors for bad parts."""

from __future__ import annotations

import numpy as np
import pytest

from gpuplan.api import estimate
from gpuplan.catalog import load_model
from gpuplan.errors import InputError
from gpuplan.estimate.frameworks import (
    FRAMEWORK_CODES,
    LOSS_BYTES_PER_LOGIT,
    PART_KEYS,
    TORCHTITAN_COMPILED_LOSS,
    TORCHTITAN_RELEASES,
    parse_framework,
    resolve_framework_codes,
    resolve_profile,
    torchtitan_date,
)
from gpuplan.estimate.memory import (
    BNB_BLOCK,
    framework_buffer_bytes,
    logits_bytes,
    model_state_bytes,
    optimizer_state_bytes_per_param,
    parameter_bytes,
)
from gpuplan.estimate.reliability import checkpoint_bytes_per_trained_param
from gpuplan.estimate.time import estimate_step_time
from gpuplan.scenario import parse_scenario
from gpuplan.strategy import Strategy
from gpuplan.workload.job import TrainingJob

MODEL = load_model("llama-3.1-8b")


def _job(framework: str = "auto", parts: tuple = (), **fields) -> TrainingJob:
    fields.setdefault("global_batch", 64)
    return TrainingJob(MODEL, framework=framework, framework_parts=parts, **fields)


def _states(job: TrainingJob, dp: int = 8, zero: int = 1, micro_batch: int = 1, **strategy):
    """Model-state bytes per parameter of the whole model on one rank (tp = pp = 1)."""
    layout = Strategy(dp=dp, zero=zero, micro_batch=micro_batch, **strategy).layout(job)
    codes = resolve_framework_codes(job.framework, layout.tp, layout.pp, layout.zero)
    states = model_state_bytes(job, layout, codes, last_stage=True)
    return {name: float(value) / MODEL.total_params for name, value in states.items()}


# --- presets against the allocations they cite ------------------------------------------------


def test_megatron_keeps_eighteen_bytes_or_six_plus_twelve_over_d():
    """Megatron-LM ``theoretical_memory_usage.py``: 18 bytes per parameter, or with the
    distributed optimizer 6 + 12/d: bf16 ``param_data`` 2, fp32 ``grad_data`` 4
    (``grad_reduce_in_fp32``), fp32 ``shard_main_param`` 4 and Adam's two fp32 moments 8."""
    job = _job("megatron")
    replicated = _states(job, zero=0)
    assert sum(replicated.values()) == pytest.approx(18.0)
    sharded = _states(job, dp=8, zero=1)
    assert sharded["weights"] == pytest.approx(2.0)
    assert sharded["gradients"] == pytest.approx(4.0)
    assert sharded["optimizer"] == pytest.approx(12.0 / 8)


@pytest.mark.parametrize(("zero", "expected"), [(1, 2 + 2 + 12 / 8), (2, 2 + 14 / 8), (3, 16 / 8)])
def test_deepspeed_zero_stages_shard_as_the_zero_paper_counts(zero, expected):
    """Rajbhandari et al. 2020, section 5: 2 + 2 + 12 bytes, the optimizer states sharded from
    stage 1, the bf16 gradients from stage 2 (``averaged_gradients``), the weights at 3."""
    assert sum(_states(_job("deepspeed"), zero=zero).values()) == pytest.approx(expected)


def test_fsdp_keeps_only_the_fp32_shard_and_its_states():
    """FSDP2 over fp32 parameters with ``param_dtype=bf16``: the sharded fp32 parameter is the
    master (4), its gradient is cast to it (4), Adam 8; all sharded over dp at ZeRO-3."""
    states = _states(_job("fsdp", global_batch=8), dp=8, zero=3)
    assert states["weights"] == 0
    assert states["gradients"] == pytest.approx(4.0 / 8)
    assert states["optimizer"] == pytest.approx(12.0 / 8)


def test_fsdp_with_bf16_master_weights_halves_the_shard_and_its_states():
    """A model cast to bf16 before ``fully_shard``: bf16 shards, gradients cast to them, and
    ``torch.optim.AdamW``'s ``zeros_like`` moments in bf16."""
    job = _job("fsdp", (("master_weights", "bf16"),), global_batch=8)
    states = _states(job, dp=8, zero=3)
    assert states["gradients"] == pytest.approx(2.0 / 8)
    assert states["optimizer"] == pytest.approx((2.0 + 4.0) / 8)
    assert optimizer_state_bytes_per_param(job, resolve_profile("fsdp", job)) == 4.0


def test_megatron_deepspeed_keeps_unsharded_fp32_and_bf16_gradients():
    """DeepSpeed ``BF16_Optimizer``: ``fp32_groups_gradients_flat`` is ``zeros_like`` the whole
    flat bf16 group (4, never sharded) beside the bf16 ``.grad`` (2); the fp32 master
    (``fp32_groups_flat_partition``) and Adam shard over dp."""
    states = _states(_job("megatron-deepspeed"), dp=8, zero=1)
    assert states["weights"] == pytest.approx(2.0)
    assert states["gradients"] == pytest.approx(4.0 + 2.0)
    assert states["optimizer"] == pytest.approx(12.0 / 8)


def test_megatron_deepspeed_runs_zero_zero_and_one_only():
    job = _job("megatron-deepspeed")
    cluster = parse_scenario({"model": "llama-3.1-8b", "hardware": {"gpu": "h100", "count": 8}})
    assert cluster.cluster is not None
    with pytest.raises(InputError, match=r"strategy\.zero: .*0, 1"):
        Strategy(zero=2).resolved(job, cluster.cluster)


def test_hugging_face_amp_trains_fp32_weights_without_a_master():
    assert sum(_states(_job("hf"), dp=1, zero=0).values()) == pytest.approx(4 + 4 + 8)


@pytest.mark.parametrize(
    ("precision", "expected"), [("bf16-pure", 2 + 2 + 4), ("fp32", 4 + 4 + 8), ("fp8", 18 + 1)]
)
def test_the_precision_sets_what_it_fixes(precision, expected):
    assert sum(_states(_job("megatron", precision=precision), zero=0).values()) == pytest.approx(
        expected
    )


def test_an_explicit_part_wins_over_the_precision():
    job = _job("megatron", (("master_weights", "fp32"),), precision="bf16-pure")
    assert _states(job, zero=0)["optimizer"] == pytest.approx(4.0 + 8.0)


def test_fsdp2_accumulates_unsharded_gradients_in_the_reduce_dtype_torchtitan_does_not():
    """``to_accumulated_grad_if_needed``: with gradient sync off, each unsharded gradient is
    upcast to ``reduce_dtype`` (fp32) and kept in place of the sharded one, which the last
    micro-batch's reduce-scatter makes as it frees the unsharded; torchtitan reduce-scatters
    every micro-batch."""
    accumulating = _job("fsdp", global_batch=32)
    one_step = _job("fsdp", global_batch=8)
    assert _states(accumulating, zero=3)["gradients"] == pytest.approx(4.0)
    assert _states(one_step, zero=3)["gradients"] == pytest.approx(4.0 / 8)
    titan = _job("torchtitan", global_batch=32)
    assert _states(titan, zero=3)["gradients"] == pytest.approx(4.0 / 8)


@pytest.mark.parametrize(
    ("optimizer", "precision", "expected"),
    [
        ("adamw", "bf16", 8.0),
        ("adamw", "bf16-pure", 4.0),
        ("sgd", "bf16", 4.0),
        ("sgd", "bf16-pure", 2.0),
        ("adamw-8bit", "bf16", 2.0 + 8.0 / BNB_BLOCK),
    ],
)
def test_optimizer_states_follow_the_chosen_optimizer(optimizer, precision, expected):
    job = _job("deepspeed", optimizer=optimizer, precision=precision)
    assert optimizer_state_bytes_per_param(job) == pytest.approx(expected)
    assert _states(job, dp=1, zero=0)["optimizer"] == pytest.approx(
        parameter_bytes(job, resolve_profile("deepspeed", job)).master + expected
    )


def test_adafactor_keeps_fp32_factored_states_whatever_the_precision():
    pure = _job(optimizer="adafactor", precision="bf16-pure")
    mixed = _job(optimizer="adafactor")
    assert optimizer_state_bytes_per_param(pure) == optimizer_state_bytes_per_param(mixed) < 0.1


def test_the_checkpoint_stores_what_the_rank_keeps():
    """Megatron and DeepSpeed store bf16 weights, the fp32 master and the states (14); FSDP
    only the fp32 shards and states (12); the fp8 copy is not stored."""
    assert checkpoint_bytes_per_trained_param(_job()) == 14.0
    assert checkpoint_bytes_per_trained_param(_job(precision="fp8")) == 14.0
    assert checkpoint_bytes_per_trained_param(_job("fsdp")) == 12.0
    assert checkpoint_bytes_per_trained_param(_job(precision="bf16-pure")) == 6.0


# --- buffers ----------------------------------------------------------------------------------


def _buffers(job: TrainingJob, dp: int = 8, zero: int = 1) -> float:
    layout = Strategy(dp=dp, zero=zero).layout(job)
    codes = resolve_framework_codes(job.framework, layout.tp, layout.pp, layout.zero)
    return float(framework_buffer_bytes(job, layout, codes))


def test_deepspeed_buckets_are_elements_times_the_gradient_dtype():
    """``stage_1_and_2.py``: ``torch.empty(reduce_bucket_size, dtype=self.dtype)``, a second
    with ``overlap_comm``: the Hugging Face ``auto`` size is hidden^2 elements."""
    h = MODEL.hidden_size
    assert _buffers(_job("deepspeed")) == 2 * h * h * 2
    sized = _job("deepspeed", (("bucket_elements", 5e8), ("bucket_count", 1)))
    assert _buffers(sized) == 5e8 * 2
    fp32 = _job("deepspeed", (("bucket_elements", 5e8), ("gradients", "fp32")))
    assert _buffers(fp32) == 2 * 5e8 * 4


def test_ddp_buckets_copy_every_gradient():
    """``reducer.cpp`` ``initialize_buckets`` allocates each bucket's flattened gradients; the
    buckets together hold the model's fp32 gradients (``gradient_as_bucket_view=False``)."""
    assert _buffers(_job("hf"), dp=4, zero=0) == pytest.approx(MODEL.total_params * 4.0)
    assert _buffers(_job("hf"), dp=1, zero=0) == 0


def test_fsdp_holds_the_root_two_layers_and_one_gradient_with_its_fp32_copy_in():
    """The root unit (embedding and head) stays gathered from its forward to the end of the
    backward (FSDP1 ``_post_forward_reshard``, FSDP2 ``_lazy_init``); the current and prefetched
    layers are gathered; FSDP2 ``foreach_reduce``: the largest unit's bf16 unsharded gradients
    live until the copy-in to the fp32 reduce-scatter input finishes."""
    head = MODEL.vocab_size * MODEL.hidden_size
    layer = MODEL.layer_params(0)
    gathered = (2 * head + 2 * layer) * 2
    assert _buffers(_job("fsdp"), zero=3) == pytest.approx(gathered + head * (2 + 4))
    bf16 = _buffers(_job("fsdp", precision="bf16-pure"), zero=3)
    assert bf16 == pytest.approx(gathered + head * (2 + 2))


# --- kernels and the loss ---------------------------------------------------------------------


def _logits(job: TrainingJob, tp: int = 1) -> float:
    layout = Strategy(dp=1, tp=tp, zero=0).layout(job)
    codes = resolve_framework_codes(job.framework, layout.tp, layout.pp, layout.zero)
    return float(logits_bytes(job, layout, codes))


HEAD_INPUT = 4096 * MODEL.hidden_size * 2


@pytest.mark.parametrize("loss", sorted(LOSS_BYTES_PER_LOGIT))
def test_each_loss_holds_its_bytes_per_logit_beside_the_heads_saved_input(loss):
    job = _job("fsdp", (("loss", loss),), seq_len=4096)
    assert _logits(job) == 4096 * MODEL.vocab_size * LOSS_BYTES_PER_LOGIT[loss] + HEAD_INPUT


def test_a_gathered_output_head_keeps_every_logit_on_every_rank():
    parallel = _logits(_job("megatron", seq_len=4096), tp=8)
    gathered = _logits(_job("megatron", (("loss_parallel", False),), seq_len=4096), tp=8)
    assert gathered - HEAD_INPUT / 8 == pytest.approx(8 * (parallel - HEAD_INPUT / 8))


def test_pytorch_loss_parallel_holds_four_fp32_logit_tensors_in_its_backward():
    """``_nll_loss_and_log_softmax_backward``: the saved log-softmax, ``zeros_like``, ``exp`` and
    their sum; DTensor's head keeps its gathered input on every rank, Megatron the shard."""
    local_logits = 4096 * MODEL.vocab_size / 8
    dtensor = _logits(_job("fsdp", seq_len=4096), tp=8)
    assert dtensor == pytest.approx(local_logits * 16 + HEAD_INPUT)
    megatron_style = _job("fsdp", (("tensor_parallel", "megatron"),), seq_len=4096)
    assert _logits(megatron_style, tp=8) == pytest.approx(local_logits * 12 + HEAD_INPUT / 8)


def test_torchtitan_compiles_the_loss_from_pr_1033_on():
    compiled = {
        version: resolve_profile(
            "torchtitan", _job("torchtitan", (("version", version),), compile=True)
        )
        for version in ("2025-03", "2025-04-02", "v0.1.0")
    }
    assert compiled["2025-03"].kernels.loss == "fp32"
    assert compiled["2025-04-02"].kernels.loss == "compiled"
    assert compiled["v0.1.0"].kernels.loss == "compiled"
    assert resolve_profile("torchtitan", _job("torchtitan")).kernels.loss == "fp32"
    assert torchtitan_date("v0.1.0") == TORCHTITAN_RELEASES["v0.1.0"] >= TORCHTITAN_COMPILED_LOSS


def test_the_scenario_loss_and_attention_keys_are_the_kernels_part():
    assert resolve_profile("fsdp", _job("fsdp", fused_loss=True)).kernels.loss == "chunked"
    job = _job("fsdp", (("attention", "cudnn"),))
    assert job.attention_kernel == "cudnn"
    assert _job("fsdp", (("loss", "fused"),)).fused_loss
    with pytest.raises(InputError, match=r"framework\.loss: compiled contradicts fused_loss"):
        _job("fsdp", (("loss", "compiled"),), fused_loss=True)
    with pytest.raises(InputError, match=r"framework\.attention: .*attention_kernel"):
        _job("fsdp", (("attention", "cudnn"),), attention_kernel="flash2")


def test_the_step_time_reads_the_overridden_parts():
    scenario = parse_scenario(
        {"model": "llama-3.1-8b", "hardware": {"gpu": "h100", "count": 8}, "framework": "fsdp"}
    )
    assert scenario.cluster is not None
    layout = Strategy(dp=8, zero=3).layout(scenario.job)
    plain = estimate_step_time(scenario.job, scenario.cluster, layout)
    override = _job("fsdp", (("attention", "cudnn"),), global_batch=scenario.job.global_batch)
    flag = _job("fsdp", attention_kernel="cudnn", global_batch=scenario.job.global_batch)
    overridden = estimate_step_time(override, scenario.cluster, layout)
    assert float(overridden.step_seconds) == float(
        estimate_step_time(flag, scenario.cluster, layout).step_seconds
    )
    assert float(overridden.breakdown["attention"]) != float(plain.breakdown["attention"])


# --- scenario parsing and errors --------------------------------------------------------------


def test_a_plain_name_and_a_bare_base_are_the_same_profile():
    assert parse_framework("fsdp") == parse_framework({"base": "fsdp"}) == ("fsdp", ())
    assert parse_framework({}) == ("auto", ())


@pytest.mark.parametrize(
    ("value", "message"),
    [
        ("fsdp2", r"^framework: 'fsdp2' is not one of auto, megatron, .*torchtitan, internevo$"),
        ({"base": "fsdp", "loss": "eager"}, r"^framework\.loss: 'eager' is not one of fp32, "),
        ({"base": "fsdp", "master": "bf16"}, r"^framework\.master: unknown key .*master_weights"),
        ({"base": "fsdp", "repeat_kv": "yes"}, r"^framework\.repeat_kv: expected true or false"),
        ({"base": "fsdp", "bucket_count": 0}, r"^framework\.bucket_count: expected a whole number"),
        ({"base": "fsdp", "version": "v0.1.0"}, r"^framework\.version: only the torchtitan"),
        ({"base": "torchtitan", "version": "april"}, r"^framework\.version: 'april' is not a "),
        (["fsdp"], r"^framework: expected a name .* or a mapping of base, version, "),
    ],
)
def test_bad_parts_are_one_line_errors_naming_the_key(value, message):
    with pytest.raises(InputError, match=message) as error:
        parse_framework(value)
    assert "\n" not in str(error.value)


def test_every_part_key_names_a_field_of_its_part():
    profile = resolve_profile("megatron")
    for key, (part, field, _) in PART_KEYS.items():
        assert hasattr(getattr(profile, part), field), key


def test_estimate_shows_the_profile_and_its_parts():
    result = estimate(
        {
            "model": "llama-3.1-8b",
            "framework": {"base": "fsdp", "master_weights": "bf16", "loss": "compiled"},
            "hardware": {"gpu": "h100", "count": 8},
            "strategy": {"zero": 3},
        }
    )
    framework = result["framework"]
    assert framework["name"] == result["strategy"]["framework"] == "fsdp"
    assert framework["overrides"] == {"master_weights": "bf16", "loss": "compiled"}
    assert framework["parts"]["weights"]["master_weights"] == "bf16"
    assert framework["parts"]["gradients"]["dtype"] == "bf16"
    assert framework["parts"]["kernels"]["loss"] == "compiled"
    assert set(framework["parts"]) == {
        "weights",
        "gradients",
        "optimizer",
        "kernels",
        "buffers",
        "offload",
    }


def test_auto_names_the_preset_it_picked():
    result = estimate(
        {"model": "llama-3.1-8b", "hardware": {"gpu": "h100", "count": 8}, "strategy": {"tp": 8}}
    )
    assert result["framework"]["name"] == "megatron" and result["framework"]["base"] == "auto"


def test_every_preset_is_a_known_framework_code():
    job = _job()
    for code, name in enumerate(FRAMEWORK_CODES):
        assert resolve_profile(name, job).name == name
        assert (
            int(resolve_framework_codes(name, np.asarray(1), np.asarray(1), np.asarray(1))) == code
        )


@pytest.mark.slow
def test_a_compiled_loss_saves_the_fp32_log_softmax_and_returns_a_bf16_gradient():
    """What AOTAutograd's min-cut partitioner (Inductor's) keeps for torchtitan's compiled
    ``cross_entropy(pred.float(), labels)``: the bytes per logit of the ``compiled`` loss are
    the saved tensors of the logits' shape plus the gradient it returns."""
    torch = pytest.importorskip("torch")
    compile_api = pytest.importorskip("functorch.compile")
    functional = torch.nn.functional
    vocab, tokens = 512, 64
    graphs: dict[str, object] = {}

    def keep(name):
        def compiler(graph, _inputs):
            graphs[name] = graph
            return compile_api.make_boxed_func(graph)

        return compiler

    def loss(pred, labels):
        return functional.cross_entropy(pred.flatten(0, 1).float(), labels.flatten(0, 1))

    compiled = compile_api.aot_function(
        loss,
        fw_compiler=keep("forward"),
        bw_compiler=keep("backward"),
        partition_fn=compile_api.min_cut_rematerialization_partition,
    )
    pred = torch.randn(1, tokens, vocab, dtype=torch.bfloat16, requires_grad=True)
    compiled(pred, torch.randint(0, vocab, (1, tokens))).backward()

    def outputs(name):
        node = next(n for n in graphs[name].graph.nodes if n.op == "output")
        return [value.meta["val"] for value in node.args[0] if hasattr(value, "meta")]

    saved = sum(
        value.element_size() for value in outputs("forward")[1:] if value.numel() == tokens * vocab
    )
    returned = sum(
        value.element_size() for value in outputs("backward") if value.numel() == tokens * vocab
    )
    assert saved + returned == LOSS_BYTES_PER_LOGIT["compiled"]
    assert pred.grad is not None and pred.grad.dtype == torch.bfloat16


# --- DTensor tensor parallelism and the optimizer step ----------------------------------------


def _layer_bytes(job: TrainingJob, tp: int = 8, recompute: str = "none") -> float:
    from gpuplan.estimate.frameworks import job_profiles
    from gpuplan.estimate.memory import activation_bytes_per_token_per_layer

    layout = Strategy(dp=1, tp=tp, zero=0, recompute=recompute).layout(job)
    codes = resolve_framework_codes(job.framework, layout.tp, layout.pp, layout.zero)
    profiles = job_profiles(job)
    return float(
        activation_bytes_per_token_per_layer(MODEL, layout, codes, 4096, profiles=profiles)
    )


def test_dtensor_tp_keeps_the_gathered_inputs_of_attention_and_mlp():
    """torchtitan's ``PrepareModuleInput(desired_input_layouts=Replicate())`` gathers the
    sequence shard before wq/wk/wv and w1/w3, which save the gathered copy: two full 2 h inputs
    per token instead of their eighth."""
    dtensor = _layer_bytes(_job("fsdp"))
    sharded = _layer_bytes(_job("fsdp", (("tensor_parallel", "megatron"),)))
    assert dtensor - sharded == pytest.approx(2 * 2 * MODEL.hidden_size * (1 - 1 / 8))
    assert _layer_bytes(_job("fsdp"), tp=1) == _layer_bytes(
        _job("fsdp", (("tensor_parallel", "megatron"),)), tp=1
    )


def _step_memory(framework: str, parts: tuple = ()) -> dict:
    scenario = parse_scenario(
        {
            "model": "llama-3.2-1b",
            "method": "full",
            "precision": "bf16-pure",
            "framework": {"base": framework, **dict(parts)},
            "seq_len": 128,
            "micro_batch": 1,
            "global_batch": 2,
            "hardware": {"gpu": "a10g-24gb", "count": 1},
            "strategy": {"zero": 0, "recompute": "full"},
        }
    )
    return estimate(scenario)["memory"]


def test_foreach_adamw_step_allocates_one_state_sized_temporary_and_can_be_the_peak():
    """``_multi_tensor_adamw``: ``torch._foreach_sqrt(device_exp_avg_sqs)`` over the whole shard;
    with short sequences and full recompute the step outgrows the backward's end."""
    foreach = _step_memory("hf")
    fused = _step_memory("hf", (("optimizer_step_temporaries", 0),))
    shard_bf16 = load_model("llama-3.2-1b").total_params * 2
    assert foreach["parts"]["activations"] == 0.0
    assert foreach["parts"]["optimizer"] == pytest.approx(3 * shard_bf16, rel=1e-6)
    assert foreach["allocated_bytes"] > fused["allocated_bytes"]
    assert foreach["allocated_bytes"] == pytest.approx(
        sum(foreach["parts"][name] for name in PART_KEYS_OF_ALLOCATED), rel=1e-9
    )


PART_KEYS_OF_ALLOCATED = ("weights", "gradients", "optimizer", "activations", "logits", "buffers")


def test_fused_stacks_allocate_no_step_temporaries():
    for name in ("megatron", "deepspeed", "megatron-deepspeed"):
        assert parameter_bytes(_job(name), resolve_profile(name, _job(name))).step_temporaries == 0
    assert (
        parameter_bytes(_job("fsdp"), resolve_profile("fsdp", _job("fsdp"))).step_temporaries == 4
    )
