"""The bench pipeline: run the chosen measurements, turn them into judged figures, store them.

Each part runs isolated (:func:`run_part`): an exception in one leaves an ERROR figure with its
one-line message and the next part runs. With a recorder (``run_bench(..., store=True)``) the
run row is created first and rewritten after every part in one SQLite transaction, so a crash
or Ctrl-C keeps the parts already done. On the CPU the run is a self-test of the installation:
figures are measured and shown without verdicts, and it passes when every part ran.
"""

from __future__ import annotations

import contextlib
import shutil
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from types import ModuleType
from typing import Any

from gpuplan.bench import references
from gpuplan.bench.environment import METHOD_VERSION, load_nvml, provenance, require_torch
from gpuplan.bench.report import (
    DEFAULT_THRESHOLDS,
    ERROR,
    PASS,
    Figure,
    Threshold,
    figure_to_dict,
    worst_verdict,
)

PARTS = ("matmul", "memory", "collectives", "storage", "burn", "probe")
PART_CATEGORY = {
    "matmul": "matmul",
    "memory": "hbm",
    "collectives": "collective_intra_node",
    "storage": "storage",
    "burn": "fluctuation",
    "probe": "probe_throughput",
}
"""The category an ERROR figure of each part is filed under (its main figure's)."""
CPU_SELF_TEST_REASON = "CPU self-test: no reference"
ERROR_MESSAGE_CHARACTERS = 300
STORAGE_MAX_BYTES = 16 * 2**30
"""The full-mode storage test size: larger than any page cache share fio-scan leaves warm."""
STORAGE_QUICK_BYTES = 2 * 2**30
STORAGE_CPU_BYTES = 64 * 2**20
STORAGE_FREE_SHARE = 0.10
"""The test never writes more than this share of the directory's free space."""


@dataclass
class BenchOptions:
    """What to measure and how long to spend on it."""

    device: str = "cuda"
    quick: bool = False
    parts: tuple[str, ...] = ("matmul", "memory", "collectives", "storage", "burn")
    storage_directory: Path | None = None
    storage_bytes: int | None = None
    storage_claim: float | None = None
    burn_seconds: float | None = None
    shapes_scenario: Any = None
    probe_scenario: Any = None
    gpu: str | None = None
    collective_ranks: int | None = None
    thresholds: Mapping[str, Threshold] = field(default_factory=lambda: dict(DEFAULT_THRESHOLDS))
    command: str = "gpuplan bench"


@dataclass
class RunContext:
    torch: ModuleType
    options: BenchOptions
    gpu_spec: Any
    nvml: ModuleType | None
    figures: list[Figure] = field(default_factory=list)
    measurements: dict[str, Any] = field(default_factory=dict)
    progress: Callable[[str], None] = lambda _message: None

    @property
    def gpu_id(self) -> str | None:
        return self.gpu_spec.id if self.gpu_spec is not None else None

    def spec_source(self, field_name: str) -> str:
        if self.gpu_spec is None:
            return ""
        source, observed = self.gpu_spec.source_of(field_name)
        return f"gpuplan catalog {self.gpu_spec.id}: {source} ({observed})"


def _catalog_gpu(options: BenchOptions, header: dict[str, Any]) -> Any:
    from gpuplan.catalog import load_gpu

    if options.gpu:
        return load_gpu(options.gpu)
    identified = [gpu["catalog_id"] for gpu in header["gpus"] if gpu.get("catalog_id")]
    return load_gpu(identified[0]) if identified else None


def _no_spec_reason(context: RunContext) -> str:
    if context.options.device == "cpu":
        return ""
    return "" if context.gpu_spec else "GPU not in the catalog (use --gpu ID)"


def measure_matmul(context: RunContext) -> None:
    from gpuplan.bench import matmul

    options, torch = context.options, context.torch
    on_gpu = options.device == "cuda"
    warmup_iterations, iterations = (50, 100) if on_gpu and not options.quick else (5, 10)
    if not on_gpu:
        warmup_iterations, iterations = 1, 3
    warmup_seconds = (5.0 if options.quick else 30.0) if on_gpu else 0.0
    budget = matmul.search_budget_seconds(options.device, options.quick)
    category = "matmul_quick" if on_gpu and options.quick else "matmul"
    results: dict[str, Any] = {}
    context.measurements["matmul"] = results
    for dtype, skip in matmul.supported_dtypes(torch, options.device).items():
        if skip:
            context.figures.append(
                Figure(
                    f"matmul.{dtype}", f"matmul {dtype}", category, "FLOP/s", None, skip_reason=skip
                )
            )
            continue
        shapes = matmul.search_shapes(options.device, options.quick, context.gpu_id, dtype)
        context.progress(f"matmul {dtype}: up to {len(shapes)} shapes")
        result = matmul.measure_dtype(
            torch,
            options.device,
            dtype,
            shapes,
            warmup_iterations,
            iterations,
            warmup_seconds,
            budget,
        )
        warmup_seconds = 0.0
        results[dtype] = result
        context.figures.append(matmul_figure(context, dtype, category, result, budget))
    if on_gpu and torch.cuda.device_count() > 1:
        _measure_other_gpus(context, results, category, warmup_iterations, iterations)
    _measure_model_shapes(context, results, warmup_iterations, iterations)


