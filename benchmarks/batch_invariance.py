"""What a cached vector is worth: the embedding cache's hits against one cold pass, on real data.

    python benchmarks/batch_invariance.py [--data data/papers/interim/scifact] [--documents 2000] [--alone 100]

The ``retrieve`` stage's embedding cache (``biochunk/retrieval/cache.py``, ``--cache``) keys a
vector by its text and the encoder's identity and float pin. A vector's last bits also depend
on the texts embedded beside it: sentence-transformers pads each batch to its longest text, and
the attention sums then run over another length. So a run whose cache already holds some texts
embeds the rest in other batches than a cold run would. This measures how far that goes, with
the project's pins (``biochunk.numerics``) and its encoder (``embed.model``'s default, MiniLM):

- cold: one ``encode`` of ``--documents`` documents of the BEIR folder's corpus (every document
  its test judgements name, then others drawn with seed 0);
- warm: ``CachedEncoder`` over a fresh cache that first embeds a random half, then all of them
  (the other half is embedded on its own, as in a run after a partial one);
- alone: ``--alone`` documents embedded one per batch (the most different padding);
- without padding: documents of one token length (6 of each of the first ten lengths that
  have 6), embedded one and three per batch against the six in one call;

and, for the test queries, whether the dense top-10 over cold and warm vectors differ, against
the smallest gap between adjacent scores in any query's top 11 (how close a near-tie comes).
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import pandas as pd

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
from biochunk import numerics  # noqa: E402  (sets the pins before torch loads)
from biochunk.embedding import SentenceEncoder  # noqa: E402
from biochunk.io import CORPUS, QRELS, QUERIES, read_table  # noqa: E402
from biochunk.retrieval.cache import CachedEncoder  # noqa: E402


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--data", type=Path, default=ROOT / "data/papers/interim/scifact", help="a converted BEIR dataset folder")
    ap.add_argument("--documents", type=int, default=2000)
    ap.add_argument("--alone", type=int, default=100)
    ap.add_argument("--model", default="minilm")
    args = ap.parse_args()
    if not (args.data / "corpus.parquet").is_file():
        sys.exit(f"--data {args.data}: no corpus.parquet there; convert SciFact first (dvc repro experiments/datasets/dvc.yaml)")
    corpus = read_table(args.data / "corpus.parquet", CORPUS)
    qrels = read_table(args.data / "qrels.parquet", QRELS)
    qrels = qrels[qrels["split"] == "test"]
    queries = read_table(args.data / "queries.parquet", QUERIES)
    queries = queries[queries["query_id"].isin(set(qrels["query_id"]))]
    judged = corpus[corpus["doc_id"].isin(set(qrels["doc_id"]))]
    others = corpus[~corpus["doc_id"].isin(set(judged["doc_id"]))]
    others = others.sample(max(0, min(len(others), args.documents - len(judged))), random_state=0)
    texts = list(pd.concat([judged, others])["text"])
    rng = np.random.default_rng(0)

    enc = SentenceEncoder(args.model)
    enc.encode(texts[:8])  # load the weights before the clock
    t0 = time.perf_counter()
    cold = enc.encode(texts)
    cold_s = time.perf_counter() - t0
    half = sorted(rng.permutation(len(texts))[: len(texts) // 2].tolist())
    with tempfile.TemporaryDirectory() as cache:
        cached = CachedEncoder(enc, cache)
        cached.encode([texts[i] for i in half])
        warm = cached.encode(texts)
    rest = np.setdiff1d(np.arange(len(texts)), half)
    alone_idx = rng.choice(len(texts), min(args.alone, len(texts)), replace=False)
    alone = np.stack([enc.encode([texts[i]])[0] for i in alone_idx])

    # Without padding the batch would not matter: texts of one token length, embedded all
    # together against one and three at a time (the fix the docs name, checked).
    by_length: dict[int, list[str]] = {}
    for t in texts:
        by_length.setdefault(len(enc.model.tokenizer(t, truncation=True)["input_ids"]), []).append(t)
    same = [g[:6] for g in by_length.values() if len(g) >= 6][:10]

    def differ(a: np.ndarray, b: np.ndarray) -> str:
        d = np.abs(a - b).max(axis=1)
        return f"{int((d > 0).sum())} of {len(d)} | {d.max():.1e}"

    qv = enc.encode(list(queries["text"]))
    s_cold, s_warm = qv @ cold.T, qv @ warm.T
    top_cold = np.argsort(-s_cold, axis=1, kind="stable")[:, :10]
    top_warm = np.argsort(-s_warm, axis=1, kind="stable")[:, :10]
    top11 = -np.sort(-s_cold, axis=1)[:, :11]
    print(f"{len(texts)} documents of {args.data.name}, {len(qv)} test queries; {numerics.cpu_vendor()}, MKL branch {numerics.MKL_BRANCH}; "
          f"cold pass {cold_s:.1f} s\n")  # fmt: skip
    print("| against one cold pass | vectors that differ | max abs difference |")
    print("|---|---:|---:|")
    print(f"| warm cache, half embedded before | {differ(warm[rest], cold[rest])} |")
    print(f"| one document per batch | {differ(alone, cold[alone_idx])} |")
    if same:
        together = np.concatenate([enc.encode(g) for g in same])
        one = np.stack([enc.encode([t])[0] for g in same for t in g])
        three = np.concatenate([enc.encode(g[i : i + 3]) for g in same for i in (0, 3)])
        print(f"| one token length ({len(same)} lengths × 6 texts), one per batch | {differ(one, together)} |")
        print(f"| one token length, three per batch | {differ(three, together)} |")
    print(f"\ndense top-10 changed for {int((top_cold != top_warm).any(axis=1).sum())} of {len(qv)} queries; "
          f"largest score difference {np.abs(s_cold - s_warm).max():.1e}; "
          f"smallest gap between adjacent scores in a top 11 {np.diff(-top11, axis=1).min():.1e}")  # fmt: skip


if __name__ == "__main__":
    main()
