"""Context reshaping (the BioASQ paper): retrieved passages regrouped by topic and condensed.

For one question:

1. the retrieved passages are split into sentences, and the sentences embedded;
2. sentence-transformers' community detection groups sentences whose cosine to a
   community's centre reaches ``threshold`` (every sentence lands in exactly one group:
   minimum community size 1);
3. TextRank inside each group (PageRank over the cosine-similarity graph of its
   sentences) keeps its ``keep`` most central sentences, in their original order;
4. a scorer (a cross-encoder in the paper; the cosine to the question without one) scores
   each condensed group against the question and the best ``top_m`` groups are kept; with
   no scorer (the paper's "unranked topics") the first ``top_m`` groups in discovery order
   (largest community first) are kept;
5. the context is those groups, best first, one paragraph each.

The paper's settings: ``keep`` in {4, 10, 15}, ``top_m`` in {5, 10}.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Sequence

import networkx as nx
import numpy as np

from biochunk.text.segment import sentence_spans

KEEP_CHOICES = (4, 10, 15)
TOP_M_CHOICES = (5, 10)
# How communities are ordered before the top-m cut (reshape.rank): by a cross-encoder over
# (question, community text), by cosine to the question, or not at all (discovery order).
RANKS = ("cosine", "crossencoder", "none")

# (question, passages) -> one relevance score per passage
ClusterScorer = Callable[[str, Sequence[str]], np.ndarray]


@dataclass(frozen=True)
class Sentence:
    text: str
    source: str  # id of the passage it comes from
    position: int  # order in the concatenated retrieved passages
    start: int = 0  # its characters in the passage: passage[start:end] == text
    end: int = 0


@dataclass(frozen=True)
class Context:
    text: str
    sources: list[str]  # passage ids behind the kept sentences, in order of first use
    n_sentences: int  # sentences kept
    n_clusters: int  # clusters found before the top-m cut
    groups: tuple[tuple[Sentence, ...], ...] = ()  # the kept communities, best first, sentences in reading order


def split_sentences(passages: Sequence[tuple[str, str]]) -> list[Sentence]:
    """Sentences of ``(passage id, text)`` pairs, in passage then reading order.

    A sentence repeated verbatim (BioASQ's snippets of one abstract overlap) is kept once,
    at its first occurrence: a copy would only crowd a community and the context.
    """
    out: list[Sentence] = []
    seen: set[str] = set()
    for pid, text in passages:
        for a, b in sentence_spans(text):
            if text[a:b] not in seen:
                seen.add(text[a:b])
                out.append(Sentence(text[a:b], pid, len(out), a, b))
    return out


def communities(vectors: np.ndarray, threshold: float) -> list[list[int]]:
    """Community detection with every sentence in exactly one community (largest first)."""
    from sentence_transformers.util import community_detection

    if not 0.0 <= threshold <= 1.0:
        raise ValueError(f"community threshold must be in [0, 1], got {threshold}")
    if len(vectors) == 0:
        return []
    return community_detection(np.asarray(vectors, np.float32), threshold=threshold, min_community_size=1)


def textrank(vectors: np.ndarray, keep: int) -> list[int]:
    """Indices (ascending) of the ``keep`` most central rows by PageRank on the cosine graph.

    Negative cosines are clipped to 0 (an edge means similarity); a group no larger
    than ``keep`` is kept whole. Ties go to the earlier sentence.
    """
    n = len(vectors)
    if keep < 1:
        raise ValueError(f"TextRank keep must be >= 1, got {keep}")
    if n <= keep:
        return list(range(n))
    v = np.asarray(vectors, np.float64)
    v = v / np.maximum(np.linalg.norm(v, axis=1, keepdims=True), 1e-12)
    sim = np.clip(v @ v.T, 0.0, None)
    np.fill_diagonal(sim, 0.0)
    graph = nx.from_numpy_array(sim)
    rank = nx.pagerank(graph, weight="weight")
    best = sorted(range(n), key=lambda i: (-rank[i], i))[:keep]
    return sorted(best)


def reshape(
    question: str,
    passages: Sequence[tuple[str, str]],
    embed: Callable[[Sequence[str]], np.ndarray],
    score: ClusterScorer | None,
    threshold: float = 0.75,
    keep: int = 4,
    top_m: int = 5,
) -> Context:
    """The reshaped context of ``question`` from its retrieved ``(passage id, text)`` list.

    ``score`` None: the communities stay in discovery order (largest first), unranked.
    """
    if top_m < 1:
        raise ValueError(f"top_m must be >= 1, got {top_m}")
    sents = split_sentences(passages)
    if not sents:
        return Context("", [], 0, 0)
    vecs = embed([s.text for s in sents])
    groups = []
    for members in communities(vecs, threshold):
        members = sorted(members)  # reading order; TextRank then keeps a subset of it
        kept = [members[i] for i in textrank(vecs[members], keep)]
        groups.append(kept)
    texts = [" ".join(sents[i].text for i in g) for g in groups]
    if score is None:
        order = list(range(len(groups)))[:top_m]
    else:
        scores = np.asarray(score(question, texts), np.float64)
        order = sorted(range(len(groups)), key=lambda i: (-scores[i], i))[:top_m]
    chosen = [groups[i] for i in order]
    sources: list[str] = []
    for g in chosen:
        for i in g:
            if sents[i].source not in sources:
                sources.append(sents[i].source)
    return Context(
        "\n\n".join(texts[i] for i in order),
        sources,
        sum(len(g) for g in chosen),
        len(groups),
        tuple(tuple(sents[i] for i in g) for g in chosen),
    )
