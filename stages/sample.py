"""Stage sample: the part of a converted retrieval dataset that a paper pipeline measures.

The paper's ``sample`` params choose the evaluation queries (the first n by id) and the
search pool (every judged document plus a seeded sample of the rest); the result is itself a
converted retrieval folder (CORPUS, QUERIES, QRELS), so every later stage reads one layout
whatever the sample. ``null`` sizes keep everything: the full test set on a bigger machine.
A QA dataset (COVID-QA, BioASQ) is judged by where its answers lie: its gold spans are
written beside (``gold.parquet``; ``collection.spans``), and the questions left out for want
of one are counted in ``sample.json``.
"""

import logging
from pathlib import Path

from biochunk import cli, experiments
from biochunk.datasets.registry import get_spec
from biochunk.errors import UserError
from biochunk.io import atomic_path, write_json
from biochunk.retrieval import collection

log = logging.getLogger("sample")


def main() -> None:
    ap = cli.ArgumentParser(description=__doc__)
    ap.add_argument("--data", required=True, type=Path, help="converted dataset folder (data/papers/interim/<dataset>)")
    ap.add_argument("--paper", required=True, type=Path, help="the paper's params file (experiments/<paper>/params.yaml)")
    ap.add_argument("--sample", help="which of the paper's samples (its params' samples); default: its only one")
    ap.add_argument("--out", required=True, type=Path, help="output folder: corpus / queries / qrels Parquet + sample.json")
    args = ap.parse_args()
    s = experiments.load(args.paper).sample_named(args.sample)
    task = get_spec(s.dataset).task
    needs = "corpus.parquet" if task == "retrieval" else {"covidqa": "documents.parquet"}.get(s.dataset, "snippets.parquet")
    if not (args.data / needs).is_file():
        raise UserError(f"--data {args.data}: no {needs}; convert {s.dataset} first (experiments/datasets)")
    gold, dropped = None, {}
    if task == "retrieval":
        full = collection.load(args.data, task)
    else:
        full, gold, dropped = collection.spans(s.dataset, args.data)
    part = collection.subset(full, s.max_queries, s.max_documents, s.seed)
    with atomic_path(args.out) as tmp:
        tmp.mkdir(parents=True)
        collection.write(part, tmp, gold)
        write_json(
            {"dataset": s.dataset, "queries": len(part.queries), "of_queries": len(full.eval_queries()),
             "documents": len(part.docs), "of_documents": len(full.docs), "seed": s.seed,
             **({"left out": dropped} if dropped else {})},
            tmp / "sample.json",
        )  # fmt: skip
    log.info("%s: %d of %d queries, %d of %d documents", s.dataset, len(part.queries), len(full.eval_queries()), len(part.docs), len(full.docs))


if __name__ == "__main__":
    cli.run(main)
