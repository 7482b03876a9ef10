"""Stage compare_reranker: the reranker of ``compare@<name>`` (a user's corpus, ``data.local``),
trained on the converted corpus's train judgements in a stage of its own.

compare reranks BM25's top whole documents, which no chunk param touches; trained inside
compare, the cross-encoder was trained again on every `dvc exp run -S chunk.…` (204 of 595 s on
a 500-document SciFact sample, 2 CPU cores). Here it depends on the corpus, ``train_reranker.*``
and BM25's ``retrieve.k1`` / ``retrieve.b`` (its hard negatives) only, and compare loads it
(``--reranker``). The training is the train_reranker stage's (``experiment.train_reranker``);
only the corpus differs: convert_local's folder, read as compare reads it. A corpus without
train judgements gets report.json alone, and compare says that reranking is off and why,
unless ``train_reranker.model`` names a ready cross-encoder: that one is saved as it is and
reranks with or without judgements.
"""

import logging
from pathlib import Path

from biochunk import cli, models, params
from biochunk.datasets.local import converted
from biochunk.evaluation import corpus_compare
from biochunk.io import atomic_path, check_output, write_json
from biochunk.retrieval import experiment
from biochunk.scoring import crossencoder

log = logging.getLogger("compare_reranker")


def main() -> None:
    ap = cli.ArgumentParser(description=__doc__)
    ap.add_argument("--data", required=True, type=Path, help="the corpus as stages/convert_local.py converted it")
    ap.add_argument("--out", required=True, type=Path, help="folder: the saved cross-encoder and report.json")
    ap.add_argument("--params", default="params.yaml")
    args = ap.parse_args()
    info = converted(args.data)
    out = check_output(args.out, "--out", directory=True, spare={"--data": args.data})
    p = params.section("train_reranker", args.params)
    rp = params.section("retrieve", args.params)
    models.require([(p.model, "train_reranker.model")])
    unread = corpus_compare.unread_by_ready(p)
    if unread:  # declared by the stage (they train the offline alias), read by nothing here
        log.warning("train_reranker.model %s is a ready cross-encoder, used as it is: %s, retrieve.k1 and retrieve.b change nothing", p.model, ", ".join(unread))  # fmt: skip
    coll = corpus_compare.load(args.data, info["task"]).coll
    # "the corpus", as compare says it when it trains in-process: its metrics.json, which holds
    # this report, is then the same bytes either way.
    ce, report = experiment.train_reranker(coll, p, rp.k1, rp.b, "the corpus")
    if not report["reranking"]:
        log.warning("%s: %s; compare runs without reranking", info["dataset"], report["reason"])
    # compare checks that the reranker it loads was trained on the corpus it compares, and
    # loads it with the training's max_length (it reads no train_reranker param itself).
    report.update(corpus=info["dataset"], max_length=p.max_length)
    with atomic_path(out) as tmp:
        tmp.mkdir(parents=True)
        if ce is not None:
            crossencoder.save(ce, tmp)
        write_json(report, tmp / crossencoder.REPORT_FILE)


if __name__ == "__main__":
    cli.run(main)
