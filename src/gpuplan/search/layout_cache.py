"""The layouts of one search and their memory, computed once for every GPU type.

Neither the parallel layouts of a scale-up domain and set of GPU counts
(:func:`~gpuplan.search.layouts.enumerate_layouts`) nor their peak and host memory on nodes of
one size (:func:`~gpuplan.estimate.memory.estimate_memory`) depends on the GPU: its capacity
only decides which fit. The catalog's GPUs share a few node sizes and counts, so one search
meets the same layouts again and again; :class:`SearchCache` enumerates each once and estimates
the memory of all that a step of the search needs in one vectorised call.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field

import numpy as np
import numpy.typing as npt

from gpuplan.estimate.memory import estimate_memory
from gpuplan.scenario import Scenario
from gpuplan.search.layouts import Candidates, concatenate, enumerate_layouts

FloatArray = npt.NDArray[np.float64]

LayoutKey = tuple[int, tuple[int, ...], bool]
"""What an enumeration depends on: the scale-up domain, the GPU counts, whether to offload."""
MemoryKey = tuple[LayoutKey, int]
"""An enumeration and the GPUs per node, which the host memory of offload plans counts."""


@dataclass(frozen=True)
class LayoutMemory:
    """Peak bytes per GPU and host bytes per node of one enumeration's layouts on nodes of one
    size (``MemoryEstimate.peak_bytes`` and ``host_bytes``)."""

    peak_bytes: FloatArray
    host_bytes: FloatArray


@dataclass
class SearchCache:
    """The enumerations (:data:`LayoutKey`) and their memory (:data:`MemoryKey`) of one search,
    for one scenario and headroom."""

    layouts: dict[LayoutKey, Candidates] = field(default_factory=dict)
    memory: dict[MemoryKey, LayoutMemory] = field(default_factory=dict)

    def candidates(self, scenario: Scenario, key: LayoutKey) -> Candidates:
        """The layouts of ``key``, enumerated on first use."""
        if key not in self.layouts:
            self.layouts[key] = enumerate_layouts(scenario, *key)
        return self.layouts[key]

    def layout_memory(self, scenario: Scenario, key: MemoryKey) -> LayoutMemory:
        """The memory of ``key``'s layouts (:meth:`estimate` first when not yet known)."""
        if key not in self.memory:
            self.estimate(scenario, [key])
        return self.memory[key]

    def estimate(self, scenario: Scenario, keys: Iterable[MemoryKey]) -> None:
        """Estimate the memory of every key not yet known in one call over all their layouts,
        each on ``min(node, count)`` GPUs per node; every row is estimated on its own, so the
        figures are those of one call per key."""
        missing = []
        for key in dict.fromkeys(keys):
            if key in self.memory:
                continue
            if len(self.candidates(scenario, key[0])):
                missing.append(key)
            else:
                self.memory[key] = LayoutMemory(np.zeros(0), np.zeros(0))
        if not missing:
            return
        parts = [self.layouts[layouts] for layouts, _ in missing]
        every = concatenate(parts)
        nodes = np.concatenate(
            [np.minimum(node, part.count) for (_, node), part in zip(missing, parts, strict=True)]
        )
        estimate = estimate_memory(
            scenario.job,
            every.layout,
            np.inf,
            flash_attention=scenario.strategy.flash_attention,
            gpus_per_node=nodes,
        )
        bounds = np.cumsum([len(part) for part in parts])[:-1]
        for key, peak, host in zip(
            missing,
            np.split(np.asarray(estimate.peak_bytes), bounds),
            np.split(np.asarray(estimate.host_bytes), bounds),
            strict=True,
        ):
            self.memory[key] = LayoutMemory(peak, host)
