"""Print the QA results tables of docs/results/clinical.md from evaluate_qa's metrics and reports.

    python benchmarks/qa_summary.py metrics/qa-bioasq.json metrics/qa-covidqa.json
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

COLUMNS = [
    ("rouge2_f1", "ROUGE-2 F1"),
    ("rougesu4_f1", "ROUGE-SU4 F1"),
    ("bertscore_f1", "BERTScore F1"),
    ("gold_doc_hit@1", "gold doc @1"),
    ("context_has_answer", "context holds answer"),
    ("yesno_accuracy", "yes/no acc."),
]


def cell(m: dict, key: str) -> str:
    if key not in m:
        return "–"
    return f"{m[key]:.3f} [{m[key + '_ci_low']:.3f}, {m[key + '_ci_high']:.3f}]"


def table(metrics: dict) -> str:
    methods = [k for k in sorted(metrics) if k not in ("anova", "data")]
    cols = [(k, t) for k, t in COLUMNS if any(k in metrics[m] for m in methods)]
    lines = ["| method | " + " | ".join(t for _, t in cols) + " |", "|---" * (len(cols) + 1) + "|"]
    for m in methods:
        lines.append(f"| {m} | " + " | ".join(cell(metrics[m], k) for k, _ in cols) + " |")
    anova = ", ".join(f"{k}: F {v['F']:.2f}, p {v['p']:.3g}" for k, v in metrics["anova"].items())
    return "\n".join(lines) + f"\n\nOne-way ANOVA across methods — {anova}.\n"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("metrics", nargs="+", type=Path)
    for path in ap.parse_args().metrics:
        m = json.loads(path.read_text())
        print(f"### {path.stem} ({m['data']['questions']} questions, {m['data']['bootstrap_resamples']} resamples)\n")
        print(table(m))


if __name__ == "__main__":
    main()
