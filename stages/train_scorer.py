"""Stage train_scorer: LoRA chunk scorer trained on the training inputs' pools; re-orders the
``rank.top_k`` chunks that selection passed on, which is what the generator reads."""

import logging
from pathlib import Path

import pandas as pd

from biochunk import cli, models, params
from biochunk.corpus import read_triples
from biochunk.io import CHUNKS, RANKINGS, atomic_path, read_table, write_json, write_table
from biochunk.scoring.lora_scorer import ChunkScorer, candidates_for, sample_ids, score, train

log = logging.getLogger("train_scorer")


def main() -> None:
    ap = cli.ArgumentParser(description=__doc__)
    ap.add_argument("--chunks", required=True, type=Path)
    ap.add_argument("--data", required=True, type=Path, help="converted dataset folder")
    ap.add_argument("--rankings", required=True, type=Path)
    ap.add_argument("--out", required=True, type=Path, help="folder: adapter/, head.pt, rescored.parquet, report.json")
    ap.add_argument("--params", default="params.yaml")
    args = ap.parse_args()
    p = params.section("train_scorer", args.params)
    rp = params.section("rank", args.params)
    models.require([(p.model, "train_scorer.model")])
    chunks = read_table(args.chunks, CHUNKS)
    triples = read_triples(args.data)
    rankings = read_table(args.rankings, RANKINGS)
    sentences = dict(zip(triples["id"].astype(str), triples["sentence"]))
    gold = triples.groupby("id")["relation"].agg(set).to_dict()
    scorer = ChunkScorer(p.model, p.lora_r, p.max_length, p.seed)
    _, train_data, _ = candidates_for(rankings[rankings["split"] == "train"], chunks, sentences, gold)
    stats = train(scorer, train_data, p.steps, p.batch_size, p.lr, p.seed)
    log.info("scorer: %s", stats)
    # The scorer learns from whole pools (more candidates, more signal) but re-orders only the
    # first rank.top_k of each, the chunks selection passes on. Re-scored: the test inputs, and
    # a seeded sample of training inputs that the generator fine-tunes on. dev stays dense-only:
    # nothing downstream reads it.
    keep = set(rankings.loc[rankings["split"] == "test", "input_id"])
    keep |= sample_ids(rankings.loc[rankings["split"] == "train", "input_id"], p.rescore_train, p.seed)
    selected = rankings[rankings["input_id"].isin(keep) & (rankings["rank"] <= rp.top_k)]
    rows = []
    for split, part in selected.groupby("split", sort=True):
        ids, data, chunk_lists = candidates_for(part, chunks, sentences, gold)
        for iid, scores, cids in zip(ids, score(scorer, data), chunk_lists):
            order = sorted(range(len(cids)), key=lambda j: (-scores[j], j))
            rows += [(split, iid, r, cids[j], float(scores[j]), "scorer") for r, j in enumerate(order, 1)]
    with atomic_path(args.out) as tmp:
        scorer.save(tmp)
        write_table(pd.DataFrame(rows, columns=RANKINGS.names), tmp / "rescored.parquet", RANKINGS)
        write_json({**stats, "rescored_inputs": len(keep)}, tmp / "report.json")


if __name__ == "__main__":
    cli.run(main)
