"""Sizes shared by the chunkers: which token counter, and the hard maximum.

A strategy decides where topics change; ``chunk.max_tokens`` is a promise about
every chunk whatever the strategy. ``fit`` keeps that promise by cutting an
oversized span at the coarsest units that fit: sentences, then words, then
characters. Spans are counted with the ``SpanCounter`` of their document
(``biochunk.text.counting``), built once per document, so packing many candidate
spans never re-reads them where the counter allows it.
"""

from __future__ import annotations

import itertools
from typing import Any, Callable, Sequence

from biochunk.text.counting import SpanCounter, TokenCounter, count_chars, count_words, span_counter
from biochunk.text.segment import sentence_spans, word_spans
from biochunk.text.tokens import embedder_counter

COUNTERS = ("words", "chars", "embedder")

Span = tuple[int, int]
Counted = tuple[int, int, int]  # start, end, tokens


def make_counter(kind: str, encoder: Any = None) -> TokenCounter:
    """``chunk.counter``: whitespace words, characters, or the embedder's own tokens."""
    if kind == "words":
        return count_words
    if kind == "chars":
        return count_chars
    if kind == "embedder":
        name = getattr(encoder, "model_name", None)
        if name is None:
            raise ValueError(
                "chunk.counter: embedder counts the embed model's tokens, so the chunker must be built with "
                "the encoder (embed.model; building it loads no weights); or set chunk.counter: words"
            )
        return embedder_counter(name)
    raise ValueError(f"chunk.counter must be one of {', '.join(COUNTERS)}, got {kind!r}")


# -- the hard maximum ---------------------------------------------------------------------


def _char_spans(text: str, start: int, end: int) -> list[Span]:
    return [(i, i + 1) for i in range(start, end) if not text[i].isspace()]


# Finer and finer units to cut an oversized span at.
_LEVELS: tuple[Callable[[str, int, int], list[Span]], ...] = (sentence_spans, word_spans, _char_spans)


def fit(text: str, start: int, end: int, counter: TokenCounter | SpanCounter, max_tokens: int | None) -> list[Counted]:
    """``text[start:end]`` as consecutive ``(start, end, tokens)`` of at most ``max_tokens`` tokens.

    ``counter`` is a token counter or a ``SpanCounter`` of ``text`` (pass one when
    fitting many spans of the same document). The spans together cover every
    non-whitespace character of the range; each carries its exact count, so a
    caller need not count again. Only a single character that alone counts more
    than ``max_tokens`` can stay over.
    """
    spans = span_counter(counter, text)
    n = spans.count(start, end)
    if max_tokens is None or n <= max_tokens:
        return [(start, end, n)]
    return _fit(text, start, end, spans, max_tokens, 0, n)


def _fit(text: str, start: int, end: int, spans: SpanCounter, max_tokens: int, level: int, n: int) -> list[Counted]:
    while level < len(_LEVELS):
        units = _LEVELS[level](text, start, end)
        level += 1
        if len(units) > 1:
            return _pack(text, units, spans, max_tokens, level)
    return [(start, end, n)]


def _pack(text: str, units: Sequence[Span], spans: SpanCounter, max_tokens: int, level: int) -> list[Counted]:
    """Greedy packing: each span takes as many following units as fit."""
    out: list[Counted] = []
    i, n = 0, len(units)

    def count(j: int) -> int:
        return spans.count(units[i][0], units[j][1])

    while i < n:
        best = count(i)
        if best > max_tokens:
            out.extend(_fit(text, units[i][0], units[i][1], spans, max_tokens, level, best))
            i += 1
            continue
        # Gallop then bisect for the last unit that still fits: O(log n) counts per span.
        lo, step = i, 1
        while lo + step < n and (c := count(lo + step)) <= max_tokens:
            lo, step, best = lo + step, step * 2, c
        hi = min(lo + step, n)  # first index known not to fit (or n)
        while hi - lo > 1:
            mid = (lo + hi) // 2
            if (c := count(mid)) <= max_tokens:
                lo, best = mid, c
            else:
                hi = mid
        out.append((units[i][0], units[lo][1], best))
        i = lo + 1
    return out


def enforce_max(
    text: str, spans: Sequence[tuple[int, int, dict[str, Any]]], counter: TokenCounter | SpanCounter, max_tokens: int | None
) -> list[tuple[int, int, dict[str, Any]]]:
    """Cut every span over ``max_tokens``; the parts keep the span's metadata."""
    if max_tokens is None:
        return list(spans)
    counts = span_counter(counter, text)
    out = []
    for s, e, meta in spans:
        out.extend((a, b, dict(meta)) for a, b, _ in fit(text, s, e, counts, max_tokens))
    return out


# -- boundary-repair overlap ----------------------------------------------------------------


def carry_back(
    text: str, spans: Sequence[Span], counts: SpanCounter, overlap: int, fits: Callable[[int, int], bool]
) -> list[Span]:
    """Each span after the first also repeats the last words of its predecessor.

    The clinical decision-support study's adaptive chunks share up to 30 tokens at each
    boundary, so that a sentence cut from the one it depends on still carries its lead-in.
    A span starts instead at the earliest word start of the previous span such that the
    words carried count at most ``overlap`` tokens of ``counts`` and ``fits(start, end)``
    still holds (the chunker's caps); a span whose caps leave no room keeps its start.
    Ends never move, so every character stays covered and offsets stay exact.
    """
    out = list(spans[:1])
    for (ps, _), (s, e) in itertools.pairwise(spans):
        start = s
        for word_start, _ in reversed(word_spans(text, ps, s)):
            if counts.count(word_start, s) > overlap or not fits(word_start, e):
                break
            start = word_start
        out.append((start, e))
    return out
