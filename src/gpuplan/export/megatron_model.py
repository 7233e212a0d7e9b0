"""The model half of a Megatron-LM launch script: the architecture, the rotary embedding, the
vocabulary, a mixture-of-experts router and sliding-window attention, as ``pretrain_gpt.py``
arguments (Megatron-LM core_v0.16.1 ``megatron/training/arguments.py`` and the
``TransformerConfig`` fields they set).

Megatron-LM's own conversion settings for Hugging Face models
(``examples/post_training/modelopt/conf/<org>/<model>.sh``) write the same flags; the tests
compare the two (tests/export/data/megatron_model_confs/). What a flag cannot say goes into a
note rather than an approximation.
"""

from __future__ import annotations

import math
from collections.abc import Mapping

from gpuplan.workload.families import family_named
from gpuplan.workload.model import ModelSpec
from gpuplan.workload.model_settings import RouterSettings, ScalingValue

Arguments = list[tuple[str, ...]]

LLAMA3_SCALING = {"low_freq_factor": 1.0, "high_freq_factor": 4.0,
                  "original_max_position_embeddings": 8192}  # fmt: skip
"""What Megatron-LM's ``--use-rope-scaling`` fixes besides the factor (core_v0.16.1,
``megatron/core/models/common/embeddings/rope_utils.py``, ``apply_rope_scaling``)."""

MLA_YARN_FIXED = {"original_max_position_embeddings": 4096, "beta_fast": 32, "beta_slow": 1}
"""YaRN settings of ``MLATransformerConfig`` that have no command-line flag (core_v0.16.1,
``megatron/core/transformer/transformer_config.py``)."""

SEQUENCE_AUX_LOSS_FREE_COEFF = 1e-4
"""The sequence-wise balance loss weight that goes with auxiliary-loss-free balancing when the
config gives none: DeepSeek-V3's α = 0.0001 (arXiv:2412.19437, section 4.2; Megatron-LM's
``conf/deepseek-ai/DeepSeek-R1.sh`` writes the same)."""


def model_arguments(model: ModelSpec, seq_len: int, tp: int) -> tuple[Arguments, list[str]]:
    """Every model flag for ``model`` trained on ``seq_len`` tokens with ``tp``-way tensor
    parallelism, and the notes on what the flags leave out."""
    arguments, notes = _architecture_arguments(model, seq_len)
    parts = (
        vocabulary_arguments(model, tp),
        rope_arguments(model),
        window_arguments(model),
        router_arguments(model) if model.settings.router else ([], []),
    )
    for part_arguments, part_notes in parts:
        arguments += part_arguments
        notes += part_notes
    if not family_named(model.family).megatron_flags_complete:
        notes.append(
            f"family {model.family}: check norms, activations and biases against the HF config"
        )
    return arguments, notes


