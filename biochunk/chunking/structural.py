"""Structure + meaning: boundaries where layout and embeddings change together."""

from __future__ import annotations

import string
from typing import Any, Callable, Sequence

import numpy as np

from biochunk.chunking.base import Chunk, Chunker, RewriterFactory, register
from biochunk.chunking.breakpoints import embed_units, groups, neighbour_distances
from biochunk.chunking.sizing import enforce_max, make_counter
from biochunk.text.counting import TokenCounter, count_words, span_counter

EmbedFn = Callable[[Sequence[str]], np.ndarray]
_PUNCT = frozenset(string.punctuation)

# The per-sentence features, in column order. Surface features describe the sentence
# itself; physical features describe the layout around it (the gap before it).
FEATURES = (
    # surface
    "length",  # characters
    "punct_density",  # punctuation characters / length
    "digit_ratio",
    "upper_ratio",
    "word_len_mean",
    "word_len_std",
    "word_len_max",
    # physical
    "paragraph_break",  # 1 when a blank line precedes the sentence
    "newlines_before",
    "leading_whitespace",  # spaces and tabs between the last line break and the sentence
    "alpha_ratio",
    "space_ratio",  # whitespace inside the sentence / length
    "other_ratio",  # neither letter, digit, whitespace nor punctuation (symbols: °, ±, μ ...)
)


def features(text: str, spans: Sequence[tuple[int, int]]) -> np.ndarray:
    """One row of ``FEATURES`` per sentence span."""
    rows = []
    prev_end = 0
    for s, e in spans:
        sent = text[s:e]
        n = len(sent)
        words = [len(w) for w in sent.split()] or [0]
        gap = text[prev_end:s]  # only whitespace: sentence spans cover all the rest
        line_start = gap.rfind("\n")
        # Indentation of the sentence's line; 0 when it continues the previous sentence's line.
        lead = len(gap) - line_start - 1 if line_start >= 0 else (len(gap) if prev_end == 0 else 0)
        alpha = sum(c.isalpha() for c in sent)
        digit = sum(c.isdigit() for c in sent)
        space = sum(c.isspace() for c in sent)
        punct = sum(c in _PUNCT for c in sent)
        rows.append(
            (
                n,
                punct / n,
                digit / n,
                sum(c.isupper() for c in sent) / n,
                float(np.mean(words)),
                float(np.std(words)),
                max(words),
                float(gap.count("\n") >= 2),
                gap.count("\n"),
                lead,
                alpha / n,
                space / n,
                (n - alpha - digit - space - punct) / n,
            )
        )
        prev_end = e
    return np.asarray(rows, dtype=np.float64).reshape(len(spans), len(FEATURES))


def zscore(x: np.ndarray) -> np.ndarray:
    """Per-column z-scores over the document; a constant column becomes 0."""
    if len(x) == 0:
        return x
    sd = x.std(axis=0)
    return (x - x.mean(axis=0)) / np.where(sd > 0, sd, 1.0)


def structural_distances(x: np.ndarray) -> np.ndarray:
    """Euclidean distance between neighbours' z-scored features, divided by its maximum."""
    if len(x) < 2:
        return np.zeros(0)
    d = np.linalg.norm(np.diff(zscore(x), axis=0), axis=1)
    top = d.max()
    return d / top if top > 0 else d


@register("structural")
class StructuralChunker(Chunker):
    """Cut where ``alpha * D_sem + (1 - alpha) * D_struct`` exceeds its ``boundary_percentile``-th percentile.

    Source: Structural Chunking, "a semantic-structural integrated method for RAG"
    (github.com/SYLee1996/Structural_Chunking): D_sem = 1 - cos between consecutive
    sentence embeddings; D_struct = Euclidean distance between consecutive sentences'
    z-normalised surface and physical features (``FEATURES``), scaled to [0, 1] by
    its maximum in the document. Each sentence is embedded exactly once, all
    sentences of a batch in one encoder call. Covers every non-whitespace character
    of the input.
    """

    needs_encoder = True

    def __init__(
        self,
        embed: EmbedFn,
        alpha: float = 0.5,
        boundary_percentile: float = 95.0,
        counter: TokenCounter = count_words,
        max_tokens: int | None = None,
    ) -> None:
        super().__init__(counter, max_tokens)
        if not 0.0 <= alpha <= 1.0:
            raise ValueError(f"chunk.alpha must be in [0, 1], got {alpha}")
        if not 0.0 <= boundary_percentile <= 100.0:
            raise ValueError(f"chunk.boundary_percentile must be in [0, 100], got {boundary_percentile}")
        self.embed = embed
        self.alpha = alpha
        self.boundary_percentile = boundary_percentile

    @classmethod
    def from_params(cls, params: Any, encoder: Any = None, rewriter: RewriterFactory | None = None) -> "StructuralChunker":
        if encoder is None:
            raise ValueError("chunk.method structural needs an encoder")
        return cls(
            embed=encoder.encode,
            alpha=params.alpha,
            boundary_percentile=params.boundary_percentile,
            counter=make_counter(params.counter, encoder),
            max_tokens=params.max_tokens,
        )

    def fused(self, text: str, spans: Sequence[tuple[int, int]], vecs: np.ndarray) -> np.ndarray:
        """D_fusion for each gap between consecutive sentences."""
        return self.alpha * neighbour_distances(vecs) + (1 - self.alpha) * structural_distances(features(text, spans))

    def chunk_batch(self, texts: Sequence[str]) -> list[list[Chunk]]:
        units, vecs = embed_units(self.embed, texts)
        out = []
        for text, us, v in zip(texts, units, vecs):
            d = self.fused(text, us, v)
            cuts = np.flatnonzero(d > np.percentile(d, self.boundary_percentile)).tolist() if len(d) else []
            counts = span_counter(self.counter, text, self.max_tokens)
            out.append(self._build(text, enforce_max(text, groups(us, cuts), counts, self.max_tokens), counts))
        return out
