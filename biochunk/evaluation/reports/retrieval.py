"""Document retrieval (SciFact, BioASQ): every chunk method under BM25, dense and their RRF hybrid.

The tables of docs/results/retrieval.md, built from the tracked outputs of
``experiments/retrieval`` (``stages/retrieve.py``, one stage per dataset and chunk method and
one per dataset for reranking): ``metrics/papers/retrieval/<dataset>/<method>.json`` (chunk counts) and
``<method>.parquet``, every run's nDCG@10, MAP, MRR@10 and recall@k per judged query
(ITEM_SCORES, metric ``<retriever>/<method>/<measure>``, queries in the same order for every
run), and ``rerank.json`` / ``rerank.parquet``. Means and intervals are computed here from the
per-query scores, so each one can be recomputed from tracked files. A method whose stage has
not run yet is listed with the command that runs it, so the page fills method by method.

This is the project's own experiment (chunk hits mapped to their documents, then standard IR
measures); none of the five papers of ``../shared/papers/`` reports it, so every paper cell is —
and no difference has a published direction. The peer baselines it is checked against
(Anserini's BM25 regression, MiniLM's BEIR figure) are in ``../shared/docs/references.md`` and
are quoted in the page's prose.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Iterable

import numpy as np

from biochunk.errors import UserError
from biochunk.evaluation.papers import (
    Difference, Estimate, Judged, NotRun, PaperTable, Row, mean_ci, paired_delta, read_items, stats_notes,
)  # fmt: skip
from biochunk.io import ITEM_SCORES, atomic_path, read_json, read_table

PAGE = "retrieval"
FIGURE = f"{PAGE}-deltas.png"  # beside the page
COMMAND = "dvc repro experiments/retrieval/dvc.yaml"
NAMES = {"scifact": "SciFact", "bioasq": "BioASQ"}
# What a collection's queries and documents are called in the tables' sample line.
UNITS = {"bioasq": ("questions", {"record": "PubMed records", "snippet": "distinct gold-snippet texts"})}
BASE = "none"  # each document one chunk: what every chunk method is compared with
PRIMARY = "ndcg@10"
LABELS = {"ndcg@10": "nDCG@10", "map": "MAP", "mrr@10": "MRR@10"}
RERANK_FILE = "rerank"  # the rerank stage's <dataset>/rerank.json and .parquet
RERANK = {"rerank-bm25": "BM25 alone", "rerank-init": "cross-encoder, untrained initialisation", "rerank-trained": "cross-encoder, trained"}


def stage(dataset: str, method: str | None = None) -> str:
    """The command that runs one retrieve stage (``method``) or the rerank stage of ``dataset``."""
    return f"`{COMMAND}:" + (f"retrieve@{dataset}-{method}`" if method else f"rerank@{dataset}`")


def label(measure: str) -> str:
    """ndcg@10 -> nDCG@10, recall@100 -> R@100."""
    return LABELS.get(measure, measure.replace("recall@", "R@"))


def retrievers(m: dict[str, Any]) -> list[str]:
    """The first-stage retrievers of a metrics file, in its order (bm25, dense, hybrid)."""
    return [k for k in m if k not in ("rerank", "reshape", "corpus")]


def collect(dataset: str, folder: Path, methods: Iterable[str]) -> tuple[dict[str, Any], dict[str, np.ndarray], list[str]]:
    """The metrics of every method run so far merged into one retrieve-metrics dict, their
    per-query scores, and the methods of ``methods`` (params order) that have not run yet.

    A file of a method the params do not name is stale (refused); ``none`` must have run,
    since every method is compared with it."""
    methods = list(dict.fromkeys(methods))
    found = sorted(p.stem for p in folder.glob("*.json") if p.stem != RERANK_FILE)
    stale = [x for x in found if x not in methods]
    if stale or BASE not in methods:
        raise UserError(
            f"metrics of {dataset}: methods {found}, retrieve.bm25_methods + dense_methods {methods} "
            f"(both must include {BASE}); re-run experiments/retrieval/dvc.yaml"
        )
    if BASE not in found:
        raise UserError(f"metrics of {dataset}: no {BASE} run in {folder}; run {stage(dataset, BASE).strip('`')}")
    merged: dict[str, Any] = {}
    items: dict[str, np.ndarray] = {}
    corpus: dict[str, Any] = {"chunks": {}}
    queries: dict[str, list[str]] = {}
    for x in sorted((x for x in methods if x in found), key=lambda x: x != BASE):  # none first: the order to match
        m = read_json(folder / f"{x}.json")
        if "corpus" not in m:
            raise UserError(f"{folder / f'{x}.json'}: no corpus entry; re-run {stage(dataset, x).strip('`')}")
        for key in ("documents", "queries"):
            if corpus.setdefault(key, m["corpus"][key]) != m["corpus"][key]:
                raise UserError(f"{folder / f'{x}.json'}: {m['corpus'][key]} {key}, other methods {corpus[key]}: not one collection; re-run experiments/retrieval/dvc.yaml")
        corpus["chunks"] |= m["corpus"]["chunks"]
        for r in retrievers(m):
            merged.setdefault(r, {}).update(m[r])
        # Differences pair scores by position: every file must list the same queries in one order.
        scores = read_table(folder / f"{x}.parquet", ITEM_SCORES)
        order = scores.loc[scores["metric"] == scores["metric"].iloc[0], "item_id"].tolist()
        if queries.setdefault("order", order) != order:
            raise UserError(f"{folder / f'{x}.parquet'}: its queries differ from {BASE}'s (or their order); re-run experiments/retrieval/dvc.yaml")
        items |= read_items(folder / f"{x}.parquet")
    merged["corpus"] = corpus
    return merged, items, [x for x in methods if x not in found]


def _scores(items: dict[str, np.ndarray], key: str, where: str) -> np.ndarray:
    if key not in items:
        raise UserError(f"{where}: no per-query scores {key!r}; re-run experiments/retrieval/dvc.yaml:retrieve")
    return items[key]


def methods_table(
    dataset: str, m: dict[str, Any], items: dict[str, np.ndarray], methods: list[str], k: int, missing: list[str] = (),
    bioasq_unit: str = "record",
) -> PaperTable:
    """Chunk method × retriever: nDCG@10 and R@k with intervals, then every method minus whole
    documents; ``missing``: methods whose stage has not run yet."""
    where = f"per-query scores of {dataset}"
    rs = retrievers(m)
    rows, judged = [], []
    metrics = ["chunks"] + [f"{r} {label(x)}" for r in rs for x in (PRIMARY, f"recall@{k}")]
    for method in methods:
        ours = {"chunks": Estimate(float(m["corpus"]["chunks"][method]))}
        for r in rs:
            if method in m[r]:
                for x in (PRIMARY, f"recall@{k}"):
                    ours[f"{r} {label(x)}"] = mean_ci(_scores(items, f"{r}/{method}/{x}", where))
        rows.append(Row(method, {}, ours))
    for r in rs:
        base = _scores(items, f"{r}/{BASE}/{PRIMARY}", where)
        for method in methods:
            if method != BASE and method in m[r]:
                x = _scores(items, f"{r}/{method}/{PRIMARY}", where)
                judged.append(Judged(Difference(f"{method} − {BASE} ({r})", label(PRIMARY), None, paired_delta(base, x)), x - base))
    n = len(base)
    name = NAMES.get(dataset, dataset)
    corpus = m["corpus"]
    queries, units = UNITS.get(dataset, ("queries", {}))
    documents = units.get(bioasq_unit, "documents")
    return PaperTable(
        paper=PAGE, section=dataset, title=f"{name}: chunk hits mapped to documents, every chunk method × retriever",
        command=COMMAND,
        sample=f"{name}: all {corpus['queries']:,} judged {queries} over all {corpus['documents']:,} {documents}",
        models="the retrieve.* settings of params.yaml (BM25 Pyserini/Lucene, dense embed.model + FAISS, RRF hybrid)",
        wall_s=None, metrics=metrics, rows=rows, differences=[j.diff for j in judged], digits=4,
        metric_digits={"chunks": 0},
        not_run=[NotRun(x, "its stage has not run yet.", stage(dataset, x)) for x in missing],
        notes=[
            f"Each chunk method's hits are mapped to their document (`retrieve.aggregate`), so every method is "
            f"scored against the same judgements; `{BASE}` is each document one chunk. Intervals: 95% percentile "
            f"bootstrap over the {n} {queries} (paired for the differences), from the tracked per-query scores.",
            *(line for note in stats_notes(judged, n, digits=4) for line in ("", note)),
        ],
    )  # fmt: skip


def rerank_table(dataset: str, folder: Path, ks: list[int]) -> PaperTable:
    """BM25's top documents reordered by the untrained and the trained cross-encoder, from the
    rerank stage's ``rerank.json`` / ``.parquet`` in ``folder``; without them (not run, or no
    training judgements) the table says why and names the command."""
    name = NAMES.get(dataset, dataset)
    measures = [PRIMARY, "map", "mrr@10", f"recall@{min(ks)}"]
    table = PaperTable(
        paper=PAGE, section=f"{dataset}-rerank", title=f"{name}: BM25's top documents reordered by a cross-encoder",
        command=stage(dataset).strip("`"), sample=f"{name}: not run", wall_s=None, metrics=[label(x) for x in measures], digits=4,
        models="train_reranker.* of params.yaml (the cross-encoder and its untrained initialisation, same seed)",
    )  # fmt: skip
    path = folder / f"{RERANK_FILE}.json"
    rr = read_json(path).get("rerank", {}) if path.is_file() else {"skipped": "its stage has not run yet."}
    if "trained" not in rr:
        table.not_run = [NotRun("reranking", str(rr.get("skipped", "retrieve.rerank_depth is 0.")), stage(dataset))]
        return table
    items = read_items(folder / f"{RERANK_FILE}.parquet")
    where = f"per-query scores of {dataset} reranking"
    method = rr["base"].split("/", 1)[1]
    per = {r: {x: _scores(items, f"{r}/{method}/{x}", where) for x in measures} for r in RERANK}
    table.rows = [Row(RERANK[r], {}, {label(x): mean_ci(v) for x, v in per[r].items()}) for r in RERANK]
    judged = [
        Judged(Difference(f"{RERANK[a]} − {RERANK[b]}", label(PRIMARY), None, paired_delta(per[b][PRIMARY], per[a][PRIMARY])), per[a][PRIMARY] - per[b][PRIMARY])
        for a, b in (("rerank-trained", "rerank-init"), ("rerank-trained", "rerank-bm25"))
    ]  # fmt: skip
    n = len(per["rerank-bm25"][PRIMARY])
    table.title = f"{name}: BM25's top {rr['depth']} documents reordered by a cross-encoder"
    queries = UNITS.get(dataset, ("queries",))[0]
    held_out = " (`retrieve.qa_test_splits`)" if dataset in UNITS else ""
    table.sample = f"{name}: the {n:,} held-out judged {queries}{held_out}, BM25 over " + ("whole documents" if method == BASE else f"{method} chunks")
    table.differences = [j.diff for j in judged]
    table.notes = [
        "Hits below the reranked depth keep BM25's order, so MAP and recall stay comparable.",
        *(line for note in stats_notes(judged, n, digits=4) for line in ("", note)),
    ]
    return table


def delta_plot(tables: list[PaperTable], path: Path) -> None:
    """nDCG@10 of every chunk method minus whole documents with its paired interval, one row of
    panels per dataset and one panel per retriever: which chunkings help which retriever, and
    by more than query sampling (green: the interval is above 0, red: below)."""
    import matplotlib

    matplotlib.use("Agg")  # no display on CI or servers
    import matplotlib.pyplot as plt

    def retriever(d: Difference) -> str:
        return d.label.rsplit("(", 1)[1].rstrip(")")

    rs = list(dict.fromkeys(retriever(d) for t in tables for d in t.differences)) or ["no chunk method has run yet"]
    fig, axes = plt.subplots(len(tables), len(rs), figsize=(3.4 * len(rs), 3.8 * len(tables)), dpi=90, sharex=True, sharey="row", squeeze=False)
    for row, t in zip(axes, tables):
        for ax, r in zip(row, rs):
            ds = [d for d in t.differences if retriever(d) == r]
            y = np.arange(len(ds))
            lo, hi = np.array([d.ours.lo for d in ds]), np.array([d.ours.hi for d in ds])
            colour = ["C2" if a > 0 else "C3" if b < 0 else "0.4" for a, b in zip(lo, hi)]
            ax.hlines(y, lo, hi, color=colour, linewidth=1.5)
            ax.scatter([d.ours.value for d in ds], y, c=colour, s=14, zorder=3)
            ax.axvline(0, color="0.6", linewidth=0.8)
            ax.set_yticks(y, [d.label.split(" − ")[0] for d in ds], fontsize=8)
            ax.set_title(f"{NAMES.get(t.section, t.section)}: {r}", fontsize=9)
            ax.set_xlabel(f"{label(PRIMARY)} minus {BASE} (95% CI)", fontsize=8)
        row[0].invert_yaxis()  # the table's order, top down (the row shares the axis: once)
    fig.tight_layout()
    with atomic_path(path) as tmp:
        fig.savefig(tmp, format="png", metadata={"Software": None})  # no version stamp: the file must reproduce
    plt.close(fig)


def tables(
    metrics_dir: Path, datasets: list[str], methods: list[str], ks: list[int], plot: Path | None = None, bioasq_unit: str = "record"
) -> list[PaperTable]:
    """Per dataset the method table and the reranking table, from ``metrics_dir / <dataset>/``
    (one ``<method>.json`` / ``.parquet`` per chunk method run, and ``rerank.*``); ``plot``:
    also draw the differences figure; ``bioasq_unit``: corpus.bioasq_unit, named in BioASQ's sample line."""
    out: list[PaperTable] = []
    for ds in datasets:
        folder = metrics_dir / ds
        m, items, missing = collect(ds, folder, methods)
        ran = [x for x in dict.fromkeys(methods) if x not in missing]
        out.append(methods_table(ds, m, items, ran, max(ks), missing, bioasq_unit))
        out.append(rerank_table(ds, folder, ks))
    if plot is not None:
        delta_plot([t for t in out if not t.section.endswith("-rerank")], plot)
    return out
