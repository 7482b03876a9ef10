"""One sentence encoder wrapper: batching, normalisation, device choice."""

from __future__ import annotations

import logging
from functools import cached_property
from typing import Sequence

import numpy as np

from biochunk.models import loading, offline_mode, resolve

log = logging.getLogger(__name__)


def pick_device(device: str = "auto") -> str:
    if device != "auto":
        return device
    import torch

    return "cuda" if torch.cuda.is_available() else "cpu"


class Encoder:
    """Normalised float32 sentence embeddings from a sentence-transformers model."""

    def __init__(self, model: str = "minilm", batch_size: int = 64, device: str = "auto", param: str = "embed.model"):
        self.model_name = model
        self.batch_size = batch_size
        self.device = device
        self.param = param

    @cached_property
    def model(self):  # loaded on first use: a chunker that never embeds never pays for it
        offline_mode()
        from sentence_transformers import SentenceTransformer

        path = resolve(self.model_name, self.param)
        log.info("loading encoder %s on %s", self.model_name, pick_device(self.device))
        with loading(self.model_name, self.param):
            return SentenceTransformer(path, device=pick_device(self.device))

    @property
    def dim(self) -> int:
        m = self.model
        # sentence-transformers 6 renamed the method; keep working with 5.x too.
        get = getattr(m, "get_embedding_dimension", None) or m.get_sentence_embedding_dimension
        return int(get())

    def encode(self, texts: Sequence[str], progress: bool = False) -> np.ndarray:
        if len(texts) == 0:
            return np.zeros((0, self.dim), dtype=np.float32)
        vecs = self.model.encode(
            list(texts),
            batch_size=self.batch_size,
            normalize_embeddings=True,
            convert_to_numpy=True,
            show_progress_bar=progress,
        )
        return np.ascontiguousarray(vecs, dtype=np.float32)


class MemoEncoder:
    """An ``Encoder`` that embeds each distinct text once across calls.

    For runs that embed the same units many times over (every breakpoint chunker embeds
    the same sentences; the ablation rungs share their fixed windows). Every other
    attribute (``model_name``, ``model``, ``dim``) is the wrapped encoder's.
    """

    def __init__(self, encoder: Encoder) -> None:
        self.encoder = encoder
        self.cache: dict[str, np.ndarray] = {}

    def __getattr__(self, name: str):
        return getattr(self.encoder, name)

    def encode(self, texts: Sequence[str], progress: bool = False) -> np.ndarray:
        new = sorted({t for t in texts if t not in self.cache})
        if new:
            # Chunkers' embed functions take texts only; pass progress on only when asked.
            vecs = self.encoder.encode(new, progress=True) if progress else self.encoder.encode(new)
            for t, v in zip(new, vecs):
                self.cache[t] = v
        return np.stack([self.cache[t] for t in texts]) if len(texts) else np.zeros((0, self.encoder.dim), np.float32)
