"""Stage chunk: the chunk memory, built from the training split with the selected method."""

import argparse
import logging
from pathlib import Path

import pandas as pd

from biochunk import chunking, cli, models, params
from biochunk.corpus import memory_documents
from biochunk.embedding import Encoder
from biochunk.io import CHUNKS, TRIPLES, atomic_path, read_table, write_json, write_table

log = logging.getLogger("chunk")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--dataset", required=True, help="names configs/triggers|hierarchy/<dataset>.yaml for hybrid")
    ap.add_argument("--train", required=True, type=Path, help="converted training split (Parquet)")
    ap.add_argument("--out", required=True, type=Path, help="output folder: chunks.parquet + report.json")
    ap.add_argument("--params", default="params.yaml")
    args = ap.parse_args()
    cp = params.section("chunk", args.params)
    ep = params.section("embed", args.params)
    models.require(chunking.models_used(cp, ep.model))
    train = read_table(args.train, TRIPLES)
    docs = memory_documents(train)
    cls = chunking.get(cp.method)
    # Building an Encoder loads no weights; the embedder's tokenizer also serves counter: embedder.
    encoder = Encoder(ep.model, ep.batch_size, ep.device) if cls.needs_encoder or cp.counter == "embedder" else None
    chunker = chunking.build(cp, encoder, dataset=args.dataset)
    log.info("chunking %d documents with %s", len(docs), cp.method)
    chunks = chunking.chunk_corpus(docs, chunker)
    df = pd.DataFrame([c.row() for c in chunks], columns=CHUNKS.names)
    empty = sum(1 for d in docs if not d.text.strip())
    with atomic_path(args.out) as tmp:
        tmp.mkdir(parents=True)
        write_table(df, tmp / "chunks.parquet", CHUNKS)
        write_json({"method": cp.method, "documents": len(docs), "documents_empty": empty, "chunks": len(df)}, tmp / "report.json")
    log.info("%d chunks from %d documents", len(df), len(docs))


if __name__ == "__main__":
    cli.run(main)
