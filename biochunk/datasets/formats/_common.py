"""Small helpers shared by the format converters."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from biochunk.datasets.convert import Context, malformed
from biochunk.errors import UserError


def raw_file(ctx: Context, name: str) -> Path:
    path = ctx.raw / name
    if not path.exists():
        raise UserError(f"raw file not found: {path} (re-run the download stage)")
    return path


def load_json(ctx: Context, path: Path, split: str) -> Any | None:
    """A whole-file JSON document, or None when it is malformed and skipping is allowed."""
    try:
        with open(path, encoding="utf-8") as f:
            return json.load(f)
    except json.JSONDecodeError as e:
        malformed(ctx, split, f"{path}:{e.lineno}", f"not valid JSON ({e.msg}); the whole file is unreadable")
        return None


def nonempty_str(value: Any) -> bool:
    return isinstance(value, str) and bool(value.strip())
