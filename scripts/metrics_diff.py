"""Print, as Markdown, how metrics and params moved between two revisions or experiments.

The same text the pull-request workflow (.github/workflows/metrics.yml) posts as a comment.
It leads with the primary metrics of each metrics file (triple F1, relation hit@1, nDCG@10,
cut-answer share, ROUGE-2, classification F1: ``PRIMARY``): base, head, the change and its
interval, starred where the interval excludes 0. The full `dvc metrics diff --md` and
`dvc params diff --md` follow, folded. BASE and TARGET are anything DVC accepts: a branch,
a commit, a tag, or an experiment name (TARGET default: the workspace).

The interval of a change is **paired** where both revisions track the per-item scores behind
it (``ITEMS``: ``metrics/<name>-items.parquet`` beside ``metrics/<name>.json``, retrieve's
per-query ``metrics/retrieval-<dataset>.parquet``, evaluate_qa's per-question
``reports/qa-<dataset>/scores.csv``). For an F1 they are each test input's true-positive,
predicted and gold counts, or a classifier's label and prediction; for a mean (nDCG@10,
ROUGE-2), each item's score under the metric's own key. The interval is a 95% bootstrap over
the inputs both runs scored, each resample scoring the base and the head on the same inputs,
so a change consistent across inputs is told apart even where the two runs' own intervals
overlap. The items must give back the value each revision reports; where they do not, or one
revision lacks them, or the runs scored different inputs, the change gets the unpaired
approximation delta ± sqrt(h_base² + h_head²) from the two runs' own half-widths
(``<metric>_ci_low`` / ``_ci_high``), which is wider, so its star is conservative. Metrics
without either (cut-answer share) show no interval. The table lists the primary metrics that
moved; those that did not are folded below it.

    python scripts/metrics_diff.py main              # workspace against main
    python scripts/metrics_diff.py exp-a exp-b       # two experiments
    python scripts/metrics_diff.py main --bootstrap 2000 --seed 7
    make metrics-diff BASE=main
"""

from __future__ import annotations

import argparse
import io
import json
import math
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from biochunk.evaluation.stats import bootstrap_ci
from biochunk.evaluation.triples import micro


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
    (r"([^.]+)\.yesno_accuracy", "yes/no accuracy ({1})"),  # evaluate_qa: BioASQ's measure of its yes/no questions
    (r"([^.]+\.)?f1", "F1"),
    (r"retrieval\.hybrid\.([^.]+)\.ndcg@10", "nDCG@10 (hybrid, {1})"),  # compare, per chunk method
    (r"rerank\.reranked\.ndcg@10", "nDCG@10 (BM25, reranked)"),  # compare, where the corpus trains a reranker
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


# A classifier's per-sentence prediction in its items file, by the metrics key it scores
# (stages/classify.py: "generator" and "vote", beside the gold "label").
CLASSIFY_ITEMS = {"generator": "generator", "evidence_vote": "vote"}
# What the items give back must be what the metrics file reports (JSON keeps it whole).
SAME = 1e-9


# Where a stage keeps the per-item scores of a metrics file, and the separator its item keys
# put between the parts of the metrics key. evaluate, classify and compare write
# metrics/<name>-items.parquet keyed as their metrics file is; retrieve writes
# metrics/retrieval-<dataset>.parquet keyed retriever/method/measure, and evaluate_qa one row
# per question and method with a column per measure (reports/qa-<dataset>/scores.csv, read as
# <method>.<measure>). Paper pipelines hash those two stages, so their files keep their names.
ITEMS: tuple[tuple[str, str, str], ...] = (
    (r"(.*)metrics/retrieval-([^/]+)\.json", r"\1metrics/retrieval-\2.parquet", "/"),
    (r"(.*)metrics/qa-([^/]+)\.json", r"\1reports/qa-\2/scores.csv", "."),
    (r"(.+)\.json", r"\1-items.parquet", "."),
)


def items_path(metrics_path: str) -> tuple[str, str]:
    """Where a stage writes the per-item scores of ``metrics_path``, and the separator of its item keys."""
    for pattern, path, sep in ITEMS:
        if re.fullmatch(pattern, metrics_path):
            return re.sub(pattern, path, metrics_path), sep
    return metrics_path, "."  # not a .json file: it has no items file (items_at finds none)


def items_at(path: str, rev: str | None, cwd: Path, sep: str = ".") -> pd.DataFrame | None:
    """The ITEM_SCORES table at ``path`` in revision or experiment ``rev`` (None: the
    workspace), its metric keys spelt as the metrics file's (``sep`` -> "."), or None where
    that revision does not have it."""
    if not path.endswith((".parquet", ".csv")):
        return None
    try:
        if rev is None:
            data = (cwd / path).read_bytes()
        else:
            import dvc.api  # reads git revisions and experiments alike
            from dvc.exceptions import PathMissingError

            try:
                data = dvc.api.read(path, repo=str(cwd), rev=rev, mode="rb")
            except PathMissingError:
                return None
    except FileNotFoundError:
        return None
    if path.endswith(".csv"):
        return _question_rows(pd.read_csv(io.BytesIO(data)))
    items = pd.read_parquet(io.BytesIO(data))
    if sep != ".":
        items["metric"] = items["metric"].str.replace(sep, ".", regex=False)
    return items


