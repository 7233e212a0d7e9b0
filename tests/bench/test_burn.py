"""The burn: warm-up discarded, a fluctuation that does not grow with the sample count, one
failing or hung GPU isolated, telemetry through the torch-to-NVML index map."""

from __future__ import annotations

import contextlib
import importlib
import random
import sys
import threading
import time
import types
from dataclasses import replace
from pathlib import Path

import pytest

from gpuplan.bench import burn, environment
from gpuplan.bench.report import DEFAULT_THRESHOLDS, FAIL, PASS, WARN, Figure, judge
from gpuplan.bench.timing import percentile_spread, relative_spread

H200_BF16 = 7.5e14
"""Any steady rate will do: the verdicts are on ratios."""


def _verdict(fluctuation: float) -> str:
    figure = Figure("burn.fluctuation.cuda:0", "f", "fluctuation", "ratio", fluctuation)
    return judge(figure, DEFAULT_THRESHOLDS["fluctuation"]).status


def _series(seconds: float, interval: float, rate, noise: float = 0.002, seed: int = 0):
    """Interval FLOP/s ``rate(t) x (1 + gaussian noise)`` and the end time of each interval."""
    generator = random.Random(seed)
    ends = [interval * (step + 1) for step in range(int(seconds / interval))]
    samples = [rate(end) * (1 + generator.gauss(0, noise)) for end in ends]
    return samples, ends


def thermal_settle(end: float) -> float:
    """3 % above the steady rate at the start, settled within the first 30 s."""
    return H200_BF16 * (1 + 0.03 * max(0.0, 1 - end / 30))


def test_warmup_length_follows_the_run_length():
    assert burn.warmup_seconds(60) == pytest.approx(12)
    assert burn.warmup_seconds(300) == pytest.approx(60)
    assert burn.warmup_seconds(20) == pytest.approx(5)
    assert burn.warmup_seconds(1) == pytest.approx(0.5)


def test_percentile_spread_settles_where_max_minus_min_grows():
    generator = random.Random(1)
    few = [1 + generator.gauss(0, 0.004) for _ in range(30)]
    many = [1 + generator.gauss(0, 0.004) for _ in range(3000)]
    assert relative_spread(many) > 1.4 * relative_spread(few)
    assert percentile_spread(many) == pytest.approx(percentile_spread(few), rel=0.35)
    assert percentile_spread(many) == pytest.approx(2 * 1.645 * 0.004, rel=0.1)


def test_percentile_spread_of_one_sample_is_zero():
    assert percentile_spread([5.0]) == 0.0


def test_thermal_settle_in_the_warmup_passes():
    samples, ends = _series(300, 2, thermal_settle)
    old_statistic = relative_spread(samples[1:])
    assert _verdict(old_statistic) == WARN
    analysis = burn.analyse_device(samples, ends, burn.warmup_seconds(300))
    assert analysis["warmup_intervals"] == 30
    assert _verdict(analysis["fluctuation"]) == PASS
    assert abs(analysis["drift"]) < 0.01


def test_long_run_of_healthy_noise_passes_where_the_old_statistic_warned():
    samples, ends = _series(3600, 1, lambda _: H200_BF16, noise=0.004)
    assert _verdict(relative_spread(samples[1:])) != PASS
    analysis = burn.analyse_device(samples, ends, burn.warmup_seconds(3600))
    assert _verdict(analysis["fluctuation"]) == PASS


@pytest.mark.parametrize("drop_at", [100.0, 200.0, 250.0])
def test_sustained_ten_percent_throttle_fails(drop_at):
    samples, ends = _series(300, 2, lambda end: H200_BF16 * (0.9 if end > drop_at else 1.0))
    analysis = burn.analyse_device(samples, ends, burn.warmup_seconds(300))
    assert _verdict(analysis["fluctuation"]) == FAIL
    assert analysis["drift"] == pytest.approx(-0.10, abs=0.01)


