"""The seed article, checked: each figure gpuplan can compute, beside gpuplan's answer.

The article's figures are quoted below as data (they are its claims, with the section that
makes them); every gpuplan figure is computed through gpuplan's API when the page is
generated. ``python scripts/seed_check.py`` (or ``python -m gpuplan.report.seed_check``) writes
``docs/seed-check.md`` and ``docs/seed-check.zh.md``.
"""

from __future__ import annotations

import argparse
from collections.abc import Callable
from dataclasses import dataclass, field
from decimal import Decimal
from pathlib import Path
from typing import Any

from gpuplan.errors import InputError
from gpuplan.i18n import translate
from gpuplan.report.document import Table
from gpuplan.report.markdown import markdown_table
from gpuplan.units import SECONDS_PER_DAY, SECONDS_PER_HOUR, SECONDS_PER_MONTH
from gpuplan.writing import write_atomically

HOLDS, CLOSE, WRONG = "✓", "≈", "✗"
CLOSE_SHARE = 0.15
HOLDS_SHARE = 0.02

# --- the article's claims (shared/seed/gpu-rental-guide-2026.zh.md) --------------------------

SEED_MEMORY_RULE_BYTES_PER_PARAM = 12
"""§二.1: 单卡最小显存（GB）= 参数量（B）×12（参数2GB+梯度2GB+优化器状态8GB）+ 激活值."""
SEED_ADAM_GB_PER_BILLION = 8
"""§二.1: Adam优化器状态占用显存最多（每十亿参数占用8GB）."""
SEED_MEMORY_TABLE = (
    ("7B", "llama-2-7b", 84),
    ("13B", "llama-2-13b", 156),
    ("34B", "yi-34b", 408),
    ("70B", "llama-3.1-70b", 840),
)
"""§二.1 table, 单卡最小显存要求（GB）: 7B-13B 84-156, 34B-70B 408-840 (params x 12)."""
SEED_PEAKS = (
    ("RTX 4090", "rtx-4090-24gb", 330, 660),
    ("A100 40GB", "a100-sxm-40gb", 312, 624),
    ("H100 80GB", "h100-sxm-80gb", 989, 1978),
)
"""§二.2 table: FP16算力 and Tensor Core算力 (TFLOPS)."""
SEED_DAYS = (
    ("llama-2-7b", "rtx-4090-24gb", 1, 14),
    ("llama-2-7b", "a100-sxm-40gb", 1, 16),
    ("llama-2-7b", "h100-sxm-80gb", 1, 5),
    ("llama-3.1-70b", "a100-sxm-40gb", 4, 28),
    ("llama-3.1-70b", "h100-sxm-80gb", 4, 12),
    ("llama-3.1-70b", "rtx-4090-24gb", 4, None),
)
"""§二.2 table: 7B模型单卡训练周期（天）, 70B模型4卡集群训练周期（天）; None = 无法适配."""
SEED_LINKS = (
    ("rtx-4090-24gb", "PCIe 4.0", 32, 35),
    ("a100-sxm-40gb", "NVLink 3.0", 600, 15),
    ("h100-sxm-80gb", "NVLink 4.0", 900, 8),
)
"""§二.3 table: 单卡互联带宽（GB/s）and 8卡集群通信开销（%）."""
SEED_YEARLY = (
    ("A100 x4", "xingyu-a100-40gb-x4", 27_600, 177_120),
    ("H100 x8", "xingyu-h100-x8", 192_000, 1_257_600),
    ("H100 x8 (§四.3)", "xingyu-h100-x8", 192_000, 957_600),
)
"""§三 table 年成本（元，6.5折）and §四.3 年成本95.76万元, against 月成本."""
SEED_STUDENT = ("xingyu-rtx-4090-x1", 1.86, 50, 93)
"""§四.3: 时租1.86元/小时，月均使用50小时，成本仅93元."""
SEED_TOKENS_PER_DAY = (("rtx-4090-24gb", 33_000), ("a100-sxm-40gb", 30_000))
"""§四.1: RTX 4090单卡每日训练7B模型约3.3万tokens，A100单卡每日训练7B模型约3万tokens."""
SEED_UNIT_COST = (
    ("7B, RTX 4090 x1", "llama-2-7b", "rtx-4090-24gb", 1, "xingyu-rtx-4090-x1", 1_110, 1_000_000, 1.08),
    ("70B, A100 x4", "llama-3.1-70b", "a100-sxm-40gb", 4, "xingyu-a100-40gb-x4", 27_600, 10_000_000, 2.76),
    ("100B+, H100 x8", "llama-3.1-405b", "h100-sxm-80gb", 8, "xingyu-h100-x8", 192_000, 70_000_000, 27.43),
)  # fmt: skip
"""§四.2 table: 月租金, 月训练tokens数（万）, 单位训练成本（元/1000 tokens）."""
SEED_TCO = {
    "tco": {"currency": "CNY", "years": 3, "utilization": 1.0, "gpus": 8},
    "buy": {"gpus": 4_800_000, "cost_of_capital": 0.0, "residual_share": 0.0},
    "operations": {"staff": 360_000, "colocation": 80_000, "power": 40_000, "refresh": 1_200_000},
    "rent": {"monthly": 106_700},
}
"""§一.1 table inputs: 480万 hardware, 48万/year operations, 120万/year refresh, 月租10.67万."""
SEED_TCO_TOTALS = (9_840_000, 3_840_000, 0.60)
"""§一.1: 3年总成本 984万 (self-build) and 384万 (rent), 平均节省60%."""


