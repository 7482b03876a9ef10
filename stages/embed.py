"""Stage embed: normalised embeddings of chunks, inputs and relation definitions + a FAISS index.

Every branch embeds its chunks here: the triple branch passes ``--data`` and ``--config``
for its inputs and relation definitions, a paper pipeline only its chunks.

Chunk texts are read partition by partition and embedded on ``compute.engine`` (this process
or a Dask cluster whose workers each load the encoder once); inputs and relation definitions
go the same way, so under Dask this process never loads the model.
"""

import logging
import math
from pathlib import Path

from biochunk import cli, models, params, vectors
from biochunk.compute import Engine, chunked
from biochunk.corpus import inputs, read_triples, relation_definitions
from biochunk.errors import UserError
from biochunk.io import CHUNKS, atomic_path, count_rows, iter_table
from biochunk.partitions import encode_all
from biochunk.retrieval.dense import build_index, save_index

log = logging.getLogger("embed")


def main() -> None:
    ap = cli.ArgumentParser(description=__doc__)
    ap.add_argument("--chunks", required=True, type=Path)
    ap.add_argument("--data", type=Path, help="triple branch: converted dataset folder (train/dev/test.parquet)")
    ap.add_argument("--config", type=Path, help="triple branch: dataset config with relation definitions")
    ap.add_argument("--out", required=True, type=Path, help="output folder: vectors.parquet + chunks.faiss")
    ap.add_argument("--params", default="params.yaml")
    args = ap.parse_args()
    if (args.data is None) != (args.config is None):
        raise UserError("--data and --config go together (the triple branch's inputs and relation definitions); give both or neither")
    p = params.section("embed", args.params)
    xp = params.section("compute", args.params)
    models.require([(p.model, "embed.model")])
    rows = xp.partition_rows
    n_chunks = count_rows(args.chunks, CHUNKS)
    triples = args.data is not None
    sents = inputs(read_triples(args.data)) if triples else None
    rels = relation_definitions(args.config) if triples else {}
    ids: list[str] = []

    def chunk_texts():
        # Only the columns the embedding text is made of; ids are kept for the vectors table.
        for frame in iter_table(args.chunks, rows, ["chunk_id", "text", "metadata"], CHUNKS):
            ids.extend(frame["chunk_id"].tolist())
            yield from vectors.embedding_texts(frame)

    def parts(n: int) -> int:
        return 1 if rows is None else max(1, math.ceil(n / rows))

    with Engine(xp) as engine:
        n_inputs = 0 if sents is None else len(sents)
        log.info("embedding %d chunks, %d inputs, %d relation definitions (%s engine)", n_chunks, n_inputs, len(rels), xp.engine)
        cv = encode_all(engine, p, chunked(chunk_texts(), rows), parts(n_chunks), desc="embed chunks")
        if triples:
            iv = encode_all(engine, p, chunked(sents["sentence"].tolist(), rows), parts(len(sents)), desc="embed inputs")
            rv = encode_all(engine, p, [[f"{name}: {text}" for name, text in rels.items()]], 1, desc="embed relations")
    with atomic_path(args.out) as tmp:
        tmp.mkdir(parents=True)
        frames = [vectors.frame(ids, "chunk", cv)]
        if triples:
            frames += [vectors.frame(sents["id"].tolist(), "input", iv), vectors.frame(list(rels), "relation", rv)]
        vectors.write(frames, cv.shape[1], tmp / "vectors.parquet")
        save_index(build_index(cv), tmp / "chunks.faiss")


if __name__ == "__main__":
    cli.run(main)
