"""semchunk's comparison, on COVID-QA: does the top-1 chunk at 256 MiniLM tokens hold the gold answer?

    python benchmarks/papers/semchunk_retrieval.py --data data/papers/interim/covidqa [--max-questions N]
        [--methods semchunk,langchain,...] [--cache-dir data/cache/embeddings] [--results docs/results]

Every chunker cuts the COVID-QA articles at 256 all-MiniLM-L6-v2 tokens (each counts with the
same MiniLM tokenizer): the peers from requirements-bench.txt (semchunk, LangChain's
RecursiveCharacterTextSplitter, chonkie's RecursiveChunker and SemanticChunker) and this
project's chunkers through ``chunking.build``. The chunks of all articles are pooled and
searched by MiniLM dense retrieval (``retrieval.dense.embed_search``), top 1 per question. A
question is answered correctly when its top-1 chunk holds the gold answer whole (same article,
answer span inside the chunk span; ``evaluation.chunking.gold_in_hits``); "overlaps" counts a
chunk that shares any character with it. A peer's reported offsets are checked against the text
and repaired where its chunk text can be found (``peers.locate``); a peer that is not installed
is skipped with a note. Vectors are cached by text, so identical chunks embed once across
methods and runs. Writes docs/results/semchunk.md (block ``retrieval-covidqa``) after each method.

``--dataset bioasq`` asks the same of BioASQ (block ``retrieval-bioasq``): a seeded sample of
questions (``--max-questions``), the PubMed records of their gold snippets as the corpus
(``qa.bioasq_corpus``, record unit), correct when the top-1 chunk holds one sentence of one of the
question's gold snippets whole.
"""

from __future__ import annotations

import dataclasses
import logging
import sys
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pandas as pd

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "benchmarks"))  # the shared peer wrappers (benchmarks/peers.py)

from peers import Run, chonkie_recursive, chonkie_semantic, langchain, locate, semchunk_chunker

from biochunk import chunking
from biochunk.chunking.runs import documents
from biochunk.cli import run
from biochunk.datasets import qa
from biochunk.embedding import SentenceEncoder
from biochunk.errors import UserError
from biochunk.evaluation.chunking import gold_in_hits
from biochunk.evaluation.papers import Difference, Estimate, PaperTable, Row, mean_ci, paired_delta, publish
from biochunk.io import QA_QUESTIONS, QA_SNIPPETS, read_table
from biochunk.params import ChunkParams, defaults
from biochunk.retrieval.cache import CachedEncoder
from biochunk.retrieval.dense import embed_search
from biochunk.text.segment import sentence_spans
from biochunk.text.tokens import embedder_counter

log = logging.getLogger("semchunk_retrieval")

MODEL = "minilm"
HOLDS, OVERLAPS = "top-1 holds answer", "top-1 overlaps answer"
HOLDS_SENTENCE, OVERLAPS_SENTENCE = "top-1 holds a gold sentence", "top-1 overlaps a gold snippet"
DATASETS = ("covidqa", "bioasq")
TITLES = {"retrieval-covidqa": "COVID-QA", "retrieval-bioasq": "BioASQ"}
CORRECT = {  # the judgement, as the table states it
    "retrieval-covidqa": (
        "Correct = the top-1 chunk (MiniLM dense, all articles' chunks pooled) lies in the answer's article and "
        "its span contains the gold answer span whole; overlaps = shares at least one character with it."
    ),
    "retrieval-bioasq": (
        "Correct = the top-1 chunk (MiniLM dense, all records' chunks pooled) lies in a record of the question's "
        "gold snippets and its span contains one sentence of one of those snippets whole (the snippet located in "
        "the record, cut by the project's sentence splitter); overlaps = shares at least one character with a "
        "gold snippet sentence."
    ),
}
SIZE_METRICS = ["chunks", "MiniLM tokens median", "MiniLM tokens p95", "chunking s"]
REFERENCE = "semchunk"  # the paper's system: every difference is semchunk − a peer
UNBOUNDED = 10**9  # recursive: no character bound, the token bound alone decides


@dataclasses.dataclass(frozen=True)
class Method:
    key: str
    label: str
    peer: bool  # a peer library (optional import) rather than this project's chunker


METHODS = [  # the run order: the semantic chunkers, slowest, last
    Method("semchunk", "semchunk 4.1.1 (library)", True),
    Method("ours-semchunk", "ours: semchunk", False),
    Method("chonkie-recursive", "chonkie RecursiveChunker", True),
    Method("langchain", "LangChain RecursiveCharacterTextSplitter 256/0", True),
    Method("ours-recursive", "ours: recursive (counter embedder, max_tokens 256)", False),
    Method("ours-fixed", "ours: fixed word windows of ~256 tokens (max_tokens 256)", False),
    Method("ours-cluster", "ours: cluster (max_tokens 256)", False),
    Method("ours-adaptive", "ours: adaptive (max_tokens 256)", False),
    Method("chonkie-semantic", "chonkie SemanticChunker (MiniLM, threshold 0.8, window 3)", True),
]
BY_KEY = {m.key: m for m in METHODS}


