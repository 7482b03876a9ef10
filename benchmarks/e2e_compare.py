"""Paired comparison of two end-to-end runs on the same test sentences: F1(B) - F1(A) with a
paired bootstrap interval (triple, head, relation, tail).

Each run's own interval (in metrics/<dataset>.json) says how precise its F1 is; whether B beats
A is a question about the difference, and resampling the same sentences for both runs answers
it with a much narrower interval.

    python benchmarks/e2e_compare.py --data data/interim/gm-ciht \\
        runs/fixed/predictions.parquet runs/hybrid/predictions.parquet --names fixed hybrid \\
        --out docs/results/data/e2e/gm-ciht-paired.json

The predictions are the generate stage's `data/generate/<dataset>/predictions.parquet` of
each run (e.g. `dvc exp run -S chunk.method=fixed`, then `=hybrid`, copying the file between).
Given more than two runs (or ``--ladder DIR --names ...``), every pair is compared, each later
run against each earlier one (scripts/selection_ladder.sh).
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
    ap.add_argument("runs", nargs="*", type=Path, help="predictions.parquet of each run, the baseline first")
    ap.add_argument("--ladder", type=Path, default=None, help="a folder of <name>.parquet predictions (instead of runs)")
    ap.add_argument("--names", nargs="+", default=None, help="a name per run (with --ladder: the files, in order)")
    ap.add_argument("--bootstrap", type=int, default=1000)
    ap.add_argument("--seed", type=int, default=42)
    ap.add_argument("--out", type=Path, default=None, help="write the figures as JSON too")
    args = ap.parse_args()
    if args.ladder is not None:
        if not args.names:
            raise UserError("--ladder needs --names: the predictions files (without .parquet) in ladder order")
        files = [args.ladder / f"{n}.parquet" for n in args.names]
    else:
        files = args.runs
    names = args.names or [chr(ord("a") + i) for i in range(len(files))]
    if len(files) < 2 or len(names) != len(files):
        raise UserError(f"give two or more runs and one name each (got {len(files)} runs, {len(names)} names)")
    for f in files:
        if not f.is_file():
            raise UserError(f"{f}: no such predictions file")
    preds = [predicted_triples(read_table(f, PREDICTIONS)) for f in files]
    for f, pr in zip(files[1:], preds[1:]):
        if set(pr) != set(preds[0]):
            raise UserError(
                f"{files[0]} and {f} cover different test sentences ({len(preds[0])} vs {len(pr)}): "
                "run both with the same generate.max_inputs"
            )
    test = read_table(args.data / "test.parquet", TRIPLES)
    gold = gold_triples(test[test["id"].astype(str).isin(preds[0])])
    print(f"{len(gold)} test sentences, {args.bootstrap} paired resamples")
    print("| F1 | A | B | F1(A) | F1(B) | B − A [95% CI] | excludes 0 |")
    print("|---|---|---|---:|---:|---|---|")
    pairs = []
    for i in range(len(files)):
        for j in range(i + 1, len(files)):
            diff = paired_difference(gold, preds[i], preds[j], args.bootstrap, args.seed)
            pairs.append({"a": names[i], "b": names[j], **diff})
            for part, d in diff.items():
                clear = "yes" if d["ci_low"] > 0 or d["ci_high"] < 0 else "no"
                print(
                    f"| {part} | {names[i]} | {names[j]} | {d['f1_a']:.3f} | {d['f1_b']:.3f} | "
                    f"{d['delta']:+.3f} [{d['ci_low']:+.3f}, {d['ci_high']:+.3f}] | {clear} |"
                )
    if args.out:
        body = {"inputs": len(gold), "bootstrap": args.bootstrap, "seed": args.seed}
        if len(pairs) == 1:  # the two-run form, as written before
            write_json({**body, **pairs[0]}, args.out)
        else:
            write_json({**body, "runs": names, "pairs": pairs}, args.out)


if __name__ == "__main__":
    cli.run(main)
