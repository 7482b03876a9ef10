"""Stage whole_clusters: a ``cluster`` setting's chunks joined into one chunk per cluster.

The cluster chunker writes one chunk per run of consecutive sentences of a cluster, so every
chunk is one range of its document; the clinical study's form of semantic chunking is one
chunk per cluster, its sentences joined in document order (``chunking.cluster.whole_clusters``:
the pieces' offsets in ``metadata["spans"]``, which evaluation reads). A stage of its own
rather than a chunk setting: it reads the cluster run's chunks, so both tables hold the same
clusters, and the chunk stage every paper shares is left as it is.
"""

import logging
from pathlib import Path

from biochunk import cli
from biochunk.chunking.cluster import whole_clusters
from biochunk.errors import UserError
from biochunk.io import CHUNKS, read_table, write_table

log = logging.getLogger("whole_clusters")


def main() -> None:
    ap = cli.ArgumentParser(description=__doc__)
    ap.add_argument("--chunks", required=True, type=Path, help="a cluster setting's chunks (Parquet, CHUNKS)")
    ap.add_argument("--out", required=True, type=Path, help="one chunk per (document, cluster) (Parquet, CHUNKS)")
    args = ap.parse_args()
    chunks = read_table(args.chunks, CHUNKS)
    try:
        joined = whole_clusters(chunks)
    except ValueError as e:
        raise UserError(f"--chunks {args.chunks}: {e}; give the chunks of a setting with method: cluster") from None
    write_table(joined, args.out, CHUNKS)
    log.info("%d runs of clusters -> %d whole clusters over %d documents", len(chunks), len(joined), chunks["doc_id"].nunique())


if __name__ == "__main__":
    cli.run(main)
