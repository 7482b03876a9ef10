"""Stage classify: yes/no classification through retrieval + generation (ADE).

The training sentences, chunked by chunk.method, are the memory; each sampled test
sentence gets its top classify.n_chunks chunks with their labels as evidence, and the
generator answers yes or no. Writes predictions (raw output kept), the memory's chunks,
metrics (binary P/R/F1 with 95% bootstrap CIs; the evidence's majority vote as a
baseline), per-sentence scores (label, generator answer, vote: every interval and every paired
difference between two runs is recomputed from them) and a precision/recall plot table.
"""

import logging
from pathlib import Path

import pandas as pd

from biochunk import cli, models, params
from biochunk.chunking import models_used
from biochunk.embedding import SentenceEncoder
from biochunk.evaluation.classify import scores
from biochunk.evaluation.qa import pr_png
from biochunk.generation import classify, generator
from biochunk.generation.model import load_causal_lm
from biochunk.generation.qa import SYSTEM_CLASSIFY, Turn, classify_user, parse_yesno, prompt_parts
from biochunk.generation.rewrite import Rewriter
from biochunk.io import CHUNKS, CLASSIFICATION, CLASSIFY_PREDICTIONS, ITEM_SCORES, atomic_path, read_table, write_json, write_table

log = logging.getLogger("classify")


def main() -> None:
    ap = cli.ArgumentParser(description=__doc__)
    ap.add_argument("--dataset", required=True)
    ap.add_argument("--data", required=True, type=Path, help="converted dataset folder: train, test (CLASSIFICATION)")
    ap.add_argument("--out", required=True, type=Path, help="folder: predictions.parquet, chunks.parquet")
    ap.add_argument("--metrics", required=True, type=Path)
    ap.add_argument("--items", required=True, type=Path, help="per-sentence scores (Parquet, ITEM_SCORES)")
    ap.add_argument("--plots", required=True, type=Path, help="folder: pr.csv")
    ap.add_argument("--params", default="params.yaml")
    args = ap.parse_args()
    p = params.section("classify", args.params)
    cp = params.section("chunk", args.params)
    ep = params.section("embed", args.params)
    gp = params.section("generate", args.params)
    evp = params.section("evaluate", args.params)
    models.require([(ep.model, "embed.model"), *models_used(cp, ep.model), (gp.model, "generate.model")])
    train = read_table(args.data / "train.parquet", CLASSIFICATION)
    test = read_table(args.data / "test.parquet", CLASSIFICATION)
    if p.max_inputs is not None and len(test) > p.max_inputs:
        test = test.sample(n=p.max_inputs, random_state=p.seed).sort_index()

    encoder = SentenceEncoder(ep.model, ep.batch_size, ep.device)
    chunks = classify.memory(train, cp, encoder, rewriter=Rewriter, dataset=args.dataset)
    log.info(
        "%s: memory of %d chunks (%s) from %d training sentences; %d test sentences",
        args.dataset,
        len(chunks),
        cp.method,
        len(train),
        len(test),
    )
    examples = classify.pick_examples(train, p.n_examples, p.seed)
    ex_evidence = classify.evidence(chunks, examples, encoder, p.n_chunks, exclude_own=True)
    test_evidence = classify.evidence(chunks, test, encoder, p.n_chunks, exclude_own=False)

    lm = load_causal_lm(gp.model, "generate.model", gp.quantize)
    turns = [
        Turn(classify_user(t, ev), "yes" if y == 1 else "no")
        for t, y, ev in zip(examples["text"], examples["label"], ex_evidence)
    ]
    parts = [
        prompt_parts(lm.tokenizer, SYSTEM_CLASSIFY, turns, Turn(classify_user(t, ev)))
        for t, ev in zip(test["text"], test_evidence)
    ]
    raw = generator.generate(lm, parts[0][0] if parts else "", [s for _, s in parts], p.max_new_tokens, gp.gen_batch_size)
    parsed = [parse_yesno(r, anywhere=True) for r in raw]
    pred = [1 if a == "yes" else 0 if a == "no" else -1 for a in parsed]
    df = pd.DataFrame(
        {
            "id": test["id"],
            "text": test["text"],
            "label": test["label"],
            "prompt": [a + b for a, b in parts],
            "raw_output": raw,
            "prediction": pred,
        }
    )
    labels = test["label"].to_numpy()
    votes = [classify.vote(ev) for ev in test_evidence]
    metrics = {
        "generator": scores(labels, pred, evp.bootstrap, evp.seed),
        "evidence_vote": scores(labels, votes, evp.bootstrap, evp.seed),
        "data": {
            "test_inputs": len(test), "positives": int(labels.sum()), "unparsed_outputs": int(sum(x == -1 for x in pred)),
            "memory_chunks": len(chunks), "examples": len(turns),
        },
    }  # fmt: skip
    with atomic_path(args.out) as tmp:
        tmp.mkdir(parents=True)
        write_table(df, tmp / "predictions.parquet", CLASSIFY_PREDICTIONS)
        write_table(chunks, tmp / "chunks.parquet", CHUNKS)
    write_json(metrics, args.metrics)
    # One row per sentence and score; "generator" is 1 for yes, else 0 (an unparsed reply counts
    # as no, as in the metrics), "unparsed" flags the replies that said neither.
    per = {"label": labels, "generator": [int(x == 1) for x in pred], "unparsed": [int(x == -1) for x in pred], "vote": votes}
    items = [(str(i), name, float(v)) for name, values in per.items() for i, v in zip(test["id"], values)]
    write_table(pd.DataFrame(items, columns=ITEM_SCORES.names), args.items, ITEM_SCORES)
    with atomic_path(args.plots) as tmp:
        tmp.mkdir(parents=True)
        rows = [
            {"method": k, "metric": "ade", "recall": metrics[k]["recall"], "precision": metrics[k]["precision"]}
            for k in ("generator", "evidence_vote")
        ]
        pd.DataFrame(rows).to_csv(tmp / "pr.csv", index=False)
        pr_png(pd.DataFrame(rows), f"{args.dataset}: {len(test)} test sentences", tmp / "pr.png")
    for k in ("generator", "evidence_vote"):
        m = metrics[k]
        log.info(
            "%-13s P %.3f R %.3f F1 %.3f [%.3f, %.3f]", k, m["precision"], m["recall"], m["f1"], m["f1_ci_low"], m["f1_ci_high"]
        )
    log.info("unparsed outputs: %d of %d", metrics["data"]["unparsed_outputs"], len(test))


if __name__ == "__main__":
    cli.run(main)
