"""The encoder: one protocol (``Encoder``), the sentence-transformers model behind it
(``SentenceEncoder``), and one chain of wrappers that each add one behaviour.

Every stage, chunker, retriever and benchmark that embeds text asks an ``Encoder`` for
what the protocol lists, and nothing else. A wrapper (``EncoderWrapper``) is an
``Encoder`` around another one (``inner``): it forwards every member to it and changes
only ``encode``. They compose in any order; the stages build

    SentenceEncoder                 the model (loads weights on first use)
    -> EngineEncoder                (biochunk.partitions) encode on the compute engine
    -> MemoEncoder                  each distinct text once per process
       or CachedEncoder             (biochunk.retrieval.cache) each text once per cache folder
    -> CountingEncoder              count the texts that reach the model (benchmarks)

and nothing reaches an inner encoder's attributes except through the protocol.
"""

from __future__ import annotations

import hashlib
import logging
from functools import cached_property
from pathlib import Path
from typing import Any, Protocol, Sequence, runtime_checkable

import numpy as np

from biochunk.models import MODEL_MARKERS, hub_offline, loading, offline_mode, pick_device, resolve

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


@runtime_checkable
class Encoder(Protocol):
    """What callers ask of an encoder: these five members, and nothing else.

    ``isinstance(x, Encoder)`` checks that the members exist; on Python < 3.12 it reads the
    properties to do so, and ``model`` / ``dim`` of a ``SentenceEncoder`` load its weights.
    (A chunker's ``embed`` is only ``encode``; test doubles may offer only what they are asked.)
    """

    @property
    def model_name(self) -> str:
        """The ``embed.model`` param as given: an offline alias, a hub id or a local path.

        Token counters (``chunk.counter: embedder``, semchunk; ``chunking.sizing``) and the
        window check (``retrieval.compare.encoder_window``) read the model's tokenizer and
        ``sentence_bert_config.json`` by this name, without loading any weights.
        """
        ...

    @property
    def dim(self) -> int:
        """The width of a vector, so that an empty batch is still a ``(0, dim)`` array."""
        ...

    @property
    def model(self) -> Any:
        """The loaded ``SentenceTransformer`` (weights load on first access).

        For callers that need the model itself: chonkie's semantic chunker takes it
        (benchmarks/papers/semchunk_retrieval), the clinical benchmark reads its
        ``max_seq_length``, the GPU check the devices of its parameters.
        """
        ...

    def identity(self) -> dict[str, str]:
        """What decides a vector's bits besides its text: ``model``, ``revision``, ``dtype``, ``device``.

        The on-disk cache (``retrieval.cache``) keys its folder by it, so vectors made in
        float16 on a GPU are never read back by a float32 CPU run, nor an old revision's by
        a new one. Loads no weights (but for a hub id while the hub is online: the revision
        is the one loading fetches).
        """
        ...

    def encode(self, texts: Sequence[str], progress: bool = False) -> np.ndarray:
        """Unit-norm float32 vectors of ``texts``, one row per text, in order.

        ``progress``: a progress bar, for long calls (a stage's whole corpus). Chunkers call
        ``encode(texts)`` only, so a wrapper passes ``progress`` on only when it is asked.
        """
        ...


# -- which weights a model param loads ---------------------------------------------------

_FOLDER_HASHES: dict[tuple, str] = {}


def _folder_files(folder: Path) -> list[Path]:
    # Hidden entries (.gitattributes, .cache/ lock files of a hub download) are no model.
    return sorted(
        p for p in folder.rglob("*") if p.is_file() and not any(part.startswith(".") for part in p.relative_to(folder).parts)
    )


def folder_hash(path: Path) -> str:
    """sha256 over a model folder's (or file's) relative names, sizes and contents.

    Computed once per process for the same names, sizes and modification times (the
    minilm package's 91 MB: a fraction of a second), re-read when any of them changes.
    """
    path = path.resolve()
    files = _folder_files(path) if path.is_dir() else [path]
    stats = tuple((str(f), f.stat().st_size, f.stat().st_mtime_ns) for f in files)
    key = (str(path), stats)
    if key not in _FOLDER_HASHES:
        h = hashlib.sha256()
        for f in files:
            name = f.relative_to(path).as_posix() if path.is_dir() else f.name
            h.update(f"{name}\0{f.stat().st_size}\0".encode())
            with open(f, "rb") as fh:
                for block in iter(lambda: fh.read(1 << 20), b""):
                    h.update(block)
        _FOLDER_HASHES[key] = h.hexdigest()
    return _FOLDER_HASHES[key]


