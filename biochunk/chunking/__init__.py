"""Chunkers: one interface (``Chunker.chunk(text) -> list[Chunk]``), selected by name."""

from dataclasses import fields
from types import SimpleNamespace
from typing import Any

from biochunk.chunking.base import Chunk, Chunker, RewriterFactory, chunk_corpus, get, methods, register
from biochunk.corpus import Document

__all__ = [
    "NO_CHUNKING", "Chunk", "Chunker", "Document", "RewriterFactory", "build", "chunk_corpus", "get", "methods",
    "models_used", "register",
]  # fmt: skip

# Not a chunker: the chunk method value that keeps each document whole, as one chunk
# (retrieve.bm25_methods / retrieve.dense_methods: the baseline every chunker is compared with).
NO_CHUNKING = "none"


def build(params: Any, encoder: Any = None, dataset: str | None = None, rewriter: RewriterFactory | None = None) -> Chunker:
    """The chunker that the ``chunk.*`` params describe; ``encoder`` serves semantic chunkers,
    ``rewriter`` the chunkers that rewrite text with ``chunk.generator`` (``Chunker.needs_rewriter``).

    ``dataset`` names the per-dataset domain configuration (trigger lexicon, relation
    hierarchy) for the chunkers that read one; it is not a user param.
    """
    if dataset is not None:
        params = SimpleNamespace(**{f.name: getattr(params, f.name) for f in fields(params)}, dataset=dataset)
    return get(params.method).from_params(params, encoder, rewriter)


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
