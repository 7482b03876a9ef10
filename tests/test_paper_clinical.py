"""benchmarks/papers/clinical.py: a wrong flag stops it with one line before any work."""

import subprocess
import sys

import pytest

from tests.conftest import ROOT

SCRIPT = ROOT / "benchmarks" / "papers" / "clinical.py"


@pytest.mark.parametrize(
    "args,message",
    [
        (["--settings", "fixed,nope"], "error: --settings: unknown setting 'nope'; known: fixed, cluster"),
        (["--retrievers", "splade"], "error: --retrievers: unknown retriever 'splade'; known: dense, bm25"),
        (["--max-questions", "0"], "error: --max-questions must be >= 1, got 0"),
        (["--k", "10"], "error: --k: the paper's figures are at k = 5"),
    ],
)
def test_bad_flags_give_one_line(tmp_path, args, message):
    r = subprocess.run(
        [sys.executable, str(SCRIPT), "--data", str(tmp_path), "--out", str(tmp_path / "out"), *args],
        capture_output=True, text=True, cwd=ROOT, check=False,
    )  # fmt: skip
    assert r.returncode == 2 and r.stderr.startswith(message) and "Traceback" not in r.stderr, r.stderr[-2000:]
    assert not (tmp_path / "out").exists()


def test_missing_data_is_named(tmp_path):
    r = subprocess.run(
        [sys.executable, str(SCRIPT), "--data", str(tmp_path / "none")], capture_output=True, text=True, cwd=ROOT, check=False
    )
    assert r.returncode == 2 and "--data: no documents.parquet in" in r.stderr and "Traceback" not in r.stderr
