"""Every catalog GPU is rented by at least one built-in offer, or says why none prices it; an
accelerator the speed model cannot time says what it cannot predict."""

from __future__ import annotations

import pytest

from gpuplan.catalog import all_gpus, load_gpu
from gpuplan.hardware.gpu import SpeedModelGapError
from gpuplan.pricing.offers import catalog_offers
from gpuplan.pricing.provenance import parse_observed


def test_every_gpu_has_an_offer_or_a_sourced_reason_for_none() -> None:
    offered = {offer.gpu for offer in catalog_offers()}
    for gpu in all_gpus():
        gap = gpu.no_public_offer
        if gpu.id in offered:
            assert not gap, f"{gpu.id} has a built-in offer but is marked no_public_offer"
            continue
        assert gap, f"{gpu.id} has no built-in offer and no [no_public_offer] reason"
        assert set(gap) == {"reason", "source", "observed"}, gpu.id
        assert gap["reason"].strip() and gap["source"].strip()
        parse_observed(gap["observed"])


def test_no_public_offer_is_shown_by_the_json_view() -> None:
    marked = [gpu for gpu in all_gpus() if gpu.no_public_offer]
    assert marked
    for gpu in marked:
        assert gpu.to_dict()["no_public_offer"]["reason"] == gpu.no_public_offer["reason"]


def test_a_speed_model_gap_refuses_a_speed_and_says_why() -> None:
    gaps = [gpu for gpu in all_gpus() if gpu.speed_model_gap]
    assert "ascend-910b-64gb" in {gpu.id for gpu in gaps}
    for gpu in gaps:
        with pytest.raises(SpeedModelGapError, match="speed not predicted") as raised:
            gpu.require_speed_model()
        assert gpu.speed_model_gap in str(raised.value)
    load_gpu("h100").require_speed_model()
