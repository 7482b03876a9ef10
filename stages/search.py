"""Stage search: the dense top-k chunks of every evaluation query (the one dense search).

The queries of a (sampled) retrieval folder are embedded with ``embed.*``, the chunk vectors
of the embed stage are indexed (``retrieve.index``; faiss-gpu or torch on CUDA where
``retrieve.use_gpu`` allows), and the best k chunks per query are written with their
documents, best first: k is the largest of the paper's ``sample.ks``, so every cut-off that
evaluate scores is there.
"""

import logging
from pathlib import Path

import pandas as pd

from biochunk import cli, experiments, models, params, vectors
from biochunk.embedding import SentenceEncoder
from biochunk.errors import UserError
from biochunk.io import CHUNK_HITS, CHUNKS, read_table, write_table
from biochunk.retrieval import collection
from biochunk.retrieval.dense import dense_run

log = logging.getLogger("search")


def main() -> None:
    ap = cli.ArgumentParser(description=__doc__)
    ap.add_argument("--data", required=True, type=Path, help="retrieval folder whose queries are searched")
    ap.add_argument("--chunks", required=True, type=Path, help="chunks (Parquet, CHUNKS)")
    ap.add_argument("--embeddings", required=True, type=Path, help="the embed stage's folder (vectors.parquet)")
    ap.add_argument("--paper", required=True, type=Path, help="the paper's params file (k = max of sample.ks)")
    ap.add_argument("--sample", help="which of the paper's samples; default: its only one")
    ap.add_argument("--out", required=True, type=Path, help="chunk hits (Parquet, CHUNK_HITS)")
    ap.add_argument("--params", default="params.yaml")
    args = ap.parse_args()
    k = max(experiments.load(args.paper).sample_named(args.sample).ks)
    ep = params.section("embed", args.params)
    rp = params.section("retrieve", args.params)
    models.require([(ep.model, "embed.model")])
    coll = collection.load(args.data, "retrieval")
    queries = coll.eval_queries()
    ids, vecs = vectors.read(args.embeddings / "vectors.parquet", "chunk")
    doc_of = dict(zip(*(read_table(args.chunks, CHUNKS)[c] for c in ("chunk_id", "doc_id"))))
    if set(ids) != set(doc_of):
        raise UserError(f"--embeddings {args.embeddings}: its chunk ids are not those of --chunks {args.chunks}; re-run embed")
    qvecs = SentenceEncoder(ep.model, ep.batch_size, ep.device).encode(queries["text"].tolist())
    run = dense_run(vecs, ids, qvecs, queries["query_id"].astype(str).tolist(), k, rp.index, rp.use_gpu)
    rows = [(q, r, c, doc_of[c], s) for q, hits in run.items() for r, (c, s) in enumerate(hits, 1)]
    write_table(pd.DataFrame(rows, columns=CHUNK_HITS.names), args.out, CHUNK_HITS)
    log.info("%d queries x top %d of %d chunks", len(queries), k, len(ids))


if __name__ == "__main__":
    cli.run(main)
