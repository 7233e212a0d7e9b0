"""The seed article's three users, as ready-made plan requests (`gpuplan plan --preset NAME`).

Each preset is a scenario mapping (the README's "Scenarios", without hardware and strategy: the
search chooses them) plus the plan options the user would give.
"""

from __future__ import annotations

from typing import Any

PRESETS: dict[str, dict[str, Any]] = {
    "student": {
        "description": "an individual with at most ¥2,000 a month fine-tuning a 7-13B model",
        "scenario": {
            "model": "llama-3.1-8b",
            "method": "qlora",
            "lora": {"rank": 16, "alpha": 32, "targets": "all-linear"},
            "seq_len": 2048,
            "global_batch": 32,
            "tokens": "100M",
        },
        "options": {"budget": "¥2000", "deadline": "30d", "max_gpus": 8, "objective": "cost"},
    },
    "startup": {
        "description": "a start-up with ¥20,000-100,000 a month fine-tuning a 34-70B model",
        "scenario": {
            "model": "llama-3.1-70b",
            "method": "full",
            "seq_len": 4096,
            "global_batch": 256,
            "tokens": "2B",
        },
        "options": {"budget": "¥100000", "deadline": "30d", "max_gpus": 256, "objective": "cost"},
    },
    "enterprise": {
        "description": "an enterprise pre-training a 100B+ model",
        "scenario": {
            "model": "llama-3.1-405b",
            "method": "full",
            "seq_len": 8192,
            "global_batch": 2048,
            "tokens": "2T",
        },
        "options": {"deadline": "120d", "max_gpus": 16384, "objective": "time"},
    },
}
