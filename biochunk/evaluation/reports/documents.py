"""Long documents: every ``chunk_docs`` method over whole COVID-QA and PLOS articles.

The tables of docs/results/long-documents.md, built from the tracked metrics of
``experiments/documents`` (``metrics/papers/documents/<dataset>.json``, written by
``stages/evaluate_docs.py`` from ``chunk_docs``' chunks): per method the chunk count, the mean
size in the method's own unit (words, or embedder tokens for ``semchunk``), the size in the
embedder's tokens (median, p95, max: what ``embed.model`` is given to read), and where the
dataset has extractive answers the gold answers that no single chunk holds whole. No paper of
``../shared/papers/`` reports these distributions, so every paper cell is —.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Iterable

import numpy as np

from biochunk.errors import UserError
from biochunk.evaluation.papers import Estimate, PaperTable, Row
from biochunk.io import atomic_path, read_json

PAGE = "long-documents"
FIGURE = f"{PAGE}-sizes.png"  # beside the page
WINDOW = 256  # tokens all-MiniLM-L6-v2 reads; a chunk past it is truncated by the encoder
# The embedders whose window the figure marks; for another embed.model the line is left out
# rather than drawn at MiniLM's 256 under a name that is not the model's.
WINDOWS = {"minilm": WINDOW, "sentence-transformers/all-MiniLM-L6-v2": WINDOW}
COMMAND = "dvc repro experiments/documents/dvc.yaml"
NAMES = {"covidqa": "COVID-QA", "plos": "PLOS"}
UNITS = {"words": "words", "embedder": "embedder tokens", "chars": "characters"}
SIZES = ["chunks", "mean size", "embedder tokens median", "embedder tokens p95", "embedder tokens max"]
CUTS = ["answers cut", "share cut (%)"]


def ordered(dataset: str, m: dict[str, Any], methods: Iterable[str]) -> list[str]:
    """The methods in ``chunk_docs.methods`` order, once the metrics are known to hold exactly them."""
    methods = list(methods)
    if set(methods) != set(m) - {"corpus"}:
        raise UserError(
            f"metrics of {dataset}: methods {sorted(set(m) - {'corpus'})}, chunk_docs.methods {methods}; "
            f"re-run experiments/documents/dvc.yaml:evaluate_docs@{dataset}"
        )
    return methods


def row(method: str, m: dict[str, Any], answers: int) -> Row:
    unit = UNITS.get(m["counter"], m["counter"])
    ours = {
        "chunks": m["chunks"], "mean size": m["tokens_mean"], "embedder tokens median": m["embedder_tokens_median"],
        "embedder tokens p95": m["embedder_tokens_p95"], "embedder tokens max": m["embedder_tokens_max"],
    }  # fmt: skip
    if answers:
        ours |= {"answers cut": m["cut_answers"], "share cut (%)": 100 * m["cut_answer_share"]}
    return Row(method, {k: None for k in ours}, {k: Estimate(float(v)) for k, v in ours.items()}, note=f"size in {unit}")


def table(dataset: str, m: dict[str, Any], embed_model: str, methods: Iterable[str]) -> PaperTable:
    """The table of one dataset's metrics (``evaluate_docs``' JSON: method -> metrics, plus ``corpus``)."""
    if "corpus" not in m:
        raise UserError(f"metrics of {dataset}: no corpus entry; re-run experiments/documents/dvc.yaml:evaluate_docs@{dataset}")
    corpus = m["corpus"]
    answers = int(corpus["answers"])
    methods = ordered(dataset, m, methods)
    name = NAMES.get(dataset, dataset)
    sample = f"{name}: all {corpus['documents']:,} articles whole ({corpus['megabytes']:.2f} MB of text)"
    if answers:
        sample += f", {answers:,} gold answers"
    return PaperTable(
        paper=PAGE, section=dataset, title=f"{name}: chunks per method over whole articles",
        command=COMMAND, sample=sample,
        models=f"embedder tokens: the {embed_model} tokenizer's, counted on each chunk's span of the source text; "
        f"the semantic chunkers embed with {embed_model}",
        wall_s=None, metrics=SIZES + (CUTS if answers else []), rows=[row(x, m[x], answers) for x in methods], digits=0,
        metric_digits={"share cut (%)": 1},
        notes=[
            "Mean size: in the unit named beside the method (`chunk.counter`; `semchunk` counts embedder tokens). "
            "Embedder tokens: the scale the embedder reads (all-MiniLM-L6-v2, the default, reads 256)."
            + (" Answers cut: gold answers that no single chunk holds whole (`evaluation.chunking.cut_answers`)." if answers else "")
        ],
    )  # fmt: skip


def size_plot(metrics: dict[str, dict[str, Any]], methods: list[str], path: Path, embed_model: str = "minilm") -> None:
    """Embedder tokens per chunk (median, p95 and max, log scale) per method, one panel per
    dataset, with the encoder's window where it is known (``WINDOWS``): which methods hand the
    embedder more than it reads."""
    window = WINDOWS.get(embed_model)
    import matplotlib

    matplotlib.use("Agg")  # no display on CI or servers
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, len(metrics), figsize=(4.6 * len(metrics), 3.6), dpi=90, sharey=True, squeeze=False)
    for ax, (dataset, m) in zip(axes[0], metrics.items()):
        y = np.arange(len(methods))
        stats = {k: np.array([m[x][f"embedder_tokens_{k}"] for x in methods], float) for k in ("median", "p95", "max")}
        ax.hlines(y, stats["median"], stats["max"], color="0.7", linewidth=1)
        for k, mark in (("median", "o"), ("p95", "s"), ("max", "|")):
            ax.plot(stats[k], y, mark, label=k, markersize=5)
        if window is not None:
            ax.axvline(window, color="C3", linestyle="--", linewidth=1, label=f"{window}: MiniLM's window")
        ax.set_xscale("log")
        ax.set_yticks(y, methods, fontsize=8)
        ax.set_title(NAMES.get(dataset, dataset), fontsize=9)
        ax.set_xlabel("embedder tokens per chunk")
    axes[0, 0].invert_yaxis()  # the table's order, top down (the panels share the axis: once)
    axes[0, 0].legend(fontsize=7, loc="upper right")  # the short methods sit at the top left
    fig.tight_layout()
    with atomic_path(path) as tmp:
        fig.savefig(tmp, format="png", metadata={"Software": None})  # no version stamp: the file must reproduce
    plt.close(fig)


def tables(
    metrics_dir: Path, datasets: list[str], embed_model: str, methods: list[str], plot: Path | None = None
) -> list[PaperTable]:
    """One table per dataset, from ``metrics_dir / <dataset>.json``, rows in ``methods`` order
    (``chunk_docs.methods``); ``plot``: also draw the size figure there."""
    metrics = {ds: read_json(metrics_dir / f"{ds}.json") for ds in datasets}
    out = [table(ds, m, embed_model, methods) for ds, m in metrics.items()]
    if plot is not None:
        size_plot(metrics, methods, plot, embed_model)
    return out
