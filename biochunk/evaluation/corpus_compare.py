"""Every chunk method on one converted corpus: sizes, cut answers, retrieval with intervals.

The comparison behind ``stages/compare.py`` and its report page (``evaluation.corpus_report``).
It walks the same path as the pipeline's stages: chunks from ``chunking.runs.run_methods``
(as ``chunk_docs``), runs from ``retrieval.experiment.run_retrievers`` over those same chunks
scored by ``evaluation.retrieval.evaluate_runs`` (as ``retrieve``), nDCG@10 per query with a
bootstrap interval (``evaluation.retrieval``).

What the numbers may claim on a small corpus (issue 25): nDCG@10 and recall@10 are tie-aware
(their expected value over the orders of tied scores, ``evaluation.ties.tie_aware``), not
trec_eval's order by document id, and the queries where ties cross rank 10 are counted; each
row carries a paired bootstrap interval of its difference to the best row over the same
question resamples; ``none`` (each document one chunk) is a reference row, never the best;
chunks longer than the encoder's window (``max_seq_length``) are counted, since dense retrieval
embeds only their start; and undefined values are None in ``metrics`` (JSON null, never NaN).

Questions come from the corpus: a BEIR folder's queries and judgements (evaluated on its
``test`` split, else its first split that is not ``train``), or extractive answers
(``questions.jsonl``, SQuAD): each question's one relevant document is the one holding its
answer. Without questions, only sizes are compared.
"""

from __future__ import annotations

import bisect
import dataclasses
import json
import logging
import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from biochunk.chunking import NO_CHUNKING, RewriterFactory, models_used
from biochunk.chunking.runs import run_methods
from biochunk.chunking.sizing import make_counter
from biochunk.corpus import Document
from biochunk.evaluation import chunking as evaluation
from biochunk.evaluation.retrieval import PRIMARY, evaluate, evaluate_runs
from biochunk.evaluation.ties import against_best, judged, tie_aware
from biochunk.evaluation.stats import bootstrap_ci
from biochunk.io import ANSWERS, CORPUS, DOCUMENTS, ITEM_SCORES, QRELS, read_table
from biochunk.models import resolve
from biochunk.retrieval import collection, experiment
from biochunk.retrieval.collection import Collection
from biochunk.scoring import crossencoder
from biochunk.text.tokens import embedder_counter
from biochunk.vectors import embedding_texts

log = logging.getLogger(__name__)

ANSWER_DEPTH = 3  # chunk hits kept per query: answer@1 and answer@3 read them
CUTOFF = 10  # the rank of nDCG@10 and recall@10, where ties are counted


@dataclass
class Corpus:
    coll: Collection  # docs (doc_id, text), queries, judgements
    answers: pd.DataFrame | None  # ANSWERS rows, where the corpus has extractive answers
    sections: dict[str, list[dict[str, Any]]] = field(default_factory=dict)  # doc id -> sections (PDF pages)
    eval_split: str = ""
    notes: list[str] = field(default_factory=list)


def load(data: Path, task: str, max_documents: int | None = None) -> Corpus:
    """The converted corpus in ``data`` (``datasets.local.convert_local``'s folder)."""
    if task == "retrieval":
        splits = sorted(set(read_table(data / "qrels.parquet", QRELS)["split"]))
        evals = [s for s in splits if s != "train"]
        eval_split = "test" if "test" in splits else (evals[0] if evals else "")
        coll = collection.load(data, "retrieval", eval_split=eval_split)
        notes = [] if eval_split else ["the only judgements are train judgements: nothing to evaluate retrieval on"]
        if max_documents:
            coll = _first_documents(
                coll, max_documents, read_table(data / "corpus.parquet", CORPUS)["doc_id"].head(max_documents)
            )
        return Corpus(coll, None, {}, eval_split, notes)
    docs = read_table(data / "documents.parquet", DOCUMENTS)
    if max_documents:
        docs = docs.head(max_documents)
    answers = read_table(data / "answers.parquet", ANSWERS) if (data / "answers.parquet").exists() else None
    if answers is not None:
        answers = answers[answers["doc_id"].isin(set(docs["doc_id"]))].reset_index(drop=True)
    qrels = {} if answers is None else {q: {d: 1} for q, d in zip(answers["question_id"], answers["doc_id"])}
    queries = pd.DataFrame(
        {"query_id": [] if answers is None else answers["question_id"], "text": [] if answers is None else answers["question"]}
    ).assign(split="test")
    coll = Collection(docs[["doc_id", "text"]].reset_index(drop=True), queries, qrels, {}, qrels)
    sections = {d: list(s) for d, s in zip(docs["doc_id"], docs["sections"]) if len(s)}
    return Corpus(coll, answers, sections, "test" if qrels else "", [])


