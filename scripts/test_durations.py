"""Seconds per test file from a full run's JUnit report: tests/durations.json, the order in which
``make test`` hands files to its workers (tests/schedule.py: longest first).

    PYTEST_ADDOPTS=--junitxml=/tmp/junit.xml make test
    python scripts/test_durations.py /tmp/junit.xml            # rewrites tests/durations.json

A test's time in the report is its setup, call and teardown, so a module fixture (a pipeline
run in a copy) counts towards its file.
"""

from __future__ import annotations

import argparse
import json
import sys
import xml.etree.ElementTree as ET
from collections import defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def test_file(classname: str, root: Path = ROOT) -> str | None:
    """``tests.test_x`` or ``tests.test_x.TestCase`` -> ``tests/test_x.py`` (the longest dotted prefix that is a file)."""
    parts = classname.split(".")
    for n in range(len(parts), 0, -1):
        rel = "/".join(parts[:n]) + ".py"
        if (root / rel).is_file():
            return rel
    return None


def durations(reports: list[Path], root: Path = ROOT) -> dict[str, float]:
    seconds: dict[str, float] = defaultdict(float)
    for report in reports:
        for case in ET.parse(report).iter("testcase"):
            rel = test_file(case.get("classname", ""), root)
            if rel is not None:
                seconds[rel] += float(case.get("time") or 0.0)
    return {k: round(v, 1) for k, v in sorted(seconds.items(), key=lambda kv: -kv[1])}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("reports", nargs="+", type=Path, help="JUnit XML reports of full runs (pytest --junitxml)")
    ap.add_argument("--out", type=Path, default=ROOT / "tests" / "durations.json")
    args = ap.parse_args(argv)
    for r in args.reports:
        if not r.is_file():
            print(f"error: {r}: no such JUnit report; write one with PYTEST_ADDOPTS=--junitxml={r} make test", file=sys.stderr)
            return 2
    found = durations(args.reports)
    if not found:
        print(f"error: {', '.join(map(str, args.reports))}: no test case names a file under {ROOT}; is it this project's report?", file=sys.stderr)  # fmt: skip
        return 2
    tmp = args.out.with_name(f".{args.out.name}.tmp")
    tmp.write_text(json.dumps(found, indent=1) + "\n")
    tmp.replace(args.out)
    total = sum(found.values())
    print(f"{args.out}: {len(found)} files, {total / 60:.1f} min of test time in all")
    return 0


if __name__ == "__main__":
    sys.exit(main())
