"""Stage report_retrieval: the document-retrieval tables into docs/results/retrieval.md.

Thin by design: it reads the retrieve stages' tracked metrics and per-query scores
(``metrics/papers/retrieval/<dataset>/<method>.json`` and ``.parquet``), builds the tables
(``evaluation.reports.retrieval``) and writes each between its markers in the page (the prose
around them is kept) and as JSON beside it, with one figure of the paired differences.
"""

import logging
from pathlib import Path

from biochunk import cli, params
from biochunk.evaluation.papers import publish
from biochunk.evaluation.reports import retrieval

log = logging.getLogger("report_retrieval")


def main() -> None:
    ap = cli.ArgumentParser(description=__doc__)
    ap.add_argument("--metrics", required=True, type=Path, help="folder of the retrieve metrics, <dataset>.json and .parquet")
    ap.add_argument("--datasets", required=True, nargs="+", help="the datasets, in page order")
    ap.add_argument("--results", required=True, type=Path, help="the results folder (docs/results)")
    ap.add_argument("--params", default="params.yaml")
    args = ap.parse_args()
    rp = params.section("retrieve", args.params)
    cp = params.section("corpus", args.params)
    plot = args.results / retrieval.FIGURE
    for table in retrieval.tables(args.metrics, args.datasets, rp.bm25_methods + rp.dense_methods, rp.ks, plot, cp.bioasq_unit):
        md, js = publish(table, args.results)
        log.info("%s: %s, %s", table.section, md, js)


if __name__ == "__main__":
    cli.run(main)
