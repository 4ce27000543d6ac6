"""The ink cache is bounded by pixels, evicts the least recently used, never keeps errors, and
counts its lookups."""

from __future__ import annotations

import pytest
from PIL import Image

from etikett_engine.render.cache import InkCache


def tile(side: int) -> Image.Image:
    return Image.new("1", (side, side), 0)


def test_evicts_the_least_recently_used_beyond_its_pixels():
    cache = InkCache(max_pixels=1000)
    a = cache.get("a", lambda: tile(15))  # 225 dots each
    for key in "bcd":
        cache.get(key, lambda: tile(15))
    assert cache.pixels == 900
    assert cache.get("a", lambda: tile(1)) is a  # a hit, and now the most recent
    cache.get("e", lambda: tile(15))  # 1125 dots: b, the least recent, goes
    assert cache.pixels == 900
    assert cache.get("a", lambda: tile(1)) is a
    assert cache.get("b", lambda: tile(2)).size == (2, 2)


def test_large_tiles_and_errors_are_not_kept():
    cache = InkCache(max_pixels=1000)
    cache.get("big", lambda: tile(16))  # 256 dots > 1000 / 4
    assert cache.pixels == 0

    def fail() -> Image.Image:
        raise ValueError("bad data")

    with pytest.raises(ValueError):
        cache.get("bad", fail)
    assert cache.get("bad", lambda: tile(2)).size == (2, 2)


def test_counts_hits_and_misses_until_cleared():
    cache = InkCache(max_pixels=1000)
    cache.get("a", lambda: tile(2))
    cache.get("a", lambda: tile(2))
    cache.get("big", lambda: tile(16))  # not kept: a miss every time
    cache.get("big", lambda: tile(16))
    assert (cache.hits, cache.misses) == (1, 3)
    cache.clear()
    assert (cache.hits, cache.misses) == (0, 0)
