"""Entity-aware sliding windows over words: no window boundary falls inside an entity.

Windows are built on whitespace words, so a single-word name ("receptor-complex",
"COX-2") is never cut; the rules below keep multi-word names ("Tumor Necrosis Factor")
whole as well.
"""

from __future__ import annotations

from bisect import bisect_right
from typing import Sequence

from biochunk.chunking.biomedical.entities import Span

# The paper's window: 8 words, a new window every 3 words, lengths kept within 5..12
# words unless keeping an entity whole needs more (a window end inside a 6-word name).
WINDOW = 8
STRIDE = 3
MIN_WORDS = 5
MAX_WORDS = 12

TokenRange = tuple[int, int]  # [i, j) word indices


def entity_ranges(words: Sequence[Span], entities: Sequence[Span]) -> list[TokenRange]:
    """Each entity as the range of words it overlaps; sorted, overlapping ranges merged."""
    starts = [s for s, _ in words]
    out: list[TokenRange] = []
    for s, e in sorted(entities):
        i = max(bisect_right(starts, s) - 1, 0)
        while i < len(words) and words[i][1] <= s:
            i += 1
        j = i
        while j < len(words) and words[j][0] < e:
            j += 1
        if j == i:
            continue  # an entity in whitespace only: nothing to keep whole
        if out and i < out[-1][1]:
            out[-1] = (out[-1][0], max(out[-1][1], j))
        else:
            out.append((i, j))
    return out


def _inside(k: int, ranges: Sequence[TokenRange]) -> TokenRange | None:
    """The entity range that boundary ``k`` (between words k-1 and k) would cut, if any."""
    for a, b in ranges:
        if a < k < b:
            return (a, b)
        if a >= k:
            break
    return None


def snap(i: int, j: int, ranges: Sequence[TokenRange]) -> TokenRange:
    """Widen ``[i, j)`` so that neither boundary cuts an entity."""
    cut = _inside(i, ranges)
    if cut:
        i = cut[0]
    cut = _inside(j, ranges)
    if cut:
        j = cut[1]
    return i, j


def window_ranges(
    n_words: int,
    ranges: Sequence[TokenRange],
    window: int = WINDOW,
    stride: int = STRIDE,
    min_words: int = MIN_WORDS,
    max_words: int = MAX_WORDS,
) -> list[TokenRange]:
    """Word ranges of the entity-aware windows over ``n_words`` words.

    Nominal windows start every ``stride`` words and hold ``window`` words; then:

    - a start inside an entity moves past it, to the word after the entity. The entity is
      already whole in an earlier window (the one with the last nominal start at or before
      the entity's first word, whose end was extended over it), so moving back would only
      repeat it;
    - a window shorter than ``min_words`` after that move is lengthened to ``min_words``;
    - an end inside an entity is extended to the entity's end: the one case where a window
      may exceed ``max_words``.

    Hence no boundary ever cuts an entity, and every entity lies whole in some window.
    Only a sentence with fewer than ``min_words`` words left gives a shorter window.
    """
    if not 1 <= min_words <= window <= max_words:
        raise ValueError(f"need 1 <= min_words <= window <= max_words, got {min_words}, {window}, {max_words}")
    if stride < 1:
        raise ValueError(f"window stride must be >= 1, got {stride}")
    out: list[TokenRange] = []
    for nominal in range(0, n_words, stride):
        start = nominal
        cut = _inside(start, ranges)
        if cut:
            start = cut[1]
        if start >= n_words:
            break
        end = min(max(nominal + window, start + min_words), n_words)
        cut = _inside(end, ranges)
        if cut:
            end = cut[1]
        if out and out[-1][0] == start:
            out[-1] = (start, max(end, out[-1][1]))  # two starts moved past one entity: keep the longer
        elif not (out and end <= out[-1][1]):  # else nothing new: inside the previous window
            out.append((start, end))
        if end >= n_words:
            break
    return out


def entity_windows(
    words: Sequence[Span],
    entities: Sequence[Span],
    window: int = WINDOW,
    stride: int = STRIDE,
    min_words: int = MIN_WORDS,
    max_words: int = MAX_WORDS,
) -> list[Span]:
    """Character spans of the entity-aware windows over ``words`` (see ``window_ranges``)."""
    ranges = entity_ranges(words, entities)
    return [(words[i][0], words[j - 1][1]) for i, j in window_ranges(len(words), ranges, window, stride, min_words, max_words)]
