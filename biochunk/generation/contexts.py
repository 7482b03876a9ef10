"""Contexts for QA: the corpus chunked by each method, and the top chunks per question.

The retriever is a param (``qa.retriever``). Only ``dense`` exists here: the chunks
and the questions embedded by one encoder, cosine top-k through the project's FAISS
code. The QA_CONTEXTS table is the seam where other retrievers (BM25, fusion,
reshaped contexts) plug in: anything that writes it feeds the generate stage.
"""

from __future__ import annotations

import logging
from typing import Any, Sequence

import pandas as pd

from biochunk.chunking import RewriterFactory
from biochunk.corpus import Document
from biochunk.evaluation.chunking import run_methods
from biochunk.generation.qa import assemble_context
from biochunk.io import CHUNKS, QA_CONTEXTS
from biochunk.retrieval.dense import embed_search

log = logging.getLogger(__name__)

RETRIEVERS = ("dense",)


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


def gold_hits(contexts: pd.DataFrame, questions: pd.DataFrame) -> pd.DataFrame:
    """Per question and method: whether a retrieved chunk comes from a gold document (any
    rank, and rank 1): what a chunk method gives the generator to work with."""
    gold = dict(zip(questions["id"].astype(str), (set(d) for d in questions["doc_ids"])))
    contexts = contexts[contexts["question_id"].isin(gold)]
    c = contexts.assign(hit=[d in gold.get(q, set()) for q, d in zip(contexts["question_id"], contexts["doc_id"])])
    top1 = c[c["rank"] == 1].set_index(["question_id", "method"])["hit"]
    anyk = c.groupby(["question_id", "method"])["hit"].any()
    return pd.DataFrame({"gold_doc_hit@1": top1, "gold_doc_hit@k": anyk}).fillna(False).astype(float).reset_index()


def context_texts(contexts: pd.DataFrame, chunks: pd.DataFrame, budget_words: int) -> dict[tuple[str, str], str]:
    """(question_id, method) -> the assembled context passage text."""
    text = dict(zip(chunks["chunk_id"], chunks["text"]))
    out = {}
    for (qid, method), g in contexts.sort_values("rank").groupby(["question_id", "method"], sort=False):
        out[(str(qid), str(method))] = assemble_context([text[c] for c in g["chunk_id"]], budget_words)
    return out
