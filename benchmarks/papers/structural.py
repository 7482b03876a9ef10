"""Structural chunking's own evaluation on SciFact (BEIR test split): chunk-level retrieval.

Every chunk method cuts SciFact's abstracts with the retrieve stage's settings
(``retrieve.chunk_params``: the 256-word cap), MiniLM embeds the chunks, one dense
search per query returns the top chunks, and those chunks are scored as the paper's
code scores them: a chunk is relevant when its document is judged relevant for the
query. Per-query P@k, recall@k, F1@k, AP@k (and success@k, which is what the authors'
code computes as "recall") get bootstrap intervals; structural minus each baseline gets
a paired interval. Chunk sizes (words, MiniLM tokens) go to a second table and a
histogram. Results: docs/results/structural.md through ``papers.publish``.

    python benchmarks/papers/structural.py --data data/interim/scifact
"""

from __future__ import annotations

import argparse
import dataclasses
import logging
import time
from pathlib import Path

import numpy as np

from biochunk import cli, models, params
from biochunk.chunking import NO_CHUNKING, models_used
from biochunk.chunking.sizing import make_counter
from biochunk.embedding import Encoder
from biochunk.errors import UserError
from biochunk.evaluation.papers import Difference, Estimate, PaperTable, Row, mean_ci, paired_delta, publish
from biochunk.evaluation.retrieval import chunk_qrels, per_query
from biochunk.retrieval import collection, experiment
from biochunk.retrieval.cache import CachedEncoder
from biochunk.retrieval.dense import dense_run, embed_chunks

log = logging.getLogger("paper-structural")

# label -> (chunk method, chunk.* overrides on top of retrieve.chunk). The two structural
# rows: the project's defaults and the authors' code's (semantic_weight 0.05, D_struct =
# 1 - weighted feature similarity; breakpoint percentile 95 in both).
SETTINGS = {
    "structural-project": ("structural", {}),
    "structural-authors": ("structural", {"alpha": 0.05, "structural_distance": "similarity"}),
    "percentile": ("percentile", {}),
    "recursive": ("recursive", {}),
    "stddev": ("stddev", {}),
    "interquartile": ("interquartile", {}),
    "gradient": ("gradient", {}),
    NO_CHUNKING: (NO_CHUNKING, {}),
}
STRUCTURAL = ("structural-project", "structural-authors")


def describe(label: str, cp: params.ChunkParams | None) -> str:
    if cp is None:
        return "whole documents"
    if cp.method == "structural":
        return f"α {cp.alpha:g}, D_struct {cp.structural_distance}, cut > p{cp.boundary_percentile:g}"
    return f"{cp.max_tokens}-word cap" if cp.method != "recursive" else f"{cp.chunk_size} chars, overlap {cp.chunk_overlap}"


def claim_note(differences: list[Difference]) -> str:
    """Where our paired intervals stand on the paper's qualitative claim (structural > each baseline)."""
    vs = [d for d in differences if "structural-project" not in d.label.split(" − ")[1]]
    above = sum(d.ours.lo > 0 for d in vs)
    below = sum(d.ours.hi < 0 for d in vs)
    return (
        f"The paper's claim, structural above each baseline (no published number, so the direction column cannot judge it): "
        f"of our {len(vs)} paired intervals of structural − baseline, {above} lie above 0 (agree), {below} below 0 "
        f"(contradict), {len(vs) - above - below} include 0 (not separable)."
    )


