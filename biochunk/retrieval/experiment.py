"""The runs of one retrieval experiment over a collection: chunk methods × retrievers, reranking, reshaping.

For every chunk method the documents are chunked (``none``: each document is one
chunk), the chunks are searched by BM25 and/or dense retrieval, chunk hits are mapped
to their documents (max score by default), and BM25 + dense are fused by RRF. Runs are
document-level, so every chunk method can be scored against the same judgements; this
module only ranks, the evaluation layer scores the runs (``evaluation.retrieval.evaluate_runs``).
"""

from __future__ import annotations

import logging
import shutil
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Mapping, Sequence

import numpy as np
import pandas as pd
from tqdm import tqdm

from biochunk import chunking
from biochunk.chunking import NO_CHUNKING
from biochunk.corpus import Document
from biochunk.io import new_scratch_dir, scratch_dir
from biochunk.retrieval import bm25 as bm25_mod
from biochunk.retrieval.collection import Collection
from biochunk.retrieval.dense import dense_run, embed_chunks
from biochunk.retrieval.fusion import Run, rrf, to_documents
from biochunk.retrieval.reshape import reshape
from biochunk.scoring import crossencoder

log = logging.getLogger(__name__)

RETRIEVERS = ("bm25", "dense", "hybrid")


@dataclass
class Results:
    runs: dict[tuple[str, str], Run] = field(default_factory=dict)  # (retriever, method) -> document run
    chunks: dict[str, int] = field(default_factory=dict)  # method -> number of chunks
    seconds: dict[str, float] = field(default_factory=dict)
    # (retriever, method) -> the top chunk hits per query before mapping to documents (bm25 and
    # dense only; kept when run_retrievers is asked for them, for showing what was retrieved).
    chunk_hits: dict[tuple[str, str], Run] = field(default_factory=dict)


def chunk_documents(
    docs: pd.DataFrame,
    method: str,
    params: Any,
    encoder: Any,
    rewriter: chunking.RewriterFactory | None = None,
    dataset: str | None = None,
) -> pd.DataFrame:
    """The chunk table (``chunking.chunk_table``) of ``docs``; ``none``: one chunk per document, id = doc id."""
    if method == NO_CHUNKING:
        return pd.DataFrame({"chunk_id": docs["doc_id"], "doc_id": docs["doc_id"], "text": docs["text"], "metadata": "{}"})
    chunker = chunking.build(params, encoder, dataset=dataset, rewriter=rewriter)
    return chunking.chunk_table([Document(d, t) for d, t in zip(docs["doc_id"], docs["text"])], chunker)


