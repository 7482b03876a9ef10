"""Print, as Markdown, how metrics and params moved between two revisions or experiments.

The same text the pull-request workflow (.github/workflows/metrics.yml) posts as a comment.
It leads with the primary metrics of each metrics file (triple F1, relation hit@1, nDCG@10,
cut-answer share, ROUGE-2, classification F1: ``PRIMARY``): base, head, the change and its
interval, starred where the interval excludes 0. The full `dvc metrics diff --md` and
`dvc params diff --md` follow, folded. BASE and TARGET are anything DVC accepts: a branch,
a commit, a tag, or an experiment name (TARGET default: the workspace).

The interval of a change: the metrics files keep each run's own 95% bootstrap interval
(``<metric>_ci_low`` / ``_ci_high``), not per-item scores, so the change gets the unpaired
approximation delta ± sqrt(h_base² + h_head²) from the two half-widths. It is wider than a
paired interval (a paper's report computes that from per-item scores), so a star is
conservative; metrics without intervals (nDCG@10, cut-answer share) show none.

    python scripts/metrics_diff.py main              # workspace against main
    python scripts/metrics_diff.py exp-a exp-b       # two experiments
    make metrics-diff BASE=main
"""

from __future__ import annotations

import argparse
import json
import math
import os
import re
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
    r = subprocess.run([dvc_bin(), kind, "diff", "--md", *revs], cwd=cwd, capture_output=True, text=True, check=False)
    if r.returncode != 0:
        raise SystemExit(f"error: dvc {kind} diff {' '.join(revs)} failed: {r.stderr.strip() or r.stdout.strip()}")
    return r.stdout.strip()


# The metrics a reviewer reads first, by flattened key (dvc's dotted form) in any metrics file.
PRIMARY: tuple[tuple[str, str], ...] = (
    (r"triple\.f1", "triple F1"),
    (r"retrieval\.(dense|scorer)\.relation_hit@1", "relation hit@1 ({1})"),
    (r"(bm25|dense|hybrid)\.none\.ndcg@10", "nDCG@10 ({1}, whole documents)"),
    (r"([^.]+)\.cut_answer_share", "cut-answer share ({1})"),
    (r"([^.]+)\.rouge2_f1", "ROUGE-2 F1 ({1})"),
    (r"([^.]+\.)?f1", "F1"),
)


def dvc_json(revs: list[str], cwd: Path) -> dict[str, dict[str, dict[str, float]]]:
    """``dvc metrics diff --json --all``: every metric, moved or not, as {path: {key: {old, new}}}."""
    r = subprocess.run(
        [dvc_bin(), "metrics", "diff", "--json", "--all", *revs], cwd=cwd, capture_output=True, text=True, check=False
    )
    if r.returncode != 0:
        raise SystemExit(f"error: dvc metrics diff {' '.join(revs)} failed: {r.stderr.strip() or r.stdout.strip()}")
    return json.loads(r.stdout or "{}")


def _label(key: str) -> str | None:
    for pattern, label in PRIMARY:
        m = re.fullmatch(pattern, key)
        if m:
            return label.format(*([m.group(0)] + [g or "" for g in m.groups()]))
    return None


def _num(x: object) -> float | None:
    return float(x) if isinstance(x, (int, float)) and not isinstance(x, bool) else None


def primary_rows(diff: dict[str, dict[str, dict[str, float]]]) -> list[dict[str, object]]:
    """One row per primary metric: base, head, change, and the change's approximate interval."""
    rows = []
    for path, metrics in sorted(diff.items()):
        # A file whose triple F1 is primary needs no generic "F1" rows of its parts.
        keys = [
            k for k in sorted(metrics) if _label(k) and not (k.endswith(".f1") and k != "triple.f1" and "triple.f1" in metrics)
        ]
        for key in keys:
            old, new = _num(metrics[key].get("old")), _num(metrics[key].get("new"))
            row: dict[str, object] = {"file": path, "metric": _label(key), "key": key, "base": old, "head": new}
            if old is not None and new is not None:
                row["change"] = new - old
                lo = {s: metrics.get(f"{key}_ci_{s}", {}) for s in ("low", "high")}
                halves = [
                    (_num(lo["high"].get(side)), _num(lo["low"].get(side))) for side in ("old", "new")
                ]  # fmt: skip
                if all(h is not None and l is not None for h, l in halves):
                    half = math.sqrt(sum(((h - l) / 2) ** 2 for h, l in halves))  # type: ignore[operator]
                    row["ci"] = (new - old - half, new - old + half)
            rows.append(row)
    return rows


def _f(x: object, signed: bool = False) -> str:
    return "—" if x is None else (f"{x:+.3f}" if signed else f"{x:.3f}")


def primary_table(rows: list[dict[str, object]], base: str, head: str) -> str:
    if not rows:
        return "No primary metrics in the compared revisions."
    out = [f"| file | metric | {base} | {head} | change [95% CI] |", "|---|---|---:|---:|---|"]
    for r in rows:
        change = _f(r.get("change"), signed=True)
        ci = r.get("ci")
        if ci is not None:
            lo, hi = ci  # type: ignore[misc]
            change += f" [{lo:+.3f}, {hi:+.3f}]" + (" ★" if lo > 0 or hi < 0 else "")
        out.append(f"| {r['file']} | {r['metric']} | {_f(r['base'])} | {_f(r['head'])} | {change} |")
    moved = sum(1 for r in rows if r.get("change"))
    out += ["", f"{moved} of {len(rows)} primary metrics moved; ★ = the change's interval excludes 0 (unpaired, conservative)."]
    return "\n".join(out)


def report(base: str, target: str | None, cwd: Path) -> str:
    revs = [base] + ([target] if target else [])
    against = f"`{target}`" if target else "the workspace"
    parts = [f"## Metrics and params: {against} against `{base}`", ""]
    parts += ["### Primary metrics", "", primary_table(primary_rows(dvc_json(revs, cwd)), base, target or "workspace"), ""]
    for kind, title in (("metrics", "Metrics"), ("params", "Params")):
        table = dvc_md(kind, revs, cwd)
        # dvc prints nothing, or a header without rows, when nothing moved.
        changed = len(table.splitlines()) > 2
        body = table if changed else f"No {kind} changed."
        # Folded: the full diff is for whoever wants it, the primary table above is the summary.
        parts += [f"### {title}", "", "<details><summary>every change</summary>", "", body, "", "</details>", ""]
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
