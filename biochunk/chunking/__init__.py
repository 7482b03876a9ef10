"""Chunkers: one interface (``Chunker.chunk(text) -> list[Chunk]``), selected by name."""

from dataclasses import fields
from types import SimpleNamespace
from typing import Any

from biochunk.chunking.base import Chunk, Chunker, Document, chunk_corpus, get, methods, register

__all__ = ["Chunk", "Chunker", "Document", "build", "chunk_corpus", "get", "methods", "models_used", "register"]


def build(params: Any, encoder: Any = None, dataset: str | None = None) -> Chunker:
    """The chunker that the ``chunk.*`` params describe; ``encoder`` serves semantic chunkers.

    ``dataset`` names the per-dataset domain configuration (trigger lexicon, relation
    hierarchy) for the chunkers that read one; it is not a user param.
    """
    if dataset is not None:
        params = SimpleNamespace(**{f.name: getattr(params, f.name) for f in fields(params)}, dataset=dataset)
    return get(params.method).from_params(params, encoder)


def models_used(params: Any, embed_model: str, method: str | None = None) -> list[tuple[str, str]]:
    """(model, params key) of every model that chunking with ``method`` (default: ``params.method``) loads.

    Stages resolve these before any work, so a wrong model param stops them at once.
    """
    method = method or params.method
    used = []
    if get(method).needs_encoder or params.counter == "embedder":
        used.append((embed_model, "embed.model"))
    if method == "proposition" or (method == "adaptive" and params.header == "generator"):
        used.append((params.generator, "chunk.generator"))
    return used