def run_retrievers(
    coll: Collection,
    rp: Any,
    chunk_params: Callable[[str], Any],
    encoder: Any,
    work_dir: str | Path | None = None,
    rewriter: chunking.RewriterFactory | None = None,
    dataset: str | None = None,
    chunk_tables: Mapping[str, pd.DataFrame] | None = None,
    keep_chunk_hits: int = 0,
) -> Results:
    """The run of every (chunk method, retriever) pair of ``rp`` (RetrieveParams) over ``coll``'s
    evaluation queries, in ``Results.runs`` (scored by ``evaluation.retrieval.evaluate_runs``).

    ``encoder`` embeds chunks, queries and the semantic chunkers' units; pass a
    ``CachedEncoder`` so repeated texts are embedded once. ``rewriter`` serves the chunk
    methods that rewrite text with ``chunk.generator`` (``chunking.build``). ``chunk_tables``:
    chunks already cut by a method (its CHUNKS table), used instead of cutting them again;
    ``keep_chunk_hits``: the top chunk hits per query kept in ``Results.chunk_hits``.
    """
    res = Results()
    chunk_tables = chunk_tables or {}
    queries = coll.eval_queries()
    qids, qtexts = queries["query_id"].tolist(), queries["text"].tolist()
    methods = list(dict.fromkeys([*rp.bm25_methods, *rp.dense_methods]))
    qvecs = encoder.encode(qtexts, progress=True) if rp.dense_methods else None
    # pid-tagged: a run killed with SIGKILL leaves it, and the next run removes it
    work = Path(work_dir) if work_dir else new_scratch_dir("bm25-")
    try:
        for method in methods:
            t0 = time.perf_counter()
            if method in chunk_tables:
                chunks = chunk_tables[method]
            else:
                params = None if method == NO_CHUNKING else chunk_params(method)
                chunks = chunk_documents(coll.docs, method, params, encoder, rewriter, dataset)
            res.chunks[method] = len(chunks)
            res.seconds[f"chunk/{method}"] = time.perf_counter() - t0
            doc_of = dict(zip(chunks["chunk_id"], chunks["doc_id"]))
            ids, texts = chunks["chunk_id"].tolist(), chunks["text"].tolist()
            log.info("%s: %d chunks of %d documents", method, len(chunks), len(coll.docs))
            doc_runs = {}
            if method in rp.bm25_methods:
                t0 = time.perf_counter()
                run = bm25_mod.bm25_run(ids, texts, qtexts, qids, rp.depth, work / method, rp.k1, rp.b)
                if keep_chunk_hits:
                    res.chunk_hits[("bm25", method)] = {q: hits[:keep_chunk_hits] for q, hits in run.items()}
                doc_runs["bm25"] = to_documents(run, doc_of, rp.aggregate)
                res.seconds[f"bm25/{method}"] = time.perf_counter() - t0
            if method in rp.dense_methods:
                t0 = time.perf_counter()
                run = dense_run(embed_chunks(encoder, chunks), ids, qvecs, qids, rp.depth, rp.index, rp.use_gpu)
                if keep_chunk_hits:
                    res.chunk_hits[("dense", method)] = {q: hits[:keep_chunk_hits] for q, hits in run.items()}
                doc_runs["dense"] = to_documents(run, doc_of, rp.aggregate)
                res.seconds[f"dense/{method}"] = time.perf_counter() - t0
            if len(doc_runs) == 2:
                doc_runs["hybrid"] = rrf([doc_runs["bm25"], doc_runs["dense"]], rp.rrf_k, rp.depth)
            for retriever, run in doc_runs.items():
                res.runs[(retriever, method)] = run
    finally:
        if work_dir is None:
            shutil.rmtree(work, ignore_errors=True)
    return res


def base_run(res: Results, retriever: str = "bm25") -> tuple[str, Run]:
    """The run a reranker or reshaper starts from: ``retriever`` over whole documents if run, else its first method."""
    keys = [k for k in res.runs if k[0] == retriever]
    if not keys:
        raise ValueError(f"no {retriever} run to start from")
    key = (retriever, NO_CHUNKING) if (retriever, NO_CHUNKING) in res.runs else keys[0]
    return key[1], res.runs[key]