@dataclass
class Check:
    """One claim of the article beside gpuplan's answer."""

    section: str
    group: str
    claim: tuple[str, dict[str, Any]]
    seed: str
    ours: str
    difference: str
    verdict: str
    reason: tuple[str, dict[str, Any]] = ("", {})
    notes: dict[str, str] = field(default_factory=dict)


def _number(value: float, digits: int = 0) -> str:
    return f"{value:,.{digits}f}"


def compare_numbers(seed: float, ours: float) -> tuple[str, str]:
    """``(difference text, verdict)`` of the article's figure against gpuplan's."""
    if seed == 0:
        return "-", WRONG if ours else HOLDS
    share = ours / seed - 1
    if abs(share) <= HOLDS_SHARE:
        verdict = HOLDS
    elif abs(share) <= CLOSE_SHARE:
        verdict = CLOSE
    else:
        verdict = WRONG
    ratio = ours / seed
    text = f"{share:+.0%}" if 0.5 <= ratio <= 2 else f"×{ratio:,.3g}"
    return text, verdict


# --- gpuplan's answers ---------------------------------------------------------------------


def _full_memory(model: str, gpu: str, count: int) -> dict[str, Any]:
    """The leanest full fine-tune layout gpuplan knows on ``count`` GPUs (ZeRO-3 over all of
    them, full recompute, micro-batch 1, sequence 2048)."""
    from gpuplan.api import estimate

    strategy: dict[str, Any] = {"zero": 3 if count > 1 else 0, "micro_batch": 1}
    strategy["recompute"] = "full"
    scenario = {
        "model": model,
        "method": "full",
        "seq_len": 2048,
        "global_batch": count,
        "hardware": {"gpu": gpu, "count": count},
        "strategy": strategy,
    }
    return estimate(scenario)["memory"]


def best_speed(model: str, gpu: str, count: int) -> dict[str, Any] | None:
    """The fastest plan gpuplan finds for ``model`` on exactly ``count`` x ``gpu``, trying full
    training, then LoRA, then QLoRA; None when none fits."""
    from gpuplan.api import plan_search

    for method in ("full", "lora", "qlora"):
        scenario = {
            "model": model,
            "method": method,
            "seq_len": 2048,
            "tokens": "1B",
            "hardware": {"gpu": gpu, "count": count},
        }
        try:
            result = plan_search(scenario, objective="time", max_gpus=count, limit=100)
        except InputError:
            continue
        rows = [row for row in result["plans"] if row["count"] == count]
        if rows:
            row = rows[0]
            return {
                "method": method,
                "tokens_per_second": row["throughput"]["tokens_per_second"],
                "mfu": row["throughput"]["mfu"],
            }
    return None


