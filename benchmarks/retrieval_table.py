"""Print the retrieve stage's metrics as Markdown tables: chunk method x retriever, reranking, reshaping.

    python benchmarks/retrieval_table.py metrics/retrieval-scifact.json [--k 100]

Runs split over several invocations (one chunk method each, when embedding is slow) are
assembled first; a later file's (retriever, method) entries replace an earlier file's:

    python benchmarks/retrieval_table.py metrics/retrieval-scifact.json --merge runs/a.json runs/b.json
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from biochunk.io import write_json
from biochunk.retrieval.experiment import RETRIEVERS

# Rows from structure-only to embedding-based chunking (metrics files store methods sorted by name).
ORDER = ["none", "fixed", "recursive", "semchunk", "cluster", "adaptive", "percentile", "stddev", "interquartile", "gradient",
         "structural", "hybrid", "proposition"]  # fmt: skip


def ordered(methods) -> list[str]:
    """Chunk method names in table order (unknown names last, by name)."""
    return sorted(set(methods), key=lambda x: (ORDER.index(x) if x in ORDER else len(ORDER), x))


def method_table(m: dict, k: int) -> str:
    methods = ordered(meth for r in RETRIEVERS for meth in m.get(r, {}))
    head = "| chunk method | chunks | " + " | ".join(f"{r} nDCG@10 | {r} R@{k}" for r in RETRIEVERS) + " |"
    lines = [head, "|---|---:|" + "---:|---:|" * len(RETRIEVERS)]
    chunks = m.get("corpus", {}).get("chunks", {})
    for meth in methods:
        cells = []
        for r in RETRIEVERS:
            x = m.get(r, {}).get(meth)
            cells += [f"{x['ndcg@10']:.4f}", f"{x[f'recall@{k}']:.4f}"] if x else ["—", "—"]
        lines.append(f"| {meth} | {chunks.get(meth, '')} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def detail_table(m: dict, k: int) -> str:
    keys = ["ndcg@10", "map", "mrr@10", f"recall@{k}", "p@5", "recall@5", "f1@5"]
    rows = [(f"{r} / {meth}", x) for r in RETRIEVERS for meth, x in m.get(r, {}).items() if meth == "none"]
    if "rerank" in m:
        rr = m["rerank"]
        rows += [(f"rerank BM25 top {rr['depth']}: {name}", rr[name]) for name in ("bm25", "init", "trained")]
    lines = ["| run | " + " | ".join(keys) + " | queries |", "|---|" + "---:|" * (len(keys) + 1)]
    for name, x in rows:
        lines.append(f"| {name} | " + " | ".join(f"{x.get(key, float('nan')):.4f}" for key in keys) + f" | {x['queries']} |")
    return "\n".join(lines)


def merge(files: list[Path]) -> dict:
    """One metrics dict from several retrieve runs over the same collection."""
    out: dict = {}
    for f in files:
        m = json.loads(f.read_text())
        for key, value in m.items():
            if key in RETRIEVERS:
                out.setdefault(key, {}).update(value)
            elif key == "corpus":
                corpus = out.setdefault("corpus", {})
                for field, v in value.items():
                    if isinstance(v, dict):
                        corpus.setdefault(field, {}).update(v)
                    elif corpus.get(field, v) != v:
                        raise SystemExit(f"{f}: corpus {field} is {v}, earlier files have {corpus[field]}: not one collection")
                    else:
                        corpus[field] = v
            else:
                out[key] = value  # rerank, reshape: whole entries, the latest run's
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("metrics", type=Path)
    ap.add_argument("--k", type=int, default=100, help="recall cut-off shown in the method table")
    ap.add_argument("--merge", nargs="+", type=Path, metavar="RUN", help="first write the merge of these runs to METRICS")
    args = ap.parse_args()
    if args.merge:
        write_json(merge(args.merge), args.metrics)
    m = json.loads(args.metrics.read_text())
    print(method_table(m, args.k))
    print()
    print(detail_table(m, args.k))
    if "reshape" in m:
        print()
        print("reshape: " + ", ".join(f"{k} {v:.2f}" if isinstance(v, float) else f"{k} {v}" for k, v in m["reshape"].items()))


if __name__ == "__main__":
    main()
