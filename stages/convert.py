"""Stage convert: raw files -> unified Parquet (one file per split/table) + report.json."""

import logging
from pathlib import Path

from biochunk import cli, params
from biochunk.datasets.convert import convert
from biochunk.datasets.registry import get_spec

log = logging.getLogger("convert")


def main() -> None:
    ap = cli.ArgumentParser(description=__doc__)
    ap.add_argument("--dataset", required=True)
    ap.add_argument("--raw", required=True, type=Path)
    ap.add_argument("--out", required=True, type=Path)
    ap.add_argument("--params", default="params.yaml")
    args = ap.parse_args()
    p = params.section("convert", args.params)
    report = convert(get_spec(args.dataset), args.raw, args.out, p.skip_malformed)
    log.info("%s: written %s, dropped %s", args.dataset, report["rows_written"], report["rows_dropped"])


if __name__ == "__main__":
    cli.run(main)