def parse_methods(value: str) -> list[Method]:
    keys = [k.strip() for k in value.split(",") if k.strip()]
    unknown = [k for k in keys if k not in BY_KEY]
    if unknown or not keys:
        raise UserError(f"--methods: unknown {', '.join(unknown) or '(none given)'}; allowed: {', '.join(BY_KEY)}")
    return [BY_KEY[k] for k in keys]


def our_params(key: str, budget: int, words_per_token: float) -> ChunkParams:
    """The ``chunk.*`` params of one of this project's rows: every one counts MiniLM tokens, at most ``budget``."""
    method = key.removeprefix("ours-")
    p = defaults("chunk", method=method, counter="embedder", max_tokens=budget)
    if method == "recursive":
        p = dataclasses.replace(p, chunk_size=UNBOUNDED, chunk_overlap=0)
    if method == "fixed":  # windows of as many words as the budget holds on average in this corpus
        p = dataclasses.replace(p, window=max(1, round(budget * words_per_token)))
    p.validate("chunk")
    return p


def peer_run(key: str, budget: int, counter: Callable[[str], int], encoder: CachedEncoder) -> Run:
    tokenizer = counter.tokenizer  # truncation and padding switched off by the counter
    if key == "semchunk":
        return semchunk_chunker(budget, lambda: counter)
    if key == "langchain":
        return langchain(budget, 0, lambda: counter)
    if key == "chonkie-recursive":
        return chonkie_recursive(budget, tokenizer)
    return chonkie_semantic(budget, encoder.model)


@dataclasses.dataclass
class Chunked:
    table: pd.DataFrame  # doc_id, start, end, text, metadata
    seconds: float
    note: str


def chunk_with(method: Method, docs: list, budget: int, counter, encoder: CachedEncoder, words_per_token: float) -> Chunked:
    """One method's chunks of every document; raises ImportError when a peer is not installed.

    Our semantic chunkers embed through ``encoder`` (its cache: a rerun embeds nothing twice);
    chonkie's SemanticChunker gets the same loaded MiniLM but embeds on its own.
    """
    if not method.peer:
        chunker = chunking.build(our_params(method.key, budget, words_per_token), encoder)
        t0 = time.perf_counter()
        df = chunking.chunk_table(docs, chunker)
        return Chunked(df[["doc_id", "start", "end", "text", "metadata"]], time.perf_counter() - t0, "")
    go = peer_run(method.key, budget, counter, encoder)
    t0 = time.perf_counter()
    out = go([d.text for d in docs])
    seconds = time.perf_counter() - t0
    rows, repaired, lost, n = [], 0, 0, 0
    for d, spans in zip(docs, out):
        n += len(spans)
        kept, r, lo = locate(d.text, spans)
        repaired, lost = repaired + r, lost + lo
        rows += [(d.doc_id, s, e, k, "{}") for s, e, k in kept]
    note = f"offsets: {n - repaired - lost:,} of {n:,} exact, {repaired} repaired, {lost} dropped"
    return Chunked(pd.DataFrame(rows, columns=["doc_id", "start", "end", "text", "metadata"]), seconds, note)


def top1_scores(chunks: pd.DataFrame, encoder, qvecs: np.ndarray, questions: pd.DataFrame, gold: pd.DataFrame) -> pd.DataFrame:
    """Per question (in ``questions`` order): 0/1 ``whole`` and ``overlaps`` of its top-1 chunk."""
    _, ids = embed_search(encoder, chunks.reset_index(drop=True), qvecs, 1)
    pos = ids[:, 0] if ids.shape[1] else np.full(len(qvecs), -1)
    ok = pos >= 0
    hit = chunks.reset_index(drop=True).iloc[pos[ok]]
    hits = pd.DataFrame(
        {"question_id": questions["id"].to_numpy()[ok], "doc_id": hit["doc_id"].to_numpy(),
         "start": hit["start"].to_numpy(), "end": hit["end"].to_numpy(), "metadata": hit["metadata"].to_numpy()}
    )  # fmt: skip
    judged = gold_in_hits(hits, gold).set_index("question_id")
    return judged.reindex(questions["id"]).fillna(0).astype(int)


@dataclasses.dataclass
class Task:
    docs: list  # Document
    questions: pd.DataFrame  # id, question
    gold: pd.DataFrame  # question_id, doc_id, start, end (any number of rows per question)
    sample: str
    holds: str  # the correctness metric's name
    overlaps: str
    section: str


