"""`--report`: written atomically, replaced only with `--force`, bad paths in one line."""

from __future__ import annotations

from pathlib import Path

import pytest


def test_report_refuses_to_overwrite_without_force(cli, tmp_path: Path) -> None:
    target = tmp_path / "quote.md"
    arguments = ("quote", "--offer", "xingyu-a100-40gb-x4", "--duration", "1d", "--report")
    assert cli(*arguments, str(target))[0] == 0
    code, _, err = cli(*arguments, str(target))
    assert code == 2 and "--force" in err
    assert cli(*arguments, str(target), "--force")[0] == 0


@pytest.mark.parametrize("path", ["/nonexistent/r.html", "/proc"])
def test_report_to_an_impossible_path_is_one_line(cli, path: str) -> None:
    code, _, err = cli(
        "quote", "--offer", "xingyu-a100-40gb-x4", "--duration", "1d", "--report", path
    )
    assert code == 2 and "Traceback" not in err and ("report" in err.lower() or path in err)


OWN_OFFER = """provider = "Mine"
currency = "USD"
[[offers]]
id = "mine-h100-x8"
gpu = "H100 SXM"
gpus = 8
topology = { intra_node = "nvlink4", p2p = true, network = "none", source = "s", observed = "2026-11-01" }
plans = [ { mode = "hourly", price = 0.9, per = "gpu", source = "my invoice", observed = "2026-11-01" } ]
"""


def test_a_report_prices_the_offer_of_the_users_file(cli, tmp_path: Path) -> None:
    """The report re-quotes and re-estimates the top plan on the user's own offer, and the
    offer's GPU, given as an alias, is stored as the catalog id."""
    offers = tmp_path / "mine.toml"
    offers.write_text(OWN_OFFER)
    report = tmp_path / "plan.md"
    code, _, err = cli(
        "plan", "--model", "llama-3.1-8b", "--tokens", "1B", "--offers", str(offers),
        "--report", str(report),
    )  # fmt: skip
    assert code == 0, err
    text = report.read_text()
    assert "mine-h100-x8" in text and "my invoice" in text


def test_an_offer_of_an_unknown_gpu_is_an_error(cli, tmp_path: Path) -> None:
    offers = tmp_path / "mine.toml"
    offers.write_text(OWN_OFFER.replace("H100 SXM", "H900"))
    code, _, err = cli("offers", "--offers", str(offers))
    assert code == 2 and "offer 'mine-h100-x8': gpu: unknown GPU 'H900'" in err
