"""nDCG@10 of every chunk method minus whole documents (`none`), per retriever, with paired
bootstrap intervals over the evaluation queries, from the retrieve stage's runs.

    python benchmarks/retrieval_deltas.py --dataset scifact --data data/interim/scifact \\
        data/retrieve/scifact/runs.parquet [more runs.parquet ...] [--out metrics/retrieval-scifact-deltas.json]

Several runs files (one retrieve run per chunk method) are read together; the `none` run of a
retriever must be among them. A later file's (retriever, method) run replaces an earlier one's.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from retrieval_table import RETRIEVERS, ordered  # the script's own folder: one row order for both tables

from biochunk import cli
from biochunk.chunking import NO_CHUNKING
from biochunk.datasets.registry import load_registry
from biochunk.errors import UserError
from biochunk.evaluation.retrieval import paired_delta
from biochunk.io import RUNS, read_table, write_json
from biochunk.retrieval import collection


def read_runs(paths: list[Path]) -> dict[tuple[str, str], dict[str, list[tuple[str, float]]]]:
    runs: dict[tuple[str, str], dict[str, list[tuple[str, float]]]] = {}
    for path in paths:
        df = read_table(path, RUNS).sort_values(["retriever", "method", "query_id", "rank"])
        for (retriever, method), g in df.groupby(["retriever", "method"], sort=False):
            run: dict[str, list[tuple[str, float]]] = {}
            for q, d, s in zip(g["query_id"], g["doc_id"], g["score"]):
                run.setdefault(str(q), []).append((str(d), float(s)))
            runs[(retriever, method)] = run
    return runs


def cell(d: dict[str, float] | None) -> str:
    return f"{d['delta']:+.4f} [{d['ci_low']:+.4f}, {d['ci_high']:+.4f}]" if d else "—"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--dataset", required=True)
    ap.add_argument("--data", required=True, type=Path, help="converted dataset folder")
    ap.add_argument("runs", nargs="+", type=Path, help="runs.parquet files of the retrieve stage")
    ap.add_argument("--bootstrap", type=int, default=1000)
    ap.add_argument("--seed", type=int, default=42)
    ap.add_argument("--out", type=Path, default=None)
    args = ap.parse_args()
    coll = collection.load(args.data, load_registry()[args.dataset].task)
    runs = read_runs(args.runs)
    out: dict[str, dict[str, dict[str, float]]] = {}
    for retriever in RETRIEVERS:
        base = runs.get((retriever, NO_CHUNKING))
        methods = sorted(m for r, m in runs if r == retriever and m != NO_CHUNKING)
        if methods and base is None:
            files = ", ".join(map(str, args.runs))
            raise UserError(f"no {retriever}/{NO_CHUNKING} run among {files}: add a run of whole documents")
        for m in methods:
            out.setdefault(retriever, {})[m] = paired_delta(base, runs[(retriever, m)], coll.qrels, args.bootstrap, args.seed)
    print(f"nDCG@10 minus `{NO_CHUNKING}` (whole documents), 95% paired bootstrap interval over {len(coll.qrels)} queries")
    print("| chunk method | " + " | ".join(RETRIEVERS) + " |")
    print("|---|" + "---|" * len(RETRIEVERS))
    for m in ordered(m for r in out.values() for m in r):
        cells = [cell(out.get(r, {}).get(m)) for r in RETRIEVERS]
        print(f"| {m} | " + " | ".join(cells) + " |")
    if args.out:
        write_json(out, args.out)


if __name__ == "__main__":
    cli.run(main)
