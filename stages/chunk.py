"""Stage chunk: the chunk memory, built from the training split with the selected method.

The documents are chunked partition by partition on ``compute.engine`` (this process or a
Dask cluster) and written as they come back, one row group per partition.
"""

import logging
import math
from pathlib import Path

from biochunk import chunking, cli, models, params
from biochunk.compute import Engine, chunked
from biochunk.corpus import memory_documents, stream_memory_documents
from biochunk.io import CHUNKS, TRIPLES, atomic_path, read_table, table_writer, write_json
from biochunk.partitions import chunk_stream

log = logging.getLogger("chunk")


def main() -> None:
    ap = cli.ArgumentParser(description=__doc__)
    ap.add_argument("--dataset", required=True, help="names configs/triggers|hierarchy/<dataset>.yaml for hybrid")
    ap.add_argument("--train", required=True, type=Path, help="converted training split (Parquet)")
    ap.add_argument("--out", required=True, type=Path, help="output folder: chunks.parquet + report.json")
    ap.add_argument("--params", default="params.yaml")
    args = ap.parse_args()
    cp = params.section("chunk", args.params)
    ep = params.section("embed", args.params)
    xp = params.section("compute", args.params)
    # `dvc exp run -S chunk.threshold=0.5` under chunk.method fixed re-runs this stage for nothing: say so.
    for line in cp.unread_changes(params.recorded(args.out)):
        log.warning(line)
    models.require(chunking.models_used(cp, ep.model))
    rows = xp.partition_rows
    # Partitioned, the training split is streamed too (ids adjacent, as converters write them);
    # unpartitioned (or ids scattered), it is read whole, as before compute.* existed.
    streamed = stream_memory_documents(args.train, rows) if rows is not None else None
    if streamed is not None:
        n_docs, docs = streamed
    else:
        docs = memory_documents(read_table(args.train, TRIPLES))
        n_docs = len(docs)
    total = 1 if rows is None else max(1, math.ceil(n_docs / rows))
    log.info("chunking %d documents with %s (%s engine, %d partitions)", n_docs, cp.method, xp.engine, total)
    counts = {"documents_empty": 0}

    def counted(items):
        # The report's count of blank documents, taken as the documents stream past.
        for d in items:
            counts["documents_empty"] += not d.text.strip()
            yield d

    n_chunks = 0
    with atomic_path(args.out) as tmp, Engine(xp) as engine:
        tmp.mkdir(parents=True)
        with table_writer(tmp / "chunks.parquet", CHUNKS) as write:
            for table in chunk_stream(engine, cp, ep, args.dataset, chunked(counted(docs), rows), total):
                write(table)
                n_chunks += table.num_rows
        report = {"method": cp.method, "documents": n_docs, "documents_empty": counts["documents_empty"], "chunks": n_chunks}
        write_json(report, tmp / "report.json")
    log.info("%d chunks from %d documents", n_chunks, n_docs)


if __name__ == "__main__":
    cli.run(main)
