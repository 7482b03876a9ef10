"""Adaptive chunks: neighbouring units merged while they stay on one topic."""

from __future__ import annotations

import re
from typing import Any, Callable, Sequence

import numpy as np

from biochunk.chunking.base import Chunk, Chunker, RewriterFactory, register
from biochunk.chunking.breakpoints import embed_units
from biochunk.chunking.sizing import carry_back, enforce_max, make_counter
from biochunk.text.counting import SpanCounter, TokenCounter, count_words, span_counter
from biochunk.text.headers import NO_HEADER, micro_header
from biochunk.text.segment import clause_spans, sentence_spans

EmbedFn = Callable[[Sequence[str]], np.ndarray]
# Chunk texts in, one title each out ("" when none could be written).
HeaderFn = Callable[[Sequence[str]], list[str]]
UNITS = {"sentence": sentence_spans, "clause": clause_spans}
# chunk.header: a noun-phrase title, a title written by chunk.generator, or no header.
HEADERS = ("phrase", "generator", "none")

# A unit that opens with one of these words continues its predecessor's thought
# ("..., for 6 weeks", "... until recovery") and is never the start of a chunk.
LINKERS = ("for", "until", "unless", "after", "within")
_LINKER = re.compile(rf"(?:{'|'.join(LINKERS)})\b", re.IGNORECASE)

Span = tuple[int, int]


