"""Chunkers: one interface (``Chunker.chunk(text) -> list[Chunk]``), selected by name."""

from typing import Any

import pandas as pd

from biochunk.chunking.base import Chunk, Chunker, RewriterFactory, chunk_corpus, get, methods, register
from biochunk.corpus import Document
from biochunk.errors import UserError
from biochunk.io import CHUNKS

__all__ = [
    "NO_CHUNKING", "Chunk", "Chunker", "Document", "RewriterFactory", "build", "chunk_corpus", "chunk_table", "get",
    "methods", "models_used", "register",
]  # fmt: skip

# Not a chunker: the chunk method value that keeps each document whole, as one chunk
# (retrieve.bm25_methods / retrieve.dense_methods: the baseline every chunker is compared with).
NO_CHUNKING = "none"


def build(params: Any, encoder: Any = None, dataset: str | None = None, rewriter: RewriterFactory | None = None) -> Chunker:
    """The chunker that the ``chunk.*`` params describe; ``encoder`` serves semantic chunkers,
    ``rewriter`` the chunkers that rewrite text with ``chunk.generator`` (``Chunker.needs_rewriter``).

    ``dataset`` names the per-dataset domain configuration (trigger lexicon, relation
    hierarchy) for the chunkers that read one (``Chunker.needs_dataset``); it is not a user
    param, and such a chunker is never built without it.
    """
    cls = get(params.method)
    if not cls.needs_dataset:
        return cls.from_params(params, encoder, rewriter)
    if dataset is None:
        raise UserError(
            f"chunk.method {params.method} reads a dataset's trigger lexicon and relation hierarchy "
            "(configs/triggers/<dataset>.yaml): build it for a named dataset"
        )
    return cls.from_params(params, encoder, rewriter, dataset=dataset)


def chunk_table(docs: Any, chunker: Chunker) -> pd.DataFrame:
    """The CHUNKS table of ``docs`` (``Document`` list) cut by ``chunker``: the one place a
    chunk list becomes a table, so every branch reads the same columns and ids."""
    rows = [c.row() for c in chunk_corpus(docs, chunker)]
    return pd.DataFrame(rows, columns=CHUNKS.names)


def models_used(params: Any, embed_model: str, method: str | None = None) -> list[tuple[str, str]]:
    """(model, params key) of every model that chunking with ``method`` (default: ``params.method``) loads.

    Stages resolve these before any work, so a wrong model param stops them at once.
    """
    method = method or params.method
    used = []
    if get(method).needs_encoder or params.counter == "embedder":
        used.append((embed_model, "embed.model"))
    if get(method).needs_rewriter(params):
        used.append((params.generator, "chunk.generator"))
    return used
