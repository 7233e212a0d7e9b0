"""The probe: the full-model scaling counts the embedding and head once, out-of-memory errors
halve the layers, and memory is measured above what earlier parts left allocated."""

from __future__ import annotations

import importlib
import sys
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest

torch = pytest.importorskip("torch")

from gpuplan.bench import probe  # noqa: E402
from gpuplan.bench.probe import (  # noqa: E402
    TINY_CPU_CONFIG,
    ProbeConfig,
    ProbeOutOfMemoryError,
    parameter_split,
    training_flops_split,
)

LLAMA_3_8B = ProbeConfig(
    hidden_size=4096,
    num_layers=32,
    num_attention_heads=32,
    num_kv_heads=8,
    head_dim=128,
    intermediate_size=14336,
    vocab_size=128256,
    seq_len=8192,
    micro_batch=1,
    precision="bf16",
)
"""meta-llama/Meta-Llama-3-8B config.json shapes."""

SCENARIO = {
    "model": "llama-3.1-8b",
    "precision": "bf16",
    "seq_len": 2048,
    "micro_batch": 1,
    "hardware": {"gpu": "h100-sxm-80gb", "count": 1},
}


@pytest.mark.parametrize("layers", [1, 2, 5])
def test_parameter_split_counts_what_build_decoder_builds(layers):
    config = replace(TINY_CPU_CONFIG, num_layers=layers)
    model = probe.build_decoder(torch, config)
    assert parameter_split(config).at(layers) == sum(p.numel() for p in model.parameters())


def test_llama_3_8b_has_8_03_billion_parameters_13_percent_fixed():
    """Hugging Face lists Meta-Llama-3-8B at 8.03B parameters (8,030,261,248 in its
    safetensors index: 16,060,522,496 bytes of bf16)."""
    split = parameter_split(LLAMA_3_8B)
    assert split.at(32) == 8_030_261_248
    assert split.fixed / split.at(32) == pytest.approx(0.131, abs=0.001)


@pytest.mark.parametrize("recompute", ["none", "selective", "full"])
def test_training_flops_split_agrees_with_gpuplans_flop_model(recompute):
    from gpuplan.estimate.flops import training_flops_per_token
    from gpuplan.scenario import parse_scenario
    from gpuplan.strategy import RECOMPUTE

    scenario = parse_scenario(SCENARIO)
    config = replace(probe.config_from_scenario(scenario), recompute=recompute)
    flops = training_flops_per_token(scenario.job, np.asarray(RECOMPUTE.index(recompute)))
    assert training_flops_split(config).at(config.num_layers) == pytest.approx(
        float(flops.hardware), rel=1e-9
    )


def test_scaling_counts_the_head_once_where_the_layer_fraction_undercounts():
    probed = replace(LLAMA_3_8B, num_layers=4)
    measured = {"seconds_per_step": 0.1}
    scaled = probe.full_model_extrapolation(measured, probed, full_layers=32)
    flops = training_flops_split(probed)
    expected_seconds = 0.1 * flops.at(32) / flops.at(4)
    assert scaled["scaled_seconds_per_step_full_model"] == pytest.approx(expected_seconds)
    tokens_per_second = 8192 / 0.1
    layer_fraction_estimate = tokens_per_second * 4 / 32
    assert scaled["scaled_tokens_per_second_full_model"] > 1.25 * layer_fraction_estimate
    assert scaled["full_model_parameters"] == 8_030_261_248
    assert scaled["full_model_state_bytes"] == 16 * 8_030_261_248


def test_scaling_a_probe_of_the_whole_model_changes_nothing():
    measured = {"seconds_per_step": 0.25}
    scaled = probe.full_model_extrapolation(measured, LLAMA_3_8B, full_layers=32)
    assert scaled["scaled_seconds_per_step_full_model"] == pytest.approx(0.25)


def _out_of_memory_above(monkeypatch, most_layers_that_fit: int) -> list[int]:
    tried: list[int] = []
    real = probe.train_steps

    def train_steps(torch_module, device, config, warmup_steps, steps):
        tried.append(config.num_layers)
        if config.num_layers > most_layers_that_fit:
            raise torch.OutOfMemoryError("CUDA out of memory. Tried to allocate 2.00 GiB")
        return real(torch_module, device, replace(config, num_layers=1), warmup_steps, steps)

    monkeypatch.setattr(probe, "train_steps", train_steps)
    return tried


def test_out_of_memory_halves_the_layers_until_it_fits(monkeypatch):
    tried = _out_of_memory_above(monkeypatch, 3)
    config = replace(TINY_CPU_CONFIG, num_layers=32)
    probed, measured, failures = probe.train_with_fewer_layers_on_oom(torch, "cpu", config, 0, 1)
    assert tried == [32, 16, 8, 4, 2]
    assert probed.num_layers == 2
    assert [failure["layers"] for failure in failures] == [32, 16, 8, 4]
    assert failures[0]["error"].startswith("OutOfMemoryError: CUDA out of memory")
    assert measured["loss_is_finite"]


