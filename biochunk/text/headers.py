"""Micro-headers: a short noun-phrase title for a chunk, without a parser.

A header is embedded with its chunk (``biochunk.vectors.embedding_text``) to give a
short chunk its topic. spaCy's noun chunks would be more precise but cost a parser
run per chunk; frequent runs of content words are a fast, deterministic stand-in.
"""

from __future__ import annotations

import re
from collections import Counter

NO_HEADER = "no header available"

# Words that cannot be part of a noun-phrase header: function words, and the verbs
# and adverbs of scientific reporting.
STOPWORDS = frozenset(
    """
    a about above after again against all also although among an and any are as at be been before being
    below between both but by can could did do does doing done down due during each either else even
    ever every few for from further had has have having he her here hers him his how however i if in
    into is it its itself just least less like may might more most much must my neither no nor not of
    off on once only or other our out over own per rather same she should since so some such than that
    the their them then there therefore these they this those though through thus to too under until
    unless up upon us very via was we were what when where whereas whether which while who whom whose
    why will with within without would yet you your
    showed show shows shown found find finds suggest suggests suggested indicate indicates indicated
    demonstrate demonstrates demonstrated observed report reports reported use used using
    increase increases increased decrease decreases decreased reduce reduces reduced compared
    associated related based known including include includes included given obtained performed
    respectively significantly significant previously further well et al fig figure table
    """.split()
)
_WORD = re.compile(r"[A-Za-z][A-Za-z0-9\-]*[A-Za-z0-9]|[A-Za-z]")
# Phrases never cross punctuation that ends a clause.
_CLAUSE = re.compile(r"[.,;:!?()\[\]\"]+\s*|\s+-\s+")
# Capitalised terms: acronyms, gene and protein names ("TNF", "BRCA1", "IL-6").
_TERM = re.compile(r"\b[A-Z][A-Za-z]*[A-Z0-9][A-Za-z0-9\-]*\b")
MAX_WORDS = 3  # words in a header phrase


def _content(word: str) -> bool:
    low = word.lower()
    return len(word) > 1 and low not in STOPWORDS and not low.endswith("ly")


def micro_header(text: str) -> str:
    """The most frequent multi-word phrase of content words, else the most frequent
    capitalised term, else ``NO_HEADER``.

    Ties go to the phrase whose words are most frequent in the text, then to the
    earliest. Case is folded for counting; the first spelling seen is returned.
    """
    phrases: Counter[str] = Counter()
    words: Counter[str] = Counter()
    spelling: dict[str, str] = {}
    first: dict[str, int] = {}
    for clause in _CLAUSE.split(text):
        run: list[str] = []
        for w in _WORD.findall(clause) + [""]:
            if w and _content(w):
                run.append(w)
                words[w.lower()] += 1
                continue
            for n in range(2, MAX_WORDS + 1):
                for i in range(len(run) - n + 1):
                    surface = " ".join(run[i : i + n])
                    key = surface.lower()
                    phrases[key] += 1
                    spelling.setdefault(key, surface)
                    first.setdefault(key, len(first))
            run = []
    if phrases:
        best = max(phrases, key=lambda k: (phrases[k], sum(words[w] for w in k.split()), -first[k]))
        return spelling[best]
    terms = Counter(_TERM.findall(text))
    if terms:
        order = {t: i for i, t in reversed(list(enumerate(_TERM.findall(text))))}
        return max(terms, key=lambda t: (terms[t], -order[t]))
    return NO_HEADER
