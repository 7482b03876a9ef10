"""Recursive character splitting: paragraphs, then lines, sentences, clauses, words, characters."""

from __future__ import annotations

import re
from bisect import bisect_left, bisect_right
from itertools import accumulate
from typing import Any, Sequence

from biochunk.chunking.base import Chunk, Chunker, RewriterFactory, register
from biochunk.chunking.sizing import fit, make_counter
from biochunk.text.counting import SpanCounter, TokenCounter, count_words, span_counter
from biochunk.text.segment import ABBREVIATIONS, FINAL_IF_STARTER

Span = tuple[int, int]


def _sentence_separator() -> str:
    # Whitespace after . ! ? (and closing brackets) before a capital, unless the period
    # closes an abbreviation ("Fig. 2", "e.g. Aspirin") or an initial ("J. Smith");
    # "et al." and "sp." usually precede a name, so at this coarse level they never end
    # a sentence. Speed matters (this level scans every long paragraph): the pattern
    # opens with a character class so the engine jumps to punctuation, a cheap
    # lookahead drops decimals and lower-case continuations, and the guards are one
    # lookbehind per abbreviation length (lookbehinds must be fixed-width).
    words = ABBREVIATIONS | FINAL_IF_STARTER
    by_len: dict[int, set[str]] = {}
    for w in words:
        for v in (w, w.capitalize(), w.upper()):
            by_len.setdefault(len(v), set()).add(re.escape(v))
    guards = "".join(rf"(?<!\b(?:{'|'.join(sorted(vs))})\.)" for _, vs in sorted(by_len.items()))
    return rf"[.!?](?=[\"')\]]*\s+[\"'(\[]?[A-Z]){guards}(?<!\b[A-Z]\.)[\"')\]]*\s+"


# The splitter table, coarsest first (regular expressions). A piece too long for a
# chunk is split at the first level that occurs in it, and only the parts still too
# long go on to the finer levels. "" splits into characters. With keep="end" the
# matched separator stays at the end of the left part, so a sentence keeps its period.
SEPARATORS: tuple[str, ...] = (
    r"\n[ \t]*\n\s*",  # paragraphs (blank lines)
    r"\n",  # lines: section titles, list items
    _sentence_separator(),  # sentences
    r"[;:]\s+",  # clauses after ; and : (the cut falls after the whitespace)
    r",\s+",  # clauses after commas
    r"\s+",  # words
    "",  # characters
)
# LangChain's RecursiveCharacterTextSplitter defaults (literal strings, keep="start"),
# for parity checks and for comparisons with published LangChain numbers.
LANGCHAIN_SEPARATORS: tuple[str, ...] = ("\n\n", "\n", " ", "")
KEEP = ("start", "end")
_WORD_START = re.compile(r"(?<!\S)\S")


