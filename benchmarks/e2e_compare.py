"""Paired comparison of two end-to-end runs on the same test sentences: F1(B) - F1(A) with a
paired bootstrap interval (triple, head, relation, tail).

Each run's own interval (in metrics/<dataset>.json) says how precise its F1 is; whether B beats
A is a question about the difference, and resampling the same sentences for both runs answers
it with a much narrower interval.

    python benchmarks/e2e_compare.py --data data/interim/gm-ciht \\
        runs/fixed/predictions.parquet runs/hybrid/predictions.parquet --names fixed hybrid \\
        --out benchmarks/e2e/gm-ciht-paired.json

The predictions are the generate stage's `data/generate/<dataset>/predictions.parquet` of
each run (e.g. `dvc exp run -S chunk.method=fixed`, then `=hybrid`, copying the file between).
"""

from __future__ import annotations

import argparse
from pathlib import Path

from biochunk import cli
from biochunk.corpus import gold_triples, predicted_triples
from biochunk.errors import UserError
from biochunk.evaluation.report import paired_difference
from biochunk.io import PREDICTIONS, TRIPLES, read_table, write_json


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--data", required=True, type=Path, help="converted dataset folder (test.parquet)")
    ap.add_argument("a", type=Path, help="predictions.parquet of the baseline run")
    ap.add_argument("b", type=Path, help="predictions.parquet of the run compared with it")
    ap.add_argument("--names", nargs=2, default=("a", "b"))
    ap.add_argument("--bootstrap", type=int, default=1000)
    ap.add_argument("--seed", type=int, default=42)
    ap.add_argument("--out", type=Path, default=None, help="write the figures as JSON too")
    args = ap.parse_args()
    pred_a, pred_b = (predicted_triples(read_table(f, PREDICTIONS)) for f in (args.a, args.b))
    if set(pred_a) != set(pred_b):
        raise UserError(
            f"{args.a} and {args.b} cover different test sentences ({len(pred_a)} vs {len(pred_b)}): "
            "run both with the same generate.max_inputs"
        )
    test = read_table(args.data / "test.parquet", TRIPLES)
    gold = gold_triples(test[test["id"].astype(str).isin(pred_a)])
    diff = paired_difference(gold, pred_a, pred_b, args.bootstrap, args.seed)
    a, b = args.names
    print(f"{len(gold)} test sentences, {args.bootstrap} paired resamples")
    print(f"| F1 | {a} | {b} | {b} − {a} [95% CI] |")
    print("|---|---:|---:|---|")
    for part, d in diff.items():
        print(f"| {part} | {d['f1_a']:.3f} | {d['f1_b']:.3f} | {d['delta']:+.3f} [{d['ci_low']:+.3f}, {d['ci_high']:+.3f}] |")
    if args.out:
        write_json({"a": a, "b": b, "inputs": len(gold), "bootstrap": args.bootstrap, "seed": args.seed, **diff}, args.out)


if __name__ == "__main__":
    cli.run(main)
