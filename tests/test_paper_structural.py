"""The structural paper pipeline's stages: bad arguments end in one error line before any work."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PAPER = ROOT / "experiments" / "structural" / "params.yaml"


@pytest.mark.parametrize(
    "stage,args,needle",
    [
        ("chunk_corpus.py", ["--data", "{tmp}", "--paper", str(PAPER), "--setting", "semantic"], "--setting semantic: not in"),
        ("sample.py", ["--data", "nowhere", "--paper", str(PAPER)], "--data nowhere: no corpus.parquet"),
        ("sample.py", ["--data", "{tmp}", "--paper", "missing.yaml"], "missing.yaml: no such paper params file"),
        ("search.py", ["--data", "{tmp}", "--chunks", "c", "--embeddings", "e", "--paper", "missing.yaml"], "missing.yaml: no such paper params"),
    ],
)
def test_bad_arguments_end_in_one_error_line(tmp_path, stage, args, needle) -> None:
    argv = [a.replace("{tmp}", str(tmp_path)) for a in args]
    r = subprocess.run(
        [sys.executable, str(ROOT / "stages" / stage), *argv, "--out", str(tmp_path / "out")],
        capture_output=True, text=True, cwd=ROOT, check=False,
    )  # fmt: skip
    assert r.returncode == 2, r.stderr
    lines = [line for line in r.stderr.splitlines() if line.strip()]
    assert len(lines) == 1 and needle in lines[0], r.stderr
    assert not (tmp_path / "out").exists()
