"""Structure + meaning: boundaries where layout and embeddings change together."""

from __future__ import annotations

import itertools
import re
import string
from collections import Counter
from typing import Any, Callable, Sequence

import numpy as np

from biochunk.chunking.base import Chunk, Chunker, RewriterFactory, register
from biochunk.chunking.breakpoints import embed_units, groups, neighbour_distances
from biochunk.chunking.sizing import enforce_max, make_counter
from biochunk.text.counting import TokenCounter, count_words, span_counter

EmbedFn = Callable[[Sequence[str]], np.ndarray]
_PUNCT = frozenset(string.punctuation)

# The per-sentence features, in column order. Surface features describe the sentence
# itself; physical features describe the layout around it (the gap before it).
FEATURES = (
    # surface
    "length",  # characters
    "punct_density",  # punctuation characters / length
    "digit_ratio",
    "upper_ratio",
    "word_len_mean",
    "word_len_std",
    "word_len_max",
    # physical
    "paragraph_break",  # 1 when a blank line precedes the sentence
    "newlines_before",
    "leading_whitespace",  # spaces and tabs between the last line break and the sentence
    "alpha_ratio",
    "space_ratio",  # whitespace inside the sentence / length
    "other_ratio",  # neither letter, digit, whitespace nor punctuation (symbols: °, ±, μ ...)
)


def features(text: str, spans: Sequence[tuple[int, int]]) -> np.ndarray:
    """One row of ``FEATURES`` per sentence span."""
    rows = []
    prev_end = 0
    for s, e in spans:
        sent = text[s:e]
        n = len(sent)
        words = [len(w) for w in sent.split()] or [0]
        gap = text[prev_end:s]  # only whitespace: sentence spans cover all the rest
        line_start = gap.rfind("\n")
        # Indentation of the sentence's line; 0 when it continues the previous sentence's line.
        lead = len(gap) - line_start - 1 if line_start >= 0 else (len(gap) if prev_end == 0 else 0)
        alpha = sum(c.isalpha() for c in sent)
        digit = sum(c.isdigit() for c in sent)
        space = sum(c.isspace() for c in sent)
        punct = sum(c in _PUNCT for c in sent)
        rows.append(
            (
                n,
                punct / n,
                digit / n,
                sum(c.isupper() for c in sent) / n,
                float(np.mean(words)),
                float(np.std(words)),
                max(words),
                float(gap.count("\n") >= 2),
                gap.count("\n"),
                lead,
                alpha / n,
                space / n,
                (n - alpha - digit - space - punct) / n,
            )
        )
        prev_end = e
    return np.asarray(rows, dtype=np.float64).reshape(len(spans), len(FEATURES))


def zscore(x: np.ndarray) -> np.ndarray:
    """Per-column z-scores over the document; a constant column becomes 0."""
    if len(x) == 0:
        return x
    sd = x.std(axis=0)
    return (x - x.mean(axis=0)) / np.where(sd > 0, sd, 1.0)


def structural_distances(x: np.ndarray) -> np.ndarray:
    """Euclidean distance between neighbours' z-scored features, divided by its maximum."""
    if len(x) < 2:
        return np.zeros(0)
    d = np.linalg.norm(np.diff(zscore(x), axis=0), axis=1)
    top = d.max()
    return d / top if top > 0 else d


# D_struct forms (chunk.structural_distance). euclidean: this project's z-scored feature
# distance above. similarity: 1 - the weighted structural similarity of the authors' code
# (github.com/SYLee1996/Structural_Chunking, chunking_methods/strucural.py,
# LanguageIndependentSimilarity), re-implemented from its description: one nested feature
# record per sentence, compared category by category, weighted by SIMILARITY_WEIGHTS.
DISTANCES = ("euclidean", "similarity")

# The authors' category weights, copied as published in their code; they sum to 0.82, not 1,
# so two identical sentences are 0.18 apart (kept: the percentile threshold is unaffected by a
# constant offset, and changing it would no longer be their measure).
SIMILARITY_WEIGHTS = {
    "paragraph_structure": 0.25,
    "punctuation_distribution": 0.20,
    "word_length_distribution": 0.15,
    "character_level": 0.10,
    "avg_sentence_length": 0.05,
    "avg_word_length": 0.02,
    "punctuation_density": 0.02,
    "token_level": 0.01,
    "spacing_patterns": 0.01,
    "length_distributions": 0.01,
}
_MARKS = ".,!?;:"  # the authors' punctuation set (narrower than string.punctuation)


