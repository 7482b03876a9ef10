"""Rank the chunk memory for every input: dense top-k, leave-one-out for training inputs."""

from __future__ import annotations

import numpy as np
import pandas as pd

from biochunk.retrieval.dense import search


def rank_inputs(
    index, inputs: pd.DataFrame, input_vecs: np.ndarray, chunk_ids: list[str], chunk_docs: list[str], k: int
) -> pd.DataFrame:
    """Rankings rows (split, input_id, rank, chunk_id, score, ranker="dense").

    A training sentence's own chunks are excluded, since the memory is built from the
    training split: otherwise every training input would retrieve itself and the scorer
    and generator would learn from evidence they never see at test time.
    """
    by_doc: dict[str, set[int]] = {}
    for i, d in enumerate(chunk_docs):
        by_doc.setdefault(d, set()).add(i)
    exclude = [by_doc.get(i, set()) if s == "train" else set() for i, s in zip(inputs["id"], inputs["split"])]
    scores, ids = search(index, input_vecs, k, exclude)
    rows = []
    for r, (iid, split) in enumerate(zip(inputs["id"], inputs["split"])):
        for rank, (c, s) in enumerate(zip(ids[r], scores[r]), 1):
            if c >= 0:
                rows.append((split, iid, rank, chunk_ids[c], float(s), "dense"))
    return pd.DataFrame(rows, columns=["split", "input_id", "rank", "chunk_id", "score", "ranker"])
