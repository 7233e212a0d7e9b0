"""Hypothesis strategies for everything a user hands gpuplan: JSON-like values, config.json
mappings, unit strings, TCO, offers and usage files, and web request bodies. Each mixes
plausible values with the hostile classes of issue reports: NaN, infinities, 10^20, negative
and zero sizes, non-ASCII digits, wrong types, deep nesting."""

from __future__ import annotations

import copy
import tomllib
from pathlib import Path
from typing import Any

from hypothesis import strategies as st

CATALOG_MODELS = ["llama-3.1-8b", "qwen3-30b-a3b", "llama-3.1-70b", "mixtral-8x7b"]
FAMILIES = ["llama", "mistral", "mixtral", "qwen2", "qwen3", "qwen3_moe", "deepseek_v3", "gemma2",
            "phi3", "gpt2", "bloom", "gpt_oss", "llama4", "llama4_text", "unknown-family",
            ""]  # fmt: skip

numbers = st.one_of(
    st.integers(min_value=-(10**20), max_value=10**20),
    st.integers(min_value=0, max_value=300_000),
    st.floats(allow_nan=True, allow_infinity=True),
    st.sampled_from([0, 1, -1, 2**31, 2**63, 1e400, float("nan"), 0.5, 1e-300]),
)
scalars = st.one_of(
    st.none(),
    st.booleans(),
    numbers,
    st.text(max_size=12),
    st.sampled_from(["llama-3.1-8b", "1B", "20B", "bf16", "fp8", "lora", "full", "²", "١٢"]),
)
values = st.recursive(
    scalars,
    lambda inner: (
        st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4)
    ),
    max_leaves=12,
)

hostile = st.one_of(numbers, scalars, values)
"""Anything a field may be given: numbers of every kind, scalars, nested lists and tables."""


def mutated(
    base: dict[str, Any],
    paths: list[tuple[str | int, ...]],
    replacement: st.SearchStrategy[Any] = hostile,
    most: int = 2,
) -> st.SearchStrategy[dict[str, Any]]:
    """``base`` (a valid input) with up to ``most`` of its ``paths`` replaced by a drawn value
    or removed: each case is mostly right, so it reaches the code past the first check."""

    @st.composite
    def build(draw: st.DrawFn) -> dict[str, Any]:
        document = copy.deepcopy(base)
        chosen = draw(st.lists(st.sampled_from(paths), unique=True, max_size=most))
        for path in chosen:
            parent: Any = document
            for key in path[:-1]:
                parent = _child(parent, key)
            last = path[-1]
            if isinstance(parent, dict) and draw(st.integers(0, 5)) == 0:
                parent.pop(last, None)
            elif isinstance(parent, dict) or _child(parent, last) is not None:
                parent[last] = draw(replacement)
        return document

    return build()


def _child(container: Any, key: str | int) -> Any:
    """``container[key]`` when it holds that key or index, else None."""
    if isinstance(container, dict):
        return container.get(key)
    if isinstance(container, list) and isinstance(key, int) and 0 <= key < len(container):
        return container[key]
    return None


def _paths(document: Any, prefix: tuple[str | int, ...] = ()) -> list[tuple[str | int, ...]]:
    """Every key path of a nested document, tables and lists included."""
    found: list[tuple[str | int, ...]] = []
    items = document.items() if isinstance(document, dict) else enumerate(document)
    for key, value in items:
        found.append((*prefix, key))
        if isinstance(value, dict | list):
            found += _paths(value, (*prefix, key))
    return found


sizes = st.one_of(
    st.sampled_from([1, 2, 8, 16, 32, 64, 128, 4096, 8192, 14336, 32000, 128256]),
    numbers,
    scalars,
)
CONFIG_KEYS = ("num_hidden_layers", "hidden_size", "num_attention_heads", "num_key_value_heads",
               "intermediate_size", "vocab_size", "head_dim", "num_experts", "num_local_experts",
               "num_experts_per_tok", "moe_intermediate_size", "max_position_embeddings",
               "n_routed_experts", "first_k_dense_replace", "intermediate_size_mlp",
               "interleave_moe_layer_step", "attention_chunk_size", "no_rope_layer_interval",
               "experts_per_token")  # fmt: skip
