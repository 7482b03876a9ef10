"""One sentence encoder wrapper: batching, normalisation, device choice."""

from __future__ import annotations

import logging
from functools import cached_property
from typing import Sequence

import numpy as np

from biochunk.models import loading, offline_mode, pick_device, resolve

log = logging.getLogger(__name__)

DTYPES = ("auto", "float32", "float16", "bfloat16")


def encoder_dtype(dtype: str, device: str) -> str:
    """``auto``: float16 on CUDA, float32 elsewhere.

    Encoding is inference only, so fp16's narrower range is no risk for a BERT-sized
    encoder, and its 10-bit mantissa keeps cosines closer to fp32 than bf16's 7 bits.
    """
    if dtype not in DTYPES:
        raise ValueError(f"encoder dtype must be one of {', '.join(DTYPES)}, got {dtype!r}")
    if dtype != "auto":
        return dtype
    return "float16" if device.startswith("cuda") else "float32"


class Encoder:
    """Normalised float32 sentence embeddings from a sentence-transformers model."""

    def __init__(
        self, model: str = "minilm", batch_size: int = 64, device: str = "auto", param: str = "embed.model", dtype: str = "auto"
    ):
        self.model_name = model
        self.batch_size = batch_size
        self.device = device
        self.param = param
        self.dtype = dtype

    @cached_property
    def model(self):  # loaded on first use: a chunker that never embeds never pays for it
        offline_mode()
        import torch
        from sentence_transformers import SentenceTransformer

        path = resolve(self.model_name, self.param)
        device = pick_device(self.device)
        dtype = encoder_dtype(self.dtype, device)
        log.info("loading encoder %s on %s (%s)", self.model_name, device, dtype)
        # Set the precision explicitly: transformers 5 loads a checkpoint in the dtype it
        # was saved in, so an fp16 copy would otherwise run in fp16 on a CPU.
        torch_dtype = getattr(torch, dtype)
        with loading(self.model_name, self.param):
            return SentenceTransformer(path, device=device, model_kwargs={"dtype": torch_dtype}).to(torch_dtype)

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
        vecs = np.ascontiguousarray(vecs, dtype=np.float32)
        if encoder_dtype(self.dtype, pick_device(self.device)) != "float32":
            # Normalised in half precision, a norm is 1 only to ~1e-3; cosines want it exact.
            vecs /= np.linalg.norm(vecs, axis=1, keepdims=True)
        return vecs


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
