"""Question-answering views of the converted datasets: questions with references, and a corpus.

Two datasets feed the QA stages:

- ``bioasq`` (QA_QUESTIONS + QA_SNIPPETS): the references are the ideal answers; the
  corpus is the gold snippets of all questions, pooled, in one of two units
  (``bioasq_corpus``, the one builder that retrieval and QA share): ``record`` regroups them
  by PubMed record, so that a chunker sees a record's passages together; ``snippet`` keeps
  each distinct snippet text as a document. Each batch (7B1, ...) is a split.
- ``covidqa`` (DOCUMENTS + ANSWERS): the reference is the extractive answer; the corpus
  is the 98 articles. The dataset has one split, so a seeded 10% of the articles
  becomes split ``dev`` (the source of in-context examples) and the rest ``test``.
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

import pandas as pd

from biochunk.errors import UserError
from biochunk.io import ANSWERS, DOCUMENTS, QA_ITEMS, QA_QUESTIONS, QA_SNIPPETS, read_table

QA_DATASETS = ("bioasq", "covidqa")
BIOASQ_UNITS = ("record", "snippet")  # corpus.bioasq_unit
GOLD_COLUMNS = ["question_id", "doc_id", "start", "end"]
COVIDQA_DEV_SHARE = 0.1
EXAMPLE_MAX_WORDS = 40
SECTION_ORDER = {"title": 0, "abstract": 1}


@dataclass
class QAData:
    items: pd.DataFrame  # QA_ITEMS
    corpus: pd.DataFrame  # doc_id, text
    dropped: dict[str, int]
    # question_id, doc_id, start, end: each question's gold spans in the corpus (BioASQ: its
    # snippets; COVID-QA: its answer). The gold context is the sentences around them.
    gold: pd.DataFrame = field(default_factory=lambda: pd.DataFrame(columns=GOLD_COLUMNS))


def load(dataset: str, data: Path, seed: int, bioasq_unit: str = "record") -> QAData:
    if dataset == "bioasq":
        questions = read_table(data / "questions.parquet", QA_QUESTIONS)
        return _bioasq(questions, read_table(data / "snippets.parquet", QA_SNIPPETS), bioasq_unit)
    if dataset == "covidqa":
        return _covidqa(read_table(data / "documents.parquet", DOCUMENTS), read_table(data / "answers.parquet", ANSWERS), seed)
    raise UserError(f"data.qa: {dataset!r} has no QA view; allowed: {', '.join(QA_DATASETS)}")


def pmid(url: str) -> str:
    return url.rstrip("/").rsplit("/", 1)[-1]


def snippet_documents(snippets: pd.DataFrame) -> pd.DataFrame:
    """One text per PubMed record: its distinct snippets, title first, in offset order.

    A snippet whose span lies inside another snippet of the same section is left out
    (BioASQ repeats passages across questions, often as sub-spans).
    """
    s = snippets.assign(doc_id=snippets["document"].map(pmid), order=snippets["begin_section"].map(SECTION_ORDER).fillna(2))
    s = s.drop_duplicates(["doc_id", "text"]).sort_values(
        ["doc_id", "order", "offset_begin", "offset_end"], ascending=[True, True, True, False]
    )
    rows = []
    for doc_id, g in s.groupby("doc_id", sort=True):
        kept, reach = [], {}
        # Sorted by begin, so a snippet lies inside a kept one when it ends before the furthest end.
        for text, sec, sec2, e in zip(g["text"], g["begin_section"], g["end_section"], g["offset_end"]):
            if sec == sec2 and e <= reach.get(sec, -1):
                continue  # inside a kept snippet of the same section
            if sec == sec2:
                reach[sec] = max(reach.get(sec, -1), int(e))
            kept.append(str(text).strip())
        rows.append({"doc_id": str(doc_id), "text": "\n".join(t for t in kept if t)})
    return pd.DataFrame(rows, columns=["doc_id", "text"])


@dataclass
class BioASQCorpus:
    docs: pd.DataFrame  # doc_id, text
    gold: pd.DataFrame  # question_id, snippet_id, doc_id, start, end: where each gold snippet sits (-1: not found)
    sources: dict[str, list[str]]  # doc id -> the snippet ids behind it
    unplaced: int  # gold snippets whose text was not found in their record (start = end = -1)


def bioasq_corpus(snippets: pd.DataFrame, unit: str = "record") -> BioASQCorpus:
    """The one BioASQ corpus builder (retrieval collections and the QA view both use it).

    - ``record``: one document per PubMed record (``snippet_documents``); a gold snippet is
      located in its record's text (a sub-span snippet lies inside a kept one).
    - ``snippet``: one document per distinct snippet text (``s<n>``, in first-seen order);
      identical texts share the id.
    """
    if unit not in BIOASQ_UNITS:
        raise UserError(f"corpus.bioasq_unit: unknown value {unit!r}; allowed: {', '.join(BIOASQ_UNITS)}")
    rows, sources, unplaced = [], {}, 0
    if unit == "snippet":
        text_id: dict[str, str] = {}
        for qid, sid, text in zip(snippets["question_id"], snippets["snippet_id"], snippets["text"]):
            d = text_id.setdefault(text, f"s{len(text_id)}")
            sources.setdefault(d, []).append(str(sid))
            rows.append((str(qid), str(sid), d, 0, len(text)))
        docs = pd.DataFrame({"doc_id": list(text_id.values()), "text": list(text_id.keys())})
    else:
        docs = snippet_documents(snippets)
        text_of = dict(zip(docs["doc_id"], docs["text"]))
        for qid, sid, text, url in zip(snippets["question_id"], snippets["snippet_id"], snippets["text"], snippets["document"]):
            d = pmid(url)
            sources.setdefault(d, []).append(str(sid))
            body = str(text).strip()
            start = text_of.get(d, "").find(body) if body else -1
            unplaced += start < 0
            rows.append((str(qid), str(sid), d, start, start + len(body) if start >= 0 else -1))
    gold = pd.DataFrame(rows, columns=["question_id", "snippet_id", "doc_id", "start", "end"])
    return BioASQCorpus(docs, gold, sources, unplaced)


def _bioasq(questions: pd.DataFrame, snippets: pd.DataFrame, unit: str) -> QAData:
    corpus = bioasq_corpus(snippets, unit)
    docs = corpus.gold.groupby("question_id")["doc_id"].agg(lambda d: sorted(set(d)))
    q = questions.assign(
        references=questions["ideal_answer"].map(lambda a: [x.strip() for x in a if x and x.strip()]),
        doc_ids=questions["id"].map(docs).map(lambda d: d if isinstance(d, list) else []),
        exact=questions.apply(
            lambda r: r["exact_answer"][0].lower() if r["type"] == "yesno" and len(r["exact_answer"]) else "", axis=1
        ),
    )
    no_ref = q["references"].map(len) == 0
    items = q[~no_ref].rename(columns={"body": "question"})
    dropped = {"no ideal answer": int(no_ref.sum()), "gold snippets not found in their record": corpus.unplaced}
    gold = corpus.gold[corpus.gold["start"] >= 0].drop_duplicates(["question_id", "doc_id", "start", "end"])[GOLD_COLUMNS]
    return QAData(items[QA_ITEMS.names].reset_index(drop=True), corpus.docs, dropped, gold.reset_index(drop=True))


def _covidqa(documents: pd.DataFrame, answers: pd.DataFrame, seed: int) -> QAData:
    ids = sorted(documents["doc_id"].astype(str))
    dev = set(random.Random(seed).sample(ids, max(1, round(COVIDQA_DEV_SHARE * len(ids)))))
    a = answers.assign(doc_id=answers["doc_id"].astype(str))
    items = pd.DataFrame(
        {
            "id": a["question_id"].astype(str),
            "split": a["doc_id"].map(lambda d: "dev" if d in dev else "test"),
            "type": "extractive",
            "question": a["question"],
            "references": a["answer_text"].map(lambda t: [t]),
            "doc_ids": a["doc_id"].map(lambda d: [d]),
            "exact": "",
        }
    )
    dup = items["id"].duplicated()
    corpus = documents.assign(doc_id=documents["doc_id"].astype(str))[["doc_id", "text"]]
    known = set(corpus["doc_id"])
    gold = [(str(q), str(d), int(s), int(e)) for q, d, s, e in zip(a["question_id"], a["doc_id"], a["start"], a["end"]) if str(d) in known]
    return QAData(
        items[~dup].reset_index(drop=True),
        corpus.reset_index(drop=True),
        {"repeated question id": int(dup.sum())},
        pd.DataFrame(gold, columns=GOLD_COLUMNS).drop_duplicates("question_id").reset_index(drop=True),
    )


def example_split(items: pd.DataFrame, name: str) -> str:
    """The split that in-context examples come from: ``auto`` is the first in sort order
    (BioASQ: 7B1; COVID-QA: dev)."""
    splits = sorted(items["split"].unique(), key=_split_key)
    if name == "auto":
        if len(splits) < 2:
            raise UserError("qa.example_split: the dataset has a single split; examples must come from another one")
        return splits[0]
    if name not in splits:
        raise UserError(f"qa.example_split: unknown split {name!r}; allowed: auto, {', '.join(splits)}")
    return name


def _split_key(s: str) -> tuple:
    # BioASQ batches sort by year then batch (7B1 < 10B1), other names alphabetically.
    head, _, tail = s.partition("B")
    return (0, int(head), int(tail)) if head.isdigit() and tail.isdigit() else (1, s)


def sample(
    items: pd.DataFrame,
    examples_from: str,
    max_questions: int | None,
    n_examples: int,
    seed: int,
    by_type: bool = False,
    question_splits: Sequence[str] = (),
) -> pd.DataFrame:
    """Answered questions (a seeded sample of the other splits) plus the example pool.

    Adds ``role``: ``answer`` or ``example``. Example candidates are drawn from
    ``examples_from`` only, so no answered question sees its own split in its prompt.
    ``by_type``: candidates for ``n_examples`` examples of every question type (BioASQ:
    yesno, factoid, list, summary), so each question can be shown examples of its own type.
    ``question_splits``: answer only questions of these splits (``qa.question_splits``; empty:
    every split but ``examples_from``).
    """
    splits = sorted(items["split"].unique(), key=_split_key)
    for name in question_splits:
        if name not in splits:
            allowed = ", ".join(s for s in splits if s != examples_from)
            raise UserError(f"qa.question_splits: unknown split {name!r}; allowed: {allowed}")
        if name == examples_from:
            raise UserError(f"qa.question_splits: {name} is the example split (qa.example_split); examples are never answered")
    pool = items[items["split"] == examples_from]
    rest = items[items["split"].isin(list(question_splits))] if question_splits else items[items["split"] != examples_from]
    if max_questions is not None and len(rest) > max_questions:
        rest = rest.sample(n=max_questions, random_state=seed)
    groups = [g for _, g in pool.groupby("type", sort=True)] if by_type else [pool]
    ex = pd.concat([_examples(g, n_examples, seed) for g in groups]) if groups else pool.head(0)
    return pd.concat([rest.assign(role="answer"), ex.assign(role="example")], ignore_index=True)


def _examples(pool: pd.DataFrame, n_examples: int, seed: int) -> pd.DataFrame:
    # Examples teach the answer length: prefer references of at most EXAMPLE_MAX_WORDS words.
    short = pool[pool["references"].map(lambda r: len(r[0].split()) <= EXAMPLE_MAX_WORDS)]
    pool = short if len(short) >= n_examples else pool
    # A few spare candidates: the prompt builder skips examples without retrieved context.
    return pool.sample(n=min(len(pool), max(n_examples * 3, n_examples)), random_state=seed) if n_examples else pool.head(0)
