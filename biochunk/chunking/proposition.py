"""Proposition chunks: the generator rewrites each sentence into atomic statements."""

from __future__ import annotations

from typing import Any, Callable, Sequence

import numpy as np

from biochunk.chunking.base import Chunk, Chunker, RewriterFactory, register
from biochunk.chunking.sizing import enforce_max, make_counter
from biochunk.text.counting import TokenCounter, count_words, span_counter
from biochunk.text.segment import sentence_spans

# Sentences in, each sentence's propositions out (an empty list when the model gave none).
ProposeFn = Callable[[Sequence[str]], list[list[str]]]
EmbedFn = Callable[[Sequence[str]], np.ndarray]


@register("proposition")
class PropositionChunker(Chunker):
    """Sentences rewritten into propositions by the generator, grouped into chunks of <= ``max_words``
    of related propositions.

    Source: the "LLM-based proposition" strategy of the clinical decision-support
    chunking study (§2.2.3: temperature 0.2, at most 256 new tokens, propositions appended
    to a chunk until it would exceed about 500 words, "or if a new proposition was unrelated
    to the current chunk's focus, a new chunk was started"). The study does not say how it
    judged "unrelated"; here (a reconstruction) a sentence's propositions start a new chunk
    when the cosine of their mean embedding to the chunk's centroid falls below
    ``threshold`` (chunk.threshold, the study's 0.8 similarity of §2.2.4). A proposition is not a substring of the input, so a chunk
    is the span of the source sentences it was written from (``text[start:end] ==
    chunk.text`` holds) and carries its propositions in ``metadata["propositions"]``
    as ``[proposition, sentence start, sentence end]``; the embedder reads the
    propositions (``biochunk.vectors.embedding_text``). A sentence for which the model
    writes nothing usable stands for itself (``metadata["fallback"]`` counts them).
    Sentences over ``max_tokens`` are cut first, so the hard maximum holds on the
    source spans. Covers every non-whitespace character; all sentences of a batch
    go to the generator in one call.
    """

    needs_encoder = True

    def __init__(
        self,
        propose: ProposeFn,
        embed: EmbedFn,
        threshold: float = 0.8,
        max_words: int = 500,
        counter: TokenCounter = count_words,
        max_tokens: int | None = None,
    ) -> None:
        super().__init__(counter, max_tokens)
        if max_words < 1:
            raise ValueError(f"chunk.max_words must be >= 1, got {max_words}")
        if not -1.0 <= threshold <= 1.0:
            raise ValueError(f"chunk.threshold must be in [-1, 1], got {threshold}")
        self.propose = propose
        self.embed = embed
        self.threshold = threshold
        self.max_words = max_words

    @classmethod
    def needs_rewriter(cls, params: Any) -> bool:
        return True

    @classmethod
    def from_params(cls, params: Any, encoder: Any = None, rewriter: RewriterFactory | None = None) -> "PropositionChunker":
        if encoder is None:
            raise ValueError("chunk.method proposition needs an encoder (a new chunk starts at an unrelated proposition)")
        if rewriter is None:
            raise ValueError(
                "chunk.method proposition rewrites sentences with chunk.generator, so the chunker must be built "
                "with a rewriter (chunking.build(..., rewriter=biochunk.generation.rewrite.Rewriter))"
            )
        return cls(
            propose=rewriter(params.generator, temperature=0.2, seed=42).propositions,
            embed=encoder.encode,
            threshold=params.threshold,
            max_words=params.max_words,
            counter=make_counter(params.counter, encoder),
            max_tokens=params.max_tokens,
        )

    def chunk_batch(self, texts: Sequence[str]) -> list[list[Chunk]]:
        counts = [span_counter(self.counter, t, self.max_tokens) for t in texts]
        units = [
            [(s, e) for s, e, _ in enforce_max(t, [(s, e, {}) for s, e in sentence_spans(t)], c, self.max_tokens)]
            for t, c in zip(texts, counts)
        ]
        flat = [t[s:e] for t, us in zip(texts, units) for s, e in us]
        proposed = self.propose(flat)
        # A sentence the model wrote nothing usable for stands for itself.
        props = [ps or [sentence] for ps, sentence in zip(proposed, flat)]
        fallbacks = [not ps for ps in proposed]
        # Every proposition of the batch in one encoder call; one mean vector per sentence.
        vecs = self._sentence_vectors(props)
        out, i = [], 0
        for text, us, c in zip(texts, units, counts):
            n = len(us)
            out.append(self._build(text, self._group(us, props[i : i + n], fallbacks[i : i + n], vecs[i : i + n], c), c))
            i += n
        return out

    def _sentence_vectors(self, props: list[list[str]]) -> np.ndarray:
        """Per sentence, the sum of its propositions' unit vectors (a chunk's centroid is the sum
        of its sentences': every proposition weighs the same)."""
        flat = [p for ps in props for p in ps]
        if not flat:
            return np.zeros((0, 1))
        vecs = np.asarray(self.embed(flat), dtype=np.float64)
        vecs = vecs / np.maximum(np.linalg.norm(vecs, axis=1, keepdims=True), 1e-12)
        ends = np.cumsum([len(ps) for ps in props])
        return np.add.reduceat(vecs, ends - np.array([len(ps) for ps in props]), axis=0)

    def _group(
        self, units: list[tuple[int, int]], props: list[list[str]], fallbacks: list[bool], vecs: np.ndarray, counts: Any
    ) -> list[tuple[int, int, dict[str, Any]]]:
        """Consecutive sentences while their propositions stay within ``max_words`` (and the
        source span within ``max_tokens``) and on the chunk's focus (cosine to its centroid
        >= ``threshold``)."""
        chunks: list[tuple[int, int, dict[str, Any]]] = []
        words = 0
        centroid = np.zeros(vecs.shape[1] if vecs.ndim == 2 else 1)
        for (s, e), ps, fallback, v in zip(units, props, fallbacks, vecs):
            w = sum(count_words(p) for p in ps)
            rows = [[p, s, e] for p in ps]
            if chunks:
                start, _, meta = chunks[-1]
                fits = words + w <= self.max_words and (self.max_tokens is None or counts.count(start, e) <= self.max_tokens)
                norm = float(np.linalg.norm(centroid) * np.linalg.norm(v))
                related = norm > 0 and float(v @ centroid) / norm >= self.threshold
                if fits and related:
                    meta["propositions"].extend(rows)
                    meta["fallback"] += fallback
                    chunks[-1] = (start, e, meta)
                    words += w
                    centroid = centroid + v
                    continue
            chunks.append((s, e, {"propositions": rows, "fallback": int(fallback)}))
            words = w
            centroid = v
        return chunks