def _first_documents(coll: Collection, n: int, keep: pd.Series) -> Collection:
    # A quick run on the first n documents: judgements of the others are dropped, and so are
    # the queries left with none (they could only score 0).
    keep_set = set(keep)
    docs = coll.docs[coll.docs["doc_id"].isin(keep_set)].reset_index(drop=True)

    def cut(qrels):
        out = {q: {d: r for d, r in ds.items() if d in keep_set} for q, ds in qrels.items()}
        return {q: ds for q, ds in out.items() if ds}

    return dataclasses.replace(
        coll, docs=docs, qrels=cut(coll.qrels), train_qrels=cut(coll.train_qrels), test_qrels=cut(coll.test_qrels)
    )


@dataclass
class Comparison:
    methods: list[str]
    sizes: dict[str, dict[str, Any]]  # method -> evaluation.chunking.method_metrics
    chunks: dict[str, pd.DataFrame]  # method -> CHUNKS table
    retrieval: dict[str, dict[str, dict[str, float]]]  # retriever -> method -> metrics (+ ci)
    ranking: list[dict[str, Any]]  # best first: method, retriever, nDCG@10, interval, cut answers
    samples: list[dict[str, Any]]  # questions with the top chunk of the best and the worst method
    notes: list[str]
    runs: pd.DataFrame | None  # RUNS rows
    rerank: dict[str, Any] = field(default_factory=dict)  # BM25's top reranked, where a reranker ran
    window: dict[str, Any] = field(default_factory=dict)  # the encoder's window and the chunks over it (``window_check``)
    # ITEM_SCORES: each judged question's tie-aware nDCG@10 per retriever and method, the metric
    # named by its key in ``metrics`` (``retrieval.<retriever>.<method>.ndcg@10``, and
    # ``rerank.bm25|reranked.ndcg@10`` where a reranker ran), whose mean it is: a paired
    # difference between two runs (scripts/metrics_diff.py) is recomputed from it.
    items: pd.DataFrame | None = None


@dataclass
class Trained:
    """A reranker trained before the comparison (the compare_reranker stage's folder): the
    cross-encoder, or None where there was nothing to train on, and its training report."""

    ce: Any | None
    report: dict[str, Any]


def _ready(reranker: Any) -> bool:
    """Whether ``reranker`` reranks without train judgements: a ``Trained`` one that holds a
    model, or RerankerParams naming a ready cross-encoder (not an offline alias to fine-tune)."""
    if isinstance(reranker, Trained):
        return reranker.ce is not None
    return reranker is not None and not crossencoder.is_base(reranker.model)


def unread_by_ready(p: Any) -> list[str]:
    """The ``train_reranker`` keys (RerankerParams ``p``) that cannot change a ready cross-encoder:
    it is loaded, not trained (nor given a new head from the seed), and a folder that
    ``crossencoder.save`` wrote keeps its own max_length. Empty for the offline alias, which is trained."""
    if crossencoder.is_base(p.model):
        return []
    keys = ["steps", "batch_size", "negatives", "lr", "head_lr", "seed"]
    if (Path(p.model) / crossencoder.HEAD_FILE).is_file():
        keys.append("max_length")
    return [f"train_reranker.{k}" for k in keys]


