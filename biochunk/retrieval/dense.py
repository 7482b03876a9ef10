"""Dense retrieval over normalised embeddings with FAISS (inner product == cosine)."""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Sequence

import faiss
import numpy as np

from biochunk.io import atomic_path

log = logging.getLogger(__name__)


def build_index(vectors: np.ndarray) -> faiss.Index:
    index = faiss.IndexFlatIP(vectors.shape[1])
    index.add(np.ascontiguousarray(vectors, dtype=np.float32))
    return index


def save_index(index: faiss.Index, path: str | Path) -> None:
    with atomic_path(path) as tmp:
        faiss.write_index(index, str(tmp))


def load_index(path: str | Path, use_gpu: str = "auto") -> faiss.Index:
    index = faiss.read_index(str(path))
    # faiss-gpu exposes StandardGpuResources; the CPU wheel does not, so this falls back by itself.
    if use_gpu != "no" and hasattr(faiss, "StandardGpuResources") and faiss.get_num_gpus() > 0:
        log.info("moving the FAISS index to the GPU")
        index = faiss.index_cpu_to_gpu(faiss.StandardGpuResources(), 0, index)
    return index


def search(
    index: faiss.Index,
    queries: np.ndarray,
    k: int,
    exclude: Sequence[set[int]] | None = None,
) -> tuple[np.ndarray, np.ndarray]:
    """Top-``k`` (scores, ids) per query; ``exclude[i]`` holds ids query ``i`` may not get.

    Exclusion is how training inputs are ranked against a memory built from the
    training split itself (leave-one-out: a sentence must not retrieve its own chunks).
    Rows with fewer than ``k`` admissible hits are padded with id -1.
    """
    n = len(queries)
    if n == 0:
        return np.zeros((0, k), np.float32), np.zeros((0, k), np.int64)
    extra = max((len(e) for e in exclude), default=0) if exclude else 0
    depth = min(k + extra, index.ntotal)
    scores, ids = index.search(np.ascontiguousarray(queries, dtype=np.float32), depth)
    out_s = np.full((n, k), -np.inf, np.float32)
    out_i = np.full((n, k), -1, np.int64)
    for r in range(n):
        keep = [c for c in range(depth) if ids[r, c] >= 0 and not (exclude and ids[r, c] in exclude[r])][:k]
        out_s[r, : len(keep)] = scores[r, keep]
        out_i[r, : len(keep)] = ids[r, keep]
    return out_s, out_i
