"""Stage report: the tables of a paper whose arms are chunk settings, into docs/results/<paper>.md.

Thin by design: it reads the evaluate stages' tracked outputs (metrics and per-item scores),
builds the paper's tables (``evaluation.reports.<paper>``) and writes them between their
markers in the results page (the prose around them is kept) and as JSON beside it.
"""

import importlib
import logging
from pathlib import Path

from biochunk import cli, experiments, params
from biochunk.errors import UserError
from biochunk.evaluation.papers import publish
from biochunk.io import read_json

log = logging.getLogger("report")

# Imported by name, so each paper's report stage depends on its own table builder only
# (scripts/stage_deps.py adds biochunk/evaluation/reports/<paper>.py to its deps).
# Papers whose arms are QA runs have their own stage, stages/report_runs.py: it reads no
# project params, so a chunk param cannot make their report stale.
REPORTS = ("clinical", "semchunk", "structural")


def main() -> None:
    ap = cli.ArgumentParser(description=__doc__)
    ap.add_argument("--paper", required=True, choices=sorted(REPORTS))
    ap.add_argument("--paper-params", required=True, type=Path, help="experiments/<paper>/params.yaml")
    ap.add_argument(
        "--sample", type=Path, action="append", default=[],
        help="the sample stage's sample.json: one per sample of the paper, in its params' order",
    )  # fmt: skip
    ap.add_argument("--scores", required=True, type=Path, help="folder of per-item scores, <setting>.parquet")
    ap.add_argument(
        "--evaluated", type=Path, action="append", default=[],
        help="folder of the evaluate stages' per-chunk sizes, <setting>/: one per sample, in the same order",
    )  # fmt: skip
    ap.add_argument("--results", required=True, type=Path, help="the results folder (docs/results)")
    ap.add_argument("--params", default="params.yaml")
    args = ap.parse_args()
    module = importlib.import_module(f"biochunk.evaluation.reports.{args.paper}")
    paper = experiments.load(args.paper_params)
    base = params.section("chunk", args.params)
    rp = params.section("retrieve", args.params)
    ep = params.section("embed", args.params)
    chunk_params = {n: s.chunk_params(base, rp.chunk) for n, s in paper.settings.items()}
    plot = args.results / f"{args.paper}-sizes.png"
    names = list(paper.samples)
    if len(args.sample) != len(names) or len(args.evaluated) != len(names):
        raise UserError(f"--sample / --evaluated: give one of each per sample of {args.paper_params} ({', '.join(names)}), in that order")
    samples = {n: read_json(f) for n, f in zip(names, args.sample)}
    for table in module.tables(paper, chunk_params, args.scores, dict(zip(names, args.evaluated)), samples, ep.model, plot):
        md, js = publish(table, args.results)
        log.info("%s: %s, %s", table.section, md, js)


if __name__ == "__main__":
    cli.run(main)
