"""A retrieval collection (documents, queries, judgements) from a converted dataset.

Two layouts reach retrieval:

- ``retrieval`` datasets (BEIR: SciFact): CORPUS, QUERIES, QRELS. A document's text is its
  title and text joined by a space, as Anserini's flat BEIR indexes and BEIR's dense
  baselines do.
- ``qa`` datasets (BioASQ): the gold snippets of every question, pooled, are the documents,
  in the unit ``corpus.bioasq_unit`` names (``datasets.qa.bioasq_corpus``, which the QA
  stages use too): one per PubMed record, or one per distinct snippet text (``s<n>``). A
  question's relevant documents hold its own gold snippets; ``sources`` maps a document
  back to every snippet id behind it.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field
from pathlib import Path
from typing import Sequence

import pandas as pd

from biochunk.datasets.qa import bioasq_corpus
from biochunk.errors import UserError
from biochunk.io import CORPUS, QA_QUESTIONS, QA_SNIPPETS, QRELS, QUERIES, read_table, write_table

Qrels = dict[str, dict[str, int]]  # query id -> {doc id: relevance}


@dataclass
class Collection:
    docs: pd.DataFrame  # doc_id, text
    queries: pd.DataFrame  # query_id, text, split
    qrels: Qrels  # judgements of the evaluation queries
    train_qrels: Qrels = field(default_factory=dict)  # judgements for training a reranker
    test_qrels: Qrels = field(default_factory=dict)  # queries held out of reranker training
    sources: dict[str, list[str]] = field(default_factory=dict)  # qa: doc id -> snippet ids

    def eval_queries(self) -> pd.DataFrame:
        return self.queries[self.queries["query_id"].isin(self.qrels)].reset_index(drop=True)


def document_text(title: str, text: str) -> str:
    title = (title or "").strip()
    return f"{title} {text}" if title else text


def _qrels(df: pd.DataFrame) -> Qrels:
    out: Qrels = {}
    for q, d, r in zip(df["query_id"], df["doc_id"], df["relevance"]):
        out.setdefault(str(q), {})[str(d)] = int(r)
    return out


def load(
    data: Path,
    task: str,
    qa_test_splits: Sequence[str] = (),
    eval_split: str = "test",
    train_split: str = "train",
    bioasq_unit: str = "record",
) -> Collection:
    """The collection of the converted dataset folder ``data`` (task from the registry).

    Retrieval datasets: every query of ``eval_split`` is evaluated and held out; the
    reranker trains on ``train_split``. QA datasets: every question is evaluated; the
    questions of the batches in ``qa_test_splits`` are held out of reranker training.
    """
    if task == "retrieval":
        corpus = read_table(data / "corpus.parquet", CORPUS)
        queries = read_table(data / "queries.parquet", QUERIES)
        qrels = read_table(data / "qrels.parquet", QRELS)
        docs = pd.DataFrame(
            {"doc_id": corpus["doc_id"].astype(str), "text": [document_text(t, x) for t, x in zip(corpus["title"], corpus["text"])]}
        )
        split_of = dict(zip(qrels["query_id"], qrels["split"]))
        queries = queries.assign(split=[split_of.get(q, "") for q in queries["query_id"]])
        test = _qrels(qrels[qrels["split"] == eval_split])
        return Collection(docs, queries[["query_id", "text", "split"]], test, _qrels(qrels[qrels["split"] == train_split]), test)
    if task == "qa":
        questions = read_table(data / "questions.parquet", QA_QUESTIONS)
        corpus = bioasq_corpus(read_table(data / "snippets.parquet", QA_SNIPPETS), bioasq_unit)
        qrels: Qrels = {}
        for qid, d in zip(corpus.gold["question_id"], corpus.gold["doc_id"]):
            qrels.setdefault(qid, {})[d] = 1
        docs, sources = corpus.docs, corpus.sources
        queries = pd.DataFrame({"query_id": questions["id"].astype(str), "text": questions["body"], "split": questions["split"]})
        held_out = set(questions.loc[questions["split"].isin(list(qa_test_splits)), "id"].astype(str))
        train = {q: r for q, r in qrels.items() if q not in held_out}
        test = {q: r for q, r in qrels.items() if q in held_out}
        return Collection(docs, queries, qrels, train, test, sources)
    raise UserError(f"retrieval needs a retrieval or qa dataset, got a {task} dataset")


def seeded_sample(ids: Sequence[str], n: int | None, seed: int) -> list[str]:
    """``n`` of ``ids`` (sorted, then a seeded draw, sorted again); all of them when ``n`` is None."""
    ids = sorted(ids)
    if n is None or n >= len(ids):
        return ids
    return sorted(random.Random(seed).sample(ids, n))


def subset(coll: Collection, max_queries: int | None, max_documents: int | None, seed: int) -> Collection:
    """The evaluation part a paper measures: the first ``max_queries`` judged queries by id, and
    a search pool of every document judged for them plus a seeded sample of the rest,
    ``max_documents`` in all (``None``: all of each). Document order is kept."""
    queries = coll.eval_queries().sort_values("query_id").head(max_queries).reset_index(drop=True)
    qrels = {q: coll.qrels[q] for q in queries["query_id"].astype(str)}
    docs = coll.docs
    if max_documents is not None:
        judged = {d for r in qrels.values() for d in r}
        rest = [d for d in docs["doc_id"] if d not in judged]
        keep = judged | set(seeded_sample(rest, max(max_documents - len(judged), 0), seed))
        docs = docs[docs["doc_id"].isin(keep)].reset_index(drop=True)
    return Collection(docs, queries, qrels, {}, qrels, coll.sources)


def write(coll: Collection, out: Path) -> None:
    """``coll``'s evaluation part as a converted retrieval folder (CORPUS, QUERIES, QRELS of
    split ``test``) that ``load(out, "retrieval")`` reads back unchanged: a document's text is
    already title + text, so its title is empty."""
    write_table(pd.DataFrame({"doc_id": coll.docs["doc_id"], "title": "", "text": coll.docs["text"]}), out / "corpus.parquet", CORPUS)
    write_table(coll.queries[["query_id", "text"]], out / "queries.parquet", QUERIES)
    rows = [(q, d, r, "test") for q, docs in coll.qrels.items() for d, r in docs.items()]
    write_table(pd.DataFrame(rows, columns=["query_id", "doc_id", "relevance", "split"]), out / "qrels.parquet", QRELS)