def test_a_run_shorter_than_its_warmup_keeps_its_last_interval():
    analysis = burn.analyse_device([3.0, 2.0], [0.1, 0.2], warmup=5.0)
    assert analysis["steady_intervals"] == 1
    assert analysis["median_flops_per_second"] == 2.0


class _WallClockEvent:
    """``torch.cuda.Event`` read from the host clock."""

    def __init__(self, enable_timing: bool = False) -> None:
        self.stamp = 0.0

    def record(self) -> None:
        self.stamp = time.perf_counter()

    def elapsed_time(self, end: _WallClockEvent) -> float:
        return (end.stamp - self.stamp) * 1000


class _FlakyTorch(types.ModuleType):
    """CPU torch seen as ``count`` CUDA devices; ``fail`` maps a device to the number of calls
    after which it raises a CUDA error (0: at once); ``hang`` blocks a device's synchronize
    until its event is set. Each burn thread names its device in ``Generator(device=...)``."""

    def __init__(self, count: int, fail=None, hang=None):
        super().__init__("torch")
        import torch

        self._torch = torch
        self._fail = fail or {}
        self._hang = hang or {}
        self._calls: dict[str, int] = {}
        self._lock = threading.Lock()
        self._current = threading.local()
        self.bfloat16 = torch.float32
        self.cuda = types.SimpleNamespace(
            device_count=lambda: count,
            synchronize=self._synchronize,
            device=lambda _device: contextlib.nullcontext(),
            Event=_WallClockEvent,
        )

    def _synchronize(self, device: str) -> None:
        if device in self._hang:
            self._hang[device].wait()

    def _count_call(self) -> None:
        device = self._current.device
        with self._lock:
            self._calls[device] = self._calls.get(device, 0) + 1
            calls = self._calls[device]
        if device in self._fail and calls > self._fail[device]:
            raise RuntimeError("CUDA error: an illegal memory access was encountered")

    def Generator(self, device: str):
        self._current.device = device
        self._count_call()
        return self._torch.Generator()

    def randn(self, *shape, device: str, dtype, generator):
        return self._torch.randn(*shape, dtype=dtype, generator=generator)

    def mm(self, a, b, out=None):
        self._count_call()
        return self._torch.mm(a, b, out=out)

    def __getattr__(self, name: str):
        return getattr(self._torch, name)


def test_a_cuda_error_on_one_gpu_keeps_the_others():
    torch = _FlakyTorch(4, fail={"cuda:3": 0})
    result = burn.run_burn(torch, "cuda", seconds=0.3, interval_seconds=0.05, matrix_size=16)
    entries = {entry["device"]: entry for entry in result["devices"]}
    assert set(entries) == {"cuda:0", "cuda:1", "cuda:2", "cuda:3"}
    assert "illegal memory access" in entries["cuda:3"]["error"]
    assert entries["cuda:3"]["fluctuation"] is None
    assert list(result["failed_devices"]) == ["cuda:3"]
    for name in ("cuda:0", "cuda:1", "cuda:2"):
        assert "error" not in entries[name]
        assert entries[name]["median_flops_per_second"] > 0
        assert entries[name]["fluctuation"] is not None
    assert 0 <= result["gpu_spread"] < 1


def test_a_cuda_error_in_the_middle_of_the_burn_is_recorded():
    torch = _FlakyTorch(2, fail={"cuda:1": 50})
    result = burn.run_burn(torch, "cuda", seconds=0.3, interval_seconds=0.05, matrix_size=16)
    entries = {entry["device"]: entry for entry in result["devices"]}
    assert entries["cuda:1"]["error"].startswith("RuntimeError: CUDA error")
    assert entries["cuda:0"]["steady_intervals"] >= 1
    assert result["gpu_spread"] == 0.0


def test_a_hung_gpu_is_recorded_and_the_burn_returns():
    release = threading.Event()
    torch = _FlakyTorch(2, hang={"cuda:1": release})
    try:
        results = burn.burn_devices(
            torch, ["cuda:0", "cuda:1"], 0.2, 0.05, 16, hang_grace_seconds=0.3
        )
    finally:
        release.set()
    assert results["cuda:1"]["error"].startswith("hung")
    assert results["cuda:0"]["interval_flops_per_second"]


