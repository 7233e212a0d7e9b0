"""The model flags of the Megatron-LM export: compared with Megatron-LM's own settings for the
same Hugging Face models, and per feature (router, sliding windows, vocabulary, RoPE)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from gpuplan.catalog import load_model
from gpuplan.export.megatron_model import model_arguments
from gpuplan.workload.families import family_named
from gpuplan.workload.model import ModelSpec

CONFS = Path(__file__).parent / "data" / "megatron_model_confs"
CONF_MODELS = {
    "Llama-3.1-8B-Instruct": "llama-3.1-8b",
    "Llama-3.2-1B-Instruct": "llama-3.2-1b",
    "Qwen2.5-0.5B-Instruct": "qwen2.5-0.5b",
    "Qwen2.5-7B-Instruct": "qwen2.5-7b",
    "Qwen3-0.6B": "qwen3-0.6b",
    "Qwen3-8B": "qwen3-8b",
    "Qwen3-30B-A3B": "qwen3-30b-a3b",
    "Qwen3-235B-A22B": "qwen3-235b-a22b",
    "DeepSeek-V2-Lite": "deepseek-v2-lite",
    "DeepSeek-R1": "deepseek-v3",
}
"""Each conf file and the catalog model of the same architecture (DeepSeek-R1 is DeepSeek-V3's
architecture)."""

ARCHITECTURE_FLAGS = (
    "--num-layers", "--hidden-size", "--ffn-hidden-size", "--num-attention-heads",
    "--kv-channels", "--num-query-groups", "--multi-latent-attention", "--kv-lora-rank",
    "--q-lora-rank", "--qk-head-dim", "--qk-pos-emb-head-dim", "--v-head-dim", "--qk-layernorm",
    "--normalization", "--norm-epsilon", "--swiglu", "--disable-bias-linear", "--add-qkv-bias",
    "--untie-embeddings-and-output-weights", "--rotary-base", "--use-rope-scaling",
    "--rope-scaling-factor", "--rotary-scaling-factor", "--mscale", "--mscale-all-dim",
    "--rotary-seq-len-interpolation-factor", "--num-experts", "--moe-ffn-hidden-size",
    "--moe-router-topk", "--moe-layer-freq", "--moe-shared-expert-intermediate-size",
    "--moe-router-score-function", "--moe-router-pre-softmax", "--moe-router-num-groups",
    "--moe-router-group-topk", "--moe-router-topk-scaling-factor",
    "--moe-router-enable-expert-bias", "--moe-router-load-balancing-type",
    "--moe-aux-loss-coeff",
)  # fmt: skip
"""The flags that decide the trained network and its routing; launch, fusion and parallel
flags are the plan's, not the model's."""

MEGATRON_DEFAULTS = {
    "--norm-epsilon": 1e-5, "--rotary-base": 10000.0, "--rope-scaling-factor": 8.0,
    "--rotary-seq-len-interpolation-factor": 1.0, "--mscale": 1.0, "--mscale-all-dim": 0.0,
    "--moe-router-score-function": "softmax", "--moe-router-topk-scaling-factor": 1.0,
    "--moe-router-load-balancing-type": "aux_loss", "--moe-aux-loss-coeff": 0.0,
}  # fmt: skip
"""What an absent flag means (core_v0.16.1 ``arguments.py``; ``--rotary-scaling-factor`` is 1
for standard attention and 40 for MLA, ``MLATransformerConfig``)."""

CONF_DIFFERENCES = {
    ("Llama-3.2-1B-Instruct", "--rope-scaling-factor"): (
        "the conf keeps Megatron's default 8; Llama 3.2's config.json says factor 32"
    ),
    **{
        (conf, "--norm-epsilon"): "the conf keeps Megatron's default 1e-5; config.json says 1e-6"
        for conf in (
            "Qwen2.5-0.5B-Instruct", "Qwen2.5-7B-Instruct", "Qwen3-0.6B", "Qwen3-8B",
            "Qwen3-30B-A3B", "Qwen3-235B-A22B", "DeepSeek-R1",
        )
    },
}  # fmt: skip
"""Where the export follows the Hugging Face config and the conf does not."""


def conf_flags(name: str) -> dict[str, str | None]:
    """The ``MODEL_ARGS`` of a conf file as ``{flag: value}`` (``None`` for a switch)."""
    text = (CONFS / f"{name}.sh").read_text(encoding="utf-8")
    match = re.search(r'MODEL_ARGS="(.*?)"', text, re.S)
    assert match, name
    return _flags(match.group(1).replace("\\\n", " ").split())


def _flags(words: list[str]) -> dict[str, str | None]:
    flags: dict[str, str | None] = {}
    current = ""
    for word in words:
        if word.startswith("--"):
            current = word
            flags[current] = None
        else:
            flags[current] = word if flags[current] is None else f"{flags[current]} {word}"
    return flags


def export_flags(model: ModelSpec, tp: int = 1) -> tuple[dict[str, str | None], list[str]]:
    arguments, notes = model_arguments(model, 4096, tp)
    return {flag: values[0] if values else None for flag, *values in arguments}, notes


def layer_list(expression: str, layers: int) -> list[int]:
    """A Megatron-LM per-layer flag (``--moe-layer-freq``, ``--window-attn-skip-freq``) as
    the list it evaluates to: a Python list expression of 0s and 1s, or an integer period."""
    if expression.isdigit():
        return [int(index % int(expression) == 0) for index in range(layers)]
    assert re.fullmatch(r"[\[\]\(\)\d\*\+, ]+", expression), expression
    evaluated = eval(expression, {"__builtins__": {}})  # the pattern admits only list arithmetic
    assert isinstance(evaluated, list) and len(evaluated) == layers
    return [int(value) for value in evaluated]


SWITCHES = {
    "--multi-latent-attention", "--qk-layernorm", "--swiglu", "--disable-bias-linear",
    "--add-qkv-bias", "--untie-embeddings-and-output-weights", "--use-rope-scaling",
    "--moe-router-pre-softmax", "--moe-router-enable-expert-bias",
}  # fmt: skip


def effective(flags: dict[str, str | None], mla: bool) -> dict[str, object]:
    """What Megatron-LM trains with: each architecture flag's value, or its default when
    absent; a switch is whether it is given. Flags that do nothing in context are dropped: a
    sigmoid router ignores ``--moe-router-pre-softmax`` (``topk_routing_with_score_function``)
    and MLA ignores ``--kv-channels``."""
    layers = int(flags["--num-layers"] or 0)
    heads = int(flags["--num-attention-heads"] or 0)
    defaults: dict[str, object] = {
        **MEGATRON_DEFAULTS,
        "--rotary-scaling-factor": 40.0 if mla else 1.0,
        "--kv-channels": int(flags["--hidden-size"] or 0) / heads,
        "--num-query-groups": float(heads),
        "--moe-layer-freq": "1",
    }
    values: dict[str, object] = {}
    for flag in ARCHITECTURE_FLAGS:
        value = flags.get(flag, defaults.get(flag))
        if flag in SWITCHES:
            values[flag] = flag in flags
        elif flag == "--moe-layer-freq":
            values[flag] = layer_list(str(value), layers)
        elif isinstance(value, str) and re.fullmatch(r"[-+.\deE]+", value):
            values[flag] = float(value)
        else:
            values[flag] = value
    if values["--moe-router-score-function"] == "sigmoid":
        values["--moe-router-pre-softmax"] = False
    if mla:
        values["--kv-channels"] = None
    return values


@pytest.mark.parametrize("conf", sorted(CONF_MODELS))
def test_the_model_flags_match_megatrons_own_settings_for_the_model(conf):
    model = load_model(CONF_MODELS[conf])
    ours, _ = export_flags(model)
    theirs = conf_flags(conf)
    mine, reference = effective(ours, model.uses_mla), effective(theirs, model.uses_mla)
    differences = {
        flag: (mine[flag], reference[flag])
        for flag in ARCHITECTURE_FLAGS
        if mine[flag] != reference[flag] and (conf, flag) not in CONF_DIFFERENCES
    }
    assert differences == {}
    for (name, flag), _reason in CONF_DIFFERENCES.items():
        if name == conf:
            assert mine[flag] != reference[flag], f"{conf} {flag}: no longer differs"


@pytest.mark.parametrize("conf", sorted(CONF_MODELS))
def test_the_vocabulary_is_the_configs_and_fits_the_confs_padding(conf):
    model = load_model(CONF_MODELS[conf])
    ours, notes = export_flags(model)
    theirs = conf_flags(conf)
    assert ours["--padded-vocab-size"] == str(model.vocab_size)
    assert not any("padded" in note for note in notes)
    if "--padded-vocab-size" in theirs:
        assert theirs["--padded-vocab-size"] == ours["--padded-vocab-size"]
    else:
        assert model.vocab_size % int(theirs["--make-vocab-size-divisible-by"] or 0) == 0


def test_a_vocabulary_that_tensor_parallelism_cannot_split_is_padded_with_a_note():
    gpt2 = load_model("gpt2")
    flags, notes = export_flags(gpt2, tp=2)
    assert flags["--padded-vocab-size"] == "50258"
    assert any("50257 padded to 50258" in note for note in notes)


def test_mixtral_routes_like_megatrons_default_with_its_balance_loss():
    flags, _ = export_flags(load_model("mixtral-8x7b"))
    assert "--moe-router-pre-softmax" not in flags
    assert "--moe-router-score-function" not in flags
    assert flags["--moe-router-load-balancing-type"] == "aux_loss"
    assert float(flags["--moe-aux-loss-coeff"] or 0) == 0.02


def _tiny(**keys) -> ModelSpec:
    config = {
        "model_type": "mistral", "num_hidden_layers": 6, "hidden_size": 256,
        "num_attention_heads": 4, "num_key_value_heads": 2, "intermediate_size": 512,
        "vocab_size": 1024,
    }  # fmt: skip
    return ModelSpec.from_hf_config({**config, **keys})


def megatron_windowed_layers(flags: dict[str, str | None], layers: int) -> list[bool]:
    """Megatron-LM's ``is_layer_window_attention`` (core_v0.16.1
    ``megatron/core/transformer/utils.py``) for 1-based layers under these flags."""
    if "--window-size" not in flags:
        return [False] * layers
    skip = flags.get("--window-attn-skip-freq")
    if skip is None:
        return [True] * layers
    if skip.isdigit():
        return [number % int(skip) != 0 for number in range(1, layers + 1)]
    return [bool(value) for value in layer_list(skip, layers)]


@pytest.mark.parametrize(
    "name", ["mistral-7b-v0.1", "gemma-2-9b", "gemma-3-1b", "gemma-3-27b", "phi-3-mini-4k",
             "qwen2.5-7b", "llama-3.1-8b"],
)  # fmt: skip
def test_megatron_windows_the_layers_the_model_windows(name):
    model = load_model(name)
    flags, _ = export_flags(model)
    expected = [model.is_windowed_layer(index) for index in range(model.num_layers)]
    assert megatron_windowed_layers(flags, model.num_layers) == expected
    if model.sliding_window:
        assert flags["--window-size"] == f"{model.sliding_window - 1},0"


def test_gemma_windows_alternate_from_the_first_layer_and_gemma_3_keeps_one_in_six():
    gemma2, gemma3 = load_model("gemma-2-2b"), load_model("gemma-3-1b")
    assert [gemma2.is_windowed_layer(index) for index in range(4)] == [True, False] * 2
    assert [gemma3.is_windowed_layer(index) for index in range(6)] == [True] * 5 + [False]
    assert export_flags(gemma2)[0]["--window-attn-skip-freq"] == "2"
    assert export_flags(gemma3)[0]["--window-attn-skip-freq"] == "6"


def test_an_irregular_layer_pattern_is_written_as_megatrons_list():
    kinds = ["sliding_attention", "full_attention", "full_attention"] + ["sliding_attention"] * 3
    model = _tiny(sliding_window=128, layer_types=kinds)
    flags, _ = export_flags(model)
    assert flags["--window-attn-skip-freq"] == "([1]*1+[0]*2+[1]*3)"
    assert megatron_windowed_layers(flags, 6) == [kind == "sliding_attention" for kind in kinds]


TINY_MLA = {
    "model_type": "deepseek_v2", "num_hidden_layers": 2, "hidden_size": 256,
    "num_attention_heads": 4, "intermediate_size": 512, "vocab_size": 1024,
    "n_routed_experts": 8, "num_experts_per_tok": 2, "moe_intermediate_size": 128,
    "kv_lora_rank": 32, "q_lora_rank": None, "qk_nope_head_dim": 32, "qk_rope_head_dim": 16,
    "v_head_dim": 32,
}  # fmt: skip
"""A small DeepSeek-V2 config: multi-head latent attention, eight experts, no RoPE scaling."""


def test_mla_without_rope_scaling_says_rope_and_linear_scaling_interpolates():
    flags, _ = export_flags(ModelSpec.from_hf_config(TINY_MLA))
    assert flags["--rope-type"] == "rope" and "--rotary-scaling-factor" not in flags
    gemma3, _ = export_flags(load_model("gemma-3-4b"))
    assert gemma3["--rotary-seq-len-interpolation-factor"] == "8"


def test_a_softmax_router_asking_for_expert_bias_gets_a_note_not_a_flag_megatron_refuses():
    config = {**TINY_MLA, "topk_method": "noaux_tc", "scoring_func": "softmax"}
    flags, notes = export_flags(ModelSpec.from_hf_config(config))
    assert "--moe-router-enable-expert-bias" not in flags
    assert any("expert-bias" in note for note in notes)


def _raw_config(name: str) -> dict[str, object]:
    """The catalog's config table for ``name`` as written in models.toml (a multimodal
    model's text settings are its ``text_config``)."""
    from gpuplan.catalog import read_catalog_toml

    config = dict(read_catalog_toml("models.toml")["models"][name]["config"])
    text = config.pop("text_config", None)
    return {**config, **text} if isinstance(text, dict) else config


