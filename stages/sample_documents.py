"""Stage sample_documents: a seeded set of whole articles of a sample, and every question about them.

The sample stage draws queries first (the first n by id, and a pool of their judged documents);
a study whose cost grows with the documents chunked (a generator that rewrites every sentence,
or titles every chunk) draws documents instead, out of a sample already drawn (``--data``: the
sample stage's folder). The paper's ``samples.<name>`` reads the other way round here:
``max_documents`` is a seeded draw of whole documents and ``max_queries`` the first n by id of
the questions judged on one of them (``retrieval.draws.documents_first``). The output is the
sample stage's layout (CORPUS, QUERIES, QRELS, the gold spans of a QA sample, and
``sample.json``, which says ``"draw": "documents"``), so every later stage reads it alike.
"""

import logging
from pathlib import Path

from biochunk import cli, experiments
from biochunk.errors import UserError
from biochunk.io import atomic_path, read_json, write_json
from biochunk.retrieval import collection
from biochunk.retrieval.draws import documents_first

log = logging.getLogger("sample_documents")


def main() -> None:
    ap = cli.ArgumentParser(description=__doc__)
    ap.add_argument("--data", required=True, type=Path, help="the sample stage's folder the documents are drawn from")
    ap.add_argument("--paper", required=True, type=Path, help="the paper's params file (experiments/<paper>/params.yaml)")
    ap.add_argument("--sample", help="which of the paper's samples (its params' samples); default: its only one")
    ap.add_argument("--out", required=True, type=Path, help="output folder: corpus / queries / qrels Parquet + sample.json")
    args = ap.parse_args()
    paper = experiments.load(args.paper)
    s, name = paper.sample_named(args.sample), args.sample or next(iter(paper.samples))
    if not (args.data / "sample.json").is_file():
        raise UserError(f"--data {args.data}: no sample.json; give the sample stage's output folder")
    source = read_json(args.data / "sample.json")
    if source["dataset"] != s.dataset:
        raise UserError(f"--data {args.data}: a sample of {source['dataset']}, but samples.{name}.dataset is {s.dataset}")
    full = collection.load(args.data, "retrieval")
    part = documents_first(full, s.max_queries, s.max_documents, s.seed)
    with atomic_path(args.out) as tmp:
        tmp.mkdir(parents=True)
        collection.write(part, tmp, collection.read_gold(args.data))
        write_json(
            {"dataset": s.dataset, "draw": "documents", "queries": len(part.queries), "of_queries": len(full.eval_queries()),
             "documents": len(part.docs), "of_documents": len(full.docs), "seed": s.seed,
             **({"left out": source["left out"]} if "left out" in source else {})},
            tmp / "sample.json",
        )  # fmt: skip
    log.info("%s: %d of %d documents, %d of %d queries about them", s.dataset, len(part.docs), len(full.docs), len(part.queries), len(full.eval_queries()))


if __name__ == "__main__":
    cli.run(main)