def _mean(x: Sequence[float]) -> float:
    return float(np.mean(x)) if len(x) else 0.0


def _var(x: Sequence[float]) -> float:
    return float(np.var(x)) if len(x) > 1 else 0.0


def _char_type(c: str) -> str:
    if c.isalpha():
        return "letter"
    if c.isdigit():
        return "digit"
    if c.isspace():
        return "space"
    return "punct" if c in _MARKS else "other"


def similarity_record(sent: str) -> dict[str, Any]:
    """The nested structural record of one sentence that ``structural_similarity`` compares.

    Numbers are compared as ``1 - |a - b| / max(|a|, |b|)``, Counters by cosine, lists by
    length and mean, dicts by the mean over their keys (``_similar``).
    """
    words = sent.split() or [sent]
    wl = [len(w) for w in words]
    n = max(len(sent), 1)
    types = [_char_type(c) for c in sent]
    paragraphs = [p.strip() for p in re.split(r"\n\s*\n+", sent.strip()) if p.strip()] or [sent.strip()]
    plen = [len(p.split()) for p in paragraphs]
    spaces = [len(m) for m in re.findall(r" +", sent)]
    newlines = [len(m) for m in re.findall(r"\n+", sent)]
    caps = Counter(
        "all_caps" if w.isupper() else "capitalised" if w[:1].isupper() else "lower" if w.islower() else "mixed" for w in words
    )
    return {
        "avg_sentence_length": len(words),
        "punctuation_distribution": Counter(c for c in sent if c in _MARKS),
        "word_length_distribution": Counter(wl),
        "paragraph_structure": {
            "count": len(paragraphs),
            "mean": _mean(plen),
            "variance": _var(plen),
            "sentences": [len([x for x in p.split(".") if x.strip()]) for p in paragraphs],
        },
        "character_level": {
            "types": Counter(types),
            "transitions": Counter(itertools.pairwise(types)),
            "density": {k: types.count(k) / n for k in ("letter", "digit", "space", "punct")},
        },
        "avg_word_length": _mean(wl),
        "punctuation_density": sum(c in _MARKS for c in sent) / n,
        "token_level": {
            "count": len(words),
            "mean": _mean(wl),
            "variance": _var(wl),
            "capitalisation": caps,
            "digit_ratio": sum(any(c.isdigit() for c in w) for w in words) / len(words),
            "punct_ratio": sum(any(not c.isalnum() for c in w) for w in words) / len(words),
        },
        "spacing_patterns": {
            "spaces": Counter(spaces),
            "space_mean": _mean(spaces),
            "newlines": Counter(newlines),
            "newline_mean": _mean(newlines),
            "whitespace_ratio": (sent.count(" ") + sent.count("\n") + sent.count("\t")) / n,
        },
        "length_distributions": {
            "words": {"distribution": Counter(wl), "mean": _mean(wl), "variance": _var(wl), "max": max(wl), "min": min(wl)},
            "sentences": {"distribution": Counter([len(words)]), "mean": float(len(words)), "variance": 0.0},
            "paragraphs": {"distribution": Counter([len(words)]), "mean": float(len(words)), "variance": 0.0},
        },
    }


def _similar(a: Any, b: Any) -> float:
    if isinstance(a, Counter) and isinstance(b, Counter):
        keys = list(set(a) | set(b))
        if not keys:
            return 1.0
        u, v = np.array([a[k] for k in keys], float), np.array([b[k] for k in keys], float)
        nu, nv = np.linalg.norm(u), np.linalg.norm(v)
        return float(u @ v / (nu * nv)) if nu and nv else 0.0
    if isinstance(a, dict) and isinstance(b, dict):
        sims = [_similar(a[k], b[k]) for k in a if k in b]
        return float(np.mean(sims)) if sims else 0.0
    if isinstance(a, list) and isinstance(b, list):
        if not a or not b:
            return float(not a and not b)
        length = 1 - abs(len(a) - len(b)) / max(len(a), len(b))
        ma, mb = float(np.mean(a)), float(np.mean(b))
        return (length + 1 - abs(ma - mb) / max(ma, mb, 1)) / 2
    top = max(abs(a), abs(b))
    return 1.0 if top == 0 else 1 - abs(a - b) / top