def train_reranker(coll: Collection, p: Any, k1: float, b: float, where: str) -> tuple[Any | None, dict[str, Any]]:
    """A cross-encoder reranker from the collection's training judgements (``p``: RerankerParams).

    Hard negatives are BM25's (``k1``, ``b``) top documents that are not judged relevant. A ``p.model`` other
    than an offline alias is a ready reranker, loaded unchanged. Returns the reranker (None when
    there is nothing to train on: many BEIR sets ship test judgements only) and a report whose
    ``reason`` says why reranking is off. The train_reranker stage and ``compare`` both use it.
    """
    report: dict[str, Any] = {"model": p.model, "train_queries": len(coll.train_qrels), "trained": False, "reranking": True}
    groups, skipped = [], 0
    if crossencoder.is_base(p.model) and p.steps > 0:
        if coll.train_qrels:
            run = bm25_candidates(coll, coll.train_qrels, p.negatives + 20, k1, b)
            texts = dict(zip(coll.docs["doc_id"], coll.docs["text"]))
            queries = dict(zip(coll.queries["query_id"], coll.queries["text"]))
            groups, skipped = crossencoder.groups_from_run(queries, coll.train_qrels, run, texts, p.negatives)
            log.info("%d training groups (%d judged pairs skipped: no negative)", len(groups), skipped)
        if not groups:
            why = "no training judgements" if not coll.train_qrels else f"no training groups ({skipped} judged pairs, none with a negative)"
            report.update(reranking=False, reason=f"{why} in {where}")
    ce = crossencoder.load(p.model, max_length=p.max_length, seed=p.seed) if report["reranking"] else None
    if ce is not None and groups:
        t0 = time.perf_counter()
        losses = crossencoder.train_reranker(ce, groups, p.steps, p.batch_size, p.lr, p.seed, head_lr=p.head_lr)
        tail = max(1, len(losses) // 10)
        report.update(
            trained=True, groups=len(groups), skipped_pairs=skipped, steps=p.steps, seconds=time.perf_counter() - t0,
            loss_first=sum(losses[:tail]) / tail, loss_last=sum(losses[-tail:]) / tail,
        )  # fmt: skip
        log.info("loss %.3f -> %.3f in %.0f s", report["loss_first"], report["loss_last"], report["seconds"])
    return ce, report


def bm25_candidates(coll: Collection, qrels, depth: int, k1: float, b: float) -> Run:
    """BM25 over whole documents for the queries of ``qrels`` (reranker training negatives)."""
    q = coll.queries[coll.queries["query_id"].isin(qrels)]
    with scratch_dir("bm25-") as tmp:
        return bm25_mod.bm25_run(coll.docs["doc_id"].tolist(), coll.docs["text"].tolist(), q["text"].tolist(), q["query_id"].tolist(), depth, Path(tmp) / "index", k1, b)


def runs_table(res: Results, depth: int) -> pd.DataFrame:
    """RUNS rows: the top ``depth`` documents of every run."""
    rows = []
    for (retriever, method), run in sorted(res.runs.items()):
        for q, hits in sorted(run.items()):
            for rank, (d, s) in enumerate(hits[:depth], 1):
                rows.append((retriever, method, q, rank, d, float(s)))
    return pd.DataFrame(rows, columns=["retriever", "method", "query_id", "rank", "doc_id", "score"])


def dense_score(encoder: Any) -> Callable[[str, Sequence[str]], np.ndarray]:
    """Cosine of each text to the query (normalised embeddings): the community ranker when no reranker was trained."""

    def score(query: str, texts: Sequence[str]) -> np.ndarray:
        if not len(texts):
            return np.zeros(0, np.float32)
        return encoder.encode(list(texts)) @ encoder.encode([query])[0]

    return score


def reshape_contexts(
    coll: Collection,
    run: Run,
    questions: Sequence[str],
    encoder: Any,
    score: Callable[[str, Sequence[str]], np.ndarray],
    rs: Any,
) -> tuple[pd.DataFrame, dict[str, float]]:
    """CONTEXTS rows for ``questions``: the plain top passages and the reshaped context
    (``rs``: ReshapeParams)."""
    text_of = dict(zip(coll.docs["doc_id"], coll.docs["text"]))
    body = dict(zip(coll.queries["query_id"], coll.queries["text"]))
    rows, n_clusters, n_sents = [], [], []
    for q in tqdm(questions, desc="reshaping", mininterval=10):
        passages = [(d, text_of[d]) for d, _ in run.get(q, [])[: rs.passages]]
        plain = passages[: rs.top_m]
        rows.append((q, "retrieved", "\n\n".join(t for _, t in plain), _snippets(coll, [d for d, _ in plain]), len(plain)))
        ctx = reshape(
            body[q], passages, encoder.encode, score,
            rs.threshold, rs.keep, rs.top_m,
        )  # fmt: skip
        rows.append((q, "reshaped", ctx.text, _snippets(coll, ctx.sources), ctx.n_sentences))
        n_clusters.append(ctx.n_clusters)
        n_sents.append(ctx.n_sentences)
    df = pd.DataFrame(rows, columns=["question_id", "method", "context", "snippet_ids", "n_units"])
    stats = {
        "questions": len(questions),
        "clusters_mean": float(np.mean(n_clusters)) if n_clusters else 0.0,
        "sentences_kept_mean": float(np.mean(n_sents)) if n_sents else 0.0,
        "reshaped_chars_mean": float(df.loc[df["method"] == "reshaped", "context"].str.len().mean()) if rows else 0.0,
        "retrieved_chars_mean": float(df.loc[df["method"] == "retrieved", "context"].str.len().mean()) if rows else 0.0,
    }
    return df, stats


def _snippets(coll: Collection, doc_ids: Sequence[str]) -> list[str]:
    # QA documents are deduplicated snippet texts: list every snippet id behind each.
    return [s for d in doc_ids for s in coll.sources.get(d, [d])]

