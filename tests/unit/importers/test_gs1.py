"""GS1 element strings as label printers receive them: every AI of the current GS1 General
Specifications is read with its length (also the 4-digit AIs of recent releases), encodes with
zint's own AI validation, and check digits the printer does not check are recomputed."""

from __future__ import annotations

import pytest
from zint import InputMode, Symbol, Symbology, WarningLevel

from etikett.importers.gs1 import FNC1, element_string, with_check_digits

# One valid value per AI family, the recent ones included: 235 (TPX), 4330-4333 (temperatures),
# 7010-7023 (catch method, test-by date, refurbishment lot, functional status, revision status,
# GIAI of an assembly), 7040 (UIC with extension), 7240-7242 (product, version, maintenance
# codes), 7250-7259 (patient data), 8026 (ITIP content), 8030 (digital signature).
VALUES = {
    "00": "095011015300000010", "02": "09501101530003", "10": "LOT42", "11": "261127",
    "17": "271231", "21": "SER-1", "22": "ABC", "235": "ABC123", "240": "X1", "254": "1",
    "30": "12", "3103": "001250", "3922": "1999", "37": "12", "400": "PO-7", "401": "950110153A",
    "402": "95011015300000003", "410": "9501101530003", "4300": "COMPANY",
    "4309": "12345678901234567890",
    "4321": "1", "4326": "261127", "4330": "000350", "4331": "000350-", "4332": "000500",
    "4333": "000500-", "7003": "2611271200", "7010": "1", "7011": "261127", "7020": "REF1",
    "7021": "ABC", "7022": "ABC", "7023": "95011015ABC", "7040": "1ABC", "710": "NHRN",
    "7230": "01ABC", "7240": "ABC", "7241": "01", "7242": "ABC", "7250": "20000101",
    "7251": "200001011200", "7252": "1", "7253": "MUSTER", "7254": "ERIKA", "7259": "ABC",
    "8003": "09501101530003ASSET", "8006": "095011015300030102",
    "8017": "950110153000000007", "8020": "ABC", "8026": "095011015300030102", "8030": "ABC",
    "8200": "https://example.com", "90": "ABC", "99": "X",
}  # fmt: skip


@pytest.mark.parametrize("ai", sorted(VALUES))
def test_every_ai_family_is_read_and_encodes(ai: str):
    raw = "0109501101530003" + ai + VALUES[ai] + FNC1 + "10LOT"
    elements = element_string(raw)
    assert elements == f"(01)09501101530003({ai}){VALUES[ai]}(10)LOT"
    symbol = Symbol()
    symbol.symbology = Symbology.GS1_128
    symbol.input_mode = InputMode.GS1 | InputMode.GS1PARENS
    symbol.warn_level = WarningLevel.FAIL_ALL
    symbol.encode(elements)  # zint checks each AI and its data against the GS1 syntax dictionary


def test_an_ai_the_specifications_do_not_define_is_refused_by_the_encoder():
    # There is no AI 57: it is read (as a 2-digit AI) but never printed as valid GS1.
    symbol = Symbol()
    symbol.symbology = Symbology.GS1_128
    symbol.input_mode = InputMode.GS1 | InputMode.GS1PARENS
    with pytest.raises(RuntimeError, match="AI"):
        symbol.encode(element_string("57123"))


@pytest.mark.parametrize(
    ("elements", "fixed", "change"),
    [
        ("(01)09501101530004", "(01)09501101530003", ("01", "4", "3")),
        ("(253)9501101530004SER", "(253)9501101530003SER", ("253", "4", "3")),
        ("(8006)095011015300040102", "(8006)095011015300030102", ("8006", "4", "3")),
        ("(8003)09501101530004ASSET", "(8003)09501101530003ASSET", ("8003", "4", "3")),
        ("(255)95011015300031", "(255)95011015300031", None),  # right: nothing changes
    ],
)
def test_check_digits_of_keys_that_carry_more_data_are_recomputed(
    elements: str, fixed: str, change: tuple[str, str, str] | None
):
    result, changes = with_check_digits(elements)
    assert result == fixed
    assert changes == ([change] if change else [])
