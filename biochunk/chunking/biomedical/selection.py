"""Choosing chunks from a retrieved pool: cosine order, with a slot kept for a proposition.

Source: the selection rule of "Configurable Semantic Chunking for Biomedical Information
Extraction in RAG" (issue 4). Pure: arrays in, an order of indices out. The rank stage
applies it to the ``rank.top_n`` chunks most similar to the query and passes the first
``rank.top_k`` on to the chunk scorer (docs/hybrid.md, "Selection").
"""

from __future__ import annotations

from typing import Sequence

import numpy as np

SELECTIONS = ("bias", "mixed", "cosine")  # rank.selection
MIXED_COSINE = 0.7  # ranking "mixed": 0.7 * cosine + 0.3 * structural
TOP_N = 5  # ranking "bias": a proposition among the N most similar may take slot 2


def select(
    similarities: Sequence[float],
    kinds: Sequence[str],
    priorities: Sequence[float],
    tiers: Sequence[int | None],
    ranking: str = "bias",
    top_n: int = TOP_N,
    k: int | None = None,
    structural: Sequence[float] | None = None,
) -> list[int]:
    """Indices of the pool in the order they are given to the generator, the first ``k``.

    - ``bias``: slot 1 is the most similar chunk; slot 2 the proposition with the highest
      priority among the ``top_n`` most similar (ties: better tier, i.e. lower tier number,
      then similarity), or the second most similar when none is there; the rest follow by
      similarity.
    - ``mixed``: by ``0.7 * similarity + 0.3 * structural``. ``structural`` is the chunks'
      score in [0, 1] (the hybrid chunker's ``metadata["structural"]``); without it,
      priorities divided by their maximum.
    - ``cosine``: by similarity alone (the baseline).

    Ties keep pool order, so the result is deterministic.
    """
    n = len(similarities)
    for name, arr in (("kinds", kinds), ("priorities", priorities), ("tiers", tiers)):
        if len(arr) != n:
            raise ValueError(f"select: {name} has {len(arr)} entries, similarities {n}; give one per pool chunk")
    if structural is not None and len(structural) != n:
        raise ValueError(f"select: structural has {len(structural)} entries, similarities {n}")
    if ranking not in SELECTIONS:
        raise ValueError(f"rank.selection must be one of {', '.join(SELECTIONS)}, got {ranking!r}")
    if top_n < 1:
        raise ValueError(f"rank.top_n must be >= 1, got {top_n}")
    if k is not None and k < 1:
        raise ValueError(f"select: k must be >= 1 or None, got {k}")
    sim = np.asarray(similarities, dtype=np.float64)
    if ranking == "mixed":
        sim = MIXED_COSINE * sim + (1 - MIXED_COSINE) * _structural(priorities, structural)
    order = sorted(range(n), key=lambda i: (-sim[i], i))
    if ranking == "bias" and n > 1:
        candidates = [i for i in order[1:top_n] if kinds[i] == "proposition"]
        if candidates:
            best = min(candidates, key=lambda i: (-priorities[i], _tier_rank(tiers[i]), order.index(i)))
            order.remove(best)
            order.insert(1, best)
    return order if k is None else order[:k]


def _tier_rank(tier: int | None) -> float:
    return float("inf") if tier is None else tier


def _structural(priorities: Sequence[float], structural: Sequence[float] | None) -> np.ndarray:
    if structural is not None:
        s = np.asarray(structural, dtype=np.float64)
        if s.size and (s.min() < 0 or s.max() > 1):
            raise ValueError(f"select: structural scores must lie in [0, 1], got [{s.min()}, {s.max()}]")
        return s
    p = np.asarray(priorities, dtype=np.float64)
    top = p.max() if p.size else 0.0
    return p / top if top > 0 else np.zeros_like(p)
