"""`gpuplan offers import`: gpuhunt catalogs, the user's quotes CSV, format detection, and the
offers files written into the user's catalog directory, read back through the offers parser.

gpuhunt fixtures (tests/pricing/data/gpuhunt/<provider>.csv) have the columns of
github:dstackai/gpuhunt src/gpuhunt/_internal/storage.py CATALOG_V2_FIELDS @35841515, GPU names
as its providers write them (aws.py from EC2's GPU names, runpod.py's instance_name = RunPod's
GPU type id with gpu_name "H100"); prices illustrative except p3.2xlarge, p4d and p5, copied
from SkyPilot's AWS catalog."""

from __future__ import annotations

import datetime as dt
from decimal import Decimal
from pathlib import Path

import pytest

from gpuplan.catalog import load_gpu, resolve_gpu_id
from gpuplan.pricing.accelerators import MEMORY_TOLERANCE, match_accelerator
from gpuplan.pricing.csv_import import CsvImportError
from gpuplan.pricing.gpuhunt import GpuhuntImportError, import_gpuhunt_csv
from gpuplan.pricing.offers import load_offers_file, parse_provider
from gpuplan.pricing.offers_import import detect_format, import_file, write_import
from gpuplan.pricing.quotes_csv import QuotesCsvError, import_quotes_csv
from gpuplan.user_data import user_offers_dir

DATA = Path(__file__).parent / "data"
GPUHUNT_AWS = DATA / "gpuhunt" / "aws.csv"
GPUHUNT_RUNPOD = DATA / "gpuhunt" / "runpod.csv"
QUOTES = (
    "provider,gpu,gpus,price,currency,per,mode,region,observed,source,"
    "interruptions_per_hour,interruptions_source\n"
    "AutoDL,RTX 4090,1,1.98,CNY,gpu,hourly,west-b,2026-11-28,autodl.com (read by hand),,\n"
    "AutoDL,RTX 4090,1,1150,CNY,gpu,monthly,west-b,2026-11-28,autodl.com (read by hand),,\n"
    "AutoDL,RTX 4090,1,0.99,CNY,gpu,spot,west-b,2026-11-28,sales quote,0.1,sales estimate\n"
    "Acme,H100 SXM,8,16.5,USD,instance,hourly,,2026-11-20,,,\n"
)


@pytest.fixture
def data_dir(tmp_path, monkeypatch):
    monkeypatch.setenv("GPUPLAN_DATA_DIR", str(tmp_path / "data"))
    return tmp_path / "data"


def _gpus(result) -> dict[tuple[str, int], str]:
    return {(offer.instance_type, offer.gpus): offer.gpu for offer in result.offers}


# --- gpuhunt ---------------------------------------------------------------------------------


def test_gpuhunt_memory_tells_the_v100s_and_a100s_apart():
    result = import_gpuhunt_csv(GPUHUNT_AWS, observed="2026-11-01")
    gpus = _gpus(result)
    assert gpus[("p3.2xlarge", 1)] == "v100-sxm-16gb"
    assert gpus[("p3dn.24xlarge", 8)] == "v100-sxm-32gb"
    assert gpus[("p4d.24xlarge", 8)] == "a100-sxm-40gb"
    assert gpus[("p4de.24xlarge", 8)] == "a100-sxm-80gb"
    assert gpus[("p5.48xlarge", 8)] == "h100-sxm-80gb"
    assert gpus[("g5.xlarge", 1)] == "a10g-24gb"
    assert all(offer.provider == "aws" for offer in result.offers)
    assert result.rows_without_gpu == 1


def test_gpuhunt_spot_rows_become_spot_plans_and_equal_spot_is_dropped():
    offers = {o.instance_type: o for o in import_gpuhunt_csv(GPUHUNT_AWS).offers}
    p3 = offers["p3.2xlarge"]
    assert {plan.mode for plan in p3.plans} == {"hourly", "spot"}
    assert p3.plan("spot").price < p3.plan("hourly").price
    assert [plan.mode for plan in offers["p5.48xlarge"].plans] == ["hourly"]


