"""The own-corpus report tells the truth on small corpora (issue 25, item 7): tie-aware nDCG@10,
paired intervals against the best method, the whole-document row as a reference, a warning
where chunks exceed the encoder's window, and null (never NaN) where a value is undefined."""

from __future__ import annotations

import dataclasses
import itertools
import json
import math

import ir_measures
import numpy as np
import pytest
from ir_measures import nDCG

from biochunk.evaluation.corpus_report import MISSING, render
from biochunk.evaluation.ties import against_best, tie_aware
from biochunk.evaluation.stats import bootstrap_ci

D = [1 / math.log2(r + 1) for r in range(1, 11)]  # nDCG's discount at ranks 1..10


def _trec(run: dict, qrels: dict) -> list[float]:
    """ir_measures' (trec_eval's) nDCG@10 per query, in sorted query order (unanswered: 0)."""
    got = {m.query_id: m.value for m in ir_measures.iter_calc([nDCG @ 10], qrels, {q: dict(h) for q, h in run.items()})}
    return [got.get(q, 0.0) for q in sorted(qrels)]


def test_tie_aware_ndcg_is_the_expectation_over_the_orders_of_tied_documents():
    # b, c, d share rank 2..4; only rank 2 is inside a cut-off of 2; c is the relevant one.
    run = {"q": [("a", 3.0), ("b", 1.0), ("c", 1.0), ("d", 1.0)]}
    qrels = {"q": {"c": 1}}
    ta = tie_aware(run, qrels, k=2)
    assert ta["ndcg@2"][0] == pytest.approx(D[1] / 3)  # c at rank 2 in one order of three
    assert ta["recall@2"][0] == pytest.approx(1 / 3)
    assert ta["tie_at_cutoff"][0] and ta["tie_sensitive"][0]
    # The same value as averaging trec_eval over every order of the tied documents.
    orders = [dict(zip(("a", *p), (4.0, 3.0, 2.0, 1.0))) for p in itertools.permutations("bcd")]
    brute = np.mean([m.value for o in orders for m in ir_measures.iter_calc([nDCG @ 2], qrels, {"q": o})])
    assert ta["ndcg@2"][0] == pytest.approx(brute)
    # trec_eval orders equal scores by document id, descending: d first, so c scores 0 there.
    assert [m.value for m in ir_measures.iter_calc([nDCG @ 2], qrels, {"q": dict(run["q"])})] == [0.0]


def test_tie_aware_ndcg_equals_trec_eval_without_ties():
    rng = np.random.default_rng(0)
    docs = [f"d{i}" for i in range(30)]
    qrels = {f"q{i}": {d: int(rng.integers(0, 3)) for d in rng.choice(docs, 6, replace=False)} for i in range(20)}
    run = {q: [(d, float(s)) for d, s in zip(rng.permutation(docs)[:15], np.linspace(1, 0, 15))] for q in qrels}
    del run["q3"]  # unanswered: 0 for both
    ta = tie_aware(run, qrels)
    assert ta["ndcg@10"] == pytest.approx(_trec(run, qrels))
    assert not ta["tie_at_cutoff"].any() and not ta["tie_sensitive"].any()


def test_a_tie_of_documents_with_equal_gains_changes_nothing():
    ta = tie_aware({"q": [("a", 1.0), ("b", 1.0), ("c", 0.5)]}, {"q": {"a": 1, "b": 1}})
    assert ta["ndcg@10"][0] == pytest.approx(1.0) and not ta["tie_sensitive"][0]


def test_a_paired_interval_separates_what_unpaired_intervals_cannot():
    # Questions differ much more than methods do: B is 0.05 under A on every question.
    rng = np.random.default_rng(1)
    a = rng.uniform(0.2, 1.0, 25)
    b = a - 0.05
    lo_a, hi_a = bootstrap_ci(a, np.mean, 1000, 42)
    lo_b, hi_b = bootstrap_ci(b, np.mean, 1000, 42)
    assert lo_a <= hi_b and lo_b <= hi_a  # unpaired intervals overlap
    p = against_best({"A": a, "B": b}, "A", 1000, 42)
    assert p["B"]["delta"] == pytest.approx(-0.05) and p["B"]["ci_high"] < 0 and p["B"]["separable"] is True
    assert p["A"] == {"delta": 0.0, "ci_low": None, "ci_high": None, "separable": None}
    # Noise of either sign around no difference: not separable.
    c = a + rng.normal(0, 0.1, 25)
    assert against_best({"A": a, "C": c - (c - a).mean()}, "A", 1000, 42)["C"]["separable"] is False


def test_no_resamples_leave_the_paired_interval_undefined():
    p = against_best({"A": np.ones(3), "B": np.zeros(3)}, "A", 0, 42)
    assert p["B"]["ci_low"] is None and p["B"]["separable"] is None and p["B"]["delta"] == -1.0