def run(
    corpus: Corpus,
    methods: Sequence[str],
    chunk_params: Any,
    rp: Any,
    encoder: Any,
    retrievers: Sequence[str] = experiment.RETRIEVERS,
    n_samples: int = 3,
    n_boot: int = 1000,
    reranker: Any | None = None,
    rewriter: RewriterFactory | None = None,
) -> Comparison:
    """Chunk with every method, measure sizes and cut answers, and retrieve where there are questions.

    ``chunk_params(method)``: the chunk.* settings of a method (``RetrieveParams.chunk_params``),
    ``rp``: RetrieveParams (BM25, dense search, fusion, cut-offs, seed). ``reranker``:
    RerankerParams; where the corpus has train judgements a cross-encoder is trained on them
    (``experiment.train_reranker``, as the train_reranker stage does) and reranks BM25's top
    ``rp.rerank_depth`` documents; a ready cross-encoder (``train_reranker.model`` other than
    an offline alias) reranks with or without them; a ``Trained`` one is used as it is (the DVC
    branch trains it in a stage of its own, which no chunk param re-runs); None (or nothing to
    train on and nothing ready) skips it with a one-line note.
    ``rewriter``: builds the generator that writes ``chunk.header: generator`` titles.
    """
    coll, notes = corpus.coll, list(corpus.notes)
    docs = [Document(str(d), str(t)) for d, t in zip(coll.docs["doc_id"], coll.docs["text"])]
    runs = run_methods(docs, chunk_params(methods[0]), methods, encoder, rewriter=rewriter)
    chunks = {r.method: r.chunks for r in runs}
    span_counter_of = make_counter("embedder", encoder).for_document
    sizes = {r.method: evaluation.method_metrics(r, docs, span_counter_of, corpus.answers) for r in runs}
    # Only dense retrieval embeds chunks (hybrid through it): BM25 alone reads them whole.
    embeds = bool({"dense", "hybrid"} & set(retrievers))
    window = window_check(encoder, {NO_CHUNKING: coll.docs.assign(metadata="{}"), **chunks}) if embeds else {}
    notes += window.get("notes", [])
    retrieval: dict[str, dict[str, dict[str, float]]] = {}
    ranking: list[dict[str, Any]] = []
    samples: list[dict[str, Any]] = []
    runs_df = None
    # A reranker needs train judgements to be trained on, unless it is ready: a cross-encoder
    # named by train_reranker.model, or one the compare_reranker stage saved.
    rerankable = bool(coll.train_qrels) or _ready(reranker)
    with_bm25 = "bm25" in retrievers or "hybrid" in retrievers  # the reranker reorders BM25's top documents
    if not rerankable:
        notes.append(
            "reranking skipped: no training judgements (a BEIR qrels/train.tsv would provide them, "
            "or name a ready cross-encoder: train_reranker.model)"
        )
    elif reranker is None or rp.rerank_depth <= 0 or not coll.qrels or not with_bm25:
        why = (
            "turned off" if reranker is None
            else "retrieve.rerank_depth is 0" if rp.rerank_depth <= 0
            else "no questions to evaluate it on" if not coll.qrels
            else "it reranks BM25's top documents, and --retrievers runs neither bm25 nor hybrid"
        )  # fmt: skip
        trainable = f" ({len(coll.train_qrels)} queries have train judgements)" if coll.train_qrels else ""
        notes.append(f"reranking skipped: {why}{trainable}")
    if not coll.qrels:
        notes.append("no questions: methods are compared by size only (add questions.jsonl, or use a BEIR folder with qrels)")
        return Comparison(list(methods), sizes, chunks, retrieval, ranking, samples, notes, runs_df, window=window)
    bm25 = [NO_CHUNKING, *methods] if with_bm25 else []
    dense = [NO_CHUNKING, *methods] if "dense" in retrievers or "hybrid" in retrievers else []
    rp = dataclasses.replace(rp, bm25_methods=bm25, dense_methods=dense, ks=[k for k in rp.ks if k <= rp.depth])
    res = experiment.run_retrievers(coll, rp, chunk_params, encoder, chunk_tables=chunks, keep_chunk_hits=ANSWER_DEPTH)
    evaluated = evaluate_runs(res.runs, coll.qrels, rp.ks)  # retriever -> method -> metrics
    per_query: dict[tuple[str, str], np.ndarray] = {}  # (retriever, method) -> tie-aware nDCG@10 per query
    for (retriever, method), r in res.runs.items():
        if retriever not in retrievers:
            continue
        m = scored(bm25_ties(r) if retriever == "bm25" else r, coll.qrels, evaluated[retriever][method], n_boot, rp.seed)
        per_query[(retriever, method)] = m.pop("per_query")
        if corpus.answers is not None and (retriever, method) in res.chunk_hits:
            m.update(answer_hits(res.chunk_hits[(retriever, method)], chunks.get(method), corpus.answers))
        retrieval.setdefault(retriever, {})[method] = m
    ranker = next(r for r in ("hybrid", "dense", "bm25") if r in retrieval)
    for method, m in retrieval[ranker].items():
        row = {"method": method, "retriever": ranker, PRIMARY: m[PRIMARY]}
        row.update({"ci_low": m[f"{PRIMARY}_ci_low"], "ci_high": m[f"{PRIMARY}_ci_high"]})
        row.update({f"{r}_{PRIMARY}": retrieval[r][method][PRIMARY] for r in retrieval})
        row["recall@10"] = m.get("recall@10", float("nan"))
        row.update({k: m[k] for k in (f"{PRIMARY}_trec_eval", "ties_at_cutoff", "tie_sensitive")})
        # Whole documents are a reference: their top "chunk" holds any answer of its document.
        row["reference"] = method == NO_CHUNKING
        chunk_level = "dense" if "dense" in retrieval else "bm25"
        row["answer@1"] = retrieval.get(chunk_level, {}).get(method, {}).get("answer@1", float("nan"))
        if method in sizes:
            row["chunks"] = sizes[method]["chunks"]
            row["cut_answer_share"] = sizes[method].get("cut_answer_share", float("nan"))
        else:
            row["chunks"] = len(coll.docs)
            row["cut_answer_share"] = 0.0 if corpus.answers is not None else float("nan")
        ranking.append(row)
    # Ties (common on a small corpus) are broken by the chunk-level answer share, then by name;
    # the reference row comes after every chunk method, whatever its score.
    ranking.sort(key=lambda r: (r["reference"], -r[PRIMARY], -_or0(r["answer@1"]), r["method"]))
    best = ranking[0]["method"]
    paired = against_best({r["method"]: per_query[(ranker, r["method"])] for r in ranking}, best, n_boot, rp.seed)
    rank = 0
    for row in ranking:
        rank += not row["reference"]
        row["rank"] = None if row["reference"] else rank
        p = paired[row["method"]]
        row.update({"vs_best": p["delta"], "vs_best_low": p["ci_low"], "vs_best_high": p["ci_high"], "separable": p["separable"]})
    rerank: dict[str, Any] = {}
    if rerankable and reranker is not None and rp.rerank_depth > 0 and ("bm25", NO_CHUNKING) in res.runs:
        rerank = _rerank(coll, res, reranker, rp, n_boot, notes)
    runs_df = experiment.runs_table(res, rp.save_depth)
    queries = judged(coll.qrels)
    keyed = {f"retrieval.{r}.{m}.{PRIMARY}": values for (r, m), values in per_query.items()}
    keyed.update({f"rerank.{k}.{PRIMARY}": values for k, values in rerank.pop("per_query", {}).items()})
    items = pd.DataFrame(
        [(q, key, float(v)) for key, values in keyed.items() for q, v in zip(queries, values)], columns=ITEM_SCORES.names
    )
    ranked = [r["method"] for r in ranking if r["method"] != NO_CHUNKING]
    hits_from = "dense" if ("dense", ranked[0]) in res.chunk_hits else "bm25"
    samples = _samples(corpus, chunks, res, ranked[0], ranked[-1], hits_from, n_samples, rp.seed)
    return Comparison(list(methods), sizes, chunks, retrieval, ranking, samples, notes, runs_df, rerank, window, items)