# evaluate_qa's scores column -> the measure its metrics file names the mean of that column
# (biochunk.evaluation.qa.summary: the mean of the yes/no flags is an accuracy).
QA_MEASURES = {"yesno_correct": "yesno_accuracy"}


def _question_rows(wide: pd.DataFrame) -> pd.DataFrame:
    """evaluate_qa's scores (one row per question and method, a column per measure) as items:
    item = question, metric ``<method>.<measure>``, the key whose mean its metrics file reports.
    A measure left empty for a question (no yes/no answer) is not an item of it, as the mean skips it."""
    long = wide.melt(id_vars=["question_id", "method"], var_name="measure", value_name="value").dropna(subset=["value"])
    long = long[pd.to_numeric(long["value"], errors="coerce").notna()]
    return pd.DataFrame({
        "item_id": long["question_id"].astype(str),
        "metric": long["method"].astype(str) + "." + long["measure"].replace(QA_MEASURES),
        "value": long["value"].astype(float),
    })  # fmt: skip


def item_counts(items: pd.DataFrame, key: str) -> pd.DataFrame | None:
    """Per input (indexed by item id): the true-positive, predicted and gold counts whose micro
    F1 is metric ``key`` (``triple.f1``, ``generator.f1``), or None where the items lack them."""
    if not key.endswith(".f1"):
        return None
    if items.duplicated(["item_id", "metric"]).any():
        return None  # not one score per item and metric: no table of counts to pair
    part = key[: -len(".f1")]
    wide = items.pivot(index="item_id", columns="metric", values="value")
    cols = [f"{part}.{c}" for c in ("tp", "predicted", "gold")]
    if set(cols) <= set(wide.columns):
        return wide[cols].set_axis(["tp", "predicted", "gold"], axis=1)
    pred = CLASSIFY_ITEMS.get(part)
    if pred in wide.columns and "label" in wide.columns:
        return pd.DataFrame({"tp": wide[pred] * wide["label"], "predicted": wide[pred], "gold": wide["label"]})
    return None


def item_values(items: pd.DataFrame, key: str) -> pd.Series | None:
    """Per item: the scores whose mean is metric ``key``, where the items name it (compare's
    ``retrieval.<retriever>.<method>.ndcg@10``, retrieve's ``<retriever>.<method>.ndcg@10``,
    evaluate_qa's ``<method>.rouge2_f1``), else None."""
    rows = items[items["metric"] == key]
    return rows.set_index("item_id")["value"] if len(rows) else None


def paired_interval(
    base: pd.DataFrame | None, head: pd.DataFrame | None, key: str, old: float, new: float, n_boot: int, seed: int
) -> tuple[float, float] | None:
    """The paired 95% bootstrap interval of the change of metric ``key`` over the inputs both
    sides scored (a micro F1 from counts, or a mean of per-item scores), or None where it
    cannot be had from these items (see the module's docstring)."""
    if base is None or head is None:
        return None
    x, y = item_values(base, key), item_values(head, key)
    if x is not None and y is not None:
        if set(x.index) != set(y.index) or x.index.has_duplicates or not len(x):
            return None
        d = np.column_stack([x.to_numpy(dtype=float), y.loc[x.index].to_numpy(dtype=float)])
        if abs(d[:, 0].mean() - old) > SAME or abs(d[:, 1].mean() - new) > SAME:
            return None
        return bootstrap_ci(d, lambda r: float(r[:, 1].mean() - r[:, 0].mean()), n_boot, seed)
    a, b = item_counts(base, key), item_counts(head, key)
    if a is None or b is None or set(a.index) != set(b.index) or not len(a):
        return None  # different inputs (a changed test split or sample): nothing to pair
    rows = np.hstack([a.to_numpy(dtype=float), b.loc[a.index].to_numpy(dtype=float)])
    if abs(micro(rows[:, :3])["f1"] - old) > SAME or abs(micro(rows[:, 3:])["f1"] - new) > SAME:
        return None  # not the scores behind these metrics
    return bootstrap_ci(rows, lambda x: micro(x[:, 3:])["f1"] - micro(x[:, :3])["f1"], n_boot, seed)


