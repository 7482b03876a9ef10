"""What a ranking of methods may claim on few questions: tie-aware nDCG@k and recall@k, and
each method's difference to the best with a paired bootstrap interval.

Used by the own-corpus comparison (``evaluation.corpus_compare``), where a small corpus makes both
problems common. Kept apart from ``evaluation.retrieval`` (the pipeline stages' measures,
which these do not change): a run without ties scores here as ir-measures scores it there.
"""

from __future__ import annotations

from typing import Mapping, Sequence

import numpy as np

from biochunk.evaluation.papers import paired_delta

Run = Mapping[str, Sequence[tuple[str, float]]]  # query id -> (doc id, score), best first
Qrels = Mapping[str, Mapping[str, int]]


def _tied_groups(hits: Sequence[tuple[str, float]]) -> list[list[str]]:
    """The run's documents by descending score, documents of equal score in one group."""
    ranked = sorted(hits, key=lambda h: -float(h[1]))  # stable: the run's own order within a score
    groups: list[list[str]] = []
    last: float | None = None
    for d, s in ranked:
        if last is not None and float(s) == last:
            groups[-1].append(d)
        else:
            groups.append([d])
        last = float(s)
    return groups


def judged(qrels: Qrels) -> list[str]:
    """The queries ``tie_aware`` scores, in the order of its arrays: those with a judgement, sorted."""
    return sorted(q for q, docs in qrels.items() if docs)


def tie_aware(run: Run, qrels: Qrels, k: int = 10) -> dict[str, np.ndarray]:
    """Per judged query (``sorted(qrels)``): nDCG@k and recall@k as their expected value over
    every order of tied scores (McSherry & Najork, ECIR 2008), and where ties matter.

    trec_eval (and so ir_measures) orders equal scores by document id, descending: on a small
    corpus, where RRF gives two documents swapped between BM25 and dense the same score, that
    arbitrary order moves nDCG@10. Each document of a tied group is equally likely at each of
    the group's positions, so it takes the group's mean gain at the group's summed discounts
    (linear gains, ``1 / log2(rank + 1)``, as trec_eval); untied runs score as trec_eval does.
    ``tie_at_cutoff``: a tied group straddles rank k (which of its documents count depends on
    the order); ``tie_sensitive``: the query's nDCG@k would change with the order of ties.
    An unanswered query scores 0.
    """
    qs = judged(qrels)
    discount = 1.0 / np.log2(np.arange(2, k + 2))  # ranks 1..k
    out: dict[str, np.ndarray] = {
        f"ndcg@{k}": np.zeros(len(qs)),
        f"recall@{k}": np.zeros(len(qs)),
        "tie_at_cutoff": np.zeros(len(qs), bool),
        "tie_sensitive": np.zeros(len(qs), bool),
    }
    for i, q in enumerate(qs):
        gain = {d: max(0, int(r)) for d, r in qrels[q].items()}
        ideal = sorted((g for g in gain.values() if g > 0), reverse=True)[:k]
        idcg = float(np.dot(ideal, discount[: len(ideal)]))
        relevant = sum(1 for g in gain.values() if g > 0)
        dcg = found = 0.0
        start = 0  # 0-based rank of the group's first document
        for group in _tied_groups(run.get(q, ())):
            if start >= k:
                break
            inside = min(start + len(group), k) - start  # the group's positions within the top k
            gains = [gain.get(d, 0) for d in group]
            dcg += float(np.mean(gains)) * float(discount[start : start + inside].sum())
            found += sum(g > 0 for g in gains) * inside / len(group)
            if len(group) > 1:
                out["tie_at_cutoff"][i] |= start + len(group) > k
                out["tie_sensitive"][i] |= len(set(gains)) > 1
            start += len(group)
        out[f"ndcg@{k}"][i] = dcg / idcg if idcg > 0 else 0.0
        out[f"recall@{k}"][i] = found / relevant if relevant else 0.0
    return out


def against_best(values: Mapping[str, np.ndarray], best: str, n_boot: int = 1000, seed: int = 42) -> dict[str, dict[str, float | None]]:
    """Each row's mean per-query difference to row ``best`` (same queries, same order), with a
    paired 95% bootstrap interval.

    Two methods scored on the same questions share most of their variance (an easy question
    is easy for both), so unpaired intervals overlap where the differences are consistent; the
    paired interval resamples the differences. Every row draws the same resamples (one seed,
    one length: ``stats.bootstrap_ci``), so rows are compared on the same question samples.
    ``separable``: the interval excludes 0 (None for ``best`` itself, or without resamples).
    """
    out: dict[str, dict[str, float | None]] = {}
    for key, v in values.items():
        if key == best or not len(v):
            out[key] = {"delta": 0.0 if key == best else None, "ci_low": None, "ci_high": None, "separable": None}
            continue
        # The papers' tables' paired difference: one implementation of the idea.
        est = paired_delta(values[best], v, n_boot, seed)
        lo, hi = est.lo, est.hi
        ok = not (np.isnan(lo) or np.isnan(hi))
        out[key] = {
            "delta": est.value,
            "ci_low": lo if ok else None,
            "ci_high": hi if ok else None,
            "separable": bool(hi < 0 or lo > 0) if ok else None,
        }
    return out