def test_the_cpu_burn_has_no_telemetry_even_with_nvml():
    import torch

    nvml = types.SimpleNamespace()
    result = burn.run_burn(torch, "cpu", seconds=0.3, interval_seconds=0.05, nvml=nvml)
    (entry,) = result["devices"]
    assert "telemetry" not in entry
    assert entry["steady_intervals"] >= 1


def _sample(index: int) -> dict:
    return {
        "sm_clock_hz": 1.98e9 - 1e6 * index,
        "memory_clock_hz": 2.6e9,
        "power_watts": 650.0,
        "temperature_celsius": 60,
        "throttle_reasons": 0,
    }


def test_telemetry_comes_from_the_nvml_index_of_each_torch_device(monkeypatch):
    def telemetry(_nvml, index):
        if index == 5:
            raise RuntimeError("NVML: GPU is lost")
        return _sample(index)

    monkeypatch.setattr(burn, "telemetry_sample", telemetry)
    monkeypatch.setattr(burn, "uncorrectable_ecc_errors", lambda _nvml, index: index)
    monkeypatch.setattr(
        environment,
        "nvml_index_for_torch_device",
        lambda _nvml, _torch, index: {0: 4, 1: 5}[index],
        raising=False,
    )
    torch = _FlakyTorch(2)
    result = burn.run_burn(torch, "cuda", 0.2, 0.05, nvml=types.SimpleNamespace(), matrix_size=16)
    first, second = result["devices"]
    assert first["nvml_index"] == 4
    assert first["telemetry"]["sm_clock_hz"]["max"] == pytest.approx(1.98e9 - 4e6)
    assert first["new_uncorrectable_ecc_errors"] == 0
    assert second["nvml_index"] == 5
    assert second["telemetry"]["errors"] == ["RuntimeError: NVML: GPU is lost"]
    assert second["telemetry"]["harmful_throttle_fraction"] is None
    assert "error" not in second


def test_without_the_uuid_map_nvml_indices_are_the_torch_indices(monkeypatch):
    monkeypatch.delattr(environment, "nvml_index_for_torch_device", raising=False)
    assert burn.nvml_indices(types.SimpleNamespace(), None, 3) == [0, 1, 2]


def test_an_unmatched_uuid_gives_no_telemetry_rather_than_another_gpus(monkeypatch):
    def mapping(_nvml, _torch, index):
        if index == 1:
            raise LookupError("no NVML device with this UUID")
        return None if index == 2 else 7

    monkeypatch.setattr(environment, "nvml_index_for_torch_device", mapping, raising=False)
    assert burn.nvml_indices(types.SimpleNamespace(), None, 3) == [7, None, None]


def _fake_cuda():
    sys.path.insert(0, str(Path(__file__).parent))
    return importlib.import_module("fake_cuda")


def test_eight_fake_h200s_with_one_failing_keep_seven_exact_rates(monkeypatch):
    fake = _fake_cuda()
    profiles = [fake.h200_sxm() for _ in range(8)]
    profiles[3] = replace(profiles[3], fail_after_ops=20)
    node = fake.FakeNode(profiles)
    with fake.fake_gpus(monkeypatch, node):
        result = burn.run_burn(node.torch, "cuda", seconds=0.1, interval_seconds=0.05, warmup=0)
    entries = {entry["device"]: entry for entry in result["devices"]}
    assert "illegal memory access" in entries["cuda:3"]["error"]
    rate = profiles[0].matmul_flops["bf16"]
    for name, entry in entries.items():
        if name != "cuda:3":
            assert entry["median_flops_per_second"] == pytest.approx(rate, rel=1e-3)
            assert _verdict(entry["fluctuation"]) == PASS
    assert result["gpu_spread"] == pytest.approx(0.0, abs=1e-6)
