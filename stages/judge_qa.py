"""Stage judge_qa: an LLM judge rates every arm's answer to every question on the clinical
study's two 3-point scales, medical accuracy and clinical relevance (a proxy of its clinician
ratings; the rubric quotes the paper: biochunk.evaluation.judge).

Reads qa_context's questions (with their gold answers) and arms, and generate_qa's answers.
Writes ratings.parquet (judge.RATINGS: one row per question, arm and scale, the reply as
written and the rating read from it, empty where the reply gives none) and report.json (the
judge's settings and rubric, per arm and scale the replies rated and unparseable, time).
The judge's settings come on the command line, from experiments/clinical/judge.yaml.
"""

import argparse
import logging
import time
from pathlib import Path

from biochunk import cli, models
from biochunk.evaluation import judge
from biochunk.generation import generator
from biochunk.generation.model import QUANTIZE, load_causal_lm
from biochunk.io import QA_ANSWERS, QA_SAMPLE, atomic_path, read_json, read_table, write_json, write_table

log = logging.getLogger("judge_qa")


def _positive(key: str):
    def parse(value: str) -> int:
        n = int(value) if value.lstrip("-").isdigit() else 0
        if n < 1:
            raise argparse.ArgumentTypeError(f"{key} must be a whole number of at least 1, got {value!r}")
        return n

    return parse


def main() -> None:
    ap = cli.ArgumentParser(description=__doc__)
    ap.add_argument("--qa", required=True, type=Path, help="qa_context folder: questions.parquet, report.json")
    ap.add_argument("--answers", required=True, type=Path, help="generate_qa folder: answers.parquet, report.json")
    ap.add_argument("--out", required=True, type=Path, help="folder: ratings.parquet, report.json")
    ap.add_argument("--model", required=True, help="judge.model: an offline alias, a hub id or a local path")
    ap.add_argument("--quantize", default="auto", choices=QUANTIZE, help="judge.quantize")
    ap.add_argument("--max-new-tokens", type=_positive("judge.max_new_tokens"), default=4, help="judge.max_new_tokens")
    ap.add_argument("--batch-size", type=_positive("judge.batch_size"), default=16, help="judge.batch_size: prompts decoded together")
    args = ap.parse_args()
    models.require([(args.model, "judge.model")])
    questions = read_table(args.qa / "questions.parquet", QA_SAMPLE)
    answers = read_table(args.answers / "answers.parquet", QA_ANSWERS)
    arms = read_json(args.qa / "report.json")["arms"]
    rated = judge.items(questions, answers, arms)
    lm = load_causal_lm(args.model, "judge.model", args.quantize)

    raw, seconds = {}, {}
    for name, scale in judge.SCALES.items():
        prefix, suffixes = judge.prompts(lm.tokenizer, scale, rated)
        t0 = time.perf_counter()
        raw[name] = generator.generate(lm, prefix, suffixes, args.max_new_tokens, args.batch_size)
        seconds[name] = time.perf_counter() - t0
        log.info("%s: %d answers rated in %.0f s", scale.name, len(suffixes), seconds[name])
    table = judge.ratings(rated, raw)
    counts = judge.counts(table)
    unparseable = int(table["rating"].isna().sum())
    if unparseable:
        log.warning("%d of %d replies give no rating 1-3 (left empty, counted in report.json)", unparseable, len(table))
    report = {
        "model": args.model, "quantize": args.quantize, "max_new_tokens": args.max_new_tokens, "batch_size": args.batch_size,
        "generator": read_json(args.answers / "report.json").get("model"),
        "arms": [a for a in arms if a in counts], "questions": int(rated["question_id"].nunique()), "answers": len(rated),
        "replies": len(table), "unparseable": unparseable, "counts": counts,
        "rubric": {name: judge.system_message(s) for name, s in judge.SCALES.items()},
        "user_template": judge.user_message("{question}", ["{references}"], "{answer}"), "cue": judge.CUE,
        "seconds": seconds,
    }  # fmt: skip
    with atomic_path(args.out) as tmp:
        tmp.mkdir(parents=True)
        write_table(table, tmp / "ratings.parquet", judge.RATINGS)
        write_json(report, tmp / "report.json")


if __name__ == "__main__":
    cli.run(main)
