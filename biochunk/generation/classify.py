"""Binary classification through the RAG flow (ADE): a chunk memory cut from the labelled
training sentences, the nearest chunks as labelled evidence, and the generator's yes/no.

BioMedRAG classifies ADE sentences this way: the evidence carries its sentence's label,
and the generator decides. The retrieved labels alone give a baseline (majority vote of
the evidence) that shows what the generator adds. Both give predictions; the evaluation
layer scores them (``evaluation.classify``).
"""

from __future__ import annotations

from typing import Any, Sequence

import pandas as pd

from biochunk import chunking
from biochunk.corpus import Document
from biochunk.retrieval.dense import embed_search

POSITIVE, NEGATIVE = "ade", "no_ade"


def memory(
    train: pd.DataFrame, chunk_params: Any, encoder: Any, rewriter: chunking.RewriterFactory | None = None, dataset: str | None = None
) -> pd.DataFrame:
    """CHUNKS of the training sentences (chunk.method), each labelled with its sentence's class.

    ``rewriter`` serves a chunk method that rewrites text with ``chunk.generator`` (``chunking.build``).
    """
    docs = [
        Document(str(i), str(t), (POSITIVE if y == 1 else NEGATIVE,))
        for i, t, y in zip(train["id"], train["text"], train["label"])
    ]
    return chunking.chunk_table(docs, chunking.build(chunk_params, encoder, dataset=dataset, rewriter=rewriter))


def evidence(
    chunks: pd.DataFrame, queries: pd.DataFrame, encoder: Any, k: int, exclude_own: bool
) -> list[list[tuple[str, bool]]]:
    """The top-``k`` memory chunks of each query as (text, is-positive) pairs.

    ``exclude_own``: a training sentence (an in-context example) never sees its own chunks.
    """
    if k == 0 or not len(queries):
        return [[] for _ in range(len(queries))]
    rows_of = chunks.groupby("doc_id").indices
    exclude = [set(rows_of.get(str(i), [])) for i in queries["id"]] if exclude_own else None
    _, ids = embed_search(encoder, chunks, encoder.encode(list(queries["text"])), k, exclude)
    texts, labels = chunks["text"].to_numpy(), chunks["labels"].to_numpy()
    return [[(str(texts[j]), POSITIVE in list(labels[j])) for j in row if j >= 0] for row in ids]


def pick_examples(train: pd.DataFrame, n: int, seed: int) -> pd.DataFrame:
    """``n`` training sentences, alternating positive and negative, chosen by seed."""
    if n == 0:
        return train.head(0)
    pos = train[train["label"] == 1].sample(frac=1, random_state=seed)
    neg = train[train["label"] == 0].sample(frac=1, random_state=seed)
    order = [df.iloc[i // 2] for i, df in ((i, pos if i % 2 == 0 else neg) for i in range(n))]
    return pd.DataFrame(order).reset_index(drop=True)


def vote(ev: Sequence[tuple[str, bool]]) -> int:
    """The retrieval-only baseline: the majority label of the evidence (ties: no)."""
    return int(sum(pos for _, pos in ev) * 2 > len(ev)) if ev else 0
