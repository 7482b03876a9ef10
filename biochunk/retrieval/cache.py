"""Embeddings cached on disk per text: the same model never embeds the same text twice.

Embedding is the slow step of dense retrieval on a CPU (SciFact's 5,183 documents take
minutes), while a vector depends only on the text and the encoder's ``identity()``: the
model, its revision (a hub commit, or the hash of the model folder), the dtype and the kind
of device, and on a CPU the float kernels the processor runs (``float_pin``: its vendor and
MKL's code branch, ``biochunk.numerics``). Vectors are stored in shards under
``<cache>/<identity key>/`` (with the identity in ``identity.json`` there), keyed by a hash
of each text, so chunk methods that produce the same texts (a short passage is its own chunk
under most methods) share them, and a changed text, model, revision, dtype, device or float
pin can never return a stale vector: float16 vectors made on a GPU are never read back by a
float32 CPU run, nor an Intel machine's AVX2 vectors by an AMD one (their last bits differ,
docs/reproducibility.md). Because the key holds everything that decides a vector's bits, a
hit returns what embedding would, and the folder stays out of DVC like DVC's own cache (no
dvc.lock hashes a cache): delete it at any time; the next run re-embeds.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import time
from pathlib import Path
from typing import Sequence

import numpy as np

from biochunk import numerics
from biochunk.embedding import Encoder, EncoderWrapper
from biochunk.io import atomic_path

log = logging.getLogger(__name__)


def _key(text: str) -> bytes:
    return hashlib.sha1(text.encode("utf-8")).digest()


def identity_key(identity: dict[str, str]) -> str:
    """The cache folder's name for an encoder's ``identity()``: every field, hashed."""
    return hashlib.sha256(json.dumps(identity, sort_keys=True).encode()).hexdigest()[:16]


def float_pin() -> dict[str, str]:
    """The processor's vendor and MKL's code branch in effect (``MKL_CBWR``, set by
    ``biochunk.numerics`` unless exported): what rounds a CPU encoder's last bits."""
    return {"cpu_vendor": numerics.cpu_vendor(), "mkl_cbwr": os.environ.get("MKL_CBWR", "")}


def cache_identity(encoder: Encoder) -> dict[str, str]:
    """What a cached vector's bits depend on: the encoder's ``identity()`` and the float pin."""
    return {**encoder.identity(), **float_pin()}


def _model_dir(cache_dir: Path, identity: dict[str, str]) -> Path:
    return cache_dir / identity_key(identity)


def _load(folder: Path) -> dict[bytes, np.ndarray]:
    store: dict[bytes, np.ndarray] = {}
    for shard in sorted(folder.glob("*.npz")):
        with np.load(shard) as z:
            for k, v in zip(z["keys"], z["vectors"]):
                store[bytes(k)] = v
    return store


# Shards already read in this process, per folder: many small calls (a chunker embeds one
# document at a time) must not re-read the whole cache each time.
_STORES: dict[Path, dict[bytes, np.ndarray]] = {}


def encode_cached(encoder: Encoder, texts: Sequence[str], cache_dir: str | Path | None, progress: bool = True) -> np.ndarray:
    """``encoder.encode(texts)``, reusing and extending the cache in ``cache_dir`` (None: no cache)."""
    if cache_dir is None or len(texts) == 0:
        return encoder.encode(texts, progress=progress)
    identity = cache_identity(encoder)
    folder = _model_dir(Path(cache_dir), identity).resolve()
    if folder not in _STORES:
        _STORES[folder] = _load(folder) if folder.exists() else {}
    store = _STORES[folder]
    keys = [_key(t) for t in texts]
    missing: dict[bytes, str] = {}
    for k, t in zip(keys, texts):
        if k not in store:
            missing.setdefault(k, t)
    if len(texts) > 1000:
        log.info("embeddings: %d texts, %d cached, %d to embed", len(texts), len(texts) - len(missing), len(missing))
    if missing:
        vecs = encoder.encode(list(missing.values()), progress=progress)
        new_keys = np.frombuffer(b"".join(missing), dtype=np.uint8).reshape(len(missing), 20)
        if not (folder / "identity.json").exists():  # for whoever looks in the folder; never read
            with atomic_path(folder / "identity.json") as tmp:
                Path(tmp).write_text(json.dumps(identity, indent=1, sort_keys=True) + "\n", encoding="utf-8")
        with atomic_path(folder / f"{time.time_ns()}.npz") as tmp:
            with open(tmp, "wb") as f:
                np.savez(f, keys=new_keys, vectors=vecs)
        store.update(zip(missing, vecs))
    return np.stack([store[k] for k in keys]).astype(np.float32)


class CachedEncoder(EncoderWrapper):
    """An ``Encoder`` whose memory is the on-disk cache in ``cache_dir`` (None: none): what one
    run embeds, the next run (another chunk method, another experiment) reads back."""

    def __init__(self, inner: Encoder, cache_dir: str | Path | None):
        super().__init__(inner)
        self.cache_dir = cache_dir

    def encode(self, texts: Sequence[str], progress: bool = False) -> np.ndarray:
        return encode_cached(self.inner, texts, self.cache_dir, progress)
