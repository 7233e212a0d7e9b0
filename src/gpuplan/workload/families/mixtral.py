"""Mixtral: the Mistral layout with every MLP replaced by ``num_local_experts`` SwiGLU
experts of ``intermediate_size`` behind a softmax router whose top-k weights are always
renormalised (transformers ``modeling_mixtral.py``, ``MixtralSparseMoeBlock``)."""

from __future__ import annotations

from gpuplan.workload.families.family import Family
from gpuplan.workload.families.llama import LLAMA_DEFAULTS

MIXTRAL = Family(
    name="mixtral",
    key_aliases={"num_experts": ("num_local_experts",)},
    router_always_normalizes=True,
    expert_width_from_intermediate=True,
    defaults={
        "router_aux_loss_coef": 0.001,
        **LLAMA_DEFAULTS,
        "intermediate_size": 14336,
        "num_key_value_heads": 8,
        "max_position_embeddings": 131072,
        "num_local_experts": 8,
        "num_experts_per_tok": 2,
    },
    hf_decoder_layer="MixtralDecoderLayer",
    megatron_flags_complete=True,
)
"""``MixtralConfig``'s defaults (Mixtral 8x7B; ``router_aux_loss_coef`` 0.001)."""

FAMILIES = (MIXTRAL,)
