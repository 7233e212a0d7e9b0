"""The search itself: offers to machines, machines to rows, rows to the answer."""

from __future__ import annotations

import datetime as dt
import time
from collections.abc import Sequence
from dataclasses import replace
from typing import Any

import numpy as np
import numpy.typing as npt

from gpuplan.estimate.memory import HOST_MEMORY_MARGIN
from gpuplan.hardware.gpu import GPUSpec, MissingPeakError, MissingSpecError
from gpuplan.hardware.topology import InstanceTopology
from gpuplan.notices import Notice
from gpuplan.scenario import Scenario
from gpuplan.search.evaluate import (
    Shortfall,
    best_per_cluster_size,
    estimate_first_pass,
    evaluate_machines,
    offer_holds_host_memory,
    weight_shortfall,
)
from gpuplan.search.layout_cache import SearchCache
from gpuplan.search.machines import Machine, group_machines, machine_gpu_counts
from gpuplan.search.ranking import PlanCandidate, cost_floor, pareto_front, select_rows
from gpuplan.search.reasons import Reason, reason, reasons_text
from gpuplan.search.request import PlanRequest
from gpuplan.search.rows import add_cost_bounds, offer_notices, offer_sells, plan_row

IntArray = npt.NDArray[np.int64]
FloatArray = npt.NDArray[np.float64]


def _filtered_offers(book: Any, request: PlanRequest) -> list[Any]:
    """The catalog's offers under the request's provider and billing filters."""
    providers = {name.lower() for name in request.providers}
    offers = []
    for offer in book.offers:
        if providers and offer.provider.lower() not in providers:
            continue
        if request.billing:
            plans = tuple(
                plan
                for plan in offer.plans
                if plan.mode in request.billing or plan.kind in request.billing
            )
            if not plans:
                continue
            offer = replace(offer, plans=plans)
        offers.append(offer)
    return offers


# --- the search ------------------------------------------------------------------------------


def _machines(
    request: PlanRequest, book: Any, gpus: list[GPUSpec]
) -> tuple[list[Machine], list[str]]:
    """Machines to evaluate, and the GPUs no offer sells. A scenario with fixed hardware that no
    offer sells is modelled as given, unpriced."""
    by_id = {gpu.id: gpu for gpu in gpus}
    machines = group_machines(
        _filtered_offers(book, request), by_id, request.allow_unlisted_network
    )
    offered = {machine.gpu.id for machine in machines}
    unoffered = [gpu.id for gpu in gpus if gpu.id not in offered]
    cluster = request.scenario.cluster
    if cluster is not None:
        machines = [
            machine
            for machine in machines
            if machine_gpu_counts(machine, request.scenario, request)
        ]
        if not machines and not (request.providers or request.billing):
            topology = InstanceTopology(
                gpus=cluster.gpus_per_node,
                intra_node=cluster.intra_node_link,
                peer_to_peer=bool(cluster.peer_to_peer),
                network=cluster.network,
                network_bandwidth=cluster.inter_node_bandwidth,
                nvlink_domain=cluster.nvlink_domain,
                source="scenario hardware",
            )
            machines = [Machine(cluster.gpu, topology, (), listed=False)]
    return machines, unoffered


def job_summary(request: PlanRequest) -> dict[str, Any]:
    """The job the plans answer, restated above every answer."""
    scenario = request.scenario
    job = scenario.job
    return {
        "model": job.model.name,
        "total_params": job.model.total_params,
        "method": job.method,
        "precision": job.precision,
        "tokens": job.tokens,
        "seq_len": job.seq_len,
        "global_batch": job.global_batch,
        "global_batch_tokens": job.global_batch_tokens,
        "batch_rule": scenario.batch_rule,
        "budget": str(request.budget) if request.budget is not None else None,
        "deadline_seconds": request.deadline_seconds,
        "max_gpus": request.max_gpus,
        "objective": request.objective,
        "allow_unlisted_network": request.allow_unlisted_network,
    }


