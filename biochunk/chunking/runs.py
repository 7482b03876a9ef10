"""Chunk methods run over whole documents: each method's CHUNKS table and the time it took.

What ``chunk_docs``, the QA contexts (``retrieval.contexts``) and the own-corpus comparison
(``evaluation.corpus_compare``) chunk with: every method of a list over the same documents,
with one shared encoder. ``evaluation.chunking`` measures the runs (sizes, cut answers).
"""

from __future__ import annotations

import dataclasses
import logging
import time
from typing import Any, Sequence

import pandas as pd

from biochunk.chunking import RewriterFactory, build, chunk_table
from biochunk.corpus import Document

log = logging.getLogger(__name__)


@dataclasses.dataclass(frozen=True)
class MethodRun:
    method: str
    chunks: pd.DataFrame  # CHUNKS rows
    seconds: float
    counter: str  # unit of n_tokens


def documents(df: pd.DataFrame, limit: int | None = None) -> list[Document]:
    """The DOCUMENTS table as chunker input, in table order; ``limit``: the first n only."""
    rows = df if limit is None else df.head(limit)
    return [Document(str(i), str(t)) for i, t in zip(rows["doc_id"], rows["text"])]


def run_methods(
    docs: Sequence[Document],
    params: Any,
    methods: Sequence[str],
    encoder: Any,
    rewriter: RewriterFactory | None = None,
    dataset: str | None = None,
) -> list[MethodRun]:
    """Chunk ``docs`` with each method: the ``chunk.*`` ``params`` with ``method`` replaced.

    Every chunker gets the same ``encoder``, so the model loads once; it is loaded
    (and run once) before the clock starts, so no method pays for it. ``rewriter`` serves
    the methods that rewrite text with ``chunk.generator``, ``dataset`` the ones that read a
    dataset's domain configuration (``chunking.build``).
    """
    runs = []
    for method in methods:
        p = dataclasses.replace(params, method=method)
        p.validate("chunk")  # a setting may be valid for one method only (breakpoint_amount)
        chunker = build(p, encoder, dataset=dataset, rewriter=rewriter)
        t0 = time.perf_counter()
        df = chunk_table(docs, chunker)
        seconds = time.perf_counter() - t0
        unit = "embedder" if method == "semchunk" else p.counter
        runs.append(MethodRun(method, df, seconds, unit))
        log.info("%s: %d chunks in %.1f s", method, len(df), seconds)
    return runs


def warm_up(encoder: Any) -> float:
    """Load the encoder's model and run it once; the seconds it took."""
    t0 = time.perf_counter()
    encoder.encode(["Warm-up sentence."])
    return time.perf_counter() - t0