def memory_checks() -> list[Check]:
    from gpuplan.api import estimate
    from gpuplan.catalog import load_model

    checks = []
    for label, model, seed_gb in SEED_MEMORY_TABLE:
        result = estimate(
            {
                "model": model,
                "method": "full",
                "seq_len": 4096,
                "global_batch": 1,
                "hardware": {"gpu": "b300-sxm-288gb", "count": 1},
                "strategy": {"zero": 0, "micro_batch": 1, "recompute": "full"},
            }
        )
        parts = result["memory"]["parts"]
        states = (parts["weights"] + parts["gradients"] + parts["optimizer"]) / 1e9
        difference, verdict = compare_numbers(seed_gb, states)
        params = load_model(model).total_params
        checks.append(
            Check(
                "§二.1",
                "memory",
                (
                    "seed.claim.memory_rule",
                    {"model": f"{label} ({model}, {params / 1e9:.2f}B)", "size": seed_gb},
                ),
                f"{seed_gb:,} GB",
                f"{states:,.0f} GB (peak {result['memory']['peak_bytes'] / 1e9:,.0f} GB)",
                difference,
                verdict,
                ("seed.reason.memory_rule", {}),
            )
        )
    result = estimate(
        {
            "model": "llama-2-7b",
            "method": "full",
            "hardware": {"gpu": "b300-sxm-288gb", "count": 1},
            "strategy": {"zero": 0},
        }
    )
    per_billion = result["memory"]["parts"]["optimizer"] / load_model("llama-2-7b").total_params
    difference, verdict = compare_numbers(SEED_ADAM_GB_PER_BILLION, per_billion)
    checks.append(
        Check(
            "§二.1",
            "memory",
            ("seed.claim.adam_states", {}),
            f"{SEED_ADAM_GB_PER_BILLION} GB",
            f"{per_billion:.1f} GB",
            difference,
            verdict,
            ("seed.reason.adam_states", {}),
        )
    )
    return checks


def compute_checks() -> list[Check]:
    from gpuplan.catalog import load_gpu

    checks = []
    for label, gpu_id, fp16, tensor in SEED_PEAKS:
        dense = load_gpu(gpu_id).peak("bf16") / 1e12
        difference, verdict = compare_numbers(fp16, dense)
        reason = "seed.reason.peak_ok" if verdict == HOLDS else "seed.reason.peak_fp16_accumulate"
        checks.append(
            Check("§二.2", "compute", ("seed.claim.peak_fp16", {"gpu": label, "tflops": fp16}),
                  f"{fp16:,}", f"{dense:,.0f}", difference, verdict, (reason, {}))
        )  # fmt: skip
        difference, verdict = compare_numbers(tensor, dense)
        checks.append(
            Check("§二.2", "compute", ("seed.claim.peak_tensor", {"gpu": label, "tflops": tensor}),
                  f"{tensor:,}", f"{dense:,.0f}", difference, verdict, ("seed.reason.peak_sparse", {}))
        )  # fmt: skip
    for model, gpu_id, count, days in SEED_DAYS:
        memory = _full_memory(model, gpu_id, count)
        peak = f"{memory['peak_bytes'] / 2**30:,.0f}"
        if days is None:
            verdict = WRONG if memory["fits"] else HOLDS
            checks.append(
                Check("§二.2", "compute", ("seed.claim.no_fit", {"model": model, "count": count, "gpu": gpu_id}),
                      "-", f"{peak} GiB/GPU", "-", verdict, ("seed.reason.no_fit_ok", {"peak": peak}))
            )  # fmt: skip
            continue
        speed = best_speed(model, gpu_id, count)
        trained = speed["tokens_per_second"] * days * SECONDS_PER_DAY if speed else 0.0
        ours = f"full: {'fits' if memory['fits'] else 'does not fit'} ({peak} GiB/GPU)" + (
            f"; {speed['method']}: {speed['tokens_per_second']:,.0f} tokens/s" if speed else ""
        )
        checks.append(
            Check(
                "§二.2",
                "compute",
                ("seed.claim.days", {"model": model, "count": count, "gpu": gpu_id, "days": days}),
                f"{days} d",
                ours,
                "-",
                HOLDS if memory["fits"] else WRONG,
                (
                    "seed.reason.days_full",
                    {
                        "model": model, "count": count, "gpu": gpu_id, "peak": peak,
                        "method": speed["method"] if speed else "-",
                        "tokens_per_s": f"{speed['tokens_per_second']:,.0f}" if speed else "-",
                        "days": days, "trained": f"{trained / 1e9:,.1f}B",
                    },
                ),
            )
        )  # fmt: skip
    return checks


