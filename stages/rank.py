"""Stage rank: each train/dev/test input's pool of similar memory chunks, in selection order.

The ``rank.top_n`` chunks most similar to the query (FAISS) form the pool; ``rank.selection``
orders it (bias: slot 2 for the best proposition; mixed; cosine); the first ``rank.top_k`` rows
are what train_scorer re-orders for the generator. The whole pool is written so that the
scorer trains on it and evaluate can report hit@k along it.
"""

import logging
from pathlib import Path

import numpy as np

from biochunk import cli, params, vectors
from biochunk.corpus import inputs, read_triples
from biochunk.errors import UserError
from biochunk.io import CHUNKS, RANKINGS, read_table, write_table
from biochunk.retrieval.dense import load_index
from biochunk.retrieval.rank import pool_selector, rank_inputs, relation_queries

log = logging.getLogger("rank")


def main() -> None:
    ap = cli.ArgumentParser(description=__doc__)
    ap.add_argument("--chunks", required=True, type=Path)
    ap.add_argument("--data", required=True, type=Path, help="converted dataset folder")
    ap.add_argument("--embeddings", required=True, type=Path, help="embed stage folder")
    ap.add_argument("--out", required=True, type=Path, help="rankings.parquet")
    ap.add_argument("--params", default="params.yaml")
    args = ap.parse_args()
    p = params.section("rank", args.params)
    chunks = read_table(args.chunks, CHUNKS)
    chunk_ids, _ = vectors.read(args.embeddings / "vectors.parquet", "chunk")
    if chunk_ids != chunks["chunk_id"].astype(str).tolist():
        raise UserError(f"{args.embeddings}: chunk vectors are out of step with {args.chunks}; re-run `dvc repro` (embed)")
    triples = read_triples(args.data)
    sents = inputs(triples)
    input_ids, input_vecs = vectors.read(args.embeddings / "vectors.parquet", "input")
    pos = {i: n for n, i in enumerate(input_ids)}
    q = input_vecs[[pos[i] for i in sents["id"]]] if len(sents) else np.zeros((0, 1), np.float32)
    if p.query == "relation":
        gold = triples.groupby("id")["relation"].agg(set).to_dict()
        rel_ids, rel_vecs = vectors.read(args.embeddings / "vectors.parquet", "relation")
        q, fell_back = relation_queries(sents["id"].astype(str).tolist(), q, gold, rel_ids, rel_vecs)
        log.warning("rank.query=relation is an oracle: test inputs are ranked by their gold relations' definitions "
                    "(%d inputs without a defined relation kept the sentence)", fell_back)
    index = load_index(args.embeddings / "chunks.faiss", p.use_gpu)
    selector = pool_selector(chunks["metadata"].tolist(), p.selection, p.top_n)
    if selector is None and p.selection != "cosine":
        log.warning("rank.selection=%s has no effect here: it needs the hybrid chunker's metadata (chunk.method=hybrid); "
                    "these chunks keep the cosine order", p.selection)
    docs = chunks["doc_id"].astype(str).tolist()
    depth = max(p.top_k, p.top_n)
    df = rank_inputs(index, sents, q, chunk_ids, docs, depth, selector, p.max_per_doc)
    write_table(df, args.out, RANKINGS)
    log.info("ranked %d inputs: pool of %d of %d chunks, top %d passed on", len(sents), depth, len(chunk_ids), p.top_k)


if __name__ == "__main__":
    cli.run(main)
