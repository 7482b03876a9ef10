"""benchmarks/papers/structural.py: bad arguments end in one error line before any work."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


@pytest.mark.parametrize(
    "args,needle",
    [
        (["--methods", "structural-project", "semantic"], "--methods: unknown semantic"),
        (["--data", "nowhere"], "--data nowhere: no corpus.parquet"),
        (["--max-documents", "0"], "--max-documents must be >= 1"),
    ],
)
def test_bad_arguments_end_in_one_error_line(tmp_path, args, needle) -> None:
    data = tmp_path / "scifact"
    data.mkdir()
    (data / "corpus.parquet").write_bytes(b"")  # never read: the checks come first
    argv = ["--data", str(data), *args] if "--data" not in args else args
    r = subprocess.run(
        [sys.executable, str(ROOT / "benchmarks" / "papers" / "structural.py"), *argv, "--results", str(tmp_path / "out")],
        capture_output=True, text=True, cwd=tmp_path, check=False,
    )  # fmt: skip
    assert r.returncode == 2, r.stderr
    lines = [line for line in r.stderr.splitlines() if line.strip()]
    assert len(lines) == 1 and needle in lines[0], r.stderr
    assert not (tmp_path / "out").exists()
