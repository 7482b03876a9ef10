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

A paper that judges retrieved chunks against where the answer lies (``spans``) reads a QA
dataset as a collection together with its gold spans: COVID-QA's answer spans in the 98
articles, or BioASQ's gold snippet sentences located in their PubMed records.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field
from pathlib import Path
from typing import Sequence

import pandas as pd

from biochunk.datasets import qa
from biochunk.datasets.qa import bioasq_corpus
from biochunk.errors import UserError
from biochunk.io import CORPUS, GOLD_SPANS, QA_QUESTIONS, QA_SNIPPETS, QRELS, QUERIES, read_table, write_table
from biochunk.text.segment import sentence_spans

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


def spans(dataset: str, data: Path) -> tuple[Collection, pd.DataFrame, dict[str, int]]:
    """A QA dataset as a collection judged by where its answers lie, with those gold spans
    (GOLD_SPANS) and the count of what was left out.

    - ``covidqa``: the 98 articles; each question's answer span (``qa.load``).
    - ``bioasq``: the PubMed records of the gold snippets (``bioasq_corpus``, record unit);
      every sentence of every gold snippet found in its record is a gold span (the snippet
      cut by the project's sentence splitter), so "the chunk holds a gold span" means it holds
      one sentence of the evidence whole. Every question with a located snippet is kept.

    A document is relevant to a question when it holds one of its spans (``qrels``).
    """
    if dataset == "covidqa":
        d = qa.load("covidqa", data, seed=0)  # the seed splits off in-context examples: unused here
        docs = d.corpus[["doc_id", "text"]]
        queries = pd.DataFrame({"query_id": d.items["id"].astype(str), "text": d.items["question"].astype(str)})
        gold, dropped = d.gold, dict(d.dropped)
    elif dataset == "bioasq":
        snippets = read_table(data / "snippets.parquet", QA_SNIPPETS)
        questions = read_table(data / "questions.parquet", QA_QUESTIONS)
        corpus = bioasq_corpus(snippets, "record")
        docs = corpus.docs
        text = dict(zip(docs["doc_id"], docs["text"]))
        placed = corpus.gold[corpus.gold["start"] >= 0]
        rows = [
            (q, d, a, b)
            for q, d, s, e in zip(placed["question_id"], placed["doc_id"], placed["start"], placed["end"])
            for a, b in sentence_spans(text[d], int(s), int(e))
        ]
        gold = pd.DataFrame(rows, columns=GOLD_SPANS.names).drop_duplicates()
        queries = pd.DataFrame({"query_id": questions["id"].astype(str), "text": questions["body"].astype(str)})
        dropped = {"gold snippets not found in their record": corpus.unplaced}
    else:
        raise UserError(f"sample.dataset: {dataset!r} has no gold answer spans; allowed: covidqa, bioasq (or a retrieval dataset)")
    asked = set(gold["question_id"].astype(str))
    dropped["questions without a located gold span"] = int((~queries["query_id"].isin(asked)).sum())
    queries = queries[queries["query_id"].isin(asked)].assign(split="test").reset_index(drop=True)
    qrels: Qrels = {}
    for q, d in zip(gold["question_id"].astype(str), gold["doc_id"].astype(str)):
        qrels.setdefault(q, {})[d] = 1
    gold = gold.astype({"question_id": str, "doc_id": str, "start": "int64", "end": "int64"})[GOLD_SPANS.names]
    return Collection(docs.reset_index(drop=True), queries, qrels, {}, qrels), gold.reset_index(drop=True), dropped


def read_gold(data: Path) -> pd.DataFrame | None:
    """The gold spans of a sampled folder (``write(..., gold=)``), or None when it is judged by documents."""
    path = data / "gold.parquet"
    return read_table(path, GOLD_SPANS) if path.is_file() else None


def write(coll: Collection, out: Path, gold: pd.DataFrame | None = None) -> None:
    """``coll``'s evaluation part as a converted retrieval folder (CORPUS, QUERIES, QRELS of
    split ``test``) that ``load(out, "retrieval")`` reads back unchanged: a document's text is
    already title + text, so its title is empty. ``gold``: the gold spans of its queries
    (GOLD_SPANS, ``gold.parquet``; ``read_gold``)."""
    if gold is not None:
        keep = gold["question_id"].isin(set(coll.qrels)) & gold["doc_id"].isin(set(coll.docs["doc_id"]))
        write_table(gold[keep].reset_index(drop=True), out / "gold.parquet", GOLD_SPANS)
    write_table(pd.DataFrame({"doc_id": coll.docs["doc_id"], "title": "", "text": coll.docs["text"]}), out / "corpus.parquet", CORPUS)
    write_table(coll.queries[["query_id", "text"]], out / "queries.parquet", QUERIES)
    rows = [(q, d, r, "test") for q, docs in coll.qrels.items() for d, r in docs.items()]
    write_table(pd.DataFrame(rows, columns=["query_id", "doc_id", "relevance", "split"]), out / "qrels.parquet", QRELS)
