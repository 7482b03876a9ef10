"""Combining runs: reciprocal-rank fusion, and chunk hits mapped to their documents."""

from __future__ import annotations

from typing import Mapping, Sequence

Run = dict[str, list[tuple[str, float]]]  # query id -> (id, score), best first

RRF_K = 60  # Cormack et al. (2009): k = 60 damps the weight of the very top ranks
AGGREGATIONS = ("max", "sum")


def rrf(runs: Sequence[Run], k: int = RRF_K, depth: int | None = None) -> Run:
    """Reciprocal-rank fusion: ``score(d) = sum over runs of 1 / (k + rank(d))``, ranks from 1.

    Only ranks count, so runs on different scales (BM25, cosine) fuse without
    normalisation. ``depth`` cuts the fused run (None: everything any run returned).
    Ties are broken by id, so the result does not depend on dict order.
    """
    if k < 0:
        raise ValueError(f"RRF k must be >= 0, got {k}")
    fused: Run = {}
    for q in sorted({q for run in runs for q in run}):
        score: dict[str, float] = {}
        for run in runs:
            for rank, (d, _) in enumerate(run.get(q, []), 1):
                score[d] = score.get(d, 0.0) + 1.0 / (k + rank)
        ranked = sorted(score.items(), key=lambda x: (-x[1], x[0]))
        fused[q] = ranked[:depth] if depth is not None else ranked
    return fused


def to_documents(run: Run, doc_of: Mapping[str, str], how: str = "max", depth: int | None = None) -> Run:
    """A run over chunks as a run over their documents.

    ``max``: a document scores as its best chunk (for a run sorted by score this is its
    first hit, as in the late-chunking study); ``sum``: the sum of its chunks' scores
    (rewards documents with many matching chunks; meaningful for non-negative scores).
    """
    if how not in AGGREGATIONS:
        raise ValueError(f"chunk-to-document aggregation must be one of {', '.join(AGGREGATIONS)}, got {how!r}")
    out: Run = {}
    for q, hits in run.items():
        score: dict[str, float] = {}
        for c, s in hits:
            d = doc_of[c]
            if how == "max":
                score[d] = max(score.get(d, float("-inf")), s)
            else:
                score[d] = score.get(d, 0.0) + s
        ranked = sorted(score.items(), key=lambda x: (-x[1], x[0]))
        out[q] = ranked[:depth] if depth is not None else ranked
    return out