def _measure_other_gpus(
    context: RunContext,
    results: dict[str, Any],
    category: str,
    warmup_iterations: int,
    iterations: int,
) -> None:
    """GPU 0's best shape of each dtype on every other GPU, held to the same MAMF: the search
    once, its winner everywhere (seconds per GPU instead of the search's minutes)."""
    from gpuplan.bench import matmul
    from gpuplan.bench.gemm_shapes import GemmShape

    torch = context.torch
    others = list(range(1, torch.cuda.device_count()))
    context.progress(f"matmul best shapes on GPUs 1-{others[-1]}")
    per_gpu: dict[int, dict[str, Any]] = {}
    results["other_gpus"] = per_gpu

    def measure_one(index: int) -> None:
        per_gpu[index] = {}
        with torch.cuda.device(index):
            flush = matmul.cache_flusher(torch, "cuda")
            for dtype, result in list(results.items()):
                if dtype == "other_gpus":
                    continue
                m, n, k = (int(size) for size in result["best_shape"].split("x"))
                shape = GemmShape("gpu0-best", m, n, k)
                measured = matmul.measure_shape(
                    torch, "cuda", dtype, shape, warmup_iterations, iterations, flush
                )
                per_gpu[index][dtype] = measured
                figure = matmul_figure(
                    context,
                    dtype,
                    category,
                    {
                        **result,
                        "best_mean_flops_per_second": measured["mean_flops_per_second"],
                        "best_shape_origin": "GPU 0's search",
                        "shapes_measured": 1,
                        "shapes_planned": 1,
                    },
                    None,
                )
                figure.key = f"matmul.{dtype}.cuda:{index}"
                figure.label = f"matmul {dtype} GPU {index} (GPU 0's best, {result['best_shape']})"
                context.figures.append(figure)

    on_each_gpu(context, "matmul", others, measure_one)


def _matmul_spec(context: RunContext, dtype: str) -> float | None:
    from gpuplan.hardware.gpu import MissingPeakError

    gpu = context.gpu_spec
    if gpu is None or (dtype == "fp8" and not gpu.has_fp8):
        return None
    try:
        return float(gpu.peak(dtype))
    except MissingPeakError:
        return None


def matmul_figure(
    context: RunContext, dtype: str, category: str, result: dict[str, Any], budget: float | None
) -> Figure:
    """The best mean FLOP/s of one dtype's search, held to the published MAMF."""
    spec = _matmul_spec(context, dtype)
    reference = references.matmul_reference(context.gpu_id, dtype)
    measured, planned = result["shapes_measured"], result["shapes_planned"]
    within = f" in {budget:.0f} s" if budget is not None else ""
    return Figure(
        f"matmul.{dtype}",
        f"matmul {dtype} (best of {measured}/{planned} shapes{within}, {result['best_shape']})",
        category,
        "FLOP/s",
        result["best_mean_flops_per_second"],
        spec=spec,
        spec_source=context.spec_source(f"peak_flops.{dtype}") if spec else "",
        reference=reference.value if reference else None,
        reference_source=reference.source if reference else "",
        skip_reason="" if reference or spec else _no_spec_reason(context),
        details={
            "best_shape": result["best_shape"],
            "best_shape_origin": result["best_shape_origin"],
            "shapes_measured": measured,
            "shapes_planned": planned,
            "budget_seconds": budget,
        },
    )


def _measure_model_shapes(
    context: RunContext, results: dict[str, Any], warmup_iterations: int, iterations: int
) -> None:
    from gpuplan.bench import matmul
    from gpuplan.bench.gemm_shapes import scenario_gemms

    options, torch = context.options, context.torch
    on_gpu = options.device == "cuda"
    if options.shapes_scenario is None:
        return
    from gpuplan.scenario import parse_scenario

    scenario = parse_scenario(options.shapes_scenario)
    dtype = {"bf16": "bf16", "fp16": "fp16", "fp32": "tf32" if on_gpu else "fp32"}.get(
        scenario.job.precision, "bf16"
    )
    if dtype not in results:
        dtype = "fp32"
    best = results.get(dtype, {}).get("best_mean_flops_per_second")
    model_shapes = scenario_gemms(scenario)
    model_peak = _matmul_spec(context, dtype)
    context.progress(f"matmul model shapes: {len(model_shapes)} GEMMs in {dtype}")
    flush = matmul.cache_flusher(torch, options.device)
    measured_shapes = []
    for shape in model_shapes:
        measured = matmul.measure_shape(
            torch, options.device, dtype, shape, warmup_iterations, iterations, flush
        )
        measured_shapes.append(measured)
        context.figures.append(
            Figure(
                f"matmul_model.{shape.name}.{shape.pass_name}",
                f"model GEMM {shape.label()} {dtype}",
                "matmul_model_shapes",
                "FLOP/s",
                measured["mean_flops_per_second"],
                spec=model_peak,
                reference=best,
                reference_source="this run's best sweep shape (the machine's MAMF)",
            )
        )
    results["model_shapes"] = {"dtype": dtype, "shapes": measured_shapes}


