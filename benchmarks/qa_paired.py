"""Paired differences between QA arms (chunk methods or qa.contexts arms) on the same questions.

evaluate_qa's Tukey HSD treats the arms as independent groups; every arm answers the same
questions, so resampling questions for both arms at once gives the interval of the difference
itself, much narrower. Reads the per-question scores evaluate_qa writes.

    python benchmarks/qa_paired.py reports/qa-bioasq/scores.csv --base none \\
        --out docs/results/data/qa/bioasq-contexts-paired.json
"""

from __future__ import annotations

import argparse
from pathlib import Path

import numpy as np
import pandas as pd

from biochunk import cli
from biochunk.errors import UserError
from biochunk.evaluation.qa import COMPARED
from biochunk.evaluation.stats import bootstrap_ci
from biochunk.io import write_json


def paired(scores: pd.DataFrame, a: str, b: str, metric: str, n_boot: int, seed: int) -> dict[str, float]:
    """mean(B) − mean(A) of ``metric`` over the questions both arms answered, with a paired
    bootstrap 95% interval."""
    wide = scores.pivot_table(index="question_id", columns="method", values=metric)[[a, b]].dropna()
    d = (wide[b] - wide[a]).to_numpy()
    lo, hi = bootstrap_ci(d, np.mean, n_boot, seed)
    return {"a": a, "b": b, "metric": metric, "questions": len(d), "delta": float(d.mean()), "ci_low": lo, "ci_high": hi}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("scores", type=Path, help="evaluate_qa's scores.csv (reports/qa-<dataset>/scores.csv)")
    ap.add_argument("--base", default=None, help="compare every arm with this one (default: every pair)")
    ap.add_argument("--bootstrap", type=int, default=1000)
    ap.add_argument("--seed", type=int, default=42)
    ap.add_argument("--out", type=Path, default=None)
    args = ap.parse_args()
    if not args.scores.is_file():
        raise UserError(f"{args.scores}: no such file (run evaluate_qa first)")
    scores = pd.read_csv(args.scores, dtype={"question_id": str})
    arms = sorted(scores["method"].unique())
    if args.base is not None and args.base not in arms:
        raise UserError(f"--base {args.base!r} is not an arm of {args.scores}; arms: {', '.join(arms)}")
    pairs = [(args.base, b) for b in arms if b != args.base] if args.base else [(a, b) for i, a in enumerate(arms) for b in arms[i + 1 :]]
    rows = [paired(scores, a, b, m, args.bootstrap, args.seed) for a, b in pairs for m in COMPARED]
    print(f"| B − A | {' | '.join(COMPARED)} |")
    print("|---|" + "---|" * len(COMPARED))
    for a, b in pairs:
        cells = [r for r in rows if (r["a"], r["b"]) == (a, b)]
        fmt = [f"{r['delta']:+.3f} [{r['ci_low']:+.3f}, {r['ci_high']:+.3f}]{' *' if r['ci_low'] > 0 or r['ci_high'] < 0 else ''}" for r in cells]
        print(f"| {b} − {a} | {' | '.join(fmt)} |")
    print("\n* the paired 95% interval excludes 0")
    if args.out:
        write_json({"scores": str(args.scores), "bootstrap": args.bootstrap, "seed": args.seed, "pairs": rows}, args.out)


if __name__ == "__main__":
    cli.run(main)
