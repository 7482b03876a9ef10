"""Stage report_runs: the tables of a paper whose arms are QA runs, into docs/results/<paper>.md.

The QA papers' twin of ``stages/report.py`` (whose papers' arms are chunk settings): it reads
no project params, only the QA runs' outputs and per-question scores, so a change to
``params.yaml``'s chunk section cannot make its stage stale. Thin by design: the tables are
built by ``evaluation.reports.<paper>`` and written between their markers in the results page
(the prose around them is kept) and as JSON beside it, with the paper's figure
(``<page>-grid.png``).
"""

import importlib
import logging
from pathlib import Path

from biochunk import cli
from biochunk.evaluation.papers import publish

log = logging.getLogger("report_runs")

# Imported by name, so each paper's report stage depends on its own table builder only
# (scripts/stage_deps.py adds biochunk/evaluation/reports/<paper>.py to its deps).
REPORTS = ("bioasq",)


def main() -> None:
    ap = cli.ArgumentParser(description=__doc__)
    ap.add_argument("--paper", required=True, choices=sorted(REPORTS))
    ap.add_argument(
        "--paper-params", required=True, type=Path,
        help="the paper's main params file (a project params file: the QA stages' --params)",
    )  # fmt: skip
    ap.add_argument("--scores", required=True, type=Path, help="folder of the runs' per-question scores, <run>/report/")
    ap.add_argument(
        "--runs", type=Path, action="append", required=True,
        help="each run's folder of QA stage outputs, in its module's order",
    )  # fmt: skip
    ap.add_argument("--results", required=True, type=Path, help="the results folder (docs/results)")
    args = ap.parse_args()
    module = importlib.import_module(f"biochunk.evaluation.reports.{args.paper}")
    # The paper's figure (results worth looking at get a plot), beside its page.
    plot = args.results / f"{module.PAPER}-grid.png"
    for table in module.tables(args.paper_params, args.scores, args.runs, plot):
        md, js = publish(table, args.results)
        log.info("%s: %s, %s", table.section, md, js)


if __name__ == "__main__":
    cli.run(main)
