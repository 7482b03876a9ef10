"""What evaluate_qa reports: per-question answer scores per chunk method, headline metrics
with bootstrap intervals, plot tables and a PNG."""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from biochunk.evaluation.answers import bertscore, declined, rouge_scores
from biochunk.evaluation.plots import histogram_table  # noqa: F401  (evaluate_qa's table)
from biochunk.evaluation.stats import bootstrap_ci
from biochunk.io import atomic_path

FAMILIES = ("rouge2", "rougesu4", "bertscore")
HEADLINE = [f"{f}_{k}" for f in FAMILIES for k in ("precision", "recall", "f1")]
COMPARED = ["rouge2_f1", "rougesu4_f1", "bertscore_f1"]


def score_answers(
    answers: pd.DataFrame, questions: pd.DataFrame, bert_model: str, bert_layers: int, bert_batch: int
) -> pd.DataFrame:
    """One row per (question, method): ROUGE-2, ROUGE-SU4 and BERTScore P/R/F1; whether the
    answer is a non-response (``declined``: empty, or says the context lacks it); yes/no
    correctness for yes/no questions and whether the context held the answer for
    extractive ones (NaN elsewhere)."""
    q = questions.set_index("id")
    refs = [list(q.at[i, "references"]) for i in answers["question_id"]]
    cands = [str(a) for a in answers["answer"]]
    scores = {**rouge_scores(cands, refs), **bertscore(cands, refs, bert_model, bert_layers, bert_batch)}
    exact = [q.at[i, "exact"] for i in answers["question_id"]]
    yesno = [float(p == e) if e else math.nan for p, e in zip(answers["yesno"], exact)]
    extractive = [q.at[i, "type"] == "extractive" for i in answers["question_id"]]
    held = [float(context_holds(c, r)) if x else math.nan for c, r, x in zip(answers["context"], refs, extractive)]
    return pd.DataFrame(
        {
            "question_id": answers["question_id"].to_numpy(),
            "method": answers["method"].to_numpy(),
            **scores,
            "declined": [float(declined(a)) for a in cands],
            "yesno_correct": yesno,
            "context_has_answer": held,
        }
    )


def context_holds(context: str, references: list[str]) -> bool:
    """Whether the question's context, as the model read it (QA_ANSWERS ``context``), holds
    a reference whole, whitespace and case aside: for extractive answers (COVID-QA), whether
    the chunks within the word budget carried the answer, or cut it.

    A judgement of text, not of offsets, hence not ``evaluation.chunking.judge`` (the rule for
    gold spans against chunk spans): what the model read is the context's passages, numbered,
    in rank order and cut at the word budget (``generation.qa.assemble_context``), some of them
    reshaped or gold sentences drawn from several documents, so no offsets describe it. The two
    differ both ways: a reference counts here wherever its words appear (a phrase repeated away
    from the gold span, or in another document), and not where the budget cut it off although
    a retrieved chunk held the gold span whole.
    """
    flat = " ".join(context.split()).lower()
    return any(" ".join(r.split()).lower() in flat for r in references if r.strip())


def summary(scores: pd.DataFrame, extra: pd.DataFrame | None, n_boot: int, seed: int) -> dict[str, Any]:
    """Per method: the mean of every headline metric with a 95% bootstrap interval.

    ``extra``: more per-(question, method) columns averaged the same way (retrieval hits).
    """
    table = scores if extra is None else scores.merge(extra, on=["question_id", "method"], how="left")
    cols = (
        HEADLINE
        + ["declined", "yesno_correct", "context_has_answer"]
        + ([c for c in extra.columns if c not in ("question_id", "method")] if extra is not None else [])
    )
    out: dict[str, Any] = {}
    for method, g in table.groupby("method", sort=True):
        m: dict[str, Any] = {"questions": int(len(g))}
        for c in cols:
            x = g[c].dropna().to_numpy(dtype=float)
            if not len(x):
                continue
            lo, hi = bootstrap_ci(x, np.mean, n_boot, seed)
            name = "yesno_accuracy" if c == "yesno_correct" else c
            m[name], m[f"{name}_ci_low"], m[f"{name}_ci_high"] = float(x.mean()), lo, hi
            if c == "yesno_correct":
                m["yesno_questions"] = int(len(x))
        out[str(method)] = m
    return out


