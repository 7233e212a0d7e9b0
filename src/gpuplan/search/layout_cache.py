"""The layouts of one search and their memory, computed once for every GPU type.

Neither the parallel layouts of a scale-up domain and set of GPU counts
(:func:`~gpuplan.search.layouts.enumerate_layouts`) nor their peak and host memory on nodes of
one size (:func:`~gpuplan.estimate.memory.estimate_memory`) depends on the GPU: its capacity
only decides which fit. The same holds for the terms of the step-time model that come from the job and the
layout alone (``estimate.step_terms``). The catalog's GPUs share a few node sizes and counts,
so one search meets the same layouts again and again; :class:`SearchCache` enumerates each
once, computes its step terms once, and estimates the memory of all that a step of the search
needs in one vectorised call.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

import numpy as np
import numpy.typing as npt

from gpuplan.estimate.memory import estimate_memory
from gpuplan.estimate.step_terms import LayoutTerms, PackedTerms, layout_terms, pack
from gpuplan.hardware.cluster import Cluster
from gpuplan.scenario import Scenario
from gpuplan.search.layouts import Candidates, concatenate, enumerate_layouts
from gpuplan.search.machines import Machine

FloatArray = npt.NDArray[np.float64]
IntArray = npt.NDArray[np.int64]

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


@dataclass(frozen=True)
class StoredTerms:
    """The step terms of one enumeration's layouts, kept for those that fit the largest GPU of
    the search (no other can fit anywhere): ``columns`` gives each layout's column in
    ``packed``, -1 for a layout without terms."""

    packed: PackedTerms
    columns: IntArray

    def take(self, rows: npt.NDArray[np.bool_]) -> PackedTerms:
        """The terms of the layouts ``rows`` selects, every one of which has terms."""
        return self.packed.take(self.columns[rows])


@dataclass
class SearchCache:
    """The enumerations (:data:`LayoutKey`), their memory (:data:`MemoryKey`), their step
    terms and their goodput (``reliability.estimate_reliability``, which depends on the GPU
    count only) of one search, for one scenario and request. ``usable_bytes``: the most memory any GPU of the
    search offers a layout, which bounds the layouts worth step terms."""

    layouts: dict[LayoutKey, Candidates] = field(default_factory=dict)
    memory: dict[MemoryKey, LayoutMemory] = field(default_factory=dict)
    terms: dict[LayoutKey, StoredTerms] = field(default_factory=dict)
    goodput: dict[LayoutKey, FloatArray] = field(default_factory=dict)
    usable_bytes: float = math.inf
    clusters: dict[tuple[int, int], tuple[Machine, Cluster]] = field(default_factory=dict)
    """Each machine's cluster by the machine's identity and GPU count, beside the machine
    (which it keeps alive, so that its identity is not reused)."""

    def candidates(self, scenario: Scenario, key: LayoutKey) -> Candidates:
        """The layouts of ``key``, enumerated on first use."""
        if key not in self.layouts:
            self.layouts[key] = enumerate_layouts(scenario, *key)
        return self.layouts[key]

    def layout_terms(self, scenario: Scenario, key: LayoutKey) -> StoredTerms:
        """The step model's terms of ``key``'s layouts (``estimate.step_terms``): those
        :meth:`estimate` kept, or all of them computed on first use."""
        if key not in self.terms:
            layouts = self.candidates(scenario, key)
            packed = pack(layout_terms(scenario.job, layouts.layout))
            self.terms[key] = StoredTerms(packed, np.arange(len(layouts)))
        return self.terms[key]

    def layout_goodput(self, scenario: Scenario, key: LayoutKey) -> FloatArray:
        """The goodput of ``key``'s layouts: what :meth:`estimate` kept, or computed now."""
        if key not in self.goodput:
            self.goodput[key] = _goodput(scenario, self.candidates(scenario, key).count)
        return self.goodput[key]

    def feasible(
        self,
        scenario: Scenario,
        keys: Sequence[LayoutKey],
        masks: Sequence[npt.NDArray[np.bool_]],
    ) -> tuple[Candidates, LayoutTerms, FloatArray]:
        """The layouts of each enumeration of ``keys`` that its mask selects, one enumeration
        after the other, with their step terms and goodput (each selected layout fits some GPU,
        so it has terms)."""
        layouts = concatenate(
            [
                part if mask.all() else part.take(mask)
                for part, mask in zip(
                    (self.candidates(scenario, key) for key in keys), masks, strict=True
                )
            ]
        )
        terms = PackedTerms.concatenate(
            [
                self.layout_terms(scenario, key).take(mask)
                for key, mask in zip(keys, masks, strict=True)
            ]
        )
        goodput = np.concatenate(
            [
                self.layout_goodput(scenario, key)[mask]
                for key, mask in zip(keys, masks, strict=True)
            ]
        )
        return layouts, terms.unpack(), goodput

    def layout_memory(self, scenario: Scenario, key: MemoryKey) -> LayoutMemory:
        """The memory of ``key``'s layouts (:meth:`estimate` first when not yet known)."""
        if key not in self.memory:
            self.estimate(scenario, [key])
        return self.memory[key]

    def estimate(self, scenario: Scenario, keys: Iterable[MemoryKey]) -> None:
        """Estimate the memory of every key not yet known in one call over all their layouts,
        each on ``min(node, count)`` GPUs per node, and their step terms where not yet known;
        every row is estimated on its own, so the figures are those of one call per key."""
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
        ends = np.cumsum([len(part) for part in parts]).tolist()
        starts = [0, *ends[:-1]]
        for key, start, end in zip(missing, starts, ends, strict=True):
            rows = slice(start, end)
            self.memory[key] = LayoutMemory(estimate.peak_bytes[rows], estimate.host_bytes[rows])
        if any(layouts not in self.terms for layouts, _ in missing):
            fits_somewhere = estimate.peak_bytes <= self.usable_bytes
            terms = pack(layout_terms(scenario.job, every.take(fits_somewhere).layout))
            columns = np.where(fits_somewhere, np.cumsum(fits_somewhere) - 1, -1)
            goodput = _goodput(scenario, every.count)
            for (layouts, _), start, end in zip(missing, starts, ends, strict=True):
                self.terms.setdefault(layouts, StoredTerms(terms, columns[start:end]))
                self.goodput.setdefault(layouts, goodput[start:end])


def _goodput(scenario: Scenario, counts: IntArray) -> FloatArray:
    """The scenario's goodput on ``counts`` GPUs, one figure per layout."""
    reliability = scenario.reliability.estimate(scenario.job, counts)
    return np.asarray(reliability.goodput, dtype=float) * np.ones(len(counts))
