"""InternLM2: the Llama layout with a fused ``wqkv`` and one ``bias`` key for the attention's
projections, q, k, v and o together; the MLP has no bias (InternLM2 remote code
``modeling_internlm2.py``)."""

from __future__ import annotations

from gpuplan.workload.families.family import Family, Fields, Values
from gpuplan.workload.families.llama import LLAMA_DEFAULTS
from gpuplan.workload.hf_config import flag


def internlm2_biases(values: Values, fields: Fields) -> None:
    """``bias`` switches the biases of ``wqkv`` and ``wo``."""
    fields["qkv_bias"] = fields["output_bias"] = flag(values, "bias", False)


INTERNLM2 = Family(
    name="internlm2",
    defaults=LLAMA_DEFAULTS,
    reads_bias_keys=False,
    adjust=internlm2_biases,
)

FAMILIES = (INTERNLM2,)
