"""Stage describe: a converted dataset's rows per split and label counts, as a tracked metrics file.

    python stages/describe.py --dataset ddi --data data/papers/interim/ddi --out metrics/papers/datasets/ddi.json

Reads the convert stage's folder (report.json and, for triples and classification, the split
tables) and writes ``datasets.describe``'s numbers with the dataset and its task. The file is
small and kept in git (``cache: false``), so the biomedrag report's Table 2 comparison renders
from tracked files, and ``dvc metrics diff`` shows a converter's change to the data.
"""

import logging
from pathlib import Path

from biochunk import cli
from biochunk.datasets.describe import describe
from biochunk.datasets.registry import get_spec
from biochunk.io import check_output, write_json

log = logging.getLogger("describe")


def main() -> None:
    ap = cli.ArgumentParser(description=__doc__)
    ap.add_argument("--dataset", required=True)
    ap.add_argument("--data", required=True, type=Path, help="the converted folder (the convert stage's --out)")
    ap.add_argument("--out", required=True, type=Path, help="the description (JSON)")
    args = ap.parse_args()
    spec = get_spec(args.dataset)
    check_output(args.out, "--out", directory=False, spare={"--data": args.data})
    numbers = describe(args.data, spec.task)
    write_json({"dataset": spec.name, "task": spec.task, **numbers}, args.out)
    log.info("%s: %s rows written", spec.name, numbers["rows_written"])


if __name__ == "__main__":
    cli.run(main)
