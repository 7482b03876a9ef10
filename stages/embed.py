"""Stage embed: normalised embeddings of chunks, inputs and relation definitions + a FAISS index."""

import argparse
import logging
from pathlib import Path

from biochunk import cli, models, params, vectors
from biochunk.corpus import inputs, read_triples, relation_definitions
from biochunk.embedding import Encoder
from biochunk.io import CHUNKS, atomic_path, read_table
from biochunk.retrieval.dense import build_index, save_index

log = logging.getLogger("embed")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--chunks", required=True, type=Path)
    ap.add_argument("--data", required=True, type=Path, help="converted dataset folder (train/dev/test.parquet)")
    ap.add_argument("--config", required=True, type=Path, help="dataset config with relation definitions")
    ap.add_argument("--out", required=True, type=Path, help="output folder: vectors.parquet + chunks.faiss")
    ap.add_argument("--params", default="params.yaml")
    args = ap.parse_args()
    p = params.section("embed", args.params)
    models.require([(p.model, "embed.model")])
    chunks = read_table(args.chunks, CHUNKS)
    sents = inputs(read_triples(args.data))
    rels = relation_definitions(args.config)
    enc = Encoder(p.model, p.batch_size, p.device)
    log.info("embedding %d chunks, %d inputs, %d relation definitions", len(chunks), len(sents), len(rels))
    cv = enc.encode(vectors.embedding_texts(chunks), progress=True)
    iv = enc.encode(sents["sentence"].tolist(), progress=True)
    rv = enc.encode([f"{name}: {text}" for name, text in rels.items()])
    with atomic_path(args.out) as tmp:
        tmp.mkdir(parents=True)
        frames = [
            vectors.frame(chunks["chunk_id"].tolist(), "chunk", cv),
            vectors.frame(sents["id"].tolist(), "input", iv),
            vectors.frame(list(rels), "relation", rv),
        ]
        vectors.write(frames, enc.dim, tmp / "vectors.parquet")
        save_index(build_index(cv), tmp / "chunks.faiss")


if __name__ == "__main__":
    cli.run(main)
