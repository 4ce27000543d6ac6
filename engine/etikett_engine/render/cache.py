"""A least-recently-used cache of object ink, bounded by pixels rather than entries.

A mode "1" image keeps one byte per dot, so a count-bounded cache could hold gigabytes of 600 dpi
tiles; this one holds at most `max_pixels` dots in all and never keeps a single tile larger than a
quarter of that. Cached images are shared: callers must not draw on them. `hits` and `misses`
count lookups (one per object rendered), for benchmarks and for telling how often labels render.
"""

from __future__ import annotations

import os
import threading
from collections import OrderedDict
from collections.abc import Callable, Hashable

from PIL import Image


class InkCache:
    def __init__(self, max_pixels: int) -> None:
        self.max_pixels = max_pixels
        self._entries: OrderedDict[Hashable, Image.Image] = OrderedDict()
        self._pixels = 0
        self._lock = threading.Lock()
        self.hits = 0
        self.misses = 0

    def get(self, key: Hashable, make: Callable[[], Image.Image]) -> Image.Image:
        with self._lock:
            found = self._entries.get(key)
            if found is not None:
                self.hits += 1
                self._entries.move_to_end(key)
                return found
            self.misses += 1
        image = make()  # outside the lock: errors propagate and are not cached
        size = image.width * image.height
        if size * 4 > self.max_pixels:
            return image
        with self._lock:
            if key not in self._entries:
                self._entries[key] = image
                self._pixels += size
                while self._pixels > self.max_pixels:
                    _, evicted = self._entries.popitem(last=False)
                    self._pixels -= evicted.width * evicted.height
        return image

    def after_fork(self) -> None:
        """In a forked child (the print renderer's helper processes): a free lock, since the
        thread that may have held it at the fork is not there."""
        self._lock = threading.Lock()

    def clear(self) -> None:
        with self._lock:
            self._entries.clear()
            self._pixels = 0
            self.hits = self.misses = 0

    @property
    def pixels(self) -> int:
        return self._pixels


# Every object's ink, shared by barcodes, texts and images: 32 M dots = 32 MB at most.
INK_CACHE = InkCache(32 * 1024 * 1024)
os.register_at_fork(after_in_child=INK_CACHE.after_fork)
