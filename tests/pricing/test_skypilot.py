"""Importing a SkyPilot vms.csv: merged zones, skipped rows, the GPU each accelerator name maps
to, and the written TOML.

Fixtures (tests/pricing/data): ``skypilot_vms_sample.csv`` has rows of SkyPilot's AWS, GCP and
RunPod catalogs; ``skypilot_lambda_vms.csv`` rows copied from
github:skypilot-org/skypilot-catalog catalogs/v7/lambda/vms.csv@11580132 (written by
sky/catalog/data_fetchers/fetch_lambda_cloud.py); ``skypilot_runpod_vms.csv`` follows
catalogs/v8/runpod/vms.csv@01acdfd4 (its first row copied; the others in the format of
fetch_runpod.py: AcceleratorName from GPU_NAME_OVERRIDES, GpuInfo's Name the RunPod display
name, prices illustrative)."""

from __future__ import annotations

from decimal import Decimal
from pathlib import Path

import pytest

from gpuplan.catalog import load_gpu
from gpuplan.pricing.offers import read_offers_text
from gpuplan.pricing.offers_toml import offers_to_toml
from gpuplan.pricing.skypilot import SkyPilotImportError, import_vms_csv

DATA = Path(__file__).parent / "data"
SAMPLE = DATA / "skypilot_vms_sample.csv"
LAMBDA = DATA / "skypilot_lambda_vms.csv"
RUNPOD = DATA / "skypilot_runpod_vms.csv"


def test_import_sample_catalog():
    before = SAMPLE.read_bytes()
    result = import_vms_csv(SAMPLE, provider="aws", observed="2026-11-01")
    by_type = {offer.instance_type: offer for offer in result.offers}
    assert set(by_type) == {"p5.48xlarge", "p4d.24xlarge", "1x_A100-80GB_SECURE"}
    p5 = by_type["p5.48xlarge"]
    assert p5.gpu == "h100-sxm-80gb" and p5.gpus == 8
    assert p5.plan("hourly").price == Decimal("55.04")
    assert p5.plan("hourly").per == "instance"
    assert p5.plan("spot").price == Decimal("14.246")
    assert by_type["p4d.24xlarge"].gpu == "a100-sxm-40gb"
    messages = " | ".join(f"{f.level} {f.field} {f.message}" for f in result.findings)
    assert "GPU-only row" in messages
    assert "error Price placeholder price 700.0" in messages
    assert "80 MiB" in messages
    assert "spot at or above on-demand" in messages
    assert SAMPLE.read_bytes() == before


def test_written_toml_reads_back_with_provenance():
    result = import_vms_csv(SAMPLE, provider="aws", observed="2026-11-01")
    offers = read_offers_text(offers_to_toml(result.offers, "aws", "USD"), "imported")
    assert [offer.id for offer in offers] == [offer.id for offer in result.offers]
    assert all(plan.provenance.observed == "2026-11-01" for offer in offers for plan in offer.plans)


def test_default_observed_is_an_undated_upper_bound():
    result = import_vms_csv(SAMPLE)
    assert result.offers[0].plans[0].provenance.date_quality == "undated"


def test_malformed_row_names_row_and_column(tmp_path):
    path = tmp_path / "vms.csv"
    path.write_text(
        "InstanceType,AcceleratorName,AcceleratorCount,Price,SpotPrice,Region\n"
        "p5.48xlarge,H100,8,55.04,,us-east-1\n"
        "p4d.24xlarge,A100,8,cheap,,us-east-1\n"
    )
    with pytest.raises(SkyPilotImportError, match=r"row 3, column Price: 'cheap' is not a number"):
        import_vms_csv(path, observed="2026-11-01")


def test_missing_columns_are_named(tmp_path):
    path = tmp_path / "vms.csv"
    path.write_text("InstanceType,Price\nx,1\n")
    with pytest.raises(SkyPilotImportError, match="missing column"):
        import_vms_csv(path, observed="2026-11-01")


def _by_instance(path: Path) -> dict[str, str]:
    result = import_vms_csv(path, provider="cloud", observed="2026-11-01")
    return {offer.instance_type: offer.gpu for offer in result.offers}


def test_lambda_h100_pcie_v100_16gb_and_sxm_boards_map_to_their_own_parts():
    gpus = _by_instance(LAMBDA)
    assert gpus["gpu_1x_h100_pcie"] == "h100-pcie-80gb"
    assert gpus["gpu_1x_h100_sxm5"] == gpus["gpu_8x_h100_sxm5"] == "h100-sxm-80gb"
    assert gpus["gpu_8x_v100"] == "v100-sxm-16gb"
    assert gpus["gpu_8x_a100_80gb_sxm4"] == "a100-sxm-80gb"
    assert gpus["gpu_1x_a6000"] == "rtx-a6000-48gb"
    for instance, gpu_id in gpus.items():
        for part in ("pcie", "sxm"):
            if part in instance:
                assert part in load_gpu(gpu_id).form_factor.lower(), instance


def test_memory_in_gpuinfo_agrees_with_the_mapped_gpu():
    result = import_vms_csv(LAMBDA, observed="2026-11-01")
    v100 = next(offer for offer in result.offers if offer.instance_type == "gpu_8x_v100")
    assert load_gpu(v100.gpu).memory_bytes == 16384 * 2**20


def test_names_without_a_catalog_gpu_are_skipped_with_the_reason():
    result = import_vms_csv(LAMBDA, observed="2026-11-01")
    skipped = {f.offer.split(" ")[0]: f.message for f in result.findings}
    for instance, name in (
        ("gpu_1x_a10", "A10"),
        ("gpu_1x_rtx6000", "RTX6000"),
        ("gpu_1x_gh200", "GH200"),
    ):
        assert f"SkyPilot {name!r}" in skipped[instance]
        assert "skipped" in skipped[instance]
    assert result.rows_without_gpu == 1
    assert {offer.instance_type for offer in result.offers}.isdisjoint(
        {"gpu_1x_a10", "gpu_1x_rtx6000", "gpu_1x_gh200", "cpu_4x_general"}
    )


def test_runpod_names_the_pcie_part_in_gpuinfo():
    gpus = _by_instance(RUNPOD)
    assert gpus["1x_H100_SECURE"] == "h100-pcie-80gb"
    assert gpus["1x_H100-SXM_SECURE"] == "h100-sxm-80gb"
    assert gpus["1x_A100-80GB_SECURE"] == "a100-pcie-80gb"
    assert gpus["1x_V100-SXM2_SECURE"] == "v100-sxm-16gb"
    assert "1x_RTX6000-Ada_SECURE" not in gpus


def test_a_memory_the_catalog_does_not_hold_is_skipped(tmp_path):
    path = tmp_path / "vms.csv"
    info = "{'Gpus': [{'Name': 'V100', 'MemoryInfo': {'SizeInMiB': 12288}}]}"
    path.write_text(
        "InstanceType,AcceleratorName,AcceleratorCount,Price,Region,GpuInfo\n"
        f'x1,V100,1,1.0,r,"{info}"\n'
    )
    result = import_vms_csv(path, observed="2026-11-01")
    assert not result.offers
    assert "12 GiB" in result.findings[0].message