def _rerank(coll: Collection, res: experiment.Results, reranker: Any, rp: Any, n_boot: int, notes: list[str]) -> dict[str, Any]:
    """Train on the train judgements (or take the ``Trained`` one), rerank BM25's top documents,
    score both on the evaluated queries."""
    if isinstance(reranker, Trained):
        ce, report = reranker.ce, reranker.report
    else:
        ce, report = experiment.train_reranker(coll, reranker, rp.k1, rp.b, "the corpus")
    if ce is None:
        notes.append(f"reranking skipped: {report['reason']}")
        return {"report": report}
    _, base = experiment.base_run(res, "bm25")
    base = {q: base[q] for q in coll.qrels if q in base}
    texts = dict(zip(coll.docs["doc_id"], coll.docs["text"]))
    queries = dict(zip(coll.queries["query_id"], coll.queries["text"]))
    run = crossencoder.rerank(ce, queries, base, texts, rp.rerank_depth)
    out: dict[str, Any] = {"report": report, "depth": rp.rerank_depth, "per_query": {}}
    for key, r in (("bm25", base), ("reranked", run)):
        out[key] = scored(bm25_ties(r) if key == "bm25" else r, coll.qrels, evaluate(r, coll.qrels, rp.ks), n_boot, rp.seed)
        out["per_query"][key] = out[key].pop("per_query")
    res.runs[("rerank", NO_CHUNKING)] = run
    # Whether reranking pays on this corpus is a difference over the same questions: the two
    # runs' own intervals overlap even where most questions move one way.
    d = against_best(out["per_query"], "bm25", n_boot, rp.seed)["reranked"]
    out["reranked_minus_bm25"] = {PRIMARY: d["delta"], f"{PRIMARY}_ci_low": d["ci_low"], f"{PRIMARY}_ci_high": d["ci_high"]}
    out["reranked_minus_bm25"]["separable"] = d["separable"]
    # A ready cross-encoder's report has no steps: it was loaded, not trained.
    if report["trained"]:
        trained = f"trained {report['steps']} steps on {report['groups']} train queries"
    else:
        trained = f"{report['model']}, used as is"
    got, n = out["reranked"], len(out["per_query"]["bm25"])
    paired = f"{d['delta']:+.3f}" if d["ci_low"] is None else f"{d['delta']:+.3f} [{d['ci_low']:+.3f}, {d['ci_high']:+.3f}]"
    hurts = (
        "it hurts on this corpus: --no-rerank keeps BM25's order (or train longer, train_reranker.steps, "
        "or name a ready cross-encoder, train_reranker.model)"
    )
    verdict = (
        "no interval without resamples (--bootstrap 0)" if d["separable"] is None
        else "not separable from BM25 at this number of questions" if not d["separable"]
        else "it helps on this corpus" if d["delta"] > 0
        else hurts
    )  # fmt: skip
    notes.append(
        f"reranker ({trained}): BM25's top {rp.rerank_depth} whole documents reranked, nDCG@10 "
        f"{got[PRIMARY]:.3f} [{got[f'{PRIMARY}_ci_low']:.3f}, {got[f'{PRIMARY}_ci_high']:.3f}] "
        f"against BM25's {out['bm25'][PRIMARY]:.3f}: {paired} paired over the same {n} questions, {verdict}"
    )
    return out


