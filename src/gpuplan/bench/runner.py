"""The bench pipeline: run the chosen measurements, turn them into judged figures, store them."""

from __future__ import annotations

import tempfile
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from types import ModuleType
from typing import Any

from gpuplan.bench import references
from gpuplan.bench.environment import METHOD_VERSION, load_nvml, provenance, require_torch
from gpuplan.bench.report import (
    DEFAULT_THRESHOLDS,
    Figure,
    Threshold,
    figure_to_dict,
    worst_verdict,
)

PARTS = ("matmul", "memory", "collectives", "storage", "burn", "probe")
DEFAULT_STORAGE_CLAIM = 3e9
"""The seed's NVMe promise, 3 GB/s, until the offer says otherwise."""


@dataclass
class BenchOptions:
    """What to measure and how long to spend on it."""

    device: str = "cuda"
    quick: bool = False
    parts: tuple[str, ...] = ("matmul", "memory", "collectives", "storage", "burn")
    storage_directory: Path | None = None
    storage_bytes: int | None = None
    storage_claim: float = DEFAULT_STORAGE_CLAIM
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
    from gpuplan.bench.gemm_shapes import scenario_gemms
    from gpuplan.hardware.gpu import MissingPeakError

    options, torch = context.options, context.torch
    shapes = matmul.sweep_shapes(options.device, options.quick)
    on_gpu = options.device == "cuda"
    warmup_iterations, iterations = (50, 100) if on_gpu and not options.quick else (5, 10)
    if not on_gpu:
        warmup_iterations, iterations = 1, 3
    warmup_seconds = (5.0 if options.quick else 30.0) if on_gpu else 0.0
    results: dict[str, Any] = {}
    for dtype, skip in matmul.supported_dtypes(torch, options.device).items():
        spec = None
        if context.gpu_spec is not None:
            try:
                spec = (
                    context.gpu_spec.peak(dtype)
                    if dtype != "fp8" or context.gpu_spec.has_fp8
                    else None
                )
            except MissingPeakError:
                spec = None
        reference = references.matmul_reference(context.gpu_id, dtype)
        if skip:
            context.figures.append(
                Figure(
                    f"matmul.{dtype}", f"matmul {dtype}", "matmul", "FLOP/s", None, skip_reason=skip
                )
            )
            continue
        context.progress(f"matmul {dtype}: {len(shapes)} shapes")
        result = matmul.measure_dtype(
            torch, options.device, dtype, shapes, warmup_iterations, iterations, warmup_seconds
        )
        warmup_seconds = 0.0
        results[dtype] = result
        context.figures.append(
            Figure(
                f"matmul.{dtype}",
                f"matmul {dtype} (best of {len(shapes)} shapes, {result['best_shape']})",
                "matmul",
                "FLOP/s",
                result["best_mean_flops_per_second"],
                spec=spec,
                spec_source=context.spec_source(f"peak_flops.{dtype}") if spec else "",
                reference=reference.value if reference else None,
                reference_source=reference.source if reference else "",
                skip_reason="" if reference or spec else _no_spec_reason(context),
                details={"best_shape": result["best_shape"]},
            )
        )
    if options.shapes_scenario is not None:
        from gpuplan.scenario import parse_scenario

        scenario = parse_scenario(options.shapes_scenario)
        dtype = {"bf16": "bf16", "fp16": "fp16", "fp32": "tf32" if on_gpu else "fp32"}.get(
            scenario.job.precision, "bf16"
        )
        if dtype not in results:
            dtype = "fp32"
        best = results.get(dtype, {}).get("best_mean_flops_per_second")
        model_shapes = scenario_gemms(scenario)
        model_peak = None
        if context.gpu_spec is not None:
            try:
                model_peak = context.gpu_spec.peak(dtype)
            except MissingPeakError:
                model_peak = None
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
    context.measurements["matmul"] = results