def _architecture_arguments(model: ModelSpec, seq_len: int) -> tuple[Arguments, list[str]]:
    """Sizes, attention, norms, MLP and biases, and the expert layout. Multi-head latent
    attention normalises its compressed query and key-value latents (DeepSeek-V2 eq. 9-10),
    which Megatron-LM switches on with ``--qk-layernorm``."""
    notes: list[str] = []
    arguments: Arguments = [
        ("--num-layers", str(model.num_layers)),
        ("--hidden-size", str(model.hidden_size)),
        ("--ffn-hidden-size", str(model.intermediate_size)),
        ("--num-attention-heads", str(model.num_attention_heads)),
    ]
    if model.head_dim * model.num_attention_heads != model.hidden_size:
        arguments.append(("--kv-channels", str(model.head_dim)))
    if model.num_kv_heads < model.num_attention_heads and not model.uses_mla:
        arguments += [("--group-query-attention",), ("--num-query-groups", str(model.num_kv_heads))]
    if model.uses_mla:
        arguments += [
            ("--multi-latent-attention",),
            ("--kv-lora-rank", str(model.kv_lora_rank)),
            ("--qk-head-dim", str(model.qk_nope_head_dim)),
            ("--qk-pos-emb-head-dim", str(model.qk_rope_head_dim)),
            ("--v-head-dim", str(model.v_head_dim)),
        ]
        if model.q_lora_rank:
            arguments.append(("--q-lora-rank", str(model.q_lora_rank)))
    arguments += [
        ("--seq-length", str(seq_len)),
        ("--max-position-embeddings", str(max(model.max_position_embeddings or 0, seq_len))),
        ("--normalization", "RMSNorm" if model.norm == "rmsnorm" else "LayerNorm"),
    ]
    if model.settings.norm_eps is not None:
        arguments.append(("--norm-epsilon", f"{model.settings.norm_eps:g}"))
    if model.gated_mlp and model.hidden_act == "silu":
        arguments.append(("--swiglu",))
    elif model.gated_mlp:
        notes.append(f"gated MLP with {model.hidden_act}: Megatron's --swiglu uses SiLU")
    if not (model.qkv_bias or model.output_bias or model.mlp_bias):
        arguments.append(("--disable-bias-linear",))
    elif model.qkv_bias and not (model.output_bias or model.mlp_bias):
        arguments += [("--disable-bias-linear",), ("--add-qkv-bias",)]
    if model.qk_norm != "none" or model.uses_mla:
        arguments.append(("--qk-layernorm",))
    if not model.tie_word_embeddings:
        arguments.append(("--untie-embeddings-and-output-weights",))
    if model.is_moe:
        arguments += [
            ("--num-experts", str(model.num_experts)),
            ("--moe-router-topk", str(model.num_experts_per_token)),
            ("--moe-ffn-hidden-size", str(model.moe_intermediate_size)),
            ("--moe-grouped-gemm",),
            ("--moe-token-dispatcher-type", "alltoall"),
        ]
        if model.shared_expert_intermediate_size:
            arguments.append(
                (
                    "--moe-shared-expert-intermediate-size",
                    str(model.shared_expert_intermediate_size),
                )
            )
        routed = tuple(model.is_moe_layer(index) for index in range(model.num_layers))
        if not all(routed):
            arguments.append(("--moe-layer-freq", _layer_list(routed)))
    return arguments, notes


def vocabulary_arguments(model: ModelSpec, tp: int) -> tuple[Arguments, list[str]]:
    """``--padded-vocab-size``: the config's vocabulary, so that the trained embedding and
    output layer have the shapes the plan priced and a Hugging Face checkpoint converts.
    Without it Megatron-LM pads the tokenizer's vocabulary to a multiple of ``128 * tp``
    (``_vocab_size_with_padding``); the vocabulary-parallel embedding needs a multiple of
    ``tp``, so a vocabulary that is not one is padded up to the next."""
    padded = math.ceil(model.vocab_size / tp) * tp
    notes = []
    if padded != model.vocab_size:
        notes.append(
            f"vocabulary {model.vocab_size} padded to {padded}, a multiple of tp={tp}, "
            "as tensor-parallel embeddings need"
        )
    return [("--padded-vocab-size", str(padded))], notes