def measure_memory(context: RunContext) -> None:
    from gpuplan.bench.memory_bandwidth import (
        measure_concurrent_host_to_device,
        measure_device_memory,
        measure_host_transfers,
    )

    options, torch = context.options, context.torch
    context.progress("device memory bandwidth")
    buffer = 256 * 2**20 if options.quick and options.device == "cuda" else None
    device_memory = measure_device_memory(torch, options.device, buffer)
    context.measurements["memory"] = {"device": device_memory}
    context.figures += hbm_figures(context, device_memory)
    if options.device != "cuda":
        context.figures += [
            Figure(
                f"pcie.{name}",
                name.replace("_", " "),
                "pcie",
                "bytes/s",
                None,
                skip_reason="no GPU: host-device transfers need CUDA",
            )
            for name in PCIE_COPIES
        ]
        return
    context.progress("host-device (PCIe) bandwidth")
    pcie_buffer = 128 * 2**20 if options.quick else 512 * 2**20
    transfers = measure_host_transfers(torch, 0, pcie_buffer, nvml=context.nvml)
    context.measurements["memory"]["host_transfers"] = transfers
    context.figures += pcie_figures(transfers, device_index=0)
    others = list(range(1, torch.cuda.device_count()))
    if not others:
        return
    every_gpu: dict[int, dict[str, Any]] = {0: {"device": device_memory, "host": transfers}}
    context.measurements["memory"]["every_gpu"] = every_gpu

    def measure_one(index: int) -> None:
        with torch.cuda.device(index):
            memory = measure_device_memory(torch, "cuda", buffer)
        every_gpu[index] = {"device": memory}
        context.figures += hbm_figures(context, memory, index)
        host = measure_host_transfers(torch, index, pcie_buffer, nvml=context.nvml)
        every_gpu[index]["host"] = host
        context.figures += pcie_figures(host, index)

    context.progress(f"memory and PCIe on GPUs 1-{others[-1]}")
    on_each_gpu(context, "memory", others, measure_one)
    healthy = [index for index, measured in every_gpu.items() if "host" in measured]
    solo = [every_gpu[index]["host"]["host_to_device_pinned_bytes_per_second"] for index in healthy]
    concurrent = measure_concurrent_host_to_device(torch, healthy, pcie_buffer)
    context.measurements["memory"]["concurrent_host_to_device"] = concurrent
    context.figures.append(concurrent_figure(concurrent, sum(solo)))


def on_each_gpu(
    context: RunContext, part: str, indices: list[int], measure: Callable[[int], None]
) -> None:
    """``measure(index)`` for each GPU, each isolated: a GPU that raises leaves an ERROR figure
    ``PART.error.cuda:INDEX`` and the next GPU is measured."""
    for index in indices:
        try:
            measure(index)
        except Exception as error:
            figure = error_figure(part, error)
            figure.key = f"{part}.error.cuda:{index}"
            figure.label = f"{part} on GPU {index}: did not finish"
            figure.error = f"{part} on GPU {index} did not finish: {one_line(error)}"
            context.figures.append(figure)
            _release_device_memory(context.torch, context.options.device)


def concurrent_figure(concurrent: dict[str, Any], solo_sum: float) -> Figure:
    """All GPUs' pinned host-to-device copies at once, shown beside the sum of their solo rates;
    measured only: no published measurement of concurrent copies to hold it to."""
    devices = len(concurrent["devices"])
    measured = concurrent["total_bytes_per_second"]
    share = measured / solo_sum if solo_sum else None
    return Figure(
        "pcie.host_to_device_pinned.all_gpus",
        f"host to device pinned, {devices} GPUs at once (total)",
        "pcie",
        "bytes/s",
        measured,
        skip_reason="no published measurement of concurrent host-device copies: measured only"
        + (f" ({share:.0%} of the sum of the solo rates)" if share else ""),
        details={"sum_of_solo_bytes_per_second": solo_sum, "share_of_solo_sum": share},
    )


PCIE_COPIES = tuple(
    f"{direction}_{kind}"
    for direction in ("host_to_device", "device_to_host")
    for kind in ("pinned", "pageable")
)


