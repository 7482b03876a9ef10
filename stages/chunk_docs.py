"""Stage chunk_docs: every chunk_docs method over whole documents; the chunks and the time each took.

Each method runs with the chunk.* settings (chunk.method replaced) on the converted
DOCUMENTS table; all chunkers share one encoder, loaded before any clock starts, that
embeds each distinct unit once: the breakpoint and structural chunkers embed the same
sentences, so a later method's seconds leave out what an earlier one embedded (chunking
speed is measured apart, by benchmarks/chunking_speed.py).

Writes the chunks of every method (``--out``) and what ``evaluate_docs`` needs to read them
(``--runs``: how many documents were chunked, the encoder, each method's unit of ``n_tokens``
in ``chunk_docs.methods`` order); the sizes
and the gold answers cut are ``evaluate_docs``' to measure, so a change to the measures re-runs
no chunker. The seconds each method took go to ``--timing``, apart: they differ run to run.
"""

import logging
from pathlib import Path

import pandas as pd

from biochunk import cli, models, params
from biochunk.chunking import get, models_used
from biochunk.chunking.runs import documents, run_methods, warm_up
from biochunk.compute import Engine
from biochunk.embedding import MemoEncoder
from biochunk.generation.rewrite import Rewriter
from biochunk.io import CHUNKS, DOCUMENTS, read_table, write_json, write_table
from biochunk.partitions import EngineEncoder

log = logging.getLogger("chunk_docs")


def main() -> None:
    ap = cli.ArgumentParser(description=__doc__)
    ap.add_argument("--dataset", required=True)
    ap.add_argument("--data", required=True, type=Path, help="converted dataset folder: documents.parquet")
    ap.add_argument("--out", required=True, type=Path, help="chunks of every method (Parquet, CHUNKS)")
    ap.add_argument("--runs", required=True, type=Path, help="documents chunked, encoder, each method's unit of n_tokens (JSON)")
    ap.add_argument("--timing", required=True, type=Path, help="seconds per method and to load the encoder (JSON)")
    ap.add_argument("--params", default="params.yaml")
    args = ap.parse_args()
    cp = params.section("chunk", args.params)
    dp = params.section("chunk_docs", args.params)
    ep = params.section("embed", args.params)
    xp = params.section("compute", args.params)
    models.require([(ep.model, "embed.model"), *(u for m in dp.methods for u in models_used(cp, ep.model, m))])
    docs = documents(read_table(args.data / "documents.parquet", DOCUMENTS), dp.max_documents)

    # Building an Encoder loads no weights; the model is loaded before any method's clock starts.
    # Embedding (the bulk of the time) runs on compute.engine; chunking stays in this process.
    with Engine(xp) as engine:
        encoder = MemoEncoder(EngineEncoder(engine, ep, xp.partition_rows))
        load_s = warm_up(encoder) if any(get(m).needs_encoder for m in dp.methods) else 0.0
        log.info("%s: %d documents, methods %s", args.dataset, len(docs), ", ".join(dp.methods))
        runs = run_methods(docs, cp, dp.methods, encoder, rewriter=Rewriter, dataset=args.dataset)

    megabytes = sum(len(d.text.encode("utf-8")) for d in docs) / 1e6
    # Wall time differs run to run: kept out of the chunks and the metrics, which DVC and git compare.
    timing: dict[str, dict] = {
        r.method: {
            "seconds": r.seconds,
            "mb_per_s": megabytes / r.seconds if r.seconds > 0 else None,
            "chunks_per_s": len(r.chunks) / r.seconds if r.seconds > 0 else None,
        }
        for r in runs
    }
    # Each distinct unit is embedded once for all methods: a method's seconds are not its speed.
    timing["corpus"] = {"encoder_load_seconds": load_s, "embeddings_shared_across_methods": True}
    write_table(pd.concat([r.chunks for r in runs], ignore_index=True), args.out, CHUNKS)
    # What evaluate_docs measures with: the documents chunked, the encoder whose tokens are the
    # common scale of sizes, each method's own unit. Read from here, not from params, the
    # measures are those of these chunks whatever params.yaml says now.
    units = [{"method": r.method, "counter": r.counter} for r in runs]
    write_json({"documents": len(docs), "embed_model": ep.model, "methods": units}, args.runs)
    write_json(timing, args.timing)


if __name__ == "__main__":
    cli.run(main)
