"""Contexts for QA: what the model reads for each question, one arm per ``qa.contexts`` entry.

- ``retrieved``: the corpus chunked by each method of ``qa.methods`` and the top chunks per
  question (one arm per method). The retriever is a param (``qa.retriever``); only
  ``dense`` exists: the project's one dense search (``retrieval.dense.embed_search``).
- ``reshaped``: context reshaping (``retrieval.reshape``) over the question's top
  ``reshape.passages`` whole documents by the same dense search; each kept community is
  one context chunk, its sentences' exact spans in ``metadata.spans``; communities are
  ordered by ``reshape.rank`` (cosine to the question, the project's cross-encoder
  ``reshape.reranker``, or none: discovery order). ``reshape.variants`` turns the one arm
  into one arm ``reshaped:<name>`` per named setting, all from the same search and the
  same sentence embeddings.
- ``gold``: the sentences around the question's gold spans (BioASQ: its snippets; COVID-QA:
  its answer), an upper bound on what retrieval can give.
- ``none``: no context; the arm has no rows and the model answers from the question alone.

Every arm writes the same two tables (CHUNKS with exact offsets, QA_CONTEXTS in reading
order), and generate_qa / evaluate_qa treat arms alike: the generator assembles each
question's context text (``generation.qa.context_texts``), the evaluation layer judges the
contexts against the gold documents (``evaluation.retrieval.gold_hits``).
"""

from __future__ import annotations

import json
import logging
from typing import Any, Sequence

import numpy as np
import pandas as pd
from tqdm import tqdm

from biochunk.chunking import RewriterFactory
from biochunk.chunking.runs import run_methods
from biochunk.corpus import Document
from biochunk.embedding import MemoEncoder
from biochunk.io import CHUNKS, QA_CONTEXTS
from biochunk.retrieval.dense import embed_search
from biochunk.retrieval.experiment import dense_score
from biochunk.retrieval.reshape import ClusterScorer, reshape
from biochunk.scoring import crossencoder
from biochunk.text.segment import sentence_spans

log = logging.getLogger(__name__)

RETRIEVERS = ("dense",)
CONTEXT_MODES = ("retrieved", "reshaped", "gold", "none")  # qa.contexts


def chunk_methods(
    corpus: pd.DataFrame,
    chunk_params: Any,
    methods: Sequence[str],
    encoder: Any,
    rewriter: RewriterFactory | None = None,
    dataset: str | None = None,
) -> pd.DataFrame:
    """CHUNKS of every method; chunk ids are prefixed with the method so they stay unique.

    ``rewriter`` serves the methods that rewrite text with ``chunk.generator`` (``chunking.build``).
    """
    docs = [Document(str(d), str(t)) for d, t in zip(corpus["doc_id"], corpus["text"])]
    runs = run_methods(docs, chunk_params, methods, encoder, rewriter, dataset)
    parts = [r.chunks.assign(chunk_id=r.method + ":" + r.chunks["chunk_id"]) for r in runs]
    return pd.concat(parts, ignore_index=True)[CHUNKS.names] if parts else pd.DataFrame(columns=CHUNKS.names)


def dense_contexts(chunks: pd.DataFrame, questions: pd.DataFrame, encoder: Any, top_k: int) -> pd.DataFrame:
    """Top-``top_k`` chunks of each method for every question (QA_CONTEXTS rows)."""
    q_vecs = encoder.encode(list(questions["question"]))
    rows = []
    for method, g in chunks.groupby("method", sort=True):
        g = g.reset_index(drop=True)
        log.info("%s: embedding %d chunks", method, len(g))
        scores, ids = embed_search(encoder, g, q_vecs, top_k)
        for qid, srow, irow in zip(questions["id"], scores, ids):
            for rank, (s, i) in enumerate(zip(srow, irow), start=1):
                if i < 0:
                    continue
                rows.append((str(qid), str(method), rank, g.at[i, "chunk_id"], g.at[i, "doc_id"], float(s), "dense"))
    return pd.DataFrame(rows, columns=QA_CONTEXTS.names)


def _chunk_rows(rows: list[tuple], method: str) -> pd.DataFrame:
    """CHUNKS rows from (doc_id, chunk_id, text, start, end, metadata) tuples of one arm."""
    return pd.DataFrame(
        [
            {"doc_id": d, "chunk_id": c, "text": t, "start": a, "end": b, "n_tokens": len(t.split()), "method": method,
             "labels": [], "metadata": m}
            for d, c, t, a, b, m in rows
        ],
        columns=CHUNKS.names,
    )  # fmt: skip


