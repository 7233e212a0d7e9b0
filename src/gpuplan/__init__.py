"""gpuplan: plan GPU rentals for LLM training.

The public API is two functions (see DESIGN contracts):

    gpuplan.estimate(scenario) -> dict   # memory, throughput, duration of one layout
    gpuplan.plan(scenario, ...) -> list  # every feasible plan, best first

Both are imported lazily so that ``import gpuplan`` stays fast.
"""

from __future__ import annotations

from typing import Any

__version__ = "0.1.0"
__all__ = ["__version__", "estimate", "plan"]


def __getattr__(name: str) -> Any:
    if name == "estimate":
        import gpuplan.estimate

        return gpuplan.estimate
    if name == "plan":
        from gpuplan.api import plan

        return plan
    raise AttributeError(f"module 'gpuplan' has no attribute {name!r}")
