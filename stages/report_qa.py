"""Stage report_qa: the QA pipeline's tables (experiments/qa) into docs/results/clinical.md and bioasq-reshaping.md.

Reads only what ``evaluate_qa`` tracked in git (each dataset's ``report/scores.csv``), so the
pages render in a fresh clone. Thin by design: ``evaluation.reports.qa`` builds the tables; they
are written between their markers in the results pages (the prose around them is kept) and as
JSON beside them.
"""

import logging
from pathlib import Path

from biochunk import cli, params
from biochunk.evaluation.papers import publish
from biochunk.evaluation.reports import qa

log = logging.getLogger("report_qa")


def main() -> None:
    ap = cli.ArgumentParser(description=__doc__)
    ap.add_argument(
        "--reports", required=True, type=Path, nargs="+",
        help="evaluate_qa's report folders, metrics/papers/qa/<dataset>/report (the dataset is the folder above)",
    )  # fmt: skip
    ap.add_argument("--results", required=True, type=Path, help="the results folder (docs/results)")
    ap.add_argument("--params", default="params.yaml")
    args = ap.parse_args()
    ev = params.section("evaluate", args.params)
    gp = params.section("generate", args.params)
    qp = params.section("qa", args.params)
    xp = params.section("evaluate_qa", args.params)
    # The runs' own settings: the page's intervals use evaluate_qa's resamples and seed.
    s = qa.Settings(ev.bootstrap, ev.seed, gp.model, qp.n_examples, xp.bertscore_model, xp.bertscore_layers)
    for table in qa.tables({r.parent.name: r / "scores.csv" for r in args.reports}, s):
        md, js = publish(table, args.results)
        log.info("%s: %s, %s", table.section, md, js)


if __name__ == "__main__":
    cli.run(main)
