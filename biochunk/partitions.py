"""The per-partition work of chunk and embed, as tasks any ``biochunk.compute.Engine`` runs.

Each task takes small, picklable params and one partition, builds its chunker or encoder
once per process (``compute.resource``), and returns plain data (an Arrow table, a float32
array). A chunk id is ``<doc_id>#<n>`` within its document, so a partition's chunks are
the rows one pass over the whole corpus would write for the same documents, in the same order.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from functools import partial
from typing import Any

import numpy as np
import pyarrow as pa

from biochunk import chunking
from biochunk.compute import Engine, chunked, resource
from biochunk.corpus import Document
from biochunk.embedding import EncoderWrapper, SentenceEncoder
from biochunk.io import CHUNKS, arrow_table


def _encoder(ep: Any) -> SentenceEncoder:
    # Building a SentenceEncoder loads no weights; keyed by the embed params, so one per process.
    return resource(("encoder", ep), lambda: SentenceEncoder(ep.model, ep.batch_size, ep.device))


def _rewriter() -> chunking.RewriterFactory:
    # Heavy: generation.rewrite imports torch (through generation.generator), which a chunking
    # worker that never rewrites text must not load (~200 MB; see compute._pin_torch_threads).
    from biochunk.generation.rewrite import Rewriter

    return Rewriter


def _chunker(cp: Any, ep: Any, dataset: str | None) -> chunking.Chunker:
    def build() -> chunking.Chunker:
        cls = chunking.get(cp.method)
        # The embedder's tokenizer also serves counter: embedder.
        encoder = _encoder(ep) if cls.needs_encoder or cp.counter == "embedder" else None
        # The generator (chunk.generator) loads on the rewriter's first call, once per chunker.
        rewriter = _rewriter() if cls.needs_rewriter(cp) else None
        return chunking.build(cp, encoder, dataset=dataset, rewriter=rewriter)

    return resource(("chunker", cp, ep, dataset), build)


def chunk_partition(cp: Any, ep: Any, dataset: str | None, docs: Sequence[Document]) -> pa.Table:
    """CHUNKS rows of ``docs`` with the ``chunk.*`` method (``ep``: the embedder semantic chunkers use)."""
    return arrow_table(chunking.chunk_table(docs, _chunker(cp, ep, dataset)), CHUNKS)


def encode_partition(ep: Any, progress: bool, texts: Sequence[str]) -> np.ndarray:
    """Normalised float32 embeddings of ``texts`` with the ``embed.*`` encoder."""
    return _encoder(ep).encode(list(texts), progress=progress)


def identity_partition(ep: Any, part: Sequence[str]) -> dict[str, str]:
    """The ``embed.*`` encoder's ``identity()`` where the task runs (``part`` is not read)."""
    return _encoder(ep).identity()


def chunk_stream(
    engine: Engine, cp: Any, ep: Any, dataset: str | None, parts: Iterable[Sequence[Document]], total: int | None = None
) -> Iterator[pa.Table]:
    """The CHUNKS table of each partition of documents, in order."""
    return engine.map(partial(chunk_partition, cp, ep, dataset), parts, total=total, desc=f"chunk {cp.method}")


def encode_all(
    engine: Engine, ep: Any, parts: Iterable[Sequence[str]], total: int | None = None, desc: str = "embed"
) -> np.ndarray:
    """Embeddings of every partition of texts, stacked in order (one partition: a progress bar per batch)."""
    single = total == 1
    vecs = list(engine.map(partial(encode_partition, ep, single), parts, total=total, desc=desc))
    if not vecs:  # no rows at all: an empty partition still gives the encoder's width
        vecs = [next(iter(engine.map(partial(encode_partition, ep, False), [[]], total=1)))]
    return np.concatenate(vecs) if len(vecs) > 1 else vecs[0]


class EngineEncoder(EncoderWrapper):
    """An ``Encoder`` whose ``encode`` runs on a ``compute.Engine``, ``rows`` texts per partition.

    For stages that embed from inside their own logic (semantic chunkers, dense retrieval,
    question embedding): wrapped in ``MemoEncoder`` / ``CachedEncoder`` as the plain encoder is.
    With the local engine and no partitions it *is* the plain encoder's call, so the default run
    computes what it did before. ``inner`` is this process's encoder, which loads no weights
    until one is asked for: ``model_name`` (a token counter's), ``dim`` and ``model`` are its.
    ``identity()`` is the workers' on a Dask engine (their device and dtype make the vectors),
    asked of the cluster once; the workers are alike, as the partitions' contract assumes.
    """

    def __init__(self, engine: Engine, ep: Any, rows: int | None) -> None:
        super().__init__(_encoder(ep))
        self.engine = engine
        self.ep = ep
        self.rows = rows
        self._remote_identity: dict[str, str] | None = None

    def identity(self) -> dict[str, str]:
        if self.engine.client is None:
            return self.inner.identity()
        if self._remote_identity is None:
            asked = self.engine.map(partial(identity_partition, self.ep), [[]], total=1, desc="identity")
            [self._remote_identity] = list(asked)
        return self._remote_identity

    def encode(self, texts: Sequence[str], progress: bool = False) -> np.ndarray:
        if self.engine.client is None and self.rows is None:
            return self.inner.encode(texts, progress=progress)
        parts = list(chunked(texts, self.rows))
        return encode_all(self.engine, self.ep, parts, total=len(parts), desc="embed")