def plan(request: PlanRequest) -> dict[str, Any]:
    """Search, price, filter and rank (module docstring). Returns the JSON-able result:
    ``{"job": {...}, "plans": [...], "pareto": [...], "evaluated": N, "seconds": t,
    "explanation": str, ...}``."""
    started = time.perf_counter()
    from gpuplan.catalog import all_gpus, resolve_gpu_id
    from gpuplan.pricing.currency import build_rates
    from gpuplan.pricing.offers import OfferBook

    scenario = request.scenario
    allowed = {resolve_gpu_id(name) for name in request.gpus}
    excluded = {resolve_gpu_id(name) for name in request.exclude_gpus}
    if scenario.cluster is not None:
        allowed = {scenario.cluster.gpu.id}
    gpus = [
        gpu for gpu in all_gpus() if (not allowed or gpu.id in allowed) and gpu.id not in excluded
    ]
    rates = build_rates(request.fx, request.fx_file)
    currency = request.currency or (request.budget.currency if request.budget else "USD")
    rates.rate(currency)
    request = replace(request, currency=currency, today=request.today or dt.date.today())
    assert request.today is not None
    book = OfferBook.build(
        request.offers_file, discount_factors=request.discount_factors or None, rates=rates
    )
    machines, unoffered = _machines(request, book, gpus)

    evaluated_total = 0
    candidates: list[PlanCandidate] = []
    shortfalls: list[Shortfall] = []
    host_misses: list[Shortfall] = []
    skipped: dict[str, str] = {}
    notices_by_offer: dict[str, list[Notice]] = {}
    by_gpu: dict[str, list[tuple[Machine, list[int]]]] = {}
    for machine in machines:
        counts = machine_gpu_counts(machine, scenario, request)
        if counts:
            by_gpu.setdefault(machine.gpu.id, []).append((machine, counts))
            continue
        sold = machine_gpu_counts(machine, scenario, request, lower_bound=False)
        if sold:
            shortfalls.append(weight_shortfall(scenario, machine.gpu, max(sold), request))
    cache = SearchCache()
    estimate_first_pass(scenario, list(by_gpu.values()), request, cache)
    for gpu_id, group in by_gpu.items():
        try:
            budget = None if request.max_layouts is None else request.max_layouts - evaluated_total
            results, count, shortfall = evaluate_machines(scenario, group, request, cache, budget)
        except (MissingSpecError, MissingPeakError) as missing:
            skipped[gpu_id] = str(missing)
            continue
        evaluated_total += count
        if shortfall is not None and not results:
            shortfalls.append(shortfall)
        for evaluated in results:
            machine = evaluated.machine
            for index in best_per_cluster_size(evaluated):
                gpu_count = int(evaluated.candidates.count[index])
                sellers = [offer for offer in machine.offers if offer_sells(offer, gpu_count)]
                host_need = (
                    0.0 if evaluated.host_bytes is None else float(evaluated.host_bytes[index])
                )
                for offer in sellers:
                    if not offer_holds_host_memory(offer, host_need):
                        host_misses.append(
                            Shortfall(
                                machine.gpu.id,
                                gpu_count,
                                host_need,
                                offer.ram_gb * 1e9 * (1 - HOST_MEMORY_MARGIN),
                                kind="host",
                            )
                        )
                sellers = [offer for offer in sellers if offer_holds_host_memory(offer, host_need)]
                for offer in sellers or ([None] if not machine.offers else []):
                    candidates.append(
                        PlanCandidate(
                            evaluated,
                            index,
                            offer,
                            float(evaluated.duration_seconds[index]),
                            cost_floor(offer, gpu_count, evaluated, index, request, rates),
                        )
                    )

    offers_by_id: dict[str, Any] = {}

    def build(candidate: PlanCandidate) -> dict[str, Any]:
        offer = candidate.offer
        if offer is not None:
            offers_by_id[offer.id] = offer
        if offer is not None and offer.id not in notices_by_offer:
            assert request.today is not None
            notices_by_offer[offer.id] = offer_notices(offer, request.today)
        return plan_row(
            candidate.evaluated,
            candidate.index,
            offer,
            scenario,
            request,
            rates,
            notices_by_offer.get(offer.id, []) if offer is not None else [],
        )

    rows = select_rows(candidates, request, build)
    pareto = pareto_front(rows)
    if request.objective == "pareto":
        rows = pareto
    shown = rows[: request.limit]
    for row in shown:
        if row["cost"] is not None:
            add_cost_bounds(
                row, offers_by_id[row["cost"]["offer"]], scenario.job.tokens, request, rates
            )
    feasible_rows = rows
    if not shown and candidates:
        fastest = min(candidates, key=lambda candidate: candidate.duration)
        cheapest = min(candidates, key=lambda candidate: candidate.floor)
        feasible_rows = [build(fastest), build(cheapest)]
    result: dict[str, Any] = {
        "job": job_summary(request),
        "plans": shown,
        "pareto": [
            {
                "gpu": row["gpu"],
                "count": row["count"],
                "offer": row["cost"]["offer"] if row["cost"] else None,
                "days": row["duration"]["days"],
                "cost": row["cost"]["total"] if row["cost"] else None,
            }
            for row in pareto
        ],
        "evaluated": evaluated_total,
        "machines": len(machines),
        "seconds": time.perf_counter() - started,
        "currency": currency,
        "objective": request.objective,
        "skipped_gpus": list(skipped.values()),
        "unoffered_gpus": unoffered,
        "offer_notes": list(book.notes),
    }
    if not shown and not candidates:
        shortfalls += host_misses
    reasons = explain_reasons(shown, request, shortfalls, scenario, feasible_rows)
    if not shown:
        reasons += [reason("skipped_gpu", reason=text) for text in skipped.values()]
    result["reasons"] = reasons
    result["explanation"] = reasons_text(reasons)
    return result