def _or0(v: float) -> float:
    return 0.0 if math.isnan(v) else v  # NaN (no answers) sorts as 0


def bm25_ties(run: Any) -> dict[str, list[tuple[str, float]]]:
    """A BM25 run with its ties back: Anserini breaks them itself before we see them (its
    TiebreakerReranker rounds scores to 4 decimals, then takes 1e-6 off each further document
    of a tie, in document id order), so scores equal at 4 decimals are one tie again.

    Hybrid retrieval fuses BM25's ranks after that tie-break; only its own ties are seen.
    """
    return {q: [(d, round(float(s), 4)) for d, s in hits] for q, hits in run.items()}


def scored(run: Any, qrels: Any, metrics: dict[str, Any], n_boot: int, seed: int) -> dict[str, Any]:
    """``metrics`` (``evaluate``'s, of ``run``) with tie-aware nDCG@10 and recall@10, the
    bootstrap interval of nDCG@10 and the run's ties.

    The other measures stay in trec_eval's order (equal scores by document id, descending);
    its nDCG@10 is kept as ``ndcg@10_trec_eval``. ``per_query``: the tie-aware nDCG@10 per
    judged query (``sorted(qrels)``), for the paired intervals.
    """
    ta = tie_aware(run, qrels, CUTOFF)
    v = ta[PRIMARY]
    lo, hi = bootstrap_ci(v, np.mean, n_boot, seed)
    n = len(v)
    return {
        **metrics,
        f"{PRIMARY}_trec_eval": metrics[PRIMARY],
        PRIMARY: float(v.mean()) if n else 0.0,
        f"recall@{CUTOFF}": float(ta[f"recall@{CUTOFF}"].mean()) if n else 0.0,
        # Named after the metric they bound, as every metrics file names an interval
        # (``triple.f1_ci_low``): scripts/metrics_diff.py finds it there for an unpaired change.
        f"{PRIMARY}_ci_low": lo,
        f"{PRIMARY}_ci_high": hi,
        "queries": n,
        "ties_at_cutoff": int(ta["tie_at_cutoff"].sum()),
        "tie_sensitive": int(ta["tie_sensitive"].sum()),
        "per_query": v,
    }


