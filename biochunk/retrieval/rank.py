"""Rank the chunk memory for every input: dense top-k, leave-one-out for training inputs."""

from __future__ import annotations

import json
from typing import Callable, Sequence

import numpy as np
import pandas as pd

from biochunk.chunking.biomedical.selection import select
from biochunk.retrieval.dense import search

# (pool chunk indices in cosine order, their cosines) -> the pool positions to keep, in order
Selector = Callable[[Sequence[int], Sequence[float]], list[int]]


def pool_selector(metadata: Sequence[str], ranking: str, top_n: int, k: int) -> Selector | None:
    """The configurable-semantic-chunking selection over retrieved pool chunks.

    Applies when the chunks carry the hybrid chunker's metadata (``kind``, ``priority``,
    ``tier``, ``structural``); for any other chunk method the dense order stands.
    """
    meta = [json.loads(m or "{}") for m in metadata]
    if not any("kind" in m for m in meta):
        return None

    def selector(idx: Sequence[int], sims: Sequence[float]) -> list[int]:
        ms = [meta[i] for i in idx]
        return select(
            sims,
            [m.get("kind", "fixed") for m in ms],
            [float(m.get("priority", 0)) for m in ms],
            [m.get("tier") for m in ms],
            ranking=ranking,
            top_n=top_n,
            k=k,
            structural=[float(m.get("structural", 0.0)) for m in ms],
        )

    return selector


def cap_per_doc(order: Sequence[int], docs: Sequence[str], cap: int) -> list[int]:
    """``order`` with at most ``cap`` chunks per source document first, the overflow after.

    Overlapping windows of one sentence are near-duplicates in embedding space and crowd
    the top-k with one piece of evidence; moving the overflow behind keeps the order
    among what stays and never leaves the top-k short.
    """
    seen: dict[str, int] = {}
    kept, overflow = [], []
    for j in order:
        seen[docs[j]] = seen.get(docs[j], 0) + 1
        (kept if seen[docs[j]] <= cap else overflow).append(j)
    return kept + overflow


def rank_inputs(
    index,
    inputs: pd.DataFrame,
    input_vecs: np.ndarray,
    chunk_ids: list[str],
    chunk_docs: list[str],
    k: int,
    selector: Selector | None = None,
    depth: int | None = None,
    max_per_doc: int | None = None,
) -> pd.DataFrame:
    """Rankings rows (split, input_id, rank, chunk_id, score, ranker="dense").

    A training sentence's own chunks are excluded, since the memory is built from the
    training split: otherwise every training input would retrieve itself and the scorer
    and generator would learn from evidence they never see at test time. With a
    ``selector``, the ``depth`` most similar chunks form the pool it reorders; with
    ``max_per_doc``, at most that many chunks of one source document come before
    chunks of other documents (``cap_per_doc``).
    """
    by_doc: dict[str, set[int]] = {}
    for i, d in enumerate(chunk_docs):
        by_doc.setdefault(d, set()).add(i)
    exclude = [by_doc.get(i, set()) if s == "train" else set() for i, s in zip(inputs["id"], inputs["split"])]
    scores, ids = search(index, input_vecs, max(k, depth or k), exclude)
    rows = []
    for r, (iid, split) in enumerate(zip(inputs["id"], inputs["split"])):
        keep = ids[r] >= 0
        pool, sims = ids[r][keep].tolist(), scores[r][keep].tolist()
        order = selector(pool, sims) if selector is not None and pool else list(range(len(pool)))
        if max_per_doc is not None:
            order = cap_per_doc(order, [chunk_docs[c] for c in pool], max_per_doc)
        for rank, j in enumerate(order[:k], 1):
            rows.append((split, iid, rank, chunk_ids[pool[j]], float(sims[j]), "dense"))
    return pd.DataFrame(rows, columns=["split", "input_id", "rank", "chunk_id", "score", "ranker"])
