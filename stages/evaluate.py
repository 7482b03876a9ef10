"""Stage evaluate: micro P/R/F1 of triples, retrieval hit rates, chunk statistics, plots."""

import logging
from pathlib import Path

import pandas as pd

from biochunk import cli, params
from biochunk.corpus import gold_triples, predicted_triples
from biochunk.evaluation.plots import histogram_table, summary_png
from biochunk.evaluation.report import chunk_statistics, extraction_metrics, per_input_counts, retrieval_metrics
from biochunk.io import CHUNKS, ITEM_SCORES, PREDICTIONS, RANKINGS, TRIPLES, atomic_path, read_json, read_table, write_json, write_table

log = logging.getLogger("evaluate")


def main() -> None:
    ap = cli.ArgumentParser(description=__doc__)
    ap.add_argument("--dataset", required=True)
    ap.add_argument("--data", required=True, type=Path, help="converted dataset folder (test.parquet, report.json)")
    ap.add_argument("--chunks", required=True, type=Path)
    ap.add_argument("--rankings", required=True, type=Path, help="dense rankings")
    ap.add_argument("--rescored", required=True, type=Path, help="scorer rankings")
    ap.add_argument("--predictions", required=True, type=Path)
    ap.add_argument("--metrics", required=True, type=Path)
    ap.add_argument("--items", required=True, type=Path, help="per-input triple counts (Parquet, ITEM_SCORES)")
    ap.add_argument("--plots", required=True, type=Path, help="folder for plot tables and the PNG")
    ap.add_argument("--params", default="params.yaml")
    args = ap.parse_args()
    p = params.section("evaluate", args.params)
    rp = params.section("rank", args.params)
    test = read_table(args.data / "test.parquet", TRIPLES)
    chunks = read_table(args.chunks, CHUNKS)
    preds = read_table(args.predictions, PREDICTIONS)
    gold = gold_triples(test[test["id"].isin(preds["id"])])
    pred = predicted_triples(preds)
    rankings = pd.concat([read_table(args.rankings, RANKINGS), read_table(args.rescored, RANKINGS)])
    retrieval, curve = retrieval_metrics(rankings, chunks, test, p.bootstrap, p.seed)
    convert_report = read_json(args.data / "report.json")
    metrics = {
        **extraction_metrics(gold, pred, p.bootstrap, p.seed),
        "retrieval": retrieval,
        "chunks": chunk_statistics(chunks),
        "data": {
            "test_inputs": len(gold),
            "unparsed_outputs": int((~preds["parsed"]).sum()),
            "rows_dropped": int(sum(sum(v.values()) for v in convert_report["rows_dropped"].values())),
            # 1: chunks were ranked by the gold relation (rank.query=relation), an oracle: these
            # figures are an upper bound, not a result a user would get.
            "oracle_query": int(rp.query == "relation"),
        },
    }
    write_json(metrics, args.metrics)
    write_table(per_input_counts(gold, pred), args.items, ITEM_SCORES)
    lengths = chunks[["chunk_id", "n_tokens"]]
    histogram = histogram_table(chunks)  # the QA plots' table: one facet per chunk method
    with atomic_path(args.plots) as tmp:
        tmp.mkdir(parents=True)
        curve.to_csv(tmp / "relation_hits.csv", index=False)
        histogram.to_csv(tmp / "chunk_sizes.csv", index=False)
        summary_png(curve, lengths, args.dataset, tmp / "summary.png")
    t = metrics["triple"]
    log.info(
        "%s: triple P %.3f R %.3f F1 %.3f [%.3f, %.3f]",
        args.dataset,
        t["precision"],
        t["recall"],
        t["f1"],
        t["f1_ci_low"],
        t["f1_ci_high"],
    )


if __name__ == "__main__":
    cli.run(main)
