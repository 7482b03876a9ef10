"""Rank the chunk memory for every input: a dense pool in selection order, leave-one-out for training inputs."""

from __future__ import annotations

import json
from typing import Callable, Sequence

import numpy as np
import pandas as pd

from biochunk.chunking.biomedical.selection import select
from biochunk.retrieval.dense import search

# (pool chunk indices in cosine order, their cosines) -> the pool positions, in selection order
Selector = Callable[[Sequence[int], Sequence[float]], list[int]]
QUERIES = ("sentence", "relation")  # rank.query
DIVERSITY_DEPTH = 4  # with rank.max_per_doc, chunks are searched 4x deeper to find other documents


def pool_selector(metadata: Sequence[str], selection: str, top_n: int) -> Selector | None:
    """The configurable-semantic-chunking selection over a retrieved pool (rank.selection).

    Applies when the chunks carry the hybrid chunker's metadata (``kind``, ``priority``,
    ``tier``, ``structural``); for any other chunk method the cosine order stands, since
    there is no proposition to favour and no structural score to mix in.
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
            ranking=selection,
            top_n=top_n,
            structural=[float(m.get("structural", 0.0)) for m in ms],
        )

    return selector


def relation_queries(
    input_ids: Sequence[str],
    sentence_vecs: np.ndarray,
    gold: dict[str, set[str]],
    relation_ids: Sequence[str],
    relation_vecs: np.ndarray,
) -> tuple[np.ndarray, int]:
    """Query vectors for ``rank.query: relation``: the mean of the input's gold relations'
    definition vectors, normalised. An oracle at test time (it reads the gold relation);
    an input with no defined gold relation keeps its sentence vector. Returns the vectors
    and how many inputs fell back.
    """
    pos = {r: i for i, r in enumerate(relation_ids)}
    out = sentence_vecs.astype(np.float32, copy=True)
    fell_back = 0
    for n, iid in enumerate(input_ids):
        rows = [pos[r] for r in sorted(gold.get(str(iid), ())) if r in pos]
        if not rows:
            fell_back += 1
            continue
        v = relation_vecs[rows].mean(axis=0)
        out[n] = v / max(float(np.linalg.norm(v)), 1e-12)
    return out, fell_back


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
    depth: int,
    selector: Selector | None = None,
    max_per_doc: int | None = None,
) -> pd.DataFrame:
    """Rankings rows (split, input_id, rank, chunk_id, score=cosine, ranker="dense") of each
    input's pool: its ``depth`` most similar chunks, in the ``selector``'s order.

    A training sentence's own chunks are excluded, since the memory is built from the
    training split: otherwise every training input would retrieve itself and the scorer
    and generator would learn from evidence they never see at test time. With
    ``max_per_doc``, the search goes ``DIVERSITY_DEPTH`` times deeper and at most that many
    chunks of one source document come before chunks of other documents (``cap_per_doc``).
    """
    by_doc: dict[str, set[int]] = {}
    for i, d in enumerate(chunk_docs):
        by_doc.setdefault(d, set()).add(i)
    exclude = [by_doc.get(i, set()) if s == "train" else set() for i, s in zip(inputs["id"], inputs["split"])]
    scores, ids = search(index, input_vecs, depth * (DIVERSITY_DEPTH if max_per_doc else 1), exclude)
    rows = []
    for r, (iid, split) in enumerate(zip(inputs["id"], inputs["split"])):
        keep = ids[r] >= 0
        pool, sims = ids[r][keep].tolist(), scores[r][keep].tolist()
        if max_per_doc is not None:
            order = cap_per_doc(list(range(len(pool))), [chunk_docs[c] for c in pool], max_per_doc)
            pool, sims = [pool[j] for j in order[:depth]], [sims[j] for j in order[:depth]]
        pool, sims = pool[:depth], sims[:depth]
        order = selector(pool, sims) if selector is not None and pool else list(range(len(pool)))
        for rank, j in enumerate(order, 1):
            rows.append((split, iid, rank, chunk_ids[pool[j]], float(sims[j]), "dense"))
    return pd.DataFrame(rows, columns=["split", "input_id", "rank", "chunk_id", "score", "ranker"])