class ConstantEncoder:
    """Every text embeds as the same unit vector: dense scores all tie, so the order of tied
    documents alone decides dense nDCG@10. ``model_name`` is the offline MiniLM's, for its
    tokenizer (token counts only; no weights are loaded); the window is set small."""

    model_name = "minilm"
    max_seq_length = 32
    dim = 4

    def encode(self, texts, progress=False):
        v = np.zeros((len(texts), self.dim), np.float32)
        v[:, 0] = 1.0
        return v


TOPICS = "asthma fever iron hygiene vitamin sleep insulin migraine allergy burns anaemia gout".split()


@pytest.fixture(scope="module")
def comparison(tmp_path_factory):
    """12 documents (more than the cut-off of 10), 4 questions, compared by fixed and recursive chunks."""
    from biochunk import params
    from biochunk.datasets.local import convert_local
    from biochunk.evaluation import corpus_compare as compare

    tmp = tmp_path_factory.mktemp("toy")
    folder = tmp / "corpus"
    folder.mkdir()
    for i, t in enumerate(TOPICS):
        words = " ".join(f"{t} note {j} of a plain leaflet." for j in range(8 + 3 * i))
        (folder / f"{chr(97 + i)}-{t}.txt").write_text(f"About {t}. {words}\n")
    qs = [("q1", "a-asthma.txt", "asthma"), ("q2", "a-asthma.txt", "asthma"), ("q3", "a-asthma.txt", "asthma"), ("q4", "l-gout.txt", "gout")]
    (folder / "questions.jsonl").write_text(
        "".join(json.dumps({"id": q, "question": f"What about {t}?", "doc_id": d, "answer": f"About {t}"}) + "\n" for q, d, t in qs)
    )
    info = convert_local(folder, tmp / "data")
    corpus = compare.load(tmp / "data", info["task"])
    # retrieve.chunk: {} keeps chunk.* as it is (params.yaml's retrieve.chunk would make 128-word windows)
    cp, rp = params.section("chunk", data={}), params.section("retrieve", data={"retrieve": {"chunk": {}}})
    c = compare.run(corpus, ["fixed", "recursive"], lambda m: rp.chunk_params(cp, m), rp, ConstantEncoder(), n_samples=1, n_boot=200)
    return c, compare.metrics(c, corpus, {k: info[k] for k in ("dataset", "kind", "task")})


@pytest.mark.slow
def test_ties_decide_dense_retrieval_and_the_score_is_their_expectation(comparison):
    c, _ = comparison
    # 12 documents tied: the relevant one is at each of ranks 1..12 with chance 1/12; ranks 1..10 count.
    expected = sum(D) / 12
    for method in ("none", "fixed", "recursive"):
        m = c.retrieval["dense"][method]
        assert m["ndcg@10"] == pytest.approx(expected)
        assert m["ties_at_cutoff"] == 4 and m["tie_sensitive"] == 4  # every question: the tie straddles rank 10
        # trec_eval's order (ids descending) put a-asthma.txt at rank 12 (scores 0) and l-gout.txt first.
        assert m["ndcg@10_trec_eval"] == pytest.approx(0.25)


@pytest.mark.slow
def test_whole_documents_are_a_reference_never_the_best(comparison):
    c, m = comparison
    ranking = m["ranking"]
    assert [r["method"] for r in ranking][-1] == "none" and ranking[-1]["reference"] and ranking[-1]["rank"] is None
    assert ranking[0]["method"] != "none" and ranking[0]["rank"] == 1 and ranking[0]["vs_best"] == 0.0
    assert all(r["separable"] is not None for r in ranking[1:])  # each against the best, paired
    assert c.samples[0]["best"]["method"] != "none"
    page = render(m, c.samples, [])
    assert "none (reference)" in page and "its top chunk is a whole document" in page
    assert "paired" in page and ("not separable" in page or "separable:" in page)
    assert "<td>best</td>" in page  # the best row: no difference to itself


@pytest.mark.slow
def test_chunks_over_the_encoder_window_are_counted_and_warned(comparison):
    c, m = comparison
    w = m["window"]
    assert w["max_seq_length"] == 32 and w["over"]["none"] == 12 and w["over"]["recursive"] > 0
    (note,) = [n for n in m["notes"] if "longer than the encoder's window" in n]  # one line for every method
    assert "(minilm: 32 tokens) are embedded truncated" in note and "none 12 of 12 documents" in note
    assert f"recursive {w['over']['recursive']} of {w['chunks']['recursive']}" in note
    assert "longer than the encoder's window (32 tokens)" in render(m, c.samples, [])


def test_the_window_is_read_from_the_model_without_loading_it():
    from biochunk.evaluation.corpus_compare import encoder_window

    class Named:
        model_name = "minilm"

    assert encoder_window(Named()) == 256  # all-MiniLM-L6-v2's sentence_bert_config.json
    assert encoder_window(object()) is None


