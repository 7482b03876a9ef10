"""Stage retrieve: chunk methods × retrievers (BM25, dense, RRF hybrid) with IR metrics, cross-encoder reranking,
and for QA datasets the reshaped generation contexts.

Outputs: runs.parquet (RUNS) and, for QA datasets, contexts.parquet (CONTEXTS) in --out;
the metrics JSON is {retriever: {chunk method: {ndcg@10, map, mrr@10, recall@k, p@k, f1@k}},
"rerank": ..., "reshape": ..., "corpus": ...}; --scores holds every run's nDCG@10, MAP, MRR@10 and
recall@k per judged query (ITEM_SCORES, metric "<retriever>/<method>/<measure>"), so
a paired interval between any two runs can be recomputed from it; wall time goes to --timing,
apart from the metrics, which are the same bytes on every run.
"""

import dataclasses
import logging
from pathlib import Path

from biochunk import cli, models, params
from biochunk.chunking import NO_CHUNKING, models_used
from biochunk.compute import Engine
from biochunk.errors import UserError
from biochunk.datasets.registry import load_registry
import pandas as pd
from ir_measures import AP, RR, R, nDCG

from biochunk.evaluation.retrieval import _per_query, evaluate, evaluate_runs
from biochunk.generation.rewrite import Rewriter
from biochunk.io import CONTEXTS, ITEM_SCORES, RUNS, atomic_path, write_json, write_table
from biochunk.partitions import EngineEncoder
from biochunk.retrieval import collection, experiment
from biochunk.retrieval.cache import CachedEncoder
from biochunk.scoring import crossencoder

log = logging.getLogger("retrieve")


def query_scores(runs: dict, qrels: dict, test_qrels: dict, ks: list[int]) -> pd.DataFrame:
    """ITEM_SCORES rows: nDCG@10, MAP, MRR@10 and recall@k of every run per judged query, in judgement
    order (the order ``paired_delta`` resamples); reranked runs against the test judgements,
    as their metrics are. A query a run leaves unanswered scores 0, as in ``evaluate``."""
    rows = []
    for (retriever, method), run in runs.items():
        judged = test_qrels if retriever.startswith("rerank-") else qrels
        queries, values = _per_query(run, judged, [nDCG @ 10, AP, RR @ 10] + [R @ k for k in sorted(set(ks))])
        rows += [(q, f"{retriever}/{method}/{m}", v.get(q, 0.0)) for m, v in values.items() for q in queries]
    return pd.DataFrame(rows, columns=ITEM_SCORES.names)


