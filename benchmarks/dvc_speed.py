"""How long DVC takes to read this repository's pipelines with ruamel.yaml's C parser
(``ruamel.yaml.clib``, requirements.txt) against its pure-Python parser, in one process.

Every ``dvc status``, ``dvc exp run`` and ``dvc metrics diff`` reads all of the repository's
``dvc.yaml`` and ``dvc.lock`` files, the paper pipelines' included (their locks list each stage's
modules file by file, about 1.4 MB), whichever pipeline the command targets. ruamel.yaml >= 0.19
uses its C parser only when ``ruamel.yaml.clib`` is installed; DVC's "safe" loads then go through
it, and the values are the same (checked here on every file).

    python benchmarks/dvc_speed.py            # from the repository root; --repeat N
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import ruamel.yaml.main as ruamel_main
from dvc.repo import Repo
from dvc.utils.serialize._yaml import parse_yaml

ROOT = Path(__file__).resolve().parents[1]


def _files() -> list[Path]:
    names = ["dvc.yaml", "dvc.lock", "params.yaml"]
    return [ROOT / n for n in names] + sorted((ROOT / "experiments").glob("*/dvc.yaml")) + sorted((ROOT / "experiments").glob("*/dvc.lock"))


def _parse_all(files: list[Path]) -> tuple[float, list]:
    t = time.perf_counter()
    out = [parse_yaml(f.read_text(), str(f)) for f in files]
    return time.perf_counter() - t, out


def _status() -> tuple[float, dict]:
    """What ``dvc status`` does over every pipeline in the repository (a fresh Repo: no caches)."""
    t = time.perf_counter()
    with Repo(str(ROOT)) as repo:
        st = repo.status()
    return time.perf_counter() - t, st


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=3, help="timed runs per parser (the best is reported)")
    args = ap.parse_args()
    c_parser = ruamel_main.CParser
    if c_parser is None:
        print("ruamel.yaml.clib is not installed: pip install -c constraints.txt -r requirements.txt", file=sys.stderr)
        return 1
    files = _files()
    size = sum(f.stat().st_size for f in files)
    print(f"{len(files)} files, {size / 1e6:.2f} MB of YAML; best of {args.repeat}")
    rows, seen = {}, {}
    # ruamel.yaml picks its parser when a YAML object is made, from this module global.
    for name, parser in (("pure Python", None), ("C (ruamel.yaml.clib)", c_parser)):
        ruamel_main.CParser = parser
        try:
            parse = [_parse_all(files) for _ in range(args.repeat)]
            status = [_status() for _ in range(args.repeat)]
        finally:
            ruamel_main.CParser = c_parser
        rows[name] = (min(t for t, _ in parse), min(t for t, _ in status))
        seen[name] = (parse[0][1], status[0][1])
    (pure, c) = rows.values()
    same = all(repr(a) == repr(b) for a, b in zip(*seen.values()))
    print(f"{'parser':<22} {'parse all (s)':>14} {'dvc status (s)':>15}")
    for name, (p, s) in rows.items():
        print(f"{name:<22} {p:>14.2f} {s:>15.2f}")
    print(f"{'ratio pure / C':<22} {pure[0] / c[0]:>14.1f} {pure[1] / c[1]:>15.1f}")
    print(f"same values and status from both parsers: {same}")
    return 0 if same else 1


if __name__ == "__main__":
    sys.exit(main())
