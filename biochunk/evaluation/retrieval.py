"""Retrieval metrics through ir-measures: nDCG@10, MAP, MRR@10, Recall@k, P@k and F1@k.

Runs and judgements are plain mappings (``{query_id: {doc_id: score}}`` and
``{query_id: {doc_id: relevance}}``). Every judged query counts: one that a run leaves
out (or answers with nothing) scores 0, rather than being skipped as trec_eval does by
default, so a retriever can not look better by failing to answer.

F1@k is computed from the mean P@k and mean R@k (``2PR / (P + R)``), the way the clinical
chunking study reports it; the per-query mean of F1 is kept as ``f1q@k`` beside it.

``evaluate_runs`` scores a retrieval experiment's runs (``retrieval.experiment.run_retrievers``);
``gold_hits`` the QA contexts (``retrieval.contexts``) against the questions' gold documents.
"""

from __future__ import annotations

import logging
from typing import Mapping, Sequence

import ir_measures
import numpy as np
import pandas as pd
from ir_measures import AP, RR, P, R, nDCG

from biochunk.evaluation.stats import bootstrap_ci

log = logging.getLogger(__name__)

Run = Mapping[str, Sequence[tuple[str, float]]]  # query id -> (doc id, score), best first
Qrels = Mapping[str, Mapping[str, int]]

PRIMARY = "ndcg@10"


def _name(measure) -> str:
    # nDCG@10 -> ndcg@10, AP -> map, RR@10 -> mrr@10, R@100 -> recall@100, P@5 -> p@5
    s = str(measure)
    return {"AP": "map", "RR@10": "mrr@10"}.get(s, s.replace("R@", "recall@", 1) if s.startswith("R@") else s.lower())


PerQuery = dict[str, dict[str, float]]  # measure name -> query id -> value


def _per_query(run: Run, qrels: Qrels, measures: list) -> tuple[dict[str, dict[str, int]], PerQuery]:
    """The judged queries, and each measure's value per query that the run answers (absent: 0)."""
    qrels_d = {q: {d: int(r) for d, r in docs.items()} for q, docs in qrels.items() if docs}
    run_d = {q: {d: float(s) for d, s in hits} for q, hits in run.items() if q in qrels_d and hits}
    per_query: PerQuery = {_name(m): {} for m in measures}
    if run_d:
        for metric in ir_measures.iter_calc(measures, qrels_d, run_d):
            per_query[_name(metric.measure)][metric.query_id] = float(metric.value)
    return qrels_d, per_query


def paired_delta(run_a: Run, run_b: Run, qrels: Qrels, n_boot: int = 1000, seed: int = 42) -> dict[str, float]:
    """nDCG@10 of B minus A over the same judged queries, with a paired bootstrap interval.

    Chunk methods move SciFact's nDCG@10 by a point or two; whether such a gap is more than
    query sampling is a question about the per-query differences, so they are resampled.
    """
    qrels_d, a = _per_query(run_a, qrels, [nDCG @ 10])
    _, b = _per_query(run_b, qrels, [nDCG @ 10])
    d = np.array([b[PRIMARY].get(q, 0.0) - a[PRIMARY].get(q, 0.0) for q in qrels_d])
    lo, hi = bootstrap_ci(d, np.mean, n_boot, seed)
    return {"delta": float(d.mean()) if len(d) else 0.0, "ci_low": lo, "ci_high": hi, "queries": len(d)}


