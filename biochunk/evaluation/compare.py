"""Are chunk methods different? One-way ANOVA and Tukey HSD on per-question scores.

Input: one row per (question, method) with a column per metric. For each metric the
report holds each method's mean with a 95% bootstrap interval, scipy's one-way ANOVA
F and p across methods with its effect size η² (between-method sum of squares over the
total), and statsmodels' Tukey HSD for every pair of methods with the paired effect size
Cohen's d_z (the mean of the per-question differences B − A over their standard deviation).

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
        return {"F": float("nan"), "p": float("nan"), "df_between": len(groups) - 1, "df_within": 0, "eta_sq": float("nan")}
    res = f_oneway(*groups)
    n = sum(map(len, groups))
    return {
        "F": _num(res.statistic),
        "p": _num(res.pvalue),
        "df_between": len(groups) - 1,
        "df_within": n - len(groups),
        "eta_sq": eta_squared(groups),
    }


def eta_squared(groups: Sequence[np.ndarray]) -> float:
    """η² of a one-way layout: between-group sum of squares over the total sum of squares."""
    x = np.concatenate(groups)
    total = float(((x - x.mean()) ** 2).sum())
    between = float(sum(len(g) * (g.mean() - x.mean()) ** 2 for g in groups))
    return between / total if total > 0 else float("nan")


def cohen_dz(scores: pd.DataFrame, metric: str, a: str, b: str) -> float:
    """Paired Cohen's d (d_z): mean of the per-question differences B − A over their standard
    deviation (ddof 1), over the questions both methods answered; NaN under two such questions
    or when the differences do not vary."""
    if "question_id" not in scores:
        return float("nan")
    wide = scores[scores["method"].astype(str).isin([a, b])].pivot_table(index="question_id", columns="method", values=metric)
    if a not in wide or b not in wide:
        return float("nan")
    d = (wide[b] - wide[a]).dropna().to_numpy(dtype=float)
    if len(d) < 2:
        return float("nan")
    sd = float(d.std(ddof=1))
    return float(d.mean()) / sd if sd > 0 else float("nan")


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
                "cohen_dz": cohen_dz(scores, metric, str(g1), str(g2)),
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
        anova_line = f"One-way ANOVA: F({a['df_between']}, {a['df_within']}) = {a['F']:.3f}, p = {a['p']:.4g}"
        lines += ["", anova_line + (f", η² = {a['eta_sq']:.3f}" if "eta_sq" in a else ""), ""]
        if r["tukey"]:
            head = "| A | B | mean(B) − mean(A) | p adj. | 95% CI | differ | d_z (paired) |"
            lines += ["Tukey HSD:", "", head, "|---|---|---|---|---|---|---|"]
            for t in r["tukey"]:
                ci = f"[{t['ci_low']:.4f}, {t['ci_high']:.4f}]"
                differ = "yes" if t["reject"] else "no"
                dz = t.get("cohen_dz", float("nan"))
                lines.append(f"| {t['a']} | {t['b']} | {t['mean_diff']:+.4f} | {t['p_adj']:.4g} | {ci} | {differ} | {dz:+.2f} |")
            lines.append("")
    return "\n".join(lines) + "\n"
