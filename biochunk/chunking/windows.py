"""Fixed word windows: BioMedRAG's chunk memory (5-word splits of training sentences)."""

from __future__ import annotations

from typing import Any

from biochunk.chunking.base import Chunker, RewriterFactory, register
from biochunk.chunking.sizing import enforce_max, make_counter
from biochunk.text.counting import TokenCounter, count_words
from biochunk.text.segment import word_spans


@register("fixed")
class FixedWindowChunker(Chunker):
    """Consecutive windows of ``size`` words, ``overlap`` words shared by neighbours.

    Source: BioMedRAG (Li et al., 2024) splits each training sentence into 5-word
    chunks without overlap. Covers every non-whitespace character of the input.
    """

    def __init__(
        self,
        size: int = 5,
        overlap: int = 0,
        counter: TokenCounter = count_words,
        max_tokens: int | None = None,
    ) -> None:
        super().__init__(counter, max_tokens)
        if size < 1:
            raise ValueError(f"chunk.window must be >= 1, got {size}")
        if not 0 <= overlap < size:
            raise ValueError(f"chunk.overlap must be in [0, chunk.window - 1] = [0, {size - 1}], got {overlap}")
        self.size = size
        self.overlap = overlap

    @classmethod
    def from_params(cls, params: Any, encoder: Any = None, rewriter: RewriterFactory | None = None) -> "FixedWindowChunker":
        counter = make_counter(params.counter, encoder)
        return cls(size=params.window, overlap=params.overlap, counter=counter, max_tokens=params.max_tokens)

    def spans(self, text: str) -> list[tuple[int, int, dict[str, Any]]]:
        words = word_spans(text)
        step = self.size - self.overlap
        spans = []
        for i in range(0, len(words), step):
            window = words[i : i + self.size]
            spans.append((window[0][0], window[-1][1], {}))
            if i + self.size >= len(words):
                break
        # A window of `size` words can still exceed a token budget (long chemical names
        # split into many word pieces): cut it at words, then characters.
        return enforce_max(text, spans, self.counter, self.max_tokens)