def measure_memory(context: RunContext) -> None:
    from gpuplan.bench.memory_bandwidth import measure_device_memory, measure_host_transfers

    options, torch = context.options, context.torch
    context.progress("device memory bandwidth")
    buffer = 256 * 2**20 if options.quick and options.device == "cuda" else None
    device_memory = measure_device_memory(torch, options.device, buffer)
    context.measurements["memory"] = {"device": device_memory}
    spec = context.gpu_spec.memory_bandwidth if context.gpu_spec is not None else None
    reference = references.hbm_reference(context.gpu_id)
    for key, label, value in (
        (
            "memory.device_copy",
            "device memory copy (read + write traffic)",
            device_memory["copy_traffic_bytes_per_second"],
        ),
        ("memory.device_read", "device memory read", device_memory["read_bytes_per_second"]),
    ):
        context.figures.append(
            Figure(
                key,
                label,
                "hbm",
                "bytes/s",
                value,
                spec=spec,
                spec_source=context.spec_source("memory_bandwidth") if spec else "",
                reference=reference.value if reference else None,
                reference_source=reference.source if reference else "",
                skip_reason="" if reference or spec else _no_spec_reason(context),
                details={"buffer_bytes": device_memory["buffer_bytes"]},
            )
        )
    names = [
        f"{direction}_{kind}"
        for direction in ("host_to_device", "device_to_host")
        for kind in ("pinned", "pageable")
    ]
    if options.device != "cuda":
        for name in names:
            context.figures.append(
                Figure(
                    f"pcie.{name}",
                    name.replace("_", " "),
                    "pcie",
                    "bytes/s",
                    None,
                    skip_reason="no GPU: host-device transfers need CUDA",
                )
            )
        return
    context.progress("host-device (PCIe) bandwidth")
    transfers = measure_host_transfers(
        torch, 0, 128 * 2**20 if options.quick else 512 * 2**20, nvml=context.nvml
    )
    context.measurements["memory"]["host_transfers"] = transfers
    link = transfers.get("pcie_link") or {}
    generation, width = link.get("generation"), link.get("width")
    link_rate = (
        references.pcie_link_bytes_per_second(generation, width) if generation and width else None
    )
    for name in names:
        context.figures.append(
            Figure(
                f"pcie.{name}",
                f"{name.replace('_', ' ')} (GPU 0, Gen{generation} x{width})",
                "pcie",
                "bytes/s",
                transfers[f"{name}_bytes_per_second"],
                spec=link_rate,
                spec_source="PCIe link rate from NVML generation and width" if link_rate else "",
                reference=references.PCIE_EFFICIENCY * link_rate if link_rate else None,
                reference_source=references.PCIE_SOURCE if link_rate else "",
                skip_reason="" if link_rate else "PCIe link unknown (NVML unavailable)",
                details={"pcie_link": link},
            )
        )


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
    """One figure per collective: bus bandwidth at the largest payload, inside or across nodes."""
    from gpuplan.bench.collectives import per_gpu_network_rate, summary

    nodes, ranks = table["nodes"], table["ranks"]
    gpu_id = gpu_spec.id if gpu_spec is not None else None
    for name, row in summary(table).items():
        busbw = row["bus_bandwidth_bytes_per_second"]
        label = f"{name} busbw at {row['size_bytes'] / 2**20:.0f} MiB, {ranks} ranks"
        if nodes > 1:
            from gpuplan.hardware.cluster import INTER_NODE_NETWORKS

            line_rate = INTER_NODE_NETWORKS["ib-ndr-400g"][1]
            figures.append(
                Figure(
                    f"collectives.{name}.inter_node",
                    label + f" on {nodes} nodes (per-GPU NIC rate)",
                    "collective_inter_node",
                    "bytes/s",
                    per_gpu_network_rate(busbw, nodes, ranks),
                    spec=line_rate,
                    spec_source="400G InfiniBand per GPU (ib-ndr-400g)",
                    reference=references.LINK_EFFICIENCY * line_rate,
                    reference_source=references.LINK_RULE_SOURCE,
                    details={"bus_bandwidth_bytes_per_second": busbw, "row": row},
                )
            )
            continue
        link = (
            gpu_spec.intra_node_bandwidth
            if gpu_spec is not None and table["backend"] == "nccl"
            else None
        )
        reference = (
            references.intra_node_collective_reference(gpu_id, name, link, ranks) if link else None
        )
        figures.append(
            Figure(
                f"collectives.{name}",
                label,
                "collective_intra_node",
                "bytes/s",
                busbw,
                spec=link,
                spec_source=f"gpuplan catalog {gpu_id}: intra-node link, one direction"
                if link
                else "",
                reference=reference.value if reference else None,
                reference_source=reference.source if reference else "",
                skip_reason=""
                if reference
                else f"{table['backend']} on this machine has no published reference",
                details={"row": row},
            )
        )


