"""Hostile and broken files: each refused with its own 4xx problem, quickly, in bounded memory."""

from __future__ import annotations

import base64
import gzip
import zlib

import pytest

from etikett.importers.formats import convert
from etikett_engine.errors import EtikettError

LIMIT = 8 * 1024 * 1024


def _refused(data: bytes, name: str = "file", dpi: int = 203) -> EtikettError:
    with pytest.raises(EtikettError) as refused:
        convert(name, data, dpi=dpi, max_expanded=LIMIT)
    return refused.value


def test_a_gzip_bomb_stops_at_the_limit():
    bomb = gzip.compress(b"<" + b"a" * (64 * 1024 * 1024), 9)  # 64 MB in about 64 kB
    assert len(bomb) < 100_000
    error = _refused(bomb)
    assert (error.code, error.status) == ("import.too_large", 413)
    assert error.params["expanded"] is True


def test_broken_and_truncated_gzip():
    whole = gzip.compress(b"<Glabels-document/>")
    assert _refused(whole[:-12]).code == "import.unreadable"
    assert _refused(b"\x1f\x8b" + b"garbage" * 10).code == "import.unreadable"


def test_entities_are_never_expanded_nor_fetched():
    laughs = (
        b'<?xml version="1.0"?><!DOCTYPE lolz [<!ENTITY lol "lol">'
        b'<!ENTITY lol2 "&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;">]>'
        b"<Glabels-document>&lol2;</Glabels-document>"
    )
    external = (
        b'<?xml version="1.0"?><!DOCTYPE x [<!ENTITY secret SYSTEM "file:///etc/passwd">]>'
        b"<Glabels-document>&secret;</Glabels-document>"
    )
    dtd = b'<?xml version="1.0"?><!DOCTYPE x SYSTEM "http://example.com/x.dtd"><Glabels-document/>'
    for data in (laughs, external, dtd):
        error = _refused(data)
        assert (error.code, error.status) == ("import.unsafe_xml", 422)


def test_deep_nesting_and_too_many_elements():
    deep = b"<Glabels-document>" + b"<a>" * 5000 + b"</a>" * 5000 + b"</Glabels-document>"
    assert _refused(deep).code == "import.too_complex"
    wide = b"<Glabels-document>" + b"<a/>" * 30_000 + b"</Glabels-document>"
    assert _refused(wide).code == "import.too_complex"


def test_xml_that_is_not_a_label():
    assert _refused(b"<html><body/></html>").params["reason"] == "not_glabels"
    assert _refused(b"<Glabels-document><Objects/>").code == "import.unreadable"
    assert (
        _refused(b"<Glabels-document><Objects/></Glabels-document>").params["reason"]
        == "no_template"
    )


def test_a_graphic_declaring_more_bytes_than_it_has():
    short_hex = b"^XA^PW100^LL100^FO0,0^GFA,400,400,10,FFFF00^FS^XZ"
    error = _refused(short_hex)
    assert (error.code, error.status) == ("import.graphic_invalid", 422)
    assert error.params["declared"] == 400 and error.params["present"] < 400
    data = base64.b64encode(zlib.compress(b"\xff" * 10)).decode()
    short_z64 = f"^XA^PW100^LL100^FO0,0^GFA,400,400,10,:Z64:{data}:0000^FS^XZ".encode()
    assert _refused(short_z64).code == "import.graphic_invalid"


def test_a_graphic_bomb_is_refused_before_it_is_built():
    huge = b"^XA^PW100^LL100^FO0,0^GFA,999999999,999999999,100,FF^FS^XZ"
    assert _refused(huge).code == "import.graphic_invalid"
    expands = base64.b64encode(zlib.compress(b"\x00" * 5_000_000, 9)).decode()
    z64 = f"^XA^PW800^LL800^FO0,0^GFA,10000,10000,100,:Z64:{expands}:0000^FS^XZ".encode()
    assert _refused(z64).code == "import.graphic_invalid"
    counts = b"^XA^PW100^LL100^FO0,0^GFA,100,100,10," + b"z" * 200_000 + b"F^FS^XZ"
    conversion = convert("acs", counts, dpi=203, max_expanded=LIMIT)  # counts capped at the size
    assert conversion.labels[0].document["objects"][0]["type"] == "image"


def test_a_wrong_crc_or_broken_base64():
    data = base64.b64encode(zlib.compress(b"\xff" * 20)).decode()
    wrong_crc = f"^XA^PW100^LL100^FO0,0^GFA,20,20,2,:Z64:{data}:ABCD^FS^XZ".encode()
    assert _refused(wrong_crc).code == "import.graphic_invalid"
    broken = b"^XA^PW100^LL100^FO0,0^GFA,20,20,2,:B64:!!!!:ABCD^FS^XZ"
    assert _refused(broken).code == "import.graphic_invalid"


