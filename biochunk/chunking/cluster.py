"""Topic clusters of sentences: TF-IDF vectors grouped by k-means."""

from __future__ import annotations

import json
import warnings
from typing import Any

import pandas as pd

from biochunk.chunking.base import Chunker, RewriterFactory, register
from biochunk.chunking.sizing import enforce_max, make_counter
from biochunk.text.counting import TokenCounter, count_words
from biochunk.text.segment import sentence_spans

# Fixed so that results do not change with scikit-learn's default (10 before 1.4, "auto" after).
N_INIT = 10
RANDOM_STATE = 42


@register("cluster")
class ClusterChunker(Chunker):
    """One chunk per topic cluster: sentences -> TF-IDF -> k-means with ``k = n_clusters``.

    Source: the "semantic chunking" strategy of the clinical decision-support
    chunking study (TF-IDF with scikit-learn defaults + KMeans, k = 6): each cluster's
    sentences, in their original order, form one chunk. Fewer sentences than ``k``
    gives one cluster per sentence.

    A cluster is usually not contiguous text, and a chunk must be (``text[start:end]
    == chunk.text``). So a cluster comes out as one chunk per *run* of consecutive
    sentences in it, each with ``metadata["cluster"]`` (numbered in order of first
    appearance); grouping chunks by that key rebuilds the study's clusters. Runs
    cover every non-whitespace character of the input; chunks are in text order.
    TF-IDF and k-means are fitted per document, so results do not depend on the batch.
    """

    def __init__(self, n_clusters: int = 6, counter: TokenCounter = count_words, max_tokens: int | None = None) -> None:
        super().__init__(counter, max_tokens)
        if n_clusters < 1:
            raise ValueError(f"chunk.n_clusters must be >= 1, got {n_clusters}")
        self.n_clusters = n_clusters

    @classmethod
    def from_params(cls, params: Any, encoder: Any = None, rewriter: RewriterFactory | None = None) -> "ClusterChunker":
        return cls(n_clusters=params.n_clusters, counter=make_counter(params.counter, encoder), max_tokens=params.max_tokens)

    def labels(self, text: str, sentences: list[tuple[int, int]]) -> list[int]:
        """Cluster of each sentence, numbered 0, 1, ... in order of first appearance."""
        k = min(self.n_clusters, len(sentences))
        if k <= 1:
            return [0] * len(sentences)
        from sklearn.cluster import KMeans
        from sklearn.feature_extraction.text import TfidfVectorizer
        from threadpoolctl import threadpool_limits

        try:
            x = TfidfVectorizer().fit_transform([text[s:e] for s, e in sentences])
        except ValueError:  # empty vocabulary: no word of two or more letters anywhere
            return [0] * len(sentences)
        # One document is a small problem: OpenMP threads only add start-up and spin
        # time (10x slower on 2 busy cores). Fewer distinct sentences than k (repeated
        # or empty TF-IDF rows) only means fewer clusters; scikit-learn warns about it.
        with warnings.catch_warnings(), threadpool_limits(limits=1, user_api="openmp"):
            warnings.simplefilter("ignore")
            raw = KMeans(n_clusters=k, n_init=N_INIT, random_state=RANDOM_STATE).fit_predict(x)
        order: dict[int, int] = {}
        return [order.setdefault(int(c), len(order)) for c in raw]

    def spans(self, text: str) -> list[tuple[int, int, dict[str, Any]]]:
        sentences = sentence_spans(text)
        labels = self.labels(text, sentences)
        runs: list[tuple[int, int, dict[str, Any]]] = []
        for (s, e), c in zip(sentences, labels):
            if runs and runs[-1][2]["cluster"] == c:
                runs[-1] = (runs[-1][0], e, runs[-1][2])
            else:
                runs.append((s, e, {"cluster": c}))
        return enforce_max(text, runs, self.counter, self.max_tokens)


# How ``whole_clusters`` joins a cluster's pieces into one text.
PIECE_SEPARATOR = " "


def whole_clusters(chunks: Any) -> Any:
    """The study's form of the clusters: one row per (document, cluster) of a ``cluster`` CHUNKS table.

    The chunker writes one chunk per run of consecutive sentences (so that every chunk is
    contiguous text); the study concatenates all sentences of a cluster, in document order,
    into one chunk. Such a chunk is not one range of its document, so its row says how it was
    made: ``metadata["spans"]`` lists its pieces ``[start, end)`` in document order, ``text`` is
    ``PIECE_SEPARATOR.join(document[a:b] for a, b in spans)``, and ``start`` / ``end`` are the
    hull (first piece's start, last piece's end): ``document[start:end] == text`` holds only
    for a single piece. Evaluation that judges offsets reads the pieces
    (``biochunk.evaluation.chunking.chunk_pieces``). Ids are ``<doc_id>#c<cluster>``;
    ``n_tokens`` is the pieces' sum.
    """
    rows = []
    for doc_id, g in chunks.groupby("doc_id", sort=False):
        meta = [json.loads(m or "{}") for m in g["metadata"]]
        if any("cluster" not in m for m in meta):
            raise ValueError(f"whole_clusters needs the cluster chunker's rows (metadata['cluster']); {doc_id} has others")
        parts: dict[int, list[int]] = {}
        for i, m in enumerate(meta):
            parts.setdefault(int(m["cluster"]), []).append(i)
        for c, idx in sorted(parts.items()):
            piece = g.iloc[sorted(idx, key=lambda i: int(g["start"].iloc[i]))]
            spans = [[int(s), int(e)] for s, e in zip(piece["start"], piece["end"])]
            first = piece.iloc[0]
            rows.append(
                {
                    "doc_id": doc_id,
                    "chunk_id": f"{doc_id}#c{c}",
                    "text": PIECE_SEPARATOR.join(piece["text"]),
                    "start": spans[0][0],
                    "end": spans[-1][1],
                    "n_tokens": int(piece["n_tokens"].sum()),
                    "method": first["method"],
                    "labels": first["labels"],
                    "metadata": json.dumps({"cluster": c, "spans": spans}, sort_keys=True),
                }
            )
    return pd.DataFrame(rows, columns=chunks.columns)
