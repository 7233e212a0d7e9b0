"""Verdicts: each measured figure against its basis (published achievable value, spec or claim).

Every figure carries three numbers, as the DCGM, Azure NHC and ClusterMAX health checks do:
``measured``, ``spec`` (the catalog's data-sheet peak) and ``reference`` (a published
achievable value, an advertised claim, or gpuplan's own prediction), with both ratios. The
verdict is PASS, WARN, FAIL or SKIPPED; a SKIPPED figure always says why. A part that raised
leaves one ERROR figure carrying the exception's one-line message.

Default thresholds follow the conventions the reference tools write down: DCGM's diag-skus
treat below 0.75 x a measured reference as broken; nccl-tests' ``NCCL_TESTS_MIN_BW`` gate fails
below 0.9 x the expected bus bandwidth; gpu-fryer fails a GPU more than 10 % below the best
GPU of the node; SuperBench flags more than 5 % below baseline as degraded.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field, replace
from typing import Any

from gpuplan.errors import InputError

PASS, WARN, FAIL, SKIPPED, ERROR = "PASS", "WARN", "FAIL", "SKIPPED", "ERROR"
SEVERITY = {SKIPPED: 0, PASS: 1, WARN: 2, FAIL: 3, ERROR: 4}
FAILING = frozenset({FAIL, ERROR})
"""Verdicts that make ``gpuplan bench`` exit 1: a figure below its floor, or a part that broke."""

AT_LEAST = "at_least"
"""PASS when measured >= pass_at x basis; the basis is the figure's reference."""
AT_MOST = "at_most"
"""PASS when measured <= pass_at (an absolute bound, e.g. a 2 % fluctuation)."""
WITHIN = "within"
"""PASS when |measured / reference - 1| <= pass_at (a prediction checked against reality)."""


@dataclass(frozen=True)
class Threshold:
    """When a figure passes, warns or fails, and why those numbers."""

    kind: str
    pass_at: float
    warn_at: float
    why: str

    def describe(self) -> str:
        if self.kind == AT_LEAST:
            return f"PASS >= {self.pass_at:g} x reference, WARN >= {self.warn_at:g} x"
        if self.kind == AT_MOST:
            return f"PASS <= {self.pass_at:g}, WARN <= {self.warn_at:g}"
        return f"PASS within ±{self.pass_at:.0%} of reference, WARN within ±{self.warn_at:.0%}"


DEFAULT_THRESHOLDS: dict[str, Threshold] = {
    "matmul": Threshold(
        AT_LEAST,
        0.90,
        0.75,
        "full search (published best shapes + coarse grid): within 10 % of the published MAMF "
        "is healthy; below 0.75 x a measured reference is DCGM's floor for a broken GPU",
    ),
    "matmul_quick": Threshold(
        AT_LEAST,
        0.85,
        0.75,
        "quick search: mamf-finder's README says a quick run reaches 80-90 % of the maximum; "
        "gpuplan's quick search starts at the published best shape, so below the middle of "
        "that band warns; below 0.75 is DCGM's floor",
    ),
    "matmul_model_shapes": Threshold(
        AT_LEAST,
        0.70,
        0.50,
        "reference is this machine's best sweep shape; a model GEMM far below it wastes the GPU "
        "(hidden sizes or TP splits that are not multiples of 128)",
    ),
    "hbm": Threshold(
        AT_LEAST,
        0.90,
        0.75,
        "reference is a published STREAM-like copy/read rate (Azure AI-benchmarking-guide) or "
        "0.80 x spec; 0.75 x a measured reference is DCGM's floor for a broken GPU",
    ),
    "pcie": Threshold(
        AT_LEAST,
        0.90,
        0.75,
        "pinned copies; reference is 88 % (H2D) / 87 % (D2H) of the link's maximum line rate "
        "(8xH200 Gen5 x16: 55.4 / 55.1 of 63 GB/s, ml-engineering)",
    ),
    "collective_intra_node": Threshold(
        AT_LEAST,
        0.90,
        0.75,
        "nccl-tests NCCL_TESTS_MIN_BW gate: fail below 0.9 x the expected bus bandwidth",
    ),
    "collective_inter_node": Threshold(
        AT_LEAST,
        0.90,
        0.75,
        "nccl-tests NCCL_TESTS_MIN_BW gate: fail below 0.9 x the expected bus bandwidth",
    ),
    "storage": Threshold(
        AT_LEAST,
        1.00,
        0.75,
        "reference is the advertised throughput (--storage-claim or the offer); below it the "
        "claim fails",
    ),
    "fluctuation": Threshold(
        AT_MOST,
        0.02,
        0.05,
        "seed: compute fluctuation <= 2 %; SuperBench flags > 5 % below baseline as degraded",
    ),
    "gpu_spread": Threshold(
        AT_MOST,
        0.05,
        0.10,
        "gpu-fryer fails a GPU > 10 % below the node's best; ml-engineering sees up to 5 % "
        "on healthy 8-GPU nodes",
    ),
    "throttle": Threshold(
        AT_MOST,
        0.01,
        0.05,
        "share of samples with HW slowdown, thermal or power-brake throttling (Azure NHC warns "
        "on anything but idle and SW power cap)",
    ),
    "health_findings": Threshold(
        AT_MOST,
        0.0,
        1e9,
        "faults the driver reports without a measurement (clocks locked below the maximum, a "
        "lowered power limit, a slot below the GPU's PCIe generation, pending or failed row "
        "remaps): Azure NHC azure_gpu_app_clocks.nhc warns on them; a WARN, never a FAIL",
    ),
    "ecc": Threshold(
        AT_MOST,
        0.0,
        0.0,
        "any uncorrectable ECC error during the run (ml-engineering: RMA the GPU)",
    ),
    "xid": Threshold(
        AT_MOST,
        0.0,
        0.0,
        "any critical XID the driver raised during the run marks the GPU unhealthy "
        "(Azure/azurehpc-health-checks, customTests/azure_gpu_xid.nhc, XID_EC)",
    ),
    "remapped_rows": Threshold(
        AT_MOST,
        0.0,
        0.0,
        "rows remapped for uncorrectable errors during the run, a pending remap (needs a GPU "
        "reset) or a failed one (no spare rows: replace the GPU): NVIDIA, A100 GPU Memory Error "
        "Management (docs.nvidia.com/deploy/a100-gpu-mem-error-mgmt)",
    ),
    "probe_throughput": Threshold(
        WITHIN,
        0.15,
        0.30,
        "reference is gpuplan's prediction for the same layout; ±15 % is the speed model's "
        "target accuracy",
    ),
    "probe_memory": Threshold(
        WITHIN,
        0.10,
        0.25,
        "reference is gpuplan's predicted peak for the same layout; ±10 % is the memory model's "
        "target accuracy",
    ),
}


