"""Check a params file the way every stage does, before DVC reads it: `make repro` runs this first.

DVC parses params.yaml itself, before any stage (and so before the stages' own check) runs:
an alias bomb hangs it, a duplicate key passes silently, a bad value only stops the first
stage that reads it. This runs the stages' check (``biochunk.params.load``: every section,
the relations between sizes, the keys dvc.yaml lists, the device) in about a second, and
prints its one line.

    python scripts/check_params.py            # params.yaml
    python scripts/check_params.py other.yaml
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
from biochunk import cli, params  # noqa: E402


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("params", nargs="?", default="params.yaml", type=Path, help="params file (default: params.yaml)")
    args = ap.parse_args()
    params.load(args.params)
    print(f"{args.params}: ok")


if __name__ == "__main__":
    cli.run(main)