def hbm_figures(
    context: RunContext, device_memory: dict[str, Any], device_index: int = 0
) -> list[Figure]:
    """Copy traffic and read rate, each held to the published rate of the same kind; GPU 0's
    keys carry no device suffix."""
    spec = context.gpu_spec.memory_bandwidth if context.gpu_spec is not None else None
    floor = references.dcgm_floor(context.gpu_id)
    figures = []
    for key, label, value, kind in (
        (
            "memory.device_copy",
            "device memory copy (read + write traffic)",
            device_memory["copy_traffic_bytes_per_second"],
            "copy",
        ),
        (
            "memory.device_read",
            "device memory read",
            device_memory["read_bytes_per_second"],
            "read",
        ),
    ):
        reference = references.hbm_reference(context.gpu_id, kind)
        figures.append(
            Figure(
                key if device_index == 0 else f"{key}.cuda:{device_index}",
                label if device_index == 0 else f"{label}, GPU {device_index}",
                "hbm",
                "bytes/s",
                value,
                spec=spec,
                spec_source=context.spec_source("memory_bandwidth") if spec else "",
                reference=reference.value if reference else None,
                reference_source=reference.source if reference else "",
                skip_reason="" if reference or spec else _no_spec_reason(context),
                details={
                    "buffer_bytes": device_memory["buffer_bytes"],
                    "dcgm_floor_bytes_per_second": floor.value if floor else None,
                    "dcgm_floor_source": floor.source if floor else "",
                },
            )
        )
    return figures


def pcie_figures(transfers: dict[str, Any], device_index: int) -> list[Figure]:
    """Four host-device copies of one GPU: pinned ones held to the link's maximum line rate,
    pageable ones measured only (:func:`gpuplan.bench.references.pcie_reference`)."""
    link = transfers.get("pcie_link") or {}
    figures = []
    for name in PCIE_COPIES:
        direction, _, kind = name.rpartition("_")
        reference, line_rate, link_note = references.pcie_reference(direction, kind, link)
        if not link:
            skip = "PCIe link unknown (NVML unavailable)"
        elif kind == "pageable":
            skip = references.PAGEABLE_NO_REFERENCE
        elif reference is None:
            skip = f"PCIe link {link_note}: no line rate for it"
        else:
            skip = ""
        degraded = " DEGRADED LINK" if references.link_is_degraded(link) else ""
        figures.append(
            Figure(
                f"pcie.{name}" if device_index == 0 else f"pcie.{name}.cuda:{device_index}",
                f"{name.replace('_', ' ')} (GPU {device_index}, {link_note}{degraded})",
                "pcie",
                "bytes/s",
                transfers[f"{name}_bytes_per_second"],
                spec=line_rate,
                spec_source="PCIe line rate of the link's maximum generation and width (NVML)"
                if line_rate
                else "",
                reference=reference.value if reference else None,
                reference_source=reference.source if reference else "",
                skip_reason=skip,
                details={
                    "pcie_link": link,
                    "link": link_note,
                    "numa_cpus": transfers.get("numa_cpus"),
                    "numa_binding": transfers.get("numa_binding", "not bound: not measured"),
                },
            )
        )
    return figures


def measure_collectives(context: RunContext) -> None:
    from gpuplan.bench import collectives

    options, torch = context.options, context.torch
    on_gpu = options.device == "cuda"
    ranks = options.collective_ranks or (torch.cuda.device_count() if on_gpu else 2)
    if ranks < 2:
        for name in collectives.COLLECTIVES:
            context.figures.append(
                Figure(
                    f"collectives.{name}",
                    name,
                    "collective_intra_node",
                    "bytes/s",
                    None,
                    skip_reason="one GPU: collectives need at least two",
                )
            )
        return
    sizes = (
        collectives.CPU_SIZES
        if not on_gpu
        else (collectives.GPU_SIZES[::2] if options.quick else collectives.GPU_SIZES)
    )
    context.progress(f"collectives on {ranks} ranks")
    table = collectives.run_on_this_node(
        ranks,
        options.device,
        sizes,
        warmup_iterations=2 if not on_gpu else 5,
        iterations=3 if not on_gpu else 20,
    )
    context.measurements["collectives"] = table
    add_collective_figures(context.figures, table, context.gpu_spec)


def add_collective_figures(figures: list[Figure], table: dict[str, Any], gpu_spec: Any) -> None:
    """One figure per collective (:func:`gpuplan.bench.collectives.add_collective_figures`)."""
    from gpuplan.bench.collectives import add_collective_figures as add_figures

    add_figures(figures, table, gpu_spec)


def storage_directory(options: BenchOptions) -> Path:
    """``--storage-dir``, else the working directory: not /tmp, which rented machines often
    mount as tmpfs (RAM), while ml-engineering's fio-scan runs on the mount under test."""
    return options.storage_directory or Path.cwd()


def storage_test_bytes(options: BenchOptions, free_bytes: int) -> int:
    """``--storage-size``, else 16 GiB (quick 2 GiB, CPU 64 MiB), never more than
    :data:`STORAGE_FREE_SHARE` of the free space."""
    if options.storage_bytes:
        wanted = options.storage_bytes
    elif options.device == "cpu":
        wanted = STORAGE_CPU_BYTES
    else:
        wanted = STORAGE_QUICK_BYTES if options.quick else STORAGE_MAX_BYTES
    return max(1, min(wanted, int(STORAGE_FREE_SHARE * free_bytes)))


