"""The chunk stage on a tiny training split: every method's memory keeps exact offsets."""

import json
import subprocess
import sys

import pandas as pd
import pytest

from biochunk.io import CHUNKS, TRIPLES, read_table, write_table
from tests.conftest import ROOT

ROWS = [
    ("s0", "Aspirin therapy reduces inflammation by inhibiting COX-2 expression in mice.", "Aspirin", "INHIBITS", "COX-2"),
    ("s1", "Metformin treats type 2 diabetes in adults with obesity.", "Metformin", "TREATS", "type 2 diabetes"),
    ("s1", "Metformin treats type 2 diabetes in adults with obesity.", "Metformin", "TREATS", "obesity"),
]


@pytest.mark.parametrize("method", ["fixed", "hybrid"])
def test_chunk_stage_memory(tmp_path, method):
    train = pd.DataFrame(
        [{"id": i, "split": "train", "sentence": s, "head": h, "relation": r, "tail": t} for i, s, h, r, t in ROWS]
    )
    write_table(train, tmp_path / "train.parquet", TRIPLES)
    (tmp_path / "params.yaml").write_text(f"chunk: {{method: {method}}}\n")
    r = subprocess.run(
        [sys.executable, str(ROOT / "stages" / "chunk.py"), "--dataset", "embedded", "--train", "train.parquet", "--out", "out", "--params", "params.yaml"],
        cwd=tmp_path, capture_output=True, text=True,
    )
    assert r.returncode == 0, r.stderr
    chunks = read_table(tmp_path / "out" / "chunks.parquet", CHUNKS)
    text = dict(zip(train["id"], train["sentence"]))
    assert all(text[d][s:e] == t for d, s, e, t in zip(chunks.doc_id, chunks.start, chunks.end, chunks.text))
    # A chunk inherits every relation of its sentence, as BioMedRAG keys its memory.
    assert {tuple(x) for x in chunks[chunks.doc_id == "s1"]["labels"]} == {("TREATS",)}
    assert chunks.chunk_id.is_unique
    report = json.loads((tmp_path / "out" / "report.json").read_text())
    assert report == {"method": method, "documents": 2, "documents_empty": 0, "chunks": len(chunks)}
    if method == "hybrid":
        kinds = {json.loads(m)["kind"] for m in chunks.metadata}
        assert {"proposition", "fixed"} <= kinds
