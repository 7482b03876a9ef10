"""Triple-extraction metrics as BioMedRAG scores them, and retrieval hit rates."""

from __future__ import annotations

from typing import Callable, Iterable, Mapping, Sequence

import numpy as np

from biochunk.corpus import Triple


def _norm(t: Triple) -> Triple:
    return (t[0].strip().lower(), t[1].strip().lower(), t[2].strip().lower())


def prf(tp: float, n_pred: float, n_gold: float) -> dict[str, float]:
    p = tp / n_pred if n_pred else 0.0
    r = tp / n_gold if n_gold else 0.0
    f = 2 * p * r / (p + r) if p + r else 0.0
    return {"precision": p, "recall": r, "f1": f}


def counts(gold: Mapping[str, Iterable[Triple]], pred: Mapping[str, Iterable[Triple]], part: slice | None = None) -> np.ndarray:
    """Per-input (tp, n_pred, n_gold) over exact lower-cased triples, or one part of them.

    ``part`` selects head (slice(0, 1)), relation (slice(1, 2)) or tail (slice(2, 3)).
    Returned per input so the bootstrap can resample inputs.
    """
    rows = []
    for key, g in gold.items():
        gs = {_norm(t)[part] if part else _norm(t) for t in g}
        ps = {_norm(t)[part] if part else _norm(t) for t in pred.get(key, ())}
        rows.append((len(gs & ps), len(ps), len(gs)))
    return np.array(rows, dtype=np.float64).reshape(-1, 3)


def micro(c: np.ndarray) -> dict[str, float]:
    tp, n_pred, n_gold = c.sum(axis=0) if len(c) else (0.0, 0.0, 0.0)
    return prf(tp, n_pred, n_gold)


PARTS = {"triple": None, "head": slice(0, 1), "relation": slice(1, 2), "tail": slice(2, 3)}


def triple_metrics(gold: Mapping[str, Sequence[Triple]], pred: Mapping[str, Sequence[Triple]]) -> dict[str, dict[str, float]]:
    return {name: micro(counts(gold, pred, part)) for name, part in PARTS.items()}


def hit_at_k(ranked: Sequence[Sequence[bool]], k: int) -> np.ndarray:
    """Per input: 1.0 when any of its first ``k`` candidates satisfies the predicate."""
    return np.array([float(any(r[:k])) for r in ranked])


def ranked_flags(ranked_chunks: Sequence[Sequence[int]], flag: Callable[[int, int], bool]) -> list[list[bool]]:
    """Apply ``flag(input_index, chunk_index)`` along each input's ranked list."""
    return [[flag(i, c) for c in chunks] for i, chunks in enumerate(ranked_chunks)]
