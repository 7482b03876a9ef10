"""Chunking speed: the project's chunkers against semchunk, chonkie and LangChain, same corpus, same process.

    python benchmarks/chunking_speed.py [--mirror ../shared/datasets] [--passes 3] [--semantic-docs 20]

Needs requirements-bench.txt. Prints Markdown tables (nothing here is a test):

1. Recursive splitting of the 122 PLOS articles (body text as the ``jats`` converter
   builds it: section titles as lines, blocks joined by blank lines), bounded at
   ~1,000 characters and at 256 all-MiniLM-L6-v2 tokens: MB/s (UTF-8 bytes) and
   chunks/s, median of ``--passes`` passes after a warm-up pass; how many chunks'
   offsets are exact (``text[start:end] == chunk text``); for the token bound, how
   many chunks tokenise (on their own, as the embedder sees them) to more than 256.
   Token counters are built afresh for every pass, so every pass pays for its
   tokenisation (no library keeps a cache from the previous pass).
2. Semantic chunkers on ``--semantic-docs`` COVID-QA articles: the chunker's time
   over one ``Encoder.encode`` pass over the units it embeds (sentences, or clauses
   for adaptive with ``chunk.unit: clause``), each measured right after the other.
"""

from __future__ import annotations

import argparse
import dataclasses
import gc
import logging
import os
import platform
import statistics
import tempfile
import time
from pathlib import Path
from typing import Callable

from biochunk.chunking.peers import Run, Spans, chonkie_recursive, langchain, semchunk_chunker

from biochunk.chunking import build
from biochunk.chunking.adaptive import UNITS
from biochunk.chunking.recursive import RecursiveChunker
from biochunk.datasets.convert import convert
from biochunk.datasets.registry import get_spec
from biochunk.embedding import SentenceEncoder
from biochunk.io import DOCUMENTS, read_table
from biochunk.params import defaults
from biochunk.text.counting import count_chars
from biochunk.text.segment import sentence_spans
from biochunk.text.tokens import EmbedderCounter, embedder_counter

os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")  # one process, as every library is used here
ROOT = Path(__file__).resolve().parents[1]
BUDGET = 256  # MiniLM tokens
SIZE, OVERLAP = 1000, 100  # characters (LangChain's and our defaults)
SEMANTIC = ("adaptive", "percentile", "stddev", "interquartile", "gradient", "structural")


def documents(mirror: Path, dataset: str) -> list[str]:
    """The dataset's DOCUMENTS texts, converted from the mirror's raw files."""
    spec = get_spec(dataset)
    with tempfile.TemporaryDirectory() as tmp:
        convert(spec, mirror / spec.mirror_dir, Path(tmp) / "out")
        return read_table(Path(tmp) / "out" / "documents.parquet", DOCUMENTS)["text"].tolist()


# -- the chunkers -------------------------------------------------------------------------


def ours(make: Callable[[], RecursiveChunker]) -> Run:
    def run(texts: list[str]) -> list[Spans]:
        r = make()
        return [[(c.start, c.end, c.text) for c in r.chunk(t)] for t in texts]

    return run


# -- measuring ----------------------------------------------------------------------------


@dataclasses.dataclass
class Row:
    name: str
    mb_s: float
    chunks_s: float
    chunks: int
    exact: int
    over: int | None = None


def measure(name: str, run: Run, texts: list[str], passes: int, check: Callable[[str], int] | None = None) -> Row:
    megabytes = sum(len(t.encode("utf-8")) for t in texts) / 1e6
    out = run(texts)  # warm-up (imports, first calls)
    times = []
    for _ in range(passes):
        out = None
        gc.collect()
        t0 = time.perf_counter()
        out = run(texts)
        times.append(time.perf_counter() - t0)
    t = statistics.median(times)
    n = sum(len(o) for o in out)
    exact = sum(text[s:e] == k for text, o in zip(texts, out) for s, e, k in o)
    over = None if check is None else sum(check(k) > BUDGET for o in out for _, _, k in o)
    row = Row(name, megabytes / t, n / t, n, exact, over)
    logging.info("%s: %.2f MB/s, %d chunks", name, row.mb_s, n)
    return row


def table(title: str, rows: list[Row]) -> str:
    over = any(r.over is not None for r in rows)
    head = f"| {title} | MB/s | chunks/s | chunks | offsets exact |" + (f" over {BUDGET} tokens |" if over else "")
    lines = [head, "|---|---:|---:|---:|---:|" + ("---:|" if over else "")]
    for r in rows:
        cells = f"| {r.name} | {r.mb_s:.2f} | {r.chunks_s:,.0f} | {r.chunks:,} | {r.exact:,} of {r.chunks:,} |"
        lines.append(cells + (f" {r.over:,} |" if over else ""))
    return "\n".join(lines)


