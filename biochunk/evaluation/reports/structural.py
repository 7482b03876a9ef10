"""Structural chunking (paper 5): chunk-level retrieval on SciFact and the chunk sizes.

Inputs, per setting of ``experiments/structural/params.yaml``: the per-query scores and the
per-chunk sizes of the ``evaluate_retrieval`` stage. Structural minus every baseline gets a
paired interval over the same queries (``papers.paired_delta``), judged against the direction
the paper's text states (``CLAIMS``, cited) under the project's metrics and the authors' own
(``AUTHORS_AP``, success@k); ``none`` (whole abstracts) is a reference row outside the claim.
A setting named ``<setting>-nocap`` (``NOCAP``) is ``<setting>`` without the word cap, as the
authors' code runs every method: structural and its baselines are paired within the capped
settings and within the uncapped ones, never across.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

from biochunk.errors import UserError
from biochunk.evaluation.papers import (
    Difference,
    Estimate,
    Judged,
    NotRun,
    PaperTable,
    Row,
    Source,
    mean_ci,
    paired_delta,
    read_items,
    stats_notes,
)
from biochunk.io import atomic_path

PAPER = "structural"
STRUCTURAL = ("structural-project", "structural-authors")
COMMAND = "dvc repro experiments/structural/dvc.yaml"
NOCAP = "-nocap"  # suffix of a setting's uncapped twin (its keys plus max_tokens: null)


# The paper (../shared/papers/004_*, its code's README) prints no result: its claims are in words.
README = "004_d94d24ae38084d3b.txt"
VS_SEMANTIC = Source(
    README, "line 5",
    "Unlike purely semantic chunking—which can miss paragraph/section cues and is sensitive to typographical "
    "noise—Structural Chunking directly computes language-agnostic structural indicators",
)  # fmt: skip
VS_EXISTING = Source(
    README, "line 9",
    "Existing methods face a trade-off between semantic coherence and computational efficiency, and often fail "
    "on hierarchically structured documents (e.g., scientific, legal, policy, technical).",
)  # fmt: skip
BASELINES = Source(README, "line 96", "--method percentile stddeviation interquartile gradient structural recursive")
METRICS = Source(README, "line 126", "Evaluate retrieval quality (Precision, Recall, F1, Average Precision)")
DATASETS = Source(README, "line 95", "--datasets nfcorpus scifact arguana scidocs fiqa")
# Structural above each baseline the paper runs (line 96): the breakpoint rules are the "purely
# semantic chunking" it improves on (line 5); recursive is one of the "existing methods" that
# "often fail" on scientific documents (line 9). Baseline -> the words that state it.
CLAIMS = {
    **{b: (VS_SEMANTIC, BASELINES, METRICS) for b in ("percentile", "stddev", "interquartile", "gradient")},
    "recursive": (VS_EXISTING, BASELINES, METRICS),
}
# The paper's five BEIR sets (line 95); the mirror (../shared/datasets) holds SciFact alone.
BEIR = ("nfcorpus", "scifact", "arguana", "scidocs", "fiqa")
AUTHORS_AP = "ap-authors"
# Each judged metric, and how it differs from the authors' (their code, as read in
# docs/results/structural.md's Definitions); every verdict adds CAP, or UNCAPPED where neither side has one.
JUDGED = {
    "f1": "the project's recall in F1 (relevant chunks found / all relevant chunks; the authors' recall is success@k)",
    "ap": "the project's AP (÷ all relevant chunks; the authors' ÷ the relevant chunks retrieved)",
    "success": "the authors' recall",
    AUTHORS_AP: "the authors' AP",
}
CAP = "a {cap}-word cap on every method (the authors' code: none)"
UNCAPPED = "no cap on any method, as in the authors' code"
FORMS = {"structural-project": "; the project's form (α 0.5, Euclidean D_struct; the paper's text gives no α, line 22)"}


def values(items: dict[str, np.ndarray], metric: str) -> np.ndarray:
    """Per-query values of ``metric``; ``ap-authors@k``, the authors' AP (scikit-learn's over
    the top-k list: the sum of P@i over the relevant ranks ÷ the relevant chunks retrieved), is
    ``ap@k / recall@k`` of the same query (both share the sum and the relevant chunks; 0 where
    none is retrieved)."""
    name, k = metric.rsplit("@", 1)
    if name != AUTHORS_AP:
        return items[metric]
    ap, recall = items[f"ap@{k}"], items[f"recall@{k}"]
    return np.divide(ap, recall, out=np.zeros_like(ap), where=recall > 0)


def method(name: str) -> str:
    """The setting ``name`` stands for, with or without the cap: ``percentile-nocap`` -> ``percentile``."""
    return name.removesuffix(NOCAP)


def describe(cp) -> str:
    if cp is None:
        return "whole documents"
    cap = "no cap" if cp.max_tokens is None else f"{cp.max_tokens}-word cap"
    if cp.method == "structural":
        return f"α {cp.alpha:g}, D_struct {cp.structural_distance}, cut > p{cp.boundary_percentile:g}, {cap}"
    return f"{cp.chunk_size} chars, overlap {cp.chunk_overlap}, {cap}" if cp.method == "recursive" else cap


def claim_note(differences: list[Difference], scope: str = "") -> str:
    """Where our paired intervals stand on the paper's qualitative claim (structural > each baseline), per
    metric; ``scope`` names the settings they pair (" with the 256-word cap")."""
    claimed = [d for d in differences if d.claim is not None]
    per_metric = []
    for m in dict.fromkeys(d.metric for d in claimed):
        ds = [d for d in claimed if d.metric == m]
        count = {v: sum(d.direction == v for d in ds) for v in ("confirmed", "reversed", "not separable")}
        per_metric.append(f"{m}: {count['confirmed']} confirmed, {count['reversed']} reversed, {count['not separable']} not separable")
    return (
        f"The paper's claim, structural above each baseline it runs (stated in words, lines 5 and 9: no number), "
        f"over our {len(claimed)} paired intervals of structural − baseline{scope}: " + "; ".join(per_metric) + "."
    )


def size_plot(words: dict[str, np.ndarray], path: Path) -> None:
    """Words per chunk, one panel for the capped settings and one for the ``-nocap`` ones (where
    there are any), ``none`` (whole abstracts) drawn in each for reference."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    panels = {"with the word cap": {n: w for n, w in words.items() if not n.endswith(NOCAP)}}
    if any(n.endswith(NOCAP) for n in words):
        panels[f"without a cap ({NOCAP})"] = {n: w for n, w in words.items() if n == "none" or n.endswith(NOCAP)}
    fig, axes = plt.subplots(len(panels), 1, figsize=(6.4, 3.0 * len(panels) + 0.6), dpi=90, sharex=True, squeeze=False)
    top = 520  # SciFact's p95 abstract is 356 words; longer chunks are drawn at the edge
    bins = np.arange(0, top + 11, 10)
    colour = {m: f"C{i}" for i, m in enumerate(dict.fromkeys(method(n) for n in words))}  # one per method in both panels
    for ax, (title, panel) in zip(axes[:, 0], panels.items()):
        for label, w in panel.items():
            ax.hist(np.clip(w, 0, top + 5), bins=bins, histtype="step", label=label, linewidth=1.2, color=colour[method(label)])
        ax.set_title(title, fontsize=9)
        ax.set_ylabel("chunks")
        ax.legend(fontsize=6, ncol=2)
    axes[-1, 0].set_xlabel(f"words per chunk (SciFact; over {top} drawn at {top})")
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
    for n in names:
        if n.endswith(NOCAP) and chunk_params[n] is not None and chunk_params[n].max_tokens is not None:
            raise UserError(f"{paper.path}: settings.{n}: a {NOCAP} setting is uncapped; add max_tokens: null to it")
    scores = {n: read_items(scores_dir / f"{n}.parquet") for n in names}
    sizes_of = {n: read_items(sizes_dir / n / "sizes.parquet") for n in names}
    k_max = max(s.ks)
    metrics = [f"{m}@{k}" for k in s.ks for m in ("p", "recall", "f1", "ap")] + [f"success@{k_max}", f"{AUTHORS_AP}@{k_max}"]
    pool = "all" if s.max_documents is None else "a pool of (the judged ones + a seeded sample):"
    sample_text = f"SciFact (BEIR) test split, {sample['queries']} queries, searched over {pool} {sample['documents']:,} abstracts"
    models = f"{embed_model} (all-MiniLM-L6-v2) embeds sentences (semantic chunkers) and chunks; exact cosine search"

    def caps(settings) -> str:
        limits = {chunk_params[n].max_tokens for n in settings if chunk_params[n] is not None}
        return "/".join(str(c) for c in sorted(limits - {None}))

    cap = caps(names)
    # Structural against each baseline of its own kind, capped with capped and -nocap with -nocap.
    groups: dict[str, list[tuple[str, str]]] = {}
    for suffix in ("", NOCAP):
        forms = [a + suffix for a in STRUCTURAL if a + suffix in scores]
        kin = [b for b in names if b.endswith(NOCAP) == bool(suffix) and method(b) not in (*STRUCTURAL, "none")]
        groups[suffix] = [(a, b) for a in forms for b in kin] + ([(forms[1], forms[0])] if len(forms) == 2 else [])

    def difference(a: str, b: str, m: str) -> Judged:
        sources = CLAIMS.get(method(b), ()) if method(a) in STRUCTURAL else ()
        limit = caps((a, b))
        setting = f"{JUDGED[m]}; {CAP.format(cap=limit) if limit else UNCAPPED}{FORMS.get(method(a), '')}" if sources else ""
        metric = f"{m}@{k_max}"
        va, vb = values(scores[a], metric), values(scores[b], metric)
        ours = paired_delta(vb, va, s.bootstrap)
        return Judged(Difference(f"{a} − {b}", metric, None, ours, claim=1 if sources else None, sources=sources, setting=setting), va - vb)

    tested = {
        suffix: [difference(a, b, m) for m in JUDGED for a, b in pairs if method(b) in CLAIMS or m in ("f1", "ap")]
        for suffix, pairs in groups.items()
    }  # fmt: skip
    judged = {suffix: [j.diff for j in js] for suffix, js in tested.items()}
    differences = [d for ds in judged.values() for d in ds]
    s_queries = len(next(iter(scores.values()))[f"f1@{k_max}"])

    def scope(pairs: list[tuple[str, str]]) -> str:
        limit = caps({n for pair in pairs for n in pair})
        return f" with the {limit}-word cap" if limit else " without a cap"

    # A capped setting without its uncapped twin: the authors' setting is not measured for it.
    twinless = [n for n in names if chunk_params[n] is not None and chunk_params[n].max_tokens and n + NOCAP not in scores]
    retrieval = PaperTable(
        paper=PAPER, section="scifact-chunk-retrieval",
        title="SciFact: chunk-level retrieval per chunk method (the paper's evaluation)",
        command=COMMAND, sample=sample_text, models=models, wall_s=None, metrics=metrics,
        rows=[Row(n, {m: None for m in metrics}, {m: mean_ci(values(scores[n], m), s.bootstrap) for m in metrics}, describe(chunk_params[n])) for n in names],
        differences=differences,
        not_run=[
            NotRun(
                f"{d} (BEIR), one of the paper's five sets", "not in the datasets mirror (../shared/datasets holds SciFact alone).",
                f"add `{d}` to configs/datasets.yaml as `scifact` is (BEIR's {d}.zip) and to experiments/datasets/dvc.yaml, "
                f"then `dvc exp run experiments/structural/dvc.yaml -S experiments/structural/params.yaml:sample.dataset={d}`.",
                (DATASETS,),
            )
            for d in BEIR if d != s.dataset
        ]
        + (
            [
                NotRun(
                    f"{', '.join(twinless)} without the {cap}-word cap (the authors' code has none)",
                    "not measured: no uncapped setting for them in experiments/structural/params.yaml "
                    "(MiniLM would still read only a chunk's first 256 tokens).",
                    f"add `<setting>{NOCAP}` (the setting's keys plus `max_tokens: null`) to "
                    "experiments/structural/params.yaml, then `dvc repro experiments/structural/dvc.yaml`.",
                )
            ]
            if twinless else []
        ),
        notes=[
            (
                "The paper's text prints no result (it is its code's README): every paper cell is —. Its claim, "
                "structural chunking above the methods it runs, is stated in words (sources below): each "
                "structural − baseline difference is judged against it, under the project's F1@k and AP@k and "
                f"under the authors' recall (success@k) and AP ({AUTHORS_AP}@k = ap@k ÷ recall@k of each query)."
                + (
                    f" A `<setting>{NOCAP}` row is that setting without the {cap}-word cap (`max_tokens: null`, "
                    "as the authors' code runs every method); structural is paired with the baselines of its own kind, "
                    "capped with capped and uncapped with uncapped."
                    if judged[NOCAP] else ""
                )
            ),
            *(line for suffix, ds in judged.items() if ds for line in ("", claim_note(ds, scope(groups[suffix])))),
            *(line for note in stats_notes([j for js in tested.values() for j in js], s_queries) for line in ("", note)),
        ],
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
