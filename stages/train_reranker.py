"""Stage train_reranker: a cross-encoder reranker fine-tuned from MiniLM on the dataset's training judgements.

SciFact: the train qrels; BioASQ: question–gold-snippet pairs of the batches not held
out (retrieve.qa_test_splits). Hard negatives are BM25's top documents that are not
judged relevant. A train_reranker.model other than the offline alias is a ready reranker
and is saved unchanged. With no training judgements (many BEIR sets ship test qrels only)
the output holds only report.json saying reranking is off, and retrieve skips reranking.
"""

import argparse
import logging
import time
from pathlib import Path

from biochunk import cli, models, params
from biochunk.datasets.registry import load_registry
from biochunk.io import atomic_path, write_json
from biochunk.retrieval import collection
from biochunk.retrieval.experiment import bm25_candidates
from biochunk.scoring import crossencoder

log = logging.getLogger("train_reranker")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--dataset", required=True)
    ap.add_argument("--data", required=True, type=Path, help="converted dataset folder")
    ap.add_argument("--out", required=True, type=Path, help="folder: the saved cross-encoder and report.json")
    ap.add_argument("--params", default="params.yaml")
    args = ap.parse_args()
    p = params.section("train_reranker", args.params)
    rp = params.section("retrieve", args.params)
    unit = params.section("corpus", args.params)
    models.require([(p.model, "train_reranker.model")])
    coll = collection.load(args.data, load_registry()[args.dataset].task, rp.qa_test_splits, bioasq_unit=unit.bioasq_unit)
    report = {"model": p.model, "train_queries": len(coll.train_qrels), "trained": False, "reranking": True}
    groups, skipped = [], 0
    if crossencoder.is_base(p.model) and p.steps > 0:
        if coll.train_qrels:
            # Deep enough that every judged document's query still has n negatives after removing it.
            run = bm25_candidates(coll, coll.train_qrels, p.negatives + 20, rp.k1, rp.b)
            texts = dict(zip(coll.docs["doc_id"], coll.docs["text"]))
            queries = dict(zip(coll.queries["query_id"], coll.queries["text"]))
            groups, skipped = crossencoder.groups_from_run(queries, coll.train_qrels, run, texts, p.negatives)
            log.info("%d training groups (%d judged pairs skipped: no negative)", len(groups), skipped)
        if not groups:
            # An untrained head ranks at random: no reranker is better than a random one.
            why = "no training judgements" if not coll.train_qrels else f"no training groups ({skipped} judged pairs, none with a negative)"
            report.update(reranking=False, reason=f"{why} in {args.data}")
            log.warning("%s: %s; reranking off (retrieve runs without it)", args.dataset, report["reason"])
    ce = crossencoder.load(p.model, max_length=p.max_length, seed=p.seed) if report["reranking"] else None
    if ce is not None and groups:
        t0 = time.perf_counter()
        losses = crossencoder.train_reranker(ce, groups, p.steps, p.batch_size, p.lr, p.seed, head_lr=p.head_lr)
        tail = max(1, len(losses) // 10)
        report.update(
            trained=True, groups=len(groups), skipped_pairs=skipped, steps=p.steps, seconds=time.perf_counter() - t0,
            loss_first=sum(losses[:tail]) / tail, loss_last=sum(losses[-tail:]) / tail,
        )  # fmt: skip
        log.info("loss %.3f -> %.3f in %.0f s", report["loss_first"], report["loss_last"], report["seconds"])
    with atomic_path(args.out) as tmp:
        tmp.mkdir(parents=True)
        if ce is not None:
            crossencoder.save(ce, tmp)
        write_json(report, tmp / crossencoder.REPORT_FILE)


if __name__ == "__main__":
    cli.run(main)