def size_plot(sizes: dict[str, np.ndarray], path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(6.4, 3.6), dpi=90)
    bins = np.arange(0, 270, 10)
    for label, w in sizes.items():
        ax.hist(np.clip(w, 0, 265), bins=bins, histtype="step", label=label, linewidth=1.2)
    ax.set_xlabel("words per chunk (SciFact; 256-word cap, none uncapped: over 260 drawn at 260)")
    ax.set_ylabel("chunks")
    ax.legend(fontsize=7)
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path)
    plt.close(fig)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--data", type=Path, default=Path("data/interim/scifact"), help="converted SciFact folder")
    ap.add_argument("--params", default="params.yaml")
    ap.add_argument("--cache", type=Path, default=Path("data/cache/embeddings"), help="embedding cache (shared with retrieve)")
    ap.add_argument("--methods", nargs="+", default=list(SETTINGS), help=f"rows to run, of: {', '.join(SETTINGS)}")
    ap.add_argument("--ks", nargs="+", type=int, default=[5, 10])
    ap.add_argument("--max-queries", type=int, default=None, help="the first n test queries (default: all 300)")
    ap.add_argument(
        "--max-documents",
        type=int,
        default=None,
        help="search pool: every document judged for the test queries plus a seeded sample of the rest, n in all (default: all 5,183)",
    )
    ap.add_argument("--seed", type=int, default=42)
    ap.add_argument("--results", type=Path, default=Path("docs/results"))
    ap.add_argument("--bootstrap", type=int, default=1000)
    ap.add_argument("--command", default="make paper-structural", help="the command recorded in the table")
    args = ap.parse_args()
    unknown = [m for m in args.methods if m not in SETTINGS]
    if unknown:
        raise UserError(f"--methods: unknown {', '.join(unknown)}; allowed: {', '.join(SETTINGS)}")
    if not (args.data / "corpus.parquet").is_file():
        raise UserError(f"--data {args.data}: no corpus.parquet; convert SciFact first (make paper-structural does)")
    if min(args.ks) < 1 or any(n is not None and n < 1 for n in (args.max_queries, args.max_documents)):
        raise UserError("--ks, --max-queries and --max-documents must be >= 1")
    rp, cp, ep = (params.section(s, args.params) for s in ("retrieve", "chunk", "embed"))
    chunk_params = {
        label: None
        if m == NO_CHUNKING
        else params.parse(params.ChunkParams, {**dataclasses.asdict(rp.chunk_params(cp, m)), **o}, "chunk")
        for label, (m, o) in SETTINGS.items()
        if label in args.methods
    }
    models.require([(ep.model, "embed.model"), *(u for c in chunk_params.values() if c for u in models_used(c, ep.model))])
    t_start = time.perf_counter()
    coll = collection.load(args.data, "retrieval")
    queries = coll.eval_queries().sort_values("query_id").head(args.max_queries)
    qids, qtexts = queries["query_id"].astype(str).tolist(), queries["text"].tolist()
    qrels = {q: coll.qrels[q] for q in qids}
    if args.max_documents is not None:
        judged = {d for r in qrels.values() for d in r}
        rest = [d for d in coll.docs["doc_id"] if d not in judged]
        keep = judged | set(experiment.sample(rest, max(args.max_documents - len(judged), 0), args.seed))
        coll.docs = coll.docs[coll.docs["doc_id"].isin(keep)].reset_index(drop=True)
    encoder = CachedEncoder(Encoder(ep.model, ep.batch_size, ep.device), args.cache)
    qvecs = encoder.encode(qtexts)
    counter = make_counter("embedder", encoder)
    k_max = max(args.ks)
    scores: dict[str, dict[str, np.ndarray]] = {}
    sizes: dict[str, dict[str, np.ndarray]] = {}
    seconds: dict[str, float] = {}
    for label, cpm in chunk_params.items():
        t0 = time.perf_counter()
        method = SETTINGS[label][0]
        chunks = experiment.chunk_documents(coll.docs, method, cpm, encoder)
        run = dense_run(embed_chunks(encoder, chunks), chunks["chunk_id"].tolist(), qvecs, qids, k_max, rp.index, rp.use_gpu)
        scores[label] = per_query(run, chunk_qrels(qrels, dict(zip(chunks["chunk_id"], chunks["doc_id"]))), args.ks)
        texts = chunks["text"].tolist()
        sizes[label] = {"words": np.array([len(t.split()) for t in texts]), "tokens": np.array([counter(t) for t in texts])}
        seconds[label] = time.perf_counter() - t0
        log.info(
            "%s: %d chunks, F1@%d %.4f, %.0f s", label, len(chunks), k_max, scores[label][f"f1@{k_max}"].mean(), seconds[label]
        )
    wall = time.perf_counter() - t_start
    metrics = [f"{m}@{k}" for k in sorted(args.ks) for m in ("p", "recall", "f1", "ap")] + [f"success@{k_max}"]
    cmd = args.command
    pool = "all" if args.max_documents is None else "a pool of (the judged ones + a seeded sample):"
    sample = f"SciFact (BEIR) test split, {len(qids)} queries, searched over {pool} {len(coll.docs):,} abstracts"
    embed_model = f"{ep.model} (all-MiniLM-L6-v2) embeds sentences (semantic chunkers) and chunks; exact cosine search"
    pairs = [(a, b) for a in STRUCTURAL if a in scores for b in scores if b not in STRUCTURAL and b != NO_CHUNKING]
    if all(a in scores for a in STRUCTURAL):
        pairs.append(("structural-authors", "structural-project"))
    differences = [
        Difference(f"{a} − {b}", m, None, paired_delta(scores[b][m], scores[a][m], args.bootstrap))
        for a, b in pairs
        for m in (f"f1@{k_max}", f"ap@{k_max}")
    ]
    table = PaperTable(
        paper="structural", section="scifact-chunk-retrieval",
        title="SciFact: chunk-level retrieval per chunk method (the paper's evaluation)",
        command=cmd, sample=sample, models=embed_model, wall_s=wall, metrics=metrics,
        rows=[
            Row(label, {m: None for m in metrics}, {m: mean_ci(s[m], args.bootstrap) for m in metrics}, describe(label, chunk_params[label]))
            for label, s in scores.items()
        ],
        differences=differences,
        not_run=[(label, f"not in --methods this run; add it: {cmd} --methods ... {label}") for label in SETTINGS if label not in scores]
        + [("the paper's own figures", "not in shared/docs/references.md: every paper cell is —, so no published direction can be checked")],
        notes=[claim_note(differences), "Seconds per method (chunk + embed + search; embeddings cached by text): "
               + ", ".join(f"{k} {v:.0f}" for k, v in seconds.items())],
    )  # fmt: skip
    publish(table, args.results)
    size_metrics = ["chunks", "words median", "words p95", "words max", "tokens median", "tokens p95", "tokens max"]

    def size_row(label: str) -> Row:
        w, t = sizes[label]["words"], sizes[label]["tokens"]
        vals = [len(w), np.median(w), np.percentile(w, 95), w.max(), np.median(t), np.percentile(t, 95), t.max()]
        return Row(label, {m: None for m in size_metrics}, {m: Estimate(float(v)) for m, v in zip(size_metrics, vals)})

    plot = args.results / "structural-sizes.png"
    size_plot({label: s["words"] for label, s in sizes.items()}, plot)
    publish(
        PaperTable(
            paper="structural", section="scifact-chunk-sizes", title="SciFact: chunk-size distribution per chunk method",
            command=cmd, sample=f"the {len(coll.docs):,} SciFact abstracts searched", models=f"MiniLM tokens counted by the {ep.model} tokenizer",
            wall_s=wall, metrics=size_metrics, rows=[size_row(label) for label in sizes], digits=0,
            notes=[f"Histogram of words per chunk: [{plot.name}]({plot.name})"],
        ),
        args.results,
    )  # fmt: skip


if __name__ == "__main__":
    cli.run(main)