def gold_contexts(corpus: pd.DataFrame, gold: pd.DataFrame, questions: pd.DataFrame) -> tuple[pd.DataFrame, pd.DataFrame]:
    """The ``gold`` arm: per question, the sentences around each of its gold spans, in
    ``gold`` order, merged where they overlap (CHUNKS rows, QA_CONTEXTS rows)."""
    text_of = dict(zip(corpus["doc_id"].astype(str), corpus["text"]))
    wanted = set(questions["id"].astype(str))
    chunks, found = [], []
    for qid, g in gold[gold["question_id"].astype(str).isin(wanted)].groupby("question_id", sort=True):
        spans: list[tuple[str, int, int]] = []
        for d, s, e in zip(g["doc_id"].astype(str), g["start"], g["end"]):
            a, b = sentence_cover(text_of[d], int(s), int(e))
            if any(d == d2 and a < b2 and b > a2 for d2, a2, b2 in spans):
                continue  # the same sentences already serve an earlier gold span
            spans.append((d, a, b))
        for n, (d, a, b) in enumerate(spans, 1):
            cid = f"gold:{qid}:{n}"
            chunks.append((d, cid, text_of[d][a:b], a, b, "{}"))
            found.append((str(qid), "gold", n, cid, d, 1.0, "gold"))
    return _chunk_rows(chunks, "gold"), pd.DataFrame(found, columns=QA_CONTEXTS.names)


def sentence_cover(text: str, start: int, end: int) -> tuple[int, int]:
    """The span of the sentences of ``text`` that ``[start, end)`` touches."""
    touched = [(a, b) for a, b in sentence_spans(text) if a < end and b > start]
    return (min(a for a, _ in touched), max(b for _, b in touched)) if touched else (start, end)


def reshaped_contexts(
    corpus: pd.DataFrame, questions: pd.DataFrame, encoder: Any, rs: Any
) -> tuple[pd.DataFrame, pd.DataFrame, dict[str, Any]]:
    """The reshaped arms (``rs``: ReshapeParams, one arm per ``rs.expand()``): each question's
    top ``passages`` whole documents by dense search, reshaped; one chunk per kept community,
    best first."""
    variants = rs.expand()
    docs = corpus.assign(doc_id=corpus["doc_id"].astype(str), metadata="{}").reset_index(drop=True)
    # Questions share most of their top documents: each sentence (and community) is embedded once.
    encoder = MemoEncoder(encoder)
    q_vecs = encoder.encode(list(questions["question"]))
    _, ids = embed_search(encoder, docs, q_vecs, max(v.passages for _, v in variants))
    scorers: dict[tuple[str, str], ClusterScorer | None] = {}
    frames, found, stats = [], [], {}
    for arm, v in variants:
        chunks = []
        key = (v.rank, v.reranker if v.rank == "crossencoder" else "")
        if key not in scorers:
            scorers[key] = community_scorer(v.rank, v.reranker, encoder)
        n_groups, n_sents = [], []
        rows = tqdm(zip(questions["id"], questions["question"], ids), total=len(ids), desc=arm, mininterval=10)
        for qid, question, row in rows:
            passages = [(docs.at[j, "doc_id"], str(docs.at[j, "text"])) for j in row[: v.passages] if j >= 0]
            ctx = reshape(str(question), passages, encoder.encode, scorers[key], v.threshold, v.keep, v.top_m)
            n_groups.append(ctx.n_clusters)
            n_sents.append(ctx.n_sentences)
            for n, group in enumerate(ctx.groups, 1):
                cid = f"{arm}:{qid}:{n}"
                first = group[0]
                spans = [[s.source, s.start, s.end] for s in group]
                chunks.append(
                    (first.source, cid, " ".join(s.text for s in group), first.start, first.end, json.dumps({"spans": spans}))
                )
                found.append((str(qid), arm, n, cid, first.source, 0.0, "dense"))
        stats[arm] = {
            "communities_mean": float(np.mean(n_groups)) if n_groups else 0.0,
            "sentences_kept_mean": float(np.mean(n_sents)) if n_sents else 0.0,
            "rank": v.rank,
            **({"reranker": v.reranker} if v.rank == "crossencoder" else {}),
        }
        frames.append(_chunk_rows(chunks, arm))
    return pd.concat(frames, ignore_index=True), pd.DataFrame(found, columns=QA_CONTEXTS.names), stats


def community_scorer(rank: str, reranker: str, encoder: Any) -> ClusterScorer | None:
    """The community ranker of ``reshape.rank``; None keeps discovery order. Cross-encoder
    scores are kept per (question, text): variants share most of their communities."""
    if rank == "none":
        return None
    if rank == "cosine":
        return dense_score(encoder)
    ce = crossencoder.load(reranker, "reshape.reranker")
    memo: dict[tuple[str, str], float] = {}

    def score(question: str, texts: Sequence[str]) -> np.ndarray:
        new = [t for t in dict.fromkeys(texts) if (question, t) not in memo]
        if new:
            memo.update(zip(((question, t) for t in new), map(float, crossencoder.predict(ce, [(question, t) for t in new]))))
        return np.array([memo[(question, t)] for t in texts], np.float64)

    return score


def arms(contexts: Sequence[str], methods: Sequence[str], reshaped: Sequence[str] = ("reshaped",)) -> list[str]:
    """The arm names of ``qa.contexts``: ``retrieved`` expands to the chunk methods,
    ``reshaped`` to the reshape variants' arms."""
    out: list[str] = []
    for c in contexts:
        out += list(methods) if c == "retrieved" else list(reshaped) if c == "reshaped" else [c]
    return out
