"""Every user-facing string of gpuplan in English, each under its key.

A message is marked with ``message(key, english)`` so that Babel's extractor finds it
(``pybabel extract -k message:1c,2``): the key becomes the gettext context (``msgctxt``) and the
English text the ``msgid``. Translations live in gettext catalogs under ``gpuplan/locale``; see
CONTRIBUTING.md ("Add or change a user-facing string").
"""

from __future__ import annotations


def message(key: str, english: str) -> tuple[str, str]:
    """Mark ``english`` for translation under ``key``."""
    return key, english


ENGLISH: dict[str, str] = dict(
    (
        # help chrome (Typer's words)
        message("help.arguments", "Arguments"),
        message("help.options", "Options"),
        message("help.commands", "Commands"),
        message("help.error", "Error"),
        message("help.default", "[default: {}]"),
        message("help.envvar", "[env var: {}]"),
        message("help.required", "[required]"),
        message("help.deprecated", "(deprecated) "),
        message("help.aborted", "Aborted."),
        message("help.try_help", "Try [blue]'{command_path} {help_option}'[/] for help."),
        message("cli.error", "error: {message}"),
        # Click's usage errors (cli/usage_errors.py)
        message("usage.usage", "Usage: "),
        message("usage.no_such_option", "No such option: {name}"),
        message("usage.no_such_option_possible", "No such option: {name} (possible: {options})"),
        message("usage.no_such_command", "No such command {name}."),
        message(
            "usage.no_such_command_possible", "No such command {name}. Did you mean {options}?"
        ),
        message("usage.missing_argument", "Missing argument {name}.{rest}"),
        message("usage.missing_option", "Missing option {name}.{rest}"),
        message("usage.missing_parameter", "Missing parameter {name}.{rest}"),
        message("usage.invalid_value_for", "Invalid value for {name}: {problem}"),
        message("usage.invalid_value", "Invalid value: {problem}"),
        message("usage.not_one_of", "{value} is not one of {choices}."),
        message("usage.not_a_valid", "{value} is not a valid {kind}."),
        message("usage.extra_arguments", "Got unexpected extra arguments ({arguments})"),
        message("usage.requires_an_argument", "Option {name} requires an argument."),
        message("usage.requires_arguments", "Option {name} requires {count} arguments."),
        message("usage.takes_no_value", "Option {name} does not take a value."),
        message("usage.kind.int", "integer"),
        message("usage.kind.float", "float"),
        message("usage.kind.boolean", "boolean"),
        message("usage.kind.int range", "integer range"),
        message("usage.kind.float range", "float range"),
        message("usage.kind.datetime", "date and time"),
        # catalog schema words in errors (catalog/schema/decoding.py); each description is a
        # schema field's ``description``
        message("schema.type.int", "a whole number"),
        message("schema.type.float", "a number"),
        message("schema.type.str", "a string"),
        message("schema.type.bool", "true or false"),
        message("schema.type.array", "a list"),
        message("schema.type.object", "a table"),
        message("schema.type.null", "nothing"),
        message("schema.or", " or "),
        message("schema.one_of", "one of {values}"),
        message("schema.bounded", "{words} {bound}"),
        message("schema.documented_type", "a value of the documented type"),
        message("schema.location_separator", ": "),
        message("schema.entry.interval", "interval {name}"),
        message("schema.entry.gpu", "gpu {name}"),
        message("schema.entry.uncatalogued_accelerator", "uncatalogued accelerator {name}"),
        message("schema.entry.model", "model {name}"),
        message("schema.entry.fee", "fee {name}"),
        message("schema.entry.discount", "discount {name}"),
        message("schema.entry.offer", "offer {name}"),
        message("schema.entry.rate", "rate {name}"),
        message("schema.describe.flop_s_dense_above_0", "FLOP/s (dense), above 0"),
        message(
            "schema.describe.gpus_in_one_nvlink_domain_across_instances_gb200",
            "GPUs in one NVLink domain across instances (GB200 NVL72: 72)",
        ),
        message("schema.describe.gpus_per_instance_at_least_1", "GPUs per instance, at least 1"),
        message(
            "schema.describe.a_gemm_shape_m_n_k_of_positive_integers",
            "a GEMM shape [m, n, k] of positive integers",
        ),
        message("schema.describe.a_pcie_generation_1_to_6", "a PCIe generation, 1 to 6"),
        message("schema.describe.a_catalog_gpu_id", "a catalog GPU id"),
        message("schema.describe.a_catalog_gpu_id_or_alias", "a catalog GPU id or alias"),
        message("schema.describe.a_date_written_yyyy_mm_dd", "a date written YYYY-MM-DD"),
        message(
            "schema.describe.a_duration_written_as_a_number_with_s_m_in_h_d_w",
            "a duration written as a number with s, m(in), h, d, w, mo or y: 90m, 12h, 30d, 6w, 3mo, 1y",
        ),
        message("schema.describe.a_non_empty_string", "a non-empty string"),
        message("schema.describe.a_number_above_0", "a number above 0"),
        message("schema.describe.a_number_of_seconds", "a number of seconds"),
        message(
            "schema.describe.a_payload_size_in_bytes_e_g_2147483648",
            'a payload size in bytes, e.g. "2147483648"',
        ),
        message(
            "schema.describe.a_price_of_at_least_0_in_the_offer_s_currency",
            "a price of at least 0, in the offer's currency",
        ),
        message(
            "schema.describe.a_rate_in_gb_s_10_9_bits_per_second_above_0",
            "a rate in Gb/s (10^9 bits per second), above 0",
        ),
        message(
            "schema.describe.a_rate_in_bytes_per_second_above_0",
            "a rate in bytes per second, above 0",
        ),
        message("schema.describe.a_share_from_0_to_1_0_05_5", "a share from 0 to 1 (0.05 = 5 %)"),
        message("schema.describe.a_share_from_0_to_below_1", "a share from 0 to below 1"),
        message(
            "schema.describe.a_share_from_0_3_to_1_5_fit_bounds",
            "a share from 0.3 to 1.5 (FIT_BOUNDS)",
        ),
        message(
            "schema.describe.a_size_in_gb_10_9_bytes_at_least_0",
            "a size in GB (10^9 bytes), at least 0",
        ),
        message(
            "schema.describe.a_size_in_bytes_a_whole_number_above_0",
            "a size in bytes (a whole number above 0)",
        ),
        message("schema.describe.a_whole_number_at_least_0", "a whole number, at least 0"),
        message("schema.describe.a_whole_number_at_least_1", "a whole number, at least 1"),
        message(
            "schema.describe.active_parameters_per_token_a_whole_number",
            "active parameters per token, a whole number",
        ),
        message(
            "schema.describe.an_iso_4217_code_in_capitals_e_g_usd",
            "an ISO 4217 code in capitals, e.g. USD",
        ),
        message("schema.describe.an_amount_of_money_at_least_0", "an amount of money, at least 0"),
        message(
            "schema.describe.bytes_per_second_per_gpu_one_direction_above_0",
            "bytes per second per GPU, one direction, above 0",
        ),
        message("schema.describe.free_text", "free text"),
        message("schema.describe.memory_as_the_vendor_writes_it", "memory as the vendor writes it"),
        message(
            "schema.describe.memory_in_bytes_80_gib_85899345920",
            "memory in bytes (80 GiB = 85899345920)",
        ),
        message("schema.describe.parameters_a_whole_number", "parameters, a whole number"),
        message(
            "schema.describe.spot_interruptions_per_hour_above_0",
            "spot interruptions per hour, above 0",
        ),
        message(
            "schema.describe.the_hugging_face_hub_repo_org_name_and_a_note",
            "the Hugging Face Hub repo, org/name (and a note)",
        ),
        message(
            "schema.describe.the_date_the_figure_was_read_not_in_the_future_y",
            "the date the figure was read, not in the future: YYYY-MM-DD, YYYY-MM, YYYY-QN, 'YYYY (mid)', YYYY-MM/YYYY-MM or undated<=YYYY-MM-DD",
        ),
        message(
            "schema.describe.the_plan_s_name_default_its_mode", "the plan's name; default: its mode"
        ),
        message(
            "schema.describe.true_when_the_figure_is_an_estimate_not_a_price",
            "true when the figure is an estimate, not a price",
        ),
        message(
            "schema.describe.units_of_the_base_currency_above_0",
            "units of the base currency, above 0",
        ),
        message(
            "schema.describe.units_per_instance_not_charged_at_least_0",
            "units per instance not charged, at least 0",
        ),
        message("schema.describe.watts_above_0", "watts, above 0"),
        message(
            "schema.describe.where_the_figure_comes_from_a_url_or_a_document",
            "where the figure comes from: a URL, or a document and the place in it",
        ),
        message(
            "schema.describe.where_the_interruption_rate_comes_from",
            "where the interruption rate comes from",
        ),
        message(
            "schema.describe.who_states_these_prices_provider_a_price_list_or",
            "who states these prices: provider (a price list) or the publication",
        ),
        # billing modes and plan names (terms.py)
        message("billing.per_second", "billed per second"),
        message("billing.per_minute", "billed per minute"),
        message("billing.hourly", "hourly"),
        message("billing.hourly_per_second", "hourly (per second)"),
        message("billing.daily", "daily"),
        message("billing.monthly", "monthly"),
        message("billing.yearly", "yearly"),
        message("billing.spot", "spot"),
        message("billing.reserved", "reserved"),
        message("billing.reserved_1y", "reserved 1y"),
        message("billing.reserved_3y", "reserved 3y"),
        message("billing.capacity_block", "capacity block"),
        message("billing.nothing", "nothing to pay"),
        # quote line kinds (terms.py)
        message("kind.compute", "compute"),
        message("kind.fee", "fee"),
        message("kind.discount", "discount"),
        # objectives, recompute, offload (terms.py)
        message("objective.cost", "cost"),
        message("objective.time", "time"),
        message("objective.pareto", "pareto"),
        message("recompute.selective", "selective recompute"),
        message("recompute.full", "full recompute"),
        message("offload.optimizer", "offload optimizer"),
        message("offload.optimizer+params", "offload optimizer+params"),
        # the machine an offer sells (hardware/topology.py)
        message("machine.one_gpu", "1 GPU"),
        message("machine.no_p2p", " (no P2P)"),
        message("machine.no_network", "no cluster network"),
        message("machine.separator", ", "),
        # why the search chose its plan (search/reasons.py)
        message("reason.separator", "; "),
        message(
            "reason.top",
            "{count} x {gpu} ({machine}) wins on {objective}: {run_length} at {mfu} MFU",
        ),
        message(
            "reason.top_priced",
            "{count} x {gpu} ({machine}) wins on {objective}: {run_length} at {mfu} MFU "
            "for {cost} at {provider} ({billing})",
        ),
        message("reason.runner_up", "the runner-up, {count} x {gpu}, is {pace} ({run_length})"),
        message(
            "reason.runner_up_priced",
            "the runner-up, {count} x {gpu}, is {pace} ({run_length}){cost_clause}",
        ),
        message("reason.faster", "faster"),
        message("reason.slower", "slower"),
        message("reason.same_cost", " for the same cost"),
        message("reason.costs_more", " and costs {cost} more"),
        message("reason.costs_less", " and costs {cost} less"),
        message(
            "reason.host_short",
            "nothing fits: {count} x {gpu} fits the GPUs only with CPU offload, which keeps "
            "{peak_ram} per node in host memory against {usable_ram} usable RAM",
        ),
        message(
            "reason.gpu_short",
            "nothing fits: the closest is {count} x {gpu} at {peak_bytes} per GPU against "
            "{usable_bytes} usable (short by {short_bytes})",
        ),
        message(
            "reason.offload_would_fit",
            "with CPU offload {count} x {gpu} would fit the GPUs but needs {peak_ram} of host "
            "memory per node against {usable_ram} usable",
        ),
        message("reason.hints", "what would make it fit: {hints}"),
        message("reason.hint_more_ram", "an instance with more than {ram} RAM"),
        message("reason.hint_lora", "fine-tune with method: qlora or lora"),
        message("reason.hint_more_gpus", "allow more GPUs (--max-gpus above {max_gpus})"),
        message("reason.hint_recompute", "let the search choose recompute: full"),
        message("reason.hint_offload", "let the search offload the optimizer"),
        message(
            "reason.hint_unlisted_network", "--allow-unlisted-network to join single-GPU offers"
        ),
        message("reason.hint_shorter", "shorten seq_len or lower the headroom"),
        message("reason.no_plan", "no plan meets the limits"),
        message("reason.fastest", "the fastest feasible plan, {count} x {gpu}, takes {run_length}"),
        message("reason.cheapest", "the cheapest, {count} x {gpu}, costs {cost}"),
        message("reason.budget", "budget {budget}"),
        message("reason.deadline", "deadline {deadline_seconds}"),
        message("reason.skipped_gpu", "{reason}"),
        # catalog commands (models, model, gpus, gpu)
        message(
            "catalog.models_title", "Built-in models (parameters counted from the architecture)"
        ),
        message("catalog.model.name", "name"),
        message("catalog.model.family", "family"),
        message("catalog.model.params", "params"),
        message("catalog.model.active", "active"),
        message("catalog.model.layers", "layers"),
        message("catalog.model.hidden", "hidden"),
        message("catalog.model.heads_kv", "heads/kv"),
        message("catalog.model.vocab", "vocab"),
        message("catalog.model.context", "context"),
        message("catalog.model_header", "{name}  family {family}"),
        message("catalog.arch.layers", "layers"),
        message("catalog.arch.hidden", "hidden size"),
        message("catalog.arch.heads", "attention heads / KV heads"),
        message("catalog.arch.head_dim", "head dim"),
        message("catalog.arch.ffn", "FFN width"),
        message("catalog.arch.gated", "gated (SwiGLU/GeGLU)"),
        message("catalog.arch.plain", "plain"),
        message("catalog.arch.vocab", "vocabulary"),
        message("catalog.arch.embeddings", "embeddings"),
        message("catalog.arch.tied", "tied"),
        message("catalog.arch.untied", "untied"),
        message("catalog.arch.positions", "positions"),
        message("catalog.arch.norm", "norm"),
        message("catalog.arch.norm_value", "{norm}, {count} per layer"),
        message("catalog.arch.experts", "experts"),
        message(
            "catalog.arch.experts_value",
            "{experts} routed, {per_token} per token, width {width}, {layers} MoE layers",
        ),
        message("catalog.arch.attention", "attention"),
        message("catalog.arch.mla_value", "multi-head latent (kv rank {kv_rank}, q rank {q_rank})"),
        message("catalog.parameters_title", "Parameters"),
        message("catalog.active_per_token", "active per token"),
        message("params.embeddings", "embeddings"),
        message("params.attention", "attention"),
        message("params.mlp", "mlp"),
        message("params.experts", "experts"),
        message("params.norms", "norms"),
        message("params.head", "head"),
        message("params.vision", "vision"),
        message(
            "catalog.gpus_title",
            "Built-in GPUs (dense peak TFLOP/s; memory in GiB and as the vendor labels it)",
        ),
        message("catalog.gpu.link", "link (one way)"),
        message("gpu.memory_value", "{binary} = {decimal} (vendor: {quoted})"),
        message("gpu.unknown", "unknown"),
        message("gpu.memory_bandwidth", "memory bandwidth"),
        message("gpu.dense_peak", "dense {dtype} peak"),
        message("gpu.vendor_bidirectional", " (vendor: {bandwidth} bidirectional)"),
        message("gpu.intra_node_link", "intra-node link (one way)"),
        message("gpu.nvlink_domain", "NVLink/fabric domain"),
        message("gpu.count", "{count} GPUs"),
        message("gpu.pcie_generation", "PCIe generation"),
        message("gpu.per_node", "GPUs per node"),
        message("gpu.purchase_price", "purchase price (indicative)"),
        message("gpu.spec", "spec"),
        message("gpu.other_source", "source (where not the main one)"),
        message("gpu.source_line", "Source: {source}, observed {observed}"),
        message(
            "gpu.no_datasheet",
            "No vendor datasheet behind these dense figures; treat as indicative.",
        ),
        message("gpu.speed_not_predicted", "Speed not predicted:"),
        message("gpu.no_offer", "No built-in offer: {reason} ({source}, {observed})"),
        # languages
        message("lang.en", "English"),
        message("lang.zh", "中文"),
        # units and words
        message("unit.days", "{value} days"),
        message("unit.day", "{value} day"),
        message("unit.hours", "{value} h"),
        message("unit.gib", "GiB"),
        message("unit.gb", "GB"),
        message("unit.seconds", "s"),
        message("word.yes", "yes"),
        message("word.no", "no"),
        message("word.none", "none"),
        message("word.total", "total"),
        message("word.warning", "warning"),
        message("word.fits", "fits"),
        message("word.does_not_fit", "does not fit"),
        # table columns
        message("col.rank", "#"),
        message("col.gpus", "GPUs"),
        message("col.layout", "layout"),
        message("col.gib_per_gpu", "GiB/GPU"),
        message("col.tokens_per_s", "tokens/s"),
        message("col.mfu", "MFU"),
        message("col.days", "days"),
        message("col.cost", "cost"),
        message("col.per_m_tok", "per M tok"),
        message("col.offer", "offer"),
        message("col.part", "part"),
        message("col.seconds", "seconds"),
        message("col.share", "share"),
        message("col.kind", "kind"),
        message("col.item", "item"),
        message("col.quantity", "quantity"),
        message("col.amount", "amount"),
        message("col.observed", "observed"),
        message("col.source", "source"),
        message("col.year", "year"),
        message("col.buy", "buy"),
        message("col.rent", "rent"),
        message("col.buy_minus_rent", "buy - rent"),
        message("col.plan", "plan"),
        message("col.duration", "duration"),
        message("col.mode", "billing mode"),
        message("col.compute_cost", "compute cost"),
        message("col.assumption", "assumption"),
        message("col.value", "value"),
        message("col.field", "field"),
        message("col.name", "name"),
        message("col.params", "parameters"),
        message("col.memory", "memory"),
        message("col.bf16_peak", "dense bf16 peak"),
        message("col.provider", "provider"),
        message("col.price", "price"),
        message("col.measurement", "measurement"),
        message("col.measured", "measured"),
        message("col.reference", "reference"),
        message("col.verdict", "verdict"),
        # memory parts
        message("part.weights", "weights"),
        message("part.gradients", "gradients"),
        message("part.optimizer", "optimizer states (+ fp32 master)"),
        message("part.activations", "activations"),
        message("part.logits", "logits and loss"),
        message("part.buffers", "framework buffers"),
        message("part.fragmentation", "allocator fragmentation"),
        message("part.context", "CUDA context + NCCL"),
        message("memory.allocated", "allocated (max_memory_allocated)"),
        message("memory.reserved", "reserved (max_memory_reserved)"),
        message("memory.peak", "peak (nvidia-smi)"),
        message("memory.capacity", "GPU capacity"),
        message("memory.title", "Memory per GPU: {model} on {count} x {gpu}"),
        message(
            "memory.fits", "fits: peak {peak} GiB of {usable} GiB usable ({margin} safety margin)"
        ),
        message(
            "memory.does_not_fit",
            "does not fit: peak {peak} GiB exceeds {usable} GiB usable ({margin} safety margin) "
            "by {short} GiB",
        ),
        message("framework.title", "Framework profile: {name} (scenario framework: {base})"),
        message("framework.overrides", "scenario overrides: {overrides}"),
        message("framework.part.weights", "weights and master copy"),
        message("framework.part.gradients", "gradients"),
        message("framework.part.optimizer", "optimizer states"),
        message("framework.part.kernels", "activation kernels"),
        message("framework.part.buffers", "communication buffers"),
        message("framework.part.offload", "CPU offload"),
        message(
            "memory.host",
            "host memory per node for CPU offload: {need} ({pinned} pinned), node RAM {capacity}",
        ),
        # step-time parts
        message("step.matmul", "compute: matmuls"),
        message("step.attention", "compute: attention core"),
        message("step.memory_bound", "compute: memory-bound ops"),
        message("step.overhead", "compute: per-layer overhead"),
        message("step.tensor_parallel", "exposed comm: tensor parallel"),
        message("step.context_parallel", "exposed comm: context parallel"),
        message("step.expert_parallel", "exposed comm: expert all-to-all"),
        message("step.pipeline_send", "exposed comm: pipeline sends"),
        message("step.zero3_gather", "exposed comm: ZeRO-3/FSDP gathers"),
        message("step.bubble", "pipeline bubble"),
        message("step.data_parallel", "exposed comm: gradient sync"),
        message("step.optimizer", "optimizer step"),
        message("step.title", "Step time: {seconds} s per optimizer step"),
        # plan
        message(
            "plan.title",
            "Plans by {objective}: {shown} shown, {evaluated} layouts evaluated in {seconds} s",
        ),
        message("plan.pareto_line", "Pareto front (cost vs days):"),
        message("plan.skipped", "skipped: {reason}"),
        message("plan.no_plan", "no plan: {reason}"),
        message("plan.no_offer", "no offer"),
        message("plan.price_age", "price {days} d old ({observed})"),
        message("plan.price_undated", "price undated ({observed})"),
        message("plan.price_age_short", "price {days} d"),
        message("plan.price_undated_short", "price undated"),
        message(
            "plan.stale_prices",
            "price N d: days since the price was observed; plan {ranks} pays a price older "
            "than {limit} days: check the offer's current price",
        ),
        message(
            "plan.undated_prices",
            "price undated: plan {ranks} pays a price from an undated source, its age unknown",
        ),
        message("plan.interval", "likely {days}, {cost}"),
        message("col.cost_in", "cost {currency}"),
        message("col.per_m_tok_in", "{currency}/M tok"),
        message("col.offer_and_plan", "offer, billing, machine, layout"),
        message("money.converted", "amounts in {currency}; {rates}"),
        message("money.rate", "1 {target} = {rate} {currency} ({source}, {observed})"),
        message("table.dropped", "left out to fit the terminal: {columns} (--wide shows them)"),
        message("billing.weekly", "weekly"),
        message("plan.gpu_hours", "{hours} GPU-h"),
        message("plan.free", "free"),
        message(
            "plan.job",
            "Job: {model}, {method}, {tokens} tokens of {seq_len}-token sequences, global batch {batch} sequences ({batch_tokens} tokens; {batch_rule}); budget {budget}; deadline {deadline}",
        ),
        message("plan.unoffered", "not sold by any catalog offer: {gpus}"),
        message("plan.none", "none"),
        message("col.machine", "machine"),
        message("col.notes", "notes"),
        message("batch.scenario", "as given"),
        message("batch.compute-optimal", "chosen by gpuplan: DeepSeek LLM's compute-optimal batch"),
        message("batch.fine-tuning", "chosen by gpuplan: the fine-tuning default"),
        message("report.job", "Job"),
        message("report.scenario.global_batch_tokens", "global batch (tokens)"),
        message("report.scenario.batch_rule", "batch chosen"),
        message("report.scenario.max_gpus", "largest cluster"),
        message(
            "notice.no_cluster_network",
            "{instances} instances joined over their public Ethernet: the offer lists no network between instances (--allow-unlisted-network)",
        ),
        message(
            "notice.unlisted_topology",
            "{offer} states no topology: modelled as the GPU's usual server, one instance per job",
        ),
        message(
            "notice.stale_price",
            "{offer}: the price used was observed {observed}, {days} days ago (older than {limit} days)",
        ),
        message(
            "notice.undated_price",
            "{offer}: the price used comes from an undated source ({observed}); its age is unknown",
        ),
        message("notice.seed_claims", "{offer}: prices are claims ({claims}), not a price list"),
        message("notice.bubble", "the pipeline bubble is {share} of the step"),
        message("notice.startup", "start-up ({minutes} min) is {share} of the run"),
        message("notice.communication", "exposed communication is {share} of the step"),
        message(
            "notice.config_defaults",
            "{model}: the config leaves out {keys}; the {family} family's transformers defaults were taken",
        ),
        message(
            "notice.spot",
            "{offer} on spot: {interruptions} interruptions expected at {rate}/h per instance "
            "({rate_source}), {lost} lost each ({lost_source}); the run takes {expected}",
        ),
        # quote
        message("quote.header", "{offer} ({provider}): {instances} x {gpus} {gpu} for {duration}"),
        message(
            "notice.discount_not_applied", "{kind} discount exists but is not applied ({details})"
        ),
        message("notice.no_public_figure", "no public figure"),
        message("claims.seed_article", "seed article"),
        message(
            "notice.own_tax_rate", "the offer charges its own tax rate; --tax-rate is not applied"
        ),
        message("notice.tax_included", "the offer's prices include tax; --tax-rate adds it again"),
        message(
            "notice.tax_excluded",
            "prices exclude tax (sales tax, VAT or GST): pass --tax-rate to add it",
        ),
        message(
            "notice.spot_not_cheaper", "spot price is not below on-demand: treat as no spot offer"
        ),
        message("notice.estimated_price", "plan {plan!r} is an estimate, not a published price"),
        message("notice.undated_plan", "plan {plan!r} comes from an undated source ({observed})"),
        message(
            "source.assumed_reclaims",
            "assumed: one reclaim a day per instance (the offer states no rate)",
        ),
        message(
            "source.assumed_restart", "assumed: 30 minutes lost per interruption (no job to model)"
        ),
        message("quote.mix", "Cheapest billing mix per instance: {mix}"),
        message("quote.unused", "(paid but unused: {duration})"),
        message("quote.billed", "{duration} billed"),
        message(
            "quote.hidden",
            "{count} more fee items cost nothing here or have no public price (see --json).",
        ),
        message("quote.fees_line", "Fees are {share} of the total. Per GPU-hour {per_gpu_hour}"),
        message("quote.per_million", "; per million trained tokens {amount}"),
        message("quote.plans_alone", "Each plan alone (compute): {plans}"),
        message(
            "quote.spot",
            "Spot: expected {expected} ({interruptions} interruptions at {rate}/h per instance, "
            "{rate_source}; {lost} lost each, {lost_source}) versus on-demand {fallback}",
        ),
        message(
            "quote.converted", "Converted {source} to {target} at {rate} ({origin}, {observed})"
        ),
        # offers
        message(
            "offers.title",
            "Rental offers (each plan: its price, then USD per GPU-hour and x the catalog median "
            "for the GPU)",
        ),
        message("offers.plans", "plans"),
        message("offers.provider_machine_plans", "provider, machine, plans"),
        message("offers.vs_median", "{ratio}x median"),
        message("offers.estimate", "estimate"),
        message(
            "offers.footer",
            "{count} offers. Medians use on-demand prices converted at dated exchange rates; "
            "`gpuplan offers --json` shows every source and fee.",
        ),
        message("offers.no_topology", "topology not stated"),
        message("offers.min_instances", "; from {count} instances"),
        message("per.instance", "instance"),
        message("per.gpu", "gpu"),
        message("cli.note", "note: {note}"),
        # errors (errors.InputError.of)
        message("error.lang", "--lang: expected one of {accepted}, got {value}"),
        message("error.unit", "cannot read {value} as {kind}; accepted forms: {accepted}"),
        message("unit_kind.tokens", "a token count"),
        message("unit_kind.duration", "a duration"),
        message("unit_kind.bytes", "a size in bytes"),
        message("unit_kind.bandwidth", "a bandwidth"),
        message("unit_kind.flops", "a FLOP/s rate"),
        message("unit_kind.price", "a price"),
        message("name_kind.model", "model"),
        message("name_kind.offer", "offer"),
        message(
            "unit_forms.tokens",
            "a count with an optional K/M/B/T suffix: 20B, 1.5T, 300M, 15e12, 4096",
        ),
        message(
            "unit_forms.duration",
            "a number with s, m(in), h, d, w, mo or y: 90m, 12h, 30d, 6w, 3mo, 1y",
        ),
        message(
            "unit_forms.bytes",
            "a number with B, KB, MB, GB, TB (powers of 1000) or KiB, MiB, GiB, TiB (powers of 1024)",
        ),
        message(
            "unit_forms.bandwidth",
            "bits per second (400Gbps, 400Gb/s) or bytes per second (50GB/s, 25GiB/s)",
        ),
        message(
            "unit_forms.flops",
            "a number with FLOPS or FLOP/s and an optional prefix: 989TFLOPS, 1.98 PFLOP/s, 3e14",
        ),
        message(
            "unit_forms.money",
            "an amount with a currency (¥, $, €, CNY, USD, EUR) and an optional period (/s, /min, /h, /hr, /hour, /day, /week, /month, /year): ¥1.86/h, 1.86 CNY/hour, $2.49/hr",
        ),
        message("error.not_a_table", "{where}: expected a table of {accepted}"),
        message("error.unknown_key", "{where}{key}: unknown key; accepted: {accepted}"),
        message(
            "error.unknown_key_hint",
            "{where}{key}: unknown key (did you mean {close}?); accepted: {accepted}",
        ),
        message(
            "error.not_a_number", "{field}: expected a number from {low} to {high}, got {value}"
        ),
        message("error.out_of_range", "{field}: {value} is outside {low} to {high}"),
        message("error.unknown_name", "unknown {kind} {name} (`gpuplan {command}` lists them)"),
        message(
            "error.unknown_name_hint",
            "unknown {kind} {name}; did you mean {close}? (`gpuplan {command}` lists them)",
        ),
        # input errors: shared sentences
        message("error.whole_number", "{field}: expected a whole number, got {value}"),
        message("error.whole_number_null", "{field}: expected a whole number, got null"),
        message(
            "error.whole_number_at_least",
            "{field}: expected a whole number >= {least}, got {value}",
        ),
        message(
            "error.positive_whole_number", "{field}: must be a positive whole number, got {value}"
        ),
        message("error.not_one_of", "{field}: {value} is not one of {accepted}"),
        message("error.true_or_false", "{field}: expected true or false, got {value}"),
        message("error.in_field", "{field}: {error}"),
        message("error.section", "{field}: expected a mapping of {accepted}"),
        message("error.above_zero", "{field}: must be above zero, got {value}"),
        message("error.at_least_one", "{field}: must be at least 1, got {value}"),
        message("error.positive", "{field}: must be positive, got {value}"),
        # input errors: scenarios (scenario.py)
        message("error.scenario_mapping", "scenario {path} must hold a mapping of scenario keys"),
        message(
            "error.scenario_model",
            "model: expected a catalog name, a config.json path, or a mapping of config.json keys",
        ),
        message(
            "error.scenario_model_missing",
            "model: missing; give a catalog name (gpuplan models), a config.json path or a mapping",
        ),
        message(
            "error.scenario_batch_both",
            "global_batch: give global_batch (sequences) or global_batch_tokens, not both",
        ),
        message("error.scenario_lora", "lora: expected a mapping with rank, alpha, targets"),
        message("error.scenario_hardware", "hardware: expected a mapping with gpu and count"),
        message("error.scenario_strategy", "strategy: expected a mapping of tp, pp, zero, ..."),
        message(
            "error.scenario_offers_file",
            "hardware.offers_file: expected the path of an offers file or a list of paths, got {value}",
        ),
        message("error.scenario_offer_gpu", "hardware.gpu: offer {offer} sells {gpu}"),
        message(
            "error.scenario_offer_count",
            "hardware.count: {offer} sells instances of {gpus} GPUs, got {count}",
        ),
        message(
            "error.scenario_host_memory",
            "hardware.host_memory: a positive size per node, got {value}",
        ),
        message(
            "error.scenario_power_limit",
            "hardware.power_limit_watts: expected a number of watts, got {value}",
        ),
        message(
            "error.scenario_load_imbalance",
            "moe.load_imbalance: expected a number >= 1 (busiest expert / mean), got {value}",
        ),
        message(
            "error.scenario_failure_rate",
            "reliability.failures_per_gpu_hour: expected a number >= 0, got {value}",
        ),
        # input errors: strategies (strategy.py)
        message(
            "error.strategy_etp",
            "strategy.etp: must be a positive whole number (or 0 for tp), got {value}",
        ),
        message(
            "error.strategy_shard_group",
            "strategy.shard_group: must divide {ranks}, the data-parallel ranks (or be 0 for all "
            "of them), got {value}",
        ),
        message(
            "error.strategy_zero_stages",
            "strategy.zero: framework {framework} runs ZeRO stages {stages}, got {value}",
        ),
        message(
            "error.strategy_divide_count",
            "strategy: tp*pp*cp = {model_parallel} does not divide hardware.count = {count}",
        ),
        message(
            "error.strategy_dp",
            "strategy.dp: dp*tp*pp*cp = {product} must equal hardware.count = {count}",
        ),
        message(
            "error.strategy_ep_dense",
            "strategy.ep: expert parallelism needs a mixture-of-experts model; use ep: 1",
        ),
        message(
            "error.strategy_etp_dense",
            "strategy.etp: expert tensor parallelism needs a mixture-of-experts model; leave it out",
        ),
        message(
            "error.strategy_tp_heads",
            "strategy.tp: {tp} does not divide the {heads} attention heads; accepted: {accepted}",
        ),
        message(
            "error.strategy_tp_kv_heads",
            "strategy.tp: {tp} and the {kv_heads} KV heads must divide one another",
        ),
        message(
            "error.strategy_pp_layers", "strategy.pp: {pp} is more than the model's {layers} layers"
        ),
        message(
            "error.strategy_vpp_stages",
            "strategy.vpp: interleaving needs pp >= 2 and at least one layer per virtual stage "
            "(pp*vpp = {stages}, {layers} layers)",
        ),
        message(
            "error.strategy_dualpipe",
            "strategy.schedule: dualpipe needs an even pp >= 2, vpp 1 and an even number of "
            "micro-batches, at least 2*pp (pp = {pp}, vpp = {vpp}, micro-batches = {micro_batches})",
        ),
        message(
            "error.strategy_ep_experts",
            "strategy.ep: {ep} must divide the {experts} experts, and ep*etp = {ep_etp} must "
            "divide dp*cp*tp = {dp_cp_tp}",
        ),
        message(
            "error.strategy_etp_width",
            "strategy.etp: {etp} does not divide the experts' FFN width {width}",
        ),
        message(
            "error.strategy_cp_sequence", "strategy.cp: {cp} does not divide seq_len = {seq_len}"
        ),
        message(
            "error.strategy_batch",
            "strategy.micro_batch: dp*micro_batch = {samples} does not divide global_batch = "
            "{global_batch}",
        ),
        # input errors: frameworks (estimate/frameworks.py)
        message(
            "error.framework_version",
            "framework.version: {value} is not a torchtitan release ({releases}) or a commit "
            "date (2025-04 or 2025-04-02)",
        ),
        message(
            "error.framework_mapping",
            "framework: expected a name ({names}) or a mapping of {accepted}",
        ),
        message(
            "error.framework_version_base",
            "framework.version: only the torchtitan preset has versions, base is {base}",
        ),
        message("error.framework_part_key", "{field}: unknown part key; accepted: {accepted}"),
        message(
            "error.framework_elements",
            "{field}: expected a number of elements >= 0 or hidden^2, got {value}",
        ),
        # input errors: plan requests (search/request.py)
        message("error.headroom", "headroom: must be in [0, 1), got {value}"),
        message("error.deadline", "deadline: must be positive, got {value} s"),
        message(
            "error.plan_etp",
            "strategy.etp: {etp} is estimate-only; the plan search splits experts by tp, as the "
            "step time does: drop etp to search, or give it to gpuplan estimate",
        ),
        message(
            "error.plan_shard_group",
            "strategy.shard_group: {value} is estimate-only; the plan search shards over every "
            "data-parallel rank: drop shard_group to search, or give it to gpuplan estimate",
        ),
        message(
            "error.plan_schedule",
            "strategy.schedule: {value} is estimate-only; the plan search schedules 1f1b: drop "
            "schedule to search, or give it to gpuplan estimate",
        ),
        # input errors: offers files (pricing/offers.py)
        message("error.number", "{field}: expected a number, got {value}"),
        message(
            "error.finite_number",
            "{field}: expected a finite number within ±{largest}, got {value}",
        ),
        message("error.offer_not_package", "plan {plan} is not a package"),
        message("error.offer_no_plan", "offer {offer} has no plan {plan}; its plans: {plans}"),
        message(
            "error.offer_plan_currency",
            "{field}.currency: a plan is priced in its offer's currency ({currency})",
        ),
        message(
            "error.offer_reserved_term",
            "{field}: missing key 'term' (a reserved plan states its term)",
        ),
        message("error.offer_term", "{field}.term: only package and reserved plans have a term"),
        message("error.must_be_positive", "{field}: must be positive"),
        message("error.offer_spot_only", "{field}: only a spot plan is interrupted"),
        message(
            "error.offer_interruptions_source",
            "{field}: interruptions_per_hour needs an interruptions_source",
        ),
        message("error.offer_tiers_increase", "{field}.up_to: tiers must increase"),
        message("error.offer_last_tier", "{field}.up_to: only the last tier may leave it out"),
        message("error.offer_link", "{field}.intra_node: an instance of {gpus} GPUs needs a link"),
        message(
            "error.offer_network_rate",
            "{field}: missing key 'network_gbps_per_gpu' (network {network})",
        ),
        message(
            "error.offer_network_none", "{field}.network_gbps_per_gpu: given for network 'none'"
        ),
        message("error.offer_plan_names", "{field}: plans: plan names must be unique, got {names}"),
        message(
            "error.offer_max_instances",
            "{field}: max_instances: {most} is below min_instances {least}",
        ),
        message("error.offer_gpu", "{path}: offer {offer}: gpu: {error}"),
        message("error.discount_provider", "discount factor for unknown provider {provider}"),
        message("error.discount_form", "discount {text}: expected PROVIDER=FACTOR, e.g. AWS=0.8"),
        message(
            "error.discount_range",
            "discount {text}: the factor must be in (0, 1], e.g. 0.8 for {percent} off",
        ),
        # input errors: exchange rates, quotes, TCO (pricing/)
        message(
            "error.fx_unknown",
            "no exchange rate for {currency}; known: {known} (add one with --fx {pair}=RATE or "
            "--fx {code}=RATE per dollar)",
        ),
        message(
            "error.fx_form",
            "exchange rate {text}: expected A/B=RATE (one A costs RATE B, e.g. USD/CNY=7.1) or "
            "CUR=RATE (one {dollar} costs RATE CUR, e.g. CNY=7.1)",
        ),
        message(
            "error.fx_dollar",
            "exchange rate {text}: CUR=RATE prices the dollar; expected A/B=RATE (one A costs "
            "RATE B, e.g. USD/CNY=7.1) or CUR=RATE (one {dollar} costs RATE CUR, e.g. CNY=7.1)",
        ),
        message("error.fx_number", "exchange rate {text}: {value} is not a number"),
        message("error.fx_positive", "exchange rate {text}: the rate must be positive"),
        message("error.fx_twice", "{field}: currency: given twice (or it is the base)"),
        message(
            "error.fx_finite", "{field}: per_unit: expected a finite positive number, got {value}"
        ),
        message("error.fx_base", "{origin}: base: {base} is not one of {accepted}"),
        message(
            "error.duration_seconds",
            "duration must be a non-negative number of seconds, got {value}",
        ),
        message("error.instances", "the number of instances must be at least 1, got {value}"),
        message("error.tco_figure", "{field}: must be from 0 to 1e15, got {value}"),
        message(
            "error.tco_count", "{field}: must be a whole number from 1 to 1,048,576, got {value}"
        ),
        message(
            "error.tco_pue",
            "{field}.pue: must be from 1 to 5 (facility over IT power), got {value}",
        ),
        message("error.tco_table", "{origin}: [{key}] must be a table"),
        message(
            "error.tco_currency", "{origin}: tco.currency must be one of {accepted}, got {value}"
        ),
        message(
            "error.tco_years",
            "{origin}: tco.years must be a whole number of years from 1 to 30, got {value}",
        ),
        message(
            "error.tco_utilization", "{origin}: tco.utilization must be in (0, 1], got {value}"
        ),
        message("error.tco_unknown_field", "{field}: unknown field (known: {accepted})"),
        message(
            "error.tco_power_twice",
            "{field}: give either operations.power (a yearly figure) or [power], not both",
        ),
        message("error.tco_rent", "{origin}: [rent] needs exactly one of 'monthly' or 'offer'"),
        # input errors: config.json mappings (workload/)
        message("error.config_object", "model: {path} must hold a JSON object of config.json keys"),
        message(
            "error.config_sizes",
            "model: {missing} missing; a config must give {required} (other sizes may take the "
            "family's transformers defaults)",
        ),
        message("error.config_missing", "{field}: missing; a config needs {accepted}"),
        message("error.config_layers", "{field}: expected a list of {layers} per-layer values"),
        message(
            "error.rope_scaling_value",
            "{field}: expected a name, a number or a list of numbers, got {value}",
        ),
        message(
            "error.rope_scaling_size",
            "model.rope_scaling: expected a table of at most {most} entries, got {value}",
        ),
        message("error.keys_are_names", "{field}: keys are names"),
        message(
            "error.router_groups", "model.n_group: {groups} groups do not divide {experts} experts"
        ),
        # input errors: units, observed dates, quote CSV files
        message("error.unit_number", "cannot read {value} as a number"),
        message("error.money_period", "{money} has no period; give one such as /h"),
        message("error.money_range", "{value}: amounts of money run from {low} to {high}"),
        message(
            "error.observed_form", "cannot read observed date {value}; accepted forms: {accepted}"
        ),
        message(
            "error.observed_future",
            "{field}: observed {value} is in the future (today is {today}); give the date the "
            "figure was read",
        ),
        message("error.is_estimate", "{field}: 'is_estimate' must be true or false"),
        message("error.missing_source", "{field}: missing 'source'"),
        message("error.missing_observed", "{field}: missing 'observed' date"),
        message(
            "error.date_quality",
            "{field}.date_quality: {value} does not match observed {observed} ({quality})",
        ),
        message("error.csv_provider", "{path}: missing column provider (or give --provider)"),
        message("error.csv_columns", "{path}: unknown column(s) {unknown}; accepted: {accepted}"),
        # input errors: training jobs (workload/job.py)
        message(
            "error.job_load_imbalance",
            "moe.load_imbalance: the busiest expert's load over the mean, a number >= 1, got {value}",
        ),
        message(
            "error.job_lora_targets",
            "lora.targets: {value} is not attention, all-linear, or a list of {modules}",
        ),
        message("error.job_seq_len", "seq_len: must be a positive number of tokens, got {value}"),
        message(
            "error.job_global_batch",
            "global_batch: must be a positive number of sequences, got {value}",
        ),
        message(
            "error.job_document_tokens",
            "document_tokens: the documents packed into a sequence are 1 to seq_len ({seq_len}) "
            "tokens long, got {value}",
        ),
        message("error.job_tokens", "tokens: must not be negative, got {value}"),
        message(
            "error.job_fp8_all_gather",
            "fp8_all_gather: gathers fp8 weights, so it needs precision: fp8, got {value}",
        ),
        message(
            "error.job_qlora_precision",
            "precision: QLoRA computes in bf16 or fp16 over 4-bit weights, got {value}; "
            "accepted: bf16, fp16, bf16-pure",
        ),
        message(
            "error.job_freeze_layers",
            "trainable_layers: method freeze needs the number of trained layers, 1..{layers}, "
            "got {value}",
        ),
        message(
            "error.job_fused_loss",
            "framework.loss: {value} contradicts fused_loss: true; accepted with it: fused, chunked",
        ),
        message(
            "error.job_attention",
            "framework.attention: {value} contradicts attention_kernel: {kernel}; give one of them",
        ),
        # input errors: clusters (hardware/cluster.py)
        message(
            "error.cluster_power_limit",
            "hardware.power_limit_watts: a positive number of watts, got {value}",
        ),
        message(
            "error.cluster_no_tdp",
            "hardware.power_limit_watts: {gpu} has no sourced TDP in the catalog to scale from",
        ),
        message("error.cluster_count", "hardware.count: must be at least 1 GPU, got {value}"),
        message(
            "error.cluster_nics",
            "hardware.nics_per_node: between 1 and the node's {gpus} GPUs, got {value}",
        ),
        message(
            "error.cluster_unlisted_network",
            "{instances} instances: the offer lists no network between instances "
            "(--allow-unlisted-network models one on their public Ethernet)",
        ),
        # input errors: usage files and bill audits (pricing/audit.py)
        message(
            "error.usage_time",
            "{path}: row {row}: {column}: {value} is not an ISO 8601 time (2026-11-02T08:00:00Z)",
        ),
        message("error.usage_number", "{path}: row {row}: {column}: {value} is not a number"),
        message(
            "error.usage_range",
            "{path}: row {row}: {column}: {value} must be a number from 0 to {high}",
        ),
        message("error.usage_columns", "{path}: missing column(s) {missing} (expected {accepted})"),
        message(
            "error.usage_extra_fields", "{path}: row {row}: more fields than the header has columns"
        ),
        message("error.usage_instance", "{path}: row {row}: instance: empty"),
        message("error.usage_order", "{path}: row {row}: stop {stop} is not after start {start}"),
        message(
            "error.usage_gpus",
            "{path}: row {row}: gpus: {value} is not a whole number from 1 to {high}",
        ),
        message("error.usage_empty", "{path}: no usage rows"),
        message(
            "error.usage_instances",
            "row {row}: {gpus} GPUs is not a whole number of {instance_gpus}-GPU instances of {offer}",
        ),
        message(
            "error.audit_no_metered",
            "offer {offer} has no pay-as-you-go plan to audit against; pass --plan",
        ),
        message(
            "error.audit_package",
            "plan {plan} is a package; audits recompute pay-as-you-go or spot runs",
        ),
        # input errors: catalog files and their schemas (catalog/)
        message(
            "error.column_unknown",
            "{origin}: column {column}: unknown column; accepted: {accepted}",
        ),
        message(
            "error.column_unknown_hint",
            "{origin}: column {column}: unknown column (did you mean {close}?); accepted: {accepted}",
        ),
        message(
            "error.column_missing", "{origin}: missing column {column}; the header needs {accepted}"
        ),
        message("error.schema_name", "schema {name}: not one of {accepted}"),
        message("error.schema_key", "{where}: key {key}: expected {expected}"),
        message("error.schema_missing", "{where}: missing key {key}"),
        message("error.schema_missing_wanted", "{where}: missing key {key} ({wanted})"),
        message(
            "error.not_one_of_hint",
            "{field}: {value} is not one of {accepted} (did you mean {close}?)",
        ),
        message("error.schema_type", "{where}: expected {expected}, got {value}"),
        message(
            "error.schema_date",
            '{where}: expected {expected}, got {value} (write dates as strings: "2026-11-30")',
        ),
        # input errors: imported catalog CSV files (pricing/csv_import.py, quotes_csv.py, gpuhunt.py)
        message("error.csv_cell", "{path}: row {row}, column {column}: {error}"),
        message("error.cell_number", "{value} is not a number"),
        message("error.cell_finite", "{value} is not a finite number"),
        message("error.cell_true_false", "{value} is not True or False"),
        message("error.cell_gpu_count", "{value} is not a whole number of GPUs"),
        message(
            "error.csv_extra_cells", "{path}: row {row}: more cells than the header has columns"
        ),
        message(
            "error.csv_missing_columns",
            "{path}: missing column(s) {missing} (the header has {header})",
        ),
        message("error.csv_no_header", "{path}: missing column(s) {missing} (the header has none)"),
        message("error.cell_missing", "missing; accepted: {accepted}"),
        message("error.cell_not_one_of", "{value} is not one of {accepted}"),
        message(
            "error.cell_observed_missing",
            "missing; give the day of the quote (YYYY-MM-DD) or --observed",
        ),
        message("error.cell_future", "{value} is in the future"),
        message("error.cell_price_missing", "missing: give a positive price"),
        message("error.cell_price", "{value}: give a positive price"),
        message("error.cell_reserved_term", "a reserved plan needs its term (1y, 3y)"),
        message("error.cell_spot_only", "only a spot plan has one, not {mode}"),
        message("error.cell_non_negative", "must be a number >= 0"),
        message("error.cell_interruptions_source", "say where the interruption rate comes from"),
        message("error.cell_gpus", "{value} is not a whole number of GPUs >= 1"),
        message(
            "error.cell_gpu_missing",
            "missing; give a catalog GPU id or alias (`gpuplan gpus` lists them)",
        ),
        message("error.cell_provider_missing", "missing; give the provider's name or --provider"),
        message(
            "error.cell_currency",
            "{currency} differs from {first} of {provider} in row {first_row}; one provider's quotes share a currency",
        ),
        message(
            "error.cell_offer_differs",
            "{value} differs from {first} given for offer {offer} in row {first_row}",
        ),
        message(
            "error.cell_plan_twice",
            "offer {offer} already has a plan {plan} (row {first_row}); give the rows different ids or a name column",
        ),
        # input errors: offers import (pricing/offers_import.py)
        message("error.import_read", "cannot read {path}: {reason}"),
        message(
            "error.import_format",
            "{path}: the header is no catalog format gpuplan reads; {needs} (or give --format)",
        ),
        message(
            "error.import_output",
            "--output: the file holds {count} providers ({providers}); leave --output out to write one file each",
        ),
        # input errors: model families (workload/families/)
        message(
            "error.config_moe_width",
            "model.moe_intermediate_size: missing for a mixture-of-experts model",
        ),
        message(
            "error.config_experts_per_token",
            "model.num_experts_per_tok: must be between 1 and num_experts ({experts}), got {value}",
        ),
        message(
            "error.config_positions", "model.max_position_embeddings: needed for learned positions"
        ),
        message(
            "error.config_layer_types", "model.layer_types: expected a list of {layers} layer types"
        ),
        message(
            "error.config_no_vision",
            "model.vision_config: gpuplan counts no vision tower for {family}; give the text model's config (its text_config) alone",
        ),
        message(
            "error.config_vision_table", "model.vision_config: expected a table of config.json keys"
        ),
        message(
            "error.config_heads",
            "model.num_attention_heads: {heads} heads do not divide hidden_size {hidden}; give head_dim",
        ),
        message(
            "error.config_kv_heads",
            "model.num_key_value_heads: {kv_heads} does not divide num_attention_heads {heads}",
        ),
        message(
            "error.config_too_large",
            "model: {params} parameters, more than {most} (check num_hidden_layers, hidden_size, intermediate_size and the expert sizes)",
        ),
        message(
            "error.config_moe_layers",
            "model.moe_layers: {value} is not every interleave_moe_layer_step-th layer ({step}: layers {first}, {second}, ...), the only routing gpuplan models; leave moe_layers out",
        ),
        message("error.config_family", "model_type: unknown family {value}; accepted: {accepted}"),
        message("error.config_mapping", "model: expected a mapping of config.json keys"),
        # input errors: reading files (limits.py)
        message("error.file_read", "cannot read {file} {name}: {reason}"),
        message("error.file_size", "{file} {name} is larger than {limit} MiB"),
        message(
            "error.file_utf8", "{file} {name} is not UTF-8 text (byte {byte}); save it as UTF-8"
        ),
        message("file_kind.scenario", "scenario file"),
        message("file_kind.model_config", "model config file"),
        message("file_kind.offers", "offers file"),
        message("file_kind.rates", "rates file"),
        message("file_kind.tco", "TCO file"),
        message("file_kind.usage", "usage file"),
        message("file_kind.quotes", "quotes CSV file"),
        message("file_kind.gpuhunt", "gpuhunt catalog file"),
        message("file_kind.skypilot", "SkyPilot catalog file"),
        message("error.json_syntax", "{origin}: not valid JSON (line {line}, column {column})"),
        message("error.json_constant", "{origin}: {name} is not a number JSON allows"),
        message("error.nesting", "{origin}: nested deeper than {most} levels"),
        message(
            "error.yaml_aliases",
            "{origin}: its aliases expand to more than {most} values (or refer to themselves); write the values out instead",
        ),
        message("error.yaml_syntax", "{origin}: not valid YAML"),
        message("error.yaml_syntax_line", "{origin}: not valid YAML (line {line})"),
        message("error.toml_syntax", "{origin}: malformed TOML: {reason}"),
        message("error.toml_nesting", "{origin}: nested deeper than TOML readers allow"),
        # input errors: the benchmark store and written files (store.py, writing.py)
        message("error.store_empty", "no benchmark runs are stored yet ({path} does not exist)"),
        message("error.store_open", "{variable}: cannot open the database {path}: {reason}"),
        message("error.store_unusable", "{variable}: the database {path} cannot be used: {reason}"),
        message("error.store_no_run_update", "run id: no stored benchmark run {run} to update"),
        message(
            "error.store_no_run", "run id: no stored benchmark run {run} (`gpuplan bench history`)"
        ),
        message("error.write_symlink", "{path} is a symbolic link; give the real path"),
        message("error.write_directory", "{path} is a directory; give a file name"),
        message("error.write_exists", "{path} already exists; pass --force to replace it"),
        message("error.write_no_directory", "cannot write {path}: no such directory {directory}"),
        message("error.write_failed", "cannot write {path}: {reason}"),
        # input errors: bench tool output, thresholds, profiles (bench/)
        message("error.tool_smi_xml", "nvidia-smi -q -x: not valid XML ({reason})"),
        message(
            "error.tool_smi_root", "nvidia-smi -q -x: the root element is not <nvidia_smi_log>"
        ),
        message("error.tool_smi_empty", "nvidia-smi --query-gpu: empty output"),
        message(
            "error.tool_smi_row",
            "nvidia-smi --query-gpu: a row has {fields} fields, the header {header}",
        ),
        message("error.tool_fio_json", "fio: output is not JSON ({reason})"),
        message("error.tool_fio_jobs", "fio: the JSON has no jobs"),
        message("error.tool_nccl_rows", "nccl-tests: no result rows found"),
        message(
            "error.profile_no_figures",
            "run id: run {run} has no measured figures to calibrate with",
        ),
        message(
            "error.threshold_form",
            "--threshold {text}: expected CATEGORY=PASS:WARN, CATEGORY in {accepted}",
        ),
        message("error.threshold_numbers", "--threshold {text}: PASS and WARN must be numbers"),
        message(
            "error.threshold_negative", "--threshold {text}: PASS and WARN must be non-negative"
        ),
        message("error.bench_part", "--only/--skip: unknown part {part}; parts: {accepted}"),
        message("error.bench_device", "--device: expected cuda or cpu, got {value}"),
        message("error.bench_storage_dir", "--storage-dir: {path} is not a directory"),
        message("error.bench_nodes", "--nodes/--gpus-per-node: must be at least 1"),
        message(
            "error.bench_no_cuda",
            "--device: no CUDA GPU is visible to PyTorch (torch {torch}); run with --device cpu to test the pipeline",
        ),
        # input errors: result names, quote durations
        message("error.result_name", "result {name}: not one of {accepted}"),
        message("error.negative_duration", "{field} must not be negative, got {value}"),
        # input errors: command lines (cli/)
        message(
            "error.plan_model_missing",
            "model: give --model, a scenario file, or --preset ({presets})",
        ),
        message("error.import_output_input", "--output must not be the input file"),
        message(
            "error.quote_duration_missing", "give --duration, or --tokens with --tokens-per-second"
        ),
        message(
            "error.quote_scenario_gpu",
            "scenario: hardware.gpu {gpu} differs from the offer's GPU {offer_gpu}",
        ),
        message(
            "error.quote_scenario_tokens",
            "scenario: tokens missing; the duration to quote comes from tokens / throughput",
        ),
        message("error.report_format", "--format: expected table or md, got {value}"),
        message(
            "error.serve_remote",
            "--host {host}: serves gpuplan to the network with no login; add --allow-remote to mean it, or keep the default 127.0.0.1",
        ),
        message(
            "error.strategy_part", "strategy: {part}: expected KEY=VALUE with KEY one of {accepted}"
        ),
        # input errors: learning-rate schedules (estimate/schedule.py), bench networks
        message(
            "error.training_warmup",
            "training.warmup_steps: expected a whole number from 0 to 1,000,000,000, got {value}",
        ),
        message(
            "error.training_min_rate",
            "training.min_learning_rate: {minimum} is above the peak learning rate {peak}",
        ),
        message(
            "error.bench_network", "--network: {value} is neither a rate nor one of {accepted}"
        ),
        # input errors: exports (export/)
        message(
            "error.export_deepspeed_offload",
            "strategy.offload: DeepSpeed offloads only under ZeRO stage 1 or more",
        ),
        message(
            "error.export_param_offload",
            "strategy.offload: parameter offload needs ZeRO stage 3, got zero={zero}",
        ),
        message("error.export_plan", "plan: expected a plan dict with gpu, count and strategy"),
        message(
            "error.export_layout_count",
            "plan.strategy: dp*tp*pp*cp = {layout} must equal the GPU count {count}",
        ),
        message("error.export_nodes", "plan.nodes: {nodes} nodes cannot hold {count} GPUs evenly"),
        message(
            "error.export_schedule",
            "plan.strategy.schedule: {value} has no launch config here; the exports run 1f1b "
            "(interleaved with vpp > 1)",
        ),
        message(
            "error.export_batch",
            "global_batch: {global_batch} sequences is not a multiple of micro_batch*dp = {samples}",
        ),
        message(
            "error.export_tokens",
            "tokens: the scenario gives no token budget; exports derive the step count from tokens / (global_batch * seq_len)",
        ),
        message(
            "error.export_full_only",
            "method: {target} export covers full training only, got {method}; use {alternatives}",
        ),
        message(
            "error.export_data_parallel_only",
            "strategy: {target} shards over data parallelism only, got {split}; use the {alternatives} export",
        ),
        message("export_target.deepspeed", "a DeepSpeed config"),
        message("export_target.accelerate", "an Accelerate FSDP config"),
        message("export_alternatives.peft", "the accelerate or deepspeed export with PEFT"),
        message("export_alternatives.megatron_torchtitan", "megatron or torchtitan"),
        message("export_alternatives.torchtitan_megatron", "torchtitan or megatron"),
        message(
            "error.export_megatron_fsdp_pp",
            "strategy.zero: Megatron-FSDP (ZeRO-3) does not combine with pipeline parallelism; use the torchtitan export (FSDP with pipelining) or zero 1",
        ),
        message(
            "error.export_megatron_offload",
            "strategy.offload: Megatron-LM cannot offload parameters; use the deepspeed export (ZeRO-3 offload_param) or the accelerate export",
        ),
        message(
            "error.export_skypilot_gpu",
            "gpu: SkyPilot has no accelerator name for {gpu}; accepted: {accepted}; use the megatron or torchtitan export",
        ),
        message(
            "error.export_torchtitan_fp16",
            "precision: torchtitan trains in bf16 or fp32, not fp16; use the megatron, deepspeed or accelerate export",
        ),
        message("error.export_ep_dense", "strategy.ep: {ep} needs a mixture-of-experts model"),
        # input errors: estimates, GPUs, billing mixes, spot runs, TCO, search limits
        message(
            "error.profile_no_gpu",
            "profile: bench run {run} measured no catalog GPU; it cannot calibrate a GPU",
        ),
        message(
            "error.estimate_no_gpu",
            "hardware.gpu: estimate needs a GPU (e.g. h100-sxm-80gb); `gpuplan gpus` lists them",
        ),
        message(
            "error.gpu_no_peak", "{gpu} has no dense {dtype} peak in the catalog; known: {known}"
        ),
        message("error.gpu_speed_gap", "{gpu}: speed not predicted. {gap}"),
        message(
            "error.gpu_no_bandwidth",
            "{gpu} has no sourced memory bandwidth in the catalog; the speed model needs one",
        ),
        message(
            "error.billing_no_plan",
            "the offer has no pay-as-you-go, package or reserved plan to quote",
        ),
        message(
            "error.billing_states",
            "too many package combinations to search ({states} steps of {step} s); quote a shorter duration or remove very short packages",
        ),
        message(
            "error.billing_uncovered", "no combination of the offer's plans covers the duration"
        ),
        message("error.spot_rate", "interruption rate must be a non-negative number per hour"),
        message("error.spot_restart", "restart overhead must be a non-negative duration"),
        message("error.spot_stretch", "a spot run cannot be shorter than the uninterrupted one"),
        message("error.tco_quote_engine", "renting offer {offer} needs the quote engine"),
        message(
            "error.layout_limit",
            "max_layouts: the search tries more than {most} layouts, the limit of one request here; narrow it (gpus, max_gpus, or a strategy that fixes tp, pp or ep)",
        ),
        # input errors: missing extras, uncached models, rejected offers, amounts
        message(
            "error.missing_extra",
            "{command} needs the {extra} extra ({brings}); {missing} is not installed: {install}",
        ),
        message("extra_brings.bench", "PyTorch and nvidia-ml-py"),
        message("extra_brings.web", "FastAPI, uvicorn, python-multipart and Jinja2"),
        message(
            "error.hf_not_cached",
            "model: {repo} is not a catalog model and its config.json is not in the local Hugging Face cache ({cache}); gpuplan reads it offline: fetch it with `hf download {repo} config.json` (huggingface_hub), or give a config.json path",
        ),
        message("error.offer_rejected", "{where}: {problem}; rejected"),
        message(
            "error.offer_rejected_more",
            "{where}: {problem}; rejected (and {more} more: `gpuplan offers --check`)",
        ),
        message("unit_kind.money", "an amount of money"),
        message("unit_forms.amount", "an amount with a currency: ¥2000, 5000 USD, $300"),
        message("cli.warning", "warning:"),
        # bench tables
        message("bench.col.figure", "figure"),
        message("bench.col.measured", "measured"),
        message("bench.col.spec", "spec"),
        message("bench.col.ratio", "ratio"),
        message("bench.col.reference", "reference"),
        message("bench.col.ratio_reference", "ratio "),
        message("bench.col.verdict", "verdict"),
        message("bench.col.id", "id"),
        message("bench.col.date", "date"),
        message("bench.col.host", "host"),
        message("bench.col.device", "device"),
        message("bench.col.gpu", "gpu"),
        message("bench.col.method", "method"),
        message("bench.col.command", "command"),
        message("bench.col.item", "item"),
        message("bench.col.advertised", "advertised"),
        message("bench.col.reference_ratio", "reference ratio"),
        # audit
        message("audit.title", "Recomputed bill: {offer} ({plan})"),
        message("audit.row", "row {row} {instance} {start} → {stop}"),
        message("audit.billed_seconds", "{seconds} s billed"),
        message("audit.fees_line", "Fees are {share} of the recomputed total."),
        message("audit.invoice_line", "Invoice {invoiced} minus recomputed: {difference}"),
        # tco
        message("tco.title", "Buy versus rent over {years} years ({currency}, cumulative)"),
        message(
            "tco.buy_line",
            "Buy: capex {capex}, financing {financing}, refresh {refresh}/year, "
            "residual value {residual}",
        ),
        message("tco.total_line", "Total: buy {buy} vs rent {rent}; renting saves {saving}"),
        message("tco.total_line_buy", "Total: buy {buy} vs rent {rent}; buying saves {saving}"),
        message("tco.break_even_month", "Break-even month: {month}"),
        message(
            "tco.never", "Cumulative rent never reaches the cost of owning within the horizon."
        ),
        message("tco.pays_off", "Buying pays off above {share} utilization."),
        message("tco.never_pays", "Buying does not pay off at any utilization with these inputs."),
        # throughput lines
        message(
            "speed.throughput",
            "throughput {tokens} tokens/s ({per_gpu} per GPU), {tflops} model TFLOP/s per GPU, "
            "MFU {mfu}, HFU {hfu} of the dense bf16 peak; matmuls in {dtype}",
        ),
        message(
            "speed.goodput",
            "goodput {goodput}: checkpoint of {size} every {interval} (stall {stall}), "
            "one failure every {mtbf} expected",
        ),
        message("speed.run_length", "{duration} to train {tokens} tokens"),
        message(
            "interval.basis",
            "{coverage} interval from the model's errors on {rows} published runs of sources it was "
            "not fitted on ({basis})",
        ),
        message("interval.none", "no interval: the speed model has no recorded held-out errors"),
        message("interval.all_rows", "all runs"),
        message("interval.dense", "dense"),
        message("interval.gpus", "{gpus} GPUs"),
        message("speed.fp8_note", " (fp8 speeds up the matmuls only)"),
        # reports
        message("report.title.plan", "GPU rental plan"),
        message("report.title.estimate", "Training estimate"),
        message("report.title.quote", "Rental quote"),
        message("report.title.tco", "Buy versus rent"),
        message("report.title.bench", "Benchmark run"),
        message("report.generated", "Generated by gpuplan {version} on {date}"),
        message("report.answer", "The answer"),
        message("report.scenario", "Scenario"),
        message("report.plans", "Plans"),
        message("report.memory", "Memory per GPU"),
        message("report.step_time", "Step time"),
        message("report.pareto", "Cost versus days"),
        message("report.billing", "Billing modes for the chosen offer"),
        message("report.tco", "Buy versus rent"),
        message("report.quote_lines", "Itemized cost"),
        message("report.assumptions", "Assumptions and sources"),
        message("report.warnings", "Warnings"),
        message("report.measurements", "Measurements"),
        message("report.no_plan", "No plan meets the request: {reason}"),
        message(
            "report.answer.plan",
            "Rent {count} x {gpu} as {offer} ({machine}) for {days}: {cost} in total "
            "({per_million} per million tokens) at {provider}, billed {mix}.",
        ),
        message(
            "report.answer.plan_unpriced",
            "Use {count} x {gpu} for {days}; no catalog offer prices it.",
        ),
        message(
            "report.answer.estimate",
            "{model} on {count} x {gpu}: {fit_word}, peak {peak} GiB per GPU; {tokens_per_s} tokens/s, "
            "MFU {mfu}; {days}.",
        ),
        message(
            "report.answer.estimate_nodays",
            "{model} on {count} x {gpu}: {fit_word}, peak {peak} GiB per GPU; {tokens_per_s} tokens/s, "
            "MFU {mfu}.",
        ),
        message(
            "report.answer.quote",
            "{instances} x {offer} for {duration}: {total} in total, {per_gpu_hour} per GPU-hour, "
            "fees {fees_share} of the total.",
        ),
        message(
            "report.answer.tco",
            "Over {years} years buying costs {buy} and renting {rent}: renting saves {saving}.",
        ),
        message(
            "report.answer.tco_buy",
            "Over {years} years buying costs {buy} and renting {rent}: buying saves {saving}.",
        ),
        message("report.answer.bench", "Run {id} on {host}: {passed} of {total} checks pass."),
        message("report.break_even", "Break-even: month {month}."),
        message("report.no_break_even", "Renting stays cheaper over the whole horizon."),
        message(
            "report.memory_caption", "Peak memory per GPU by part, against the usable capacity."
        ),
        message("report.step_caption", "Where one optimizer step's time goes."),
        message(
            "report.pareto_caption",
            "Every priced plan (dots) and the Pareto front (line): no plan is both cheaper and faster.",
        ),
        message(
            "report.billing_caption",
            "The chosen offer under each billing mode alone, for the same job.",
        ),
        message(
            "report.tco_caption",
            "Cumulative cost of buying and of renting; the mark is the break-even.",
        ),
        message("report.markdown_chart_note", "(chart in the HTML report)"),
        message(
            "report.tco_plan_note",
            "Buying {gpus} GPUs at the catalog price {price} each, with power at {kwh} per kWh and "
            "PUE {pue}, against renting the chosen offer around the clock.",
        ),
        message("report.scenario.model", "model"),
        message("report.scenario.method", "method"),
        message("report.scenario.tokens", "tokens"),
        message("report.scenario.seq_len", "sequence length"),
        message("report.scenario.global_batch", "global batch"),
        message("report.scenario.precision", "precision"),
        message("report.scenario.budget", "budget"),
        message("report.scenario.deadline", "deadline"),
        message("report.scenario.objective", "objective"),
        message("report.scenario.gpus", "GPUs"),
        message("report.scenario.providers", "providers"),
        message("report.scenario.hardware", "hardware"),
        message("report.scenario.strategy", "layout"),
        # chart axes
        message("axis.memory_gib", "memory per GPU (GiB, 2^30 bytes)"),
        message("axis.seconds", "seconds per step"),
        message("axis.days", "training time (days)"),
        message("axis.cost", "total cost ({currency})"),
        message("axis.year", "years"),
        message("axis.cumulative", "cumulative cost ({currency})"),
        message("chart.usable", "usable {value} GiB"),
        message("chart.capacity", "capacity"),
        message("chart.plans", "plans"),
        message("chart.pareto", "Pareto front"),
        message("chart.chosen", "chosen"),
        message("chart.break_even", "break-even"),
        # assumptions
        message("assume.gpu", "GPU {gpu}: specs"),
        message("assume.offer", "offer {offer}, plan {plan}"),
        message("assume.efficiency", "fitted speed efficiencies"),
        message("assume.efficiency_value", "{rows} measurements from {sources} sources, {method}"),
        message("assume.exchange", "exchange rate {currency}/{base}"),
        message("assume.tco", "TCO input {field}"),
        message("assume.headroom", "memory kept free per GPU"),
        message("assume.month", "a month is 30 days"),
        message("assume.dense", "peaks are dense (not sparse) tensor FLOP/s"),
        message("assume.power", "owning: power use and price"),
        # web
        message("web.title", "gpuplan"),
        message("web.tagline", "Plan GPU rentals for LLM training"),
        message("web.nav.plan", "Plan"),
        message("web.nav.estimate", "Estimate"),
        message("web.nav.quote", "Quote"),
        message("web.nav.tco", "Buy or rent"),
        message("web.nav.catalog", "Catalog"),
        message("web.nav.api", "API"),
        message("web.form.model", "Model (catalog name, or paste a config.json)"),
        message("web.form.config", "or upload a config.json (at most 64 KiB)"),
        message("web.form.method", "Method"),
        message("web.form.tokens", "Training tokens"),
        message("web.form.seq_len", "Sequence length"),
        message("web.form.global_batch", "Global batch (sequences)"),
        message("web.form.budget", "Budget"),
        message("web.form.deadline", "Deadline"),
        message("web.form.objective", "Objective"),
        message("web.form.max_gpus", "Largest cluster"),
        message("web.form.gpus", "Only these GPUs (comma-separated ids)"),
        message("web.form.providers", "Only these providers (comma-separated)"),
        message("web.form.currency", "Currency"),
        message("web.form.gpu", "GPU"),
        message("web.form.count", "Number of GPUs"),
        message("web.form.strategy", "Layout (optional, e.g. tp=2 pp=1 zero=3)"),
        message("web.form.offer", "Offer"),
        message("web.form.duration", "Duration"),
        message("web.form.instances", "Instances"),
        message("web.form.tco_file", "TCO inputs (TOML, see examples/seed-tco.toml)"),
        message("web.form.submit", "Compute"),
        message("web.form.example", "Load the seed article's example"),
        message("web.download.html", "Download the HTML report"),
        message("web.download.json", "Download the JSON"),
        message("web.error", "Cannot compute this: {message}"),
        message("web.catalog.models", "Models"),
        message("web.catalog.gpus", "GPUs"),
        message("web.catalog.offers", "Offers"),
        message("web.language", "Language"),
        message(
            "web.intro.plan",
            "Every GPU type, cluster size and parallel layout, priced at real dated offers, ranked.",
        ),
        message(
            "web.intro.estimate",
            "One cluster and layout: memory part by part, step time, MFU and days.",
        ),
        message(
            "web.intro.quote",
            "The itemized cost of one offer for a duration, under every billing mode.",
        ),
        message("web.intro.tco", "Buy versus rent over N years, from a TOML file of inputs."),
        message(
            "error.model_path",
            "model: give a catalog name, paste or upload a config.json; paths on the server are not opened",
        ),
        message("error.upload_size", "the uploaded file is larger than {limit} KiB"),
        message("error.upload_json", "the uploaded file is not a JSON object: {reason}"),
        message(
            "error.pasted_json", "model: the pasted config.json is not a JSON object: {reason}"
        ),
        # seed check
        message("seed.title", "The seed article, checked"),
        message(
            "seed.intro",
            "Every figure in the seed article (shared/seed/gpu-rental-guide-2026.zh.md) that gpuplan "
            "can compute, beside gpuplan's answer to the same question. The article's figures are "
            "quoted as data in `src/gpuplan/report/seed_check.py`; gpuplan's are computed by its API "
            "when this page is generated (`python scripts/seed_check.py`). ✓ the claim holds, "
            "≈ it holds within 15 %, or only as arithmetic, ✗ it does not.",
        ),
        message("seed.col.section", "§"),
        message("seed.col.claim", "claim"),
        message("seed.col.seed", "article"),
        message("seed.col.gpuplan", "gpuplan"),
        message("seed.col.difference", "difference"),
        message("seed.col.verdict", "✓ ≈ ✗"),
        message("seed.col.reason", "why"),
        message(
            "seed.summary", "{held} hold, {close} roughly hold, {wrong} do not, of {total} figures."
        ),
        message("seed.section.memory", "Memory"),
        message("seed.section.compute", "Compute peaks and training days"),
        message("seed.section.interconnect", "Interconnect"),
        message("seed.section.tiers", "Tier prices"),
        message("seed.section.unit_cost", "Unit cost per trained token"),
        message("seed.section.tco", "Three-year TCO"),
        message(
            "seed.claim.memory_rule",
            "{model}: params × 12 bytes (weights, grads, Adam) ≥ {size} GB",
        ),
        message("seed.claim.adam_states", "Adam states take 8 GB per billion parameters"),
        message("seed.claim.peak_fp16", "{gpu}: FP16 {tflops} TFLOPS"),
        message("seed.claim.peak_tensor", "{gpu}: Tensor Core {tflops} TFLOPS"),
        message("seed.claim.days", "{model} on {count} x {gpu}: {days} days"),
        message("seed.claim.no_fit", "{model} on {count} x {gpu}: cannot fit"),
        message("seed.claim.link", "{gpu}: {link} {bandwidth} GB/s per card"),
        message("seed.claim.comm", "{gpu}: 8-card communication overhead {share}"),
        message("seed.claim.yearly", "{tier}: yearly at 35 % below list = {amount}"),
        message("seed.claim.student", "RTX 4090 at ¥1.86/h for 50 hours a month = ¥93"),
        message("seed.claim.tokens_day", "{gpu} trains a 7B model at {tokens} tokens a day"),
        message(
            "seed.claim.unit_arith",
            "{tier}: {rent} / {tokens} tokens a month = ¥{cost} per 1,000 tokens",
        ),
        message("seed.claim.unit_real", "{tier}: ¥{cost} per 1,000 trained tokens"),
        message("seed.claim.tco_buy", "build 8 x A100: 3-year cost ¥984万"),
        message("seed.claim.tco_rent", "rent 8 x A100: 3-year cost ¥384万"),
        message("seed.claim.tco_saving", "renting saves 60 %"),
        message(
            "seed.reason.memory_rule",
            "mixed-precision AdamW keeps 16 bytes per parameter (bf16 weights 2 + grads 2 + fp32 "
            "master 4 + m 4 + v 4), not 12; gpuplan's figure is model states only, peak adds "
            "activations at seq 4096",
        ),
        message(
            "seed.reason.adam_states",
            "m and v in fp32 are 8 bytes per parameter, right; the fp32 master copy (4 more) is "
            "missing from the article's 12",
        ),
        message("seed.reason.peak_ok", "the catalog's dense peak, from the vendor datasheet"),
        message(
            "seed.reason.peak_fp16_accumulate",
            "330 is the FP16 rate with FP16 accumulate; training accumulates in FP32 at 165 dense",
        ),
        message(
            "seed.reason.peak_sparse", "the sparse (2:4) figure, twice the dense peak training gets"
        ),
        message(
            "seed.reason.days_full",
            "a full fine-tune of {model} does not fit on {count} x {gpu} ({peak} GiB needed per GPU); "
            "the claim names no token count: at gpuplan's {method} speed ({tokens_per_s} tokens/s) "
            "{days} days train {trained} tokens",
        ),
        message(
            "seed.reason.no_fit_ok", "gpuplan agrees: the smallest layout needs {peak} GiB per GPU"
        ),
        message(
            "seed.reason.link", "catalog per-GPU bandwidth, one direction ({both} both directions)"
        ),
        message(
            "seed.reason.comm",
            "exposed communication share of the step, {model} with ZeRO-3 on 8 GPUs "
            "({layout}); depends on model and layout, not only on the link",
        ),
        message(
            "seed.reason.yearly",
            "12 × monthly × 0.65; the article's own rule gives a different figure",
        ),
        message("seed.reason.student", "gpuplan's quote of the article's own offer for 50 hours"),
        message(
            "seed.reason.tokens_day",
            "gpuplan's {method} speed for {model} on one {gpu}: {tokens_per_s} tokens/s at "
            "{mfu} MFU; the article is some four orders of magnitude low",
        ),
        message("seed.reason.unit_arith", "the article's own division"),
        message(
            "seed.reason.unit_real",
            "gpuplan: {method} of {model} on the tier's cluster at {tokens_per_s} tokens/s "
            "({mfu} MFU), a month's rent over a month's tokens",
        ),
        message(
            "seed.reason.tco", "`gpuplan tco examples/seed-tco.toml` from the article's own inputs"
        ),
        message("seed.reason.tco_saving", "(984 - 384) / 984 from the reproduced totals"),
        message(
            "seed.footer",
            "Regenerate with `python scripts/seed_check.py`. The article's figures are its claims; "
            "gpuplan's are model predictions with the provenance listed in its catalogs.",
        ),
    )
)
