"""Stage generate_qa: the generator answers every sampled question once per chunk method.

Each method's prompts share one prefix (system role + in-context examples from
another split, with their own retrieved context), so it is encoded once per method.
Writes answers.parquet (QA_ANSWERS: prompt, raw output, parsed answer) and report.json.
"""

import logging
import time
from pathlib import Path

import pandas as pd

from biochunk import cli, models, params
from biochunk.generation import generator
from biochunk.generation.model import load_causal_lm
from biochunk.generation.qa import Turn, context_texts, example_turns, parse_answer, parse_yesno, prompt_parts, qa_user, system_qa
from biochunk.io import CHUNKS, QA_ANSWERS, QA_CONTEXTS, QA_SAMPLE, atomic_path, read_json, read_table, write_json, write_table

log = logging.getLogger("generate_qa")


def main() -> None:
    ap = cli.ArgumentParser(description=__doc__)
    ap.add_argument("--qa", required=True, type=Path, help="qa_context folder: questions, chunks, contexts")
    ap.add_argument("--out", required=True, type=Path, help="folder: answers.parquet, report.json")
    ap.add_argument("--params", default="params.yaml")
    args = ap.parse_args()
    qp = params.section("qa", args.params)
    gp = params.section("generate", args.params)
    models.require([(gp.model, "generate.model")])
    questions = read_table(args.qa / "questions.parquet", QA_SAMPLE)
    chunks = read_table(args.qa / "chunks.parquet", CHUNKS)
    found = read_table(args.qa / "contexts.parquet", QA_CONTEXTS)
    texts = context_texts(found, chunks, qp.context_words)
    answered = questions[questions["role"] == "answer"]
    pool = questions[questions["role"] == "example"]
    lm = load_causal_lm(gp.model, "generate.model", gp.quantize)

    rows, report = [], {"methods": {}}
    # The arms qa_context built (qa.contexts); "none" has no context rows, so it is named there.
    # qa.examples_by_type: each question type (yesno, factoid, ...) gets its own examples, so
    # its own shared prefix; otherwise one group of every answered question.
    groups = [g for _, g in answered.groupby("type", sort=True)] if qp.examples_by_type else [answered]
    for method in read_json(args.qa / "report.json")["arms"]:
        seconds, n_tokens, n_answers, n_examples, empty = 0.0, 0, 0, [], 0
        for group in groups:
            examples = example_turns(pool, texts, method, qp.n_examples, group["type"] if qp.examples_by_type else None)
            contexts = [texts.get((i, method), "") for i in group["id"]]
            parts = [
                prompt_parts(lm.tokenizer, system_qa(qp.decline), examples, Turn(qa_user(q, c)))
                for q, c in zip(group["question"], contexts)
            ]
            prefix = parts[0][0] if parts else ""
            t0 = time.perf_counter()
            raw = generator.generate(lm, prefix, [s for _, s in parts], qp.max_new_tokens, gp.gen_batch_size)
            seconds += time.perf_counter() - t0
            for qid, context, (a, b), text in zip(group["id"], contexts, parts, raw):
                rows.append(
                    {
                        "question_id": qid,
                        "method": method,
                        "context": context,
                        "prompt": a + b,
                        "raw_output": text,
                        "answer": parse_answer(text),
                        "yesno": parse_yesno(text),
                    }
                )
            n_tokens += sum(len(lm.tokenizer(t, add_special_tokens=False).input_ids) for t in raw)
            n_answers += len(raw)
            n_examples.append(len(examples))
            empty += sum(not parse_answer(t) for t in raw)
        report["methods"][method] = {
            "examples": min(n_examples, default=0), "answers": n_answers, "empty_answers": empty,
            "seconds": seconds, "generated_tokens_per_s": n_tokens / seconds if seconds else 0.0,
        }  # fmt: skip
        log.info(
            "%s: %d answers in %.0f s (%.1f generated tokens/s)",
            method,
            n_answers,
            seconds,
            report["methods"][method]["generated_tokens_per_s"],
        )
    df = pd.DataFrame(rows, columns=QA_ANSWERS.names)
    report["model"] = gp.model
    report["decline"] = qp.decline
    # The prompt's budget beside the answers, so a results table states it from this run's outputs.
    report |= {"context_words": qp.context_words, "n_examples": qp.n_examples, "max_new_tokens": qp.max_new_tokens}
    with atomic_path(args.out) as tmp:
        tmp.mkdir(parents=True)
        write_table(df, tmp / "answers.parquet", QA_ANSWERS)
        write_json(report, tmp / "report.json")


if __name__ == "__main__":
    cli.run(main)
