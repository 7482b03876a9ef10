"""Stage convert_local: your own corpus (``data.local``) -> the converted tables + report.json.

    python stages/convert_local.py --corpus path/to/corpus [--kind folder|beir|squad] --out data/local/<name>

A folder of documents (with an optional questions.jsonl), a BEIR folder or a SQuAD-format .json
file becomes the tables a registry dataset's convert stage writes, by the same converters
(``datasets.local.convert_local``); report.json also records the layout (``kind``). The compare
stage reads this folder (``--data``). A stage of its own, not a mode of ``convert``, so that a
change to how a local corpus is read re-runs the local corpora only, never a benchmark's
conversion (docs/your-corpus.md).
"""

import argparse
import logging
from pathlib import Path

from biochunk import cli, params
from biochunk.datasets.local import KINDS, convert_local
from biochunk.io import check_output

log = logging.getLogger("convert_local")


def main() -> None:
    ap = cli.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--corpus", required=True, type=Path, help="a folder of documents, a BEIR folder or a SQuAD .json file")
    ap.add_argument("--kind", choices=KINDS, default=None, help="the corpus's layout (default: told from the path)")
    ap.add_argument("--out", required=True, type=Path, help="the converted folder (the DVC stage: data/local/<name>)")
    ap.add_argument("--params", default="params.yaml")
    args = ap.parse_args()
    # Before any work: an output over, inside or holding the corpus would replace documents
    # (or be read as one by the next run).
    check_output(args.out, "--out", directory=True, spare={"the corpus": args.corpus})
    p = params.section("convert", args.params)
    report = convert_local(args.corpus, args.out, args.kind, skip_malformed=p.skip_malformed)
    log.info("%s (%s): written %s, dropped %s", report["dataset"], report["kind"], report["rows_written"], report["rows_dropped"])


if __name__ == "__main__":
    cli.run(main)
