"""Expert dispatch: deduplication per node and per rank, fp8 dispatch and load imbalance."""

from __future__ import annotations

import pytest

import gpuplan
from gpuplan.errors import InputError
from gpuplan.estimate.moe import deduplicated_share


def test_deduplication_counts_distinct_remote_destinations():
    share = float(deduplicated_share(8, 8))
    assert share == pytest.approx(7 * (1 - (7 / 8) ** 8) / 7)
    assert float(deduplicated_share(8, 1)) == 1.0
    assert float(deduplicated_share(1, 4)) == pytest.approx(1.0)


def test_deduplicated_share_matches_routing_drawn_at_random():
    """Top-8 of 128 experts spread over 8 ranks: the distinct remote ranks a token reaches,
    counted over drawn routings, over the 8 * 7 / 8 copies sent once per expert."""
    import numpy as np

    generator = np.random.default_rng(0)
    experts = np.argsort(generator.random((20000, 128)), axis=1)[:, :8]
    ranks = experts // 16
    remote = [len(set(row) - {0}) for row in ranks]
    assert float(deduplicated_share(8, 8)) == pytest.approx(np.mean(remote) / 7, rel=0.03)


DEEPSEEK_ON_256 = {
    "model": "deepseek-v3", "global_batch": 512, "hardware": {"gpu": "h100-sxm-80gb", "count": 256},
    "strategy": {"pp": 4, "ep": 64, "zero": 3},
}  # fmt: skip
QWEN3_MOE_ON_8 = {
    "model": "qwen3-30b-a3b", "global_batch": 64, "hardware": {"gpu": "h100-sxm-80gb", "count": 8},
    "strategy": {"ep": 8, "zero": 3},
}  # fmt: skip


def _expert_seconds(job=DEEPSEEK_ON_256, **moe):
    result = gpuplan.estimate({**job, "seq_len": 4096, "moe": moe})
    return result["throughput"]["breakdown"]["expert_parallel"]


def test_deepep_inside_one_node_sends_each_token_once_per_rank():
    plain, deduplicated = (
        _expert_seconds(QWEN3_MOE_ON_8),
        _expert_seconds(QWEN3_MOE_ON_8, dispatch="deepep"),
    )
    assert deduplicated == pytest.approx(plain * float(deduplicated_share(8, 8)), rel=0.15)


def test_deepep_and_fp8_dispatch_send_less_than_plain_all_to_all():
    plain = _expert_seconds()
    deduplicated = _expert_seconds(dispatch="deepep")
    fp8 = _expert_seconds(dispatch="deepep", dispatch_dtype="fp8")
    assert deduplicated < 0.8 * plain
    assert fp8 < deduplicated
    assert _expert_seconds(load_imbalance=1.3) > plain


def test_bad_moe_options_name_the_field():
    with pytest.raises(InputError, match=r"moe\.dispatch"):
        _expert_seconds(dispatch="ring")
    with pytest.raises(InputError, match=r"moe\.load_imbalance"):
        _expert_seconds(load_imbalance=0.9)
