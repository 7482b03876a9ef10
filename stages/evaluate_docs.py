"""Stage evaluate_docs: the chunks of every chunk_docs method measured; sizes and cut answers.

Reads what ``chunk_docs`` wrote (the chunks, and its record of the documents it chunked, the
encoder and each method's unit of ``n_tokens``) and the converted dataset it chunked. It
declares no params: it measures these chunks as they were made, whatever params.yaml says now.
Per method: how many chunks, their sizes in the method's own unit, in the embedder's tokens
(one scale for every method) and in characters, and where the dataset has extractive answers
(ANSWERS, COVID-QA) the gold answers that no single chunk holds whole (``evaluation.chunking``).
Also the size table and histograms (``--plots``).

The metrics hold only what the chunks determine, so a re-run writes them byte for byte.
"""

import logging
from pathlib import Path

from biochunk import cli, models
from biochunk.chunking.runs import MethodRun, documents
from biochunk.errors import UserError
from biochunk.evaluation import chunking as evaluation
from biochunk.io import ANSWERS, CHUNKS, DOCUMENTS, atomic_path, read_json, read_table, write_json
from biochunk.text.tokens import embedder_counter

log = logging.getLogger("evaluate_docs")
# evaluation.chunking.method_metrics' wall-time keys: chunk_docs' timing.json has them.
TIMING = ("seconds", "mb_per_s", "chunks_per_s")


def method_runs(chunks_path: Path, runs_path: Path) -> tuple[dict, list[MethodRun]]:
    """chunk_docs' record (``--runs``) and the chunks of each method in the order it ran them,
    once the two files agree."""
    chunks = read_table(chunks_path, CHUNKS)
    record = read_json(runs_path)
    try:
        units = {str(r["method"]): str(r["counter"]) for r in record["methods"]}
        n_docs, model = int(record["documents"]), str(record["embed_model"])
    except (KeyError, TypeError, ValueError) as e:
        raise UserError(f"{runs_path}: not a chunk_docs --runs file ({type(e).__name__}: {e}); re-run chunk_docs") from None
    extra = sorted(set(chunks["method"]) - set(units))
    if extra:
        raise UserError(f"{chunks_path}: chunks of {', '.join(extra)}, which {runs_path} does not list; re-run chunk_docs")
    by_method = chunks.groupby("method", sort=False).indices
    # seconds: NaN, chunk_docs' timing.json has them; method_metrics' timing keys are dropped below.
    runs = [MethodRun(m, chunks.iloc[by_method.get(m, [])].reset_index(drop=True), float("nan"), u) for m, u in units.items()]
    return {"documents": n_docs, "embed_model": model}, runs


def main() -> None:
    ap = cli.ArgumentParser(description=__doc__)
    ap.add_argument("--dataset", required=True)
    ap.add_argument("--data", required=True, type=Path, help="converted dataset folder: documents.parquet [answers.parquet]")
    ap.add_argument("--chunks", required=True, type=Path, help="chunk_docs' chunks of every method (Parquet, CHUNKS)")
    ap.add_argument("--runs", required=True, type=Path, help="chunk_docs' --runs file: documents, encoder, each method's unit")
    ap.add_argument("--metrics", required=True, type=Path, help="counts, sizes and cut answers per method (JSON)")
    ap.add_argument("--plots", required=True, type=Path, help="folder for sizes.csv and sizes.png")
    args = ap.parse_args()
    record, runs = method_runs(args.chunks, args.runs)
    # No params: what to measure with is what chunk_docs chunked with, from its record.
    models.require([(record["embed_model"], "embed.model")])  # its tokenizer: the embedder-token sizes
    docs = documents(read_table(args.data / "documents.parquet", DOCUMENTS), record["documents"])
    has_answers = (args.data / "answers.parquet").exists()
    answers = read_table(args.data / "answers.parquet", ANSWERS) if has_answers else None
    known = {d.doc_id for d in docs}
    stray = sorted({d for r in runs for d in r.chunks["doc_id"]} - known)
    again = "re-run chunk_docs on this dataset"
    if len(docs) != record["documents"]:
        raise UserError(f"{args.runs}: chunk_docs chunked {record['documents']} documents, {args.data} has {len(docs)}; {again}")
    if stray:
        raise UserError(f"{args.chunks}: chunks of document {stray[0]!r}, not among the {len(docs)} of {args.data} that chunk_docs chunked; {again}")  # fmt: skip

    span_counter_of = embedder_counter(record["embed_model"]).for_document  # one scale for every method
    metrics = {}
    for r in runs:
        m = evaluation.method_metrics(r, docs, span_counter_of, answers)
        metrics[r.method] = {k: v for k, v in m.items() if k not in TIMING}
    metrics["corpus"] = {
        "documents": len(docs),
        "megabytes": sum(len(d.text.encode("utf-8")) for d in docs) / 1e6,
        "answers": int(answers["doc_id"].isin(known).sum()) if answers is not None else 0,
    }
    write_json(metrics, args.metrics)
    with atomic_path(args.plots) as tmp:
        tmp.mkdir(parents=True)
        evaluation.sizes_table(runs).to_csv(tmp / "sizes.csv", index=False)
        evaluation.sizes_png(runs, f"{args.dataset}: chunk sizes per method", tmp / "sizes.png")
    for r in runs:
        m = metrics[r.method]
        cut = f", cut answers {m['cut_answer_share']:.1%}" if has_answers else ""
        log.info("%-13s %6d chunks, mean %.0f %s%s", r.method, m["chunks"], m.get("tokens_mean", 0), r.counter, cut)


if __name__ == "__main__":
    cli.run(main)
