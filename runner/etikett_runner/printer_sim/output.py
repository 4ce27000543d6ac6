"""Printed labels on disk: `label-<seq>.png` (mode "1", black = 0) and `label-<seq>.json`.

One PNG per label format, however many copies: the sidecar JSON says how many were printed. Both
are written when the label's last copy is out, each atomically (temporary file, then rename), the
JSON last: a reader that sees the JSON sees the finished PNG too.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

from PIL import Image

_NAME = re.compile(r"label-([0-9]+)\.(?:png|json)")


def first_free_seq(out_dir: Path | None) -> int:
    """Continue after the labels a previous run left in the directory, never overwrite them."""
    if out_dir is None or not out_dir.is_dir():
        return 1
    seqs = [int(m[1]) for m in (_NAME.fullmatch(p.name) for p in out_dir.iterdir()) if m]
    return max(seqs, default=0) + 1


def stem(seq: int) -> str:
    return f"label-{seq:06d}"


def write_label(out_dir: Path, seq: int, image: Image.Image, meta: dict[str, Any]) -> Path:
    """Write the PNG, then the JSON; return the PNG's path."""
    out_dir.mkdir(parents=True, exist_ok=True)
    png = out_dir / f"{stem(seq)}.png"
    _atomic(png, lambda path: image.save(path, "PNG"))
    text = json.dumps(meta, indent=2, sort_keys=True) + "\n"
    _atomic(out_dir / f"{stem(seq)}.json", lambda path: path.write_text(text, encoding="utf-8"))
    return png


def _atomic(target: Path, write: Callable[[Path], object]) -> None:
    temporary = target.with_name(f".{target.name}.tmp")
    write(temporary)
    os.replace(temporary, target)