def main() -> None:
    ap = cli.ArgumentParser(description=__doc__)
    ap.add_argument("--dataset", required=True)
    ap.add_argument("--data", required=True, type=Path, help="converted dataset folder")
    ap.add_argument("--reranker", type=Path, default=None, help="train_reranker folder (absent: no reranking)")
    ap.add_argument(
        "--methods", nargs="+", default=None,
        help="run only these of retrieve.bm25_methods / dense_methods, each under the retrievers its lists give it "
        "(a pipeline runs one stage per method, so a change re-runs only the methods it reaches)",
    )  # fmt: skip
    ap.add_argument("--out", required=True, type=Path, help="folder: runs.parquet [contexts.parquet]")
    ap.add_argument("--metrics", required=True, type=Path)
    ap.add_argument("--scores", required=True, type=Path, help="per-query scores of every run (Parquet, ITEM_SCORES)")
    ap.add_argument("--timing", required=True, type=Path, help="wall seconds per chunk method and retriever (JSON)")
    ap.add_argument("--cache", type=Path, default=None, help="embedding cache folder (not an output: vectors are reused across runs)")
    ap.add_argument("--params", default="params.yaml")
    args = ap.parse_args()
    rp = params.section("retrieve", args.params)
    if args.methods:
        listed = rp.bm25_methods + rp.dense_methods
        unknown = [m for m in args.methods if m not in listed]
        if unknown:
            raise UserError(f"--methods {' '.join(unknown)}: not in retrieve.bm25_methods or retrieve.dense_methods ({', '.join(dict.fromkeys(listed))}); name a listed method")
        keep = set(args.methods)
        rp = dataclasses.replace(rp, bm25_methods=[m for m in rp.bm25_methods if m in keep], dense_methods=[m for m in rp.dense_methods if m in keep])
    cp = params.section("chunk", args.params)
    ep = params.section("embed", args.params)
    tp = params.section("train_reranker", args.params)
    xp = params.section("compute", args.params)
    rs = params.section("reshape", args.params)
    unit = params.section("corpus", args.params)
    methods = [m for m in dict.fromkeys(rp.bm25_methods + rp.dense_methods) if m != NO_CHUNKING]
    models.require(
        [(ep.model, "embed.model"), *(u for m in methods for u in models_used(rp.chunk_params(cp, m), ep.model))]
        + ([(tp.model, "train_reranker.model")] if rp.rerank_depth > 0 and args.reranker else [])
    )
    task = load_registry()[args.dataset].task
    coll = collection.load(args.data, task, rp.qa_test_splits, bioasq_unit=unit.bioasq_unit)
    log.info("%s: %d documents, %d evaluation queries", args.dataset, len(coll.docs), len(coll.qrels))
    # The dense side (chunks, queries, the semantic chunkers' units) embeds on compute.engine.
    # Reshaping's many small encodes run here afterwards, in the same partitions (results do
    # not depend on the engine), without a round trip to the cluster for each question.
    with Engine(xp) as engine:
        encoder = CachedEncoder(EngineEncoder(engine, ep, xp.partition_rows), args.cache)
        res = experiment.run_retrievers(coll, rp, lambda m: rp.chunk_params(cp, m), encoder, rewriter=Rewriter, dataset=args.dataset)
    metrics = evaluate_runs(res.runs, coll.qrels, rp.ks)  # retriever -> method -> metrics
    texts = dict(zip(coll.docs["doc_id"], coll.docs["text"]))
    queries = dict(zip(coll.queries["query_id"], coll.queries["text"]))
    off = crossencoder.off_reason(args.reranker) if args.reranker else "no --reranker given"
    trained = None if off else crossencoder.load(str(args.reranker), max_length=tp.max_length, seed=tp.seed)
    if off:
        (log.info if args.reranker is None else log.warning)("%s: reranking skipped: %s (train_reranker)", args.dataset, off)
        metrics["rerank"] = {"skipped": off}
    elif rp.rerank_depth > 0 and coll.test_qrels:
        method, base = experiment.base_run(res, "bm25")
        base = {q: base[q] for q in coll.test_qrels}
        rerank = {"base": f"bm25/{method}", "depth": rp.rerank_depth, "bm25": evaluate(base, coll.test_qrels, rp.ks)}
        res.runs[("rerank-bm25", method)] = base  # the reranked runs' baseline, query for query
        init = crossencoder.load(tp.model, max_length=tp.max_length, seed=tp.seed)
        for name, ce in (("trained", trained), ("init", init)):
            run = crossencoder.rerank(ce, queries, base, texts, rp.rerank_depth)
            rerank[name] = evaluate(run, coll.test_qrels, rp.ks)
            res.runs[(f"rerank-{name}", method)] = run
            log.info("rerank %-7s nDCG@10 %.4f (BM25 %.4f)", name, rerank[name]["ndcg@10"], rerank["bm25"]["ndcg@10"])
        metrics["rerank"] = rerank
    contexts = None
    if task == "qa":
        _, run = experiment.base_run(res, "hybrid" if any(k[0] == "hybrid" for k in res.runs) else "bm25")
        qs = collection.seeded_sample(list(coll.test_qrels), rp.reshape_questions, rp.seed)
        if trained is not None:
            score = lambda q, t: crossencoder.predict(trained, [(q, x) for x in t])  # noqa: E731
        else:
            score = experiment.dense_score(encoder)  # no reranker: communities ranked by cosine to the question
        contexts, metrics["reshape"] = experiment.reshape_contexts(coll, run, qs, encoder, score, rs)
        metrics["reshape"]["community_ranker"] = "cross-encoder" if trained is not None else "dense cosine (reranking off)"
    metrics["corpus"] = {"documents": len(coll.docs), "queries": len(coll.qrels), "chunks": res.chunks}
    with atomic_path(args.out) as tmp:
        tmp.mkdir(parents=True)
        write_table(experiment.runs_table(res, rp.save_depth), tmp / "runs.parquet", RUNS)
        if contexts is not None:
            write_table(contexts, tmp / "contexts.parquet", CONTEXTS)
    write_table(query_scores(res.runs, coll.qrels, coll.test_qrels, rp.ks), args.scores, ITEM_SCORES)
    write_json({"seconds": res.seconds}, args.timing)
    write_json(metrics, args.metrics)


if __name__ == "__main__":
    cli.run(main)
