"""Chunkers: one interface (``Chunker.chunk(text) -> list[Chunk]``), selected by name."""

from typing import Any

from biochunk.chunking.base import Chunk, Chunker, Document, chunk_corpus, get, methods, register

__all__ = ["Chunk", "Chunker", "Document", "build", "chunk_corpus", "get", "methods", "register"]


def build(params: Any, encoder: Any = None) -> Chunker:
    """The chunker that the ``chunk.*`` params describe; ``encoder`` serves semantic chunkers."""
    return get(params.method).from_params(params, encoder)