@register("adaptive")
class AdaptiveChunker(Chunker):
    """Grow a chunk unit by unit while the next unit stays on topic; add a micro-header.

    Source: the adaptive strategy of the clinical decision-support chunking study
    (embedding similarity >= 0.8, 500-word cap, micro-headers). A unit joins the
    chunk when cos(unit, last unit) >= ``threshold`` AND cos(unit, chunk centroid)
    >= ``threshold`` and the chunk stays within ``max_words`` (and ``max_tokens``).
    Repairs: a unit opening with a linker (``LINKERS``) always joins its predecessor
    (within the caps); a chunk under ``min_words`` words is merged into the next one
    (the last into the previous) when the caps allow. Each chunk gets
    ``metadata["header"]``, outside its offsets: a noun-phrase title
    (``biochunk.text.headers.micro_header``, ``header="phrase"``), one written by the
    generator (``header="generator"``: ``headers`` gets every chunk text of the batch
    in one call; an empty title becomes "no header available"), or none at all
    (``header="none"``). Units are sentences or clauses; each unit is embedded exactly once,
    all documents of a batch in one call. Covers every non-whitespace character.
    ``boundary_overlap`` > 0: each chunk after the first also repeats up to that many
    ``counter`` tokens (whole words) of the end of its predecessor, within the caps (the
    study's boundary-repair overlap of <= 30 tokens; ``sizing.carry_back``).
    """

    needs_encoder = True

    def __init__(
        self,
        embed: EmbedFn,
        threshold: float = 0.8,
        max_words: int = 500,
        unit: str = "clause",
        min_words: int = 60,
        counter: TokenCounter = count_words,
        max_tokens: int | None = None,
        header: str = "phrase",
        headers: HeaderFn | None = None,
        boundary_overlap: int = 0,
    ) -> None:
        super().__init__(counter, max_tokens)
        if header not in HEADERS:
            raise ValueError(f"chunk.header must be one of {', '.join(HEADERS)}, got {header!r}")
        if header == "generator" and headers is None:
            raise ValueError("chunk.header: generator needs a title writer (headers=...)")
        self.header = header
        self.headers = headers
        if not 0.0 <= threshold <= 1.0:
            raise ValueError(f"chunk.threshold must be in [0, 1], got {threshold}")
        if max_words < 1:
            raise ValueError(f"chunk.max_words must be >= 1, got {max_words}")
        if min_words < 0:
            raise ValueError(f"chunk.min_words must be >= 0, got {min_words}")
        if boundary_overlap < 0:
            raise ValueError(f"chunk.boundary_overlap must be >= 0, got {boundary_overlap}")
        self.boundary_overlap = boundary_overlap
        if unit not in UNITS:
            raise ValueError(f"chunk.unit must be one of {sorted(UNITS)}, got {unit!r}")
        self.embed = embed
        self.threshold = threshold
        self.max_words = max_words
        self.min_words = min_words
        self.unit = unit

    @classmethod
    def needs_rewriter(cls, params: Any) -> bool:
        return params.header == "generator"

    @classmethod
    def from_params(cls, params: Any, encoder: Any = None, rewriter: RewriterFactory | None = None) -> "AdaptiveChunker":
        if encoder is None:
            raise ValueError("chunk.method adaptive needs an encoder")
        if cls.needs_rewriter(params) and rewriter is None:
            raise ValueError(
                "chunk.header: generator writes titles with chunk.generator, so the chunker must be built "
                "with a rewriter (chunking.build(..., rewriter=biochunk.generation.rewrite.Rewriter))"
            )
        return cls(
            embed=encoder.encode,
            threshold=params.threshold,
            max_words=params.max_words,
            unit=params.unit,
            min_words=params.min_words,
            counter=make_counter(params.counter, encoder),
            max_tokens=params.max_tokens,
            header=params.header,
            headers=rewriter(params.generator).titles if rewriter is not None and params.header == "generator" else None,
            boundary_overlap=params.boundary_overlap,
        )

    def chunk_batch(self, texts: Sequence[str]) -> list[list[Chunk]]:
        units, vecs = embed_units(self.embed, texts, UNITS[self.unit])
        per_doc = []
        for text, us, v in zip(texts, units, vecs):
            counts = span_counter(self.counter, text, self.max_tokens)
            spans = self._merge_short(text, self._grow(text, us, v, counts), counts)
            # A single unit can outgrow the word cap (a table row, a list without punctuation):
            # cut it at words so that max_words holds for every chunk, then the token bound.
            capped = enforce_max(text, [(s, e, {}) for s, e in spans], count_words, self.max_words)
            capped = enforce_max(text, capped, counts, self.max_tokens)
            if self.boundary_overlap:
                spans = carry_back(text, [(s, e) for s, e, _ in capped], counts, self.boundary_overlap, self._fits_span(text, counts))
                capped = [(s, e, {}) for s, e in spans]
            per_doc.append((text, capped, counts))
        titles = iter(self._titles([text[s:e] for text, spans, _ in per_doc for s, e, _ in spans]))
        return [self._build(text, [(s, e, next(titles)) for s, e, _ in spans], counts) for text, spans, counts in per_doc]

    def _titles(self, chunk_texts: list[str]) -> list[dict[str, str]]:
        """Each chunk's metadata: its header, or nothing when headers are off."""
        if self.header == "none":
            return [{} for _ in chunk_texts]
        return [{"header": t} for t in self._header_texts(chunk_texts)]

    def _header_texts(self, chunk_texts: list[str]) -> list[str]:
        if self.header == "generator":
            assert self.headers is not None
            return [t or NO_HEADER for t in self.headers(chunk_texts)]
        return [micro_header(t) for t in chunk_texts]

    def _fits(self, counts: SpanCounter, start: int, end: int, words: int) -> bool:
        return words <= self.max_words and (self.max_tokens is None or counts.count(start, end) <= self.max_tokens)

    def _fits_span(self, text: str, counts: SpanCounter) -> Callable[[int, int], bool]:
        return lambda s, e: self._fits(counts, s, e, count_words(text[s:e]))

    def _grow(self, text: str, units: list[Span], vecs: np.ndarray, counts: SpanCounter) -> list[tuple[int, int, int]]:
        """``(start, end, words)`` of the topical chunks."""
        spans: list[tuple[int, int, int]] = []
        if not units:
            return spans
        start, end = units[0]
        total, last = vecs[0].copy(), vecs[0]
        words = count_words(text[start:end])
        for (s, e), v in zip(units[1:], vecs[1:]):
            w = count_words(text[s:e])
            if self._fits(counts, start, e, words + w) and (_LINKER.match(text, s) or self._on_topic(v, last, total)):
                end, words = e, words + w
                total += v
            else:
                spans.append((start, end, words))
                start, end, words = s, e, w
                total = v.copy()
            last = v
        spans.append((start, end, words))
        return spans

    def _on_topic(self, v: np.ndarray, last: np.ndarray, total: np.ndarray) -> bool:
        norm = np.linalg.norm(total)
        centroid = total / norm if norm > 0 else total
        return float(v @ last) >= self.threshold and float(v @ centroid) >= self.threshold

    def _merge_short(self, text: str, spans: list[tuple[int, int, int]], counts: SpanCounter | None = None) -> list[Span]:
        """Merge each chunk under ``min_words`` into the next (the last into the previous)."""
        counts = span_counter(self.counter, text, self.max_tokens) if counts is None else counts
        out: list[tuple[int, int, int]] = []
        pending: tuple[int, int, int] | None = None
        for s, e, w in spans:
            if pending is not None:
                if self._fits(counts, pending[0], e, pending[2] + w):
                    s, w = pending[0], pending[2] + w
                else:
                    out.append(pending)
                pending = None
            if w < self.min_words:
                pending = (s, e, w)
            else:
                out.append((s, e, w))
        if pending is not None:
            if out and self._fits(counts, out[-1][0], pending[1], out[-1][2] + pending[2]):
                out[-1] = (out[-1][0], pending[1], out[-1][2] + pending[2])
            else:
                out.append(pending)
        return [(s, e) for s, e, _ in out]
