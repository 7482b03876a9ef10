"""Stage report_rungs: the tables of a paper whose arms are rungs, into docs/results/<paper>.md.

A rung is one end-to-end run of the default pipeline's stages under its own settings file
(``experiments/<paper>/rungs/<rung>.yaml``). The twin of ``stages/report.py`` (chunk-setting
arms) and ``stages/report_runs.py`` (QA runs): it reads the rungs' settings files and their
tracked per-item scores, not params.yaml, so only a rung's own change makes it stale. Thin by
design: ``evaluation.reports.<paper>`` builds the tables; they are written between their markers
in the results page (the prose around them is kept) and as JSON beside it.
"""

import importlib
import logging
from pathlib import Path

from biochunk import cli
from biochunk.evaluation.papers import publish

log = logging.getLogger("report_rungs")

# Imported by name, so each paper's report stage depends on its own table builder only.
REPORTS = ("biomedrag",)


def main() -> None:
    ap = cli.ArgumentParser(description=__doc__)
    ap.add_argument("--paper", required=True, choices=sorted(REPORTS))
    ap.add_argument("--paper-params", required=True, type=Path, help="experiments/<paper>/rungs.yaml (rungs/<rung>.yaml beside it)")
    ap.add_argument("--scores", required=True, type=Path, help="folder of per-item scores, <rung>-items.parquet")
    ap.add_argument(
        "--datasets", required=True, type=Path, nargs="+",
        help="the describe stage's files (metrics/papers/datasets/<dataset>.json): split sizes",
    )  # fmt: skip
    ap.add_argument("--results", required=True, type=Path, help="the results folder (docs/results)")
    args = ap.parse_args()
    module = importlib.import_module(f"biochunk.evaluation.reports.{args.paper}")
    for table in module.tables(args.paper_params, args.scores, args.datasets):
        md, js = publish(table, args.results)
        log.info("%s: %s, %s", table.section, md, js)


if __name__ == "__main__":
    cli.run(main)