def _need(data: Path, files: tuple[str, ...], dataset: str) -> None:
    for f in files:
        if not (data / f).is_file():
            raise UserError(f"--data: {data / f} is missing; convert {dataset} first (make paper-semchunk does)")


def _sample(questions: pd.DataFrame, args) -> pd.DataFrame:
    if args.max_questions is not None and len(questions) > args.max_questions:
        questions = questions.sample(n=args.max_questions, random_state=args.seed)
    return questions.reset_index(drop=True)


def load_covidqa(args) -> Task:
    """The articles (the first ``--max-docs``), their questions, each question's answer span."""
    _need(args.data, ("documents.parquet", "answers.parquet"), "COVID-QA")
    data = qa.load("covidqa", args.data, args.seed)
    docs = documents(data.corpus, args.max_docs)
    kept = data.gold[data.gold["doc_id"].isin({d.doc_id for d in docs})]
    questions = _sample(data.items[data.items["id"].isin(set(kept["question_id"]))], args)
    gold = data.gold[data.gold["question_id"].isin(set(questions["id"]))]
    sample = (
        f"COVID-QA: {len(questions):,} questions over {len(docs)} articles"
        + (f" (the first {len(docs)} of the table)" if args.max_docs else "")
        + (f" (seeded question sample, seed {args.seed})" if args.max_questions else "")
    )
    return Task(docs, questions[["id", "question"]], gold, sample, HOLDS, OVERLAPS, "retrieval-covidqa")


def load_bioasq(args) -> Task:
    """BioASQ (record unit): a seeded sample of questions (``--max-questions``), a corpus of the
    PubMed records of their gold snippets (``qa.bioasq_corpus``), and as gold every sentence of
    every gold snippet that was found in its record."""
    _need(args.data, ("questions.parquet", "snippets.parquet"), "BioASQ")
    snippets = read_table(args.data / "snippets.parquet", QA_SNIPPETS)
    questions = read_table(args.data / "questions.parquet", QA_QUESTIONS).rename(columns={"body": "question"})
    questions = _sample(questions[questions["id"].isin(set(snippets["question_id"]))], args)
    corpus = qa.bioasq_corpus(snippets[snippets["question_id"].isin(set(questions["id"]))], "record")
    text = dict(zip(corpus.docs["doc_id"], corpus.docs["text"]))
    placed = corpus.gold[corpus.gold["start"] >= 0]
    rows = [
        (q, d, a, b)
        for q, d, s, e in zip(placed["question_id"], placed["doc_id"], placed["start"], placed["end"])
        for a, b in sentence_spans(text[d], int(s), int(e))
    ]
    gold = pd.DataFrame(rows, columns=["question_id", "doc_id", "start", "end"]).drop_duplicates()
    questions = questions[questions["id"].isin(set(gold["question_id"]))].reset_index(drop=True)
    docs = documents(corpus.docs, args.max_docs)
    sample = (
        f"BioASQ: {len(questions):,} questions"
        + (f" (seeded sample, seed {args.seed})" if args.max_questions else "")
        + f"; corpus: the {len(docs):,} PubMed records of their gold snippets (record unit); "
        f"gold snippets not found in their record, left out: {corpus.unplaced}"
    )
    return Task(docs, questions[["id", "question"]], gold, sample, HOLDS_SENTENCE, OVERLAPS_SENTENCE, "retrieval-bioasq")