def explain(
    plans: list[dict[str, Any]],
    request: PlanRequest,
    shortfalls: list[Shortfall],
    scenario: Scenario,
    feasible: Sequence[dict[str, Any]] = (),
) -> str:
    """Why the top plan wins and what the runner-up trades; or, with no plan, why nothing fits;
    in English (:func:`explain_reasons` gives the same as reasons, for any language)."""
    from gpuplan.search.reasons import reasons_text

    return reasons_text(explain_reasons(plans, request, shortfalls, scenario, feasible))


def explain_reasons(
    plans: list[dict[str, Any]],
    request: PlanRequest,
    shortfalls: list[Shortfall],
    scenario: Scenario,
    feasible: Sequence[dict[str, Any]] = (),
) -> list[Reason]:
    """The reasons (``search/reasons.py``) why the top plan wins and what the runner-up trades;
    or, with no plan, the closest miss, what would make it fit, and the limits."""
    if plans:
        return _winner_reasons(plans, request)
    reasons = []
    if shortfalls:
        on_gpu = [miss for miss in shortfalls if miss.kind == "gpu"]
        closest = min(on_gpu or shortfalls, key=lambda miss: miss.peak_bytes - miss.usable_bytes)
        if closest.kind == "host":
            reasons.append(
                reason(
                    "host_short",
                    count=closest.count,
                    gpu=closest.gpu,
                    peak_ram=closest.peak_bytes,
                    usable_ram=closest.usable_bytes,
                )
            )
        else:
            reasons.append(
                reason(
                    "gpu_short",
                    count=closest.count,
                    gpu=closest.gpu,
                    peak_bytes=closest.peak_bytes,
                    usable_bytes=closest.usable_bytes,
                    short_bytes=closest.peak_bytes - closest.usable_bytes,
                )
            )
        host = [miss for miss in shortfalls if miss.kind == "host"]
        if on_gpu and host:
            least = min(host, key=lambda miss: miss.peak_bytes)
            reasons.append(
                reason(
                    "offload_would_fit",
                    count=least.count,
                    gpu=least.gpu,
                    peak_ram=least.peak_bytes,
                    usable_ram=least.usable_bytes,
                )
            )
        hints = []
        if host:
            least = min(host, key=lambda miss: miss.peak_bytes)
            hints.append(reason("hint_more_ram", ram=least.peak_bytes / (1 - HOST_MEMORY_MARGIN)))
        if scenario.job.method == "full":
            hints.append(reason("hint_lora"))
        hints.append(reason("hint_more_gpus", max_gpus=request.max_gpus))
        if "recompute" in scenario.strategy_given:
            hints.append(reason("hint_recompute"))
        if "offload" in scenario.strategy_given and closest.kind == "gpu":
            hints.append(reason("hint_offload"))
        if not request.allow_unlisted_network:
            hints.append(reason("hint_unlisted_network"))
        hints.append(reason("hint_shorter"))
        reasons.append(reason("hints", hints=hints))
    else:
        reasons.append(reason("no_plan"))
        if feasible:
            fastest = min(feasible, key=lambda row: row["duration"]["seconds"])
            reasons.append(
                reason(
                    "fastest",
                    count=fastest["count"],
                    gpu=fastest["gpu"],
                    run_length=fastest["duration"]["seconds"],
                )
            )
            priced = [row for row in feasible if row["cost"]]
            if priced:
                cheapest = min(priced, key=lambda row: float(row["cost"]["total"]))
                reasons.append(
                    reason(
                        "cheapest",
                        count=cheapest["count"],
                        gpu=cheapest["gpu"],
                        cost=_money(cheapest["cost"]["total"], cheapest["cost"]["currency"]),
                    )
                )
    if request.budget is not None:
        reasons.append(reason("budget", budget=str(request.budget)))
    if request.deadline_seconds is not None:
        reasons.append(reason("deadline", deadline_seconds=request.deadline_seconds))
    return reasons


