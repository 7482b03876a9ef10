"""The chunk contract shared by every strategy, and the registry that selects one.

Guarantee: for every chunk ``c`` produced from ``text``, ``text[c.start:c.end] == c.text``.
Chunkers know nothing of datasets, files or DVC: text in, chunks out.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field, replace
from typing import Any, Callable, ClassVar, Iterable, Protocol, Sequence

from biochunk.corpus import Document
from biochunk.errors import UserError
from biochunk.text.counting import TokenCounter, count_words, span_counter


@dataclass(frozen=True, slots=True)
class Chunk:
    """One chunk; also one row of ``chunks.parquet`` (see ``biochunk.io.CHUNKS``)."""

    text: str
    start: int
    end: int
    n_tokens: int
    method: str
    doc_id: str = ""
    chunk_id: str = ""
    labels: tuple[str, ...] = ()
    metadata: dict[str, Any] = field(default_factory=dict)

    def row(self) -> dict[str, Any]:
        return {
            "doc_id": self.doc_id,
            "chunk_id": self.chunk_id,
            "text": self.text,
            "start": self.start,
            "end": self.end,
            "n_tokens": self.n_tokens,
            "method": self.method,
            "labels": list(self.labels),
            "metadata": json.dumps(self.metadata, sort_keys=True),
        }


class TextRewriter(Protocol):
    """What a chunker asks of the generator (``biochunk.generation.rewrite.Rewriter`` is one)."""

    def propositions(self, sentences: Sequence[str]) -> list[list[str]]:
        """Each sentence's atomic propositions (possibly none)."""
        ...

    def titles(self, passages: Sequence[str]) -> list[str]:
        """A short title per passage ("" when none could be written)."""
        ...


class RewriterFactory(Protocol):
    """The model param (``chunk.generator``) in, a rewriter of that model out.

    Chunkers that rewrite text get one from whoever builds them, as semantic chunkers get
    the encoder, so chunking never imports the generator (``biochunk.generation`` sits
    above it). The builders (the stages, ``biochunk.partitions``) pass
    ``biochunk.generation.rewrite.Rewriter`` itself, whose model loads on its first call,
    so building a chunker costs nothing until it runs.
    """

    def __call__(self, model: str, *, temperature: float = ..., seed: int = ...) -> TextRewriter: ...


class Chunker:
    """Base class: subclasses implement ``spans`` (or override ``chunk_batch`` to batch work)."""

    name: ClassVar[str] = ""
    # Whether from_params needs the encoder: semantic chunkers embed their units, and
    # token-window chunkers (semchunk) take the embedder's tokenizer from it.
    needs_encoder: ClassVar[bool] = False
    # Reads per-dataset domain configuration (``chunking.build`` passes ``dataset=``).
    needs_dataset: ClassVar[bool] = False

    @classmethod
    def needs_rewriter(cls, params: Any) -> bool:
        """Whether from_params, with these ``chunk.*`` params, needs a rewriter (the generator)."""
        return False

    @classmethod
    def from_params(cls, params: Any, encoder: Any = None, rewriter: RewriterFactory | None = None) -> "Chunker":
        """Build from the ``chunk.*`` params (``biochunk.params.ChunkParams``)."""
        raise NotImplementedError

    def __init__(self, counter: TokenCounter = count_words, max_tokens: int | None = None) -> None:
        if max_tokens is not None and max_tokens < 1:
            raise ValueError(f"chunk.max_tokens must be >= 1 or null, got {max_tokens}")
        self.counter = counter
        self.max_tokens = max_tokens

    def spans(self, text: str) -> list[tuple[int, int, dict[str, Any]]]:
        """``(start, end, metadata)`` triples in text order; implemented by subclasses."""
        raise NotImplementedError

    def chunk(self, text: str) -> list[Chunk]:
        return self.chunk_batch([text])[0]

    def chunk_batch(self, texts: Sequence[str]) -> list[list[Chunk]]:
        return [self._build(t, self.spans(t)) for t in texts]

    def _build(self, text: str, spans: Iterable[tuple[int, int, dict[str, Any]]], counts: Any = None) -> list[Chunk]:
        """Chunks of the non-blank spans; ``counts``: the document's ``SpanCounter``, when one is at hand."""
        counts = span_counter(self.counter, text, self.max_tokens) if counts is None else counts
        out = []
        for s, e, meta in spans:
            piece = text[s:e]
            if piece.strip():
                out.append(Chunk(piece, s, e, counts.count(s, e), self.name, metadata=meta))
        return out


_REGISTRY: dict[str, type[Chunker]] = {}


def register(name: str) -> Callable[[type[Chunker]], type[Chunker]]:
    """Class decorator: make a chunker selectable as ``chunk.method: <name>``."""

    def deco(cls: type[Chunker]) -> type[Chunker]:
        if name in _REGISTRY:
            raise ValueError(f"chunk method {name!r} is registered twice ({_REGISTRY[name].__name__}, {cls.__name__})")
        cls.name = name
        _REGISTRY[name] = cls
        return cls

    return deco


def methods() -> list[str]:
    _load_builtin()
    return sorted(_REGISTRY)


def get(name: str) -> type[Chunker]:
    _load_builtin()
    if name not in _REGISTRY:
        raise UserError(f"chunk.method: unknown method {name!r}; choose one of {', '.join(sorted(_REGISTRY))}")
    return _REGISTRY[name]


def _load_builtin() -> None:
    # Importing the modules runs their @register decorators.
    from biochunk.chunking import (  # noqa: F401
        adaptive,
        breakpoints,
        cluster,
        proposition,
        recursive,
        semchunk_chunker,
        structural,
        windows,
    )
    from biochunk.chunking.biomedical import hybrid  # noqa: F401


def chunk_corpus(docs: Sequence[Document], chunker: Chunker, batch_size: int = 256) -> list[Chunk]:
    """Chunk every document; ids are ``<doc_id>#<n>`` so they are stable across runs."""
    out: list[Chunk] = []
    for i in range(0, len(docs), batch_size):
        batch = docs[i : i + batch_size]
        for doc, chunks in zip(batch, chunker.chunk_batch([d.text for d in batch])):
            for n, c in enumerate(chunks):
                out.append(replace(c, doc_id=doc.doc_id, chunk_id=f"{doc.doc_id}#{n}", labels=doc.labels))
    return out
