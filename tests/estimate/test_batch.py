"""The batch gpuplan chooses when the scenario gives none."""

from __future__ import annotations

import pytest

from gpuplan.catalog import load_model
from gpuplan.estimate.batch import (
    FINE_TUNE_BATCH_SEQUENCES,
    LARGEST_PUBLISHED_BATCH_TOKENS,
    compute_optimal_batch_tokens,
    default_global_batch,
)
from gpuplan.scenario import parse_scenario
from gpuplan.workload.job import TrainingJob


def test_deepseek_llm_7b_budget_gives_its_published_batch():
    """DeepSeek LLM 7B: 2T tokens, 4,096-token sequences, 2,304 sequences per step (Table 2,
    9.44M tokens); the law gives about 9.2M at that budget."""
    job = TrainingJob(load_model("llama-2-7b"), tokens=2 * 10**12, seq_len=4096)
    assert compute_optimal_batch_tokens(job) == pytest.approx(9.44e6, rel=0.25)


def test_the_batch_grows_with_compute_and_stops_at_the_largest_published():
    small = TrainingJob(load_model("llama-3.1-8b"), tokens=10**9, seq_len=4096)
    large = TrainingJob(load_model("llama-3.1-405b"), tokens=15 * 10**12, seq_len=4096)
    assert compute_optimal_batch_tokens(small) < compute_optimal_batch_tokens(large)
    sequences, rule = default_global_batch(large)
    assert rule == "compute-optimal"
    assert sequences * 4096 <= LARGEST_PUBLISHED_BATCH_TOKENS
    assert sequences & (sequences - 1) == 0


def test_adapters_use_the_fine_tuning_default():
    job = TrainingJob(load_model("llama-3.1-8b"), method="qlora", tokens=10**8)
    assert default_global_batch(job) == (FINE_TUNE_BATCH_SEQUENCES, "fine-tuning")


def test_a_scenario_without_a_batch_says_which_rule_chose_it():
    chosen = parse_scenario({"model": "llama-3.1-8b", "tokens": "1B"})
    assert chosen.batch_rule == "compute-optimal"
    given = parse_scenario({"model": "llama-3.1-8b", "tokens": "1B", "global_batch": 12})
    assert given.batch_rule == "scenario" and given.job.global_batch == 12


def test_an_estimate_rounds_a_chosen_batch_to_whole_micro_batches():
    import gpuplan

    result = gpuplan.estimate(
        {
            "model": "llama-3.2-1b",
            "method": "qlora",
            "tokens": "10M",
            "hardware": {"gpu": "h100-sxm-80gb", "count": 24},
            "strategy": {"zero": 1, "micro_batch": 2},
        }
    )
    assert result["job"]["global_batch"] % 48 == 0
    assert result["strategy"]["dp"] == 24
