"""Print, as Markdown, how metrics and params moved between two revisions or experiments.

The same text the pull-request workflow (.github/workflows/metrics.yml) posts as a comment:
`dvc metrics diff --md` and `dvc params diff --md` between BASE and TARGET (default:
the workspace). BASE and TARGET are anything DVC accepts: a branch, a commit, a tag,
or an experiment name.

    python scripts/metrics_diff.py main              # workspace against main
    python scripts/metrics_diff.py exp-a exp-b       # two experiments
    make metrics-diff BASE=main
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
from pathlib import Path


def dvc_bin() -> str:
    # Prefer the dvc beside this interpreter (the project's venv), then PATH.
    here = Path(sys.executable).parent / "dvc"
    return str(here) if here.exists() else (shutil.which("dvc") or "dvc")


def dvc_md(kind: str, revs: list[str], cwd: Path) -> str:
    """``dvc <kind> diff --md REVS``; failures raise with dvc's own message."""
    r = subprocess.run([dvc_bin(), kind, "diff", "--md", *revs], cwd=cwd, capture_output=True, text=True)
    if r.returncode != 0:
        raise SystemExit(f"error: dvc {kind} diff {' '.join(revs)} failed: {r.stderr.strip() or r.stdout.strip()}")
    return r.stdout.strip()


def report(base: str, target: str | None, cwd: Path) -> str:
    revs = [base] + ([target] if target else [])
    against = f"`{target}`" if target else "the workspace"
    parts = [f"## Metrics and params: {against} against `{base}`", ""]
    for kind, title in (("metrics", "Metrics"), ("params", "Params")):
        table = dvc_md(kind, revs, cwd)
        # dvc prints nothing, or a header without rows, when nothing moved.
        changed = len(table.splitlines()) > 2
        parts += [f"### {title}", "", table if changed else f"No {kind} changed.", ""]
    return "\n".join(parts)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("base", help="revision or experiment to compare against (e.g. main, origin/main, exp-a)")
    ap.add_argument("target", nargs="?", help="revision or experiment compared (default: the workspace)")
    ap.add_argument("--repo", type=Path, default=Path.cwd(), help="repository root (default: the current folder)")
    args = ap.parse_args()
    os.environ.setdefault("DVC_NO_ANALYTICS", "1")
    print(report(args.base, args.target, args.repo))


if __name__ == "__main__":
    main()
