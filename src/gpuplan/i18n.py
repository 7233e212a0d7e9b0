"""Every user-facing string of the reports, the web app and the CLI tables, in English and
简体中文, with number, money and duration formatting per language.

``translate(key, lang, **values)`` looks ``key`` up in the catalog for ``lang`` (English when
the language is unknown) and fills ``{placeholders}`` with ``str.format``. The CLI's language
comes from ``--lang`` or the locale (``LC_ALL``, ``LC_MESSAGES``, ``LANG``); the web app's from
``?lang=``, a cookie, or ``Accept-Language``.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from decimal import Decimal

LANGUAGES = ("en", "zh")
DEFAULT_LANGUAGE = "en"
CURRENCY_SYMBOLS = {"CNY": "¥", "USD": "$", "EUR": "€"}

EN: dict[str, str] = {
    # languages
    "lang.en": "English",
    "lang.zh": "中文",
    # units and words
    "unit.days": "{value} days",
    "unit.day": "{value} day",
    "unit.hours": "{value} h",
    "unit.gib": "GiB",
    "unit.gb": "GB",
    "unit.seconds": "s",
    "word.yes": "yes",
    "word.no": "no",
    "word.none": "none",
    "word.total": "total",
    "word.warning": "warning",
    "word.fits": "fits",
    "word.does_not_fit": "does not fit",
    # table columns
    "col.rank": "#",
    "col.gpus": "GPUs",
    "col.layout": "layout",
    "col.gib_per_gpu": "GiB/GPU",
    "col.tokens_per_s": "tokens/s",
    "col.mfu": "MFU",
    "col.days": "days",
    "col.cost": "cost",
    "col.per_m_tok": "per M tok",
    "col.offer": "offer",
    "col.part": "part",
    "col.seconds": "seconds",
    "col.share": "share",
    "col.kind": "kind",
    "col.item": "item",
    "col.quantity": "quantity",
    "col.amount": "amount",
    "col.observed": "observed",
    "col.source": "source",
    "col.year": "year",
    "col.buy": "buy",
    "col.rent": "rent",
    "col.buy_minus_rent": "buy - rent",
    "col.plan": "plan",
    "col.duration": "duration",
    "col.mode": "billing mode",
    "col.compute_cost": "compute cost",
    "col.assumption": "assumption",
    "col.value": "value",
    "col.field": "field",
    "col.name": "name",
    "col.params": "parameters",
    "col.memory": "memory",
    "col.bf16_peak": "dense bf16 peak",
    "col.provider": "provider",
    "col.price": "price",
    "col.measurement": "measurement",
    "col.measured": "measured",
    "col.reference": "reference",
    "col.verdict": "verdict",
    # memory parts
    "part.weights": "weights",
    "part.gradients": "gradients",
    "part.optimizer": "optimizer states (+ fp32 master)",
    "part.activations": "activations",
    "part.logits": "logits and loss",
    "part.buffers": "framework buffers",
    "part.fragmentation": "allocator fragmentation",
    "part.context": "CUDA context + NCCL",
    "memory.allocated": "allocated (max_memory_allocated)",
    "memory.reserved": "reserved (max_memory_reserved)",
    "memory.peak": "peak (nvidia-smi)",
    "memory.capacity": "GPU capacity",
    "memory.title": "Memory per GPU: {model} on {count} x {gpu}",
    "memory.fits": "fits: peak {peak} GiB of {usable} GiB usable ({margin} safety margin)",
    "memory.does_not_fit": (
        "does not fit: peak {peak} GiB exceeds {usable} GiB usable ({margin} safety margin) "
        "by {short} GiB"
    ),
    "framework.title": "Framework profile: {name} (scenario framework: {base})",
    "framework.overrides": "scenario overrides: {overrides}",
    "framework.part.weights": "weights and master copy",
    "framework.part.gradients": "gradients",
    "framework.part.optimizer": "optimizer states",
    "framework.part.kernels": "activation kernels",
    "framework.part.buffers": "communication buffers",
    "framework.part.offload": "CPU offload",
    "memory.host": "host memory per node for CPU offload: {need} ({pinned} pinned), node RAM {capacity}",
    # step-time parts
    "step.matmul": "compute: matmuls",
    "step.attention": "compute: attention core",
    "step.memory_bound": "compute: memory-bound ops",
    "step.overhead": "compute: per-layer overhead",
    "step.tensor_parallel": "exposed comm: tensor parallel",
    "step.context_parallel": "exposed comm: context parallel",
    "step.expert_parallel": "exposed comm: expert all-to-all",
    "step.pipeline_send": "exposed comm: pipeline sends",
    "step.zero3_gather": "exposed comm: ZeRO-3/FSDP gathers",
    "step.bubble": "pipeline bubble",
    "step.data_parallel": "exposed comm: gradient sync",
    "step.optimizer": "optimizer step",
    "step.title": "Step time: {seconds} s per optimizer step",
    # plan
    "plan.title": "Plans by {objective}: {shown} shown, {evaluated} layouts evaluated in {seconds} s",
    "plan.pareto_line": "Pareto front (cost vs days):",
    "plan.skipped": "skipped: {reason}",
    "plan.no_plan": "no plan: {reason}",
    "plan.no_offer": "no offer",
    "plan.price_age": "price {days} d old ({observed})",
    "plan.price_undated": "price undated ({observed})",
    "plan.gpu_hours": "{hours} GPU-h",
    "plan.free": "free",
    "plan.job": "Job: {model}, {method}, {tokens} tokens of {seq_len}-token sequences, global batch {batch} sequences ({batch_tokens} tokens; {batch_rule}); budget {budget}; deadline {deadline}",
    "plan.unoffered": "not sold by any catalog offer: {gpus}",
    "plan.none": "none",
    "col.machine": "machine",
    "col.notes": "notes",
    "batch.scenario": "as given",
    "batch.compute-optimal": "chosen by gpuplan: DeepSeek LLM's compute-optimal batch",
    "batch.fine-tuning": "chosen by gpuplan: the fine-tuning default",
    "report.job": "Job",
    "report.scenario.global_batch_tokens": "global batch (tokens)",
    "report.scenario.batch_rule": "batch chosen",
    "report.scenario.max_gpus": "largest cluster",
    "notice.no_cluster_network": "{instances} instances joined over their public Ethernet: the offer lists no network between instances (--allow-unlisted-network)",
    "notice.unlisted_topology": "{offer} states no topology: modelled as the GPU's usual server, one instance per job",
    "notice.stale_price": "{offer}: the price used was observed {observed}, {days} days ago (older than {limit} days)",
    "notice.undated_price": "{offer}: the price used comes from an undated source ({observed}); its age is unknown",
    "notice.seed_claims": "{offer}: prices are claims ({claims}), not a price list",
    "notice.bubble": "the pipeline bubble is {share} of the step",
    "notice.startup": "start-up ({minutes} min) is {share} of the run",
    "notice.communication": "exposed communication is {share} of the step",
    "notice.config_defaults": "{model}: the config leaves out {keys}; the {family} family's transformers defaults were taken",
    "notice.spot": (
        "{offer} on spot: {interruptions} interruptions expected at {rate}/h per instance "
        "({rate_source}), {lost} lost each ({lost_source}); the run takes {expected}"
    ),
    # quote
    "quote.header": "{offer} ({provider}): {instances} x {gpus} {gpu} for {duration}",
    "quote.mix": "Cheapest billing mix per instance: {mix}",
    "quote.unused": "(paid but unused: {duration})",
    "quote.billed": "{duration} billed",
    "quote.hidden": "{count} more fee items cost nothing here or have no public price (see --json).",
    "quote.fees_line": "Fees are {share} of the total. Per GPU-hour {per_gpu_hour}",
    "quote.per_million": "; per million trained tokens {amount}",
    "quote.plans_alone": "Each plan alone (compute): {plans}",
    "quote.spot": (
        "Spot: expected {expected} ({interruptions} interruptions at {rate}/h per instance, "
        "{rate_source}; {lost} lost each, {lost_source}) versus on-demand {fallback}"
    ),
    "quote.converted": "Converted {source} to {target} at {rate} ({origin}, {observed})",
    # tco
    "tco.title": "Buy versus rent over {years} years ({currency}, cumulative)",
    "tco.buy_line": (
        "Buy: capex {capex}, financing {financing}, refresh {refresh}/year, "
        "residual value {residual}"
    ),
    "tco.total_line": "Total: buy {buy} vs rent {rent}; renting saves {saving}",
    "tco.break_even_month": "Break-even month: {month}",
    "tco.never": "Cumulative rent never reaches the cost of owning within the horizon.",
    "tco.pays_off": "Buying pays off above {share} utilization.",
    "tco.never_pays": "Buying does not pay off at any utilization with these inputs.",
    # throughput lines
    "speed.throughput": (
        "throughput {tokens} tokens/s ({per_gpu} per GPU), {tflops} model TFLOP/s per GPU, "
        "MFU {mfu}, HFU {hfu} of the dense bf16 peak; matmuls in {dtype}"
    ),
    "speed.goodput": (
        "goodput {goodput}: checkpoint of {size} every {interval} (stall {stall}), "
        "one failure every {mtbf} expected"
    ),
    "speed.days": "{days} days to train {tokens} tokens",
    "interval.basis": (
        "{coverage} interval from the model's errors on {rows} published runs of sources it was "
        "not fitted on ({basis})"
    ),
    "interval.none": "no interval: the speed model has no recorded held-out errors",
    "interval.all_rows": "all runs",
    "interval.dense": "dense",
    "interval.gpus": "{gpus} GPUs",
    "speed.fp8_note": " (fp8 speeds up the matmuls only)",
    # reports
    "report.title.plan": "GPU rental plan",
    "report.title.estimate": "Training estimate",
    "report.title.quote": "Rental quote",
    "report.title.tco": "Buy versus rent",
    "report.title.bench": "Benchmark run",
    "report.generated": "Generated by gpuplan {version} on {date}",
    "report.answer": "The answer",
    "report.scenario": "Scenario",
    "report.plans": "Plans",
    "report.memory": "Memory per GPU",
    "report.step_time": "Step time",
    "report.pareto": "Cost versus days",
    "report.billing": "Billing modes for the chosen offer",
    "report.tco": "Buy versus rent",
    "report.quote_lines": "Itemized cost",
    "report.assumptions": "Assumptions and sources",
    "report.warnings": "Warnings",
    "report.measurements": "Measurements",
    "report.no_plan": "No plan meets the request: {reason}",
    "report.answer.plan": (
        "Rent {count} x {gpu} as {offer} ({machine}) for {days}: {cost} in total "
        "({per_million} per million tokens) at {provider}, billed {mix}."
    ),
    "report.answer.plan_unpriced": "Use {count} x {gpu} for {days}; no catalog offer prices it.",
    "report.answer.estimate": (
        "{model} on {count} x {gpu}: {fit_word}, peak {peak} GiB per GPU; {tokens_per_s} tokens/s, "
        "MFU {mfu}; {days}."
    ),
    "report.answer.estimate_nodays": (
        "{model} on {count} x {gpu}: {fit_word}, peak {peak} GiB per GPU; {tokens_per_s} tokens/s, "
        "MFU {mfu}."
    ),
    "report.answer.quote": (
        "{instances} x {offer} for {duration}: {total} in total, {per_gpu_hour} per GPU-hour, "
        "fees {fees_share} of the total."
    ),
    "report.answer.tco": (
        "Over {years} years buying costs {buy} and renting {rent}: renting saves {saving}."
    ),
    "report.answer.tco_buy": (
        "Over {years} years buying costs {buy} and renting {rent}: buying saves {saving}."
    ),
    "report.answer.bench": "Run {id} on {host}: {passed} of {total} checks pass.",
    "report.break_even": "Break-even: month {month}.",
    "report.no_break_even": "Renting stays cheaper over the whole horizon.",
    "report.memory_caption": "Peak memory per GPU by part, against the usable capacity.",
    "report.step_caption": "Where one optimizer step's time goes.",
    "report.pareto_caption": (
        "Every priced plan (dots) and the Pareto front (line): no plan is both cheaper and faster."
    ),
    "report.billing_caption": "The chosen offer under each billing mode alone, for the same job.",
    "report.tco_caption": "Cumulative cost of buying and of renting; the mark is the break-even.",
    "report.markdown_chart_note": "(chart in the HTML report)",
    "report.tco_plan_note": (
        "Buying {gpus} GPUs at the catalog price {price} each, with power at {kwh} per kWh and "
        "PUE {pue}, against renting the chosen offer around the clock."
    ),
    "report.scenario.model": "model",
    "report.scenario.method": "method",
    "report.scenario.tokens": "tokens",
    "report.scenario.seq_len": "sequence length",
    "report.scenario.global_batch": "global batch",
    "report.scenario.precision": "precision",
    "report.scenario.budget": "budget",
    "report.scenario.deadline": "deadline",
    "report.scenario.objective": "objective",
    "report.scenario.gpus": "GPUs",
    "report.scenario.providers": "providers",
    "report.scenario.hardware": "hardware",
    "report.scenario.strategy": "layout",
    # chart axes
    "axis.memory_gib": "memory per GPU (GiB, 2^30 bytes)",
    "axis.seconds": "seconds per step",
    "axis.days": "training time (days)",
    "axis.cost": "total cost ({currency})",
    "axis.year": "years",
    "axis.cumulative": "cumulative cost ({currency})",
    "chart.usable": "usable {value} GiB",
    "chart.capacity": "capacity",
    "chart.plans": "plans",
    "chart.pareto": "Pareto front",
    "chart.chosen": "chosen",
    "chart.break_even": "break-even",
    # assumptions
    "assume.gpu": "GPU {gpu}: specs",
    "assume.offer": "offer {offer}, plan {plan}",
    "assume.efficiency": "fitted speed efficiencies",
    "assume.efficiency_value": "{rows} measurements from {sources} sources, {method}",
    "assume.exchange": "exchange rate {currency}/{base}",
    "assume.tco": "TCO input {field}",
    "assume.headroom": "memory kept free per GPU",
    "assume.month": "a month is 30 days",
    "assume.dense": "peaks are dense (not sparse) tensor FLOP/s",
    "assume.power": "owning: power use and price",
    # web
    "web.title": "gpuplan",
    "web.tagline": "Plan GPU rentals for LLM training",
    "web.nav.plan": "Plan",
    "web.nav.estimate": "Estimate",
    "web.nav.quote": "Quote",
    "web.nav.tco": "Buy or rent",
    "web.nav.catalog": "Catalog",
    "web.nav.api": "API",
    "web.form.model": "Model (catalog name, or paste a config.json)",
    "web.form.config": "or upload a config.json (at most 64 KiB)",
    "web.form.method": "Method",
    "web.form.tokens": "Training tokens",
    "web.form.seq_len": "Sequence length",
    "web.form.global_batch": "Global batch (sequences)",
    "web.form.budget": "Budget",
    "web.form.deadline": "Deadline",
    "web.form.objective": "Objective",
    "web.form.max_gpus": "Largest cluster",
    "web.form.gpus": "Only these GPUs (comma-separated ids)",
    "web.form.providers": "Only these providers (comma-separated)",
    "web.form.currency": "Currency",
    "web.form.gpu": "GPU",
    "web.form.count": "Number of GPUs",
    "web.form.strategy": "Layout (optional, e.g. tp=2 pp=1 zero=3)",
    "web.form.offer": "Offer",
    "web.form.duration": "Duration",
    "web.form.instances": "Instances",
    "web.form.tco_file": "TCO inputs (TOML, see examples/seed-tco.toml)",
    "web.form.submit": "Compute",
    "web.form.example": "Load the seed article's example",
    "web.download.html": "Download the HTML report",
    "web.download.json": "Download the JSON",
    "web.error": "Cannot compute this: {message}",
    "web.catalog.models": "Models",
    "web.catalog.gpus": "GPUs",
    "web.catalog.offers": "Offers",
    "web.language": "Language",
    "web.intro.plan": (
        "Every GPU type, cluster size and parallel layout, priced at real dated offers, ranked."
    ),
    "web.intro.estimate": "One cluster and layout: memory part by part, step time, MFU and days.",
    "web.intro.quote": "The itemized cost of one offer for a duration, under every billing mode.",
    "web.intro.tco": "Buy versus rent over N years, from a TOML file of inputs.",
    "error.model_path": (
        "model: give a catalog name, paste or upload a config.json; paths on the server are not opened"
    ),
    "error.upload_size": "the uploaded file is larger than {limit} KiB",
    "error.upload_json": "the uploaded file is not a JSON object: {reason}",
    "error.pasted_json": "model: the pasted config.json is not a JSON object: {reason}",
    "error.number": "{field}: expected a whole number, got {value!r}",
    # seed check
    "seed.title": "The seed article, checked",
    "seed.intro": (
        "Every figure in the seed article (shared/seed/gpu-rental-guide-2026.zh.md) that gpuplan "
        "can compute, beside gpuplan's answer to the same question. The article's figures are "
        "quoted as data in `src/gpuplan/report/seed_check.py`; gpuplan's are computed by its API "
        "when this page is generated (`python scripts/seed_check.py`). ✓ the claim holds, "
        "≈ it holds within 15 % or only as arithmetic, ✗ it does not."
    ),
    "seed.col.section": "§",
    "seed.col.claim": "claim",
    "seed.col.seed": "article",
    "seed.col.gpuplan": "gpuplan",
    "seed.col.difference": "difference",
    "seed.col.verdict": "✓ ≈ ✗",
    "seed.col.reason": "why",
    "seed.summary": "{held} hold, {close} roughly hold, {wrong} do not, of {total} figures.",
    "seed.section.memory": "Memory",
    "seed.section.compute": "Compute peaks and training days",
    "seed.section.interconnect": "Interconnect",
    "seed.section.tiers": "Tier prices",
    "seed.section.unit_cost": "Unit cost per trained token",
    "seed.section.tco": "Three-year TCO",
    "seed.claim.memory_rule": "{model}: params × 12 bytes (weights, grads, Adam) ≥ {size} GB",
    "seed.claim.adam_states": "Adam states take 8 GB per billion parameters",
    "seed.claim.peak_fp16": "{gpu}: FP16 {tflops} TFLOPS",
    "seed.claim.peak_tensor": "{gpu}: Tensor Core {tflops} TFLOPS",
    "seed.claim.days": "{model} on {count} x {gpu}: {days} days",
    "seed.claim.no_fit": "{model} on {count} x {gpu}: cannot fit",
    "seed.claim.link": "{gpu}: {link} {bandwidth} GB/s per card",
    "seed.claim.comm": "{gpu}: 8-card communication overhead {share}",
    "seed.claim.yearly": "{tier}: yearly at 35 % off = {amount}",
    "seed.claim.student": "RTX 4090 at ¥1.86/h for 50 hours a month = ¥93",
    "seed.claim.tokens_day": "{gpu} trains a 7B model at {tokens} tokens a day",
    "seed.claim.unit_arith": "{tier}: {rent} / {tokens} tokens a month = ¥{cost} per 1,000 tokens",
    "seed.claim.unit_real": "{tier}: ¥{cost} per 1,000 trained tokens",
    "seed.claim.tco_buy": "build 8 x A100: 3-year cost ¥984万",
    "seed.claim.tco_rent": "rent 8 x A100: 3-year cost ¥384万",
    "seed.claim.tco_saving": "renting saves 60 %",
    "seed.reason.memory_rule": (
        "mixed-precision AdamW keeps 16 bytes per parameter (bf16 weights 2 + grads 2 + fp32 "
        "master 4 + m 4 + v 4), not 12; gpuplan's figure is model states only, peak adds "
        "activations at seq 4096"
    ),
    "seed.reason.adam_states": (
        "m and v in fp32 are 8 bytes per parameter, right; the fp32 master copy (4 more) is "
        "missing from the article's 12"
    ),
    "seed.reason.peak_ok": "the catalog's dense peak, from the vendor datasheet",
    "seed.reason.peak_fp16_accumulate": (
        "330 is the FP16 rate with FP16 accumulate; training accumulates in FP32 at 165 dense"
    ),
    "seed.reason.peak_sparse": "the sparse (2:4) figure, twice the dense peak training gets",
    "seed.reason.days_full": (
        "a full fine-tune of {model} does not fit on {count} x {gpu} ({peak} GiB needed per GPU); "
        "the claim names no token count: at gpuplan's {method} speed ({tokens_per_s} tokens/s) "
        "{days} days train {trained} tokens"
    ),
    "seed.reason.no_fit_ok": "gpuplan agrees: the smallest layout needs {peak} GiB per GPU",
    "seed.reason.link": "catalog per-GPU bandwidth, one direction ({both} both directions)",
    "seed.reason.comm": (
        "exposed communication share of the step, {model} with ZeRO-3 on 8 GPUs "
        "({layout}); depends on model and layout, not only on the link"
    ),
    "seed.reason.yearly": "12 × monthly × 0.65; the article's own rule gives a different figure",
    "seed.reason.student": "gpuplan's quote of the article's own offer for 50 hours",
    "seed.reason.tokens_day": (
        "gpuplan's {method} speed for {model} on one {gpu}: {tokens_per_s} tokens/s at "
        "{mfu} MFU; the article is some four orders of magnitude low"
    ),
    "seed.reason.unit_arith": "the article's own division",
    "seed.reason.unit_real": (
        "gpuplan: {method} of {model} on the tier's cluster at {tokens_per_s} tokens/s "
        "({mfu} MFU), a month's rent over a month's tokens"
    ),
    "seed.reason.tco": "`gpuplan tco examples/seed-tco.toml` from the article's own inputs",
    "seed.reason.tco_saving": "(984 - 384) / 984 from the reproduced totals",
    "seed.footer": (
        "Regenerate with `python scripts/seed_check.py`. The article's figures are its claims; "
        "gpuplan's are model predictions with the provenance listed in its catalogs."
    ),
}

ZH: dict[str, str] = {
    "lang.en": "English",
    "lang.zh": "中文",
    "unit.days": "{value} 天",
    "unit.day": "{value} 天",
    "unit.hours": "{value} 小时",
    "unit.gib": "GiB",
    "unit.gb": "GB",
    "unit.seconds": "秒",
    "word.yes": "是",
    "word.no": "否",
    "word.none": "无",
    "word.total": "合计",
    "word.warning": "警告",
    "word.fits": "放得下",
    "word.does_not_fit": "放不下",
    "col.rank": "#",
    "col.gpus": "GPU",
    "col.layout": "并行布局",
    "col.gib_per_gpu": "每卡 GiB",
    "col.tokens_per_s": "tokens/秒",
    "col.mfu": "MFU",
    "col.days": "天数",
    "col.cost": "费用",
    "col.per_m_tok": "每百万 token",
    "col.offer": "报价",
    "col.part": "组成",
    "col.seconds": "秒",
    "col.share": "占比",
    "col.kind": "类别",
    "col.item": "项目",
    "col.quantity": "数量",
    "col.amount": "金额",
    "col.observed": "观测日期",
    "col.source": "来源",
    "col.year": "年",
    "col.buy": "自建",
    "col.rent": "租用",
    "col.buy_minus_rent": "自建 - 租用",
    "col.plan": "方案",
    "col.duration": "时长",
    "col.mode": "计费方式",
    "col.compute_cost": "算力费用",
    "col.assumption": "假设",
    "col.value": "取值",
    "col.field": "字段",
    "col.name": "名称",
    "col.params": "参数量",
    "col.memory": "显存",
    "col.bf16_peak": "稠密 bf16 峰值",
    "col.provider": "服务商",
    "col.price": "价格",
    "col.measurement": "测试项",
    "col.measured": "实测",
    "col.reference": "参考值",
    "col.verdict": "结论",
    "part.weights": "权重",
    "part.gradients": "梯度",
    "part.optimizer": "优化器状态（含 fp32 主权重）",
    "part.activations": "激活值",
    "part.logits": "logits 与损失",
    "part.buffers": "框架缓冲区",
    "part.fragmentation": "分配器碎片",
    "part.context": "CUDA 上下文 + NCCL",
    "memory.allocated": "已分配（max_memory_allocated）",
    "memory.reserved": "已保留（max_memory_reserved）",
    "memory.peak": "峰值（nvidia-smi）",
    "memory.capacity": "GPU 容量",
    "memory.title": "每卡显存：{model}，{count} × {gpu}",
    "memory.fits": "放得下：峰值 {peak} GiB，可用 {usable} GiB（预留 {margin} 安全余量）",
    "memory.does_not_fit": (
        "放不下：峰值 {peak} GiB 超出可用的 {usable} GiB（预留 {margin} 安全余量）{short} GiB"
    ),
    "framework.title": "框架配置：{name}（场景中的 framework：{base}）",
    "framework.overrides": "场景覆盖的部件：{overrides}",
    "framework.part.weights": "权重与主权重",
    "framework.part.gradients": "梯度",
    "framework.part.optimizer": "优化器状态",
    "framework.part.kernels": "激活算子",
    "framework.part.buffers": "通信缓冲区",
    "framework.part.offload": "CPU 卸载",
    "memory.host": "CPU 卸载占用每节点主机内存：{need}（其中锁页 {pinned}），节点内存 {capacity}",
    "step.matmul": "计算：矩阵乘",
    "step.attention": "计算：注意力核心",
    "step.memory_bound": "计算：访存受限算子",
    "step.overhead": "计算：逐层开销",
    "step.tensor_parallel": "未被掩盖的通信：张量并行",
    "step.context_parallel": "未被掩盖的通信：上下文并行",
    "step.expert_parallel": "未被掩盖的通信：专家 all-to-all",
    "step.pipeline_send": "未被掩盖的通信：流水线发送",
    "step.zero3_gather": "未被掩盖的通信：ZeRO-3/FSDP 聚合",
    "step.bubble": "流水线气泡",
    "step.data_parallel": "未被掩盖的通信：梯度同步",
    "step.optimizer": "优化器更新",
    "step.title": "单步耗时：每个优化器步 {seconds} 秒",
    "plan.title": "按 {objective} 排序的方案：显示 {shown} 个，{seconds} 秒内评估了 {evaluated} 种布局",
    "plan.pareto_line": "帕累托前沿（费用对天数）：",
    "plan.skipped": "已跳过：{reason}",
    "plan.no_plan": "没有可行方案：{reason}",
    "plan.no_offer": "无报价",
    "plan.price_age": "价格已 {days} 天（{observed}）",
    "plan.price_undated": "价格未注明日期（{observed}）",
    "plan.gpu_hours": "{hours} GPU·小时",
    "plan.free": "空闲",
    "plan.job": "任务：{model}，{method}，{tokens} 个 token，序列长度 {seq_len}，全局批大小 {batch} 条序列（{batch_tokens} 个 token；{batch_rule}）；预算 {budget}；截止时间 {deadline}",
    "plan.unoffered": "目录中没有任何报价出售：{gpus}",
    "plan.none": "无",
    "col.machine": "机器",
    "col.notes": "提示",
    "batch.scenario": "按场景给定",
    "batch.compute-optimal": "由 gpuplan 选择：DeepSeek LLM 的计算最优批大小",
    "batch.fine-tuning": "由 gpuplan 选择：微调默认值",
    "report.job": "训练任务",
    "report.scenario.global_batch_tokens": "全局批大小（token）",
    "report.scenario.batch_rule": "批大小来源",
    "report.scenario.max_gpus": "最大集群规模",
    "notice.no_cluster_network": "{instances} 个实例通过公网以太网互联：该报价未列出实例间网络（--allow-unlisted-network）",
    "notice.unlisted_topology": "{offer} 未说明机器拓扑：按该 GPU 的常见服务器建模，每个任务只用一个实例",
    "notice.stale_price": "{offer}：所用价格观测于 {observed}，已过去 {days} 天（超过 {limit} 天）",
    "notice.undated_price": "{offer}：所用价格来自未注明日期的来源（{observed}），价格时效未知",
    "notice.seed_claims": "{offer}：价格是文章中的说法（{claims}），不是价目表",
    "notice.bubble": "流水线气泡占每步时间的 {share}",
    "notice.startup": "启动时间（{minutes} 分钟）占整个运行的 {share}",
    "notice.communication": "未被掩盖的通信占每步时间的 {share}",
    "notice.config_defaults": "{model}：配置中缺少 {keys}，已采用 {family} 系列在 transformers 中的默认值",
    "notice.spot": (
        "{offer} 使用竞价实例：每实例每小时中断 {rate} 次（{rate_source}），预计中断 {interruptions} 次，"
        "每次损失 {lost}（{lost_source}）；预计运行 {expected}"
    ),
    "quote.header": "{offer}（{provider}）：{instances} × {gpus} 张 {gpu}，时长 {duration}",
    "quote.mix": "每个实例最便宜的计费组合：{mix}",
    "quote.unused": "（已付费但未使用：{duration}）",
    "quote.billed": "计费 {duration}",
    "quote.hidden": "另有 {count} 项费用在此为零或没有公开价格（见 --json）。",
    "quote.fees_line": "附加费用占总额 {share}。每 GPU·小时 {per_gpu_hour}",
    "quote.per_million": "；每百万训练 token {amount}",
    "quote.plans_alone": "单独使用各方案（算力）：{plans}",
    "quote.spot": (
        "竞价实例：期望 {expected}（中断 {interruptions} 次，每实例每小时 {rate} 次，{rate_source}；"
        "每次损失 {lost}，{lost_source}），按需价为 {fallback}"
    ),
    "quote.converted": "按 {rate} 将 {source} 换算为 {target}（{origin}，{observed}）",
    "tco.title": "{years} 年自建与租用对比（{currency}，累计）",
    "tco.buy_line": "自建：投资 {capex}，融资 {financing}，每年更新 {refresh}，残值 {residual}",
    "tco.total_line": "合计：自建 {buy}，租用 {rent}；租用节省 {saving}",
    "tco.break_even_month": "盈亏平衡月：第 {month} 个月",
    "tco.never": "在此期限内，累计租金始终低于自建成本。",
    "tco.pays_off": "利用率高于 {share} 时自建更划算。",
    "tco.never_pays": "按这些输入，任何利用率下自建都不划算。",
    "speed.throughput": (
        "吞吐 {tokens} tokens/秒（每卡 {per_gpu}），每卡模型算力 {tflops} TFLOP/s，"
        "MFU {mfu}，HFU {hfu}（相对稠密 bf16 峰值）；矩阵乘精度 {dtype}"
    ),
    "speed.goodput": (
        "有效产出率 {goodput}：每 {interval} 保存一次 {size} 的检查点（停顿 {stall}），"
        "预计每 {mtbf} 发生一次故障"
    ),
    "speed.days": "训练 {tokens} tokens 需 {days} 天",
    "interval.basis": "{coverage} 区间，来自模型在 {rows} 条未参与拟合来源的公开实测上的误差（{basis}）",
    "interval.none": "无区间：速度模型没有记录留出误差",
    "interval.all_rows": "全部实测",
    "interval.dense": "稠密",
    "interval.gpus": "{gpus} 卡",
    "speed.fp8_note": "（fp8 只加速矩阵乘法）",
    "report.title.plan": "GPU 租用方案",
    "report.title.estimate": "训练估算",
    "report.title.quote": "租用报价",
    "report.title.tco": "自建与租用对比",
    "report.title.bench": "基准测试结果",
    "report.generated": "由 gpuplan {version} 于 {date} 生成",
    "report.answer": "结论",
    "report.scenario": "训练场景",
    "report.plans": "候选方案",
    "report.memory": "每卡显存",
    "report.step_time": "单步耗时",
    "report.pareto": "费用与天数",
    "report.billing": "所选报价的各计费方式",
    "report.tco": "自建与租用",
    "report.quote_lines": "费用明细",
    "report.assumptions": "假设与数据来源",
    "report.warnings": "警告",
    "report.measurements": "测量结果",
    "report.no_plan": "没有满足要求的方案：{reason}",
    "report.answer.plan": (
        "租用 {count} × {gpu}，报价 {offer}（{machine}），训练 {days}：总费用 {cost}（每百万 token {per_million}），"
        "服务商 {provider}，计费方式 {mix}。"
    ),
    "report.answer.plan_unpriced": "使用 {count} × {gpu}，训练 {days}；目录中没有可用报价。",
    "report.answer.estimate": (
        "{model}，{count} × {gpu}：{fit_word}，每卡峰值 {peak} GiB；{tokens_per_s} tokens/秒，"
        "MFU {mfu}；{days}。"
    ),
    "report.answer.estimate_nodays": (
        "{model}，{count} × {gpu}：{fit_word}，每卡峰值 {peak} GiB；{tokens_per_s} tokens/秒，"
        "MFU {mfu}。"
    ),
    "report.answer.quote": (
        "{instances} × {offer}，时长 {duration}：总计 {total}，每 GPU·小时 {per_gpu_hour}，"
        "附加费用占 {fees_share}。"
    ),
    "report.answer.tco": "{years} 年内自建花费 {buy}，租用花费 {rent}：租用节省 {saving}。",
    "report.answer.tco_buy": "{years} 年内自建花费 {buy}，租用花费 {rent}：自建节省 {saving}。",
    "report.answer.bench": "第 {id} 次测试（{host}）：{total} 项中 {passed} 项通过。",
    "report.break_even": "盈亏平衡：第 {month} 个月。",
    "report.no_break_even": "在整个期限内租用都更便宜。",
    "report.memory_caption": "每卡峰值显存的组成，对照可用容量。",
    "report.step_caption": "一个优化器步的时间花在哪里。",
    "report.pareto_caption": "所有有报价的方案（点）与帕累托前沿（线）：没有方案能同时更便宜又更快。",
    "report.billing_caption": "同一任务下，所选报价单独使用每种计费方式的费用。",
    "report.tco_caption": "自建与租用的累计成本；标记处为盈亏平衡点。",
    "report.markdown_chart_note": "（图表见 HTML 报告）",
    "report.tco_plan_note": (
        "按目录价每张 {price} 购买 {gpus} 张 GPU，电价每千瓦时 {kwh}，PUE {pue}，"
        "对比全天候租用所选报价。"
    ),
    "report.scenario.model": "模型",
    "report.scenario.method": "训练方式",
    "report.scenario.tokens": "训练 token 数",
    "report.scenario.seq_len": "序列长度",
    "report.scenario.global_batch": "全局批大小",
    "report.scenario.precision": "精度",
    "report.scenario.budget": "预算",
    "report.scenario.deadline": "截止时间",
    "report.scenario.objective": "优化目标",
    "report.scenario.gpus": "GPU",
    "report.scenario.providers": "服务商",
    "report.scenario.hardware": "硬件",
    "report.scenario.strategy": "并行布局",
    "axis.memory_gib": "每卡显存（GiB，2^30 字节）",
    "axis.seconds": "每步秒数",
    "axis.days": "训练时间（天）",
    "axis.cost": "总费用（{currency}）",
    "axis.year": "年",
    "axis.cumulative": "累计成本（{currency}）",
    "chart.usable": "可用 {value} GiB",
    "chart.capacity": "容量",
    "chart.plans": "方案",
    "chart.pareto": "帕累托前沿",
    "chart.chosen": "所选",
    "chart.break_even": "盈亏平衡",
    "assume.gpu": "GPU {gpu}：规格",
    "assume.offer": "报价 {offer}，方案 {plan}",
    "assume.efficiency": "拟合的速度效率参数",
    "assume.efficiency_value": "来自 {sources} 个来源的 {rows} 条测量，{method}",
    "assume.exchange": "汇率 {currency}/{base}",
    "assume.tco": "TCO 输入 {field}",
    "assume.headroom": "每卡预留的空闲显存",
    "assume.month": "一个月按 30 天计",
    "assume.dense": "峰值算力均为稠密（非稀疏）Tensor FLOP/s",
    "assume.power": "自建：功耗与电价",
    "web.title": "gpuplan",
    "web.tagline": "大模型训练 GPU 租用规划",
    "web.nav.plan": "方案",
    "web.nav.estimate": "估算",
    "web.nav.quote": "报价",
    "web.nav.tco": "自建或租用",
    "web.nav.catalog": "目录",
    "web.nav.api": "API",
    "web.form.model": "模型（目录名称，或粘贴 config.json）",
    "web.form.config": "或上传 config.json（不超过 64 KiB）",
    "web.form.method": "训练方式",
    "web.form.tokens": "训练 token 数",
    "web.form.seq_len": "序列长度",
    "web.form.global_batch": "全局批大小（序列数）",
    "web.form.budget": "预算",
    "web.form.deadline": "截止时间",
    "web.form.objective": "优化目标",
    "web.form.max_gpus": "最大集群规模",
    "web.form.gpus": "仅限这些 GPU（逗号分隔的 id）",
    "web.form.providers": "仅限这些服务商（逗号分隔）",
    "web.form.currency": "币种",
    "web.form.gpu": "GPU",
    "web.form.count": "GPU 数量",
    "web.form.strategy": "并行布局（可选，如 tp=2 pp=1 zero=3）",
    "web.form.offer": "报价",
    "web.form.duration": "时长",
    "web.form.instances": "实例数",
    "web.form.tco_file": "TCO 输入（TOML，参见 examples/seed-tco.toml）",
    "web.form.submit": "计算",
    "web.form.example": "载入种子文章的例子",
    "web.download.html": "下载 HTML 报告",
    "web.download.json": "下载 JSON",
    "web.error": "无法计算：{message}",
    "web.catalog.models": "模型",
    "web.catalog.gpus": "GPU",
    "web.catalog.offers": "报价",
    "web.language": "语言",
    "web.intro.plan": "遍历所有 GPU 型号、集群规模与并行布局，按带日期的真实报价计价并排序。",
    "web.intro.estimate": "单个集群与布局：逐项显存、单步耗时、MFU 与训练天数。",
    "web.intro.quote": "某个报价在一段时间内的逐项费用，以及每种计费方式的对比。",
    "web.intro.tco": "N 年内自建与租用的对比，输入为 TOML 文件。",
    "error.model_path": "model：请填写目录中的模型名称，或粘贴、上传 config.json；服务器上的路径不会被打开",
    "error.upload_size": "上传的文件超过 {limit} KiB",
    "error.upload_json": "上传的文件不是 JSON 对象：{reason}",
    "error.pasted_json": "model：粘贴的 config.json 不是 JSON 对象：{reason}",
    "error.number": "{field}：应为整数，实际为 {value!r}",
    "seed.title": "种子文章核对",
    "seed.intro": (
        "种子文章（shared/seed/gpu-rental-guide-2026.zh.md）中 gpuplan 能够计算的每个数字，"
        "与 gpuplan 对同一问题的回答并列。文章的数字作为数据引用在 "
        "`src/gpuplan/report/seed_check.py` 中；gpuplan 的数字在生成本页时由其 API 计算"
        "（`python scripts/seed_check.py`）。✓ 说法成立，≈ 误差在 15% 以内或仅算术成立，✗ 不成立。"
    ),
    "seed.col.section": "§",
    "seed.col.claim": "说法",
    "seed.col.seed": "文章",
    "seed.col.gpuplan": "gpuplan",
    "seed.col.difference": "差异",
    "seed.col.verdict": "✓ ≈ ✗",
    "seed.col.reason": "原因",
    "seed.summary": "共 {total} 个数字：{held} 个成立，{close} 个大致成立，{wrong} 个不成立。",
    "seed.section.memory": "显存",
    "seed.section.compute": "算力峰值与训练天数",
    "seed.section.interconnect": "互联",
    "seed.section.tiers": "档位价格",
    "seed.section.unit_cost": "单位训练成本",
    "seed.section.tco": "三年总拥有成本",
    "seed.claim.memory_rule": "{model}：参数量 × 12 字节（参数、梯度、Adam）≥ {size} GB",
    "seed.claim.adam_states": "Adam 优化器状态每十亿参数占 8 GB",
    "seed.claim.peak_fp16": "{gpu}：FP16 算力 {tflops} TFLOPS",
    "seed.claim.peak_tensor": "{gpu}：Tensor Core 算力 {tflops} TFLOPS",
    "seed.claim.days": "{model}，{count} × {gpu}：{days} 天",
    "seed.claim.no_fit": "{model}，{count} × {gpu}：无法适配",
    "seed.claim.link": "{gpu}：{link} 单卡 {bandwidth} GB/s",
    "seed.claim.comm": "{gpu}：8 卡集群通信开销 {share}",
    "seed.claim.yearly": "{tier}：年租 6.5 折 = {amount}",
    "seed.claim.student": "RTX 4090 时租 ¥1.86，每月 50 小时 = ¥93",
    "seed.claim.tokens_day": "{gpu} 单卡每日训练 7B 模型约 {tokens} tokens",
    "seed.claim.unit_arith": "{tier}：{rent} ÷ 每月 {tokens} tokens = 每千 token ¥{cost}",
    "seed.claim.unit_real": "{tier}：每千训练 token ¥{cost}",
    "seed.claim.tco_buy": "自建 8 × A100：3 年成本 ¥984万",
    "seed.claim.tco_rent": "租用 8 × A100：3 年成本 ¥384万",
    "seed.claim.tco_saving": "租用节省 60%",
    "seed.reason.memory_rule": (
        "混合精度 AdamW 每个参数需 16 字节（bf16 权重 2 + 梯度 2 + fp32 主权重 4 + m 4 + v 4），"
        "不是 12；gpuplan 此处仅计模型状态，峰值另含序列长度 4096 下的激活值"
    ),
    "seed.reason.adam_states": "fp32 的 m 与 v 每参数 8 字节，正确；但文章的 12 漏掉了 fp32 主权重（再加 4）",
    "seed.reason.peak_ok": "目录中的稠密峰值，来自厂商规格书",
    "seed.reason.peak_fp16_accumulate": "330 是 FP16 累加下的速率；训练以 FP32 累加，稠密峰值为 165",
    "seed.reason.peak_sparse": "这是稀疏（2:4）算力，是训练可用稠密峰值的两倍",
    "seed.reason.days_full": (
        "{model} 全参微调放不进 {count} × {gpu}（每卡需 {peak} GiB）；该说法未给出 token 数："
        "按 gpuplan 的 {method} 速度（{tokens_per_s} tokens/秒），{days} 天可训练 {trained} tokens"
    ),
    "seed.reason.no_fit_ok": "gpuplan 同意：最小的布局每卡也需要 {peak} GiB",
    "seed.reason.link": "目录中的单卡单向带宽（双向 {both}）",
    "seed.reason.comm": (
        "单步中未被掩盖的通信占比，{model} 在 8 卡上使用 ZeRO-3（{layout}）；"
        "它取决于模型和布局，而不仅是互联"
    ),
    "seed.reason.yearly": "12 × 月租 × 0.65；按文章自己的规则得出的数字不同",
    "seed.reason.student": "gpuplan 对文章所列报价 50 小时的报价",
    "seed.reason.tokens_day": (
        "gpuplan 对 {model} 在单张 {gpu} 上 {method} 的速度：{tokens_per_s} tokens/秒，MFU {mfu}；"
        "文章低了约四个数量级"
    ),
    "seed.reason.unit_arith": "文章自己的除法",
    "seed.reason.unit_real": (
        "gpuplan：{model} {method}，在该档集群上 {tokens_per_s} tokens/秒（MFU {mfu}），"
        "一个月的租金除以一个月的 token 数"
    ),
    "seed.reason.tco": "`gpuplan tco examples/seed-tco.toml`，使用文章自己的输入",
    "seed.reason.tco_saving": "由复现的总额计算 (984 - 384) / 984",
    "seed.footer": (
        "用 `python scripts/seed_check.py` 重新生成。文章的数字是其自身说法；"
        "gpuplan 的数字是模型预测，其来源记录在各目录中。"
    ),
}

CATALOG: dict[str, dict[str, str]] = {"en": EN, "zh": ZH}

_current_language: str | None = None


def normalize_language(text: str | None) -> str | None:
    """``"zh"``, ``"zh-CN"``, ``"zh_CN.UTF-8"`` -> ``"zh"``; ``"en-US"`` -> ``"en"``; else None."""
    if not text:
        return None
    code = text.strip().lower().replace("_", "-").split(".")[0].split("-")[0]
    return code if code in LANGUAGES else None


def language_from_environment(environ: Mapping[str, str] | None = None) -> str:
    """The language of the POSIX locale (``LC_ALL``, ``LC_MESSAGES``, ``LANG``), English default."""
    environ = os.environ if environ is None else environ
    for name in ("LC_ALL", "LC_MESSAGES", "LANG"):
        value = environ.get(name)
        if value:
            return normalize_language(value) or DEFAULT_LANGUAGE
    return DEFAULT_LANGUAGE


def language_from_accept_header(header: str | None) -> str | None:
    """The best supported language of an HTTP ``Accept-Language`` header, by quality."""
    if not header:
        return None
    ranked: list[tuple[float, int, str]] = []
    for position, part in enumerate(header.split(",")):
        tag, _, params = part.strip().partition(";")
        quality = 1.0
        if params.strip().startswith("q="):
            try:
                quality = float(params.strip()[2:])
            except ValueError:
                quality = 0.0
        language = normalize_language(tag)
        if language and quality > 0:
            ranked.append((-quality, position, language))
    return min(ranked)[2] if ranked else None


def set_language(language: str | None) -> None:
    """Fix the process-wide language (the CLI's ``--lang``); ``None`` returns to the locale."""
    global _current_language
    if language is not None and normalize_language(language) is None:
        from gpuplan.errors import InputError

        raise InputError(f"--lang: expected one of {', '.join(LANGUAGES)}, got {language!r}")
    _current_language = normalize_language(language)


def current_language() -> str:
    """``--lang`` when given, else the locale's language."""
    return _current_language or language_from_environment()


def translate(key: str, lang: str | None = None, **values: object) -> str:
    """The message ``key`` in ``lang`` (the current language by default), formatted with
    ``values``. A key missing in Chinese falls back to English; an unknown key is returned as
    it is, so a slip shows on the page instead of crashing it."""
    language = normalize_language(lang) if lang else current_language()
    template = CATALOG.get(language or DEFAULT_LANGUAGE, EN).get(key) or EN.get(key)
    if template is None:
        return key
    return template.format(**values) if values else template


def format_number(value: float | Decimal, digits: int = 0) -> str:
    """Thousands separators and fixed decimals: ``1,234.5``; the same in both languages."""
    return f"{Decimal(str(value)):,.{digits}f}" if digits >= 0 else f"{value:,}"


def format_large(value: float | Decimal, lang: str | None = None, digits: int = 2) -> str:
    """Chinese counts large numbers in 万 (10^4) and 亿 (10^8): ``9.84亿``; English uses
    thousands separators."""
    language = normalize_language(lang) if lang else current_language()
    number = float(value)
    if language == "zh" and abs(number) >= 1e8:
        return f"{number / 1e8:,.{digits}f}亿"
    if language == "zh" and abs(number) >= 1e4:
        return f"{number / 1e4:,.{digits}f}万"
    return f"{number:,.0f}" if abs(number) >= 1e4 else f"{number:,.{digits}f}"


def format_money(
    amount: float | Decimal | None,
    currency: str,
    lang: str | None = None,
    digits: int = 2,
    compact: bool = False,
) -> str:
    """``¥1,100.00`` / ``$2.49``; with ``compact`` in Chinese, ``¥984.00万``."""
    if amount is None:
        return "-"
    symbol = CURRENCY_SYMBOLS.get(currency)
    text = format_large(amount, lang, digits) if compact else format_number(amount, digits)
    if symbol:
        return f"-{symbol}{text[1:]}" if text.startswith("-") else f"{symbol}{text}"
    return f"{text} {currency}"


def format_days(days: float | None, lang: str | None = None, digits: int = 1) -> str:
    """``12.5 days`` / ``12.5 天``."""
    if days is None:
        return "-"
    key = "unit.day" if round(days, digits) == 1 else "unit.days"
    return translate(key, lang, value=f"{days:,.{digits}f}")


def format_hours(hours: float, lang: str | None = None, digits: int = 1) -> str:
    """``40.0 h`` / ``40.0 小时``."""
    return translate("unit.hours", lang, value=f"{hours:,.{digits}f}")


def format_share(share: float | Decimal | None, digits: int = 0) -> str:
    """A share as a percentage: ``0.451`` -> ``45%``."""
    return "-" if share is None else f"{float(share):.{digits}%}"
