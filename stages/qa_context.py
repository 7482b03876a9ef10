"""Stage qa_context: questions sampled, the corpus chunked by every qa method, top chunks retrieved.

Writes, under --out: questions.parquet (QA_SAMPLE: answered questions and the
in-context example pool, from another split), chunks.parquet (CHUNKS of every method),
contexts.parquet (QA_CONTEXTS: top-k chunks per question and method) and report.json.
"""

import logging
import time
from pathlib import Path

import pandas as pd

from biochunk import cli, models, params
from biochunk.chunking import models_used
from biochunk.chunking.runs import warm_up
from biochunk.compute import Engine
from biochunk.datasets import qa as qa_data
from biochunk.evaluation.retrieval import gold_hits
from biochunk.generation.rewrite import Rewriter
from biochunk.io import CHUNKS, QA_CONTEXTS, QA_SAMPLE, atomic_path, write_json, write_table
from biochunk.partitions import EngineEncoder
from biochunk.retrieval import contexts

log = logging.getLogger("qa_context")


def main() -> None:
    ap = cli.ArgumentParser(description=__doc__)
    ap.add_argument("--dataset", required=True)
    ap.add_argument("--data", required=True, type=Path, help="converted dataset folder")
    ap.add_argument("--out", required=True, type=Path, help="folder: questions, chunks, contexts (Parquet), report.json")
    ap.add_argument("--params", default="params.yaml")
    args = ap.parse_args()
    qp = params.section("qa", args.params)
    cp = params.section("chunk", args.params)
    ep = params.section("embed", args.params)
    xp = params.section("compute", args.params)
    rs = params.section("reshape", args.params)
    unit = params.section("corpus", args.params)
    methods = qp.methods if "retrieved" in qp.contexts else []
    rankers = (
        [(v.reranker, "reshape.reranker") for _, v in rs.expand() if v.rank == "crossencoder"]
        if "reshaped" in qp.contexts
        else []
    )
    models.require([(ep.model, "embed.model"), *(u for m in methods for u in models_used(cp, ep.model, m)), *rankers])

    data = qa_data.load(args.dataset, args.data, qp.seed, unit.bioasq_unit)
    source = qa_data.example_split(data.items, qp.example_split)
    questions = qa_data.sample(
        data.items, source, qp.max_questions, qp.n_examples, qp.seed, qp.examples_by_type, qp.question_splits
    )
    corpus = data.corpus
    if qp.corpus == "sampled":
        wanted = {d for ds in questions["doc_ids"] for d in ds}
        corpus = corpus[corpus["doc_id"].isin(wanted)]
    log.info(
        "%s: %d questions answered, %d example candidates from split %s; corpus %d documents (%s)",
        args.dataset, int((questions["role"] == "answer").sum()), int((questions["role"] == "example").sum()), source, len(corpus), qp.corpus,
    )  # fmt: skip

    # Embedding (the chunkers' units, chunks, questions) runs on compute.engine; chunking here.
    with Engine(xp) as engine:
        encoder = EngineEncoder(engine, ep, xp.partition_rows)
        warm_up(encoder)
        t0 = time.perf_counter()
        chunks = contexts.chunk_methods(corpus, cp, methods, encoder, rewriter=Rewriter, dataset=args.dataset)
        t1 = time.perf_counter()
        found = contexts.dense_contexts(chunks, questions, encoder, qp.top_k)
        t2 = time.perf_counter()
        extra: dict = {}
        parts = [(chunks, found)]
        if "reshaped" in qp.contexts:
            rc, rf, extra["reshape"] = contexts.reshaped_contexts(corpus, questions, encoder, rs)
            parts.append((rc, rf))
        if "gold" in qp.contexts:
            parts.append(contexts.gold_contexts(data.corpus, data.gold, questions))
        t3 = time.perf_counter()
    chunks = pd.concat([c for c, _ in parts], ignore_index=True)
    found = pd.concat([f for _, f in parts], ignore_index=True)
    answered = questions[questions["role"] == "answer"]
    hits = gold_hits(found, answered).groupby("method")[["gold_doc_hit@1", "gold_doc_hit@k"]].mean()
    report = {
        "dataset": args.dataset,
        "example_split": source,
        "question_splits": sorted(set(answered["split"])),
        "questions": {
            "answered": int((questions["role"] == "answer").sum()),
            "example_candidates": int((questions["role"] == "example").sum()),
        },
        "items_dropped": data.dropped,
        "corpus": {"mode": qp.corpus, "documents": len(corpus), **({"bioasq_unit": unit.bioasq_unit} if args.dataset == "bioasq" else {})},
        "arms": contexts.arms(qp.contexts, qp.methods, [a for a, _ in rs.expand()]),
        "chunks": chunks.groupby("method").size().to_dict(),
        "retriever": qp.retriever,
        "top_k": qp.top_k,  # what a results table says the model read, beside what it read
        "gold_document_hits": hits.to_dict(orient="index"),
        "seconds": {"chunk": t1 - t0, "retrieve": t2 - t1, "reshape_gold": t3 - t2},
        **extra,
    }
    with atomic_path(args.out) as tmp:
        tmp.mkdir(parents=True)
        write_table(questions, tmp / "questions.parquet", QA_SAMPLE)
        write_table(chunks, tmp / "chunks.parquet", CHUNKS)
        write_table(found, tmp / "contexts.parquet", QA_CONTEXTS)
        write_json(report, tmp / "report.json")
    for method, h in report["gold_document_hits"].items():
        log.info(
            "%-10s %6d chunks, gold document in top-1 %.3f, in top-%d %.3f",
            method,
            report["chunks"][method],
            h["gold_doc_hit@1"],
            qp.top_k,
            h["gold_doc_hit@k"],
        )


if __name__ == "__main__":
    cli.run(main)
