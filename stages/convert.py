"""Stage convert: raw files -> unified Parquet (one file per split/table) + report.json.

``--out`` is checked before any work: over, inside or holding ``--raw`` it would replace the
raw files (or be read as one of them by the next run), so it is refused in one line.
"""

import logging
from pathlib import Path

from biochunk import cli, params
from biochunk.datasets.convert import convert
from biochunk.datasets.registry import get_spec
from biochunk.io import check_output

log = logging.getLogger("convert")


def main() -> None:
    ap = cli.ArgumentParser(description=__doc__)
    ap.add_argument("--dataset", required=True)
    ap.add_argument("--raw", required=True, type=Path)
    ap.add_argument("--out", required=True, type=Path)
    ap.add_argument("--params", default="params.yaml")
    args = ap.parse_args()
    check_output(args.out, "--out", directory=True, spare={"--raw": args.raw})
    p = params.section("convert", args.params)
    report = convert(get_spec(args.dataset), args.raw, args.out, p.skip_malformed)
    log.info("%s: written %s, dropped %s", args.dataset, report["rows_written"], report["rows_dropped"])


if __name__ == "__main__":
    cli.run(main)