@pytest.mark.slow
def test_metrics_are_strict_json(comparison):
    _, m = comparison
    text = json.dumps(m, allow_nan=False)  # raises on NaN or infinity
    assert "NaN" not in text


def test_undefined_values_are_null_and_shown_as_a_dash():
    from biochunk.evaluation.corpus_compare import Comparison, Corpus, metrics
    from biochunk.retrieval.collection import Collection
    import pandas as pd

    coll = Collection(pd.DataFrame({"doc_id": ["a"], "text": ["x"]}), pd.DataFrame(), {}, {}, {})
    row = {"method": "fixed", "retriever": "bm25", "ndcg@10": 0.5, "ci_low": math.nan, "ci_high": math.nan, "bm25_ndcg@10": 0.5,
           "recall@10": 1.0, "answer@1": math.nan, "chunks": 1, "cut_answer_share": math.nan, "reference": False, "rank": 1,
           "vs_best": 0.0, "vs_best_low": None, "vs_best_high": None, "separable": None, "ndcg@10_trec_eval": 0.5,
           "ties_at_cutoff": 0, "tie_sensitive": 0}  # fmt: skip
    sizes = {"fixed": {"chunks": 1, "counter": "words", "mb_per_s": math.inf, "answers": 1, "cut_answers": 0, "cut_answer_share": math.nan}}
    c = Comparison(["fixed"], sizes, {}, {"bm25": {"fixed": dict(row)}}, [row], [], [], None)
    m = metrics(c, Corpus(coll, None), {"dataset": "toy"})
    json.dumps(m, allow_nan=False)
    assert m["ranking"][0]["ci_low"] is None and m["sizes"]["fixed"]["mb_per_s"] is None
    page = render(m, [], [])
    assert f"<td>{MISSING}</td>" in page and "nan" not in page.lower().replace("nanoseconds", "")


def test_bm25_ties_broken_by_anserini_are_ties_again():
    from biochunk.evaluation.corpus_compare import bm25_ties

    # Anserini's TiebreakerReranker: 4 decimals, then 1e-6 less per further tied document (ids ascending).
    run = {"q": [("a", 2.5), ("b", 1.2345), ("c", 1.2345 - 1e-6), ("d", 1.2345 - 2e-6), ("e", 1.2344)]}
    ta = tie_aware(bm25_ties(run), {"q": {"d": 1}})
    assert ta["ndcg@10"][0] == pytest.approx(sum(D[1:4]) / 3 / D[0]) and ta["tie_sensitive"][0]
    assert tie_aware(run, {"q": {"d": 1}})["ndcg@10"][0] == pytest.approx(D[3])  # as Anserini ordered them


def test_a_methods_settings_are_the_keys_it_reads_and_the_models_it_loads():
    """metrics.json's settings (and the report's snippet) hold what decides a method's chunks:
    a key the method does not read is left out, so changing it changes neither."""
    from biochunk import params
    from biochunk.chunking import get
    from biochunk.evaluation.corpus_compare import method_settings
    from biochunk.evaluation.corpus_report import use_snippet

    cp, rp = params.section("chunk", data={}), params.section("retrieve", data={"retrieve": {"chunk": {"window": 64}}})
    fixed = method_settings(rp.chunk_params(cp, "fixed"), "minilm")
    assert fixed["chunk.method"] == "fixed" and fixed["chunk.window"] == 64  # retrieve.chunk's value, not chunk.window's
    assert "chunk.threshold" not in fixed and "embed.model" not in fixed  # fixed windows read neither
    assert list(fixed) == sorted(fixed)  # metrics.json's order: the page's snippet is the file's
    unread = dataclasses.replace(rp.chunk_params(cp, "fixed"), threshold=0.1)
    assert method_settings(unread, "minilm") == fixed
    adaptive = method_settings(rp.chunk_params(cp, "adaptive"), "minilm")
    assert adaptive["embed.model"] == "minilm" and adaptive["chunk.threshold"] == cp.threshold
    titled = method_settings(dataclasses.replace(rp.chunk_params(cp, "adaptive"), header="generator"), "minilm")
    assert titled["chunk.generator"] == cp.generator
    proposition = method_settings(rp.chunk_params(cp, "proposition"), "minilm")
    for s in (fixed, adaptive, titled, proposition):
        keys = {k.removeprefix("chunk.") for k in s if k.startswith("chunk.")}
        method = get(s["chunk.method"])
        assert keys == set(params.section("chunk", data={"chunk": {"method": s["chunk.method"]}}).reads()) | (
            {"generator"} if "chunk.generator" in s else set()
        )
        snippet = use_snippet(s)
        assert ("SentenceEncoder(" in snippet) == method.needs_encoder
        assert ("rewriter=Rewriter" in snippet) == ("chunk.generator" in s)
        compile(snippet, "snippet", "exec")  # valid Python; the end-to-end test runs it
