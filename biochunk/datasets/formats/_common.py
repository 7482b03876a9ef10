"""Small helpers shared by the format converters."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from biochunk.datasets.convert import Context, decode, malformed
from biochunk.errors import UserError


def raw_file(ctx: Context, name: str) -> Path:
    path = ctx.raw / name
    if not path.exists():
        raise UserError(f"raw file not found: {path} (re-run the download stage)")
    return path


def load_json(ctx: Context, path: Path, split: str) -> Any | None:
    """A whole-file JSON document, or None when it is malformed and skipping is allowed."""
    data = path.read_bytes()
    text, why = decode(data)
    if text is None:
        # Name the line of the first bad byte, as for bad JSON.
        bad = data.find(b"\x00") if "NUL" in why else _first_bad_utf8(data)
        line = data.count(b"\n", 0, max(bad, 0)) + 1
        malformed(ctx, split, f"{path}:{line}", f"{why}; the whole file is unreadable")
        return None
    try:
        return json.loads(text)
    except json.JSONDecodeError as e:
        malformed(ctx, split, f"{path}:{e.lineno}", f"not valid JSON ({e.msg}); the whole file is unreadable")
        return None


def _first_bad_utf8(data: bytes) -> int:
    try:
        data.decode("utf-8-sig")
    except UnicodeDecodeError as e:
        return e.start
    return -1


def nonempty_str(value: Any) -> bool:
    return isinstance(value, str) and bool(value.strip())
