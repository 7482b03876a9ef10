"""Embedding-distance breakpoints: split where consecutive sentences drift apart."""

from __future__ import annotations

from typing import Any, Callable, ClassVar, Sequence

import numpy as np

from biochunk.chunking.base import Chunk, Chunker, RewriterFactory, register
from biochunk.chunking.sizing import enforce_max, make_counter
from biochunk.text.counting import TokenCounter, count_words, span_counter
from biochunk.text.segment import sentence_spans

EmbedFn = Callable[[Sequence[str]], np.ndarray]
Span = tuple[int, int]


def embed_units(
    embed: EmbedFn, texts: Sequence[str], segment: Callable[[str], list[Span]] = sentence_spans
) -> tuple[list[list[Span]], list[np.ndarray]]:
    """Units of every text and their unit-normalised vectors: ONE encoder call per batch.

    Each unit is embedded exactly once; texts without units send nothing.
    """
    units = [segment(t) for t in texts]
    flat = [t[s:e] for t, us in zip(texts, units) for s, e in us]
    vecs = np.asarray(embed(flat), dtype=np.float64) if flat else np.zeros((0, 1))
    if len(vecs):
        norms = np.linalg.norm(vecs, axis=1, keepdims=True)
        vecs = vecs / np.where(norms > 0, norms, 1.0)  # a zero vector stays zero: distance 1 to anything
    out, i = [], 0
    for us in units:
        out.append(vecs[i : i + len(us)])
        i += len(us)
    return units, out


def neighbour_distances(vecs: np.ndarray) -> np.ndarray:
    """``1 - cos`` between each unit and the next (``len(vecs) - 1`` values)."""
    if len(vecs) < 2:
        return np.zeros(0)
    return 1.0 - np.einsum("ij,ij->i", vecs[:-1], vecs[1:])


def groups(units: Sequence[Span], cuts: Sequence[int]) -> list[tuple[int, int, dict[str, Any]]]:
    """Spans of consecutive units, a new span after each unit index in ``cuts``."""
    out, first = [], 0
    for c in list(cuts) + [len(units) - 1]:
        if c >= first:
            out.append((units[first][0], units[c][1], {}))
            first = c + 1
    return out


class BreakpointChunker(Chunker):
    """Sentences joined until the distance to the next one exceeds a threshold.

    Source: LangChain's ``SemanticChunker`` (langchain-experimental, after Greg
    Kamradt's "5 levels of text splitting"): distance = 1 - cos between consecutive
    sentence embeddings, a breakpoint after sentence i where distance i > the
    threshold, which each subclass computes from the document's distances. Unlike
    LangChain, sentences are embedded alone (no buffer window), so each is embedded
    exactly once, all sentences of a batch in one encoder call; sentences come from
    the biomedical segmenter. Covers every non-whitespace character of the input.
    """

    needs_encoder = True
    default_amount: ClassVar[float] = 0.0
    max_amount: ClassVar[float | None] = None

    def __init__(
        self,
        embed: EmbedFn,
        amount: float | None = None,
        counter: TokenCounter = count_words,
        max_tokens: int | None = None,
    ) -> None:
        super().__init__(counter, max_tokens)
        amount = self.default_amount if amount is None else amount
        hi = "inf" if self.max_amount is None else self.max_amount
        if amount < 0 or (self.max_amount is not None and amount > self.max_amount):
            raise ValueError(f"chunk.breakpoint_amount for {self.name} must be in [0, {hi}] or null, got {amount}")
        self.embed = embed
        self.amount = float(amount)

    @classmethod
    def from_params(cls, params: Any, encoder: Any = None, rewriter: RewriterFactory | None = None) -> "BreakpointChunker":
        if encoder is None:
            raise ValueError(f"chunk.method {cls.name} needs an encoder")
        return cls(
            embed=encoder.encode,
            amount=params.breakpoint_amount,
            counter=make_counter(params.counter, encoder),
            max_tokens=params.max_tokens,
        )

    def scores(self, distances: np.ndarray) -> tuple[np.ndarray, float]:
        """The values compared with the threshold (one per gap), and the threshold."""
        raise NotImplementedError

    def breakpoints(self, distances: np.ndarray) -> list[int]:
        """Indices i of the gaps (after sentence i) where the text is cut."""
        values, threshold = self.scores(distances)
        return [int(i) for i in np.flatnonzero(values > threshold)]

    def chunk_batch(self, texts: Sequence[str]) -> list[list[Chunk]]:
        units, vecs = embed_units(self.embed, texts)
        out = []
        for text, us, v in zip(texts, units, vecs):
            d = neighbour_distances(v)
            cuts = self.breakpoints(d) if len(d) else []
            counts = span_counter(self.counter, text, self.max_tokens)
            out.append(self._build(text, enforce_max(text, groups(us, cuts), counts, self.max_tokens), counts))
        return out


@register("percentile")
class PercentileChunker(BreakpointChunker):
    """Threshold: the ``amount``-th percentile of the distances (default 95).

    Source: LangChain ``SemanticChunker(breakpoint_threshold_type="percentile")``.
    """

    default_amount = 95.0
    max_amount = 100.0

    def scores(self, distances: np.ndarray) -> tuple[np.ndarray, float]:
        return distances, float(np.percentile(distances, self.amount))


@register("stddev")
class StdDevChunker(BreakpointChunker):
    """Threshold: mean + ``amount`` standard deviations of the distances (default 3).

    Source: LangChain ``SemanticChunker(breakpoint_threshold_type="standard_deviation")``.
    """

    default_amount = 3.0

    def scores(self, distances: np.ndarray) -> tuple[np.ndarray, float]:
        return distances, float(np.mean(distances) + self.amount * np.std(distances))


@register("interquartile")
class InterquartileChunker(BreakpointChunker):
    """Threshold: mean + ``amount`` interquartile ranges of the distances (default 1.5).

    Source: LangChain ``SemanticChunker(breakpoint_threshold_type="interquartile")``
    (the mean, not the third quartile, is the base, as there).
    """

    default_amount = 1.5

    def scores(self, distances: np.ndarray) -> tuple[np.ndarray, float]:
        q1, q3 = np.percentile(distances, [25, 75])
        return distances, float(np.mean(distances) + self.amount * (q3 - q1))


@register("gradient")
class GradientChunker(BreakpointChunker):
    """Cut where the gradient of the distances exceeds its ``amount``-th percentile (default 95).

    Source: LangChain ``SemanticChunker(breakpoint_threshold_type="gradient")``. As
    there, a text of exactly two sentences (one distance, no gradient) is cut
    between them.
    """

    default_amount = 95.0
    max_amount = 100.0

    def breakpoints(self, distances: np.ndarray) -> list[int]:
        if len(distances) == 1:
            return [0]
        return super().breakpoints(distances)

    def scores(self, distances: np.ndarray) -> tuple[np.ndarray, float]:
        gradient = np.gradient(distances, np.arange(len(distances)))
        return gradient, float(np.percentile(gradient, self.amount))
