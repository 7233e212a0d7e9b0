"""Baichuan 2: the Llama layout with a fused ``W_pack`` q/k/v projection (same weights) and a
125,696-token vocabulary (Baichuan 2 remote code ``modeling_baichuan.py``)."""

from __future__ import annotations

from gpuplan.workload.families.family import Family
from gpuplan.workload.families.llama import LLAMA_DEFAULTS

BAICHUAN = Family(
    name="baichuan",
    aliases=("baichuan2",),
    defaults={**LLAMA_DEFAULTS, "vocab_size": 125696},
)

FAMILIES = (BAICHUAN,)