configs: st.SearchStrategy[dict[str, Any]] = st.fixed_dictionaries(
    {},
    optional={
        "model_type": st.sampled_from(FAMILIES) | scalars,
        **{key: sizes for key in CONFIG_KEYS},
        "tie_word_embeddings": st.booleans() | scalars,
        "hidden_act": st.sampled_from(["silu", "gelu", "relu", "swiglu"]) | scalars,
        "rope_theta": numbers,
        "rms_norm_eps": numbers,
        "layer_norm_epsilon": numbers,
        "rope_scaling": st.fixed_dictionaries(
            {},
            optional={
                "rope_type": st.sampled_from(["llama3", "yarn", "linear"]) | scalars,
                "factor": numbers | scalars,
            },
        )
        | values,
        "scoring_func": st.sampled_from(["softmax", "sigmoid"]) | scalars,
        "norm_topk_prob": st.booleans() | scalars,
        "n_group": sizes,
        "topk_group": sizes,
        "routed_scaling_factor": numbers | scalars,
        "router_aux_loss_coef": numbers | scalars,
        "seq_aux": st.booleans() | scalars,
        "topk_method": st.sampled_from(["greedy", "noaux_tc"]) | scalars,
        "sliding_window": sizes,
        "sliding_window_pattern": sizes,
        "layer_types": st.lists(
            st.sampled_from(["sliding_attention", "full_attention", "chunked_attention"])
        )
        | values,
        "no_rope_layers": st.lists(st.sampled_from([0, 1])) | values,
        "moe_layers": st.lists(st.integers(0, 8)) | values,
        "vision_config": st.fixed_dictionaries({}, optional={"hidden_size": sizes}) | values,
    },
)
DENSE_CONFIG = {
    "model_type": "llama", "num_hidden_layers": 32, "hidden_size": 4096,
    "num_attention_heads": 32, "num_key_value_heads": 8, "intermediate_size": 14336,
    "vocab_size": 128256, "max_position_embeddings": 131072, "tie_word_embeddings": False,
    "hidden_act": "silu",
}  # fmt: skip
MOE_CONFIG = {
    "model_type": "qwen3_moe", "num_hidden_layers": 48, "hidden_size": 2048,
    "num_attention_heads": 32, "num_key_value_heads": 4, "head_dim": 128,
    "intermediate_size": 6144, "vocab_size": 151936, "num_experts_per_tok": 8,
    "moe_intermediate_size": 768, "num_experts": 128,
}  # fmt: skip
"""Llama 3.1 8B's and Qwen3 30B-A3B's config.json (their Hugging Face repositories)."""
configs = st.one_of(
    configs,
    mutated(DENSE_CONFIG, [(key,) for key in [*DENSE_CONFIG, *CONFIG_KEYS]], sizes),
    mutated(MOE_CONFIG, [(key,) for key in [*MOE_CONFIG, *CONFIG_KEYS]], sizes),
)
"""config.json mappings: Hugging Face keys with any sizes, types and families, and real
configs with one or two keys changed."""

UNIT_ALPHABET = "0123456789.,_ eE+-$¥€£BMKTGkmgtbiIdhmsywM/%²١"
unit_strings = st.one_of(
    st.text(alphabet=UNIT_ALPHABET, max_size=16),
    st.from_regex(r"\A[-+]?\d{1,25}(\.\d{0,5})?([eE][-+]?\d{1,12})?\s?[A-Za-z$¥€/]{0,6}\Z"),
    st.text(max_size=10),
)
"""What a user types as tokens, durations, bytes, bandwidths, FLOP/s and money."""


def _table(keys: list[str]) -> st.SearchStrategy[dict[str, object]]:
    return st.dictionaries(st.sampled_from(keys), numbers | scalars, max_size=len(keys))


tco_documents: st.SearchStrategy[dict[str, Any]] = st.fixed_dictionaries(
    {
        "tco": st.fixed_dictionaries(
            {},
            optional={
                "currency": st.sampled_from(["CNY", "USD", "EUR", "XXX"]) | scalars,
                "years": numbers | scalars,
                "gpus": numbers | scalars,
                "utilization": numbers,
            },
        ),
        "buy": _table(["gpus", "servers", "network", "cost_of_capital", "residual_share"]),
        "rent": _table(["monthly", "hourly"]),
    },
    optional={
        "operations": _table(["staff", "colocation", "power", "refresh"]),
        "power": _table(["pue", "gpu_tdp_watts", "price_per_kwh", "host_watts"]),
        "extra": values,
    },
)
SEED_TCO = tomllib.loads(
    (Path(__file__).parents[2] / "examples" / "seed-tco.toml").read_text("utf-8")
)
tco_documents = tco_documents | mutated(SEED_TCO, _paths(SEED_TCO))
"""TCO files as parsed TOML: the sections of examples/seed-tco.toml with any values, and the
seed article's own file with one or two values changed."""

