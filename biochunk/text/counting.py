"""Token counters, and span counters that count many spans of one document fast.

A token counter (``TokenCounter``) maps a text to its size: words (``count_words``,
the default: whitespace-separated, and each CJK character one word), characters (``count_chars``), or an embedder's
tokens (``biochunk.text.tokens.EmbedderCounter``). Counting is the expensive part of
a size-bounded chunker: packing a span asks for the size of many candidate spans of
the same document. A ``SpanCounter`` is built once per document and answers
``count(start, end)``, always equal to the counter's count of ``text[start:end]`` on
its own (what the embedder sees), but without re-reading the span where the counter
allows it:

- ``chars``: the span's length;
- ``words``, and embedder tokenizers whose words are tokenised independently
  (BERT WordPiece and the like, see ``biochunk.text.tokens``): a table of the
  document's whitespace-separated words and their running token count, so a span
  costs two bisections (plus the pieces of at most two words it cuts through);
- any other counter: the span's text, counted on its own.

Text in, counts out: nothing here knows chunkers (``biochunk.chunking.sizing`` builds
the hard maximum on these) or models.
"""

from __future__ import annotations

import re
from bisect import bisect_left
from collections.abc import Callable, Mapping
from functools import cache
from itertools import accumulate

import numpy as np

TokenCounter = Callable[[str], int]

# Scripts written without spaces between words: Han ideographs (with the iteration marks
# 々〆〇), hiragana and katakana (full and half width). Whitespace words would make a
# Chinese document one "word"; each such character counts as one, as BERT tokenizers count
# it. Hangul is not here: Korean puts spaces between words. Thai, Lao, Khmer and Burmese
# need a dictionary to find words and are counted by whitespace (use chunk.counter:
# embedder for them).
CJK_CHARS = (
    "\u3005-\u3007\u3040-\u309f\u30a0-\u30ff\u31f0-\u31ff\u3400-\u4dbf\u4e00-\u9fff"
    "\uf900-\ufaff\uff66-\uff9f\U00020000-\U0003134f"
)
CJK_CHAR = re.compile(f"[{CJK_CHARS}]")
# A word: one CJK character, or a run of other characters up to whitespace or a CJK
# character. Where a boundary falls depends only on the two characters beside it, so any
# span of a text counts the words of the text it holds (SpanCounter's promise). Without CJK
# characters these are exactly str.split's words; CJK punctuation (。，) is not a CJK
# character, so it counts where it stands alone, as ". " would not.
CJK_WORD = re.compile(f"[{CJK_CHARS}]|[^\\s{CJK_CHARS}]+")


def has_cjk(text: str) -> bool:
    """Whether ``text`` holds a CJK character (``CJK_CHARS``); an ASCII text is answered without a scan."""
    return not text.isascii() and CJK_CHAR.search(text) is not None


def count_words(text: str) -> int:
    """Default token counter: whitespace words, each CJK character a word (offline, deterministic, fast).

    A text without CJK characters counts ``len(text.split())``, as it always has.
    """
    if not has_cjk(text):
        return len(text.split())
    return sum(1 for _ in CJK_WORD.finditer(text))


def count_chars(text: str) -> int:
    """``chunk.counter: chars``: characters, the natural unit of a character-bounded splitter."""
    return len(text)


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


def cjk_word_bounds(text: str) -> tuple[list[int], list[int]]:
    """Starts and ends of ``count_words``'s words of ``text``: each CJK character a word of its own."""
    if not has_cjk(text):
        return word_bounds(text)
    spans = [m.span() for m in CJK_WORD.finditer(text)]
    return [s for s, _ in spans], [e for _, e in spans]


class WordTable(SpanCounter):
    """Counters that count each word on its own (words; separable tokenizers).

    ``word_tokens`` maps a whitespace-separated word (or a piece of one) to its count; None
    counts ``count_words``'s words, 1 each (a piece of one counts 1 too). The document's words and their running count are computed once; a span
    counts the words that start in it, corrected for the at most two words it cuts
    through, whose pieces are counted on their own. Exact: equals the counter on
    ``text[start:end]`` for every span.
    """

    __slots__ = ("cum", "ends", "starts", "word_tokens")

    def __init__(self, text: str, word_tokens: Mapping[str, int] | None = None) -> None:
        super().__init__(text)
        self.starts, self.ends = word_bounds(text) if word_tokens is not None else cjk_word_bounds(text)
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