@register("recursive")
class RecursiveChunker(Chunker):
    """At most ``chunk_size`` characters per chunk, ``chunk_overlap`` characters shared.

    Source: LangChain's ``RecursiveCharacterTextSplitter`` (langchain-text-splitters),
    re-implemented on spans: the same choice of separator, the same greedy merge and
    the same overlap rule, so ``RecursiveChunker(separators=LANGCHAIN_SEPARATORS,
    keep="start", regex=False, fill_overlap=False)`` returns LangChain's chunks
    exactly, each with its offsets. The default table adds sentence and clause
    levels that respect biomedical abbreviations. Linear time: each level scans only
    the pieces that the coarser level left too long, and the merge moves from chunk
    to chunk by bisection.

    Overlap: LangChain carries over only whole parts no longer than the overlap, so
    chunks cut at paragraphs or sentences usually share nothing. With
    ``fill_overlap`` (the default) each chunk after the first starts instead at the
    first word within ``chunk_overlap`` characters before the previous chunk's end
    (never growing past ``chunk_size``): the same chunk ends as LangChain, and
    starts that are the same or earlier.

    With ``max_tokens`` set, every chunk also holds at most that many tokens of
    ``counter``. Parts and chunks are measured through one ``SpanCounter`` per
    document (``biochunk.chunking.sizing``): for the embedder's tokenizer each
    distinct word is tokenised once and a span costs two bisections, never a
    re-tokenisation. Every chunk's own count is checked against the bound (a chunk
    whose overlap would break it keeps LangChain's start; one that counts more than
    its parts, a cut inside a word, is cut further). Covers every non-whitespace
    character of the input.
    """

    def __init__(
        self,
        chunk_size: int = 1000,
        chunk_overlap: int = 100,
        separators: Sequence[str] = SEPARATORS,
        keep: str = "end",
        regex: bool = True,
        fill_overlap: bool = True,
        counter: TokenCounter = count_words,
        max_tokens: int | None = None,
    ) -> None:
        super().__init__(counter, max_tokens)
        if chunk_size < 1:
            raise ValueError(f"chunk.chunk_size must be >= 1, got {chunk_size}")
        if not 0 <= chunk_overlap < chunk_size:
            raise ValueError(
                f"chunk.chunk_overlap must be in [0, chunk.chunk_size - 1] = [0, {chunk_size - 1}], got {chunk_overlap}"
            )
        if keep not in KEEP:
            raise ValueError(f"keep must be one of {KEEP}, got {keep!r}")
        if not separators:
            raise ValueError("separators must name at least one separator")
        self.chunk_size = chunk_size
        self.chunk_overlap = chunk_overlap
        self.keep = keep
        self.fill_overlap = fill_overlap
        # None stands for "" (split into characters).
        self._seps = [None if not s else re.compile(s if regex else re.escape(s)) for s in separators]

    @classmethod
    def from_params(cls, params: Any, encoder: Any = None, rewriter: RewriterFactory | None = None) -> "RecursiveChunker":
        return cls(
            chunk_size=params.chunk_size,
            chunk_overlap=params.chunk_overlap,
            counter=make_counter(params.counter, encoder),
            max_tokens=params.max_tokens,
        )

    def spans(self, text: str) -> list[tuple[int, int, dict[str, Any]]]:
        return [(s, e, {}) for s, e, _ in self._spans(text, span_counter(self.counter, text, self.max_tokens))]

    def chunk_batch(self, texts: Sequence[str]) -> list[list[Chunk]]:
        out = []
        for text in texts:
            # Each span is counted once, through the document's span counter: no second count.
            spans = self._spans(text, span_counter(self.counter, text, self.max_tokens))
            out.append([Chunk(text[s:e], s, e, n, self.name, metadata={}) for s, e, n in spans])
        return out

    def _spans(self, text: str, counts: SpanCounter) -> list[tuple[int, int, int]]:
        """``(start, end, tokens)`` of every chunk."""
        cores: list[Span] = []
        self._split(text, 0, len(text), 0, counts, cores)
        out = []
        prev: Span | None = None
        for s, e in cores:
            # A core is LangChain's chunk; it may start earlier to carry the overlap.
            a = self._overlap_start(text, prev, s, e) if self.fill_overlap and prev else s
            prev = (s, e)
            if self.max_tokens is None:
                out.append((a, e, counts.count(a, e)))
                continue
            # The parts' token counts add up to the chunk's, except where a cut falls inside
            # a word; check each chunk's own count (and keep it).
            n = counts.count(a, e) if a < s else -1
            if a < s and n <= self.max_tokens:
                out.append((a, e, n))
            else:
                out.extend(fit(text, s, e, counts, self.max_tokens))
        return out

    def _overlap_start(self, text: str, prev: Span, s: int, e: int) -> int:
        """Where a chunk starts so that it repeats up to ``chunk_overlap`` characters before it.

        LangChain keeps only whole parts as overlap, so above the word level (a
        sentence longer than the overlap) chunks do not overlap at all. Here the chunk
        reaches back to the first word that starts within ``chunk_overlap``
        characters of the previous chunk's end, without growing past ``chunk_size``.
        """
        lo = max(prev[1] - self.chunk_overlap, prev[0], e - self.chunk_size)
        if lo >= s:
            return s
        m = _WORD_START.search(text, lo, s)
        return m.start() if m else s

    # -- internals -------------------------------------------------------------

    # Parts of a piece are contiguous, so a piece is its list of boundaries ``bounds``
    # (part k is ``bounds[k]:bounds[k + 1]``) and the size of any run of parts is a
    # difference of two boundaries. The merge then jumps from chunk to chunk by
    # bisection instead of adding parts one at a time.

    def _split(self, text: str, s: int, e: int, level: int, counts: SpanCounter, out: list[Span]) -> None:
        piece = text[s:e]
        seps = self._seps
        # The first separator present in the piece; "" (None) always applies. As in
        # LangChain, after characters or a last separator that is absent (one part)
        # there is nothing finer to try.
        i, found = level, False
        while (sep := seps[i]) is not None:
            if sep.search(piece) is not None:
                found = True
                break
            if i == len(seps) - 1:
                break
            i += 1
        finer = found and i + 1 < len(seps)
        if sep is None:
            bounds = list(range(s, e + 1))
        else:
            cuts = [s + (m.start() if self.keep == "start" else m.end()) for m in sep.finditer(piece)]
            bounds = list(dict.fromkeys([s, *cuts, e]))  # drops empty parts, keeps order
        toks = None if self.max_tokens is None else [0, *accumulate(counts.count(a, b) for a, b in zip(bounds, bounds[1:]))]
        size, budget = self.chunk_size, self.max_tokens
        run = 0  # first part of the current run of parts small enough to merge
        for k in range(len(bounds) - 1):
            if bounds[k + 1] - bounds[k] < size and (toks is None or toks[k + 1] - toks[k] <= budget):
                continue
            if k > run:
                self._merge(text, bounds, toks, run, k, out)
            if finer:
                self._split(text, bounds[k], bounds[k + 1], i + 1, counts, out)
            else:
                out.append((bounds[k], bounds[k + 1]))
            run = k + 1
        if run < len(bounds) - 1:
            self._merge(text, bounds, toks, run, len(bounds) - 1, out)

    def _merge(self, text: str, bounds: list[int], toks: list[int] | None, lo: int, hi: int, out: list[Span]) -> None:
        """LangChain's ``_merge_splits`` (separator "") over parts ``lo .. hi - 1``, token bound added.

        LangChain adds parts while the chunk stays within ``chunk_size``, emits it, then
        drops parts from its front until what is left is at most ``chunk_overlap`` long
        and leaves room for the next part; the kept parts open the next chunk.
        """
        size, overlap, budget = self.chunk_size, self.chunk_overlap, self.max_tokens
        while True:
            # k: the first part that does not fit after part lo (the chunk is lo .. k - 1).
            k = bisect_right(bounds, bounds[lo] + size, lo, hi + 1) - 1
            if toks is not None:
                k = min(k, bisect_right(toks, toks[lo] + budget, lo, hi + 1) - 1)
            if k >= hi:
                self._emit(text, bounds[lo], bounds[hi], out)
                return
            self._emit(text, bounds[lo], bounds[k], out)
            new = max(bisect_left(bounds, bounds[k] - overlap, lo, k), bisect_left(bounds, bounds[k + 1] - size, lo, k))
            if toks is not None:
                new = max(new, bisect_left(toks, toks[k + 1] - budget, lo, k))
            lo = new

    @staticmethod
    def _emit(text: str, s: int, e: int, out: list[Span]) -> None:
        # LangChain strips each chunk; a chunk of only whitespace is dropped.
        while s < e and text[s].isspace():
            s += 1
        while e > s and text[e - 1].isspace():
            e -= 1
        if s < e:
            out.append((s, e))