def interconnect_checks() -> list[Check]:
    from gpuplan.api import estimate
    from gpuplan.catalog import load_gpu

    checks = []
    for gpu_id, link, bandwidth, overhead in SEED_LINKS:
        gpu = load_gpu(gpu_id)
        one_way = gpu.intra_node_bandwidth / 1e9
        both = (gpu.intra_node_bandwidth_vendor_bidirectional or 2 * gpu.intra_node_bandwidth) / 1e9
        difference, verdict = compare_numbers(bandwidth, one_way)
        if verdict == WRONG and abs(both / bandwidth - 1) <= HOLDS_SHARE:
            verdict = CLOSE
        checks.append(
            Check("§二.3", "interconnect", ("seed.claim.link", {"gpu": gpu_id, "link": link, "bandwidth": bandwidth}),
                  f"{bandwidth:,} GB/s", f"{one_way:,.0f} GB/s", difference, verdict,
                  ("seed.reason.link", {"both": f"{both:,.0f} GB/s"}))
        )  # fmt: skip
        result = estimate(
            {
                "model": "llama-2-7b",
                "method": "full",
                "seq_len": 4096,
                "global_batch": 8,
                "hardware": {"gpu": gpu_id, "count": 8},
                "strategy": {"zero": 3, "micro_batch": 1, "recompute": "full"},
            }
        )
        throughput = result["throughput"]
        compute_parts = ("matmul", "attention", "memory_bound", "overhead", "optimizer", "bubble")
        exposed = sum(
            seconds
            for name, seconds in throughput["breakdown"].items()
            if name not in compute_parts
        )
        share = exposed / throughput["step_seconds"]
        difference, verdict = compare_numbers(overhead / 100, share)
        if abs(share * 100 - overhead) <= 5:
            verdict = CLOSE if verdict == WRONG else verdict
        strategy = result["strategy"]
        layout = (
            f"dp{strategy['dp']} zero{strategy['zero']}, seq 4096, one micro-batch per GPU, "
            "full recompute"
        )
        checks.append(
            Check("§二.3", "interconnect", ("seed.claim.comm", {"gpu": gpu_id, "share": f"{overhead}%"}),
                  f"{overhead}%", f"{share:.1%}", difference, verdict,
                  ("seed.reason.comm", {"model": "llama-2-7b", "layout": layout}))
        )  # fmt: skip
    return checks


def _plans_alone(offer_id: str, seconds: float) -> dict[str, float]:
    from gpuplan.pricing.offers import OfferBook
    from gpuplan.pricing.quote import quote

    result = quote(OfferBook.build().get(offer_id), seconds).to_dict()
    return {entry["mode"]: float(entry["total_compute"]) for entry in result["plans_alone"]}


def tier_checks() -> list[Check]:
    from gpuplan.pricing.offers import OfferBook
    from gpuplan.pricing.quote import quote

    checks = []
    for tier, offer_id, _monthly, yearly in SEED_YEARLY:
        ours = _plans_alone(offer_id, 365 * SECONDS_PER_DAY).get("yearly", 0.0)
        difference, verdict = compare_numbers(yearly, ours)
        checks.append(
            Check("§三" if "§" not in tier else "§四.3", "tiers",
                  ("seed.claim.yearly", {"tier": tier, "amount": f"¥{yearly:,}"}),
                  f"¥{yearly:,}", f"¥{ours:,.0f}", difference, verdict, ("seed.reason.yearly", {}))
        )  # fmt: skip
    offer_id, _, hours, amount = SEED_STUDENT
    total = float(quote(OfferBook.build().get(offer_id), hours * SECONDS_PER_HOUR).total)
    difference, verdict = compare_numbers(amount, total)
    checks.append(
        Check("§四.3", "tiers", ("seed.claim.student", {}), f"¥{amount}", f"¥{total:,.2f}",
              difference, verdict, ("seed.reason.student", {}))
    )  # fmt: skip
    return checks


def unit_cost_checks() -> list[Check]:
    checks = []
    for gpu_id, per_day in SEED_TOKENS_PER_DAY:
        speed = best_speed("llama-2-7b", gpu_id, 1)
        ours = speed["tokens_per_second"] * SECONDS_PER_DAY if speed else 0.0
        difference, verdict = compare_numbers(per_day, ours)
        checks.append(
            Check(
                "§四.1",
                "unit_cost",
                ("seed.claim.tokens_day", {"gpu": gpu_id, "tokens": f"{per_day:,}"}),
                f"{per_day:,}",
                f"{ours:,.0f}",
                difference,
                verdict,
                (
                    "seed.reason.tokens_day",
                    {
                        "method": speed["method"] if speed else "-",
                        "model": "llama-2-7b",
                        "gpu": gpu_id,
                        "tokens_per_s": f"{speed['tokens_per_second']:,.0f}" if speed else "-",
                        "mfu": f"{speed['mfu']:.0%}" if speed else "-",
                    },
                ),
            )
        )
    for tier, model, gpu_id, count, offer_id, rent, tokens, cost in SEED_UNIT_COST:
        arithmetic = rent / tokens * 1000
        difference, verdict = compare_numbers(cost, arithmetic)
        checks.append(
            Check("§四.2", "unit_cost",
                  ("seed.claim.unit_arith", {"tier": tier, "rent": f"¥{rent:,}", "tokens": f"{tokens:,}", "cost": cost}),
                  f"¥{cost}", f"¥{arithmetic:,.3g}", difference, verdict, ("seed.reason.unit_arith", {}))
        )  # fmt: skip
        speed = best_speed(model, gpu_id, count)
        monthly = _plans_alone(offer_id, SECONDS_PER_MONTH).get("monthly", float(rent))
        if speed:
            per_thousand = monthly / (speed["tokens_per_second"] * SECONDS_PER_MONTH) * 1000
            difference, verdict = compare_numbers(cost, per_thousand)
            ours = f"¥{per_thousand:.2g}"
        else:
            difference, verdict, ours = "-", WRONG, "does not fit"
        checks.append(
            Check(
                "§四.2",
                "unit_cost",
                ("seed.claim.unit_real", {"tier": tier, "cost": cost}),
                f"¥{cost}",
                ours,
                difference,
                verdict,
                (
                    "seed.reason.unit_real",
                    {
                        "method": speed["method"] if speed else "-",
                        "model": model,
                        "tokens_per_s": f"{speed['tokens_per_second']:,.0f}" if speed else "-",
                        "mfu": f"{speed['mfu']:.0%}" if speed else "-",
                    },
                ),
            )
        )
    return checks


