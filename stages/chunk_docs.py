"""Stage chunk_docs: every chunk_docs method over whole documents; sizes, speed and cut answers.

Each method runs with the chunk.* settings (chunk.method replaced) on the converted
DOCUMENTS table; all chunkers share one encoder, loaded before any clock starts, that
embeds each distinct unit once: the breakpoint and structural chunkers embed the same
sentences, so a later method's seconds leave out what an earlier one embedded (chunking
speed is measured apart, by benchmarks/chunking_speed.py).
Where the dataset has extractive answers (ANSWERS, COVID-QA), it also counts the
gold answers that no single chunk holds whole.

The metrics hold only what the chunks determine (counts, sizes, cut answers), so a re-run
writes them byte for byte; the seconds each method took go to ``--timing``, apart.
"""

import logging
from pathlib import Path

import pandas as pd

from biochunk import cli, models, params
from biochunk.chunking import get, models_used
from biochunk.chunking.runs import documents, run_methods, warm_up
from biochunk.chunking.sizing import make_counter
from biochunk.compute import Engine
from biochunk.embedding import MemoEncoder
from biochunk.evaluation import chunking as evaluation
from biochunk.generation.rewrite import Rewriter
from biochunk.io import ANSWERS, CHUNKS, DOCUMENTS, atomic_path, read_table, write_json, write_table
from biochunk.partitions import EngineEncoder

log = logging.getLogger("chunk_docs")
# evaluation.chunking.method_metrics' wall-time keys
TIMING = ("seconds", "mb_per_s", "chunks_per_s")


def main() -> None:
    ap = cli.ArgumentParser(description=__doc__)
    ap.add_argument("--dataset", required=True)
    ap.add_argument("--data", required=True, type=Path, help="converted dataset folder: documents.parquet [answers.parquet]")
    ap.add_argument("--out", required=True, type=Path, help="chunks of every method (Parquet, CHUNKS)")
    ap.add_argument("--metrics", required=True, type=Path, help="counts, sizes and cut answers per method (JSON)")
    ap.add_argument("--timing", required=True, type=Path, help="seconds per method and to load the encoder (JSON)")
    ap.add_argument("--plots", required=True, type=Path, help="folder for sizes.csv and sizes.png")
    ap.add_argument("--params", default="params.yaml")
    args = ap.parse_args()
    cp = params.section("chunk", args.params)
    dp = params.section("chunk_docs", args.params)
    ep = params.section("embed", args.params)
    xp = params.section("compute", args.params)
    models.require([(ep.model, "embed.model"), *(u for m in dp.methods for u in models_used(cp, ep.model, m))])
    docs = documents(read_table(args.data / "documents.parquet", DOCUMENTS), dp.max_documents)
    has_answers = (args.data / "answers.parquet").exists()
    answers = read_table(args.data / "answers.parquet", ANSWERS) if has_answers else None

    # Building an Encoder loads no weights; the model is loaded before any method's clock starts.
    # Embedding (the bulk of the time) runs on compute.engine; chunking stays in this process.
    with Engine(xp) as engine:
        encoder = MemoEncoder(EngineEncoder(engine, ep, xp.partition_rows))
        load_s = warm_up(encoder) if any(get(m).needs_encoder for m in dp.methods) else 0.0
        log.info("%s: %d documents, methods %s", args.dataset, len(docs), ", ".join(dp.methods))
        runs = run_methods(docs, cp, dp.methods, encoder, rewriter=Rewriter, dataset=args.dataset)

    span_counter_of = make_counter("embedder", encoder).for_document  # one scale for every method
    metrics = {r.method: evaluation.method_metrics(r, docs, span_counter_of, answers) for r in runs}
    # Wall time differs run to run: kept out of the metrics, which DVC and git compare.
    timing = {m: {k: values.pop(k) for k in TIMING} for m, values in metrics.items()}
    metrics["corpus"] = {
        "documents": len(docs),
        "megabytes": sum(len(d.text.encode("utf-8")) for d in docs) / 1e6,
        "answers": int(answers["doc_id"].isin({d.doc_id for d in docs}).sum()) if has_answers else 0,
    }
    # Each distinct unit is embedded once for all methods: a method's seconds are not its speed.
    timing["corpus"] = {"encoder_load_seconds": load_s, "embeddings_shared_across_methods": True}
    write_table(pd.concat([r.chunks for r in runs], ignore_index=True), args.out, CHUNKS)
    write_json(metrics, args.metrics)
    write_json(timing, args.timing)
    with atomic_path(args.plots) as tmp:
        tmp.mkdir(parents=True)
        evaluation.sizes_table(runs).to_csv(tmp / "sizes.csv", index=False)
        evaluation.sizes_png(runs, f"{args.dataset}: chunk sizes per method", tmp / "sizes.png")
    for r in runs:
        m = metrics[r.method]
        cut = f", cut answers {m['cut_answer_share']:.1%}" if has_answers else ""
        log.info("%-13s %6d chunks, mean %.0f %s, %.1f s%s", r.method, m["chunks"], m.get("tokens_mean", 0), r.counter, r.seconds, cut)


if __name__ == "__main__":
    cli.run(main)
