"""The configurable-semantic-chunking ablation ladder at retrieval level, on real data.

    python benchmarks/ablation_retrieval.py --data data/interim/gm-ciht --dataset gm-ciht

For each rung (fixed -> +entity-aware -> +proposition -> +tiered triggers -> +hierarchy, and
the mixed-ranking and NER variants) it builds the chunk memory from the training split,
embeds it, retrieves and selects chunks for every test sentence exactly as the rank stage
does, and reports, with 95% bootstrap intervals over test sentences:

- relation_hit@1 / @k: the selected top-1 / top-k chunks carry the gold relation (the
  signal that separates chunking strategies when the generator is a small CPU model);
- complete@1: the top-1 chunk holds the head, a trigger and the tail of the sentence it was
  cut from (self-contained relational evidence, what propositions aim at);
- relation_hit@k_cap<m>: relation_hit@k with at most m chunks per source sentence in the
  top-k (``rank.max_per_doc``), against near-duplicate windows crowding the top-k.

Embeddings are cached by chunk text across rungs (the fixed windows recur in every pool),
so the ladder costs little more than one embedding pass over the distinct chunks. The
end-to-end F1 of each rung needs the scorer and generator: experiments/biomedrag/dvc.yaml.
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
from biochunk.embedding import MemoEncoder, SentenceEncoder
from biochunk.evaluation.stats import bootstrap_ci
from biochunk.io import write_json
from biochunk.retrieval.dense import build_index
from biochunk.retrieval.rank import pool_selector, rank_inputs

log = logging.getLogger("ablation")

# (rung, chunk.* overrides)
HYBRID_OFF = {"method": "hybrid", "entity_windows": False, "propositions": False, "tiers": False, "hierarchy": False}
LADDER = [
    ("fixed", {"method": "fixed"}),
    ("+entity-aware", {**HYBRID_OFF, "entity_windows": True}),
    ("+proposition", {**HYBRID_OFF, "entity_windows": True, "propositions": True}),
    ("+tiered triggers", {**HYBRID_OFF, "entity_windows": True, "propositions": True, "tiers": True}),
    ("+hierarchy (hybrid)", {"method": "hybrid"}),
    ("hybrid, mixed ranking", {"method": "hybrid", "selection": "mixed"}),
    ("hybrid, NER entities", {"method": "hybrid", "entities": "ner"}),
    # The hierarchy orderings (chunk.hierarchy_order): they move propositions' priorities, so
    # under the bias selection they show in the second chunk read (--k 2), not in the top-1.
    ("hybrid, flat hierarchy", {"method": "hybrid", "hierarchy_order": "flat"}),
    ("hybrid, inverted hierarchy", {"method": "hybrid", "hierarchy_order": "inverted"}),
]
# The paper's end-to-end F1 per rung (../shared/docs/references.md): the whole ladder on
# GM-CIHT, fixed and hybrid only on DDI and ChemProt.
PAPER_F1 = {
    "gm-ciht": dict(zip([r for r, _ in LADDER], [74.2, 76.1, 76.3, 78.7, 82.6, 79.4, 81.5])),
    "ddi": {"fixed": 78.2, "+hierarchy (hybrid)": 79.2},
    "chemprot": {"fixed": 87.4, "+hierarchy (hybrid)": 86.6},
}


def complete(text: str, head: str, tail: str, lexicon) -> bool:
    low = text.lower()
    return head.lower() in low and tail.lower() in low and bool(find_triggers(tokens(text), lexicon))


def run(
    data: Path, dataset: str, k: int, n_boot: int, rungs: list[str] | None, caps: list[int], per_sentence: dict | None = None
) -> list[dict]:
    """The table's rows; with ``per_sentence`` (a dict) also each rung's per-test-sentence values
    of every measure, keyed by rung, for paired comparisons."""
    base = params.section("chunk", data={})
    rank = params.section("rank", data={})
    triples = read_triples(data, ("train", "test"))
    train, test = triples[triples.split == "train"], triples[triples.split == "test"]
    docs = memory_documents(train)
    first = train.drop_duplicates("id").set_index("id")
    lexicon = dataset_lexicon(dataset)
    enc = MemoEncoder(SentenceEncoder("minilm"))
    queries = inputs(test)
    qv = enc.inner.encode(queries["sentence"].tolist(), progress=True)
    gold = test.groupby("id")["relation"].agg(set).reindex(queries["id"]).tolist()
    rows = []
    for name, overrides in LADDER:
        paper = PAPER_F1.get(dataset, {}).get(name)
        if rungs and name not in rungs:
            continue
        t0 = time.time()
        selection = overrides.get("selection", rank.selection)  # a rank.* key, not a chunk.* one
        cp = dataclasses.replace(base, **{key: v for key, v in overrides.items() if key != "selection"})
        chunks = chunking.chunk_corpus(docs, chunking.build(cp, enc, dataset=dataset))
        cv = enc.encode([c.text for c in chunks], progress=True)
        selector = pool_selector([json.dumps(c.metadata) for c in chunks], selection, rank.top_n)
        depth = max(k, rank.top_n)
        index, ids, docs_of = build_index(cv), [c.chunk_id for c in chunks], [c.doc_id for c in chunks]
        by_id = {c.chunk_id: c for c in chunks}

        def hits(ranked: pd.DataFrame) -> tuple[pd.Series, np.ndarray]:
            lists = ranked.sort_values(["input_id", "rank"]).groupby("input_id")["chunk_id"].agg(list).reindex(queries["id"])
            return lists, np.array([[bool(set(by_id[c].labels) & g) for c in cs] for cs, g in zip(lists, gold)], dtype=float)

        def top(ranked: pd.DataFrame) -> pd.DataFrame:
            return ranked[ranked["rank"] <= k]

        lists, rel = hits(top(rank_inputs(index, queries, qv, ids, docs_of, depth, selector)))
        capped = {m: hits(top(rank_inputs(index, queries, qv, ids, docs_of, depth, selector, m)))[1] for m in caps}
        comp = np.array(
            [complete(by_id[cs[0]].text, first.loc[by_id[cs[0]].doc_id, "head"], first.loc[by_id[cs[0]].doc_id, "tail"], lexicon) for cs in lists],
            dtype=float,
        )
        row = {"rung": name, "chunks": len(chunks), "paper_f1": paper, "seconds": round(time.time() - t0, 1)}
        measures = [("relation_hit@1", rel[:, 0]), (f"relation_hit@{k}", rel.max(axis=1)), ("complete@1", comp)]
        measures += [(f"relation_hit@{k}_cap{m}", r.max(axis=1)) for m, r in capped.items()]
        for key, vals in measures:
            lo, hi = bootstrap_ci(vals, np.mean, n_boot, 42)
            row.update({key: float(vals.mean()), f"{key}_ci_low": lo, f"{key}_ci_high": hi})
        if per_sentence is not None:
            per_sentence[name] = {
                "input_id": queries["id"].astype(str).tolist(),
                **{key: vals.tolist() for key, vals in measures},
            }
        log.info("%s", {a: (round(b, 3) if isinstance(b, float) else b) for a, b in row.items() if "ci" not in a})
        rows.append(row)
    return rows


def plot(rows: list[dict], k: int, title: str, path: Path, caps: list[int]) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    names = [r["rung"] for r in rows]
    x = np.arange(len(rows))
    fig, ax = plt.subplots(figsize=(11, 4.5))
    keys = ["relation_hit@1", f"relation_hit@{k}"] + [f"relation_hit@{k}_cap{m}" for m in caps[:1]]
    width = 0.8 / len(keys)
    for n, (key, color) in enumerate(zip(keys, ("tab:blue", "tab:orange", "tab:green"))):
        val = np.array([r[key] for r in rows])
        err = np.array([[r[key] - r[f"{key}_ci_low"] for r in rows], [r[f"{key}_ci_high"] - r[key] for r in rows]])
        off = (n - (len(keys) - 1) / 2) * width
        ax.bar(x + off, val, width, yerr=err, capsize=3, label=f"{key} (this pipeline, MiniLM)", color=color)
    paper = [np.nan if r["paper_f1"] is None else r["paper_f1"] / 100 for r in rows]
    if not np.all(np.isnan(paper)):
        ax.plot(x, paper, "k*", markersize=10, label="paper end-to-end F1 / 100 (Llama-2-13B)")
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
    ap.add_argument("--caps", type=int, nargs="*", default=[1], help="rank.max_per_doc values to measure relation_hit@k under")
    ap.add_argument("--plot", type=Path, help="PNG (default plots/ablation-<dataset>.png)")
    ap.add_argument("--per-sentence", type=Path, help="also write each rung's per-test-sentence values here (JSON)")
    args = ap.parse_args()
    unknown = sorted(set(args.rungs or []) - {name for name, _ in LADDER})
    if unknown:
        raise SystemExit(f"--rungs: unknown rung {unknown[0]!r}; the rungs: {', '.join(name for name, _ in LADDER)}")
    per: dict | None = {} if args.per_sentence else None
    rows = run(args.data, args.dataset, args.k, args.bootstrap, args.rungs, args.caps, per)
    out = args.out or Path("metrics") / f"ablation-{args.dataset}.json"
    write_json({"dataset": args.dataset, "k": args.k, "rungs": rows}, out)
    if per is not None:
        write_json({"dataset": args.dataset, "k": args.k, "rungs": per}, args.per_sentence)
    png = args.plot or Path("plots") / f"ablation-{args.dataset}.png"
    plot(rows, args.k, f"{args.dataset}: chunk selection ablation (test split)", png, args.caps)
    capped = [f"relation_hit@{args.k}_cap{m}" for m in args.caps]
    cols = ["rung", "chunks", "relation_hit@1", f"relation_hit@{args.k}", *capped, "complete@1", "paper_f1", "seconds"]
    print(pd.DataFrame(rows)[cols].to_markdown(index=False, floatfmt=".3f"))


if __name__ == "__main__":
    main()
