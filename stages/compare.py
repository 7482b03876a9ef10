"""Compare every chunk method on your own corpus and write one HTML report (docs/your-corpus.md).

    python stages/compare.py --corpus path/to/folder [--out build/compare/<name>]

As a DVC stage (``data.local: {name: path}``) the corpus path is a dependency, so an edited
document re-runs the comparison, and the metrics land in ``metrics/compare-<name>.json``.

``--corpus``: a folder of .txt/.md/.jsonl/.pdf/.html documents (with an optional
questions.jsonl), a BEIR folder (corpus.jsonl, queries.jsonl, qrels/*.tsv) or a SQuAD-format
.json file. Every method of ``chunk_docs.methods`` (or ``--methods``) is measured: chunk sizes,
answers cut by chunk boundaries (where there are answers), and BM25 / dense / hybrid retrieval
with nDCG@10 intervals (where there are questions). Chunk settings are ``chunk.*`` with the
``retrieve.chunk`` overrides, retrieval settings ``retrieve.*``, the encoder ``embed.*``.

Writes, all at once (nothing when the input is bad): ``report.html``, ``metrics.json``,
``chunks.parquet`` (CHUNKS), ``runs.parquet`` (RUNS, where there are questions) and ``data/``
(the converted corpus with its report.json).
"""

import argparse
import logging
import math
import shutil
import tempfile
from pathlib import Path

import pandas as pd

from biochunk import cli, models, params
from biochunk.chunking import models_used
from biochunk.compute import Engine
from biochunk.datasets.local import KINDS, convert_local, dataset_name
from biochunk.embedding import MemoEncoder
from biochunk.evaluation.chunking import MethodRun
from biochunk.evaluation.corpus_report import render
from biochunk.io import CHUNKS, RUNS, atomic_path, write_json, write_table
from biochunk.partitions import EngineEncoder
from biochunk.retrieval import compare
from biochunk.retrieval.experiment import RETRIEVERS

log = logging.getLogger("compare")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--corpus", required=True, type=Path, help="folder of documents, BEIR folder, or SQuAD .json file")
    ap.add_argument("--out", type=Path, default=None, help="output folder (default: build/compare/<corpus name>)")
    ap.add_argument("--kind", choices=KINDS, default=None, help="corpus layout (default: told from the path)")
    ap.add_argument("--methods", nargs="+", default=None, help="chunk methods (default: chunk_docs.methods)")
    ap.add_argument("--retrievers", nargs="+", choices=RETRIEVERS, default=list(RETRIEVERS))
    ap.add_argument("--max-documents", type=int, default=None, help="the first n documents only, for a quick look")
    ap.add_argument("--samples", type=int, default=3, help="questions shown with their top chunks")
    ap.add_argument("--bootstrap", type=int, default=1000, help="bootstrap resamples of the nDCG@10 intervals")
    ap.add_argument("--no-rerank", action="store_true", help="skip training a reranker even where there are train judgements")
    ap.add_argument(
        "--metrics", type=Path, default=None, help="also write the metrics here (the DVC stage: metrics/compare-<name>.json)"
    )
    ap.add_argument("--params", default="params.yaml")
    args = ap.parse_args()
    cp = params.section("chunk", args.params)
    rp = params.section("retrieve", args.params)
    ep = params.section("embed", args.params)
    xp = params.section("compute", args.params)
    dp = params.section("chunk_docs", args.params)
    tp = params.section("train_reranker", args.params)
    # --methods is checked as chunk_docs.methods would be.
    methods = params.section("chunk_docs", data={"chunk_docs": {"methods": args.methods}}).methods if args.methods else dp.methods
    chunk_params = lambda m: rp.chunk_params(cp, m)
    models.require(
        [(ep.model, "embed.model"), *(u for m in methods for u in models_used(chunk_params(m), ep.model))]
        + ([] if args.no_rerank else [(tp.model, "train_reranker.model")])
    )
    out = args.out or Path("build/compare") / dataset_name(args.corpus)

    with tempfile.TemporaryDirectory(prefix="compare-") as work:
        data = Path(work) / "data"
        info = convert_local(args.corpus, data, args.kind)  # bad input stops here, before any output
        corpus = compare.load(data, info["task"], args.max_documents)
        log.info(
            "%s: %d documents, %d questions; methods %s",
            info["dataset"],
            len(corpus.coll.docs),
            len(corpus.coll.qrels),
            ", ".join(methods),
        )
        with Engine(xp) as engine:
            encoder = MemoEncoder(EngineEncoder(engine, ep, xp.partition_rows))
            reranker = None if args.no_rerank else tp
            result = compare.run(
                corpus, methods, chunk_params, rp, encoder, args.retrievers, args.samples, args.bootstrap, reranker
            )
        metrics = compare.metrics(result, corpus, {k: info[k] for k in ("dataset", "kind", "task")})
        runs = [MethodRun(m, result.chunks[m], result.sizes[m]["seconds"], result.sizes[m]["counter"]) for m in methods]
        page = render(metrics, result.samples, runs)
        with atomic_path(out) as tmp:
            tmp.mkdir(parents=True)
            shutil.copytree(data, tmp / "data")
            write_table(pd.concat(list(result.chunks.values()), ignore_index=True), tmp / "chunks.parquet", CHUNKS)
            if result.runs is not None:
                write_table(result.runs, tmp / "runs.parquet", RUNS)
            write_json({**metrics, "samples": result.samples}, tmp / "metrics.json")
            (tmp / "report.html").write_text(page, encoding="utf-8")
        if args.metrics is not None:
            write_json(metrics, args.metrics)
    for note in result.notes:
        log.info("%s", note)
    for r in result.ranking:
        answer = f", answer whole in top chunk {r['answer@1']:.0%}" if not math.isnan(r["answer@1"]) else ""
        log.info(
            "%-13s %s nDCG@10 %.3f [%.3f, %.3f]%s", r["method"], r["retriever"], r["ndcg@10"], r["ci_low"], r["ci_high"], answer
        )
    print(f"report: {out / 'report.html'}")


if __name__ == "__main__":
    cli.run(main)
