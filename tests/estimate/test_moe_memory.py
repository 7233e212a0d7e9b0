"""MoE memory: experts split by ep * etp, their states sharded over the expert data-parallel
ranks, dropless routing's busiest rank, and the dispatch buffers."""

from __future__ import annotations

import pytest

from gpuplan.api import estimate
from gpuplan.catalog import load_model
from gpuplan.errors import InputError
from gpuplan.estimate.frameworks import resolve_framework_codes
from gpuplan.estimate.memory import (
    activation_bytes_per_token_per_layer,
    expert_data_parallel,
    framework_buffer_bytes,
    model_state_bytes,
    stage_parameters,
)
from gpuplan.scenario import parse_scenario
from gpuplan.search.request import PlanRequest
from gpuplan.strategy import Strategy
from gpuplan.workload.job import MoEOptions, TrainingJob

MODEL = load_model("qwen3-30b-a3b")
ROUTED = MODEL.num_moe_layers * MODEL.num_experts * MODEL.expert_params()


def _layout(job, **strategy):
    return Strategy(**strategy).layout(job)


def test_the_expert_data_parallel_group_is_megatrons():
    """``parallel_state.py``: ``expert_data_parallel_size = world // (etp * ep * pp)``."""
    job = TrainingJob(MODEL, global_batch=64)
    for dp, tp, ep, etp in ((16, 2, 8, 0), (16, 2, 8, 1), (8, 4, 4, 2)):
        layout = _layout(job, dp=dp, tp=tp, ep=ep, etp=etp)
        assert float(expert_data_parallel(layout)) == dp * tp / (ep * (etp or tp))


@pytest.mark.parametrize(("tp", "ep", "etp"), [(2, 8, 0), (2, 8, 1), (4, 4, 2)])
def test_routed_experts_split_by_ep_times_etp(tp, ep, etp):
    layout = _layout(TrainingJob(MODEL, global_batch=64), dp=16, tp=tp, ep=ep, etp=etp)
    stage = stage_parameters(MODEL, layout, last_stage=True)
    assert float(stage.experts) == pytest.approx(ROUTED / (ep * (etp or tp)))


def test_expert_optimizer_states_shard_over_the_expert_data_parallel_ranks():
    """Under the distributed optimizer every rank of a stage holds ``1 / (dp tp)`` of the routed
    experts' master and states, whatever ep and etp: each expert shard is replicated over
    ``dp tp / (ep etp)`` ranks, which split its states."""
    job = TrainingJob(MODEL, framework="megatron", global_batch=64)
    per_rank = []
    for ep, etp in ((1, 0), (8, 0), (8, 1)):
        layout = _layout(job, dp=16, tp=2, ep=ep, etp=etp, zero=1)
        codes = resolve_framework_codes(job.framework, layout.tp, layout.pp, layout.zero)
        dense = stage_parameters(MODEL, layout, True).dense
        states = model_state_bytes(job, layout, codes, last_stage=True)
        per_rank.append(float(states["optimizer"] - dense * 12.0 / 16))
    assert per_rank == pytest.approx([ROUTED * 12.0 / 32] * 3)


def test_dropless_headroom_scales_what_the_busiest_rank_receives():
    job = TrainingJob(MODEL, global_batch=64)
    layout = _layout(job, dp=8, ep=8)
    codes = resolve_framework_codes(job.framework, layout.tp, layout.pp, layout.zero)

    def kept(load: float) -> float:
        return float(
            activation_bytes_per_token_per_layer(MODEL, layout, codes, 4096, expert_load=load)
        )

    balanced, skewed = kept(1.0), kept(1.5)
    assert skewed > balanced
    assert kept(2.0) - balanced == pytest.approx(2 * (skewed - balanced))


def test_expert_tensor_parallel_gathers_the_dispatched_tokens():
    """``dispatch_postprocess`` all-gathers the received tokens over the expert TP group: with
    ``etp = tp`` each rank holds every token's expert input, with ``etp = 1`` its share."""
    job = TrainingJob(MODEL, global_batch=64)
    codes_of = lambda layout: resolve_framework_codes("auto", layout.tp, layout.pp, layout.zero)  # noqa: E731
    full = _layout(job, dp=16, tp=4, ep=4, etp=4)
    split = _layout(job, dp=16, tp=4, ep=4, etp=1)
    gathered = activation_bytes_per_token_per_layer(MODEL, full, codes_of(full), 4096)
    local = activation_bytes_per_token_per_layer(MODEL, split, codes_of(split), 4096)
    k, h = MODEL.num_experts_per_token, MODEL.hidden_size
    share = MODEL.num_moe_layers / MODEL.num_layers
    assert float(gathered - local) == pytest.approx(share * k * 3 * (h + 4) / 4 * 2)


def test_dispatch_buffers_hold_one_layers_send_and_receive():
    job = TrainingJob(MODEL, global_batch=64, seq_len=4096, moe=MoEOptions(load_imbalance=1.25))
    layout = _layout(job, dp=8, ep=8, zero=1)
    codes = resolve_framework_codes("megatron", layout.tp, layout.pp, layout.zero)
    dense_job = TrainingJob(load_model("llama-3.1-8b"), global_batch=64, seq_len=4096)
    dense_layout = _layout(dense_job, dp=8, zero=1)
    assert float(framework_buffer_bytes(dense_job, dense_layout, codes)) == 0
    tokens = 4096 * MODEL.num_experts_per_token
    expected = tokens * MODEL.hidden_size * 2 * (1 + 1.25)
    assert float(framework_buffer_bytes(job, layout, codes)) == pytest.approx(expected)


def _scenario(**strategy):
    return {
        "model": "qwen3-30b-a3b",
        "global_batch": 64,
        "hardware": {"gpu": "h100", "count": 32},
        "strategy": strategy,
    }


def test_etp_is_checked_where_the_layout_rules_live():
    with pytest.raises(InputError, match=r"^strategy\.ep: .*ep\*etp = 24 must divide"):
        estimate(_scenario(tp=2, ep=8, etp=3))
    with pytest.raises(InputError, match=r"^strategy\.etp: .*mixture-of-experts"):
        estimate({**_scenario(tp=2, etp=1), "model": "llama-3.1-8b"})


def test_etp_is_estimate_only():
    result = estimate(_scenario(tp=2, ep=8, etp=1))
    assert result["strategy"]["etp"] == 1
    assert any("etp=1 is estimate-only" in warning for warning in result["warnings"])
    same = estimate(_scenario(tp=2, ep=8))
    assert same["strategy"]["etp"] == 2
    assert not any("etp" in warning for warning in same["warnings"])
    with pytest.raises(InputError, match=r"^strategy\.etp: 1 is estimate-only"):
        PlanRequest(parse_scenario(_scenario(tp=2, ep=8, etp=1)))
    PlanRequest(parse_scenario(_scenario(tp=2, ep=8, etp=2)))