def measure_storage(context: RunContext) -> None:
    from gpuplan.bench.storage import file_system_type
    from gpuplan.bench.storage import measure_storage as run_storage

    options = context.options
    directory = storage_directory(options)
    free = shutil.disk_usage(directory).free
    size = storage_test_bytes(options, free)
    file_system = file_system_type(directory)
    context.progress(
        f"storage: {size / 2**30:.2f} GiB in {directory} ({file_system or 'unknown'} file system)"
    )
    result = run_storage(directory, size)
    result["free_bytes_before"] = free
    result["file_system"] = file_system
    context.measurements["storage"] = result
    claim = options.storage_claim
    for mode in ("read", "write"):
        context.figures.append(
            Figure(
                f"storage.sequential_{mode}",
                f"sequential {mode} of {result['size_bytes'] / 2**30:.2f} GiB in "
                f"{result['directory']}, {result['tool']}, "
                f"direct IO {'on' if result['direct_io'] else 'off'}",
                "storage",
                "bytes/s",
                result[f"{mode}_bytes_per_second"],
                reference=claim,
                reference_source="advertised storage throughput (--storage-claim)" if claim else "",
                skip_reason=""
                if claim
                else "no advertised throughput (--storage-claim): measured only",
                details={
                    "directory": result["directory"],
                    "size_bytes": result["size_bytes"],
                    "file_system": file_system,
                },
            )
        )


def measure_burn(context: RunContext) -> None:
    from gpuplan.bench.burn import run_burn

    options = context.options
    on_gpu = options.device == "cuda"
    seconds = (
        options.burn_seconds
        if options.burn_seconds is not None
        else ((60.0 if options.quick else 300.0) if on_gpu else 1.0)
    )
    interval = 0.25 if not on_gpu else max(1.0, min(10.0, seconds / 30))
    context.progress(f"sustained burn for {seconds:.0f} s")
    result = run_burn(context.torch, options.device, seconds, interval, context.nvml)
    context.measurements["burn"] = result
    for entry in result["devices"]:
        device = entry["device"]
        if entry.get("error"):
            context.figures.append(
                Figure(
                    f"burn.error.{device}",
                    f"burn on {device}: did not finish",
                    "fluctuation",
                    "",
                    None,
                    error=f"burn on {device} did not finish: {entry['error']}",
                    details={"message": entry["error"]},
                )
            )
            continue
        context.figures.append(
            Figure(
                f"burn.fluctuation.{device}",
                f"matmul fluctuation {device}, {len(entry['interval_flops_per_second'])} intervals",
                "fluctuation",
                "ratio",
                entry["fluctuation"],
                details={
                    **{
                        k: entry[k]
                        for k in (
                            "median_flops_per_second",
                            "coefficient_of_variation",
                            "drift",
                            "result_mismatches",
                        )
                    },
                    "numa_cpus": entry.get("numa_cpus"),
                    "numa_binding": entry.get("numa_binding", "not bound: CPU run"),
                },
            )
        )
        telemetry = entry.get("telemetry")
        context.figures.append(
            Figure(
                f"burn.throttle.{device}",
                f"harmful throttling {device}",
                "throttle",
                "ratio",
                telemetry.get("harmful_throttle_fraction") if telemetry else None,
                skip_reason="" if telemetry else "no NVML telemetry on this machine",
                details=telemetry or {},
            )
        )
        ecc = entry.get("new_uncorrectable_ecc_errors")
        context.figures.append(
            Figure(
                f"burn.ecc.{device}",
                f"new uncorrectable ECC errors {device}",
                "ecc",
                "count",
                float(ecc) if ecc is not None else None,
                skip_reason="" if ecc is not None else "ECC counters unavailable",
            )
        )
    devices = len(result["devices"])
    context.figures.append(
        Figure(
            "burn.gpu_spread",
            f"spread between {devices} GPUs (1 - slowest / fastest)",
            "gpu_spread",
            "ratio",
            result["gpu_spread"] if devices > 1 else None,
            skip_reason="" if devices > 1 else "one device: no spread to measure",
        )
    )


def measure_probe(context: RunContext) -> None:
    from gpuplan.bench.probe import run_probe

    options = context.options
    context.progress("probe: training steps of the scenario's model")
    on_gpu = options.device == "cuda"
    result = run_probe(
        context.torch,
        options.device,
        options.probe_scenario,
        warmup_steps=3 if on_gpu else 1,
        steps=10 if on_gpu else 2,
        gpu=options.gpu or context.gpu_id,
    )
    context.measurements["probe"] = result
    prediction = result.get("prediction_for_probe") or {}
    predicted_memory = prediction.get("memory") or {}
    predicted_speed = prediction.get("throughput") or {}
    measured = result["measured"]
    speed_reference = predicted_speed.get("tokens_per_second_per_gpu") or predicted_speed.get(
        "tokens_per_second"
    )
    speed_skip = "" if speed_reference else "gpuplan.estimate gives no throughput: measured only"
    if not on_gpu:
        speed_skip = f"CPU run: the prediction is for {result['gpu']}; measured only"
    context.figures.append(
        Figure(
            "probe.tokens_per_second",
            f"probe {result['probed_config']['num_layers']}/{result['full_layers']} layers, tokens/s",
            "probe_throughput",
            "tokens/s",
            measured["tokens_per_second"],
            reference=speed_reference,
            reference_source="gpuplan.estimate for the probed layout" if speed_reference else "",
            skip_reason=speed_skip,
            details={k: v for k, v in measured.items() if k != "tokens_per_second"},
        )
    )
    for key, predicted_key in (
        ("max_memory_allocated_bytes", "allocated_bytes"),
        ("max_memory_reserved_bytes", "reserved_bytes"),
    ):
        value = measured.get(key)
        reference = predicted_memory.get(predicted_key)
        context.figures.append(
            Figure(
                f"probe.{key}",
                f"probe {key.replace('_', ' ').removesuffix(' bytes')}",
                "probe_memory",
                "bytes",
                float(value) if value is not None else None,
                reference=float(reference) if reference is not None else None,
                reference_source=f"gpuplan.estimate memory.{predicted_key} for the probed layout",
                skip_reason="" if value is not None else "the CPU has no CUDA allocator statistics",
            )
        )


