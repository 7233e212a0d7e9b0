"""Merging offers: the built-in catalog, the user's offers directory and several --offers files,
in that order; a repeated id is overridden by the later file and said, naming both files; every
user file is checked the way `gpuplan offers --check` checks it."""

from __future__ import annotations

from decimal import Decimal
from pathlib import Path

import pytest

from gpuplan.pricing.offers import OfferBook, OfferError, catalog_offers, user_offers_files
from gpuplan.pricing.validate import OfferValidationError

PLAN = (
    '{{ mode = "hourly", price = {price}, per = "gpu", source = "quote", observed = "2026-11-01" }}'
)


def offers_text(offer_id: str, price: float, provider: str = "Mine") -> str:
    return f"""provider = "{provider}"
currency = "USD"
[[offers]]
id = "{offer_id}"
gpu = "H100 SXM"
gpus = 8
plans = [ {PLAN.format(price=price)} ]
"""


def write(folder: Path, name: str, text: str) -> Path:
    path = folder / name
    path.write_text(text, "utf-8")
    return path


@pytest.fixture
def user_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """An empty user data directory with its offers folder."""
    monkeypatch.setenv("GPUPLAN_DATA_DIR", str(tmp_path / "data"))
    folder = tmp_path / "data" / "catalog" / "offers"
    folder.mkdir(parents=True)
    return folder


def test_a_second_offers_file_is_merged_not_swapped(tmp_path: Path, user_dir: Path) -> None:
    first = write(tmp_path, "first.toml", offers_text("mine-a", 2.5))
    second = write(tmp_path, "second.toml", offers_text("mine-b", 2.4))
    book = OfferBook.build([first, second])
    ids = {offer.id for offer in book.offers}
    assert {"mine-a", "mine-b"} <= ids
    assert ids >= {offer.id for offer in catalog_offers()}
    assert book.notes == ()


def test_a_duplicate_id_is_reported_and_the_later_file_wins(tmp_path: Path, user_dir: Path) -> None:
    first = write(tmp_path, "first.toml", offers_text("mine-a", 2.5))
    second = write(tmp_path, "second.toml", offers_text("mine-a", 2.4))
    book = OfferBook.build([first, second])
    assert book.get("mine-a").plans[0].price == Decimal("2.4")
    (note,) = book.notes
    assert str(first) in note and str(second) in note
    assert note.index(str(second)) < note.index(str(first))
    assert "a later file overrides an earlier one" in note


def test_a_user_offer_overriding_the_catalog_names_the_catalog_file(
    tmp_path: Path, user_dir: Path
) -> None:
    catalog_offer = catalog_offers()[0]
    path = write(tmp_path, "mine.toml", offers_text(catalog_offer.id, 2.5))
    book = OfferBook.build(path)
    assert book.get(catalog_offer.id).origin == str(path)
    (note,) = book.notes
    assert catalog_offer.origin in note and str(path) in note


def test_the_user_offers_directory_is_merged_before_the_options(
    tmp_path: Path, user_dir: Path
) -> None:
    imported = write(user_dir, "imported.toml", offers_text("mine-a", 2.5))
    assert user_offers_files() == [imported]
    assert OfferBook.build().get("mine-a").origin == str(imported)
    given = write(tmp_path, "given.toml", offers_text("mine-a", 2.4))
    book = OfferBook.build(given)
    assert book.get("mine-a").origin == str(given)
    assert str(imported) in book.notes[0]
    assert "mine-a" not in {offer.id for offer in OfferBook.build(include_user_offers=False).offers}


def test_a_bad_file_in_the_user_directory_is_refused_with_its_name(user_dir: Path) -> None:
    write(
        user_dir,
        "bad.toml",
        offers_text("mine-a", 2.5).replace("gpus = 8", "gpus = 8\nregoin = 'x'"),
    )
    with pytest.raises(OfferError, match=r"bad.toml: offer 'mine-a': regoin: unknown key"):
        OfferBook.build()


def test_a_placeholder_price_in_a_user_file_is_rejected_naming_file_offer_and_key(
    tmp_path: Path, user_dir: Path
) -> None:
    path = write(tmp_path, "mine.toml", offers_text("mine-a", 700))
    with pytest.raises(OfferValidationError, match=r"mine.toml: offer 'mine-a': plans\[0\].price"):
        OfferBook.build(path)
    assert OfferBook.build(path, check=False).get("mine-a").plans[0].price == 700


def test_the_same_id_twice_in_one_file_is_an_error(tmp_path: Path, user_dir: Path) -> None:
    text = offers_text("mine-a", 2.5)
    twice = text + text.split("\n", 2)[2]
    path = write(tmp_path, "mine.toml", twice)
    with pytest.raises(OfferValidationError, match=r"offer 'mine-a': id: offer id appears 2 times"):
        OfferBook.build(path)
