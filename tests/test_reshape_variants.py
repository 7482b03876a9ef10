"""reshape.rank and reshape.variants reach the QA contexts (retrieval.contexts.reshaped_contexts)."""

from __future__ import annotations

import numpy as np
import pandas as pd

from biochunk import params
from biochunk.retrieval import contexts
from biochunk.retrieval.reshape import reshape

# Two topics a toy encoder tells apart by keyword; the larger one (fever, 3 sentences) is found first.
FEVER = "Aspirin lowers fever. Fever falls with aspirin. Aspirin treats fever well."
RAIN = "Rain falls on Monday. Rain is wet."
TOPICS = ("aspirin", "fever", "rain", "wet", "monday")


class KeywordEncoder:
    model_name = "toy"
    dim = len(TOPICS)

    def encode(self, texts, progress=False):
        v = np.array([[t.lower().count(w) + 1e-3 for w in TOPICS] for t in texts], np.float32)
        return v / np.linalg.norm(v, axis=1, keepdims=True)


def _run(**reshape_params):
    corpus = pd.DataFrame({"doc_id": ["d1", "d2"], "text": [FEVER, RAIN]})
    questions = pd.DataFrame({"id": ["q1"], "question": ["Is rain wet?"]})
    rs = params.section("reshape", data={"reshape": {"passages": 2, "threshold": 0.9, **reshape_params}})
    chunks, found, stats = contexts.reshaped_contexts(corpus, questions, KeywordEncoder(), rs)
    text = dict(zip(chunks["chunk_id"], chunks["text"]))
    by_arm = {a: [text[c] for c in g.sort_values("rank")["chunk_id"]] for a, g in found.groupby("method")}
    return by_arm, stats


def test_unscored_reshape_keeps_discovery_order():
    passages = [("d1", FEVER), ("d2", RAIN)]
    enc = KeywordEncoder()
    unranked = reshape("Is rain wet?", passages, enc.encode, None, threshold=0.9, keep=4, top_m=1)
    ranked = reshape("Is rain wet?", passages, enc.encode, lambda q, t: enc.encode(t) @ enc.encode([q])[0], 0.9, 4, 1)
    assert unranked.text.startswith("Aspirin") and ranked.text.startswith("Rain")


def test_rank_changes_the_reshaped_context():
    cosine, _ = _run(rank="cosine", top_m=1)
    none, _ = _run(rank="none", top_m=1)
    assert cosine["reshaped"][0].startswith("Rain") and none["reshaped"][0].startswith("Aspirin")


def test_crossencoder_rank_scores_communities_with_the_reranker(monkeypatch):
    from biochunk.scoring import crossencoder

    calls = []

    def predict(ce, pairs, batch_size=32):  # a stand-in reranker that prefers the fever topic
        calls.append(ce)
        return np.array([t.count("fever") for _, t in pairs], np.float32)

    monkeypatch.setattr(crossencoder, "load", lambda model, param: f"loaded {model}")
    monkeypatch.setattr(crossencoder, "predict", predict)
    got, stats = _run(rank="crossencoder", reranker="some/reranker", top_m=1)
    assert got["reshaped"][0].startswith("Aspirin") and set(calls) == {"loaded some/reranker"}
    assert stats["reshaped"]["reranker"] == "some/reranker"


def test_variants_become_arms_of_one_run():
    variants = [
        {"name": "unranked", "rank": "none", "top_m": 1},
        {"name": "cos-1x1", "top_m": 1, "keep": 1},
        {"name": "cos-2x4", "top_m": 2, "keep": 4},
    ]
    got, stats = _run(variants=variants)
    assert sorted(got) == ["reshaped:cos-1x1", "reshaped:cos-2x4", "reshaped:unranked"] == sorted(stats)
    assert got["reshaped:unranked"] == ["Aspirin lowers fever. Fever falls with aspirin. Aspirin treats fever well."]
    assert len(got["reshaped:cos-1x1"]) == 1 and got["reshaped:cos-1x1"][0].count(".") == 1  # keep 1 sentence
    assert len(got["reshaped:cos-2x4"]) == 2 and all(t.startswith("Rain") for t in got["reshaped:cos-2x4"])  # top_m 2
    assert contexts.arms(["none", "reshaped"], [], [a for a, _ in params.section("reshape", data={"reshape": {"variants": variants}}).expand()]) == [
        "none", "reshaped:unranked", "reshaped:cos-1x1", "reshaped:cos-2x4",
    ]  # fmt: skip
