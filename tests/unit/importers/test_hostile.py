"""Hostile and broken files: each refused with its own 4xx problem, quickly, in bounded memory."""

from __future__ import annotations

import base64
import gzip
import zlib

import pytest

from etikett.errors import EtikettError
from etikett.importers import convert

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
