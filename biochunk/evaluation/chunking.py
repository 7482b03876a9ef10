"""Chunking methods measured on whole documents: sizes, speed, and gold answers kept whole.

What ``chunk_docs`` reports per method run (``chunking.runs.run_methods``): how many
chunks, their size distribution in the method's own tokens (``chunk.counter``; semchunk
always counts the embedder's), in the embedder's tokens (one scale for every method) and
in characters, the time taken, and for datasets with extractive answers (COVID-QA) the
share of gold answers that no single chunk holds whole ("cut answers"): a retriever can
then return at best part of the answer. Below: retrieved chunks judged against gold spans.
"""

from __future__ import annotations

import json
import math
from typing import Any, Callable, Sequence

import numpy as np
import pandas as pd

from biochunk.chunking.runs import MethodRun
from biochunk.corpus import Document
from biochunk.io import atomic_path

SpanCounterOf = Callable[[str], Any]  # document text -> an object with count(start, end)
UNIT_NAMES = {"words": "words", "chars": "characters", "embedder": "embedder tokens"}


def distribution(values: np.ndarray, prefix: str) -> dict[str, float]:
    if len(values) == 0:
        return {}
    return {
        f"{prefix}_mean": float(values.mean()),
        f"{prefix}_median": float(np.median(values)),
        f"{prefix}_p95": float(np.quantile(values, 0.95)),
        f"{prefix}_max": int(values.max()),
    }


def embedder_tokens(chunks: pd.DataFrame, texts: dict[str, str], span_counter_of: SpanCounterOf) -> np.ndarray:
    """Each chunk's count in the embedder's tokens, measured on its document (one table per document)."""
    out = np.zeros(len(chunks), dtype=np.int64)
    for doc_id, idx in chunks.groupby("doc_id", sort=False).indices.items():
        counts = span_counter_of(texts[doc_id])
        rows = chunks.iloc[idx]
        out[idx] = [counts.count(s, e) for s, e in zip(rows["start"], rows["end"])]
    return out


def cut_answers(chunks: pd.DataFrame, answers: pd.DataFrame) -> dict[str, float]:
    """Gold answers whose span ``[start, end)`` lies wholly inside no chunk of its document.

    ``answers``: ANSWERS rows of the chunked documents only. An answer is whole when
    some chunk starts at or before it and ends at or after it: among the chunks
    that start at or before the answer, the furthest end decides.
    """
    cut = 0
    by_doc = {d: g for d, g in chunks.groupby("doc_id", sort=False)}
    for doc_id, ans in answers.groupby("doc_id", sort=False):
        g = by_doc.get(doc_id)
        if g is None:  # a document without chunks (blank text) keeps no answer
            cut += len(ans)
            continue
        order = np.argsort(g["start"].to_numpy(), kind="stable")
        starts = g["start"].to_numpy()[order]
        reach = np.maximum.accumulate(g["end"].to_numpy()[order])
        i = np.searchsorted(starts, ans["start"].to_numpy(), side="right") - 1
        whole = (i >= 0) & (reach[np.maximum(i, 0)] >= ans["end"].to_numpy())
        cut += int((~whole).sum())
    n = len(answers)
    return {"answers": n, "cut_answers": cut, "cut_answer_share": cut / n if n else float("nan")}


def method_metrics(
    run: MethodRun,
    docs: Sequence[Document],
    span_counter_of: SpanCounterOf,
    answers: pd.DataFrame | None = None,
) -> dict[str, Any]:
    """One method's flat metrics (see the module docstring)."""
    df = run.chunks
    megabytes = sum(len(d.text.encode("utf-8")) for d in docs) / 1e6
    texts = {d.doc_id: d.text for d in docs}
    out: dict[str, Any] = {
        "chunks": len(df),
        "documents": int(df["doc_id"].nunique()),
        "counter": run.counter,
        **distribution(df["n_tokens"].to_numpy(), "tokens"),
        **distribution(embedder_tokens(df, texts, span_counter_of), "embedder_tokens"),
        **distribution((df["end"] - df["start"]).to_numpy(), "chars"),
        "seconds": run.seconds,
        "mb_per_s": megabytes / run.seconds if run.seconds > 0 else math.inf,
        "chunks_per_s": len(df) / run.seconds if run.seconds > 0 else math.inf,
    }
    if answers is not None:
        out.update(cut_answers(df, answers[answers["doc_id"].isin(texts)]))
    return out


def sizes_table(runs: Sequence[MethodRun]) -> pd.DataFrame:
    """The plot table: one row per chunk, ``method, n_tokens``."""
    parts = [pd.DataFrame({"method": r.method, "n_tokens": r.chunks["n_tokens"].to_numpy()}) for r in runs]
    return pd.concat(parts, ignore_index=True) if parts else pd.DataFrame(columns=["method", "n_tokens"])


