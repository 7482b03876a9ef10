"""Compare every chunk method on your own corpus and write one HTML report (docs/your-corpus.md).

    python stages/compare.py --corpus path/to/folder [--out build/compare/<name>]
    python stages/compare.py --data data/local/<name> [--out ...]   (a corpus convert_local converted)

As DVC stages (``data.local: {name: path}``), ``convert_local@<name>`` converts the corpus (its
path a dependency, so an edited document re-runs both) and ``compare@<name>`` reads the
converted folder (``--data``), so a changed chunk or retrieval param re-runs the comparison
only. Where the corpus has train judgements, ``compare_reranker@<name>`` trains the reranker
once and ``compare@<name>`` loads it (``--reranker``): a chunk param change does not train it
again (about a third of compare's time on a 500-document SciFact sample). The metrics land in
``metrics/compare-<name>.json``, each question's nDCG@10 in
``metrics/compare-<name>-items.parquet`` (``--items``, ITEM_SCORES), so
``scripts/metrics_diff.py`` pairs two runs' changes over the same questions.

``--corpus``: a folder of .txt/.md/.jsonl/.pdf/.html documents (with an optional
questions.jsonl), a BEIR folder (corpus.jsonl, queries.jsonl, qrels/*.tsv) or a SQuAD-format
.json file. Every method of ``chunk_docs.methods`` (or ``--methods``) is measured: chunk sizes,
answers cut by chunk boundaries (where there are answers), and BM25 / dense / hybrid retrieval
with nDCG@10 intervals (where there are questions). Chunk settings are ``chunk.*`` with the
``retrieve.chunk`` overrides, retrieval settings ``retrieve.*``, the encoder ``embed.*``.

Writes, all at once (nothing when the input is bad): ``report.html``, ``metrics.json`` (with each
method's settings and the sampled questions),
``chunks.parquet`` (CHUNKS), ``runs.parquet`` (RUNS, where there are questions), ``data/``
(with ``--corpus``: the converted corpus with its report.json) and ``.biochunk-output`` (the
marker that lets the next run replace the folder). Flags, output paths and ``--data``'s
report.json are checked before any work: an ``--out``
or ``--metrics`` that could destroy what compare did not write (the working directory, the
repository, the corpus, a folder without the marker, a file compare did not write) is refused.
"""

import argparse
import json
import logging
import math
import shutil
from pathlib import Path
from typing import Any

import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq

from biochunk import cli, models, params
from biochunk.chunking import get, models_used
from biochunk.chunking.runs import MethodRun
from biochunk.compute import Engine
from biochunk.datasets.local import KINDS, convert_local, converted, dataset_name
from biochunk.embedding import MemoEncoder
from biochunk.evaluation import corpus_compare as compare
from biochunk.evaluation.corpus_report import render
from biochunk.generation.rewrite import Rewriter
from biochunk.errors import UserError
from biochunk.io import CHUNKS, ITEM_SCORES, RUNS, atomic_path, check_output, scratch_dir, write_json, write_table
from biochunk.partitions import EngineEncoder
from biochunk.scoring import crossencoder
from biochunk.retrieval.experiment import RETRIEVERS

# Per method, to timing.json beside metrics.json, with the reranker's training seconds.
TIMING = ("seconds", "mb_per_s", "chunks_per_s")

log = logging.getLogger("compare")
# Named in the marker of --out folders: a folder holding it may be replaced by the next run.
OWNER = "compare"
# Read only where compare converts the corpus itself (--corpus, the one command): the DVC
# stage reads convert_local's folder (--data), whose stage declares convert.skip_malformed, so
# a change to it re-runs compare only if the converted tables change (scripts/stage_deps.py).
# train_reranker is read only where compare trains the reranker itself: not with --reranker
# (the DVC stage loads what compare_reranker trained, so a reranker param re-runs that stage).
SECTION_FLAGS = {"convert": "--corpus", "train_reranker": "not --reranker"}


