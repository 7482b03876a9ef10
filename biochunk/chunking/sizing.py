"""Sizes shared by the chunkers: which token counter, span counts, and the hard maximum.

A strategy decides where topics change; ``chunk.max_tokens`` is a promise about
every chunk whatever the strategy. ``fit`` keeps that promise by cutting an
oversized span at the coarsest units that fit: sentences, then words, then
characters.

Counting is the expensive part of a size-bounded chunker: packing a span asks for
the size of many candidate spans of the same document. A ``SpanCounter`` is built
once per document and answers ``count(start, end)``, always equal to the counter's
count of ``text[start:end]`` on its own (what the embedder sees), but without
re-reading the span where the counter allows it:

- ``chars``: the span's length;
- ``words``, and embedder tokenizers whose words are tokenised independently
  (BERT WordPiece and the like, see ``biochunk.text.tokens``): a table of the
  document's whitespace-separated words and their running token count, so a span
  costs two bisections (plus the pieces of at most two words it cuts through);
- any other counter: the span's text, counted on its own.
"""

from __future__ import annotations

import re
from bisect import bisect_left
from functools import cache
from itertools import accumulate
from typing import Any, Callable, Mapping, Sequence

import numpy as np

from biochunk.chunking.base import TokenCounter, count_words
from biochunk.text.segment import sentence_spans, word_spans

COUNTERS = ("words", "chars", "embedder")

Span = tuple[int, int]
Counted = tuple[int, int, int]  # start, end, tokens


def count_chars(text: str) -> int:
    """``chunk.counter: chars``: characters, the natural unit of a character-bounded splitter."""
    return len(text)


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
        from biochunk.text.tokens import embedder_counter

        return embedder_counter(name)
    raise ValueError(f"chunk.counter must be one of {', '.join(COUNTERS)}, got {kind!r}")


# -- span counters ------------------------------------------------------------------------


class SpanCounter:
    """Counts of spans of one document: ``count(start, end) == counter(text[start:end])``."""

    __slots__ = ("text",)

    def __init__(self, text: str) -> None:
        self.text = text

    def count(self, start: int, end: int) -> int:
        raise NotImplementedError


class Standalone(SpanCounter):
    """Any counter: the span's text, counted on its own."""

    __slots__ = ("counter",)

    def __init__(self, counter: TokenCounter, text: str) -> None:
        super().__init__(text)
        self.counter = counter

    def count(self, start: int, end: int) -> int:
        return self.counter(self.text[start:end])


class CharSpans(SpanCounter):
    __slots__ = ()

    def count(self, start: int, end: int) -> int:
        return max(0, end - start)


# Below this length a regular expression finds the words faster than numpy starts up.
_NUMPY_FROM = 4096
_WORD = re.compile(r"\S+")


@cache
def _space_table() -> np.ndarray:
    """``table[c]``: whether code point ``c`` is whitespace to ``str.split``; the last entry stands for all above."""
    top = max(c for c in range(0x110000) if chr(c).isspace()) + 1
    table = np.zeros(top + 1, dtype=bool)
    table[[c for c in range(top) if chr(c).isspace()]] = True
    return table


def word_bounds(text: str) -> tuple[list[int], list[int]]:
    """Starts and ends of the whitespace-separated words of ``text`` (``str.split``'s words, in order)."""
    if len(text) < _NUMPY_FROM:
        spans = [m.span() for m in _WORD.finditer(text)]
        return [s for s, _ in spans], [e for _, e in spans]
    table = _space_table()
    codes = np.frombuffer(text.encode("utf-32-le", "surrogatepass"), dtype=np.uint32)
    word = ~table[np.minimum(codes, len(table) - 1)]
    edges = np.flatnonzero(np.diff(word, prepend=False, append=False))  # alternately a start, an end
    return edges[0::2].tolist(), edges[1::2].tolist()


class WordTable(SpanCounter):
    """Counters that count each whitespace-separated word on its own (words; separable tokenizers).

    ``word_tokens`` maps a word (or a piece of one) to its count; None counts 1 per
    word. The document's words and their running count are computed once; a span
    counts the words that start in it, corrected for the at most two words it cuts
    through, whose pieces are counted on their own. Exact: equals the counter on
    ``text[start:end]`` for every span.
    """

    __slots__ = ("starts", "ends", "cum", "word_tokens")

    def __init__(self, text: str, word_tokens: Mapping[str, int] | None = None) -> None:
        super().__init__(text)
        self.starts, self.ends = word_bounds(text)
        self.word_tokens = word_tokens
        # str.split cuts at exactly the whitespace word_bounds uses: the same words, in order.
        self.cum = None if word_tokens is None else [0, *accumulate(map(word_tokens.__getitem__, text.split()))]

    def _piece(self, start: int, end: int) -> int:
        return 1 if self.word_tokens is None else self.word_tokens[self.text[start:end]]

    def count(self, start: int, end: int) -> int:
        if start >= end:
            return 0
        starts, ends = self.starts, self.ends
        lo = bisect_left(starts, start)  # the words that start in [start, end) are lo .. hi - 1
        hi = bisect_left(starts, end)
        n = hi - lo if self.cum is None else self.cum[hi] - self.cum[lo]
        if lo and ends[lo - 1] > start:  # the span opens inside a word
            if ends[lo - 1] >= end:
                return self._piece(start, end)
            n += self._piece(start, ends[lo - 1])
        if hi > lo and ends[hi - 1] > end:  # the span closes inside a word
            whole = 1 if self.cum is None else self.cum[hi] - self.cum[hi - 1]
            n += self._piece(starts[hi - 1], end) - whole
        return n


def span_counter(counter: TokenCounter | SpanCounter, text: str, max_tokens: int | None = 0) -> SpanCounter:
    """The fastest exact ``SpanCounter`` of ``counter`` over ``text`` (a SpanCounter is returned as is).

    ``max_tokens`` None says that each span will be counted once (no bound to fit).
    """
    if isinstance(counter, SpanCounter):
        return counter
    if counter is count_chars:
        return CharSpans(text)
    if counter is count_words:
        # Splitting a span again costs less than building the word table, unless the
        # same document is measured many times over (fit's packing).
        return Standalone(counter, text) if max_tokens is None else WordTable(text)
    for_document = getattr(counter, "for_document", None)  # the embedder's counter
    return for_document(text) if for_document is not None else Standalone(counter, text)


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
