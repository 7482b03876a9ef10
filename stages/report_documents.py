"""Stage report_documents: the long-document chunking tables into docs/results/long-documents.md.

Thin by design: it reads the evaluate_docs stages' tracked metrics
(``metrics/papers/documents/<dataset>.json``), builds one table per dataset
(``evaluation.reports.documents``) and writes each between its markers in the page (the prose
around them is kept) and as JSON beside it, with one figure of the chunk sizes.
"""

import logging
from pathlib import Path

from biochunk import cli, params
from biochunk.evaluation.papers import publish
from biochunk.evaluation.reports import documents

log = logging.getLogger("report_documents")


def main() -> None:
    ap = cli.ArgumentParser(description=__doc__)
    ap.add_argument("--metrics", required=True, type=Path, help="folder of the evaluate_docs metrics, <dataset>.json")
    ap.add_argument("--datasets", required=True, nargs="+", help="the datasets, in page order")
    ap.add_argument("--results", required=True, type=Path, help="the results folder (docs/results)")
    ap.add_argument("--params", default="params.yaml")
    args = ap.parse_args()
    ep = params.section("embed", args.params)
    dp = params.section("chunk_docs", args.params)
    plot = args.results / documents.FIGURE
    for table in documents.tables(args.metrics, args.datasets, ep.model, dp.methods, plot):
        md, js = publish(table, args.results)
        log.info("%s: %s, %s", table.section, md, js)


if __name__ == "__main__":
    cli.run(main)
