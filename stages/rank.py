"""Stage rank: the top-k chunks of the memory for each train/dev/test input, through FAISS."""

import argparse
import logging
from pathlib import Path

import numpy as np

from biochunk import cli, params, vectors
from biochunk.corpus import inputs, read_triples
from biochunk.errors import UserError
from biochunk.io import CHUNKS, RANKINGS, read_table, write_table
from biochunk.retrieval.dense import load_index
from biochunk.retrieval.rank import pool_selector, rank_inputs

log = logging.getLogger("rank")
DIVERSITY_DEPTH = 4  # pool = 4 x top-k when rank.max_per_doc is set


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--chunks", required=True, type=Path)
    ap.add_argument("--data", required=True, type=Path, help="converted dataset folder")
    ap.add_argument("--embeddings", required=True, type=Path, help="embed stage folder")
    ap.add_argument("--out", required=True, type=Path, help="rankings.parquet")
    ap.add_argument("--params", default="params.yaml")
    args = ap.parse_args()
    p = params.section("rank", args.params)
    cp = params.section("chunk", args.params)
    chunks = read_table(args.chunks, CHUNKS)
    chunk_ids, _ = vectors.read(args.embeddings / "vectors.parquet", "chunk")
    if chunk_ids != chunks["chunk_id"].astype(str).tolist():
        raise UserError(f"{args.embeddings}: chunk vectors are out of step with {args.chunks}; re-run `dvc repro` (embed)")
    sents = inputs(read_triples(args.data))
    input_ids, input_vecs = vectors.read(args.embeddings / "vectors.parquet", "input")
    pos = {i: n for n, i in enumerate(input_ids)}
    q = input_vecs[[pos[i] for i in sents["id"]]] if len(sents) else np.zeros((0, 1), np.float32)
    index = load_index(args.embeddings / "chunks.faiss", p.use_gpu)
    selector = pool_selector(chunks["metadata"].tolist(), cp.ranking, cp.top_n, p.top_k)
    depth = max(p.top_k, cp.top_n) if selector else p.top_k
    # A per-document cap needs a deeper pool to find chunks of other documents.
    depth *= DIVERSITY_DEPTH if p.max_per_doc else 1
    docs = chunks["doc_id"].astype(str).tolist()
    df = rank_inputs(index, sents, q, chunk_ids, docs, p.top_k, selector, depth, p.max_per_doc)
    write_table(df, args.out, RANKINGS)
    log.info("ranked %d inputs (top %d of %d chunks)", len(sents), p.top_k, len(chunk_ids))


if __name__ == "__main__":
    cli.run(main)
