"""Everything evaluate reports for a triple dataset: metrics with intervals, plot tables."""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from biochunk.evaluation.stats import bootstrap_ci
from biochunk.evaluation.triples import PARTS, counts, hit_at_k, micro


def extraction_metrics(gold: dict, pred: dict, n_boot: int, seed: int) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for name, part in PARTS.items():
        c = counts(gold, pred, part)
        m = micro(c)
        lo, hi = bootstrap_ci(c, lambda x: micro(x)["f1"], n_boot, seed)
        out[name] = {**m, "f1_ci_low": lo, "f1_ci_high": hi}
    return out


def per_input_counts(gold: dict, pred: dict) -> pd.DataFrame:
    """Every part's per-input (tp, predicted, gold) counts as per-item scores (ITEM_SCORES rows):
    what ``extraction_metrics`` resamples, so each interval it reports, and every paired
    difference between two runs, is recomputed from the tracked file alone."""
    ids = [str(k) for k in gold]
    rows = []
    for name, part in PARTS.items():
        c = counts(gold, pred, part)
        for j, col in enumerate(("tp", "predicted", "gold")):
            rows += [(i, f"{name}.{col}", float(v)) for i, v in zip(ids, c[:, j])]
    return pd.DataFrame(rows, columns=["item_id", "metric", "value"])


def paired_difference(gold: dict, pred_a: dict, pred_b: dict, n_boot: int, seed: int) -> dict[str, Any]:
    """Micro F1 of B minus A on the same inputs, with a paired bootstrap interval per part.

    Both systems are resampled with the same inputs, so the interval is that of the
    difference itself: two overlapping per-system intervals do not settle whether B beats A,
    this does (an interval that excludes 0).
    """
    out: dict[str, Any] = {}
    for name, part in PARTS.items():
        c = np.hstack([counts(gold, pred_a, part), counts(gold, pred_b, part)])

        def delta(x: np.ndarray) -> float:
            return micro(x[:, 3:])["f1"] - micro(x[:, :3])["f1"]

        lo, hi = bootstrap_ci(c, delta, n_boot, seed)
        out[name] = {"f1_a": micro(c[:, :3])["f1"], "f1_b": micro(c[:, 3:])["f1"], "delta": delta(c), "ci_low": lo, "ci_high": hi}
    return out


def retrieval_metrics(
    rankings: pd.DataFrame, chunks: pd.DataFrame, test: pd.DataFrame, n_boot: int, seed: int
) -> tuple[dict[str, Any], pd.DataFrame]:
    """Hit rates of the test inputs' ranked chunks, per ranker, and a hit@k curve table.

    relation_hit: a chunk carries a gold relation of the input (the signal that
    separates chunking strategies on a CPU, see docs/results/biomedrag.md); head_hit / tail_hit: the
    chunk text contains the gold head / tail (case-insensitive).
    """
    gold = test.groupby("id").agg(relations=("relation", set), heads=("head", set), tails=("tail", set))
    labels = dict(zip(chunks["chunk_id"], (set(x) for x in chunks["labels"])))
    texts = dict(zip(chunks["chunk_id"], chunks["text"].str.lower()))
    metrics: dict[str, Any] = {}
    curve = []
    for ranker, r in rankings[rankings["split"] == "test"].groupby("ranker", sort=True):
        lists = r.sort_values(["input_id", "rank"]).groupby("input_id")["chunk_id"].agg(list)
        lists = lists.reindex(gold.index).apply(lambda x: x if isinstance(x, list) else [])
        k = int(r["rank"].max())
        flags = {
            "relation": [[bool(labels[c] & g) for c in cs] for cs, g in zip(lists, gold["relations"])],
            "head": [[any(h.lower() in texts[c] for h in g) for c in cs] for cs, g in zip(lists, gold["heads"])],
            "tail": [[any(t.lower() in texts[c] for t in g) for c in cs] for cs, g in zip(lists, gold["tails"])],
        }
        m: dict[str, float] = {}
        for what, f in flags.items():
            for at in sorted({1, k}):
                hits = hit_at_k(f, at)
                lo, hi = bootstrap_ci(hits, np.mean, n_boot, seed)
                m[f"{what}_hit@{at}"] = float(hits.mean()) if len(hits) else 0.0
                m[f"{what}_hit@{at}_ci_low"], m[f"{what}_hit@{at}_ci_high"] = lo, hi
        for at in range(1, k + 1):
            curve.append({"ranker": ranker, "k": at, "relation_hit": float(hit_at_k(flags["relation"], at).mean())})
        metrics[ranker] = m
    return metrics, pd.DataFrame(curve, columns=["ranker", "k", "relation_hit"])


def chunk_statistics(chunks: pd.DataFrame) -> dict[str, float]:
    n = chunks["n_tokens"].to_numpy()
    chars = (chunks["end"] - chunks["start"]).to_numpy()
    if len(n) == 0:
        return {"count": 0}
    return {
        "count": int(len(n)),
        "tokens_mean": float(n.mean()),
        "tokens_median": float(np.median(n)),
        "tokens_p95": float(np.quantile(n, 0.95)),
        "tokens_max": int(n.max()),
        "chars_mean": float(chars.mean()),
    }