plans = st.fixed_dictionaries(
    {
        "mode": st.sampled_from(["hourly", "monthly", "spot", "yearly", "per-second"]) | scalars,
        "price": numbers | scalars,
        "per": st.sampled_from(["gpu", "instance", "node"]) | scalars,
    },
    optional={
        "source": st.text(max_size=8),
        "observed": st.sampled_from(["2026-11-01", "2026-13-01", "2031-01-01", "x"]) | scalars,
        "granularity": st.sampled_from(["1s", "1m", "1h", "0s", "-1h"]) | scalars,
        "minimum": st.sampled_from(["1h", "10m"]) | scalars,
        "term": st.sampled_from(["1y", "30d"]) | scalars,
        "upfront_share": numbers,
    },
)
offers_entries = st.fixed_dictionaries(
    {
        "id": st.text(min_size=1, max_size=10) | scalars,
        "gpu": st.sampled_from(["h100-sxm-80gb", "H100 SXM", "rtx-4090-24gb", "h900"]) | scalars,
        "gpus": numbers | scalars,
        "plans": st.lists(plans, max_size=3) | scalars,
    },
    optional={
        "topology": st.dictionaries(
            st.sampled_from(["intra_node", "p2p", "network", "source", "observed"]),
            st.sampled_from(["nvlink4", "pcie4", "none", "ib-ndr-400g", True]) | scalars,
        ),
        "fees": st.lists(
            st.dictionaries(
                st.sampled_from(["category", "item", "price", "unit", "source", "observed"]),
                st.sampled_from(["egress", "storage_running", "tax", "GB", "share"]) | scalars,
            ),
            max_size=2,
        ),
        "min_instances": numbers,
        "max_instances": numbers,
    },
)
offers_documents: st.SearchStrategy[dict[str, Any]] = st.fixed_dictionaries(
    {
        "provider": st.text(max_size=8) | scalars,
        "currency": st.sampled_from(["USD", "CNY", "XXX"]) | scalars,
        "offers": st.lists(offers_entries, max_size=3) | scalars,
    },
    optional={"tax_included": scalars, "fees": values},
)
OWN_OFFERS = {
    "provider": "Mine",
    "currency": "USD",
    "tax_included": False,
    "fees": [
        {"category": "egress", "item": "egress", "unit": "GB", "source": "s",
         "observed": "2026-11-01", "tiers": [{"up_to": 100, "price": 0.09}, {"price": 0.05}]},
        {"category": "tax", "item": "VAT", "unit": "share", "price": 0.2, "source": "s",
         "observed": "2026-11-01"},
    ],
    "offers": [
        {
            "id": "mine-h100-x8",
            "gpu": "h100-sxm-80gb",
            "gpus": 8,
            "min_instances": 1,
            "max_instances": 16,
            "topology": {"intra_node": "nvlink4", "p2p": True, "network": "ib-ndr-400g",
                         "source": "s", "observed": "2026-11-01"},
            "plans": [
                {"mode": "hourly", "price": 2.5, "per": "gpu", "source": "s",
                 "observed": "2026-11-01", "granularity": "1m"},
                {"mode": "spot", "price": 1.5, "per": "gpu", "source": "s",
                 "observed": "2026-11-01"},
                {"mode": "monthly", "price": 12000, "per": "instance", "source": "s",
                 "observed": "2026-11-01"},
            ],
        }
    ],
}  # fmt: skip
"""A provider file in the catalog's schema: tiered egress, a tax share, three plans."""
offers_documents = offers_documents | mutated(OWN_OFFERS, _paths(OWN_OFFERS))
"""Offers files as parsed TOML, in the catalog's schema with any values, and a valid file
with one or two values changed."""

OWN_RATES = {
    "base": "USD",
    "rates": [
        {"currency": "CNY", "per_unit": 0.14, "source": "my bank", "observed": "2026-11-01"},
        {"currency": "GBP", "per_unit": 1.27, "source": "my bank", "observed": "2026-11",
         "date_quality": "month"},
    ],
}  # fmt: skip
"""A rates file in currency.toml's form (``--fx-file``): a known base and a new currency."""
rates_documents = mutated(OWN_RATES, _paths(OWN_RATES))