def _catalog_names() -> list[str]:
    from gpuplan.catalog import read_catalog_toml

    return sorted(read_catalog_toml("models.toml")["models"])


@pytest.mark.parametrize("name", _catalog_names())
def test_each_catalog_models_vocabulary_heads_embeddings_router_and_windows_equal_its_config(
    name,
):
    """Against the config table as written in models.toml, not the parsed spec: the
    vocabulary, the query groups, tied embeddings, the router keys (a scoring function the
    config leaves out is the one its family's code fixes) and the sliding window."""
    config, model = _raw_config(name), load_model(name)
    flags, _ = export_flags(model)
    assert flags["--padded-vocab-size"] == str(config["vocab_size"])
    tied = config.get("tie_word_embeddings", model.tie_word_embeddings)
    assert ("--untie-embeddings-and-output-weights" in flags) == (not tied)
    heads = config.get("num_attention_heads")
    groups = config.get("num_key_value_heads", config.get("multi_query_group_num", heads))
    if not model.uses_mla and groups not in (None, heads):
        assert flags["--num-query-groups"] == str(groups)
    experts = config.get("num_experts", config.get("num_local_experts"))
    experts = config.get("n_routed_experts", experts)
    if experts:
        assert flags["--num-experts"] == str(experts)
        assert flags["--moe-router-topk"] == str(config["num_experts_per_tok"])
        fixed_score = family_named(model.family).router_score_function
        sigmoid = config.get("scoring_func", fixed_score) == "sigmoid"
        assert (flags.get("--moe-router-score-function") == "sigmoid") == sigmoid
        softmax_unnormalised = not sigmoid and config.get("norm_topk_prob") is False
        assert ("--moe-router-pre-softmax" in flags) == softmax_unnormalised
        if config.get("n_group", 1) != 1:
            assert flags["--moe-router-num-groups"] == str(config["n_group"])
            assert flags["--moe-router-group-topk"] == str(config["topk_group"])
        scale = config.get("routed_scaling_factor", 1.0)
        assert float(flags.get("--moe-router-topk-scaling-factor") or 1.0) == scale
        weight = config.get("router_aux_loss_coef", config.get("aux_loss_alpha"))
        if weight is not None:
            assert float(flags.get("--moe-aux-loss-coeff") or 0) == weight
    window = config.get("sliding_window") if config.get("use_sliding_window", True) else None
    if window:
        assert flags["--window-size"] == f"{window - 1},0"
    else:
        assert "--window-size" not in flags


