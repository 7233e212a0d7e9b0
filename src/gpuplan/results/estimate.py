"""An estimate of one layout on one cluster, and its memory part (``gpuplan memory``)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from gpuplan.results.common import IntervalResult, StrategyResult, Warning


@dataclass(frozen=True)
class HostMemoryResult:
    """CPU RAM per node that offload keeps; capacity and verdict are ``None`` when the node's
    RAM is unknown."""

    bytes_per_node: float
    pinned_bytes_per_node: float
    capacity_bytes_per_node: float | None
    fits: bool | None


@dataclass(frozen=True)
class MemoryResult:
    """Per-GPU memory: ``allocated_bytes`` (live tensors), ``reserved_bytes`` (plus allocator
    fragmentation), ``peak_bytes`` (plus CUDA context and communicator buffers), each part in
    bytes; ``fits`` when the peak stays under ``capacity_bytes`` less ``safety_margin``."""

    allocated_bytes: float
    reserved_bytes: float
    peak_bytes: float
    parts: dict[str, float]
    fits: bool
    capacity_bytes: float
    safety_margin: float
    host: HostMemoryResult


@dataclass(frozen=True)
class ThroughputResult:
    """Step time in seconds, tokens per second (with the interval's low and high), FLOP/s per
    GPU, MFU and HFU as shares, and the step-time breakdown in seconds."""

    step_seconds: float
    tokens_per_second: float
    tokens_per_second_low: float
    tokens_per_second_high: float
    tokens_per_second_per_gpu: float
    model_flops_per_second_per_gpu: float
    mfu: float
    hfu: float
    matmul_dtype: str
    breakdown: dict[str, float]


@dataclass(frozen=True)
class ReliabilityResult:
    """Goodput (share of wall time that trains), checkpoint size and timing in bytes and
    seconds, and the read bandwidth the dataset needs in bytes per second."""

    goodput: float
    checkpoint_bytes: float
    checkpoint_stall_seconds: float
    checkpoint_interval_seconds: float
    mean_time_between_failures_seconds: float
    restart_seconds: float
    lost_seconds_per_interruption: float
    dataset_read_bytes_per_second: float


@dataclass(frozen=True)
class DurationResult:
    """Wall-clock time of the run (``None`` without tokens), its interval, start-up and
    training parts, in seconds and days."""

    seconds: float | None
    days: float | None
    seconds_low: float | None
    seconds_high: float | None
    days_low: float | None
    days_high: float | None
    startup_seconds: float
    training_seconds: float | None
    tokens: int | float


@dataclass(frozen=True)
class ModelResult:
    """The model's name and exact parameter counts (active: per token, for MoE)."""

    name: str
    total_params: int
    active_params: int


@dataclass(frozen=True)
class BatchResult:
    """Sequences and tokens per optimizer step, and who chose them (``batch_rule``)."""

    global_batch: int
    global_batch_tokens: int
    batch_rule: str


@dataclass(frozen=True)
class MemoryEstimate:
    """The memory answer without the speed model (``gpuplan.api.memory_estimate``)."""

    memory: MemoryResult
    strategy: StrategyResult
    framework: dict[str, Any]
    model: ModelResult
    hardware: dict[str, Any]
    job: BatchResult
    warnings: list[Warning]


@dataclass(frozen=True)
class Estimate(MemoryEstimate):
    """Memory, throughput, reliability and duration of one layout (``gpuplan.estimate``,
    ``gpuplan estimate --json``); ``framework`` and ``hardware`` describe what was modelled."""

    throughput: ThroughputResult
    reliability: ReliabilityResult
    duration: DurationResult
    interval: IntervalResult | None