MEASUREMENTS: dict[str, Callable[[RunContext], None]] = {
    "matmul": measure_matmul,
    "memory": measure_memory,
    "collectives": measure_collectives,
    "storage": measure_storage,
    "burn": measure_burn,
    "probe": measure_probe,
}


NO_NVML_REASON = "no NVML (nvidia-ml-py or the driver's libnvidia-ml missing)"
KERNEL_LOG_NOTE = "XIDs raised before the run are in the kernel log only (dmesg | grep -i xid)"


@dataclass
class HealthWatch:
    """The driver's fault reports over the whole run: XIDs through an NVML event set from
    before the first part to the end, and remapped rows read at the start and after the burn
    (or at the end without one). ``nvml_indices`` is in torch order; None: not paired."""

    nvml: Any
    nvml_indices: list[int | None]
    monitor: Any = None
    rows_before: dict[int, tuple[Any, str]] = field(default_factory=dict)
    rows_after: dict[int, tuple[Any, str]] = field(default_factory=dict)
    rows_after_when: str = ""
    errors: list[str] = field(default_factory=list)

    @classmethod
    def start(cls, nvml: Any, torch: ModuleType) -> HealthWatch:
        from gpuplan.bench.environment import (
            XidMonitor,
            nvml_indices_for_torch_devices,
            remapped_rows_reading,
        )

        if nvml is None:
            return cls(None, [None] * _device_count(torch))
        indices = nvml_indices_for_torch_devices(nvml, torch)
        known = [index for index in indices if index is not None]
        watch = cls(nvml, indices, XidMonitor.start(nvml, known))
        watch.rows_before = {index: remapped_rows_reading(nvml, index) for index in known}
        return watch

    def after_part(self, part: str) -> None:
        """Collect the XIDs raised so far; after the burn, read the remapped rows again."""
        self._guarded(self._drain)
        if part == "burn":
            self._guarded(lambda: self.read_rows_after("after the burn"))

    def _guarded(self, step: Callable[[], None]) -> None:
        """``step()``; an exception is kept in ``errors`` (shown in the figures), not raised."""
        try:
            step()
        except Exception as error:
            self.errors.append(one_line(error))

    def _drain(self) -> None:
        if self.monitor is not None:
            self.monitor.drain()

    def read_rows_after(self, when: str) -> None:
        from gpuplan.bench.environment import remapped_rows_reading

        self.rows_after = {
            index: remapped_rows_reading(self.nvml, index) for index in self.rows_before
        }
        self.rows_after_when = when

    def finish(self) -> None:
        """The last XIDs, the end-of-run row reading where no burn took one, the event set freed."""
        if self.monitor is None:
            return
        self._guarded(self._drain)
        if not self.rows_after_when:
            self._guarded(lambda: self.read_rows_after("at the end of the run"))
        self._guarded(self.monitor.close)

    def figures(self) -> list[Figure]:
        figures = []
        for torch_index, nvml_index in enumerate(self.nvml_indices):
            figures.append(self.xid_figure(torch_index, nvml_index))
            figures.append(self.remapped_rows_figure(torch_index, nvml_index))
        return figures

    def _unpaired_reason(self, torch_index: int) -> str:
        if self.nvml is None:
            return NO_NVML_REASON
        return f"the NVML index of cuda:{torch_index} is unknown (its UUID matched no NVML GPU)"

    def xid_figure(self, torch_index: int, nvml_index: int | None) -> Figure:
        """Critical XIDs (:data:`gpuplan.bench.environment.CRITICAL_XIDS`) seen on the GPU since
        the run started; the non-critical ones in the details."""
        key, label = (
            f"health.xid.cuda:{torch_index}",
            f"critical XIDs during the run cuda:{torch_index}",
        )
        if nvml_index is None or self.monitor is None:
            reason = self._unpaired_reason(torch_index)
            return Figure(
                key, label, "xid", "count", None, skip_reason=f"{reason}; {KERNEL_LOG_NOTE}"
            )
        unwatched = self.monitor.unwatched_reason(nvml_index)
        if unwatched:
            return Figure(
                key,
                label,
                "xid",
                "count",
                None,
                skip_reason=f"no NVML XID events ({unwatched}); {KERNEL_LOG_NOTE}",
            )
        events = self.monitor.events_of(nvml_index)
        critical = [event.xid for event in events if event.critical]
        other = [event.xid for event in events if not event.critical]
        named = f": XID {', '.join(map(str, critical))}" if critical else ""
        return Figure(
            key,
            label + named,
            "xid",
            "count",
            float(len(critical)),
            details={
                "critical_xids": critical,
                "non_critical_xids": other,
                "nvml_index": nvml_index,
                "note": KERNEL_LOG_NOTE,
                "watch_errors": list(self.errors),
            },
        )

    def remapped_rows_figure(self, torch_index: int, nvml_index: int | None) -> Figure:
        """Row-remap faults: uncorrectable remaps added during the run, plus one for a pending
        and one for a failed remap (:func:`gpuplan.bench.environment.remapped_rows_finding`)."""
        from gpuplan.bench.environment import remapped_rows_finding

        key = f"health.remapped_rows.cuda:{torch_index}"
        label = f"HBM row remapping during the run cuda:{torch_index}"
        if nvml_index is None or self.nvml is None:
            reason = self._unpaired_reason(torch_index)
            return Figure(key, label, "remapped_rows", "count", None, skip_reason=reason)
        before, before_error = self.rows_before.get(nvml_index, (None, "not read"))
        after, after_error = self.rows_after.get(nvml_index, (before, before_error))
        if before is None or after is None:
            reason = before_error or after_error
            return Figure(
                key,
                label,
                "remapped_rows",
                "count",
                None,
                skip_reason=f"remapped rows not readable ({reason}); A100 and later only",
            )
        finding = remapped_rows_finding(before, after)
        faults = max(0, after.uncorrectable - before.uncorrectable) + after.pending + after.failure
        return Figure(
            key,
            f"{label}: {finding}" if finding else label,
            "remapped_rows",
            "count",
            float(faults),
            details={
                "before": before.to_dict(),
                "after": after.to_dict(),
                "after_read": self.rows_after_when or "not yet (same as the start)",
                "finding": finding,
                "nvml_index": nvml_index,
            },
        )