def test_gpuhunt_runpod_pcie_names_and_counts():
    result = import_gpuhunt_csv(GPUHUNT_RUNPOD, observed="2026-11-01")
    gpus = _gpus(result)
    assert gpus[("NVIDIA H100 PCIe", 1)] == gpus[("NVIDIA H100 PCIe", 2)] == "h100-pcie-80gb"
    assert gpus[("NVIDIA H100 80GB HBM3", 8)] == "h100-sxm-80gb"
    assert gpus[("NVIDIA GeForce RTX 4090", 1)] == "rtx-4090-24gb"
    ids = [offer.id for offer in result.offers]
    assert len(set(ids)) == len(ids)
    assert any("H100NVL" in finding.message for finding in result.findings)


def test_gpuhunt_bad_cell_names_row_and_column(tmp_path):
    path = tmp_path / "aws.csv"
    path.write_text(
        "instance_name,location,price,gpu_count,gpu_name,spot\n"
        "p5.48xlarge,us-east-1,55.04,8,H100,False\n"
        "p5.48xlarge,us-east-1,55.04,eight,H100,False\n"
    )
    with pytest.raises(GpuhuntImportError) as error:
        import_gpuhunt_csv(path)
    message = str(error.value)
    assert "row 3, column gpu_count" in message and "\n" not in message


# --- matching names --------------------------------------------------------------------------


def test_a_shared_name_without_memory_or_form_factor_takes_the_board():
    assert match_accelerator("skypilot_names", "H100").gpu_id == "h100-sxm-80gb"
    assert match_accelerator("skypilot_names", "H100", description="x PCIe").gpu_id == (
        "h100-pcie-80gb"
    )


def test_two_boards_of_one_name_need_the_memory():
    ambiguous = match_accelerator("gpuhunt_names", "V100")
    assert ambiguous.gpu_id is None and "may be" in ambiguous.reason
    for gpu_id in ("v100-sxm-16gb", "v100-sxm-32gb"):
        memory = load_gpu(gpu_id).memory_bytes
        assert match_accelerator("gpuhunt_names", "V100", memory).gpu_id == gpu_id
        off = memory * (1 + 2 * MEMORY_TOLERANCE)
        assert match_accelerator("gpuhunt_names", "V100", off).gpu_id is None


def test_every_listed_name_maps_back_to_a_gpu_that_lists_it():
    from gpuplan.catalog import CLOUD_NAME_KEYS, all_gpus

    for gpu in all_gpus():
        for key in CLOUD_NAME_KEYS:
            for name in getattr(gpu, key):
                match = match_accelerator(key, name, gpu.memory_bytes, gpu.form_factor)
                assert match.gpu_id == gpu.id, (key, name, match.reason)
                assert gpu.source_of(key)[0] != gpu.source


# --- the user's quotes -----------------------------------------------------------------------


def test_quotes_round_trip_through_the_offers_parser(tmp_path, data_dir):
    path = tmp_path / "quotes.csv"
    path.write_text(QUOTES, encoding="utf-8")
    chosen, result = import_file(path)
    assert chosen == "csv"
    written = write_import(result, chosen, path)
    assert {item.path.parent for item in written} == {user_offers_dir()}
    assert user_offers_dir().is_relative_to(data_dir)
    read_back = [offer for item in written for offer in load_offers_file(item.path)]

    def comparable(offer):
        return {key: value for key, value in offer.to_dict().items() if key != "origin"}

    assert [comparable(offer) for offer in read_back] == [comparable(o) for o in result.offers]
    assert {offer.to_dict()["origin"] for offer in read_back} == {
        str(item.path) for item in written
    }
    autodl = next(offer for offer in read_back if offer.provider == "AutoDL")
    assert autodl.gpu == resolve_gpu_id("RTX 4090") and autodl.currency == "CNY"
    assert [plan.mode for plan in autodl.plans] == ["hourly", "monthly", "spot"]
    spot = autodl.plan("spot")
    assert spot.interruptions_per_hour == pytest.approx(0.1)
    assert spot.interruptions_source == "sales estimate"
    assert autodl.plan("monthly").price == Decimal("1150")
    acme = next(offer for offer in read_back if offer.provider == "Acme")
    assert acme.gpus == 8 and acme.plans[0].per == "instance"
    assert "quotes.csv row 5" in acme.plans[0].provenance.source


