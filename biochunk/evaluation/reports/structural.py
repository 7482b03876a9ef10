"""Structural chunking (paper 5): chunk-level retrieval on SciFact and the chunk sizes.

Inputs, per setting of ``experiments/structural/params.yaml``: the per-query scores and the
per-chunk sizes of the ``evaluate_retrieval`` stage. Structural minus every baseline gets a
paired interval over the same queries (``papers.paired_delta``); ``none`` (whole abstracts)
is a reference row outside the claim.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

from biochunk.evaluation.papers import Difference, Estimate, PaperTable, Row, mean_ci, paired_delta, read_items
from biochunk.io import atomic_path

PAPER = "structural"
STRUCTURAL = ("structural-project", "structural-authors")
COMMAND = "dvc repro experiments/structural/dvc.yaml"


def describe(cp) -> str:
    if cp is None:
        return "whole documents"
    if cp.method == "structural":
        return f"α {cp.alpha:g}, D_struct {cp.structural_distance}, cut > p{cp.boundary_percentile:g}"
    return f"{cp.max_tokens}-word cap" if cp.method != "recursive" else f"{cp.chunk_size} chars, overlap {cp.chunk_overlap}"


def claim_note(differences: list[Difference]) -> str:
    """Where our paired intervals stand on the paper's qualitative claim (structural > each baseline)."""
    vs = [d for d in differences if "structural-project" not in d.label.split(" − ")[1]]
    above = sum(d.ours.lo > 0 for d in vs)
    below = sum(d.ours.hi < 0 for d in vs)
    return (
        f"The paper's claim, structural above each baseline (no published number, so the direction column cannot judge it): "
        f"of our {len(vs)} paired intervals of structural − baseline, {above} lie above 0 (agree), {below} below 0 "
        f"(contradict), {len(vs) - above - below} include 0 (not separable)."
    )


def size_plot(words: dict[str, np.ndarray], path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(6.4, 3.6), dpi=90)
    bins = np.arange(0, 270, 10)
    for label, w in words.items():
        ax.hist(np.clip(w, 0, 265), bins=bins, histtype="step", label=label, linewidth=1.2)
    ax.set_xlabel("words per chunk (SciFact; 256-word cap, none uncapped: over 260 drawn at 260)")
    ax.set_ylabel("chunks")
    ax.legend(fontsize=7)
    fig.tight_layout()
    with atomic_path(path) as tmp:
        fig.savefig(tmp, format="png", metadata={"Software": None})  # no version stamp: the file must reproduce
    plt.close(fig)


def tables(paper: Any, chunk_params: dict, scores_dir: Path, sizes: dict[str, Path], samples: dict[str, dict], embed_model: str, plot: Path) -> list[PaperTable]:
    """The chunk-retrieval table and the sizes table; writes the histogram to ``plot``.

    ``paper``: the paper's params (``experiments.Paper``: its one ``sample`` and the ``settings``
    names); ``sizes``, ``samples``: the per-chunk sizes folder and the ``sample.json`` of that sample."""
    s = paper.sample
    (sizes_dir,), (sample,) = sizes.values(), samples.values()
    names = list(paper.settings)
    scores = {n: read_items(scores_dir / f"{n}.parquet") for n in names}
    sizes_of = {n: read_items(sizes_dir / n / "sizes.parquet") for n in names}
    k_max = max(s.ks)
    metrics = [f"{m}@{k}" for k in s.ks for m in ("p", "recall", "f1", "ap")] + [f"success@{k_max}"]
    pool = "all" if s.max_documents is None else "a pool of (the judged ones + a seeded sample):"
    sample_text = f"SciFact (BEIR) test split, {sample['queries']} queries, searched over {pool} {sample['documents']:,} abstracts"
    models = f"{embed_model} (all-MiniLM-L6-v2) embeds sentences (semantic chunkers) and chunks; exact cosine search"
    pairs = [(a, b) for a in STRUCTURAL if a in scores for b in names if b not in STRUCTURAL and b != "none"]
    if all(a in scores for a in STRUCTURAL):
        pairs.append(("structural-authors", "structural-project"))
    differences = [
        Difference(f"{a} − {b}", m, None, paired_delta(scores[b][m], scores[a][m], s.bootstrap))
        for a, b in pairs
        for m in (f"f1@{k_max}", f"ap@{k_max}")
    ]
    retrieval = PaperTable(
        paper=PAPER, section="scifact-chunk-retrieval",
        title="SciFact: chunk-level retrieval per chunk method (the paper's evaluation)",
        command=COMMAND, sample=sample_text, models=models, wall_s=None, metrics=metrics,
        rows=[Row(n, {m: None for m in metrics}, {m: mean_ci(scores[n][m], s.bootstrap) for m in metrics}, describe(chunk_params[n])) for n in names],
        differences=differences,
        not_run=[("the paper's own figures", "not in shared/docs/references.md: every paper cell is —, so no published direction can be checked")],
        notes=[claim_note(differences)],
    )  # fmt: skip
    size_metrics = ["chunks", "words median", "words p95", "words max", "tokens median", "tokens p95", "tokens max"]

    def size_row(n: str) -> Row:
        w, t = sizes_of[n]["words"], sizes_of[n]["tokens"]
        vals = [len(w), np.median(w), np.percentile(w, 95), w.max(), np.median(t), np.percentile(t, 95), t.max()]
        return Row(n, {m: None for m in size_metrics}, {m: Estimate(float(v)) for m, v in zip(size_metrics, vals)})

    size_plot({n: sizes_of[n]["words"] for n in names}, plot)
    chunk_sizes = PaperTable(
        paper=PAPER, section="scifact-chunk-sizes", title="SciFact: chunk-size distribution per chunk method",
        command=COMMAND, sample=f"the {sample['documents']:,} SciFact abstracts searched",
        models=f"MiniLM tokens counted by the {embed_model} tokenizer", wall_s=None, metrics=size_metrics,
        rows=[size_row(n) for n in names], digits=0, notes=[f"Histogram of words per chunk: [{plot.name}]({plot.name})"],
    )  # fmt: skip
    return [retrieval, chunk_sizes]
