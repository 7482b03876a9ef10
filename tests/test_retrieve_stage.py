"""train_reranker + retrieve on tiny BEIR-like and BioASQ-like collections (real MiniLM, real Lucene)."""

import json
import re
import subprocess
import sys

import pandas as pd
import pytest
import yaml

from biochunk.io import CONTEXTS, CORPUS, ITEM_SCORES, QA_QUESTIONS, QA_SNIPPETS, QRELS, QUERIES, RUNS, read_table, write_table
from tests.conftest import ROOT, assert_metrics_diff_pairs

DOCS = [
    ("d1", "Aspirin", "Aspirin reduces fever and inflammation. It inhibits COX enzymes."),
    ("d2", "Metformin", "Metformin lowers blood glucose in type 2 diabetes. It acts on the liver."),
    ("d3", "Statins", "Statins lower LDL cholesterol. They reduce cardiovascular events."),
    ("d4", "Vaccines", "Vaccines train the immune system against viruses such as influenza."),
    ("d5", "Insulin", "Insulin is a hormone that lets cells take up glucose from the blood."),
    ("d6", "Sleep", "Sleep deprivation impairs memory and attention in adults."),
]
QUERIES_ = [("t1", "what lowers cholesterol"), ("t2", "drug for diabetes glucose"), ("e1", "aspirin fever"), ("e2", "vaccine immune")]
PARAMS = """
retrieve:
  bm25_methods: [none, fixed]
  dense_methods: [none]
  chunk: {window: 6, overlap: 0}
  depth: 10
  ks: [1, 5]
  save_depth: 5
  rerank_depth: 3
  qa_test_splits: [B2]
  reshape_questions: 2
reshape: {passages: 3, top_m: 2}
corpus: {bioasq_unit: snippet}  # the fixture's snippets all come from one record
train_reranker: {steps: 2, batch_size: 2, negatives: 2, max_length: 64}
embed: {batch_size: 8}
"""


def test_no_pipeline_hashes_the_embedding_cache():
    # A cache is no result: dvc.lock never hashes one. The cache is safe to keep outside DVC
    # because its key holds everything that decides a vector (tests/test_encoders.py).
    cache = re.search(r"--cache (\S+)", (ROOT / "dvc.yaml").read_text()).group(1)
    for path in [ROOT / "dvc.yaml", *sorted((ROOT / "experiments").glob("*/dvc.yaml"))]:
        for name, stage in yaml.safe_load(path.read_text())["stages"].items():
            body = stage.get("do", stage)
            declared = [next(iter(o)) if isinstance(o, dict) else o for key in ("deps", "outs") for o in body.get(key, [])]
            overlap = [d for d in declared if f"{d}/".startswith(f"{cache}/") or f"{cache}/".startswith(f"{d}/")]
            assert not overlap, f"{path}: {name} declares the embedding cache {cache} ({overlap})"


def _run(tmp_path, dataset, data):
    env_cmd = [sys.executable, str(ROOT / "stages" / "train_reranker.py"), "--dataset", dataset, "--data", str(data), "--out", "rr", "--params", "params.yaml"]
    r = subprocess.run(env_cmd, cwd=tmp_path, capture_output=True, text=True)
    assert r.returncode == 0, r.stderr[-3000:]
    cmd = [
        sys.executable, str(ROOT / "stages" / "retrieve.py"), "--dataset", dataset, "--data", str(data), "--reranker", "rr",
        "--out", "out", "--metrics", "m.json", "--scores", "q.parquet", "--timing", "t.json", "--cache", "cache",
        "--params", "params.yaml",
    ]  # fmt: skip
    r = subprocess.run(cmd, cwd=tmp_path, capture_output=True, text=True)
    assert r.returncode == 0, r.stderr[-3000:]
    return json.loads((tmp_path / "m.json").read_text()), read_table(tmp_path / "out" / "runs.parquet", RUNS)