class ThresholdError(InputError):
    """A threshold override that cannot be read."""


def parse_threshold_override(text: str, base: Mapping[str, Threshold]) -> tuple[str, Threshold]:
    """Read ``CATEGORY=PASS:WARN`` (``matmul=0.85:0.7``), keeping the category's kind."""
    category, separator, values = text.partition("=")
    category = category.strip()
    if not separator or category not in base:
        known = ", ".join(base)
        raise ThresholdError.of("error.threshold_form", text=repr(text), accepted=known)
    pass_text, colon, warn_text = values.partition(":")
    try:
        pass_at = float(pass_text)
        warn_at = float(warn_text) if colon else pass_at
    except ValueError as error:
        raise ThresholdError.of("error.threshold_numbers", text=repr(text)) from error
    if pass_at < 0 or warn_at < 0:
        raise ThresholdError.of("error.threshold_negative", text=repr(text))
    original = base[category]
    return category, replace(
        original, pass_at=pass_at, warn_at=warn_at, why=f"set on the command line ({text})"
    )


@dataclass
class Figure:
    """One measured quantity with what it should be and where those numbers come from."""

    key: str
    label: str
    category: str
    unit: str
    measured: float | None
    spec: float | None = None
    spec_source: str = ""
    reference: float | None = None
    reference_source: str = ""
    skip_reason: str = ""
    details: dict[str, Any] = field(default_factory=dict)
    error: str = ""
    """The one-line exception of a part that could not finish; the verdict is then ERROR."""


@dataclass(frozen=True)
class Verdict:
    status: str
    threshold: str
    reason: str


def _ratio(measured: float | None, basis: float | None) -> float | None:
    if measured is None or not basis:
        return None
    return measured / basis


def judge(figure: Figure, threshold: Threshold) -> Verdict:
    """The verdict of one figure under one threshold, with the reason in words."""
    rule = threshold.describe()
    if figure.error:
        return Verdict(ERROR, rule, figure.error)
    if figure.skip_reason:
        return Verdict(SKIPPED, rule, figure.skip_reason)
    if figure.measured is None:
        return Verdict(SKIPPED, rule, "not measured")
    if threshold.kind == AT_MOST:
        value = figure.measured
        status = (
            PASS if value <= threshold.pass_at else WARN if value <= threshold.warn_at else FAIL
        )
        return Verdict(status, rule, f"measured {value:.4g}; {threshold.why}")
    ratio = _ratio(figure.measured, figure.reference)
    if ratio is None:
        return Verdict(
            SKIPPED,
            rule,
            "no reference value for this hardware: measured only, nothing to hold it to",
        )
    if threshold.kind == AT_LEAST:
        status = (
            PASS if ratio >= threshold.pass_at else WARN if ratio >= threshold.warn_at else FAIL
        )
    else:
        error = abs(ratio - 1.0)
        status = (
            PASS if error <= threshold.pass_at else WARN if error <= threshold.warn_at else FAIL
        )
    return Verdict(status, rule, f"{ratio:.1%} of reference; {threshold.why}")


def figure_to_dict(figure: Figure, thresholds: Mapping[str, Threshold]) -> dict[str, Any]:
    """JSON view of one figure and its verdict, in base units."""
    verdict = judge(figure, thresholds[figure.category])
    return {
        "key": figure.key,
        "label": figure.label,
        "category": figure.category,
        "unit": figure.unit,
        "measured": figure.measured,
        "spec": figure.spec,
        "spec_source": figure.spec_source,
        "spec_ratio": _ratio(figure.measured, figure.spec),
        "reference": figure.reference,
        "reference_source": figure.reference_source,
        "reference_ratio": _ratio(figure.measured, figure.reference),
        "verdict": verdict.status,
        "threshold": verdict.threshold,
        "reason": verdict.reason,
        "details": figure.details,
    }


def worst_verdict(statuses: Iterable[str]) -> str:
    """ERROR over FAIL over WARN over PASS over SKIPPED; SKIPPED when nothing was judged."""
    return max(statuses, key=SEVERITY.__getitem__, default=SKIPPED)
