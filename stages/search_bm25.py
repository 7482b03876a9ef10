"""Stage search_bm25: the BM25 top-k chunks of every evaluation query (the search stage's twin).

Pyserini indexes the chunk texts with the project's BM25 params (``retrieve.k1``, ``retrieve.b``
of the params file given, ``--params``: a paper with its own values names its own file) and
searches the queries of a (sampled) retrieval folder; the best k chunks per query are written
with their documents, best first, in the search stage's table (CHUNK_HITS), so the same
evaluate stage scores either. k is the largest of the paper's sample's ``ks``. A stage of its
own, not an option of ``search``: it reads no vectors and no ``embed.*`` param, so changing the
embedder re-runs no BM25 search. ``--report`` writes the k1 and b used, k and the counts searched.
"""

import logging
from pathlib import Path

import pandas as pd

from biochunk import cli, experiments, params
from biochunk.io import CHUNK_HITS, CHUNKS, read_table, scratch_dir, write_json, write_table
from biochunk.retrieval import collection
from biochunk.retrieval.bm25 import bm25_run

log = logging.getLogger("search_bm25")


def main() -> None:
    ap = cli.ArgumentParser(description=__doc__)
    ap.add_argument("--data", required=True, type=Path, help="retrieval folder whose queries are searched")
    ap.add_argument("--chunks", required=True, type=Path, help="chunks (Parquet, CHUNKS): their texts are indexed")
    ap.add_argument("--paper", required=True, type=Path, help="the paper's params file (k = max of the sample's ks)")
    ap.add_argument("--sample", help="which of the paper's samples; default: its only one")
    ap.add_argument("--out", required=True, type=Path, help="chunk hits (Parquet, CHUNK_HITS)")
    ap.add_argument("--report", type=Path, help="also write k1, b, k and the queries and chunks searched here (JSON)")
    ap.add_argument("--params", default="params.yaml")
    args = ap.parse_args()
    k = max(experiments.load(args.paper).sample_named(args.sample).ks)
    rp = params.section("retrieve", args.params)
    queries = collection.load(args.data, "retrieval").eval_queries()
    chunks = read_table(args.chunks, CHUNKS)
    doc_of = dict(zip(chunks["chunk_id"], chunks["doc_id"]))
    # The Lucene index is a means, not a result: built in a scratch folder, gone after the search
    # (a killed run's is removed by the next).
    with scratch_dir("bm25-") as tmp:
        run = bm25_run(
            chunks["chunk_id"].tolist(), chunks["text"].tolist(), queries["text"].tolist(),
            queries["query_id"].astype(str).tolist(), k, tmp / "index", rp.k1, rp.b,
        )  # fmt: skip
    rows = [(q, r, c, doc_of[c], s) for q, hits in run.items() for r, (c, s) in enumerate(hits, 1)]
    write_table(pd.DataFrame(rows, columns=CHUNK_HITS.names), args.out, CHUNK_HITS)
    if args.report is not None:
        write_json({"k1": rp.k1, "b": rp.b, "k": k, "queries": len(queries), "chunks": len(chunks)}, args.report)
    log.info("BM25 (k1 %g, b %g): %d queries x top %d of %d chunks", rp.k1, rp.b, len(queries), k, len(chunks))


if __name__ == "__main__":
    cli.run(main)