def _device_count(torch: ModuleType) -> int:
    try:
        return int(torch.cuda.device_count())
    except Exception:
        return 0


def health_figures(header: Mapping[str, Any]) -> list[Figure]:
    """One figure per GPU counting the faults its NVML record shows (``findings``), with the
    NVML calls that failed for it in the details."""
    figures = []
    for gpu in header.get("gpus", []):
        if "findings" not in gpu:
            continue
        findings, errors = gpu.get("findings") or [], gpu.get("errors") or []
        index = gpu.get("torch_index", gpu.get("index"))
        label = "; ".join(findings) if findings else "none"
        figures.append(
            Figure(
                f"health.findings.cuda:{index}",
                f"driver-reported faults cuda:{index}: {label}",
                "health_findings",
                "count",
                float(len(findings)),
                details={"findings": findings, "nvml_errors": errors},
            )
        )
    return figures


def assemble_result(
    header: dict[str, Any],
    gpu_id: str | None,
    figures: list[Figure],
    measurements: dict[str, Any],
    thresholds: Mapping[str, Threshold],
    parts: Mapping[str, str] | None = None,
) -> dict[str, Any]:
    """The JSON-able run: judged figures, the overall verdict, each part's state
    ("pending", "done", "error", "interrupted"). On the CPU, the self-test verdicts."""
    self_test = header.get("device") == "cpu"
    slice_reason = whole_gpu_skip_reason(header)
    if slice_reason:
        figures = [mig_slice_figure(figure, slice_reason) for figure in figures]
    judged = [
        figure_to_dict(self_test_figure(figure) if self_test else figure, thresholds)
        for figure in figures
    ]
    statuses = [figure["verdict"] for figure in judged]
    return {
        "method_version": METHOD_VERSION,
        "provenance": header,
        "gpu_id": gpu_id,
        "figures": judged,
        "worst_verdict": self_test_verdict(statuses) if self_test else worst_verdict(statuses),
        "parts": dict(parts or {}),
        "thresholds": {
            name: {"kind": t.kind, "pass_at": t.pass_at, "warn_at": t.warn_at, "why": t.why}
            for name, t in thresholds.items()
        },
        "measurements": measurements,
    }


WHOLE_GPU_CATEGORIES = ("matmul", "matmul_quick", "matmul_model_shapes", "hbm", "pcie")
"""Figures held to a whole GPU's references, which a MIG slice has a fraction of."""


def whole_gpu_skip_reason(header: Mapping[str, Any]) -> str:
    """Why whole-GPU references do not apply to this run ("MIG slice"), or ""."""
    slices = [gpu for gpu in header.get("gpus", []) if gpu.get("is_mig_slice")]
    if not slices:
        return ""
    return "MIG slice: a fraction of the GPU's compute and memory; no whole-GPU reference"


def mig_slice_figure(figure: Figure, reason: str) -> Figure:
    """A figure of a MIG slice: measured; held to no whole-GPU spec or reference."""
    if figure.error or figure.skip_reason or figure.category not in WHOLE_GPU_CATEGORIES:
        return figure
    return replace(figure, skip_reason=reason)