def semantic_ratios(texts: list[str], model: str, batch_size: int) -> str:
    """Chunker time over the time of one encode pass over its units, method by method."""
    encoder = SentenceEncoder(model, batch_size)
    encoder.encode(["Warm-up sentence."])
    lines = ["| chunker | units | encode pass (s) | chunker (s) | ratio |", "|---|---:|---:|---:|---:|"]
    for method in SEMANTIC:
        params = defaults("chunk", method=method)
        segment = UNITS[params.unit] if method == "adaptive" else sentence_spans
        units = [t[s:e] for t in texts for s, e in segment(t)]
        t0 = time.perf_counter()
        encoder.encode(units)
        t_encode = time.perf_counter() - t0
        chunker = build(params, encoder)
        t0 = time.perf_counter()
        chunker.chunk_batch(texts)
        t_chunk = time.perf_counter() - t0
        kind = f"{len(units):,} {'clauses' if segment is not sentence_spans else 'sentences'}"
        lines.append(f"| {method} | {kind} | {t_encode:.1f} | {t_chunk:.1f} | {t_chunk / t_encode:.3f} |")
        logging.info("%s: ratio %.3f", method, t_chunk / t_encode)
    return "\n".join(lines)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--mirror", type=Path, default=ROOT.parent / "shared" / "datasets")
    ap.add_argument("--passes", type=int, default=3)
    ap.add_argument("--semantic-docs", type=int, default=20, help="COVID-QA articles for the semantic chunkers (0: skip)")
    ap.add_argument("--model", default="minilm")
    args = ap.parse_args()
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(message)s", datefmt="%H:%M:%S")

    plos = documents(args.mirror, "plos")
    base = embedder_counter(args.model)
    tokenizer = base.tokenizer  # truncation and padding already switched off by the counter

    def fresh_counter() -> EmbedderCounter:
        return EmbedderCounter(tokenizer, args.model)  # an empty word cache

    def standalone() -> Callable[[str], int]:
        counter = fresh_counter()
        return lambda t: counter(t)  # a plain function: every span is tokenised on its own

    chars = [
        measure("ours recursive, counter words", ours(lambda: RecursiveChunker(SIZE, OVERLAP)), plos, args.passes),
        measure("ours recursive, counter chars", ours(lambda: RecursiveChunker(SIZE, OVERLAP, counter=count_chars)), plos, args.passes),
        measure("chonkie RecursiveChunker", chonkie_recursive(SIZE), plos, args.passes),
        measure("semchunk", semchunk_chunker(SIZE, lambda: len), plos, args.passes),
        measure(f"LangChain RecursiveCharacterTextSplitter {SIZE}/{OVERLAP}", langchain(SIZE, OVERLAP, lambda: len), plos, args.passes),
    ]
    unbounded = 10**9  # no character bound: tokens alone decide
    tokens = [
        measure(
            "ours recursive, counter embedder (word table)",
            ours(lambda: RecursiveChunker(unbounded, 0, counter=fresh_counter(), max_tokens=BUDGET)),
            plos, args.passes, base,
        ),
        measure(
            "ours recursive, each span tokenised on its own",
            ours(lambda: RecursiveChunker(unbounded, 0, counter=standalone(), max_tokens=BUDGET)),
            plos, args.passes, base,
        ),
        measure("chonkie RecursiveChunker", chonkie_recursive(BUDGET, tokenizer), plos, args.passes, base),
        measure("semchunk", semchunk_chunker(BUDGET, fresh_counter), plos, args.passes, base),
        measure(f"LangChain RecursiveCharacterTextSplitter {BUDGET}/0", langchain(BUDGET, 0, fresh_counter), plos, args.passes, base),
    ]
    megabytes = sum(len(t.encode("utf-8")) for t in plos) / 1e6
    encode_s = []  # what tokenising every document once (offsets included) costs by itself
    for _ in range(args.passes):
        gc.collect()
        t0 = time.perf_counter()
        for t in plos:
            tokenizer.encode(t, add_special_tokens=False).offsets
        encode_s.append(time.perf_counter() - t0)
    print(f"\nCorpus: {len(plos)} PLOS articles, {megabytes:.2f} MB UTF-8; {os.cpu_count()} CPUs, "
          f"Python {platform.python_version()}; median of {args.passes} passes after a warm-up.\n")  # fmt: skip
    print(table(f"~{SIZE:,} characters", chars) + "\n")
    print(table(f"{BUDGET} MiniLM tokens", tokens) + "\n")
    print(f"One tokenizer.encode pass over every document, offsets included (no chunking): "
          f"{megabytes / statistics.median(encode_s):.2f} MB/s\n")  # fmt: skip
    if args.semantic_docs:
        covid = documents(args.mirror, "covidqa")[: args.semantic_docs]
        print(f"Semantic chunkers on {len(covid)} COVID-QA articles ({args.model}, batch 64):\n")
        print(semantic_ratios(covid, args.model, 64))


if __name__ == "__main__":
    main()