@pytest.mark.parametrize("command", ["^PW0", "^PW100000", "^LL-5", "^LL999999"])
def test_absurd_label_sizes(command: str):
    error = _refused(f"^XA{command}^FO10,10^GB10,10,1^FS^XZ".encode())
    assert (error.code, error.status) == ("import.size_invalid", 422)


def test_nothing_to_import():
    assert _refused(b"hello").code == "import.unreadable"
    assert _refused(b"^XA^XZ").code == "import.empty"
    assert _refused(b"^XA^PW100^LL100^XZ").code == "import.empty"


def test_too_many_formats_and_objects():
    many = b"^XA^FO1,1^GB5,5,1^FS^XZ" * 60
    assert _refused(many).code == "import.too_complex"
    crowded = b"^XA" + b"^FO1,1^GB5,5,1^FS" * 2100 + b"^XZ"
    assert _refused(crowded).code == "import.too_complex"


def test_a_stored_graphic_recalled_over_and_over_is_refused_not_copied():
    # 20 kB of graphic recalled 2,000 times would be 40 MB of label documents from a 60 kB file.
    graphic = "~DGR:NOISE.GRF,20000,100," + "A5" * 20000
    zpl = f"{graphic}\n^XA^PW800^LL800" + "^FO0,0^XGR:NOISE.GRF,1,1^FS" * 2000 + "^XZ"
    error = _refused(zpl.encode())
    assert (error.code, error.status) == ("import.too_large", 413)
    assert error.params["limit"] == LIMIT


@pytest.mark.parametrize(
    "stored",
    [
        "~DGR:BIG.GRF,999999999,100,FF",  # declares far more than the file may expand to
        "~DGR:ODD.GRF,1001,100,FF",  # not whole rows
        "~DGR:WIDE.GRF,100000,100000,FF",  # a row wider than any label
        "~DYR:BOMB,A,G,100,10,:Z64:"  # expands past what it declares
        + base64.b64encode(zlib.compress(b"\xff" * 100_000)).decode()
        + ":0000",
        "~DGR:SHORT.GRF,800,10,FFFF",  # declares 800 bytes, carries 2
    ],
)
def test_stored_graphics_are_bounded_before_they_are_built(stored: str):
    error = _refused(f"{stored}\n^XA^PW400^LL400^FO0,0^XGR:BIG.GRF^FS^XZ".encode())
    assert error.code == "import.graphic_invalid"
    assert error.status == 422


def _pixdata(header: tuple[int, ...], body: bytes) -> bytes:
    import struct

    pixdata = base64.b64encode(struct.pack(">IIIIII", *header) + body).decode()
    return f"""<?xml version="1.0"?>
<Glabels-document xmlns="http://glabels.org/xmlns/3.0/">
  <Template brand="X" part="1" size="Other" width="50mm" height="30mm">
    <Label-rectangle id="0" width="50mm" height="30mm"/>
  </Template>
  <Objects id="0" rotate="False">
    <Object-image x="1mm" y="1mm" w="20mm" h="10mm" src="p"/>
    <Object-box x="1mm" y="15mm" w="10mm" h="10mm" line_width="1mm" line_color="0x000000ff"/>
  </Objects>
  <Data><Pixdata name="p" encoding="Base64">{pixdata}</Pixdata></Data>
</Glabels-document>""".encode()


MAGIC = 0x47646B50


@pytest.mark.parametrize(
    ("header", "body"),
    [
        ((MAGIC, 0, 0x01010001, 300_000, 100_000, 100_000), b"\0" * 64),  # 30 GB declared
        ((MAGIC, 0, 0x01010001, 3, 100, 100), b"\0" * 64),  # a row shorter than its pixels
        ((MAGIC, 0, 0x01010001, 300, 100, 100), b"\0" * 64),  # truncated
        # run-length bomb: 127 pixels per 4 bytes, up to 4000 × 2000 pixels of 24 MB
        ((MAGIC, 0, 0x02010001, 12_000, 4000, 2000), b"\xff\0\0\0" * 2000),
        ((0xDEADBEEF, 0, 0x01010001, 300, 100, 100), b"\0" * 30_000),  # not GdkPixdata
    ],
)
def test_embedded_pixdata_is_bounded_by_its_decoded_size(header: tuple[int, ...], body: bytes):
    conversion = convert("p.glabels", _pixdata(header, body), dpi=203, max_expanded=LIMIT)
    objects = conversion.labels[0].document["objects"]
    assert [o["type"] for o in objects] == ["box"]  # the image is dropped, the label stays
    assert any(n.element == "Data/Pixdata" for n in conversion.report)