def structural_similarity(a: dict[str, Any], b: dict[str, Any]) -> float:
    """Weighted similarity of two ``similarity_record`` s, in [0, sum of the weights]."""
    return sum(w * _similar(a[k], b[k]) for k, w in SIMILARITY_WEIGHTS.items())


def similarity_distances(text: str, spans: Sequence[tuple[int, int]]) -> np.ndarray:
    """``1 - structural_similarity`` between each sentence and the next (unscaled, as the authors)."""
    recs = [similarity_record(text[s:e]) for s, e in spans]
    return np.array([1.0 - structural_similarity(a, b) for a, b in itertools.pairwise(recs)], dtype=np.float64)


@register("structural")
class StructuralChunker(Chunker):
    """Cut where ``alpha * D_sem + (1 - alpha) * D_struct`` exceeds its ``boundary_percentile``-th percentile.

    Source: Structural Chunking, "a semantic-structural integrated method for RAG"
    (github.com/SYLee1996/Structural_Chunking): D_sem = 1 - cos between consecutive
    sentence embeddings; D_struct = Euclidean distance between consecutive sentences'
    z-normalised surface and physical features (``FEATURES``), scaled to [0, 1] by
    its maximum in the document. Each sentence is embedded exactly once, all
    sentences of a batch in one encoder call. Covers every non-whitespace character
    of the input. ``structural_distance="similarity"`` replaces D_struct by the
    authors' code's form, ``1 - `` weighted feature similarity (``similarity_distances``);
    their defaults are ``alpha=0.05`` with it.
    """

    needs_encoder = True

    def __init__(
        self,
        embed: EmbedFn,
        alpha: float = 0.5,
        boundary_percentile: float = 95.0,
        counter: TokenCounter = count_words,
        max_tokens: int | None = None,
        structural_distance: str = "euclidean",
    ) -> None:
        super().__init__(counter, max_tokens)
        if structural_distance not in DISTANCES:
            raise ValueError(f"chunk.structural_distance must be one of {', '.join(DISTANCES)}, got {structural_distance!r}")
        if not 0.0 <= alpha <= 1.0:
            raise ValueError(f"chunk.alpha must be in [0, 1], got {alpha}")
        if not 0.0 <= boundary_percentile <= 100.0:
            raise ValueError(f"chunk.boundary_percentile must be in [0, 100], got {boundary_percentile}")
        self.embed = embed
        self.alpha = alpha
        self.boundary_percentile = boundary_percentile
        self.structural_distance = structural_distance

    @classmethod
    def from_params(cls, params: Any, encoder: Any = None, rewriter: RewriterFactory | None = None) -> "StructuralChunker":
        if encoder is None:
            raise ValueError("chunk.method structural needs an encoder")
        return cls(
            embed=encoder.encode,
            alpha=params.alpha,
            boundary_percentile=params.boundary_percentile,
            counter=make_counter(params.counter, encoder),
            max_tokens=params.max_tokens,
            structural_distance=params.structural_distance,
        )

    def fused(self, text: str, spans: Sequence[tuple[int, int]], vecs: np.ndarray) -> np.ndarray:
        """D_fusion for each gap between consecutive sentences."""
        if self.structural_distance == "similarity":
            d_struct = similarity_distances(text, spans)
        else:
            d_struct = structural_distances(features(text, spans))
        return self.alpha * neighbour_distances(vecs) + (1 - self.alpha) * d_struct

    def chunk_batch(self, texts: Sequence[str]) -> list[list[Chunk]]:
        units, vecs = embed_units(self.embed, texts)
        out = []
        for text, us, v in zip(texts, units, vecs):
            d = self.fused(text, us, v)
            cuts = np.flatnonzero(d > np.percentile(d, self.boundary_percentile)).tolist() if len(d) else []
            counts = span_counter(self.counter, text, self.max_tokens)
            out.append(self._build(text, enforce_max(text, groups(us, cuts), counts, self.max_tokens), counts))
        return out
