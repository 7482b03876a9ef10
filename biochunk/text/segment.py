"""Sentence, clause and word spans with biomedical abbreviation rules.

Every function returns ``(start, end)`` character spans into the input, never
copies of the text, so chunkers built on them keep exact offsets for free.
"""

from __future__ import annotations

import re

from biochunk.text.counting import CJK_CHAR, CJK_WORD

# Tokens that end with a period but do not end a sentence in biomedical prose.
# Lower-cased, without the final period. Why a list and not a model: spaCy's small
# English model splits after "et al." and "Fig." (seen on PLOS text), and a list is
# predictable, fast and easy to extend for a new corpus.
#
# Three tiers, by how often the abbreviation closes a sentence:
# - ABBREVIATIONS: always followed by more of the same sentence ("Fig. 2", "e.g. aspirin").
# - FINAL_IF_WORD (and dotted letters not listed, "U.S."): often sentence-final (a dose
#   route, "etc."), so the sentence ends when a capitalised word follows ("5 mg/kg i.v.
#   Controls received ..."), not when an acronym, initial, number or bracket does
#   ("i.v. (n = 5)", "the U.S. FDA").
# - FINAL_IF_STARTER, and single letters: usually followed by a name ("et al. (2019)",
#   "J. Smith", "Streptomyces sp. Strain"), so the sentence ends only before a word that
#   opens sentences and is never a name (SENTENCE_STARTERS: "vitamin D. The ...").
ABBREVIATIONS = frozenset(
    """
    fig figs eq eqs ref refs no nos vol vols pp approx ca cf vs e.g i.e dr mr mrs ms prof st viz
    jan feb mar apr jun jul aug sep sept oct nov dec suppl tab
    """.split()
)
FINAL_IF_WORD = frozenset("i.v i.p i.m s.c p.o b.i.d t.i.d q.i.d q.d p.r.n etc resp".split())
FINAL_IF_STARTER = frozenset("al sp spp subsp ssp var".split())
SENTENCE_STARTERS = frozenset(
    """
    a all although an and as at because before both but by during each for from furthermore
    here however if in it its moreover no not of on our since similarly that the their then
    there these they this those thus to we when where whereas which while with
    """.split()
)

# A candidate end: terminal punctuation, optionally followed by closing quotes or
# brackets and by a numeric citation ("lysed.[12] Protein"), then whitespace, then
# something that can start a sentence.
_CANDIDATE = re.compile(r"[.!?](?:[\"')\]]|\[\d+(?:\s?[-\u2013,]\s?\d+)*\])*(?=\s+[\"'(\[]?[A-Z0-9])")
_NEXT = re.compile(r"\s+([\"'(\[]?)(\S*)")
_DOTTED = re.compile(r"(?:[A-Za-z]\.)+[A-Za-z]")
_WORD = re.compile(r"\S+")
# Clause breaks: after , ; : when followed by whitespace (the punctuation stays with
# the left clause, so spans still tile the sentence).
_CLAUSE = re.compile(r"[,;:](?=\s)")
_PARAGRAPH = re.compile(r"\n\s*\n")


def word_spans(text: str, start: int = 0, end: int | None = None) -> list[tuple[int, int]]:
    """Word spans of ``text[start:end]``, in text coordinates: whitespace-delimited, each CJK character one word.

    The words of ``count_words`` (``biochunk.text.counting``), so a window of n words counts n.
    """
    stop = len(text) if end is None else end
    # Scanning the range once more is cheaper than a per-character alternation on every text.
    word = CJK_WORD if CJK_CHAR.search(text, start, stop) else _WORD
    return [(m.start(), m.end()) for m in word.finditer(text, start, stop)]


def _is_abbreviation(text: str, dot: int, after: int) -> bool:
    """Whether the period at ``text[dot]`` closes an abbreviation rather than a sentence.

    ``after`` is where the candidate end stops (past closing quotes and brackets).
    """
    i = dot
    while i > 0 and not text[i - 1].isspace():
        i -= 1
    token = text[i:dot].lstrip("(\"'[")
    if not token:
        return False
    low = token.lower()
    if low in ABBREVIATIONS:
        return True
    m = _NEXT.match(text, after)
    bracket, nxt = (m.group(1), m.group(2)) if m else ("", "")
    if low in FINAL_IF_WORD or _DOTTED.fullmatch(token):
        return bool(bracket) or not _is_capitalised_word(nxt)
    # Single letters: initials ("J. Smith") and genus abbreviations ("E. coli").
    if low in FINAL_IF_STARTER or (len(token) == 1 and token.isalpha()):
        return bool(bracket) or nxt.lower().rstrip(",;:") not in SENTENCE_STARTERS
    return False


def _is_capitalised_word(word: str) -> bool:
    """"Controls", "The": an upper-case letter then a lower-case one (not "FDA", "S.", "5")."""
    return len(word) >= 2 and word[0].isupper() and word[1].islower()


def sentence_spans(text: str, start: int = 0, end: int | None = None) -> list[tuple[int, int]]:
    """Sentence spans of ``text[start:end]``; paragraphs (blank lines) always break.

    Spans are trimmed of surrounding whitespace and together cover every
    non-whitespace character of the range.
    """
    stop = len(text) if end is None else end
    spans: list[tuple[int, int]] = []
    para_start = start
    for para_end in [m.start() for m in _PARAGRAPH.finditer(text, start, stop)] + [stop]:
        s = para_start
        for m in _CANDIDATE.finditer(text, para_start, para_end):
            if text[m.start()] == "." and _is_abbreviation(text, m.start(), m.end()):
                continue
            spans.append((s, m.end()))
            s = m.end()
        spans.append((s, para_end))
        para_start = para_end
    return [t for t in (_trim(text, a, b) for a, b in spans) if t is not None]


def clause_spans(text: str, start: int = 0, end: int | None = None) -> list[tuple[int, int]]:
    """Clause spans: sentences further split after , ; and : (punctuation kept left)."""
    out: list[tuple[int, int]] = []
    for s, e in sentence_spans(text, start, end):
        a = s
        for m in _CLAUSE.finditer(text, s, e):
            out.append((a, m.end()))
            a = m.end()
        out.append((a, e))
    return [t for t in (_trim(text, a, b) for a, b in out) if t is not None]


def _trim(text: str, a: int, b: int) -> tuple[int, int] | None:
    while a < b and text[a].isspace():
        a += 1
    while b > a and text[b - 1].isspace():
        b -= 1
    return (a, b) if a < b else None