def bars_table(summary_: dict[str, Any]) -> pd.DataFrame:
    """Plot table: one row per method and F1 metric with its interval."""
    rows = [
        {"method": method, "metric": c, "value": m[c], "ci_low": m[f"{c}_ci_low"], "ci_high": m[f"{c}_ci_high"]}
        for method, m in summary_.items()
        for c in COMPARED
    ]
    return pd.DataFrame(rows, columns=["method", "metric", "value", "ci_low", "ci_high"])


def pr_table(summary_: dict[str, Any]) -> pd.DataFrame:
    """Plot table: precision against recall per method and metric family."""
    rows = [
        {"method": method, "metric": f, "recall": m[f"{f}_recall"], "precision": m[f"{f}_precision"]}
        for method, m in summary_.items()
        for f in FAMILIES
    ]
    return pd.DataFrame(rows, columns=["method", "metric", "recall", "precision"])


def summary_png(bars: pd.DataFrame, pr: pd.DataFrame, hist: pd.DataFrame, title: str, path: Path) -> None:
    """Three panels: F1 per method with 95% CIs, precision vs recall, chunk-size histograms."""
    import matplotlib

    matplotlib.use("Agg")  # no display on CI or servers
    import matplotlib.pyplot as plt

    methods = sorted(bars["method"].unique())
    fig, (a, b, c) = plt.subplots(1, 3, figsize=(16, 4.5))
    width = 0.8 / max(1, len(methods))
    for k, method in enumerate(methods):
        g = bars[bars["method"] == method].set_index("metric").reindex(COMPARED)
        x = np.arange(len(COMPARED)) + k * width
        err = np.vstack([g["value"] - g["ci_low"], g["ci_high"] - g["value"]])
        a.bar(x, g["value"], width, yerr=err, capsize=3, label=method)
    a.set_xticks(np.arange(len(COMPARED)) + width * (len(methods) - 1) / 2, COMPARED)
    a.set(ylabel="mean over questions (95% CI)", title="answer F1 per chunk method")
    a.legend(fontsize=8)
    markers = {"rouge2": "o", "rougesu4": "s", "bertscore": "D"}
    for k, method in enumerate(methods):
        for _, r in pr[pr["method"] == method].iterrows():
            b.scatter(r["recall"], r["precision"], color=f"C{k}", marker=markers.get(r["metric"], "x"))
    b.set(xlabel="recall", ylabel="precision", title="precision vs recall (o ROUGE-2, s SU4, D BERTScore)")
    for k, method in enumerate(methods):
        g = hist[(hist["method"] == method) & (hist["chunks"] > 0)]
        c.plot(g["n_tokens"].clip(lower=1), g["chunks"], marker=".", color=f"C{k}", label=method)
    c.set(xscale="log", yscale="log", xlabel="tokens per chunk (chunk.counter), bin start", ylabel="chunks", title="chunk sizes")
    c.legend(fontsize=8)
    fig.suptitle(title)
    fig.tight_layout()
    with atomic_path(path) as tmp:
        fig.savefig(tmp, dpi=100, format="png")
    plt.close(fig)


def pr_png(pr: pd.DataFrame, title: str, path: Path) -> None:
    """Precision against recall, one labelled point per row (``method``), for classification."""
    import matplotlib

    matplotlib.use("Agg")  # no display on CI or servers
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(5, 4.5))
    for k, (_, r) in enumerate(pr.iterrows()):
        ax.scatter(r["recall"], r["precision"], color=f"C{k}", label=r["method"], s=60)
    ax.set(xlim=(-0.02, 1.02), ylim=(-0.02, 1.02), xlabel="recall", ylabel="precision", title=title)
    ax.legend(fontsize=8)
    fig.tight_layout()
    with atomic_path(path) as tmp:
        fig.savefig(tmp, dpi=100, format="png")
    plt.close(fig)