usage_cells = st.one_of(
    st.sampled_from(["pod-a", "2026-11-02T08:00:00Z", "2026-11-03T09:00:00Z", "1", "8", "0", "-1",
                     "²", "١", "1e400", "nan", "inf", "", "2026-02-30T00:00:00Z", '"', "a,b"]),
    st.text(max_size=10),
)  # fmt: skip
usage_files: st.SearchStrategy[str] = st.builds(
    lambda header, rows: "\n".join([",".join(header), *(",".join(row) for row in rows)]),
    st.sampled_from(
        [
            ["instance", "start", "stop", "gpus", "storage_gb", "egress_gb"],
            ["instance", "start", "stop", "gpus"],
            ["instance", "start"],
        ]
    ),
    st.lists(st.lists(usage_cells, min_size=1, max_size=7), max_size=5),
)
USAGE_ROWS = [
    ["instance", "start", "stop", "gpus", "storage_gb", "egress_gb"],
    ["pod-a", "2026-11-02T08:00:00Z", "2026-11-02T20:30:00Z", "1", "500", "20"],
    ["pod-a", "2026-11-03T09:00:00Z", "2026-11-04T09:00:00Z", "2", "500", "0"],
    ["pod-b", "2026-11-03T09:00:00+08:00", "2026-11-03T10:00:00+08:00", "8", "", ""],
]
"""examples/usage-sample.csv's shape: two instances, offsets, empty optional cells."""
usage_files = usage_files | mutated(
    {"rows": USAGE_ROWS},
    [("rows", row, cell) for row in range(4) for cell in range(6)],
    usage_cells,
).map(lambda document: "\n".join(",".join(row) for row in document["rows"]))
"""Usage CSV text: headers with and without the optional columns, cells of any kind, and a
valid file with one or two cells changed."""

scenario_fields = {
    "model": st.sampled_from(CATALOG_MODELS) | configs | scalars,
    "method": st.sampled_from(["full", "lora", "qlora", "freeze"]) | scalars,
    "tokens": unit_strings | scalars,
    "seq_len": sizes,
    "global_batch": sizes,
    "precision": st.sampled_from(["bf16", "fp8", "fp32"]) | scalars,
}
web_bodies: dict[str, st.SearchStrategy[dict[str, Any]]] = {
    "/api/plan": st.fixed_dictionaries(
        {"model": scenario_fields["model"]},
        optional={
            **{key: strategy for key, strategy in scenario_fields.items() if key != "model"},
            "budget": unit_strings | scalars,
            "deadline": unit_strings | scalars,
            "max_gpus": st.integers(min_value=1, max_value=64) | scalars,
            "gpus": st.lists(st.sampled_from(["h100", "rtx-4090", "x"]), max_size=2) | scalars,
            "objective": st.sampled_from(["cost", "time", "pareto", "x"]),
        },
    ),
    "/api/estimate": st.fixed_dictionaries(
        {
            "model": scenario_fields["model"],
            "gpu": st.sampled_from(["h100", "rtx-4090-24gb", "910B", "x"]) | scalars,
        },
        optional={
            **{key: strategy for key, strategy in scenario_fields.items() if key != "model"},
            "count": sizes,
            "strategy": st.text(alphabet="tpzero=0123456789 ,", max_size=16) | values,
        },
    ),
    "/api/quote": st.fixed_dictionaries(
        {
            "offer": st.sampled_from(["xingyu-a100-40gb-x4", "lambda-h100-sxm-x8", "x"]) | scalars,
            "duration": unit_strings | scalars,
        },
        optional={
            "instances": sizes,
            "tokens": unit_strings | scalars,
            "currency": st.sampled_from(["USD", "CNY", "XXX"]) | scalars,
        },
    ),
    "/api/tco": st.fixed_dictionaries({"inputs": tco_documents | values}),
}
VALID_BODIES: dict[str, dict[str, Any]] = {
    "/api/plan": {"model": "llama-3.1-8b", "method": "qlora", "tokens": "100M",
                  "seq_len": 2048, "max_gpus": 8, "budget": "$500", "objective": "cost"},
    "/api/estimate": {"model": "llama-3.1-8b", "method": "lora", "gpu": "h100", "count": 8,
                      "tokens": "1B", "strategy": "zero=2"},
    "/api/quote": {"offer": "xingyu-a100-40gb-x4", "duration": "40d", "instances": 1,
                   "tokens": "1B", "currency": "USD"},
    "/api/tco": {"inputs": SEED_TCO},
}  # fmt: skip
web_bodies = {
    path: strategy | mutated(VALID_BODIES[path], _paths(VALID_BODIES[path]))
    for path, strategy in web_bodies.items()
}
"""JSON bodies for each POST endpoint of the API: its fields with any values, and a valid
body with one or two fields changed."""
