"""Which catalog GPU a cloud catalog's accelerator name stands for.

SkyPilot and gpuhunt name accelerators by model, not by part: SkyPilot's ``H100`` is the SXM
board on AWS and GCP but the PCIe card on RunPod and in Lambda's ``gpu_1x_h100_pcie``;
gpuhunt's ``A100`` is the 40 GB and the 80 GB card, its ``V100`` the 16 GB and the 32 GB one.
The names each catalog GPU is sold under live in gpus.toml (``skypilot_names``,
``gpuhunt_names``). A row is matched in four steps:

1. the catalog GPUs that list the row's name (none: the row is skipped, naming the name);
2. those whose memory is within :data:`MEMORY_TOLERANCE` of the row's GPU memory, when the row
   states one (a GPU the catalog holds in another memory size is skipped, naming the size);
3. those of the form factor the row's instance type or GPU description names (``pcie``,
   ``sxm``), when it names one;
4. of several left, the one that is not a PCIe card: clouds rent these parts as 8-GPU SXM
   boards and say "PCIe" where they rent the card. Several non-PCIe GPUs left (no memory to
   tell the two V100s apart) skip the row as ambiguous.
"""

from __future__ import annotations

from dataclasses import dataclass

MEMORY_TOLERANCE = 0.07
"""Relative difference between a row's GPU memory and a catalog GPU's that still matches:
gpuhunt's own rule for clouds that report GPU memory imprecisely
(``gpuhunt._internal.constraints.correct_gpu_memory_gib``, 7 %)."""
FORM_FACTOR_HINTS = ("pcie", "sxm")
"""Words in an instance type or GPU description that name a form factor."""


@dataclass(frozen=True)
class AcceleratorMatch:
    """The catalog GPU id a row maps to, or ``None`` and the reason it is skipped."""

    gpu_id: str | None
    reason: str = ""


def match_accelerator(
    names_key: str,
    name: str,
    memory_bytes: float | None = None,
    description: str = "",
    catalog_label: str = "",
) -> AcceleratorMatch:
    """Match one row (see the module docstring). ``names_key`` is a gpus.toml key of
    ``catalog.CLOUD_NAME_KEYS``; ``description`` is the row's instance type and GPU
    description, searched for form-factor words; ``catalog_label`` names the catalog in
    reasons ("SkyPilot")."""
    from gpuplan.catalog import gpus_by_cloud_name, load_gpu

    label = catalog_label or names_key.removesuffix("_names")
    ids = gpus_by_cloud_name(names_key).get(name.strip().lower(), ())
    if not ids:
        return AcceleratorMatch(
            None, f"no catalog GPU is sold as {label} {name!r} (gpus.toml {names_key})"
        )
    gpus = [load_gpu(gpu_id) for gpu_id in ids]
    if memory_bytes is not None and memory_bytes > 0:
        gpus = [
            gpu
            for gpu in gpus
            if abs(gpu.memory_bytes - memory_bytes) <= MEMORY_TOLERANCE * gpu.memory_bytes
        ]
        if not gpus:
            return AcceleratorMatch(
                None,
                f"{label} {name!r} with {memory_bytes / 2**30:g} GiB: no catalog GPU of that "
                f"name has that memory ({', '.join(ids)})",
            )
    text = description.lower()
    for hint in FORM_FACTOR_HINTS:
        if hint in text:
            named = [gpu for gpu in gpus if hint in gpu.form_factor.lower()]
            if not named:
                return AcceleratorMatch(
                    None,
                    f"{label} {name!r} names a {hint.upper() if hint == 'sxm' else 'PCIe'} part "
                    f"({description.strip()}); no catalog GPU of that name is one "
                    f"({', '.join(gpu.id for gpu in gpus)})",
                )
            gpus = named
    if len(gpus) > 1:
        boards = [gpu for gpu in gpus if "pcie" not in gpu.form_factor.lower()]
        if len(boards) != 1:
            return AcceleratorMatch(
                None,
                f"{label} {name!r} may be {' or '.join(gpu.id for gpu in gpus)}; the row states "
                "no GPU memory or form factor to tell them apart",
            )
        gpus = boards
    return AcceleratorMatch(gpus[0].id)
