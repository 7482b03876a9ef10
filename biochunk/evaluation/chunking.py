"""Chunking methods measured on whole documents: sizes, speed, and gold answers kept whole.

What ``chunk_docs`` reports per method run (``chunking.runs.run_methods``): how many
chunks, their size distribution in the method's own tokens (``chunk.counter``; semchunk
always counts the embedder's), in the embedder's tokens (one scale for every method) and
in characters, the time taken, and for datasets with extractive answers (COVID-QA) the
share of gold answers that no single chunk holds whole ("cut answers"): a retriever can
then return at best part of the answer. Below: retrieved chunks judged against gold spans.
Every judgement of a gold span against a chunk's offsets (cut answers, ``gold_in_hits``,
``span_hits``) is ``judge``'s: one rule for "holds whole" and "overlaps".
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


# -- gold spans against chunk spans: the one judgement ---------------------------------------
#
# ``judge`` is the rule; ``cut_answers``, ``gold_in_hits`` and ``span_hits`` all apply it
# (``_judge_runs`` is its comparison, elementwise, on runs that ``merge_pieces`` made).


def chunk_pieces(chunks: pd.DataFrame) -> list[list[tuple[Any, Any]]]:
    """The character ranges each chunk covers in its document: ``metadata["spans"]`` when a
    chunk joins several pieces of its document (``chunking.cluster.whole_clusters``), else
    ``[(start, end)]``. The ``metadata`` column is optional (absent or not a string: no spans);
    offsets come back as ints, a non-integral one (``inf``: a whole document) as a float."""
    meta = chunks["metadata"] if "metadata" in chunks else [None] * len(chunks)
    out = []
    for s, e, m in zip(chunks["start"], chunks["end"], meta):
        spans = json.loads(m).get("spans") if isinstance(m, str) and '"spans"' in m else None
        out.append([(int(a), int(b)) for a, b in spans] if spans else [(_offset(s), _offset(e))])
    return out


def _offset(x: Any) -> Any:
    return int(x) if float(x).is_integer() else float(x)


def merge_pieces(pieces: Sequence[tuple[Any, Any]]) -> list[tuple[Any, Any]]:
    """A chunk's runs: its pieces in order, those that overlap or touch (``b == a'``) merged
    into one ``[a, b)``. The runs cover exactly the pieces' characters and never touch."""
    runs: list[tuple[Any, Any]] = []
    for a, b in sorted(pieces):
        if runs and a <= runs[-1][1]:
            runs[-1] = (runs[-1][0], max(runs[-1][1], b))
        else:
            runs.append((a, b))
    return runs


def _judge_runs(a: Any, b: Any, start: Any, end: Any) -> tuple[Any, Any]:
    """``judge``'s comparison of one run ``[a, b)`` of a chunk with a gold span ``[start, end)``:
    ``(whole, overlaps)``. Elementwise on numpy arrays (broadcast), plain bools on scalars."""
    whole = (a <= start) & (end <= b)
    return whole, ((a < end) & (start < b)) | whole


def judge(pieces: Sequence[tuple[Any, Any]], start: Any, end: Any) -> tuple[bool, bool]:
    """Whether a chunk, given as its pieces ``[a, b)`` of one document (``chunk_pieces``; a
    chunk without ``metadata["spans"]`` is the one piece ``[start, end)``), holds the gold span
    ``[start, end)`` of the same document whole, and whether it overlaps it: ``(whole, overlaps)``.

    The rule, the one every judgement of gold spans against chunk spans here applies:

    - whole: every character of the gold span lies in some piece of the chunk (in the union
      of its pieces, not necessarily in one piece). Equivalently: inside one of the chunk's
      runs (``merge_pieces``: the pieces with touching or overlapping ones merged).
    - overlaps: the gold span shares at least one character with some piece.
    - whole implies overlaps. Empty spans have no character and are judged by position, with
      the comparisons every chunk was judged by before (no chunker writes an empty chunk and
      no gold span is empty, so these are edge cases only): an empty gold span ``[p, p)`` is
      whole, and overlaps, when ``a <= p <= b`` for some piece; an empty piece ``[p, p)``
      overlaps a gold span with ``start < p < end``.

    Why the union, and not the hull ``[start, end)`` nor a single piece: a chunk shows its
    reader the characters of its pieces and no others. The hull of a chunk that joins
    non-adjacent pieces (a whole cluster: sentences from across the article) spans text the
    chunk does not show (a whole cluster's hull can be the whole article), so a gold span
    that crosses a gap between pieces is not held: the gap's text is missing from the chunk.
    One piece would make the judgement depend on how the pieces were written down:
    ``[(0, 5), (5, 10)]`` and ``[(0, 10)]`` show the same characters, and a gold span across
    position 5 is in the chunk either way, only with ``PIECE_SEPARATOR`` between its halves
    (whitespace, which the text judgement ``qa.context_holds`` ignores as well). Offsets know
    nothing of the text: a gold span across a gap of whitespace only is not whole, as it is not
    for a contiguous chunk that ends before that whitespace. For a chunk of one piece (every
    chunk without ``metadata["spans"]``) union, hull and piece coincide: whole is
    ``a <= start and end <= b``, overlaps ``a < end and start < b`` (or whole).
    """
    whole = overlap = False
    for a, b in merge_pieces(pieces):
        w, o = _judge_runs(a, b, start, end)
        whole, overlap = whole or bool(w), overlap or bool(o)
    return whole, overlap


