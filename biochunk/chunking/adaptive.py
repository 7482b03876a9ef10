"""Adaptive chunks: neighbouring units merged while they stay on one topic."""

from __future__ import annotations

from typing import Any, Callable, Sequence

import numpy as np

from biochunk.chunking.base import Chunk, Chunker, TokenCounter, count_words, register
from biochunk.text.segment import clause_spans, sentence_spans

EmbedFn = Callable[[Sequence[str]], np.ndarray]
UNITS = {"sentence": sentence_spans, "clause": clause_spans}


@register("adaptive")
class AdaptiveChunker(Chunker):
    """Grow a chunk unit by unit while cos(unit, chunk centroid) >= ``threshold``.

    Source: the adaptive strategy of the clinical-decision-support chunking study
    (embedding similarity >= 0.8, 500-word cap). Units are sentences or clauses;
    each unit is embedded exactly once, all documents of a batch in one call.
    Covers every non-whitespace character of the input.
    """

    def __init__(
        self,
        embed: EmbedFn,
        threshold: float = 0.8,
        max_words: int = 500,
        unit: str = "clause",
        counter: TokenCounter = count_words,
        max_tokens: int | None = None,
    ) -> None:
        super().__init__(counter, max_tokens)
        if not 0.0 <= threshold <= 1.0:
            raise ValueError(f"chunk.threshold must be in [0, 1], got {threshold}")
        if max_words < 1:
            raise ValueError(f"chunk.max_words must be >= 1, got {max_words}")
        if unit not in UNITS:
            raise ValueError(f"chunk.unit must be one of {sorted(UNITS)}, got {unit!r}")
        self.embed = embed
        self.threshold = threshold
        self.max_words = max_words
        self.unit = unit

    needs_encoder = True

    @classmethod
    def from_params(cls, params: Any, encoder: Any = None) -> "AdaptiveChunker":
        if encoder is None:
            raise ValueError("chunk.method adaptive needs an encoder")
        return cls(
            embed=encoder.encode, threshold=params.threshold, max_words=params.max_words, unit=params.unit, max_tokens=params.max_tokens
        )

    def chunk_batch(self, texts: Sequence[str]) -> list[list[Chunk]]:
        units = [UNITS[self.unit](t) for t in texts]
        flat = [t[s:e] for t, us in zip(texts, units) for s, e in us]
        vecs = self.embed(flat) if flat else np.zeros((0, 1), dtype=np.float32)
        out, i = [], 0
        for text, us in zip(texts, units):
            out.append(self._build(text, self._merge(text, us, vecs[i : i + len(us)])))
            i += len(us)
        return out

    def _merge(self, text: str, units: list[tuple[int, int]], vecs: np.ndarray) -> list[tuple[int, int, dict[str, Any]]]:
        spans: list[tuple[int, int, dict[str, Any]]] = []
        if not units:
            return spans
        start, end = units[0]
        total = vecs[0].astype(np.float64)
        words = count_words(text[start:end])
        for (s, e), v in zip(units[1:], vecs[1:]):
            centroid = total / (np.linalg.norm(total) or 1.0)
            w = count_words(text[s:e])
            fits = words + w <= self.max_words and (
                self.max_tokens is None or self.counter(text[start:e]) <= self.max_tokens
            )
            if fits and float(centroid @ v) >= self.threshold:
                end, total, words = e, total + v, words + w
            else:
                spans.append((start, end, {}))
                start, end, total, words = s, e, v.astype(np.float64), w
        spans.append((start, end, {}))
        return spans
