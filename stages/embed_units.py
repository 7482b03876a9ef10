"""Stage embed_units: every sentence of a corpus embedded once, for all the semantic chunkers.

The breakpoint, structural and adaptive chunkers embed a document's sentences (the
biomedical segmenter, ``text.segment.sentence_spans``) and cut where neighbours differ. Every
such setting of a paper pipeline would embed the same sentences again; this stage embeds each
distinct sentence once, on ``compute.engine``, and the chunk stages read the vectors back
(``embedding.VectorLookup``; a unit not found here is embedded there and counted). The vectors
are a DVC output keyed by what the stage read, with the encoder's identity beside them.
"""

import logging
import math
from pathlib import Path

from biochunk import cli, models, params, vectors
from biochunk.compute import Engine, chunked
from biochunk.embedding import SentenceEncoder
from biochunk.io import atomic_path, write_json
from biochunk.partitions import encode_all
from biochunk.retrieval import collection
from biochunk.text.segment import sentence_spans

log = logging.getLogger("embed_units")


def main() -> None:
    ap = cli.ArgumentParser(description=__doc__)
    ap.add_argument("--data", required=True, type=Path, help="retrieval folder whose documents are segmented")
    ap.add_argument("--out", required=True, type=Path, help="output folder: vectors.parquet (kind unit, id = text) + identity.json")
    ap.add_argument("--params", default="params.yaml")
    args = ap.parse_args()
    ep = params.section("embed", args.params)
    xp = params.section("compute", args.params)
    models.require([(ep.model, "embed.model")])
    docs = collection.load(args.data, "retrieval").docs
    units = sorted({t[s:e] for t in docs["text"] for s, e in sentence_spans(t)})
    rows = xp.partition_rows
    with Engine(xp) as engine:
        log.info("%d documents: %d distinct sentences (%s engine)", len(docs), len(units), xp.engine)
        parts = 1 if rows is None else max(1, math.ceil(len(units) / rows))
        vecs = encode_all(engine, ep, chunked(iter(units), rows), parts, desc="embed units")
    with atomic_path(args.out) as tmp:
        tmp.mkdir(parents=True)
        vectors.write([vectors.frame(units, "unit", vecs)], vecs.shape[1], tmp / "vectors.parquet")
        write_json(SentenceEncoder(ep.model, ep.batch_size, ep.device).identity(), tmp / "identity.json")


if __name__ == "__main__":
    cli.run(main)