def rope_arguments(model: ModelSpec) -> tuple[Arguments, list[str]]:
    """The position embedding and its settings.

    ``--rotary-base`` from the config's ``rope_theta`` (Megatron's default is 10000, Llama
    3's base is 500000). Llama 3 scaling is ``--use-rope-scaling --rope-scaling-factor``;
    linear scaling (Gemma 3) divides positions by the factor,
    ``--rotary-seq-len-interpolation-factor``; YaRN on multi-head latent attention (DeepSeek)
    is ``--rotary-scaling-factor --mscale --mscale-all-dim``, and an MLA model without it
    says ``--rope-type rope``, since Megatron-LM's MLA takes YaRN by default. Other scalings
    (YaRN on standard attention, dynamic, LongRoPE) are named in a note, not approximated.
    """
    if model.position_embedding != "rope":
        return [("--position-embedding-type", "learned_absolute")], []
    settings = model.settings
    arguments: Arguments = [("--position-embedding-type", "rope")]
    notes: list[str] = []
    if settings.rope_theta is not None:
        if float(settings.rope_theta).is_integer():
            arguments.append(("--rotary-base", str(int(settings.rope_theta))))
        else:
            notes.append(f"rope_theta {settings.rope_theta:g}: Megatron's --rotary-base is whole")
    scaling = settings.scaling()
    kind = scaling.get("rope_type", scaling.get("type"))
    given = scaling.get("factor")
    factor = (
        float(given) if isinstance(given, int | float) and not isinstance(given, bool) else None
    )
    if kind == "llama3" and factor is not None:
        arguments += [("--use-rope-scaling",), ("--rope-scaling-factor", f"{factor:g}")]
        notes += _fixed_value_notes(scaling, LLAMA3_SCALING)
    elif kind == "linear" and factor is not None and factor.is_integer():
        arguments.append(("--rotary-seq-len-interpolation-factor", str(int(factor))))
    elif kind == "yarn" and factor is not None and model.uses_mla:
        arguments += [("--rope-type", "yarn"), ("--rotary-scaling-factor", f"{factor:g}")]
        for key in ("mscale", "mscale_all_dim"):
            value = scaling.get(key)
            if isinstance(value, int | float):
                arguments.append((f"--{key.replace('_', '-')}", f"{value:g}"))
        notes += _fixed_value_notes(scaling, MLA_YARN_FIXED)
    elif kind is not None:
        notes.append(f"rope_scaling {kind}: not written; set Megatron's RoPE scaling by hand")
    elif model.uses_mla:
        arguments.append(("--rope-type", "rope"))
    return arguments, notes


def _fixed_value_notes(
    scaling: Mapping[str, ScalingValue], fixed: Mapping[str, float]
) -> list[str]:
    """A note naming the scaling keys whose config value differs from what Megatron-LM fixes."""
    differing = [key for key, value in fixed.items() if scaling.get(key, value) != value]
    if not differing:
        return []
    return [f"rope_scaling {', '.join(differing)} differ from Megatron's fixed values"]


def window_arguments(model: ModelSpec) -> tuple[Arguments, list[str]]:
    """Sliding-window attention: ``--window-size W-1,0`` for a Hugging Face window of ``W``
    keys, the query's own included (transformers ``masking_utils``: key ``k`` is seen from
    query ``q`` when ``q - W < k <= q``; Transformer Engine's ``window_size = (left, right)``
    sees ``[q - left, q + right]``). Which layers: ``--window-attn-skip-freq N`` when every
    ``N``-th layer (1-based) attends fully, Megatron-LM's ``is_layer_window_attention``;
    otherwise the per-layer list, 1 for a windowed layer."""
    notes = _unwritten_attention_notes(model)
    if model.sliding_window is None:
        return [], notes
    arguments: Arguments = [("--window-size", f"{model.sliding_window - 1},0")]
    pattern = model.sliding_window_layers
    if pattern:
        layers = len(pattern)
        period = next(
            (
                every
                for every in range(2, layers + 1)
                if all(
                    windowed == bool((index + 1) % every) for index, windowed in enumerate(pattern)
                )
            ),
            None,
        )
        if period is not None:
            arguments.append(("--window-attn-skip-freq", str(period)))
        else:
            arguments.append(("--window-attn-skip-freq", _run_lengths(pattern)))
    return arguments, notes


def _unwritten_attention_notes(model: ModelSpec) -> list[str]:
    """What no flag here writes: chunked attention (Llama 4) and attention sinks (gpt-oss)."""
    notes = []
    if model.attention_chunk_size is not None:
        layers = sum(model.is_chunked_layer(index) for index in range(model.num_layers))
        notes.append(
            f"attention_chunk_size {model.attention_chunk_size} on {layers} of "
            f"{model.num_layers} layers is not written: those layers attend fully here"
        )
    if model.attention_sinks:
        notes.append("attention sinks (one learned logit per head) are not written")
    return notes