def main() -> None:
    import argparse

    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--dataset", choices=DATASETS, default="covidqa")
    ap.add_argument("--data", type=Path, default=None, help="the converted dataset (default: data/papers/interim/<dataset>)")
    ap.add_argument("--max-questions", type=int, default=None, help="a seeded sample of the questions (default: all)")
    ap.add_argument("--max-docs", type=int, default=None, help="the first n articles and their questions (default: all)")
    ap.add_argument("--seed", type=int, default=42)
    ap.add_argument("--budget", type=int, default=256, help="MiniLM tokens per chunk")
    ap.add_argument("--methods", default=",".join(BY_KEY), help=f"comma-separated, from: {', '.join(BY_KEY)}")
    ap.add_argument("--batch-size", type=int, default=64)
    ap.add_argument("--cache-dir", type=Path, default=Path("data/cache/embeddings"), help="embedding cache (by text)")
    ap.add_argument("--results", type=Path, default=Path("docs/results"))
    ap.add_argument("--command", default="make paper-semchunk", help="the command recorded in the table")
    args = ap.parse_args()
    args.data = args.data or Path("data/papers/interim") / args.dataset
    methods = parse_methods(args.methods)
    if args.budget < 1:
        raise UserError(f"--budget must be >= 1, got {args.budget}")
    if args.max_docs is not None and args.max_docs < 1:
        raise UserError(f"--max-docs must be >= 1 (or omitted for all), got {args.max_docs}")
    if args.max_questions is not None and args.max_questions < 1:
        raise UserError(f"--max-questions must be >= 1 (or omitted for all), got {args.max_questions}")
    t_start = time.perf_counter()
    task = (load_bioasq if args.dataset == "bioasq" else load_covidqa)(args)
    docs, questions, gold = task.docs, task.questions, task.gold
    counter = embedder_counter(MODEL)
    words_per_token = sum(len(d.text.split()) for d in docs) / max(1, sum(counter(d.text) for d in docs))
    encoder = SentenceEncoder(MODEL, args.batch_size)
    cached = CachedEncoder(encoder, args.cache_dir)
    qvecs = cached.encode(questions["question"].tolist())
    log.info("%d questions, %d documents; %.3f words per MiniLM token", len(questions), len(docs), words_per_token)

    rows, scores, not_run = [], {}, []
    for i, method in enumerate(methods):
        try:
            chunked = chunk_with(method, docs, args.budget, counter, cached, words_per_token)
        except ImportError as e:
            log.warning("%s skipped: %s (pip install -r requirements-bench.txt)", method.label, e)
            not_run.append((method.label, f"not installed here ({e.name or e}); pip install -r requirements-bench.txt"))
            continue
        judged = top1_scores(chunked.table, cached, qvecs, questions, gold)
        tokens = np.array([counter(t) for t in chunked.table["text"]])
        over = int((tokens > args.budget).sum())
        scores[method.key] = judged
        note = "; ".join(x for x in (chunked.note, f"{over} chunks over {args.budget} tokens" if over else "") if x)
        rows.append(
            Row(
                method.label,
                {},
                {
                    task.holds: mean_ci(judged["whole"].to_numpy()),
                    task.overlaps: mean_ci(judged["overlaps"].to_numpy()),
                    "chunks": Estimate(len(chunked.table)),
                    "MiniLM tokens median": Estimate(float(np.median(tokens)) if len(tokens) else float("nan")),
                    "MiniLM tokens p95": Estimate(float(np.quantile(tokens, 0.95)) if len(tokens) else float("nan")),
                    "chunking s": Estimate(chunked.seconds),
                },
                note,
            )
        )
        log.info(
            "%s: %d chunks, holds %.3f, overlaps %.3f",
            method.label,
            len(chunked.table),
            judged["whole"].mean(),
            judged["overlaps"].mean(),
        )
        left = [m.label for m in methods[i + 1 :]]
        publish(table(args, task, rows, scores, not_run, time.perf_counter() - t_start, left), args.results)


def table(args, task: Task, rows, scores, not_run, wall_s: float, left: list[str]) -> PaperTable:
    diffs = []
    if REFERENCE in scores:
        ref = scores[REFERENCE]["whole"].to_numpy()
        for m in METHODS:
            if m.key != REFERENCE and m.key in scores:
                diffs.append(
                    Difference(f"semchunk − {m.label}", task.holds, None, paired_delta(scores[m.key]["whole"].to_numpy(), ref))
                )
    ahead = [d.label.split(" − ", 1)[1] for d in diffs if d.ours.lo > 0]
    behind = [d.label.split(" − ", 1)[1] for d in diffs if d.ours.hi < 0]
    out = [
        (
            "The paper's figures are not in references.md (no number of its comparison could be found to cite), "
            'so the paper column is empty and each direction reads "no published figure"; the claim to test '
            "is semchunk ≥ every peer."
        ),
        (
            f"Our paired intervals: semchunk ahead of {', '.join(ahead) or 'none'}; "
            f"behind {', '.join(behind) or 'none'}; the rest not separable."
        ),
        CORRECT[task.section],
    ]
    if left:
        out.append(f"Not finished when this table was written: {', '.join(left)}.")
    return PaperTable(
        paper="semchunk",
        section=task.section,
        title=f"Retrieval correctness at {args.budget} MiniLM tokens, top-1, {TITLES[task.section]}",
        command=args.command,
        sample=task.sample,
        models="all-MiniLM-L6-v2 (tokenizer for every chunker's sizes; embedder for retrieval and the semantic chunkers)",
        wall_s=wall_s,
        metrics=[task.holds, task.overlaps, *SIZE_METRICS],
        rows=rows,
        differences=diffs,
        not_run=not_run,
        notes=out,
        metric_digits={"chunks": 0, "MiniLM tokens median": 0, "MiniLM tokens p95": 0, "chunking s": 1},
    )


if __name__ == "__main__":
    run(main)
