"""Hold a stored bench run against what an offer advertised: GPU model and count, its
catalog peaks and published achievable values, and the advertised network."""

from __future__ import annotations

from typing import Any

from gpuplan.bench import references
from gpuplan.bench.report import DEFAULT_THRESHOLDS, FAIL, PASS, SKIPPED, Figure, figure_to_dict


def advertised_network_rate(offer: Any) -> float | None:
    """Bytes/s per GPU of the offer's cluster network, as its topology states it."""
    topology = offer.topology
    if topology is None or not topology.has_cluster_network:
        return None
    return float(topology.network_bandwidth)


def _check(item: str, advertised: Any, measured: Any, passed: bool | None) -> dict[str, Any]:
    verdict = SKIPPED if passed is None else PASS if passed else FAIL
    return {"item": item, "advertised": advertised, "measured": measured, "verdict": verdict}


def compare_run_to_offer(run: dict[str, Any], offer: Any) -> dict[str, Any]:
    """Identity checks and re-judged figures of ``run`` under ``offer``'s advertised hardware."""
    from gpuplan.catalog import load_gpu

    gpu = load_gpu(offer.gpu)
    gpus_seen = run["provenance"].get("gpus", [])
    checks = [
        _check(
            "GPU model",
            gpu.id,
            run.get("gpu_id"),
            run.get("gpu_id") == gpu.id if run.get("gpu_id") else None,
        ),
        _check(
            "GPU count",
            offer.gpus,
            len(gpus_seen),
            len(gpus_seen) == offer.gpus if gpus_seen else None,
        ),
    ]
    figures: list[Figure] = []
    by_key = {figure["key"]: figure for figure in run["figures"]}
    for dtype in ("fp32", "tf32", "bf16", "fp16", "fp8"):
        measured = by_key.get(f"matmul.{dtype}", {}).get("measured")
        if measured is None or (dtype == "fp8" and not gpu.has_fp8) or dtype not in gpu.peak_flops:
            continue
        reference = references.matmul_reference(gpu.id, dtype)
        figures.append(
            Figure(
                f"matmul.{dtype}",
                f"matmul {dtype}",
                "matmul",
                "FLOP/s",
                measured,
                spec=gpu.peak(dtype),
                spec_source=f"gpuplan catalog {gpu.id}",
                reference=reference.value if reference else None,
                reference_source=reference.source if reference else "",
            )
        )
    hbm = by_key.get("memory.device_copy", {}).get("measured")
    if hbm is not None:
        reference = references.hbm_reference(gpu.id)
        figures.append(
            Figure(
                "memory.device_copy",
                "device memory copy",
                "hbm",
                "bytes/s",
                hbm,
                spec=gpu.memory_bandwidth,
                spec_source=f"gpuplan catalog {gpu.id}",
                reference=reference.value if reference else None,
                reference_source=reference.source if reference else "",
            )
        )
    network = advertised_network_rate(offer)
    inter_node = by_key.get("collectives.all_reduce.inter_node", {}).get("measured")
    figures.append(
        Figure(
            "collectives.all_reduce.inter_node",
            "per-GPU network rate from all-reduce busbw",
            "collective_inter_node",
            "bytes/s",
            inter_node,
            spec=network,
            spec_source=f"offer {offer.id}: {offer.topology.summary()}" if network else "",
            reference=references.LINK_EFFICIENCY * network if network else None,
            reference_source=references.LINK_RULE_SOURCE if network else "",
            skip_reason=""
            if network and inter_node is not None
            else "the offer advertises no network rate"
            if not network
            else "the run has no multi-node collectives (see gpuplan bench --collectives)",
        )
    )
    judged = [figure_to_dict(figure, DEFAULT_THRESHOLDS) for figure in figures]
    return {
        "run_id": run.get("id"),
        "offer": offer.id,
        "gpu": gpu.id,
        "checks": checks,
        "figures": judged,
    }
