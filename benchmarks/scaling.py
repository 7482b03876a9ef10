"""Scaling of chunk and embed over compute.engine: documents vs wall time vs peak RSS.

    python benchmarks/scaling.py [--docs 10000 100000] [--embed-chunks 2000] [--results docs/results]

Prints Markdown tables (nothing here is a test; docs/scale.md shows them) and writes the plot
``<results>/scaling.png`` and the raw rows ``<results>/data/scaling.json``:

1. The chunk stage itself (``stages/chunk.py``, chunk.method recursive, 1,000 characters), run
   as a fresh process per row on a synthetic corpus of ``--docs`` documents: each document is
   eight of the embedded training sentences drawn with a seeded generator (~1.2 kB, abstract
   sized), under a unique id. Rows: today's run (engine local, partition_rows null), local
   streamed by partitions, and Dask LocalClusters of 1 and 2 workers. Peak RSS is sampled
   every 50 ms (psutil) for the stage process and, separately, for the largest process it
   started (a Dask worker).
2. Embedding (all-MiniLM-L6-v2 on the CPU) of ``--embed-chunks`` of those chunks through
   ``biochunk.partitions.encode_all``: local vs Dask 1 and 2 workers, chunks/s after the
   model load (the workers load it once, on their first partition; a warm-up partition pays for it).
   This is the per-worker throughput docs/scale.md's PubMed estimate rests on.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from biochunk import params
from biochunk.io import TRIPLES, read_table, write_table

SENTENCES_PER_DOC = 8
PARTITION_DOCS = 4096  # chunk: documents per partition in the streamed rows
PARTITION_CHUNKS = 256  # embed: chunks per partition

# (label, engine, workers, partition_rows)
CHUNK_RUNS = [
    ("local, unpartitioned (today)", "local", 1, None),
    ("local, streamed", "local", 1, PARTITION_DOCS),
    ("dask, 1 worker", "dask", 1, PARTITION_DOCS),
    ("dask, 2 workers", "dask", 2, PARTITION_DOCS),
]

# Seconds between samples of the resident set of the stage and of every process it started.
# getrusage's ru_maxrss would be simpler, but a Dask worker is forked from the stage before it
# execs, and Linux keeps the maximum across exec: every worker would "peak" at the stage's size.
SAMPLE_S = 0.05


def sentences() -> list[str]:
    rows = [json.loads(line) for line in (ROOT / "biochunk" / "datasets" / "embedded" / "train.jsonl").read_text().splitlines()]
    return sorted({r["SENTENCE"] for r in rows})


def synthetic_train(n: int, path: Path) -> None:
    import pandas as pd

    pool = sentences()
    rng = np.random.default_rng(16)
    picks = rng.integers(0, len(pool), size=(n, SENTENCES_PER_DOC))
    df = pd.DataFrame(
        {
            "id": [f"doc{i}" for i in range(n)],
            "split": "train",
            "sentence": [" ".join(pool[j] for j in row) for row in picks],
            "head": "h",
            "relation": "TREATS",
            "tail": "t",
        }
    )
    write_table(df, path, TRIPLES)


def params_file(path: Path, engine: str, workers: int, rows: int | None) -> None:
    text = (ROOT / "params.yaml").read_text()
    text = text.replace("  method: fixed ", "  method: recursive ")
    text = text.replace("  engine: local ", f"  engine: {engine} ").replace("  workers: 2 ", f"  workers: {workers} ")
    text = text.replace("  partition_rows: null ", f"  partition_rows: {'null' if rows is None else rows} ")
    path.write_text(text)
    assert params.section("compute", path).engine == engine


def run_chunk(train: Path, out: Path, cfg: Path) -> dict:
    import psutil

    t0 = time.perf_counter()
    proc = subprocess.Popen(
        [sys.executable, str(ROOT / "stages" / "chunk.py"), "--dataset", "embedded", "--train", str(train), "--out", str(out), "--params", str(cfg)],
        stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, cwd=ROOT,
    )  # fmt: skip
    stage_peak = worker_peak = 0
    root = psutil.Process(proc.pid)
    while proc.poll() is None:
        try:
            stage_peak = max(stage_peak, root.memory_info().rss)
            for child in root.children(recursive=True):
                worker_peak = max(worker_peak, child.memory_info().rss)
        except psutil.Error:
            pass  # a process ended between listing and reading it
        time.sleep(SAMPLE_S)
    _, err = proc.communicate()
    wall = time.perf_counter() - t0
    if proc.returncode != 0:
        raise SystemExit(err)
    report = json.loads((out / "report.json").read_text())
    return {"wall_s": wall, "stage_rss_mb": stage_peak / 2**20, "worker_rss_mb": worker_peak / 2**20, "chunks": report["chunks"]}


def bench_chunk(doc_counts: list[int], tmp: Path) -> list[dict]:
    rows = []
    for n in doc_counts:
        train = tmp / f"train{n}.parquet"
        synthetic_train(n, train)
        ref = None
        for label, engine, workers, part in CHUNK_RUNS:
            cfg = tmp / "params.yaml"
            params_file(cfg, engine, workers, part)
            out = tmp / f"chunks-{n}-{engine}-{workers}-{part}"
            res = run_chunk(train, out, cfg)
            table = read_table(out / "chunks.parquet")
            if ref is None:
                ref = table
            assert table.drop(columns=["labels"]).equals(ref.drop(columns=["labels"])), f"{label}: chunks differ from today's"
            rows.append({"stage": "chunk", "documents": n, "run": label, **res})
            print(
                f"  chunk {n:>7} docs  {label:<30} {res['wall_s']:7.1f} s  stage {res['stage_rss_mb']:6.0f} MB  workers {res['worker_rss_mb']:6.0f} MB",
                file=sys.stderr,
            )
    return rows


def bench_embed(n_chunks: int, tmp: Path) -> list[dict]:
    from biochunk.compute import Engine, chunked
    from biochunk.partitions import encode_all

    texts = read_table(next(tmp.glob("chunks-*-local-1-None")) / "chunks.parquet")["text"].tolist()[:n_chunks]
    warm = texts[:PARTITION_CHUNKS]
    ep = params.section("embed", data={"embed": {}})
    rows = []
    ref = None
    for label, engine, workers in (("local", "local", 1), ("dask, 1 worker", "dask", 1), ("dask, 2 workers", "dask", 2)):
        xp = params.section(
            "compute", data={"compute": {"engine": engine, "workers": workers, "partition_rows": PARTITION_CHUNKS}}
        )
        with Engine(xp, dashboard=False) as engine_:
            # Warm-up: one partition per worker, so every worker has its model before the clock starts.
            encode_all(engine_, ep, [warm] * workers)
            t0 = time.perf_counter()
            vecs = encode_all(engine_, ep, chunked(texts, PARTITION_CHUNKS))
            wall = time.perf_counter() - t0
        ref = vecs if ref is None else ref
        diff = float(np.abs(vecs - ref).max())
        rows.append(
            {
                "stage": "embed",
                "chunks": len(texts),
                "run": label,
                "wall_s": wall,
                "chunks_per_s": len(texts) / wall,
                "max_abs_diff_vs_local": diff,
            }
        )
        print(
            f"  embed {len(texts)} chunks  {label:<16} {wall:6.1f} s  {len(texts) / wall:6.1f} chunks/s  max |diff| {diff:.1e}",
            file=sys.stderr,
        )
    return rows


def plot(rows: list[dict], path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    chunk = [r for r in rows if r["stage"] == "chunk"]
    fig, (a, b) = plt.subplots(1, 2, figsize=(10, 4))
    for label, *_ in CHUNK_RUNS:
        pts = sorted(
            (r["documents"], r["wall_s"], max(r["stage_rss_mb"], r["worker_rss_mb"])) for r in chunk if r["run"] == label
        )
        a.plot([p[0] for p in pts], [p[1] for p in pts], marker="o", label=label)
        b.plot([p[0] for p in pts], [p[2] for p in pts], marker="o", label=label)
    for ax, y in ((a, "wall time (s)"), (b, "peak RSS of the largest process (MB)")):
        ax.set_xscale("log")
        ax.set_xlabel("documents (~1.2 kB each)")
        ax.set_ylabel(y)
        ax.grid(alpha=0.3)
    b.set_ylim(bottom=0)
    a.legend(fontsize=8)
    fig.suptitle(f"chunk stage (recursive) by compute.engine, {os.cpu_count()} CPU cores")
    fig.tight_layout()
    fig.savefig(path, dpi=120)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--docs", type=int, nargs="+", default=[10_000, 100_000])
    ap.add_argument("--embed-chunks", type=int, default=2000)
    ap.add_argument("--results", type=Path, default=ROOT / "docs" / "results", help="writes scaling.png and data/scaling.json")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as d:
        tmp = Path(d)
        rows = bench_chunk(args.docs, tmp)
        if args.embed_chunks:
            rows += bench_embed(args.embed_chunks, tmp)
    (args.results / "data").mkdir(parents=True, exist_ok=True)
    (args.results / "data" / "scaling.json").write_text(
        json.dumps({"cpu_count": os.cpu_count(), "machine": platform.machine(), "rows": rows}, indent=2) + "\n"
    )
    plot(rows, args.results / "scaling.png")
    print(
        f"Chunk stage, recursive (1,000 characters), synthetic ~1.2 kB documents, {os.cpu_count()} CPU cores; streamed runs: {PARTITION_DOCS} documents per partition.\n"
    )
    print("| documents | run | chunks | wall (s) | peak RSS stage (MB) | peak RSS largest worker (MB) |")
    print("|---:|---|---:|---:|---:|---:|")
    for r in rows:
        if r["stage"] == "chunk":
            worker = f"{r['worker_rss_mb']:.0f}" if r["run"].startswith("dask") else "–"
            print(
                f"| {r['documents']:,} | {r['run']} | {r['chunks']:,} | {r['wall_s']:.1f} | {r['stage_rss_mb']:.0f} | {worker} |"
            )
    print(
        f"\nEmbedding all-MiniLM-L6-v2 (CPU, float32), {PARTITION_CHUNKS} chunks per partition, after each worker's model load.\n"
    )
    print("| chunks | run | wall (s) | chunks/s | max abs diff vs local |")
    print("|---:|---|---:|---:|---:|")
    for r in rows:
        if r["stage"] == "embed":
            print(
                f"| {r['chunks']:,} | {r['run']} | {r['wall_s']:.1f} | {r['chunks_per_s']:.1f} | {r['max_abs_diff_vs_local']:.1e} |"
            )


if __name__ == "__main__":
    main()