def check_flags(args: argparse.Namespace) -> tuple[Path, Path | None, Path | None]:
    """--out, --metrics and --items as paths, once every flag is known to be usable (before any work)."""
    lows = (("--samples", args.samples, 0), ("--bootstrap", args.bootstrap, 0), ("--max-documents", args.max_documents, 1))
    for flag, value, low in lows:
        if value is not None and value < low:
            hint = " (leave it out for every document)" if flag == "--max-documents" else ""
            raise UserError(f"{flag} {value}: must be at least {low}{hint}")
    if args.out is not None:
        out_arg = args.out
    else:  # named after the corpus
        name = dataset_name(args.corpus) if args.corpus is not None else converted(args.data)["dataset"]
        out_arg = Path("build/compare") / name
    # An output over or inside the corpus would replace documents (or add to them); one
    # holding the corpus would delete it with the old output.
    spare = {"the corpus": args.corpus} if args.corpus is not None else {"--data": args.data}
    out = check_output(out_arg, "--out", owner=OWNER, directory=True, spare=spare)
    metrics = items = None
    # Neither in --out: that folder is replaced whole, and holds its own metrics.json.
    if args.metrics is not None:
        metrics = check_output(args.metrics, "--metrics", directory=False, spare={**spare, "--out": out_arg})
        if metrics.resolve().is_file() and not _compare_metrics(metrics):
            raise UserError(f"--metrics {args.metrics!r} is an existing file that compare did not write; name a new .json file")
    if args.items is not None:
        items = check_output(args.items, "--items", directory=False, spare={**spare, "--out": out_arg})
        if metrics is not None and items.resolve() == metrics.resolve():
            raise UserError(f"--items {args.items!r} is the --metrics file; name a .parquet file of its own")
        if items.resolve().is_file() and not _compare_items(items):
            raise UserError(f"--items {args.items!r} is an existing file that compare did not write; name a new .parquet file")
    return out, metrics, items


