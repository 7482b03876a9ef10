"""Stage generate: the generator writes head | relation | tail for each test sentence."""

import logging
from pathlib import Path

import pandas as pd

from biochunk import cli, models, params
from biochunk.corpus import relation_definitions
from biochunk.generation import generator
from biochunk.generation.model import load_causal_lm
from biochunk.generation.prompts import parse_triples, prompt_parts
from biochunk.generation.triples import evidence_by_input, pick_examples, training_pairs
from biochunk.io import CHUNKS, PREDICTIONS, RANKINGS, TRIPLES, atomic_path, read_table, write_json, write_table

log = logging.getLogger("generate")


def main() -> None:
    ap = cli.ArgumentParser(description=__doc__)
    ap.add_argument("--chunks", required=True, type=Path)
    ap.add_argument("--data", required=True, type=Path, help="converted dataset folder")
    ap.add_argument("--rankings", required=True, type=Path, help="re-scored rankings")
    ap.add_argument("--config", required=True, type=Path, help="dataset config (relation inventory)")
    ap.add_argument("--out", required=True, type=Path, help="folder: predictions.parquet, adapter/, report.json")
    ap.add_argument("--params", default="params.yaml")
    args = ap.parse_args()
    p = params.section("generate", args.params)
    models.require([(p.model, "generate.model")])
    relations = list(relation_definitions(args.config))
    chunks = read_table(args.chunks, CHUNKS)
    train = read_table(args.data / "train.parquet", TRIPLES)
    test = read_table(args.data / "test.parquet", TRIPLES).drop_duplicates("id")
    if p.max_inputs is not None:
        test = test.head(p.max_inputs)
    evidence = evidence_by_input(read_table(args.rankings, RANKINGS), chunks, p.n_chunks)
    most = max((len(e) for e in evidence.values()), default=0)
    if evidence and most < p.n_chunks:
        log.warning("generate.n_chunks=%d but the re-scored rankings hold at most %d chunks per input (rank.top_k): "
                    "the prompts carry %d", p.n_chunks, most, most)
    examples = pick_examples(train, evidence, p.n_examples, p.seed)
    lm = load_causal_lm(p.model, "generate.model", p.quantize)
    stats: dict = {"examples": len(examples), "test_inputs": len(test), "evidence_chunks_max": most}
    if p.train_steps > 0:
        generator.add_lora(lm, p.lora_r, p.seed)
        pairs = training_pairs(train, evidence, examples, relations)
        stats["finetune"] = {"examples": len(pairs), **generator.finetune(lm, pairs, p.train_steps, p.batch_size, p.lr, p.seed)}
        log.info("fine-tuned: %s", stats["finetune"])
    parts = [prompt_parts(s, evidence.get(str(i), []), examples, relations) for i, s in zip(test["id"], test["sentence"])]
    prefix = parts[0][0] if parts else ""
    raw = generator.generate(lm, prefix, [suffix for _, suffix in parts], p.max_new_tokens, p.gen_batch_size)
    prompts = [a + b for a, b in parts]
    rows = []
    for (iid, sent), prompt, text in zip(zip(test["id"], test["sentence"]), prompts, raw):
        triples = parse_triples(text, relations)
        rows.append({"id": iid, "sentence": sent, "prompt": prompt, "raw_output": text, "triples": [list(t) for t in triples], "parsed": bool(triples)})
    df = pd.DataFrame(rows, columns=PREDICTIONS.names)
    stats["unparsed_outputs"] = int((~df["parsed"]).sum()) if len(df) else 0
    with atomic_path(args.out) as tmp:
        tmp.mkdir(parents=True)
        write_table(df, tmp / "predictions.parquet", PREDICTIONS)
        generator.save_adapter(lm, tmp / "adapter")
        write_json(stats, tmp / "report.json")
    log.info("%d predictions, %d unparsed", len(df), stats["unparsed_outputs"])


if __name__ == "__main__":
    cli.run(main)
