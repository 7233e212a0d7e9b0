"""Expert dispatch: deduplication per node, fp8 dispatch and load imbalance."""

from __future__ import annotations

import pytest

import gpuplan
from gpuplan.errors import InputError
from gpuplan.estimate.moe import network_share_after_deduplication


def test_deduplication_counts_distinct_remote_nodes():
    share = float(network_share_after_deduplication(8, 8))
    assert share == pytest.approx(7 * (1 - (7 / 8) ** 8) / 7)
    assert float(network_share_after_deduplication(8, 1)) == 1.0
    assert float(network_share_after_deduplication(1, 4)) == pytest.approx(1.0)


def _expert_seconds(**moe):
    result = gpuplan.estimate(
        {
            "model": "deepseek-v3",
            "seq_len": 4096,
            "global_batch": 512,
            "hardware": {"gpu": "h100-sxm-80gb", "count": 256},
            "strategy": {"pp": 4, "ep": 64, "zero": 3},
            "moe": moe,
        }
    )
    return result["throughput"]["breakdown"]["expert_parallel"]


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
