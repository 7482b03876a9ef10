"""Words with offsets, a small morphological normaliser, and English function words.

Tokens are whitespace words (as in ``biochunk.text.segment.word_spans``), so every
window built from them starts and ends on a word boundary and keeps exact offsets.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

# Suffixes stripped by `normalise`, longest first; one is stripped per word. They fold
# the inflections and nominalisations that biomedical triggers come in (inhibit,
# inhibits, inhibited, inhibiting, inhibition, inhibitor, inhibitory -> "inhibit").
# Irregular pairs the rules miss (reduce / reduction, induce / induction) are listed as
# explicit `variants` in the trigger files instead of growing this table.
SUFFIXES = ("ments", "ment", "ings", "ing", "ions", "ion", "ors", "ory", "or", "ed", "es", "s")
MIN_STEM = 2  # never strip a word below two letters ("as" stays "as")
# A final "s" after these is part of the word, not a plural (process, virus, analysis).
_KEEP_S = ("ss", "us", "is")
_EDGE = re.compile(r"^\W+|\W+$")
_CORE = re.compile(r"\w(?:.*\w)?", re.S)  # a word without its edge punctuation
_WORD = re.compile(r"\S+")

# General English function words: never triggers, never arguments of a proposition.
# Negations (not, no) and hedges (may, might) are here too: they are read from the
# trigger files as markers, not as content.
STOP_WORDS = frozenset(
    """
    a about above after again against all also although am among an and any are as at be because been
    before being below between both but by can could did do does doing done down during each either
    else et etc even ever every few for from further had has have having he her here hers herself him
    himself his how however i if in into is it its itself just least less many may me might more most
    much must my myself neither no nor not of off on once one only or other others otherwise our ours
    ourselves out over own per rather same shall she should since so some such than that the their
    theirs them themselves then there thereby therefore these they this those though through thus to
    too under until up upon us very via was we were what whatever when whenever where whereas wherein
    whether which while who whom whose why will with within without would yet you your yours
    al e.g i.e vs versus respectively
    """.split()
)


def normalise(word: str) -> str:
    """Lower-case ``word``, drop edge punctuation and fold its inflectional suffix.

    The result is a matching key, not a lemma: "causes", "caused" and "cause" all
    give "caus". Two forms that should match but do not (reduce / reduction) are
    listed as variants in the trigger files.
    """
    w = _EDGE.sub("", word.lower())
    for suffix in SUFFIXES:
        if not w.endswith(suffix) or len(w) - len(suffix) < MIN_STEM:
            continue
        if suffix == "s" and w.endswith(_KEEP_S):
            continue
        w = w[: -len(suffix)]
        break
    if len(w) >= 3 and w.endswith("e"):
        w = w[:-1]  # use / used / using -> "us", cause / caused -> "caus"
    if len(w) >= 4 and w.endswith("y"):
        w = w[:-1] + "i"  # modify / modifies / modified
    return w


def normalise_phrase(phrase: str) -> tuple[str, ...]:
    """A multi-word entry ("does not", "associated with") as a tuple of word keys."""
    return tuple(normalise(w) for w in phrase.split())


@dataclass(frozen=True, slots=True)
class Token:
    """One whitespace word: ``text[start:end]``; ``core`` is it lower-cased without edge punctuation."""

    start: int
    end: int
    core_start: int  # the word without edge punctuation: "(COX-2)," -> "COX-2"
    core_end: int
    core: str
    norm: str
    # Punctuation that ends a phrase (",", ";", ")") or opens one ("(", "["), and that
    # ends a clause ("," ";" ":" ".").
    closes: bool
    opens: bool
    ends_clause: bool

    @property
    def is_stop(self) -> bool:
        return not self.core or self.core in STOP_WORDS

    @property
    def is_word(self) -> bool:
        """A content word: at least two letters, not a function word, not a number."""
        return sum(c.isalpha() for c in self.core) >= 2 and not self.is_stop


def tokens(text: str, start: int = 0, end: int | None = None) -> list[Token]:
    """The whitespace words of ``text[start:end]`` in text coordinates."""
    out = []
    for m in _WORD.finditer(text, start, len(text) if end is None else end):
        raw = m.group()
        c = _CORE.search(raw)
        cs, ce = (c.start(), c.end()) if c else (0, len(raw))
        core = raw[cs:ce].lower()
        out.append(
            Token(
                start=m.start(),
                end=m.end(),
                core_start=m.start() + cs,
                core_end=m.start() + ce,
                core=core,
                norm=normalise(core),
                closes=raw[-1] in ",;:)]." and len(raw) > 1 or raw in ",;:",
                opens=raw[0] in "([",
                ends_clause=raw[-1] in ",;:.",
            )
        )
    return out
