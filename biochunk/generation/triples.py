"""The triple-extraction flow of the generate stage: evidence, examples, prompts."""

from __future__ import annotations

import random

import pandas as pd

from biochunk.generation.prompts import Evidence, Example, format_triples, prompt_parts


def evidence_by_input(rankings: pd.DataFrame, chunks: pd.DataFrame, n: int) -> dict[str, list[Evidence]]:
    """The top-``n`` chunks of each input's (re-scored) ranking, as prompt evidence."""
    if n == 0:
        return {}
    top = rankings[rankings["rank"] <= n].sort_values(["input_id", "rank"])
    by_id = chunks.set_index("chunk_id")
    out: dict[str, list[Evidence]] = {}
    for iid, cid in zip(top["input_id"].astype(str), top["chunk_id"]):
        row = by_id.loc[cid]
        out.setdefault(iid, []).append(Evidence(str(row["text"]), tuple(row["labels"])))
    return out


def pick_examples(train: pd.DataFrame, evidence: dict[str, list[Evidence]], n: int, seed: int) -> list[Example]:
    """``n`` training sentences with distinct relations, chosen by seed, as worked examples.

    The same examples open every prompt of a run, so they form a shared prefix; their
    evidence comes from the leave-one-out ranking, as the input's does.
    """
    if n == 0:
        return []
    rng = random.Random(seed)
    # Only sentences with retrieved evidence (when evidence is used), so an example shows
    # the same prompt shape as the input.
    groups = {sid: g for sid, g in train.groupby("id", sort=True) if not evidence or str(sid) in evidence}
    ids = sorted(groups)
    rng.shuffle(ids)
    chosen, seen = [], set()
    for sid in ids:
        rels = frozenset(groups[sid]["relation"])
        if rels & seen:
            continue
        seen |= rels
        chosen.append(sid)
        if len(chosen) == n:
            break
    return [
        Example(
            sentence=str(groups[s]["sentence"].iloc[0]),
            evidence=tuple(evidence.get(str(s), [])),
            triples=tuple(zip(groups[s]["head"], groups[s]["relation"], groups[s]["tail"])),
        )
        for s in chosen
    ]


def training_pairs(
    train: pd.DataFrame, evidence: dict[str, list[Evidence]], examples: list[Example], relations: list[str]
) -> list[tuple[str, str, str]]:
    """(prefix, suffix, answer) for LoRA fine-tuning: the test-time prompt with the gold triples."""
    used = {e.sentence for e in examples}
    pairs = []
    for sid, g in train.groupby("id", sort=True):
        sentence = str(g["sentence"].iloc[0])
        # Train only on inputs whose evidence was re-scored (train_scorer.rescore_train),
        # so fine-tuning sees evidence the way test inputs get it.
        if sentence in used or (evidence and str(sid) not in evidence):
            continue
        prefix, suffix = prompt_parts(sentence, evidence.get(str(sid), []), examples, relations)
        pairs.append((prefix, suffix, format_triples(list(zip(g["head"], g["relation"], g["tail"])))))
    return pairs