def self_test_figure(figure: Figure) -> Figure:
    """A CPU figure as the self-test shows it: measured, not held to a GPU machine's reference."""
    if figure.error or figure.skip_reason:
        return figure
    return replace(figure, skip_reason=CPU_SELF_TEST_REASON)


def self_test_verdict(statuses: list[str]) -> str:
    """The CPU self-test passes when every part ran: ERROR if one raised, else PASS."""
    return ERROR if ERROR in statuses else PASS


def one_line(error: BaseException) -> str:
    """``TypeName: first line of the message``, at most :data:`ERROR_MESSAGE_CHARACTERS`."""
    lines = str(error).strip().splitlines()
    text = f"{type(error).__name__}: {lines[0]}" if lines else type(error).__name__
    return text[:ERROR_MESSAGE_CHARACTERS]


def error_figure(part: str, error: BaseException) -> Figure:
    """The figure a part leaves when it raised: verdict ERROR, the exception in one line."""
    message = one_line(error)
    return Figure(
        f"{part}.error",
        f"{part}: did not finish",
        PART_CATEGORY[part],
        "",
        None,
        error=f"{part} did not finish: {message}",
        details={"exception": type(error).__name__, "message": message},
    )


def _release_device_memory(torch: ModuleType, device: str) -> None:
    if device != "cuda":
        return
    with contextlib.suppress(Exception):
        torch.cuda.empty_cache()


def run_part(context: RunContext, part: str) -> str:
    """Run one part isolated: "done", or "error" with an ERROR figure; the figures it added
    before raising are kept. KeyboardInterrupt and SystemExit pass through."""
    try:
        MEASUREMENTS[part](context)
    except Exception as error:
        context.figures.append(error_figure(part, error))
        context.measurements.setdefault("errors", {})[part] = one_line(error)
        context.progress(f"{part}: {one_line(error)}")
        _release_device_memory(context.torch, context.options.device)
        return "error"
    return "done"


class RunRecorder:
    """Keeps the stored copy of a run current: the row is created before the first part and
    rewritten after each (one transaction each), so a crash keeps what was measured."""

    def __init__(self, database: Path | None = None) -> None:
        self.database = database
        self.run_id: int | None = None

    def record(self, result: dict[str, Any]) -> None:
        from gpuplan.store import create_bench_run, update_bench_run

        if self.run_id is None:
            self.run_id = create_bench_run(result, self.database)
        else:
            update_bench_run(self.run_id, result, self.database)
        result["id"] = self.run_id


def run_bench(
    options: BenchOptions,
    progress: Callable[[str], None] | None = None,
    recorder: RunRecorder | None = None,
) -> dict[str, Any]:
    """Run every requested part on ``options.device``, each isolated; the JSON-able result with
    verdicts. With ``recorder``, the run is stored before the first part and after each."""
    from gpuplan.errors import InputError

    torch = require_torch()
    if options.device == "cuda" and not torch.cuda.is_available():
        raise InputError.of("error.bench_no_cuda", torch=torch.__version__)
    nvml = load_nvml() if options.device == "cuda" else None
    header = provenance(options.device, options.command, torch)
    context = RunContext(torch, options, _catalog_gpu(options, header), nvml)
    context.figures.extend(health_figures(header))
    watch = HealthWatch.start(nvml, torch) if options.device == "cuda" else None
    if progress is not None:
        context.progress = progress
    chosen = [part for part in PARTS if part in options.parts]
    states = dict.fromkeys(chosen, "pending")

    def snapshot() -> dict[str, Any]:
        result = assemble_result(
            header,
            context.gpu_id,
            context.figures + (watch.figures() if watch is not None else []),
            context.measurements,
            options.thresholds,
            states,
        )
        if recorder is not None:
            recorder.record(result)
        return result

    snapshot()
    try:
        for part in chosen:
            try:
                states[part] = run_part(context, part)
            except KeyboardInterrupt:
                states[part] = "interrupted"
                raise
            finally:
                if watch is not None:
                    watch.after_part(part)
            snapshot()
    finally:
        if watch is not None:
            watch.finish()
        result = snapshot()
    return result


def store_collectives_run(table: dict[str, Any], command: str) -> int:
    """Store a torchrun collectives run (rank 0's table) as a bench run of its own."""
    from gpuplan.bench.environment import catalog_id_for_torch_device
    from gpuplan.catalog import load_gpu
    from gpuplan.store import save_bench_run

    torch = require_torch()
    device = "cuda" if table["backend"] == "nccl" else "cpu"
    header = provenance(device, command, torch)
    gpu_id = catalog_id_for_torch_device(load_nvml(), torch, 0) if device == "cuda" else None
    gpu_spec = load_gpu(gpu_id) if gpu_id else None
    figures: list[Figure] = []
    add_collective_figures(figures, table, gpu_spec)
    result = assemble_result(header, gpu_id, figures, {"collectives": table}, DEFAULT_THRESHOLDS)
    return save_bench_run(result)