def primary_rows(
    diff: dict[str, dict[str, dict[str, float]]],
    items: dict[str, tuple[pd.DataFrame | None, pd.DataFrame | None]] | None = None,
    n_boot: int = 1000,
    seed: int = 42,
) -> list[dict[str, object]]:
    """One row per primary metric: base, head, change, and the change's interval: paired from
    ``items`` (metrics path -> the base's and the head's per-item scores) where they allow it,
    else the unpaired approximation."""
    items = items or {}
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
                paired = paired_interval(*items.get(path, (None, None)), key, old, new, n_boot, seed)
                if paired is not None:
                    row["ci"], row["paired"] = paired, True
                    rows.append(row)
                    continue
                lo = {s: metrics.get(f"{key}_ci_{s}", {}) for s in ("low", "high")}
                halves = [
                    (_num(lo["high"].get(side)), _num(lo["low"].get(side))) for side in ("old", "new")
                ]  # fmt: skip
                if all(h is not None and l is not None for h, l in halves):
                    half = math.sqrt(sum(((h - l) / 2) ** 2 for h, l in halves))  # type: ignore[operator]
                    row["ci"], row["paired"] = (new - old - half, new - old + half), False
            rows.append(row)
    return rows


def _f(x: object, signed: bool = False) -> str:
    return "—" if x is None else (f"{x:+.3f}" if signed else f"{x:.3f}")


def primary_table(rows: list[dict[str, object]], base: str, head: str) -> str:
    """The moved primary metrics as a table; the ones that did not move, folded below it.

    A pull request that changes one branch leaves most files' metrics where they were (BioASQ
    alone has some thirty rows): listing them beside the moved ones would hide the change."""
    if not rows:
        return "No primary metrics in the compared revisions."
    # Moved: a change, or a metric that one side lacks (added or removed); undefined on both
    # sides (null: no answers to cut) is no move.
    still = [r for r in rows if r.get("change") == 0 or (r["base"] is None and r["head"] is None)]
    moved = [r for r in rows if r not in still]
    out = []
    if moved:
        out += [f"| file | metric | {base} | {head} | change [95% CI] |", "|---|---|---:|---:|---|"]
    for r in moved:
        change = _f(r.get("change"), signed=True)
        ci = r.get("ci")
        if ci is not None:
            lo, hi = ci  # type: ignore[misc]
            change += f" [{lo:+.3f}, {hi:+.3f}]" + (" ★" if lo > 0 or hi < 0 else "") + (" paired" if r.get("paired") else "")
        out.append(f"| {r['file']} | {r['metric']} | {_f(r['base'])} | {_f(r['head'])} | {change} |")
    if moved:
        out += [
            "",
            f"{len(moved)} of {len(rows)} primary metrics moved; ★ = the change's interval excludes 0. *paired*: a bootstrap "
            "over the inputs both runs scored, from their per-item scores; otherwise the unpaired approximation from the two "
            "runs' own intervals, which is wider (conservative).",
        ]
    else:
        out.append(f"None of the {len(rows)} primary metrics moved.")
    if still:
        unmoved = ["| file | metric | value |", "|---|---|---:|"]
        unmoved += [f"| {r['file']} | {r['metric']} | {_f(r['base'])} |" for r in still]
        summary = f"{len(still)} primary metrics did not move"
        out += ["", f"<details><summary>{summary}</summary>", "", *unmoved, "", "</details>"]
    return "\n".join(out)


def revision_items(
    diff: dict[str, dict[str, Any]], revs: list[str], cwd: Path
) -> dict[str, tuple[pd.DataFrame | None, pd.DataFrame | None]]:
    """Each metrics file's per-item scores in the base and the head (the workspace where
    ``revs`` names one revision), for the files with a primary metric that moved."""
    moved = [p for p, m in diff.items() if any(_label(k) and m[k].get("old") != m[k].get("new") for k in m)]
    head = revs[1] if len(revs) > 1 else None
    out = {}
    for p in moved:
        path, sep = items_path(p)
        out[p] = (items_at(path, revs[0], cwd, sep), items_at(path, head, cwd, sep))
    return out


def report(base: str, target: str | None, cwd: Path, n_boot: int = 1000, seed: int = 42) -> str:
    revs = [base] + ([target] if target else [])
    against = f"`{target}`" if target else "the workspace"
    parts = [f"## Metrics and params: {against} against `{base}`", ""]
    diff = dvc_json(revs, cwd)
    rows = primary_rows(diff, revision_items(diff, revs, cwd), n_boot, seed)
    parts += ["### Primary metrics", "", primary_table(rows, base, target or "workspace"), ""]
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
    ap.add_argument("--bootstrap", type=int, default=1000, help="resamples of each paired interval (default: 1000)")
    ap.add_argument("--seed", type=int, default=42, help="seed of the paired resamples (default: 42)")
    args = ap.parse_args()
    if args.bootstrap < 1:
        raise SystemExit(f"error: --bootstrap {args.bootstrap}: must be at least 1")
    os.environ.setdefault("DVC_NO_ANALYTICS", "1")
    print(report(args.base, args.target, args.repo, args.bootstrap, args.seed))


if __name__ == "__main__":
    main()
