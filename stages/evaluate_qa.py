"""Stage evaluate_qa: ROUGE-2, ROUGE-SU4 and BERTScore per chunk method with bootstrap CIs,
one-way ANOVA + Tukey HSD across methods, plot tables and a PNG.

Writes metrics/qa-<dataset>.json (per method, with intervals; ANOVA F and p per metric),
the comparison report as JSON and Markdown, per-question scores, and plots/qa-<dataset>/.
"""

import logging
from pathlib import Path

from biochunk import cli, params
from biochunk.evaluation import compare
from biochunk.evaluation import qa as evaluation
from biochunk.evaluation.retrieval import gold_hits
from biochunk.io import CHUNKS, QA_ANSWERS, QA_CONTEXTS, QA_SAMPLE, atomic_path, read_json, read_table, write_json
from biochunk.models import resolve

log = logging.getLogger("evaluate_qa")


def main() -> None:
    ap = cli.ArgumentParser(description=__doc__)
    ap.add_argument("--dataset", required=True)
    ap.add_argument("--qa", required=True, type=Path, help="qa_context folder: questions, chunks, contexts")
    ap.add_argument("--answers", required=True, type=Path, help="generate_qa folder: answers.parquet, report.json")
    ap.add_argument("--metrics", required=True, type=Path)
    ap.add_argument("--report", required=True, type=Path, help="folder: comparison.json, comparison.md, scores.csv")
    ap.add_argument("--plots", required=True, type=Path, help="folder: f1.csv, pr.csv, chunk_sizes.csv, summary.png")
    ap.add_argument("--params", default="params.yaml")
    args = ap.parse_args()
    ep = params.section("evaluate", args.params)
    qp = params.section("evaluate_qa", args.params)
    model = resolve(qp.bertscore_model, "evaluate_qa.bertscore_model")
    questions = read_table(args.qa / "questions.parquet", QA_SAMPLE)
    chunks = read_table(args.qa / "chunks.parquet", CHUNKS)
    answers = read_table(args.answers / "answers.parquet", QA_ANSWERS)
    answered = questions[questions["role"] == "answer"]

    scores = evaluation.score_answers(answers, answered, model, qp.bertscore_layers, qp.bertscore_batch_size)
    hits = gold_hits(read_table(args.qa / "contexts.parquet", QA_CONTEXTS), answered)
    per_method = evaluation.summary(scores, hits, ep.bootstrap, ep.seed)
    report = compare.compare(scores, evaluation.COMPARED, ep.bootstrap, ep.seed)
    gen = read_json(args.answers / "report.json")
    metrics = {
        **per_method,
        "anova": {m: {"F": r["anova"]["F"], "p": r["anova"]["p"]} for m, r in report["metrics"].items()},
        "data": {
            "questions": int(len(answered)),
            "empty_answers": int(sum(m["empty_answers"] for m in gen["methods"].values())),
            "bootstrap_resamples": ep.bootstrap,
        },
    }
    write_json(metrics, args.metrics)
    with atomic_path(args.report) as tmp:
        tmp.mkdir(parents=True)
        write_json(report, tmp / "comparison.json")
        (tmp / "comparison.md").write_text(compare.to_markdown(report, f"{args.dataset}: answers across chunk methods"))
        scores.to_csv(tmp / "scores.csv", index=False)
    bars, pr, hist = evaluation.bars_table(per_method), evaluation.pr_table(per_method), evaluation.histogram_table(chunks)
    with atomic_path(args.plots) as tmp:
        tmp.mkdir(parents=True)
        bars.to_csv(tmp / "f1.csv", index=False)
        pr.to_csv(tmp / "pr.csv", index=False)
        hist.to_csv(tmp / "chunk_sizes.csv", index=False)
        evaluation.summary_png(bars, pr, hist, f"{args.dataset}: {len(answered)} questions", tmp / "summary.png")
    for method, m in per_method.items():
        log.info(
            "%-10s ROUGE-2 F1 %.4f [%.4f, %.4f]  SU4 F1 %.4f  BERTScore F1 %.4f",
            method, m["rouge2_f1"], m["rouge2_f1_ci_low"], m["rouge2_f1_ci_high"], m["rougesu4_f1"], m["bertscore_f1"],
        )  # fmt: skip
    for m, r in report["metrics"].items():
        log.info("ANOVA %s: F %.3f p %.4g", m, r["anova"]["F"], r["anova"]["p"])


if __name__ == "__main__":
    cli.run(main)