def encoder_window(encoder: Any) -> int | None:
    """The encoder's window in tokens of its tokenizer, special tokens included
    (sentence-transformers' ``max_seq_length``); None where it cannot be told.

    Read from the model's ``sentence_bert_config.json`` (no weights loaded); an encoder that
    states ``max_seq_length`` itself (a loaded model, a test double) is taken at its word.
    """
    stated = getattr(encoder, "max_seq_length", None)
    if isinstance(stated, int) and stated > 0:
        return stated
    name = getattr(encoder, "model_name", None)
    if not name:
        return None
    where = resolve(name, "embed.model")
    path: Path | None = Path(where) / "sentence_bert_config.json"
    if not path.is_file():
        from huggingface_hub import try_to_load_from_cache

        cached = try_to_load_from_cache(where, "sentence_bert_config.json")
        path = Path(cached) if isinstance(cached, str) else None
    if path is None:
        return None
    value = json.loads(path.read_text(encoding="utf-8")).get("max_seq_length")
    return int(value) if isinstance(value, int) and value > 0 else None


def window_check(encoder: Any, tables: dict[str, pd.DataFrame]) -> dict[str, Any]:
    """Chunks per method whose embedded text (``vectors.embedding_text``) is longer than the
    encoder's window: dense retrieval embeds only their first ``max_seq_length`` tokens.

    ``tables``: method -> CHUNKS-like table (``text``, ``metadata``). Returns ``{}`` where the
    window or the tokenizer is unknown; else the model, its window, per method the chunks
    over it and in all, the longest in tokens, and a note where any chunk is over it.
    """
    window, name = encoder_window(encoder), getattr(encoder, "model_name", None)
    if window is None or not name:
        return {}
    tokenizer = embedder_counter(name).tokenizer  # truncation and padding off
    over, total, longest = {}, {}, {}
    for method, table in tables.items():
        texts = embedding_texts(table) if len(table) else []
        # Special tokens count: [CLS] and [SEP] take two of a BERT window's positions.
        lengths = [len(e.ids) for e in tokenizer.encode_batch(texts, add_special_tokens=True)] if texts else []
        over[method] = sum(n > window for n in lengths)
        total[method] = len(lengths)
        longest[method] = max(lengths, default=0)
    counts = [f"{m} {over[m]} of {total[m]}{' documents' if m == NO_CHUNKING else ''}" for m in tables if over[m]]
    notes = (
        [
            f"chunks longer than the encoder's window ({name}: {window} tokens) are embedded truncated, dense retrieval "
            f"reading only their first {window} tokens: {', '.join(counts)} (the longest: {max(longest.values())} tokens)"
        ]
        if counts
        else []
    )
    # Logged once, by the command, with the comparison's other notes.
    return {"model": name, "max_seq_length": window, "over": over, "chunks": total, "longest": longest, "notes": notes}


def answer_hits(hits: dict[str, list], chunks: pd.DataFrame | None, answers: pd.DataFrame) -> dict[str, float]:
    """Share of answered questions whose gold answer lies whole in the top 1 / top ``ANSWER_DEPTH`` chunks.

    A chunk-level measure: document judgements cannot see an answer cut in two, this can. The
    judgement is ``evaluation.gold_in_hits`` (the semchunk comparison's). ``chunks`` None: each
    document is one chunk (``none``), its id the document id.
    """
    cols = ["chunk_id", "doc_id", "start", "end", "metadata"]  # metadata: a joined chunk's pieces
    span = {} if chunks is None else {c: tuple(r) for c, *r in chunks.reindex(columns=cols).itertuples(index=False)}
    gold = answers[["question_id", "doc_id", "start", "end"]]
    out = {}
    for k in (1, ANSWER_DEPTH):
        rows = [(q, *span.get(c, (c, 0, math.inf, None))) for q, hs in hits.items() for c, _ in hs[:k]]
        top = pd.DataFrame(rows, columns=["question_id", *cols[1:]])
        judged = evaluation.gold_in_hits(top, gold)
        out[f"answer@{k}"] = float(judged["whole"].mean()) if len(judged) else float("nan")
    return out