def overlaps(pieces: Sequence[tuple[Any, Any]], start: Any, end: Any) -> bool:
    """Whether the chunk of ``pieces`` overlaps ``[start, end)`` (``judge``'s second judgement)."""
    return judge(pieces, start, end)[1]


def chunk_runs(chunks: pd.DataFrame) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Every chunk's runs (``merge_pieces`` of ``chunk_pieces``), flat: ``(row, a, b)``, ``row``
    the chunk's position in ``chunks``, in row order. A chunk without spans is its one run
    ``[start, end)``, read straight from the columns (no per-row Python for those)."""
    starts, ends = chunks["start"].to_numpy(), chunks["end"].to_numpy()
    meta = chunks["metadata"] if "metadata" in chunks else ()
    joined = np.fromiter((isinstance(m, str) and '"spans"' in m for m in meta), dtype=bool, count=len(meta))
    if not joined.any():
        return np.arange(len(chunks)), starts, ends
    idx = np.flatnonzero(joined)
    runs = [(j, a, b) for j, p in zip(idx, chunk_pieces(chunks.iloc[idx])) for a, b in merge_pieces(p)]
    row = np.concatenate([np.flatnonzero(~joined), np.array([r[0] for r in runs], dtype=np.int64)])
    a = np.concatenate([starts[~joined], np.array([r[1] for r in runs])])
    b = np.concatenate([ends[~joined], np.array([r[2] for r in runs])])
    order = np.argsort(row, kind="stable")
    return row[order], a[order], b[order]


def cut_answers(chunks: pd.DataFrame, answers: pd.DataFrame) -> dict[str, float]:
    """Gold answers ``[start, end)`` that no chunk of their document holds whole (``judge``).

    ``answers``: ANSWERS rows of the chunked documents only; ``chunks``: ``doc_id, start, end``
    and optionally ``metadata`` (a chunk's pieces). An answer is whole when one run of one
    chunk holds it (``chunk_runs``: runs of different chunks are never merged). Per document,
    sorted by start: among the runs that start at or before the answer, the one reaching
    furthest decides (``judge``'s comparison on that run), O(n log n).
    """
    cut = 0
    row, a, b = chunk_runs(chunks)
    docs = chunks["doc_id"].to_numpy()[row]
    by_doc = pd.Series(docs).groupby(docs, sort=False).indices
    for doc_id, ans in answers.groupby("doc_id", sort=False):
        idx = by_doc.get(doc_id)
        if idx is None:  # a document without chunks (blank text) keeps no answer
            cut += len(ans)
            continue
        order = np.argsort(a[idx], kind="stable")
        starts, ends = a[idx][order], b[idx][order]
        reach = np.maximum.accumulate(ends)
        best = np.maximum.accumulate(np.where(ends == reach, np.arange(len(ends)), 0))  # a run that ends at `reach`
        s, e = ans["start"].to_numpy(), ans["end"].to_numpy()
        i = np.searchsorted(starts, s, side="right") - 1
        k = best[np.maximum(i, 0)]
        whole = (i >= 0) & _judge_runs(starts[k], ends[k], s, e)[0]
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
    """Per question: does a retrieved chunk hold a gold span whole, or overlap one (``judge``)?

    ``hits``: ``question_id, doc_id, start, end`` and optionally ``metadata``, one row per
    retrieved chunk (its span in its document, its pieces in ``metadata["spans"]`` when it
    joins several: ``chunk_pieces``; a question with no hit has no row and counts 0).
    ``gold``: ``question_id, doc_id, start, end``, any number of rows per question (COVID-QA:
    its answer; BioASQ: its gold snippet sentences). ``whole``: some retrieved chunk holds some
    gold span of the question whole, in the same document (the notion behind ``cut_answers``:
    an answer no chunk holds whole is cut); ``overlaps``: some retrieved chunk shares at least
    one character with one. Returns one row per question of ``gold`` with 0/1 columns
    ``whole`` and ``overlaps``.
    """
    cols = ["question_id", "doc_id", "start", "end"]
    row, a, b = chunk_runs(hits)
    runs = hits[["question_id", "doc_id"]].iloc[row].assign(start=a, end=b)  # one row per run of a hit
    m = gold[cols].merge(runs, on=["question_id", "doc_id"], how="left", suffixes=("", "_hit"))
    found = m["start_hit"].notna().to_numpy()
    s, e = m["start_hit"].fillna(0).to_numpy(), m["end_hit"].fillna(-1).to_numpy()
    whole, over = _judge_runs(s, e, m["start"].to_numpy(), m["end"].to_numpy())
    m["whole"], m["overlaps"] = (found & whole).astype(int), (found & over).astype(int)
    return m.groupby("question_id", sort=False)[["whole", "overlaps"]].max().reset_index()


# -- retrieved chunks judged against gold answer spans ------------------------------------


def span_hits(chunks: pd.DataFrame, hits: np.ndarray, question_ids: Sequence[str], gold: pd.DataFrame) -> pd.DataFrame:
    """Retrieval precision, recall and F1 of each question's retrieved chunks against its gold spans.

    ``hits``: row positions in ``chunks`` per question, best first, padded with -1 (what
    ``retrieval.dense.search`` returns); ``gold``: ``question_id, doc_id, start, end``. A
    retrieved chunk is a true positive when it comes from the document of one of the question's
    gold spans and overlaps that span (``judge``: one of its pieces, ``chunk_pieces``, shares at
    least one character with it). Precision: true positives / chunks retrieved (0 when none); recall: the share
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
        judged = [[docs[j] == d and judge(pieces[j], s, e)[1] for d, s, e in g] for j in got]
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
