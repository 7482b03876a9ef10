"""Stage evaluate_retrieval: chunk-level retrieval scores per query, and chunk sizes.

Two judgements, by what the sample holds:

- documents (BEIR): a retrieved chunk is relevant when its document is judged relevant for
  the query (as the structural-chunking authors' code scores it;
  ``evaluation.retrieval.chunk_qrels``). Per query: P@k, recall@k, F1@k, AP@k and success@k.
- answer spans (a QA dataset's ``gold.parquet``): ``holds@k``, some chunk of the top k holds a
  gold span whole, and ``overlaps@k``, one shares a character with one
  (``evaluation.chunking.gold_in_hits``); ``p@k``, ``recall@k``, ``f1@k``: a retrieved chunk is
  a true positive when it overlaps a gold span of the question (``span_hits``).

Each for every ``sample.ks``. The per-query values are
written as per-item scores (ITEM_SCORES), so every interval and every paired difference on a
results page is recomputed from tracked files; their means go to the metrics file. Chunk sizes
(words, and tokens of the embed model's tokenizer) are summarised there too, and written per
chunk for the report's histogram.
"""

import logging
from pathlib import Path

import numpy as np
import pandas as pd

from biochunk import cli, experiments, models, params
from biochunk.errors import UserError
from biochunk.evaluation.chunking import gold_in_hits, span_hits
from biochunk.evaluation.retrieval import chunk_qrels, per_query
from biochunk.io import CHUNK_HITS, CHUNKS, ITEM_SCORES, read_table, write_json, write_table
from biochunk.retrieval import collection
from biochunk.text.tokens import embedder_counter

log = logging.getLogger("evaluate_retrieval")


def span_scores(chunks: pd.DataFrame, hits: pd.DataFrame, gold: pd.DataFrame, qids: list[str], ks) -> dict[str, np.ndarray]:
    """Per query (``qids`` order), for each k: holds, overlaps, and span P / recall / F1 of its top k chunks."""
    row_of = {c: i for i, c in enumerate(chunks["chunk_id"])}
    out: dict[str, np.ndarray] = {}
    for k in ks:
        top = hits[hits["rank"] <= k]
        placed = chunks.iloc[[row_of[c] for c in top["chunk_id"]]]
        judged = gold_in_hits(
            pd.DataFrame({"question_id": top["query_id"].to_numpy(), "doc_id": placed["doc_id"].to_numpy(),
                          "start": placed["start"].to_numpy(), "end": placed["end"].to_numpy(),
                          "metadata": placed["metadata"].to_numpy()}),
            gold,
        ).set_index("question_id").reindex(qids).fillna(0)  # fmt: skip
        out[f"holds@{k}"] = judged["whole"].to_numpy(float)
        out[f"overlaps@{k}"] = judged["overlaps"].to_numpy(float)
        positions = np.full((len(qids), k), -1, np.int64)
        index = {q: i for i, q in enumerate(qids)}
        for q, r, c in zip(top["query_id"], top["rank"], top["chunk_id"]):
            if q in index:
                positions[index[q], int(r) - 1] = row_of[c]
        sh = span_hits(chunks, positions, qids, gold)
        out[f"p@{k}"], out[f"recall@{k}"], out[f"f1@{k}"] = (sh[m].to_numpy(float) for m in ("precision", "recall", "f1"))
    return out


def main() -> None:
    ap = cli.ArgumentParser(description=__doc__)
    ap.add_argument("--data", required=True, type=Path, help="retrieval folder with the judgements (qrels)")
    ap.add_argument("--chunks", required=True, type=Path, help="chunks (Parquet, CHUNKS)")
    ap.add_argument("--hits", required=True, type=Path, help="the search stage's chunk hits (CHUNK_HITS)")
    ap.add_argument("--paper", required=True, type=Path, help="the paper's params file (sample.ks)")
    ap.add_argument("--sample", help="which of the paper's samples; default: its only one")
    ap.add_argument("--scores", required=True, type=Path, help="per-query scores (Parquet, ITEM_SCORES)")
    ap.add_argument("--sizes", required=True, type=Path, help="per-chunk sizes (Parquet, ITEM_SCORES: words, tokens)")
    ap.add_argument("--metrics", required=True, type=Path)
    ap.add_argument("--params", default="params.yaml")
    args = ap.parse_args()
    ks = experiments.load(args.paper).sample_named(args.sample).ks
    ep = params.section("embed", args.params)
    models.require([(ep.model, "embed.model")])
    qrels = collection.load(args.data, "retrieval").qrels
    chunks = read_table(args.chunks, CHUNKS)
    hits = read_table(args.hits, CHUNK_HITS)
    if hits["rank"].max() < max(ks):
        raise UserError(f"--hits {args.hits}: holds the top {hits['rank'].max()} chunks, sample.ks needs {max(ks)}; re-run search")
    gold = collection.read_gold(args.data)
    qids = sorted(q for q, docs in qrels.items() if docs)  # per_query's order
    if gold is None:
        run = {q: list(zip(g["chunk_id"], g["score"].astype(float))) for q, g in hits.sort_values(["query_id", "rank"]).groupby("query_id")}
        scores = per_query(run, chunk_qrels(qrels, dict(zip(chunks["chunk_id"], chunks["doc_id"]))), ks)
    else:
        scores = span_scores(chunks, hits, gold, qids, ks)
    long = pd.DataFrame(
        [(q, m, float(v)) for m, values in scores.items() for q, v in zip(qids, values)], columns=ITEM_SCORES.names
    )
    count = embedder_counter(ep.model)
    words = np.array([len(t.split()) for t in chunks["text"]])
    tokens = np.array([count(t) for t in chunks["text"]])
    sizes = pd.DataFrame(
        [(c, "words", float(w)) for c, w in zip(chunks["chunk_id"], words)]
        + [(c, "tokens", float(t)) for c, t in zip(chunks["chunk_id"], tokens)],
        columns=ITEM_SCORES.names,
    )
    metrics = {"queries": len(qids), **{m: float(v.mean()) for m, v in scores.items()}, "chunks": len(chunks)}
    for name, x in (("words", words), ("tokens", tokens)):
        metrics |= {f"{name} median": float(np.median(x)), f"{name} p95": float(np.percentile(x, 95)), f"{name} max": float(x.max())}
    write_table(long, args.scores, ITEM_SCORES)
    write_table(sizes, args.sizes, ITEM_SCORES)
    write_json(metrics, args.metrics)
    log.info("%d queries, %d chunks: %s", len(qids), len(chunks), ", ".join(f"{m} {metrics[m]:.4f}" for m in scores))


if __name__ == "__main__":
    cli.run(main)