def test_out_of_memory_with_one_layer_is_a_one_line_error(monkeypatch):
    _out_of_memory_above(monkeypatch, 0)
    config = replace(TINY_CPU_CONFIG, num_layers=6)
    with pytest.raises(ProbeOutOfMemoryError) as raised:
        probe.train_with_fewer_layers_on_oom(torch, "cpu", config, 0, 1)
    message = str(raised.value)
    assert "\n" not in message
    assert "(6, 3, 1)" in message and "CUDA out of memory" in message


def test_other_errors_are_not_retried(monkeypatch):
    calls = []

    def train_steps(*_args):
        calls.append(1)
        raise RuntimeError("CUDA error: an illegal memory access was encountered")

    monkeypatch.setattr(probe, "train_steps", train_steps)
    with pytest.raises(RuntimeError, match="illegal memory access"):
        probe.train_with_fewer_layers_on_oom(torch, "cpu", TINY_CPU_CONFIG, 0, 1)
    assert calls == [1]


def test_old_torch_out_of_memory_runtime_errors_are_recognised():
    assert probe.is_out_of_memory(torch, RuntimeError("CUDA out of memory. Tried to allocate"))
    assert not probe.is_out_of_memory(torch, RuntimeError("CUDA error: device-side assert"))


def test_cpu_probe_has_no_retries_and_no_full_model_scaling():
    result = probe.run_probe(torch, "cpu", SCENARIO, warmup_steps=0, steps=1)
    assert result["out_of_memory_retries"] == []
    assert "scaled_tokens_per_second_full_model" not in result["measured"]


def _fake_cuda():
    sys.path.insert(0, str(Path(__file__).parent))
    return importlib.import_module("fake_cuda")


FAKE_CONFIG = replace(TINY_CPU_CONFIG, precision="bf16")


def test_memory_left_by_earlier_parts_does_not_enter_the_probes_peak(monkeypatch):
    fake = _fake_cuda()
    node = fake.FakeNode([fake.h100_sxm()])
    with fake.fake_gpus(monkeypatch, node):
        clean = probe.train_steps(node.torch, "cuda", FAKE_CONFIG, 0, 1)
        leftover = node.torch.empty(2**28, dtype=node.torch.uint8, device="cuda:0")
        skewed = probe.train_steps(node.torch, "cuda", FAKE_CONFIG, 0, 1)
        del leftover
    assert skewed["baseline_allocated_bytes"] - clean["baseline_allocated_bytes"] == 2**28
    assert skewed["raw_max_memory_allocated_bytes"] > clean["raw_max_memory_allocated_bytes"]
    assert skewed["max_memory_allocated_bytes"] == clean["max_memory_allocated_bytes"]
    assert clean["max_memory_allocated_bytes"] > 0


def test_the_cache_is_emptied_and_the_peak_reset_before_the_model_is_built(monkeypatch):
    fake = _fake_cuda()
    node = fake.FakeNode([fake.h100_sxm()])
    events: list[str] = []
    cuda = node.torch.cuda
    for name in ("empty_cache", "reset_peak_memory_stats"):
        real = getattr(cuda, name)
        monkeypatch.setattr(
            cuda, name, lambda *a, _real=real, _name=name: events.append(_name) or _real(*a)
        )
    build = probe.build_decoder
    monkeypatch.setattr(
        probe, "build_decoder", lambda *a: events.append("build_decoder") or build(*a)
    )
    with fake.fake_gpus(monkeypatch, node):
        probe.train_steps(node.torch, "cuda", FAKE_CONFIG, 0, 1)
    assert events == ["empty_cache", "reset_peak_memory_stats", "build_decoder"]


def test_gpu_probe_out_of_memory_retries_and_scales_to_the_full_model(monkeypatch):
    fake = _fake_cuda()
    node = fake.FakeNode([fake.h100_sxm()])
    step_seconds = 0.5

    def train_steps(_torch, _device, config, _warmup_steps, _steps):
        if config.num_layers > 1:
            raise node.torch.cuda.OutOfMemoryError("CUDA out of memory. Tried to allocate 8 GiB")
        tokens = config.micro_batch * config.seq_len
        return {"seconds_per_step": step_seconds, "tokens_per_second": tokens / step_seconds}

    monkeypatch.setattr(probe, "train_steps", train_steps)
    monkeypatch.setattr(probe, "layers_that_fit", lambda *_: 4)
    with fake.fake_gpus(monkeypatch, node):
        result = probe.run_probe(node.torch, "cuda", SCENARIO, warmup_steps=0, steps=1)
    assert result["probed_config"]["num_layers"] == 1
    assert [retry["layers"] for retry in result["out_of_memory_retries"]] == [4, 2]
    assert "out of memory with 4 layers; trained 1" in result["notes"]
    full = probe.config_from_scenario(_parsed())
    flops = training_flops_split(full)
    measured = result["measured"]
    assert measured["scaled_seconds_per_step_full_model"] == pytest.approx(
        step_seconds * flops.at(full.num_layers) / flops.at(1)
    )
    assert measured["full_model_parameters"] == parameter_split(full).at(full.num_layers)


def _parsed():
    from gpuplan.scenario import parse_scenario

    return parse_scenario(SCENARIO)