@pytest.mark.slow
def test_retrieve_stage_on_a_tiny_beir_collection(tmp_path):
    pytest.importorskip("pyserini")
    data = tmp_path / "data"
    data.mkdir()
    write_table(pd.DataFrame(DOCS, columns=["doc_id", "title", "text"]), data / "corpus.parquet", CORPUS)
    write_table(pd.DataFrame(QUERIES_, columns=["query_id", "text"]), data / "queries.parquet", QUERIES)
    qrels = [("t1", "d3", 1, "train"), ("t2", "d2", 1, "train"), ("e1", "d1", 1, "test"), ("e2", "d4", 1, "test")]
    write_table(pd.DataFrame(qrels, columns=QRELS.names), data / "qrels.parquet", QRELS)
    (tmp_path / "params.yaml").write_text(PARAMS)
    m, runs = _run(tmp_path, "scifact", data)
    assert set(m["bm25"]) == {"none", "fixed"} and set(m["dense"]) == {"none"} and set(m["hybrid"]) == {"none"}
    assert m["bm25"]["none"]["ndcg@10"] == pytest.approx(1.0)  # each test query names its document
    assert m["bm25"]["none"]["queries"] == 2
    assert {"trained", "init", "bm25"} <= set(m["rerank"])
    assert set(runs.retriever) == {"bm25", "dense", "hybrid", "rerank-bm25", "rerank-trained", "rerank-init"}
    assert runs.groupby(["retriever", "method", "query_id"]).size().max() <= 5
    assert set(runs.doc_id) <= {d for d, _, _ in DOCS}  # chunk hits mapped to documents
    assert json.loads((tmp_path / "rr" / "report.json").read_text())["trained"] is True
    assert not (tmp_path / "out" / "contexts.parquet").exists()
    # Per-query scores: every run's measures, whose means are the metrics (the report's intervals resample them).
    scores = read_table(tmp_path / "q.parquet", ITEM_SCORES)
    means = scores.groupby("metric")["value"].mean()
    for retriever, methods in (("bm25", ("none", "fixed")), ("dense", ("none",)), ("hybrid", ("none",))):
        for method in methods:
            for measure in ("ndcg@10", "map", "mrr@10", "recall@5"):
                assert means[f"{retriever}/{method}/{measure}"] == pytest.approx(m[retriever][method][measure])
    assert means["rerank-trained/none/ndcg@10"] == pytest.approx(m["rerank"]["trained"]["ndcg@10"])
    assert scores.groupby("metric").size().eq(2).all()  # both test queries, every run
    # A pull-request diff pairs whole documents' nDCG@10 change over these queries.
    ndcg = {f"{r}.none.ndcg@10": m[r]["none"]["ndcg@10"] for r in ("bm25", "dense", "hybrid")}
    assert_metrics_diff_pairs(tmp_path / "q.parquet", "metrics/retrieval-scifact.json", ndcg)
    assert "seconds" not in m["corpus"] and "bm25/none" in json.loads((tmp_path / "t.json").read_text())["seconds"]


@pytest.mark.slow
def test_retrieve_stage_reshapes_bioasq_contexts(tmp_path):
    pytest.importorskip("pyserini")
    data = tmp_path / "data"
    data.mkdir()
    qs = [("q1", "B1", "what lowers cholesterol"), ("q2", "B1", "what treats diabetes"), ("q3", "B2", "does aspirin reduce fever"), ("q4", "B2", "what do vaccines do")]
    write_table(
        pd.DataFrame([{"id": i, "split": s, "type": "summary", "body": b, "ideal_answer": ["x"], "exact_answer": [], "documents": []} for i, s, b in qs]),
        data / "questions.parquet", QA_QUESTIONS,
    )  # fmt: skip
    gold = {"q1": ["d3"], "q2": ["d2", "d5"], "q3": ["d1"], "q4": ["d4", "d4"]}  # q4 repeats a text: one pooled passage
    text = {d: f"{t}. {x}" for d, t, x in DOCS}
    rows = [
        {"question_id": q, "snippet_id": f"{q}-{n}", "text": text[d], "document": "u", "begin_section": "abstract", "end_section": "abstract", "offset_begin": 0, "offset_end": 1}
        for q, ds in gold.items() for n, d in enumerate(ds)
    ]  # fmt: skip
    write_table(pd.DataFrame(rows), data / "snippets.parquet", QA_SNIPPETS)
    (tmp_path / "params.yaml").write_text(PARAMS)
    m, runs = _run(tmp_path, "bioasq", data)
    assert m["corpus"]["documents"] == 5  # six snippets, five distinct texts
    assert m["bm25"]["none"]["queries"] == 4  # every question is scored
    ctx = read_table(tmp_path / "out" / "contexts.parquet", CONTEXTS)
    assert sorted(ctx.question_id.unique()) == ["q3", "q4"]  # the held-out batch only
    assert set(ctx.method) == {"retrieved", "reshaped"}
    assert all(len(c) > 0 for c in ctx.context)
    all_snippets = {r["snippet_id"] for r in rows}
    assert all(set(s) <= all_snippets for s in ctx.snippet_ids)
    assert m["reshape"]["questions"] == 2


@pytest.mark.slow
def test_a_beir_set_without_train_judgements_runs_with_reranking_off(tmp_path):
    # Many BEIR sets ship test qrels only: train_reranker must not fail, retrieve must run and say so.
    pytest.importorskip("pyserini")
    data = tmp_path / "data"
    data.mkdir()
    write_table(pd.DataFrame(DOCS, columns=["doc_id", "title", "text"]), data / "corpus.parquet", CORPUS)
    write_table(pd.DataFrame(QUERIES_, columns=["query_id", "text"]), data / "queries.parquet", QUERIES)
    qrels = [("e1", "d1", 1, "test"), ("e2", "d4", 1, "test")]
    write_table(pd.DataFrame(qrels, columns=QRELS.names), data / "qrels.parquet", QRELS)
    (tmp_path / "params.yaml").write_text(PARAMS.replace("dense_methods: [none]", "dense_methods: []"))
    m, runs = _run(tmp_path, "scifact", data)
    report = json.loads((tmp_path / "rr" / "report.json").read_text())
    assert report["reranking"] is False and report["reason"].startswith("no training judgements in ")
    assert sorted(p.name for p in (tmp_path / "rr").iterdir()) == ["report.json"]
    assert m["rerank"] == {"skipped": report["reason"]}
    assert set(runs.retriever) == {"bm25"} and m["bm25"]["none"]["queries"] == 2
