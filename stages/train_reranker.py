"""Stage train_reranker: a cross-encoder reranker fine-tuned from MiniLM on the dataset's training judgements.

SciFact: the train qrels; BioASQ: question–gold-snippet pairs of the batches not held
out (retrieve.qa_test_splits). Hard negatives are BM25's top documents that are not
judged relevant. A train_reranker.model other than the offline alias is a ready reranker
and is saved unchanged. With no training judgements (many BEIR sets ship test qrels only)
the output holds only report.json saying reranking is off, and retrieve skips reranking.
"""

import logging
from pathlib import Path

from biochunk import cli, models, params
from biochunk.datasets.registry import load_registry
from biochunk.io import atomic_path, write_json
from biochunk.retrieval import collection, experiment
from biochunk.scoring import crossencoder

log = logging.getLogger("train_reranker")


def main() -> None:
    ap = cli.ArgumentParser(description=__doc__)
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
    ce, report = experiment.train_reranker(coll, p, rp.k1, rp.b, str(args.data))
    if not report["reranking"]:
        log.warning("%s: %s; reranking off (retrieve runs without it)", args.dataset, report["reason"])
    with atomic_path(args.out) as tmp:
        tmp.mkdir(parents=True)
        if ce is not None:
            crossencoder.save(ce, tmp)
        write_json(report, tmp / crossencoder.REPORT_FILE)


if __name__ == "__main__":
    cli.run(main)