def test_writing_again_replaces_and_a_temp_file_never_stays(tmp_path, data_dir):
    path = tmp_path / "quotes.csv"
    path.write_text(QUOTES, encoding="utf-8")
    chosen, result = import_file(path)
    first = write_import(result, chosen, path)
    again = write_import(result, chosen, path)
    assert [item.path for item in first] == [item.path for item in again]
    assert all(item.replaced for item in again)
    assert sorted(p.name for p in user_offers_dir().iterdir()) == sorted(
        item.path.name for item in again
    )


def test_written_file_parses_with_parse_provider(tmp_path, data_dir):
    import tomllib

    _, result = import_file(GPUHUNT_AWS, observed="2026-11-01")
    (written,) = write_import(result, "gpuhunt", GPUHUNT_AWS)
    document = tomllib.loads(written.path.read_text("utf-8"))
    offers = parse_provider(document, str(written.path))
    assert [offer.id for offer in offers] == [offer.id for offer in result.offers]
    assert all(plan.provenance.observed == "2026-11-01" for o in offers for plan in o.plans)


@pytest.mark.parametrize(
    ("row", "column"),
    [
        ("A,H100,1,abc,USD,gpu,hourly,,2026-11-01", "price"),
        ("A,H100,1,-2,USD,gpu,hourly,,2026-11-01", "price"),
        ("A,H999,1,2,USD,gpu,hourly,,2026-11-01", "gpu"),
        ("A,H100,0,2,USD,gpu,hourly,,2026-11-01", "gpus"),
        ("A,H100,1,2,RMB,gpu,hourly,,2026-11-01", "currency"),
        ("A,H100,1,2,USD,card,hourly,,2026-11-01", "per"),
        ("A,H100,1,2,USD,gpu,hourlyy,,2026-11-01", "mode"),
        ("A,H100,1,2,USD,gpu,hourly,,2026-13-01", "observed"),
        ("A,H100,1,2,USD,gpu,hourly,,2099-11-01", "observed"),
        ("A,H100,1,2,USD,gpu,hourly,,", "observed"),
        ("A,H100,1,2,USD,gpu,reserved,,2026-11-01", "term"),
    ],
)
def test_a_bad_quote_names_the_row_and_column(tmp_path, row, column):
    path = tmp_path / "quotes.csv"
    path.write_text(
        "provider,gpu,gpus,price,currency,per,mode,region,observed\n"
        "A,H100,1,2,USD,gpu,hourly,,2026-11-01\n" + row + "\n"
    )
    with pytest.raises(QuotesCsvError) as error:
        import_quotes_csv(path, today=dt.date(2026, 12, 3))
    message = str(error.value)
    assert f"row 3, column {column}:" in message
    assert "\n" not in message


def test_quotes_of_one_offer_must_agree(tmp_path):
    path = tmp_path / "quotes.csv"
    path.write_text(
        "id,provider,gpu,gpus,price,currency,per,mode,observed\n"
        "x,A,H100,8,2,USD,gpu,hourly,2026-11-01\n"
        "x,A,H100,4,40,USD,gpu,monthly,2026-11-01\n"
    )
    with pytest.raises(QuotesCsvError, match=r"row 3, column gpus: .*row 2"):
        import_quotes_csv(path)


def test_unknown_quote_columns_are_named(tmp_path):
    path = tmp_path / "quotes.csv"
    path.write_text("provider,gpu,price,currency,per,regoin\nA,H100,2,USD,gpu,x\n")
    with pytest.raises(QuotesCsvError, match=r"unknown column.*regoin"):
        import_quotes_csv(path, observed="2026-11-01")


# --- formats ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("path", "expected"),
    [
        (DATA / "skypilot_vms_sample.csv", "skypilot"),
        (DATA / "skypilot_runpod_vms.csv", "skypilot"),
        (GPUHUNT_AWS, "gpuhunt"),
    ],
)
def test_the_header_tells_the_format(path, expected):
    assert detect_format(path) == expected


def test_an_unknown_header_lists_what_each_format_needs(tmp_path):
    path = tmp_path / "x.csv"
    path.write_text("a,b\n1,2\n")
    with pytest.raises(CsvImportError) as error:
        detect_format(path)
    assert all(name in str(error.value) for name in ("skypilot", "gpuhunt", "csv"))
