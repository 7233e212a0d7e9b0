"""`gpuplan quote --offer ID SCENARIO` quotes the duration the speed model predicts."""

from __future__ import annotations

import json
from pathlib import Path

import gpuplan

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "llama-8b-fsdp-8xh100.yaml"


def test_quote_of_a_scenario_uses_the_predicted_duration_and_tokens(entry_point):
    result = entry_point("quote", "--offer", "lambda-h100-sxm-x8", str(EXAMPLE), "--json")
    assert result.returncode == 0, result.stderr
    quote = json.loads(result.stdout)
    predicted = gpuplan.estimate(EXAMPLE)
    assert quote["duration_seconds"] == predicted["duration"]["seconds"]
    assert quote["tokens"] == predicted["duration"]["tokens"]
    assert quote["per_million_tokens"] > 0


def test_quote_of_a_scenario_on_another_gpu_is_a_one_line_error(entry_point):
    result = entry_point("quote", "--offer", "coreweave-a100-sxm-80gb-x8", str(EXAMPLE))
    assert result.returncode == 2
    assert "differs from the offer's GPU" in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1


def test_spot_in_a_scenario_quote_loses_what_the_reliability_model_says(cli):
    from gpuplan.pricing.offers import OfferBook
    from gpuplan.pricing.quote import DEFAULT_RESTART_OVERHEAD_SECONDS, RELIABILITY_LOSS_SOURCE
    from gpuplan.scenario import parse_scenario

    offer = next(
        o
        for o in OfferBook.build().offers
        if o.gpu == "h100-sxm-80gb" and o.gpus == 8 and o.plans_of_kind("spot")
    )
    code, out, err = cli("quote", "--offer", offer.id, str(EXAMPLE), "--json")
    assert code == 0, err
    spot = json.loads(out)["spot"]
    assert spot["restart_overhead_source"] == RELIABILITY_LOSS_SOURCE
    scenario = parse_scenario(EXAMPLE)
    reliability = scenario.reliability.estimate(
        scenario.job, 8, reclaims_per_hour=spot["interruptions_per_hour"]
    )
    assert spot["restart_overhead_seconds"] == float(reliability.lost_seconds_per_interruption)
    assert spot["restart_overhead_seconds"] != DEFAULT_RESTART_OVERHEAD_SECONDS
    code, out, _ = cli(
        "quote", "--offer", offer.id, str(EXAMPLE), "--restart-overhead", "5m", "--json"
    )
    assert json.loads(out)["spot"]["restart_overhead_seconds"] == 300