@pytest.mark.parametrize("name", [name for name in _catalog_names() if load_model(name).is_moe])
def test_each_catalog_moe_models_routed_layers_are_the_ones_megatron_builds(name):
    """``--moe-layer-freq`` (absent: every layer routes) evaluates to the spec's routed layers:
    DeepSeek's dense prefix, Llama 4 Maverick's alternation."""
    model = load_model(name)
    flags, _ = export_flags(model)
    routed = [int(model.is_moe_layer(index)) for index in range(model.num_layers)]
    expression = flags.get("--moe-layer-freq")
    if expression is None:
        assert all(routed)
    else:
        assert layer_list(expression, model.num_layers) == routed
        assert not all(routed)


TINY_MOE_STEP = {
    "model_type": "qwen3_moe", "num_hidden_layers": 4, "hidden_size": 256,
    "num_attention_heads": 4, "num_key_value_heads": 2, "head_dim": 64,
    "intermediate_size": 512, "vocab_size": 1024, "num_experts": 8, "num_experts_per_tok": 2,
    "moe_intermediate_size": 128,
}  # fmt: skip


def test_a_model_routing_every_other_layer_gets_a_repeated_block():
    model = ModelSpec.from_hf_config({**TINY_MOE_STEP, "decoder_sparse_step": 2})
    flags, _ = export_flags(model)
    assert flags["--moe-layer-freq"] == "([0,1]*2)"
    assert layer_list("([0,1]*2)", 4) == [int(model.is_moe_layer(index)) for index in range(4)]


def test_chunked_attention_and_sinks_get_a_note_not_a_flag():
    _, scout_notes = export_flags(load_model("llama-4-scout"))
    assert any("attention_chunk_size 8192 on 36 of 48 layers" in note for note in scout_notes)
    _, oss_notes = export_flags(load_model("gpt-oss-20b"))
    assert any("sinks" in note for note in oss_notes)
