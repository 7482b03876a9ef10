"""Stage report_qa: the QA pipeline's tables (experiments/qa) into docs/results/qa.md.

Reads only what ``evaluate_qa`` tracked in git (each run's ``report/scores.csv``) and the
chunk.header each run cut its chunks under, so the page renders in a fresh clone. Thin by
design: ``evaluation.reports.qa`` builds the tables; they are written between their markers in
the page (the prose around them is kept) and as JSON beside it.
"""

import logging
from pathlib import Path

from biochunk import cli, params
from biochunk.errors import UserError
from biochunk.evaluation.papers import publish
from biochunk.evaluation.reports import qa

log = logging.getLogger("report_qa")


def main() -> None:
    ap = cli.ArgumentParser(description=__doc__)
    ap.add_argument(
        "--reports", required=True, type=Path, nargs="+",
        help="evaluate_qa's report folders, metrics/papers/qa/<dataset>/report (the dataset is the folder above)",
    )  # fmt: skip
    ap.add_argument(
        "--headers", type=Path, nargs="*", default=[],
        help="the header runs' report folders, metrics/papers/qa/<dataset>-header/report: the headers table",
    )  # fmt: skip
    ap.add_argument(
        "--header-params", type=Path, nargs="*", default=[],
        help="each header run's params file (experiments/qa/<dataset>-header.yaml: its chunk.header), in --headers order",
    )  # fmt: skip
    ap.add_argument("--results", required=True, type=Path, help="the results folder (docs/results)")
    ap.add_argument("--params", default="params.yaml", help="the runs' params (their chunk.header: the headers table's other side)")
    args = ap.parse_args()
    if len(args.header_params) != len(args.headers):
        raise UserError(f"--header-params: give one per --headers folder ({len(args.headers)}), in the same order")
    cp = params.section("chunk", args.params)
    runs, headers = {}, {}
    for folder, path in zip(args.headers, args.header_params):
        name = folder.parent.name
        if not name.endswith(qa.HEADER_RUN):
            raise UserError(f"--headers {folder}: not a header run's report (metrics/papers/qa/<dataset>{qa.HEADER_RUN}/report)")
        ds = name.removesuffix(qa.HEADER_RUN)
        if ds in runs:
            raise UserError(f"--headers {folder}: a second header run of {ds}; give one per dataset")
        hp = params.section("chunk", path)
        runs[ds], headers[ds] = folder / "scores.csv", (cp.header, hp.header)
    ev = params.section("evaluate", args.params)
    gp = params.section("generate", args.params)
    qp = params.section("qa", args.params)
    xp = params.section("evaluate_qa", args.params)
    # The runs' own settings: the page's intervals use evaluate_qa's resamples and seed.
    s = qa.Settings(ev.bootstrap, ev.seed, gp.model, qp.n_examples, xp.bertscore_model, xp.bertscore_layers)
    for table in qa.tables({r.parent.name: r / "scores.csv" for r in args.reports}, s, runs, headers):
        md, js = publish(table, args.results)
        log.info("%s: %s, %s", table.section, md, js)


if __name__ == "__main__":
    cli.run(main)