def _reranker_report(folder: Path, corpus: str) -> dict[str, Any]:
    """report.json of compare_reranker's folder, checked before any work: it exists, and it was
    trained on the corpus compared (a reranker of another corpus would be scored as this one's)."""
    fix = "name the folder stages/compare_reranker.py wrote for this corpus, or leave --reranker out to train one here"
    try:
        report: Any = json.loads((folder / crossencoder.REPORT_FILE).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        raise UserError(f"--reranker {str(folder)!r}: no readable {crossencoder.REPORT_FILE} there; {fix}") from None
    if not isinstance(report, dict) or not {"corpus", "reranking", "max_length"} <= report.keys():
        raise UserError(f"--reranker {str(folder)!r}: not a compare_reranker output (its report names no corpus); {fix}")
    if report["corpus"] != corpus:
        trained_on = f"was trained on {report['corpus']!r}, not on the corpus compared, {corpus!r}"
        raise UserError(f"--reranker {str(folder)!r} {trained_on}; {fix}")
    return report


def _defined(v: Any) -> bool:
    # Undefined values (no answers, no resamples) are NaN or None, depending on where they come from.
    return v is not None and not math.isnan(v)


def _compare_metrics(path: Path) -> bool:
    # A file --metrics may replace: one that a previous compare wrote (its top-level keys).
    try:
        data: Any = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return False
    return isinstance(data, dict) and {"corpus", "sizes", "ranking"} <= data.keys()


def _compare_items(path: Path) -> bool:
    # A file --items may replace: per-question scores that a previous compare wrote.
    try:
        table = pq.read_table(path)
    except (OSError, ValueError, pa.ArrowException):
        return False
    if table.schema.names != ITEM_SCORES.names:
        return False
    return all(str(m).startswith(("retrieval.", "rerank.")) for m in table.column("metric").unique().to_pylist())


def main() -> None:
    ap = cli.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    source = ap.add_mutually_exclusive_group(required=True)
    source.add_argument("--corpus", type=Path, help="folder of documents, BEIR folder, or SQuAD .json file")
    source.add_argument("--data", type=Path, help="the corpus as stages/convert_local.py converted it (the DVC stage)")
    ap.add_argument("--out", default=None, help="output folder (default: build/compare/<corpus name>)")
    ap.add_argument("--kind", choices=KINDS, default=None, help="--corpus's layout (default: told from the path)")
    ap.add_argument("--methods", nargs="+", default=None, help="chunk methods (default: chunk_docs.methods)")
    ap.add_argument("--retrievers", nargs="+", choices=RETRIEVERS, default=list(RETRIEVERS))
    ap.add_argument("--max-documents", type=int, default=None, help="the first n documents only, for a quick look")
    ap.add_argument("--samples", type=int, default=3, help="questions shown with their top chunks")
    ap.add_argument("--bootstrap", type=int, default=1000, help="bootstrap resamples of the nDCG@10 intervals (0: none)")
    rerank = ap.add_mutually_exclusive_group()
    rerank.add_argument("--no-rerank", action="store_true", help="skip training a reranker even where there are train judgements")
    rerank.add_argument(
        "--reranker", type=Path, default=None,
        help="the reranker stages/compare_reranker.py trained on this corpus (the DVC stage), used instead of training one",
    )  # fmt: skip
    ap.add_argument(
        "--metrics", default=None, help="also write the metrics here (the DVC stage: metrics/compare-<name>.json)"
    )
    ap.add_argument(
        "--items", default=None,
        help="also write each question's nDCG@10 per retriever and method (the DVC stage: metrics/compare-<name>-items.parquet)",
    )  # fmt: skip
    ap.add_argument("--params", default="params.yaml")
    args = ap.parse_args()
    if args.data is not None and args.kind is not None:
        ap.error("--kind is --corpus's: convert_local recorded the layout of --data")
    out, metrics_path, items_path = check_flags(args)
    report_of_data = converted(args.data) if args.data is not None else None  # what convert_local's run returned
    name = report_of_data["dataset"] if report_of_data is not None else dataset_name(args.corpus)
    trained_report = _reranker_report(args.reranker, name) if args.reranker is not None else None
    cp = params.section("chunk", args.params)
    rp = params.section("retrieve", args.params)
    ep = params.section("embed", args.params)
    xp = params.section("compute", args.params)
    dp = params.section("chunk_docs", args.params)
    tp = params.section("train_reranker", args.params)
    # --methods is checked as chunk_docs.methods would be.
    methods = params.section("chunk_docs", data={"chunk_docs": {"methods": args.methods}}).methods if args.methods else dp.methods
    chunk_params = lambda m: rp.chunk_params(cp, m)
    # `dvc exp run -S chunk.threshold=…` re-runs compare even where no method reads the key, or
    # retrieve.chunk replaces it: say so.
    named = "--methods" if args.methods else "chunk_docs.methods"
    # A corpus has no trigger lexicon or relation hierarchy: refuse the methods that read one
    # now, not after the corpus is converted (chunking.build would stop there).
    needs = [m for m in methods if get(m).needs_dataset]
    if needs:
        raise UserError(
            f"{named} lists {', '.join(needs)}, which reads a triple dataset's trigger lexicon and relation hierarchy "
            "(configs/triggers/<dataset>.yaml); a corpus has none: leave it out"
        )
    for line in cp.unread_changes(params.recorded(args.out or ""), methods, named, rp.chunk, "retrieve.chunk"):
        log.warning(line)
    models.require(
        [(ep.model, "embed.model"), *(u for m in methods for u in models_used(chunk_params(m), ep.model))]
        + ([] if args.no_rerank or args.reranker is not None else [(tp.model, "train_reranker.model")])
    )
    unread = [] if args.no_rerank or args.reranker is not None else compare.unread_by_ready(tp)
    if unread:
        log.warning("train_reranker.model %s is a ready cross-encoder, used as it is: %s change nothing", tp.model, ", ".join(unread))

    # A scratch folder tagged with this process: a run killed with SIGKILL leaves it behind
    # and the next run removes it (``scratch_dir``).
    with scratch_dir("compare-") as work:
        if args.corpus is not None:
            data = work / "data"
            # Bad input stops here, before any output; convert.skip_malformed skips and counts it instead.
            vp = params.section("convert", args.params)
            info = convert_local(args.corpus, data, args.kind, skip_malformed=vp.skip_malformed)
        else:  # the convert_local stage did the above
            data, info = args.data, report_of_data
        corpus = compare.load(data, info["task"], args.max_documents)
        corpus.notes[:0] = info.get("notes", [])  # what the conversion did not read, on the page too
        log.info(
            "%s: %d documents, %d questions; methods %s",
            info["dataset"],
            len(corpus.coll.docs),
            len(corpus.coll.qrels),
            ", ".join(methods),
        )
        with Engine(xp) as engine:
            encoder = MemoEncoder(EngineEncoder(engine, ep, xp.partition_rows))
            reranker: Any = None if args.no_rerank else tp
            if trained_report is not None:  # trained by the compare_reranker stage: loaded, not trained again
                off = not trained_report["reranking"]
                # The training's own max_length (a saved MiniLM head keeps it; a ready cross-encoder reads it here).
                ce = None if off else crossencoder.load(str(args.reranker), max_length=trained_report["max_length"])
                # What the stage added for this check and the load stays out of metrics.json, which
                # is byte for byte the one command's (that trains in-process).
                reranker = compare.Trained(ce, {k: v for k, v in trained_report.items() if k not in ("corpus", "max_length")})
            result = compare.run(
                corpus, methods, chunk_params, rp, encoder, args.retrievers, args.samples, args.bootstrap, reranker, Rewriter
            )
        metrics = compare.metrics(result, corpus, {k: info[k] for k in ("dataset", "kind", "task")})
        # What each method cut with, and so how to cut one's own documents the same way: in
        # metrics.json and the report, not in the --metrics copy, where DVC already diffs the params.
        settings = {m: compare.method_settings(chunk_params(m), ep.model) for m in methods}
        runs = [MethodRun(m, result.chunks[m], result.sizes[m]["seconds"], result.sizes[m]["counter"]) for m in methods]
        page = render({**metrics, "settings": settings}, result.samples, runs)
        # Wall time apart from the metrics: the metrics are the same bytes on every run, so
        # `dvc metrics diff` shows what a change did and not how busy the machine was.
        timing = {m: {k: metrics["sizes"][m].pop(k) for k in TIMING if k in metrics["sizes"][m]} for m in metrics["sizes"]}
        report = (metrics.get("rerank") or {}).get("report") or {}
        if "seconds" in report:  # the reranker's training time
            timing["rerank"] = {"seconds": report.pop("seconds")}
        with atomic_path(out, owner=OWNER) as tmp:
            tmp.mkdir(parents=True)
            if args.corpus is not None:  # --data is the convert_local stage's output, not compare's
                shutil.copytree(data, tmp / "data")
            write_table(pd.concat(list(result.chunks.values()), ignore_index=True), tmp / "chunks.parquet", CHUNKS)
            if result.runs is not None:
                write_table(result.runs, tmp / "runs.parquet", RUNS)
            write_json({**metrics, "settings": settings, "samples": result.samples}, tmp / "metrics.json")
            write_json(timing, tmp / "timing.json")
            (tmp / "report.html").write_text(page, encoding="utf-8")
        if metrics_path is not None:
            write_json(metrics, metrics_path)
        if items_path is not None:  # none where there are no questions: an empty table
            write_table(result.items if result.items is not None else pd.DataFrame(columns=ITEM_SCORES.names), items_path, ITEM_SCORES)
    for note in result.notes:  # caveats: what was not read, skipped or truncated
        log.warning("%s", note)
    for r in result.ranking:
        answer = f", answer whole in top chunk {r['answer@1']:.0%}" if _defined(r["answer@1"]) else ""
        interval = f" [{r['ci_low']:.3f}, {r['ci_high']:.3f}]" if _defined(r["ci_low"]) and _defined(r["ci_high"]) else ""
        paired = ""
        if r.get("rank") != 1 and _defined(r.get("vs_best_low")) and _defined(r.get("vs_best_high")):
            verdict = "separable" if r["separable"] else "not separable"
            paired = f", vs best [{r['vs_best_low']:+.3f}, {r['vs_best_high']:+.3f}] {verdict}"
        name = f"{r['method']} (reference)" if r.get("reference") else r["method"]
        log.info("%-17s %s nDCG@10 %.3f%s%s%s", name, r["retriever"], r["ndcg@10"], interval, paired, answer)
    ranked = [r["method"] for r in result.ranking if not r.get("reference")]
    if ranked:
        best = ", ".join(f"{k}={v}" for k, v in settings[ranked[0]].items())
        log.info("best: %s (report.html: how to cut your own documents with it)", best)
    print(f"report: {out / 'report.html'}")


if __name__ == "__main__":
    cli.run(main)
