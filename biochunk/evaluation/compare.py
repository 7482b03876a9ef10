"""Are chunk methods different? One-way ANOVA and Tukey HSD on per-question scores.

Input: one row per (question, method) with a column per metric. For each metric the
report holds each method's mean with a 95% bootstrap interval, scipy's one-way ANOVA
F and p across methods, and statsmodels' Tukey HSD for every pair of methods.

Every method answers the same questions, so the samples are paired; one-way ANOVA
ignores the pairing and is therefore conservative (the papers report it this way).
"""

from __future__ import annotations

import math
from typing import Any, Sequence

import numpy as np
import pandas as pd

from biochunk.evaluation.stats import bootstrap_ci


def method_summary(scores: pd.DataFrame, metric: str, n_boot: int, seed: int) -> dict[str, dict[str, float]]:
    out = {}
    for method, g in scores.groupby("method", sort=True):
        x = g[metric].to_numpy(dtype=float)
        lo, hi = bootstrap_ci(x, np.mean, n_boot, seed)
        out[str(method)] = {"mean": float(x.mean()) if len(x) else float("nan"), "ci_low": lo, "ci_high": hi, "n": int(len(x))}
    return out


def anova(scores: pd.DataFrame, metric: str) -> dict[str, float]:
    from scipy.stats import f_oneway

    groups = [g[metric].to_numpy(dtype=float) for _, g in scores.groupby("method", sort=True)]
    if len(groups) < 2 or any(len(g) < 2 for g in groups):
        return {"F": float("nan"), "p": float("nan"), "df_between": len(groups) - 1, "df_within": 0}
    res = f_oneway(*groups)
    n = sum(map(len, groups))
    return {"F": _num(res.statistic), "p": _num(res.pvalue), "df_between": len(groups) - 1, "df_within": n - len(groups)}


def tukey(scores: pd.DataFrame, metric: str, alpha: float = 0.05) -> list[dict[str, Any]]:
    """Every pair of methods: mean difference (B − A), adjusted p, 95% interval, reject."""
    from statsmodels.stats.multicomp import pairwise_tukeyhsd

    if scores["method"].nunique() < 2:
        return []
    res = pairwise_tukeyhsd(scores[metric].to_numpy(dtype=float), scores["method"].astype(str).to_numpy(), alpha=alpha)
    table = res.summary().data  # header row, then group1, group2, meandiff, p-adj, lower, upper, reject
    rows = []
    for g1, g2, diff, p, lo, hi, reject in table[1:]:
        rows.append(
            {
                "a": str(g1),
                "b": str(g2),
                "mean_diff": _num(diff),
                "p_adj": _num(p),
                "ci_low": _num(lo),
                "ci_high": _num(hi),
                "reject": bool(reject),
            }
        )
    return rows


def _num(x: Any) -> float:
    x = float(x)
    return x if math.isfinite(x) else float("nan")


def compare(scores: pd.DataFrame, metrics: Sequence[str], n_boot: int, seed: int, alpha: float = 0.05) -> dict[str, Any]:
    """The comparison report: per metric, method means with CIs, ANOVA and Tukey HSD."""
    return {
        "methods": sorted(scores["method"].astype(str).unique()),
        "questions": int(scores["question_id"].nunique()),
        "alpha": alpha,
        "metrics": {
            m: {"methods": method_summary(scores, m, n_boot, seed), "anova": anova(scores, m), "tukey": tukey(scores, m, alpha)}
            for m in metrics
        },
    }


def to_markdown(report: dict[str, Any], title: str) -> str:
    lines = [f"# {title}", "", f"{report['questions']} questions answered with each of: {', '.join(report['methods'])}.", ""]
    for metric, r in report["metrics"].items():
        a = r["anova"]
        lines += [f"## {metric}", "", "| method | mean | 95% CI | n |", "|---|---|---|---|"]
        for method, s in r["methods"].items():
            lines.append(f"| {method} | {s['mean']:.4f} | [{s['ci_low']:.4f}, {s['ci_high']:.4f}] | {s['n']} |")
        lines += ["", f"One-way ANOVA: F({a['df_between']}, {a['df_within']}) = {a['F']:.3f}, p = {a['p']:.4g}", ""]
        if r["tukey"]:
            lines += ["Tukey HSD:", "", "| A | B | mean(B) − mean(A) | p adj. | 95% CI | differ |", "|---|---|---|---|---|---|"]
            for t in r["tukey"]:
                ci = f"[{t['ci_low']:.4f}, {t['ci_high']:.4f}]"
                differ = "yes" if t["reject"] else "no"
                lines.append(f"| {t['a']} | {t['b']} | {t['mean_diff']:+.4f} | {t['p_adj']:.4g} | {ci} | {differ} |")
            lines.append("")
    return "\n".join(lines) + "\n"
