"""Proposition chunks: the generator rewrites each sentence into atomic statements."""

from __future__ import annotations

from typing import Any, Callable, Sequence

from biochunk.chunking.base import Chunk, Chunker, RewriterFactory, register
from biochunk.chunking.sizing import enforce_max, make_counter
from biochunk.text.counting import TokenCounter, count_words, span_counter
from biochunk.text.segment import sentence_spans

# Sentences in, each sentence's propositions out (an empty list when the model gave none).
ProposeFn = Callable[[Sequence[str]], list[list[str]]]


@register("proposition")
class PropositionChunker(Chunker):
    """Sentences rewritten into propositions by the generator, grouped into chunks of <= ``max_words``.

    Source: the "LLM-based proposition" strategy of the clinical decision-support
    chunking study (temperature 0.2, at most 256 new tokens, chunks of at most 500
    words of propositions). A proposition is not a substring of the input, so a chunk
    is the span of the source sentences it was written from (``text[start:end] ==
    chunk.text`` holds) and carries its propositions in ``metadata["propositions"]``
    as ``[proposition, sentence start, sentence end]``; the embedder reads the
    propositions (``biochunk.vectors.embedding_text``). A sentence for which the model
    writes nothing usable stands for itself (``metadata["fallback"]`` counts them).
    Sentences over ``max_tokens`` are cut first, so the hard maximum holds on the
    source spans. Covers every non-whitespace character; all sentences of a batch
    go to the generator in one call.
    """

    def __init__(
        self, propose: ProposeFn, max_words: int = 500, counter: TokenCounter = count_words, max_tokens: int | None = None
    ) -> None:
        super().__init__(counter, max_tokens)
        if max_words < 1:
            raise ValueError(f"chunk.max_words must be >= 1, got {max_words}")
        self.propose = propose
        self.max_words = max_words

    @classmethod
    def needs_rewriter(cls, params: Any) -> bool:
        return True

    @classmethod
    def from_params(cls, params: Any, encoder: Any = None, rewriter: RewriterFactory | None = None) -> "PropositionChunker":
        if rewriter is None:
            raise ValueError(
                "chunk.method proposition rewrites sentences with chunk.generator, so the chunker must be built "
                "with a rewriter (chunking.build(..., rewriter=biochunk.generation.rewrite.Rewriter))"
            )
        return cls(
            propose=rewriter(params.generator, temperature=0.2, seed=42).propositions,
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
        proposed = iter(self.propose(flat))
        out = []
        for text, us, c in zip(texts, units, counts):
            props = [next(proposed) for _ in us]
            out.append(self._build(text, self._group(text, us, props, c), c))
        return out

    def _group(self, text: str, units: list[tuple[int, int]], props: list[list[str]], counts: Any) -> list[tuple[int, int, dict[str, Any]]]:
        """Consecutive sentences while their propositions stay within ``max_words`` (and the
        source span within ``max_tokens``)."""
        chunks: list[tuple[int, int, dict[str, Any]]] = []
        words = 0
        for (s, e), ps in zip(units, props):
            fallback = not ps
            ps = ps or [text[s:e]]
            w = sum(count_words(p) for p in ps)
            rows = [[p, s, e] for p in ps]
            if chunks:
                start, _, meta = chunks[-1]
                fits = words + w <= self.max_words and (self.max_tokens is None or counts.count(start, e) <= self.max_tokens)
                if fits:
                    meta["propositions"].extend(rows)
                    meta["fallback"] += fallback
                    chunks[-1] = (start, e, meta)
                    words += w
                    continue
            chunks.append((s, e, {"propositions": rows, "fallback": int(fallback)}))
            words = w
        return chunks
