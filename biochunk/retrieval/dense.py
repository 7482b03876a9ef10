"""Dense retrieval over normalised embeddings (inner product == cosine).

Three backends behind one interface (``index.search(queries, k) -> (scores, ids)``,
``index.ntotal``), chosen by ``use_gpu`` (auto | yes | no) in ``to_device``:

- faiss-gpu, when it is installed and sees a CUDA device (flat indexes);
- ``TorchIndex`` on CUDA, when faiss-gpu is absent: exact top-k by matrix product in
  bounded blocks, which is a fine exact search for up to millions of vectors on one GPU;
- faiss-cpu otherwise (and for HNSW, which faiss-gpu lacks).

faiss is imported lazily: where it is not installed (a GPU box with only torch) flat
search runs on ``TorchIndex`` on the CPU or GPU; only HNSW and the index files of the
embed stage need faiss.
"""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any, Sequence

import numpy as np

from biochunk.errors import UserError
from biochunk.io import atomic_path
from biochunk.vectors import embedding_texts

log = logging.getLogger(__name__)


INDEX_KINDS = ("flat", "hnsw")
USE_GPU = ("auto", "yes", "no")
# Scores held at once while searching a TorchIndex: 2**26 float32 = 256 MiB per block.
BLOCK_SCORES = 1 << 26


def _faiss() -> Any | None:
    try:
        import faiss
    except ImportError:
        return None
    return faiss


def _need_faiss(what: str) -> Any:
    faiss = _faiss()
    if faiss is None:
        raise UserError(f"{what} needs faiss; install faiss-cpu (or faiss-gpu), or use a flat index without files")
    return faiss


