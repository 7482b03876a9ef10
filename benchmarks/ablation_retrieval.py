"""The configurable-semantic-chunking ablation ladder at retrieval level, on real data.

    python benchmarks/ablation_retrieval.py --data data/interim/gm-ciht --dataset gm-ciht

For each rung (fixed -> +entity-aware -> +proposition -> +tiered triggers -> +hierarchy, and
the mixed-ranking and NER variants) it builds the chunk memory from the training split,
embeds it, retrieves and selects chunks for every test sentence exactly as the rank stage
does, and reports, with 95% bootstrap intervals over test sentences:

- relation_hit@1 / @k: the selected top-1 / top-k chunks carry the gold relation (the
  signal that separates chunking strategies when the generator is a small CPU model);
- complete@1: the top-1 chunk holds the head, a trigger and the tail of the sentence it was
  cut from (self-contained relational evidence, what propositions aim at).

Embeddings are cached by chunk text across rungs (the fixed windows recur in every pool),
so the ladder costs little more than one embedding pass over the distinct chunks. The
end-to-end F1 of each rung needs the scorer and generator: run `make ablation`.
Writes a JSON table and a PNG beside the paper's numbers (../shared/docs/references.md).
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import logging
import time
from pathlib import Path

import numpy as np
import pandas as pd

from biochunk import chunking, params
from biochunk.chunking.biomedical.triggers import dataset_lexicon, find_triggers
from biochunk.chunking.biomedical.words import tokens
from biochunk.corpus import inputs, memory_documents, read_triples
from biochunk.embedding import Encoder
from biochunk.evaluation.stats import bootstrap_ci
from biochunk.io import write_json
from biochunk.retrieval.dense import build_index
from biochunk.retrieval.rank import pool_selector, rank_inputs

log = logging.getLogger("ablation")

# (rung, chunk.* overrides, the paper's GM-CIHT F1 for the same rung)
HYBRID_OFF = {"method": "hybrid", "entity_windows": False, "propositions": False, "tiers": False, "hierarchy": False}
LADDER = [
    ("fixed", {"method": "fixed"}, 74.2),
    ("+entity-aware", {**HYBRID_OFF, "entity_windows": True}, 76.1),
    ("+proposition", {**HYBRID_OFF, "entity_windows": True, "propositions": True}, 76.3),
    ("+tiered triggers", {**HYBRID_OFF, "entity_windows": True, "propositions": True, "tiers": True}, 78.7),
    ("+hierarchy (hybrid)", {"method": "hybrid"}, 82.6),
    ("hybrid, mixed ranking", {"method": "hybrid", "ranking": "mixed"}, 79.4),
    ("hybrid, NER entities", {"method": "hybrid", "entities": "ner"}, 81.5),
]


class CachedEncoder:
    """Encodes each distinct text once across all rungs."""

    def __init__(self, encoder: Encoder):
        self.encoder = encoder
        self.cache: dict[str, np.ndarray] = {}

    def encode(self, texts: list[str]) -> np.ndarray:
        new = sorted({t for t in texts if t not in self.cache})
        if new:
            for t, v in zip(new, self.encoder.encode(new, progress=True)):
                self.cache[t] = v
        return np.stack([self.cache[t] for t in texts]) if texts else np.zeros((0, self.encoder.dim), np.float32)


def complete(text: str, head: str, tail: str, lexicon) -> bool:
    low = text.lower()
    return head.lower() in low and tail.lower() in low and bool(find_triggers(tokens(text), lexicon))


def run(data: Path, dataset: str, k: int, n_boot: int, rungs: list[str] | None) -> list[dict]:
    base = params.section("chunk", data={})
    triples = read_triples(data, ("train", "test"))
    train, test = triples[triples.split == "train"], triples[triples.split == "test"]
    docs = memory_documents(train)
    first = train.drop_duplicates("id").set_index("id")
    lexicon = dataset_lexicon(dataset)
    enc = CachedEncoder(Encoder("minilm"))
    queries = inputs(test)
    qv = enc.encoder.encode(queries["sentence"].tolist(), progress=True)
    gold = test.groupby("id")["relation"].agg(set).reindex(queries["id"]).tolist()
    rows = []
    for name, overrides, paper in LADDER:
        if rungs and name not in rungs:
            continue
        t0 = time.time()
        cp = dataclasses.replace(base, **overrides)
        chunks = chunking.chunk_corpus(docs, chunking.build(cp, enc, dataset=dataset))
        cv = enc.encode([c.text for c in chunks])
        selector = pool_selector([json.dumps(c.metadata) for c in chunks], cp.ranking, cp.top_n, k)
        depth = max(k, cp.top_n) if selector else k
        ranked = rank_inputs(build_index(cv), queries, qv, [c.chunk_id for c in chunks], [c.doc_id for c in chunks], k, selector, depth)
        by_id = {c.chunk_id: c for c in chunks}
        lists = ranked.sort_values(["input_id", "rank"]).groupby("input_id")["chunk_id"].agg(list).reindex(queries["id"])
        rel = np.array([[bool(set(by_id[c].labels) & g) for c in cs] for cs, g in zip(lists, gold)], dtype=float)
        comp = np.array(
            [complete(by_id[cs[0]].text, first.loc[by_id[cs[0]].doc_id, "head"], first.loc[by_id[cs[0]].doc_id, "tail"], lexicon) for cs in lists],
            dtype=float,
        )
        row = {"rung": name, "chunks": len(chunks), "paper_f1": paper, "seconds": round(time.time() - t0, 1)}
        for key, vals in (("relation_hit@1", rel[:, 0]), (f"relation_hit@{k}", rel.max(axis=1)), ("complete@1", comp)):
            lo, hi = bootstrap_ci(vals, np.mean, n_boot, 42)
            row.update({key: float(vals.mean()), f"{key}_ci_low": lo, f"{key}_ci_high": hi})
        log.info("%s", {a: (round(b, 3) if isinstance(b, float) else b) for a, b in row.items() if "ci" not in a})
        rows.append(row)
    return rows


def plot(rows: list[dict], k: int, title: str, path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    names = [r["rung"] for r in rows]
    x = np.arange(len(rows))
    fig, ax = plt.subplots(figsize=(11, 4.5))
    for off, key, color in ((-0.2, "relation_hit@1", "tab:blue"), (0.2, f"relation_hit@{k}", "tab:orange")):
        val = np.array([r[key] for r in rows])
        err = np.array([[r[key] - r[f"{key}_ci_low"] for r in rows], [r[f"{key}_ci_high"] - r[key] for r in rows]])
        ax.bar(x + off, val, 0.4, yerr=err, capsize=3, label=f"{key} (this pipeline, MiniLM)", color=color)
    ax.plot(x, [r["paper_f1"] / 100 for r in rows], "k*--", label="paper end-to-end F1 / 100 (Llama-2-13B)")
    ax.set_xticks(x, names, rotation=20, ha="right")
    ax.set(ylim=(0, 1), ylabel="share of test sentences", title=title)
    ax.legend(loc="lower right", fontsize=8)
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=100)


def main() -> None:
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(message)s", datefmt="%H:%M:%S")
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data", type=Path, required=True, help="converted dataset folder (data/interim/<dataset>)")
    ap.add_argument("--dataset", required=True)
    ap.add_argument("--k", type=int, default=5)
    ap.add_argument("--bootstrap", type=int, default=1000)
    ap.add_argument("--rungs", nargs="*", help="only these rungs (names as in the table)")
    ap.add_argument("--out", type=Path, help="JSON table (default metrics/ablation-<dataset>.json)")
    args = ap.parse_args()
    rows = run(args.data, args.dataset, args.k, args.bootstrap, args.rungs)
    out = args.out or Path("metrics") / f"ablation-{args.dataset}.json"
    write_json({"dataset": args.dataset, "k": args.k, "rungs": rows}, out)
    plot(rows, args.k, f"{args.dataset}: chunk selection ablation (test split)", Path("plots") / f"ablation-{args.dataset}.png")
    print(pd.DataFrame(rows)[["rung", "chunks", "relation_hit@1", f"relation_hit@{args.k}", "complete@1", "paper_f1", "seconds"]].to_markdown(index=False, floatfmt=".3f"))


if __name__ == "__main__":
    main()
