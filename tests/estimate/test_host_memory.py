"""Host memory for CPU offload: what each stack keeps on the host per node, pinned or not, and
whether the node's RAM (the offer's, or the scenario's) holds it."""

from __future__ import annotations

import pytest

from gpuplan.api import estimate, plan_search
from gpuplan.catalog import load_model
from gpuplan.errors import InputError
from gpuplan.estimate.memory import HOST_MEMORY_MARGIN

MODEL = load_model("llama-3.1-8b")
PARAMS = MODEL.total_params


def _host(framework: str, zero: int, offload: str, count: int = 8, **hardware):
    result = estimate(
        {
            "model": "llama-3.1-8b",
            "framework": framework,
            "global_batch": count,
            "hardware": {"gpu": "h100", "count": count, **hardware},
            "strategy": {"zero": zero, "offload": offload},
        }
    )
    return result["memory"]["host"], result


@pytest.mark.parametrize(
    ("framework", "zero", "offload", "host", "pinned"),
    [
        # stage_1_and_2.py: pinned fp32 partition 4 + its pinned fp32 grad 4 + pinned bf16
        # staging copy 2, CPU-Adam states 8 in ordinary memory
        ("deepspeed", 2, "optimizer", 18, 10),
        # ZeRO-Infinity offload_param adds the pinned bf16 parameter partition
        ("deepspeed", 3, "optimizer+params", 20, 12),
        # FSDP2 CPUOffloadPolicy(pin_memory=True): fp32 shards and their gradients pinned
        ("fsdp", 3, "optimizer+params", 16, 8),
        # Megatron-Core HybridDeviceOptimizer: pinned fp32 main params and grads, states on CPU
        ("megatron", 1, "optimizer", 16, 8),
    ],
)
def test_offload_keeps_each_stacks_states_on_the_host(framework, zero, offload, host, pinned):
    memory, _ = _host(framework, zero, offload)
    assert memory["bytes_per_node"] == pytest.approx(PARAMS * host)
    assert memory["pinned_bytes_per_node"] == pytest.approx(PARAMS * pinned)


def test_nothing_is_offloaded_without_offload():
    memory, result = _host("deepspeed", 2, "none")
    assert memory["bytes_per_node"] == 0 and memory["fits"] is None
    assert not any("host memory" in warning for warning in result["warnings"])


def test_a_node_holds_the_shards_of_its_own_ranks():
    one_node, _ = _host("deepspeed", 2, "optimizer", count=8)
    two_nodes, _ = _host("deepspeed", 2, "optimizer", count=16, gpus_per_node=8)
    assert two_nodes["bytes_per_node"] == pytest.approx(one_node["bytes_per_node"] / 2)


def test_the_nodes_ram_decides_whether_offload_fits():
    need = PARAMS * 18
    enough = need / (1 - HOST_MEMORY_MARGIN) * 1.01
    memory, result = _host("deepspeed", 2, "optimizer", host_memory=int(enough))
    assert memory["fits"] is True and memory["capacity_bytes_per_node"] == pytest.approx(
        enough, rel=1e-3
    )
    memory, result = _host("deepspeed", 2, "optimizer", host_memory="100GB")
    assert memory["fits"] is False
    assert any("more than 90% of its 100.0 GB RAM" in warning for warning in result["warnings"])
    _, unknown = _host("deepspeed", 2, "optimizer")
    assert any("RAM is unknown" in warning for warning in unknown["warnings"])


def test_an_offer_states_its_instances_ram():
    result = estimate(
        {
            "model": "llama-3.2-1b",
            "global_batch": 8,
            "hardware": {"offer": "aws-p5.4xlarge-us-east-1", "count": 1},
            "strategy": {"zero": 1, "offload": "optimizer", "dp": 1},
        }
    )
    assert result["hardware"]["host_memory_bytes_per_node"] == pytest.approx(274.9e9)
    assert result["memory"]["host"]["capacity_bytes_per_node"] == pytest.approx(274.9e9)


def test_a_bad_host_memory_names_the_key():
    with pytest.raises(InputError, match=r"^hardware\.host_memory: "):
        _host("deepspeed", 2, "optimizer", host_memory="lots")


OFFERS = """
provider = "Example Offload Cloud"
currency = "USD"
{offers}
"""
OFFER = """
[[offers]]
id = "{id}"
gpu = "h100-sxm-80gb"
gpus = 8
ram_gb = {ram}
topology = {{ intra_node = "nvlink4", p2p = true, network = "none", source = "test", observed = "2026-12-01" }}
plans = [ {{ mode = "hourly", price = {price}, per = "gpu", observed = "2026-12-01", source = "test" }} ]
"""
OFFLOAD_JOB = {
    "model": "llama-3.1-8b",
    "framework": "deepspeed",
    "seq_len": 2048,
    "global_batch": 16,
    "tokens": "10M",
    "strategy": {"zero": 3, "offload": "optimizer+params"},
}


def _offers(tmp_path, *offers):
    path = tmp_path / "offers.toml"
    path.write_text(OFFERS.format(offers="".join(OFFER.format(**o) for o in offers)), "utf-8")
    return str(path)


def test_the_search_rejects_an_offload_plan_the_instance_ram_cannot_hold(tmp_path):
    small = {"id": "small-ram", "ram": 100, "price": 1.0}
    large = {"id": "large-ram", "ram": 2000, "price": 2.0}
    options = {"providers": ("Example Offload Cloud",), "max_gpus": 8}
    both = plan_search(OFFLOAD_JOB, offers_file=_offers(tmp_path, small, large), **options)
    assert both["plans"]
    assert {plan["cost"]["offer"] for plan in both["plans"]} == {"large-ram"}
    for plan in both["plans"]:
        assert plan["memory"]["host_bytes_per_node"] <= 2000e9 * (1 - HOST_MEMORY_MARGIN)
    only_small = plan_search(OFFLOAD_JOB, offers_file=_offers(tmp_path, small), **options)
    assert not only_small["plans"]
    explanation = only_small["explanation"]
    assert "fits the GPUs only with CPU offload" in explanation
    assert "per node in host memory against 90.0 GB usable RAM" in explanation
    assert "an instance with more than" in explanation