def sizes_png(runs: Sequence[MethodRun], title: str, path: Any) -> None:
    """One chunk-size histogram per method, in a grid."""
    import matplotlib

    matplotlib.use("Agg")  # no display on CI or servers
    import matplotlib.pyplot as plt

    cols = 2 if len(runs) > 1 else 1
    rows = max(1, math.ceil(len(runs) / cols))
    fig, axes = plt.subplots(rows, cols, figsize=(5 * cols, 2.6 * rows), squeeze=False)
    for ax, run in zip(axes.flat, runs):
        n = run.chunks["n_tokens"].to_numpy()
        ax.hist(n, bins=40, color="tab:blue")
        ax.set_title(f"{run.method}: {len(n)} chunks, mean {n.mean():.0f}" if len(n) else run.method, fontsize=9)
        ax.set_xlabel(f"{UNIT_NAMES.get(run.counter, run.counter)} per chunk", fontsize=8)
        ax.set_ylabel("chunks", fontsize=8)
    for ax in list(axes.flat)[len(runs) :]:
        ax.axis("off")
    fig.suptitle(title)
    fig.tight_layout()
    with atomic_path(path) as tmp:
        fig.savefig(tmp, dpi=90, format="png")
    plt.close(fig)


def gold_in_hits(hits: pd.DataFrame, gold: pd.DataFrame) -> pd.DataFrame:
    """Per question: does its retrieved chunk hold a gold span whole, or overlap one?

    ``hits``: one row per question, ``question_id, doc_id, start, end`` (the retrieved
    chunk's span in its document; a question with no hit has no row and counts 0).
    ``gold``: ``question_id, doc_id, start, end``, any number of rows per question (COVID-QA:
    its answer; BioASQ: its gold snippet sentences). ``whole``: some gold span of the question
    lies in the chunk's document with ``chunk.start <= gold.start`` and ``gold.end <= chunk.end``,
    the notion behind ``cut_answers`` (an answer no chunk holds whole is cut); ``overlaps``:
    some gold span shares at least one character with the chunk. Returns one row per
    question of ``gold`` with 0/1 columns ``whole`` and ``overlaps``.
    """
    cols = ["question_id", "doc_id", "start", "end"]
    m = gold[cols].merge(hits[cols], on=["question_id", "doc_id"], how="left", suffixes=("", "_hit"))
    found = m["start_hit"].notna()
    s, e = m["start_hit"].fillna(0), m["end_hit"].fillna(-1)
    m["whole"] = (found & (s <= m["start"]) & (m["end"] <= e)).astype(int)
    m["overlaps"] = ((found & (s < m["end"]) & (m["start"] < e)) | (m["whole"] == 1)).astype(int)
    return m.groupby("question_id", sort=False)[["whole", "overlaps"]].max().reset_index()

# -- retrieved chunks judged against gold answer spans ------------------------------------


def chunk_pieces(chunks: pd.DataFrame) -> list[list[tuple[int, int]]]:
    """The character ranges each chunk covers in its document: ``metadata["spans"]`` when a
    chunk joins several pieces of its document, else ``[(start, end)]``."""
    out = []
    for s, e, meta in zip(chunks["start"], chunks["end"], chunks["metadata"]):
        spans = json.loads(meta).get("spans") if meta and '"spans"' in meta else None
        out.append([(int(a), int(b)) for a, b in spans] if spans else [(int(s), int(e))])
    return out


def overlaps(pieces: Sequence[tuple[int, int]], start: int, end: int) -> bool:
    """Whether any piece ``[a, b)`` shares at least one character with ``[start, end)``."""
    return any(a < end and start < b for a, b in pieces)


def span_hits(chunks: pd.DataFrame, hits: np.ndarray, question_ids: Sequence[str], gold: pd.DataFrame) -> pd.DataFrame:
    """Retrieval precision, recall and F1 of each question's retrieved chunks against its gold spans.

    ``hits``: row positions in ``chunks`` per question, best first, padded with -1 (what
    ``retrieval.dense.search`` returns); ``gold``: ``question_id, doc_id, start, end``. A
    retrieved chunk is a true positive when it comes from the document of one of the question's
    gold spans and one of its pieces (``chunk_pieces``) overlaps that span by at least one
    character. Precision: true positives / chunks retrieved (0 when none); recall: the share
    of the question's gold spans that at least one retrieved chunk overlaps; F1 of the two
    (0 when both are 0). A question without gold spans gets recall NaN.
    """
    if len(hits) != len(question_ids):
        raise ValueError(f"one row of hits per question: {len(hits)} rows, {len(question_ids)} questions")
    pieces = chunk_pieces(chunks)
    docs = chunks["doc_id"].astype(str).to_numpy()
    spans: dict[str, list[tuple[str, int, int]]] = {}
    for q, d, s, e in zip(gold["question_id"].astype(str), gold["doc_id"].astype(str), gold["start"], gold["end"]):
        spans.setdefault(q, []).append((d, int(s), int(e)))
    rows = []
    for q, row in zip(question_ids, hits):
        got = [int(j) for j in row if j >= 0]
        g = spans.get(str(q), [])
        judged = [[docs[j] == d and overlaps(pieces[j], s, e) for d, s, e in g] for j in got]
        tp = sum(any(m) for m in judged)
        found = sum(any(m[i] for m in judged) for i in range(len(g)))
        p = tp / len(got) if got else 0.0
        r = found / len(g) if g else float("nan")
        f1 = 2 * p * r / (p + r) if p + r > 0 else 0.0
        rows.append(
            {
                "question_id": str(q),
                "retrieved": len(got),
                "tp": tp,
                "gold": len(g),
                "found": found,
                "precision": p,
                "recall": r,
                "f1": f1,
            }
        )
    return pd.DataFrame(rows, columns=["question_id", "retrieved", "tp", "gold", "found", "precision", "recall", "f1"])