def measure_storage(context: RunContext) -> None:
    from gpuplan.bench.storage import measure_storage as run_storage

    options = context.options
    directory = options.storage_directory or Path(tempfile.gettempdir())
    size = options.storage_bytes or (
        64 * 2**20 if options.device == "cpu" else (2 * 2**30 if options.quick else 16 * 2**30)
    )
    context.progress(f"storage: {size / 2**30:.2f} GiB in {directory}")
    result = run_storage(directory, size)
    context.measurements["storage"] = result
    for mode in ("read", "write"):
        context.figures.append(
            Figure(
                f"storage.sequential_{mode}",
                f"sequential {mode}, {result['tool']}, direct IO {'on' if result['direct_io'] else 'off'}",
                "storage",
                "bytes/s",
                result[f"{mode}_bytes_per_second"],
                reference=options.storage_claim,
                reference_source="advertised storage throughput (--storage-claim)",
                details={"directory": result["directory"], "size_bytes": result["size_bytes"]},
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
        context.figures.append(
            Figure(
                f"burn.fluctuation.{device}",
                f"matmul fluctuation {device}, {len(entry['interval_flops_per_second'])} intervals",
                "fluctuation",
                "ratio",
                entry["fluctuation"],
                details={
                    k: entry[k]
                    for k in (
                        "median_flops_per_second",
                        "coefficient_of_variation",
                        "drift",
                        "result_mismatches",
                    )
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


def assemble_result(
    header: dict[str, Any],
    gpu_id: str | None,
    figures: list[Figure],
    measurements: dict[str, Any],
    thresholds: Mapping[str, Threshold],
) -> dict[str, Any]:
    judged = [figure_to_dict(figure, thresholds) for figure in figures]
    return {
        "method_version": METHOD_VERSION,
        "provenance": header,
        "gpu_id": gpu_id,
        "figures": judged,
        "worst_verdict": worst_verdict(figure["verdict"] for figure in judged),
        "thresholds": {
            name: {"kind": t.kind, "pass_at": t.pass_at, "warn_at": t.warn_at, "why": t.why}
            for name, t in thresholds.items()
        },
        "measurements": measurements,
    }


def run_bench(
    options: BenchOptions, progress: Callable[[str], None] | None = None
) -> dict[str, Any]:
    """Run every requested part on ``options.device``; the JSON-able result with verdicts."""
    from gpuplan.errors import InputError

    torch = require_torch()
    if options.device == "cuda" and not torch.cuda.is_available():
        raise InputError(
            "--device: no CUDA GPU is visible to PyTorch "
            f"(torch {torch.__version__}); run with --device cpu to test the pipeline"
        )
    nvml = load_nvml() if options.device == "cuda" else None
    header = provenance(options.device, options.command, torch)
    context = RunContext(torch, options, _catalog_gpu(options, header), nvml)
    if progress is not None:
        context.progress = progress
    for part in PARTS:
        if part in options.parts:
            MEASUREMENTS[part](context)
    return assemble_result(
        header, context.gpu_id, context.figures, context.measurements, options.thresholds
    )


def store_collectives_run(table: dict[str, Any], command: str) -> int:
    """Store a torchrun collectives run (rank 0's table) as a bench run of its own."""
    from gpuplan.bench.environment import identify_gpu
    from gpuplan.catalog import load_gpu
    from gpuplan.store import save_bench_run

    torch = require_torch()
    device = "cuda" if table["backend"] == "nccl" else "cpu"
    header = provenance(device, command, torch)
    gpu_id = identify_gpu(torch.cuda.get_device_name()) if device == "cuda" else None
    gpu_spec = load_gpu(gpu_id) if gpu_id else None
    figures: list[Figure] = []
    add_collective_figures(figures, table, gpu_spec)
    result = assemble_result(header, gpu_id, figures, {"collectives": table}, DEFAULT_THRESHOLDS)
    return save_bench_run(result)