def tco_checks() -> list[Check]:
    from gpuplan.pricing.tco import compare, parse_tco

    result = compare(parse_tco(SEED_TCO, "seed article §一.1"))
    buy, rent, saving = SEED_TCO_TOTALS
    checks = []
    for key, seed, ours in (
        ("seed.claim.tco_buy", buy, float(result["buy_total"])),
        ("seed.claim.tco_rent", rent, float(result["rent_total"])),
    ):
        difference, verdict = compare_numbers(seed, ours)
        checks.append(
            Check("§一.1", "tco", (key, {}), f"¥{seed:,}", f"¥{ours:,.0f}", difference, verdict,
                  ("seed.reason.tco", {}))
        )  # fmt: skip
    share = float(result["rent_saving_share"] or Decimal(0))
    difference, verdict = compare_numbers(saving, share)
    checks.append(
        Check("§一.1", "tco", ("seed.claim.tco_saving", {}), f"{saving:.0%}", f"{share:.1%}",
              difference, verdict, ("seed.reason.tco_saving", {}))
    )  # fmt: skip
    return checks


GROUPS: tuple[tuple[str, Callable[[], list[Check]]], ...] = (
    ("memory", memory_checks),
    ("compute", compute_checks),
    ("interconnect", interconnect_checks),
    ("tiers", tier_checks),
    ("unit_cost", unit_cost_checks),
    ("tco", tco_checks),
)


def all_checks() -> list[Check]:
    """Every check, computed now."""
    return [check for _, build in GROUPS for check in build()]


def render(checks: list[Check], lang: str) -> str:
    """The page in ``lang`` as Markdown."""
    t = lambda key, **values: translate(key, lang, **values)  # noqa: E731
    counts = {
        verdict: sum(check.verdict == verdict for check in checks)
        for verdict in (HOLDS, CLOSE, WRONG)
    }
    parts = [
        f"# {t('seed.title')}",
        "",
        t("seed.intro"),
        "",
        "**" + t("seed.summary", held=counts[HOLDS], close=counts[CLOSE], wrong=counts[WRONG], total=len(checks)) + "**",
    ]  # fmt: skip
    headers = [
        t(f"seed.col.{name}")
        for name in ("section", "claim", "seed", "gpuplan", "difference", "verdict", "reason")
    ]
    for group, _ in GROUPS:
        rows = [
            [
                check.section,
                t(check.claim[0], **check.claim[1]),
                check.seed,
                check.ours,
                check.difference,
                check.verdict,
                t(check.reason[0], **check.reason[1]) if check.reason[0] else "",
            ]
            for check in checks
            if check.group == group
        ]
        parts += [
            "",
            f"## {t(f'seed.section.{group}')}",
            "",
            markdown_table(Table(headers, rows), markup=True),
        ]
    parts += ["", t("seed.footer"), ""]
    return "\n".join(parts)


def write(directory: Path) -> list[Path]:
    """Compute once, write ``seed-check.md`` and ``seed-check.zh.md`` into ``directory``."""
    checks = all_checks()
    directory.mkdir(parents=True, exist_ok=True)
    written = []
    for lang, name in (("en", "seed-check.md"), ("zh", "seed-check.zh.md")):
        written.append(write_atomically(directory / name, render(checks, lang), overwrite=True))
    return written


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument(
        "--output", type=Path, default=Path("docs"), help="directory (default docs/)"
    )
    arguments = parser.parse_args(argv)
    for path in write(arguments.output):
        print(f"wrote {path}")


if __name__ == "__main__":
    main()