def model_revision(name: str, param: str = "embed.model") -> str | None:
    """Which weights ``name`` loads: ``sha256:<hash>`` of a local folder or an offline
    package's folder (``folder_hash``), else a hub id's commit in the local Hugging Face
    cache (the snapshot its ``main`` ref points at); None for a hub id not in the cache."""
    where = resolve(name, param)
    if Path(where).exists():
        return "sha256:" + folder_hash(Path(where))
    from huggingface_hub import try_to_load_from_cache

    for marker in MODEL_MARKERS:
        cached = try_to_load_from_cache(where, marker)
        if isinstance(cached, str):  # <cache>/models--org--name/snapshots/<commit>/<marker>
            return Path(cached).parent.name
    return None


# -- the model -----------------------------------------------------------------------------


class SentenceEncoder:
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

    def identity(self) -> dict[str, str]:
        device = pick_device(self.device)
        revision = model_revision(self.model_name, self.param)
        if revision is None and not hub_offline():
            self.model  # an online hub id: the revision is the one loading fetches
            revision = model_revision(self.model_name, self.param)
        if revision is None:
            log.warning("encoder %s: revision unknown (not in the Hugging Face cache)", self.model_name)
        return {
            "model": self.model_name,
            "revision": revision or "unknown",
            "dtype": encoder_dtype(self.dtype, device),
            # The kind of device (cpu, cuda, mps): its kernels, not its index, decide the bits.
            "device": device.split(":")[0],
        }

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


# -- the wrappers --------------------------------------------------------------------------


class EncoderWrapper:
    """An ``Encoder`` around ``inner``: every member is ``inner``'s; a subclass changes ``encode``.

    The members are forwarded one by one (no ``__getattr__``), so a wrapper is exactly an
    ``Encoder``: anything else on the inner encoder (``batch_size``, ``device``) is not
    reachable through it, and an inner test double that lacks a member lacks it here too.
    """

    def __init__(self, inner: Encoder) -> None:
        self.inner = inner

    @property
    def model_name(self) -> str:
        return self.inner.model_name

    @property
    def dim(self) -> int:
        return self.inner.dim

    @property
    def model(self) -> Any:
        return self.inner.model

    def identity(self) -> dict[str, str]:
        return self.inner.identity()

    def encode(self, texts: Sequence[str], progress: bool = False) -> np.ndarray:
        # Chunkers' embed functions take texts only; pass progress on only when asked.
        return self.inner.encode(texts, progress=True) if progress else self.inner.encode(texts)

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.inner!r})"


class MemoEncoder(EncoderWrapper):
    """Embeds each distinct text once across calls, in this process's memory.

    For runs that embed the same units many times over (every breakpoint chunker embeds
    the same sentences; the ablation rungs share their fixed windows).
    """

    def __init__(self, inner: Encoder) -> None:
        super().__init__(inner)
        self.cache: dict[str, np.ndarray] = {}

    def encode(self, texts: Sequence[str], progress: bool = False) -> np.ndarray:
        new = sorted({t for t in texts if t not in self.cache})
        if new:
            vecs = super().encode(new, progress)
            for t, v in zip(new, vecs):
                self.cache[t] = v
        return np.stack([self.cache[t] for t in texts]) if len(texts) else np.zeros((0, self.dim), np.float32)


class CountingEncoder(EncoderWrapper):
    """Counts the texts it is asked to embed (``texts``): below a cache, the ones that missed it."""

    def __init__(self, inner: Encoder) -> None:
        super().__init__(inner)
        self.texts = 0

    def encode(self, texts: Sequence[str], progress: bool = False) -> np.ndarray:
        self.texts += len(texts)
        return super().encode(texts, progress)


class VectorLookup(EncoderWrapper):
    """Vectors embedded earlier (a pipeline stage's output), looked up by text; the rest from ``inner``.

    The semantic chunkers of a paper pipeline read their sentences' vectors from the
    ``embed_units`` stage this way, so a corpus's sentences are embedded once for every
    setting. The table must come from an encoder of the same ``identity()`` (the caller
    checks); ``misses`` counts the texts that ``inner`` had to embed.
    """

    def __init__(self, inner: Encoder, texts: Sequence[str], vectors: np.ndarray) -> None:
        super().__init__(inner)
        self.table = dict(zip(texts, vectors))
        self.misses = 0

    def encode(self, texts: Sequence[str], progress: bool = False) -> np.ndarray:
        new = [t for t in dict.fromkeys(texts) if t not in self.table]
        if new:
            self.misses += len(new)
            for t, v in zip(new, super().encode(new, progress)):
                self.table[t] = v
        return np.stack([self.table[t] for t in texts]) if len(texts) else np.zeros((0, self.dim), np.float32)
