"""The global batch when the scenario gives none: a decision taken from published practice.

- **Full training** (pre-training, continued pre-training, full fine-tuning with a token budget):
  the compute-optimal batch of DeepSeek LLM (DeepSeek-AI 2024, arXiv 2401.02954, section 3.1,
  eq. 1): ``B_opt = 0.2920 * C^0.3271`` tokens for a compute budget ``C = M * D`` FLOPs, where
  ``M`` is the non-embedding training FLOPs per token (``72 n_layer d^2 + 6 n_layer d l_seq``
  for their models, three forward passes of the layers) and ``D`` the training tokens. ``B`` is
  in tokens: at the 7B run's budget it gives 9.2M, the paper's 2,304 sequences of 4,096 (Table
  2). The law was fitted on budgets from 1e17 to 2e19 FLOPs and checked at 1e20; it is held at
  the largest published batch, :data:`LARGEST_PUBLISHED_BATCH_TOKENS`.
- **Adapters (LoRA, QLoRA) and runs without a token budget**:
  :data:`FINE_TUNE_BATCH_SEQUENCES` sequences.

The result is a power of two in sequences (so that data-parallel sizes divide it) and at least
one sequence.
"""

from __future__ import annotations

import math

from gpuplan.workload.job import TrainingJob

DEEPSEEK_BATCH_COEFFICIENT = 0.2920
DEEPSEEK_BATCH_EXPONENT = 0.3271
LARGEST_PUBLISHED_BATCH_TOKENS = 15_360 * 4096
"""DeepSeek-V3's batch after its ramp from 3,072: 15,360 sequences of 4,096 tokens, about 62.9M
tokens (arXiv 2412.19437, section 4.2)."""

FINE_TUNE_BATCH_SEQUENCES = 32
"""Sequences per step for adapter fine-tuning: published recipes use 8 (litgpt's Llama 3.1 8B
LoRA config), 16 (QLoRA, Dettmers et al. 2023, Table 9, 7B-65B; torchtune's Llama 3.1 8B LoRA
recipe, 2 x 8 accumulation) and 128 (Alpaca; LoRA, Hu et al. 2021, Table 12); 32 is their
geometric mean."""


def compute_optimal_batch_tokens(job: TrainingJob) -> float:
    """DeepSeek LLM's ``B_opt = 0.2920 C^0.3271`` tokens with ``C = M D`` (module docstring),
    clipped to :data:`LARGEST_PUBLISHED_BATCH_TOKENS`."""
    batch = DEEPSEEK_BATCH_COEFFICIENT * training_compute_budget(job) ** DEEPSEEK_BATCH_EXPONENT
    return float(min(batch, LARGEST_PUBLISHED_BATCH_TOKENS))


def training_compute_budget(job: TrainingJob) -> float:
    """DeepSeek LLM's ``C = M * D``: the non-embedding training FLOPs per token (three forward
    passes of the layers) times the training tokens, the ``C`` of its batch and learning-rate
    laws."""
    from gpuplan.estimate.flops import forward_flops_per_token

    forward = forward_flops_per_token(job.model, job.seq_len, include_head=False)
    return 3.0 * float(forward.layers) * max(job.tokens, 1)


def default_global_batch(job: TrainingJob) -> tuple[int, str]:
    """Sequences per step for a job without a stated batch, and the rule that chose them
    (``compute-optimal`` or ``fine-tuning``)."""
    if job.is_adapter or not job.tokens:
        sequences, rule = float(FINE_TUNE_BATCH_SEQUENCES), "fine-tuning"
    else:
        sequences, rule = compute_optimal_batch_tokens(job) / job.seq_len, "compute-optimal"
    chosen = 2 ** round(math.log2(max(sequences, 1.0)))
    while chosen > 1 and chosen * job.seq_len > LARGEST_PUBLISHED_BATCH_TOKENS:
        chosen //= 2
    return max(1, chosen), rule