def evaluate(run: Run, qrels: Qrels, ks: Sequence[int] = (5, 10, 100)) -> dict[str, float]:
    """A flat dict of metrics averaged over every judged query; ``PRIMARY`` is nDCG@10."""
    ks = sorted(set(int(k) for k in ks))
    measures = [nDCG @ 10, AP, RR @ 10] + [R @ k for k in ks] + [P @ k for k in ks]
    qrels_d, per_query = _per_query(run, qrels, measures)
    n = len(qrels_d)
    out = {name: (sum(v.values()) / n if n else 0.0) for name, v in per_query.items()}
    for k in ks:
        p, r = out[f"p@{k}"], out[f"recall@{k}"]
        out[f"f1@{k}"] = 2 * p * r / (p + r) if p + r else 0.0
        pq, rq = per_query[f"p@{k}"], per_query[f"recall@{k}"]
        f1s = [2 * pq.get(q, 0) * rq.get(q, 0) / (pq.get(q, 0) + rq.get(q, 0)) if pq.get(q, 0) + rq.get(q, 0) else 0.0 for q in qrels_d]
        out[f"f1q@{k}"] = sum(f1s) / n if n else 0.0
    out["queries"] = n
    return out


def evaluate_runs(
    runs: Mapping[tuple[str, str], Run], qrels: Qrels, ks: Sequence[int] = (5, 10, 100)
) -> dict[str, dict[str, dict[str, float]]]:
    """``evaluate`` of every (retriever, method) run: retriever -> method -> metrics, in run order."""
    out: dict[str, dict[str, dict[str, float]]] = {}
    for (retriever, method), run in runs.items():
        m = evaluate(run, qrels, ks)
        out.setdefault(retriever, {})[method] = m
        log.info("%-7s %-13s nDCG@10 %.4f  R@%d %.4f", retriever, method, m["ndcg@10"], max(ks), m[f"recall@{max(ks)}"])
    return out


def gold_hits(contexts: pd.DataFrame, questions: pd.DataFrame) -> pd.DataFrame:
    """Per question and method: whether a retrieved chunk comes from a gold document (any
    rank, and rank 1): what a chunk method gives the generator to work with."""
    gold = dict(zip(questions["id"].astype(str), (set(d) for d in questions["doc_ids"])))
    contexts = contexts[contexts["question_id"].isin(gold)]
    c = contexts.assign(hit=[d in gold.get(q, set()) for q, d in zip(contexts["question_id"], contexts["doc_id"])])
    top1 = c[c["rank"] == 1].set_index(["question_id", "method"])["hit"]
    anyk = c.groupby(["question_id", "method"])["hit"].any()
    return pd.DataFrame({"gold_doc_hit@1": top1, "gold_doc_hit@k": anyk}).fillna(False).astype(float).reset_index()


def chunk_qrels(qrels: Qrels, chunk_doc: Mapping[str, str]) -> dict[str, dict[str, int]]:
    """Chunk-level judgements: every chunk of a judged document carries its document's grade.

    ``chunk_doc`` maps chunk id -> document id. Overlapping chunks of one document are each a
    relevant item of their own, so a query's recall counts all of them.
    """
    chunks_of: dict[str, list[str]] = {}
    for c, d in chunk_doc.items():
        chunks_of.setdefault(d, []).append(c)
    return {q: {c: int(r) for d, r in docs.items() for c in chunks_of.get(d, ())} for q, docs in qrels.items()}


def per_query(run: Run, qrels: Qrels, ks: Sequence[int] = (5, 10)) -> dict[str, np.ndarray]:
    """Per-query P@k, recall@k, F1@k (``2PR / (P + R)`` of that query), AP@k and success@k,
    in the order of the judged queries (``sorted(qrels)``); an unanswered query scores 0."""
    ks = sorted(set(int(k) for k in ks))
    measures = [m for k in ks for m in (P @ k, R @ k, AP @ k, ir_measures.Success @ k)]
    qrels_d, pq = _per_query(run, qrels, measures)
    qs = sorted(qrels_d)
    out = {name: np.array([v.get(q, 0.0) for q in qs]) for name, v in pq.items()}
    for k in ks:
        p, r = out[f"p@{k}"], out[f"recall@{k}"]
        out[f"f1@{k}"] = np.divide(2 * p * r, p + r, out=np.zeros_like(p), where=(p + r) > 0)
    return out