def _layer_list(pattern: tuple[bool, ...]) -> str:
    """A per-layer 0/1 list as the Python expression Megatron-LM evaluates: a repeated block
    when the layers repeat one (``([0,1]*24)``, Llama 4 Maverick), else :func:`_run_lengths`
    (``([0]*3+[1]*58)``, DeepSeek-V3's dense prefix)."""
    layers = len(pattern)
    period = next(
        (
            size
            for size in range(2, layers // 2 + 1)
            if layers % size == 0 and pattern == pattern[:size] * (layers // size)
        ),
        None,
    )
    if period is None:
        return _run_lengths(pattern)
    block = ",".join(str(int(bit)) for bit in pattern[:period])
    return f"([{block}]*{layers // period})"


def _run_lengths(pattern: tuple[bool, ...]) -> str:
    """A per-layer 0/1 list as the Python expression Megatron-LM evaluates: ``([1]*3+[0]*1)``."""
    runs: list[tuple[int, int]] = []
    for windowed in pattern:
        value = int(windowed)
        if runs and runs[-1][0] == value:
            runs[-1] = (value, runs[-1][1] + 1)
        else:
            runs.append((value, 1))
    return "(" + "+".join(f"[{value}]*{count}" for value, count in runs) + ")"


def router_arguments(model: ModelSpec) -> tuple[Arguments, list[str]]:
    """The router flags of ``model.settings.router`` (core_v0.16.1
    ``moe_utils.topk_routing_with_score_function``).

    Megatron-LM's default is top-k on the logits, then a softmax over the ``k``: the
    renormalised weights of Mixtral and Qwen3-MoE. Weights that are not renormalised are the
    softmax over all experts, then top-k: ``--moe-router-pre-softmax`` (DeepSeek-V2). A
    sigmoid router is ``--moe-router-score-function sigmoid``, whose ``k > 1`` weights
    Megatron-LM always renormalises. Groups, the routed scaling factor and the expert bias
    have their own flags; the balance loss is ``--moe-router-load-balancing-type`` (Megatron's
    default ``aux_loss`` weighs it 0) with ``--moe-aux-loss-coeff``. The router runs in fp32,
    as Megatron-LM's own conversion settings do (``--moe-router-dtype fp32``).
    """
    router = model.settings.router
    assert router is not None
    top_k = model.num_experts_per_token
    arguments: Arguments = [("--moe-router-dtype", "fp32")]
    notes: list[str] = []
    if router.score_function == "sigmoid":
        arguments.append(("--moe-router-score-function", "sigmoid"))
        if not router.normalizes_top_k and top_k > 1:
            notes.append("sigmoid router without norm_topk_prob: Megatron renormalises top-k")
    elif not router.normalizes_top_k:
        arguments.append(("--moe-router-pre-softmax",))
    elif top_k == 1:
        notes.append("top-1 renormalised router: Megatron weighs the one expert by its softmax")
    if router.num_groups and router.group_top_k:
        arguments += [
            ("--moe-router-num-groups", str(router.num_groups)),
            ("--moe-router-group-topk", str(router.group_top_k)),
        ]
    if router.scaling_factor is not None and router.scaling_factor != 1.0:
        arguments.append(("--moe-router-topk-scaling-factor", f"{router.scaling_factor:g}"))
    balance, balance_notes = _balance_arguments(router)
    return arguments + balance, notes + balance_notes


def _balance_arguments(router: RouterSettings) -> tuple[Arguments, list[str]]:
    coefficient = router.aux_loss_coeff
    arguments: Arguments = []
    if router.expert_bias:
        if router.score_function != "sigmoid":
            return [], ["expert-bias balancing needs a sigmoid router in Megatron; not written"]
        arguments.append(("--moe-router-enable-expert-bias",))
        if coefficient is None:
            coefficient = SEQUENCE_AUX_LOSS_FREE_COEFF
        per_sequence = True
    else:
        per_sequence = router.aux_loss_per_sequence
    if not coefficient:
        return arguments, ["the config gives no balance-loss weight: Megatron trains without one"]
    kind = "seq_aux_loss" if per_sequence else "aux_loss"
    arguments += [
        ("--moe-router-load-balancing-type", kind),
        ("--moe-aux-loss-coeff", f"{coefficient:g}"),
    ]
    return arguments, []
