"""Expert dispatch: deduplication per node and per rank, fp8 dispatch and load imbalance."""

from __future__ import annotations

import numpy as np
import pytest

import gpuplan
from gpuplan.catalog import load_model
from gpuplan.errors import InputError
from gpuplan.estimate.moe import deduplicated_share, destinations_per_token


def _model(name="qwen3-30b-a3b"):
    return load_model(name)


def test_deduplication_counts_distinct_destinations():
    """Top-8 of 128 distinct experts over 8 ranks of 16: a rank misses a token with probability
    C(112, 8) / C(128, 8)."""
    from math import comb

    model = _model()
    reached = 8 * (1 - comb(112, 8) / comb(128, 8))
    assert float(deduplicated_share(model, "learned", 8)) == pytest.approx(reached / 8)
    assert float(deduplicated_share(model, "learned", 1)) == 1.0


def test_deduplicated_share_matches_routing_drawn_at_random():
    """The distinct remote ranks a token reaches, counted over drawn routings, over the
    8 * 7 / 8 copies sent once per expert."""
    generator = np.random.default_rng(0)
    experts = np.argsort(generator.random((20000, 128)), axis=1)[:, :8]
    ranks = experts // 16
    remote = [len(set(row) - {0}) for row in ranks]
    assert float(deduplicated_share(_model(), "learned", 8)) == pytest.approx(
        np.mean(remote) / 7, rel=0.01
    )


def test_node_limited_routing_matches_routing_drawn_at_random():
    """DeepSeek-V3 over 8 nodes: 8 groups of 32 experts, one group per node; a token keeps 4
    groups and takes its 8 experts among their 128."""
    model = _model("deepseek-v3")
    generator = np.random.default_rng(1)
    groups = np.argsort(generator.random((20000, 8)), axis=1)[:, :4]
    picks = np.argsort(generator.random((20000, 128)), axis=1)[:, :8]
    experts = groups[np.arange(20000)[:, None], picks // 32] * 32 + picks % 32
    nodes = [len(set(row // 32)) for row in experts]
    limited = float(destinations_per_token(model, "learned", 8))
    assert limited == pytest.approx(np.mean(nodes), rel=0.01)
    assert limited <= 4
    unlimited = 8 * (1 - (224 / 256) ** 8)
    assert limited < 0.8 * unlimited


def test_round_robin_gate_sends_a_token_to_consecutive_experts():
    """AutoModel's FakeBalancedGate: token t takes experts 8t ... 8t + 7. With 16 experts a rank
    they sit on one rank; with 4 a rank (DeepSeek-V3 on EP64) on two ranks of one node."""
    assert float(destinations_per_token(_model(), "round_robin", 8)) == 1.0
    deepseek = _model("deepseek-v3")
    assert float(destinations_per_token(deepseek, "round_robin", 64)) == 2.0
    assert float(destinations_per_token(deepseek, "round_robin", 8)) == 1.0
    assert float(destinations_per_token(_model("mixtral-8x7b"), "round_robin", 8)) == 2.0


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
    share = float(deduplicated_share(_model(), "learned", 8))
    assert deduplicated == pytest.approx(plain * share, rel=0.15)
    round_robin = _expert_seconds(QWEN3_MOE_ON_8, dispatch="deepep", routing="round_robin")
    assert plain / 8 <= round_robin < 0.5 * deduplicated


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
    with pytest.raises(InputError, match=r"moe\.routing: 'random' is not one of learned"):
        _expert_seconds(routing="random")
    with pytest.raises(InputError, match=r"moe\.load_imbalance"):
        _expert_seconds(load_imbalance=0.9)


def test_overlapped_dispatch_hides_behind_compute_but_slows_it():
    """Under another micro-batch's compute ``c`` the all-to-alls ``d`` cost only what sticks
    out, plus the SMs they hold: ``max(d, c + s min(d, c)) - c``."""
    from gpuplan.estimate.moe import COMMUNICATION_SM_SHARE, overlapped_dispatch_seconds

    short, long = np.array(1.0), np.array(3.0)
    assert float(overlapped_dispatch_seconds(short, long)) == pytest.approx(
        COMMUNICATION_SM_SHARE * 1.0
    )
    assert float(overlapped_dispatch_seconds(long, short)) == pytest.approx(2.0)
    assert float(overlapped_dispatch_seconds(np.array(0.0), long)) == 0.0


def test_a2a_overlap_shrinks_the_exposed_dispatch():
    exposed = _expert_seconds(dispatch="deepep")
    overlapped = _expert_seconds(dispatch="deepep", a2a_overlap=True)
    assert 0.0 < overlapped < 0.5 * exposed
    with pytest.raises(InputError, match=r"moe\.a2a_overlap: expected true or false"):
        _expert_seconds(a2a_overlap="yes")
