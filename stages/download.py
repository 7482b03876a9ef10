"""Stage download: materialise one dataset's raw files under data/raw/<dataset>/.

``--out`` is checked before any work: over, inside or holding ``download.mirror`` it would
replace the mirror's files (its SHA256SUMS with them), so it is refused in one line.
"""

import logging
from pathlib import Path

from biochunk import cli, params
from biochunk.datasets.download import download
from biochunk.datasets.registry import get_spec
from biochunk.io import check_output

log = logging.getLogger("download")


def main() -> None:
    ap = cli.ArgumentParser(description=__doc__)
    ap.add_argument("--dataset", required=True)
    ap.add_argument("--out", required=True, type=Path)
    ap.add_argument("--params", default="params.yaml")
    args = ap.parse_args()
    p = params.section("download", args.params)
    spec = get_spec(args.dataset)
    check_output(args.out, "--out", directory=True, spare={"download.mirror": p.mirror} if p.mirror else None)
    sizes = download(spec, args.out, p.mirror, p.timeout_s)
    log.info("%s: %d files, %.1f MB -> %s", spec.name, len(sizes), sum(sizes.values()) / 1e6, args.out)


if __name__ == "__main__":
    cli.run(main)