def _money(amount: Any, currency: str) -> dict[str, Any]:
    return {"amount": str(amount), "currency": currency}


def _winner_reasons(plans: list[dict[str, Any]], request: PlanRequest) -> list[Reason]:
    """The top plan's reason and, with a runner-up, what it trades."""
    from gpuplan.i18n import money_digits

    top = plans[0]
    values = {
        "count": top["count"],
        "gpu": top["gpu"],
        "machine": top["machine"],
        "objective": request.objective,
        "run_length": top["duration"]["seconds"],
        "mfu": top["throughput"]["mfu"],
    }
    if top["cost"]:
        cost = top["cost"]
        reasons = [
            reason(
                "top_priced",
                **values,
                cost=_money(cost["total"], cost["currency"]),
                provider=cost["provider"],
                billing=cost["billing_mix"],
            )
        ]
    else:
        reasons = [reason("top", **values)]
    if len(plans) < 2:
        return reasons
    second = plans[1]
    faster = second["duration"]["seconds"] < top["duration"]["seconds"]
    runner_up = {
        "count": second["count"],
        "gpu": second["gpu"],
        "pace": reason("faster" if faster else "slower"),
        "run_length": second["duration"]["seconds"],
    }
    if top["cost"] and second["cost"]:
        difference = float(second["cost"]["total"]) - float(top["cost"]["total"])
        if abs(difference) < 0.5 * 10 ** -money_digits(top["cost"]["total"]):
            clause = reason("same_cost")
        else:
            money = _money(f"{abs(difference):.2f}", top["cost"]["currency"])
            clause = reason("costs_more" if difference > 0 else "costs_less", cost=money)
        reasons.append(reason("runner_up_priced", **runner_up, cost_clause=clause))
    else:
        reasons.append(reason("runner_up", **runner_up))
    return reasons