def _samples(
    corpus: Corpus,
    chunks: dict[str, pd.DataFrame],
    res: experiment.Results,
    best: str,
    worst: str,
    retriever: str,
    n: int,
    seed: int,
) -> list[dict[str, Any]]:
    coll = corpus.coll
    qids = collection.seeded_sample(list(coll.qrels), n, seed)
    question = dict(zip(coll.queries["query_id"], coll.queries["text"]))
    answer = (
        {}
        if corpus.answers is None
        else {
            q: (d, s, e, t)
            for q, d, s, e, t in corpus.answers[["question_id", "doc_id", "start", "end", "answer_text"]].itertuples(index=False)
        }
    )
    out = []
    for q in qids:
        row: dict[str, Any] = {
            "query_id": q,
            "question": question.get(q, ""),
            "relevant": sorted(coll.qrels[q]),
            "retriever": retriever,
        }
        if q in answer:
            row["answer"] = answer[q][3]
        for label, method in (("best", best), ("worst", worst)):
            row[label] = _top_chunk(
                corpus,
                chunks[method],
                res.chunk_hits.get((retriever, method), {}).get(q, []),
                method,
                answer.get(q),
                coll.qrels[q],
            )
        out.append(row)
    return out


def _top_chunk(
    corpus: Corpus, chunks: pd.DataFrame, hits: list, method: str, answer: tuple | None, relevant: dict
) -> dict[str, Any]:
    if not hits:
        return {"method": method, "text": "", "doc_id": "", "relevant": False}
    c = chunks.loc[chunks["chunk_id"] == hits[0][0]].iloc[0]
    out = {
        "method": method,
        "chunk_id": c["chunk_id"],
        "doc_id": c["doc_id"],
        "text": c["text"],
        "start": int(c["start"]),
        "end": int(c["end"]),
        "score": float(hits[0][1]),
        "relevant": c["doc_id"] in relevant,
        "section": section_of(corpus.sections.get(c["doc_id"], []), int(c["start"])),
        "mark": None,  # [start, end) of the answer inside the chunk text
        "answer_whole": None,
    }
    if answer is not None and answer[0] == c["doc_id"]:
        s, e = max(answer[1], out["start"]), min(answer[2], out["end"])
        if s < e:
            out["mark"] = [s - out["start"], e - out["start"]]
        out["answer_whole"] = out["start"] <= answer[1] and answer[2] <= out["end"]
    return out


def section_of(sections: list[dict[str, Any]], start: int) -> str:
    """The title of the last section opening at or before offset ``start`` (a PDF page: ``page <n>``), or ""."""
    starts = [int(s["start"]) for s in sections]
    i = bisect.bisect_right(starts, start) - 1
    return str(sections[i]["title"]) if i >= 0 else ""


def method_settings(params: Any, embed_model: str) -> dict[str, Any]:
    """What one method cut with, by params key: ``chunk.method``, the other ``chunk.*`` keys that
    method reads (``ChunkParams.reads``; ``params`` already holds ``retrieve.chunk``'s values)
    and the models it loads (``embed.model``, ``chunk.generator``). A key the method does not
    read cannot change its chunks, so it is left out: these values cut the same chunks again
    (``corpus_report.use_snippet``)."""
    out: dict[str, Any] = {"chunk.method": params.method}
    out.update({f"chunk.{k}": getattr(params, k) for k in sorted(params.reads() - {"method"})})
    out.update({key: model for model, key in models_used(params, embed_model)})
    return dict(sorted(out.items()))  # the order metrics.json (sorted keys) gives them back in


def metrics(c: Comparison, corpus: Corpus, info: dict[str, Any]) -> dict[str, Any]:
    """The comparison as one JSON-able dict (metrics.json); an undefined value is None, never NaN."""
    return json.loads(
        json.dumps(
            {
                "corpus": {
                    **info,
                    "documents": len(corpus.coll.docs),
                    "questions": len(corpus.coll.qrels),
                    "eval_split": corpus.eval_split,
                },
                "sizes": c.sizes,
                "retrieval": c.retrieval,
                "ranking": c.ranking,
                "rerank": c.rerank,
                "window": {k: v for k, v in c.window.items() if k != "notes"},
                "notes": c.notes,
            },
            default=lambda o: o.item() if hasattr(o, "item") else str(o),
        ),
        parse_constant=lambda _: None,  # NaN and infinities (undefined: no answers, no resamples) -> null
    )
