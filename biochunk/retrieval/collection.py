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

from dataclasses import dataclass, field
from pathlib import Path
from typing import Sequence

import pandas as pd

from biochunk.datasets.qa import bioasq_corpus
from biochunk.errors import UserError
from biochunk.io import CORPUS, QA_QUESTIONS, QA_SNIPPETS, QRELS, QUERIES, read_table

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
