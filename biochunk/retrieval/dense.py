"""Dense retrieval over normalised embeddings with FAISS (inner product == cosine)."""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Sequence

import faiss
import numpy as np

from biochunk.errors import UserError
from biochunk.io import atomic_path

log = logging.getLogger(__name__)


INDEX_KINDS = ("flat", "hnsw")


def build_index(vectors: np.ndarray, kind: str = "flat", hnsw_m: int = 32, ef_search: int = 128) -> faiss.Index:
    """An inner-product index over ``vectors``: exact (``flat``) or approximate (``hnsw``).

    HNSW trades a little recall for sub-linear search on large memories; ``ef_search``
    is its search breadth (higher: closer to exact, slower).
    """
    if kind not in INDEX_KINDS:
        raise ValueError(f"index kind must be one of {', '.join(INDEX_KINDS)}, got {kind!r}")
    dim = vectors.shape[1]
    if kind == "flat":
        index = faiss.IndexFlatIP(dim)
    else:
        index = faiss.IndexHNSWFlat(dim, hnsw_m, faiss.METRIC_INNER_PRODUCT)
        index.hnsw.efSearch = ef_search
    index.add(np.ascontiguousarray(vectors, dtype=np.float32))
    return index


def to_device(index: faiss.Index, use_gpu: str = "auto") -> faiss.Index:
    """Move a flat index to the GPU when faiss-gpu and a CUDA device are present.

    ``use_gpu``: auto (when available), yes (required), no. HNSW stays on the CPU:
    faiss-gpu has no HNSW implementation.
    """
    available = hasattr(faiss, "StandardGpuResources") and faiss.get_num_gpus() > 0
    if use_gpu == "yes" and not available:
        raise UserError("rank.use_gpu is yes but faiss-gpu with a CUDA device is not available; set it to auto or no")
    if use_gpu == "no" or not available or isinstance(index, faiss.IndexHNSW):
        return index
    log.info("moving the FAISS index to the GPU")
    return faiss.index_cpu_to_gpu(faiss.StandardGpuResources(), 0, index)


def save_index(index: faiss.Index, path: str | Path) -> None:
    with atomic_path(path) as tmp:
        faiss.write_index(index, str(tmp))


def load_index(path: str | Path, use_gpu: str = "auto") -> faiss.Index:
    # faiss-gpu exposes StandardGpuResources; the CPU wheel does not, so this falls back by itself.
    return to_device(faiss.read_index(str(path)), use_gpu)


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


def dense_run(
    doc_vecs: np.ndarray,
    doc_ids: Sequence[str],
    query_vecs: np.ndarray,
    qids: Sequence[str],
    k: int,
    kind: str = "flat",
    use_gpu: str = "auto",
) -> dict[str, list[tuple[str, float]]]:
    """Top-``k`` (id, cosine) per query id over normalised vectors, best first."""
    index = to_device(build_index(doc_vecs, kind), use_gpu)
    scores, ids = search(index, query_vecs, min(k, len(doc_ids)))
    return {
        q: [(doc_ids[j], float(s)) for j, s in zip(ids[r], scores[r]) if j >= 0]
        for r, q in enumerate(qids)
    }