class TorchIndex:
    """Exact inner-product search with torch on any device; the FAISS flat index's interface.

    Queries are scored against the vectors in blocks of at most ``block_scores`` scores,
    each block's top-k merged into a running top-k, so memory stays bounded whatever the
    number of queries and vectors. Scores are computed in float32 like ``IndexFlatIP``.
    """

    def __init__(self, vectors: np.ndarray, device: str = "cpu", block_scores: int = BLOCK_SCORES):
        import torch

        if block_scores < 1:
            raise ValueError(f"block_scores must be >= 1, got {block_scores}")
        vecs = np.ascontiguousarray(vectors, dtype=np.float32)
        if vecs.ndim != 2:
            raise ValueError(f"vectors must be a 2-d array, got shape {vecs.shape}")
        self.xb = torch.from_numpy(vecs).to(device)
        self.device = str(self.xb.device)
        self.block_scores = block_scores

    @property
    def ntotal(self) -> int:
        return int(self.xb.shape[0])

    @property
    def d(self) -> int:
        return int(self.xb.shape[1])

    def vectors(self) -> np.ndarray:
        return self.xb.cpu().numpy()

    def to(self, device: str) -> TorchIndex:
        return TorchIndex(self.vectors(), device, self.block_scores)

    def search(self, queries: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
        """(scores, ids), each (n, k), best first; like FAISS, missing hits are id -1."""
        import torch

        q_all = np.ascontiguousarray(queries, dtype=np.float32)
        n = len(q_all)
        out_s = np.full((n, k), -np.inf, np.float32)
        out_i = np.full((n, k), -1, np.int64)
        kk = min(k, self.ntotal)
        if n == 0 or kk == 0:
            return out_s, out_i
        # Square-ish blocks: up to 4,096 queries, then as many vectors as the budget allows.
        qb = max(1, min(n, 4096, self.block_scores // max(kk, 1)))
        db = max(kk, self.block_scores // qb)
        with torch.inference_mode():
            for qs in range(0, n, qb):
                q = torch.from_numpy(q_all[qs : qs + qb]).to(self.device)
                best_s = best_i = None
                for ds in range(0, self.ntotal, db):
                    scores = q @ self.xb[ds : ds + db].T
                    s, i = torch.topk(scores, min(kk, scores.shape[1]), dim=1)
                    i = i + ds
                    if best_s is not None:
                        s, pick = torch.topk(torch.cat([best_s, s], 1), kk, dim=1)
                        i = torch.gather(torch.cat([best_i, i], 1), 1, pick)
                    best_s, best_i = s, i
                out_s[qs : qs + len(q), :kk] = best_s.cpu().numpy()
                out_i[qs : qs + len(q), :kk] = best_i.cpu().numpy()
        return out_s, out_i


def build_index(vectors: np.ndarray, kind: str = "flat", hnsw_m: int = 32, ef_search: int = 128) -> Any:
    """An inner-product index over ``vectors`` on the CPU: exact (``flat``) or approximate (``hnsw``).

    HNSW trades a little recall for sub-linear search on large memories; ``ef_search``
    is its search breadth (higher: closer to exact, slower). Without faiss, a flat index
    is a ``TorchIndex``.
    """
    if kind not in INDEX_KINDS:
        raise ValueError(f"index kind must be one of {', '.join(INDEX_KINDS)}, got {kind!r}")
    vecs = np.ascontiguousarray(vectors, dtype=np.float32)
    faiss = _faiss()
    if faiss is None:
        if kind == "hnsw":
            _need_faiss("an hnsw index")
        return TorchIndex(vecs)
    dim = vecs.shape[1]
    if kind == "flat":
        index = faiss.IndexFlatIP(dim)
    else:
        index = faiss.IndexHNSWFlat(dim, hnsw_m, faiss.METRIC_INNER_PRODUCT)
        index.hnsw.efSearch = ef_search
    index.add(vecs)
    return index


def gpu_backend(use_gpu: str = "auto") -> str | None:
    """The GPU search backend ``use_gpu`` selects here: ``faiss-gpu``, ``torch-cuda`` or None (CPU)."""
    if use_gpu not in USE_GPU:
        raise ValueError(f"use_gpu must be one of {', '.join(USE_GPU)}, got {use_gpu!r}")
    if use_gpu == "no":
        return None
    faiss = _faiss()
    if faiss is not None and hasattr(faiss, "StandardGpuResources") and faiss.get_num_gpus() > 0:
        return "faiss-gpu"
    import torch

    if torch.cuda.is_available():
        return "torch-cuda"
    if use_gpu == "yes":
        raise UserError("use_gpu is yes but there is no CUDA device (neither faiss-gpu nor torch sees one); set it to auto or no")
    return None


def _is_hnsw(index: Any) -> bool:
    faiss = _faiss()
    return faiss is not None and isinstance(index, faiss.IndexHNSW)


def _flat_vectors(index: Any) -> np.ndarray:
    if isinstance(index, TorchIndex):
        return index.vectors()
    return index.reconstruct_n(0, index.ntotal)


def to_device(index: Any, use_gpu: str = "auto") -> Any:
    """A flat index on the GPU backend ``use_gpu`` selects (``gpu_backend``), else unchanged.

    ``use_gpu``: auto (when available), yes (required), no. HNSW stays on the CPU:
    faiss-gpu has no HNSW implementation, and exact search is not HNSW's contract.
    """
    backend = gpu_backend(use_gpu)
    if backend is None or _is_hnsw(index):
        return index
    if backend == "faiss-gpu" and not isinstance(index, TorchIndex):
        faiss = _faiss()
        log.info("dense search on faiss-gpu")
        return faiss.index_cpu_to_gpu(faiss.StandardGpuResources(), 0, index)
    if isinstance(index, TorchIndex) and index.device.startswith("cuda"):
        return index
    log.info("dense search on torch (CUDA, exact top-k)")
    return TorchIndex(_flat_vectors(index), "cuda")


def backend_of(index: Any) -> str:
    """Where ``index`` searches: torch-cuda, torch-cpu, faiss-gpu or faiss-cpu (for reports)."""
    if isinstance(index, TorchIndex):
        return f"torch-{index.device.split(':')[0]}"
    return "faiss-gpu" if "Gpu" in type(index).__name__ else "faiss-cpu"


def save_index(index: Any, path: str | Path) -> None:
    faiss = _need_faiss("writing an index file")
    if isinstance(index, TorchIndex):
        flat = faiss.IndexFlatIP(index.d)
        flat.add(index.vectors())
        index = flat
    with atomic_path(path) as tmp:
        faiss.write_index(index, str(tmp))


def load_index(path: str | Path, use_gpu: str = "auto") -> Any:
    return to_device(_need_faiss("reading an index file").read_index(str(path)), use_gpu)


def search(
    index: Any,
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
    if not extra:
        # Nothing to filter: missing hits (-1) already sit at the end of each row. Copying whole
        # arrays keeps a GPU search from waiting on a Python loop over every query.
        miss = ids < 0
        out_s[:, :depth] = np.where(miss, -np.inf, scores)
        out_i[:, :depth] = np.where(miss, -1, ids)
        return out_s, out_i
    for r in range(n):
        keep = [c for c in range(depth) if ids[r, c] >= 0 and not (exclude and ids[r, c] in exclude[r])][:k]
        out_s[r, : len(keep)] = scores[r, keep]
        out_i[r, : len(keep)] = ids[r, keep]
    return out_s, out_i


def embed_chunks(encoder: Any, chunks: Any) -> np.ndarray:
    """Normalised vectors of a CHUNKS-like table (``text``, ``metadata``), each chunk embedded
    by the project's one rule (``vectors.embedding_text``: a micro-header first, propositions
    for their chunk). The embed stage writes the same vectors for the triple branch."""
    return encoder.encode(embedding_texts(chunks), progress=True)


def embed_search(
    encoder: Any,
    chunks: Any,
    query_vecs: np.ndarray,
    k: int,
    exclude: Sequence[set[int]] | None = None,
    kind: str = "flat",
    use_gpu: str = "auto",
) -> tuple[np.ndarray, np.ndarray]:
    """The one dense search over a chunk table that no stage has embedded yet (QA contexts,
    classification evidence, reshaping passages): ``embed_chunks``, an index, ``search``.
    Returns (scores, row positions in ``chunks``), padded with -1 as ``search`` does."""
    if len(chunks) == 0:
        return np.zeros((len(query_vecs), 0), np.float32), np.zeros((len(query_vecs), 0), np.int64)
    index = to_device(build_index(embed_chunks(encoder, chunks), kind), use_gpu)
    return search(index, query_vecs, min(k, len(chunks)), exclude)


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
