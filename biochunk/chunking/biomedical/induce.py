"""Induce a trigger lexicon from a training split's annotated triples.

    python -m biochunk.chunking.biomedical.induce --dataset gm-ciht \\
        --train data/interim/gm-ciht/train.parquet --out configs/triggers/gm-ciht.induced.yaml

For every triple, the head and tail are found in the sentence (first pair of occurrences
closest together, case-insensitive); the content words between them and within ``NEAR``
words either side are counted once per triple under its gold relation. Mentions of any
annotated entity of the sentence, function words and words without two letters are left out.

A word's tier is the share of its occurrences that carry its relation (>= 0.8 primary,
>= 0.5 secondary, else tertiary). Its relations are those it occurs with at least
``min_count`` times and is specific to: a lift of at least ``MIN_LIFT`` (share / the
relation's share of all triples) or, for a relation too common to double, a share at least
half-way from that base rate to 1 (``MIN_GAIN``); most frequent first. This keeps a majority
label (DDI's "None", three quarters of its triples) from claiming every common word. Each relation keeps its
``MAX_PER_RELATION`` words of highest count x lift.

The output is a starting point: the curated ``configs/triggers/<dataset>.yaml`` is what
the chunker reads.
"""

from __future__ import annotations

import argparse
import json
import logging
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterable, Iterator

import pandas as pd
import yaml

from biochunk.chunking.biomedical.triggers import dataset_relations
from biochunk.chunking.biomedical.words import Token, tokens
from biochunk.errors import UserError

log = logging.getLogger("induce")

NEAR = 3  # words counted on each side of the head/tail pair
PRIMARY, SECONDARY = 0.8, 0.5  # share thresholds of tiers 1 and 2
MIN_COUNT = 3
MIN_LIFT = 2.0  # a word must be at least twice as common near a relation as the relation is overall,
MIN_GAIN = 0.5  # or close half the gap between the relation's base rate and always
MAX_RELATIONS = 3
MAX_PER_RELATION = 25  # the words of each relation with the highest count x lift

Row = tuple[str, str, str, str]  # sentence, head, relation, tail


@dataclass
class Counts:
    per_word: dict[str, Counter[str]] = field(default_factory=lambda: defaultdict(Counter))  # key -> relation -> n
    surface: dict[str, Counter[str]] = field(default_factory=lambda: defaultdict(Counter))  # key -> written forms
    per_relation: Counter[str] = field(default_factory=Counter)  # triples located, per relation
    unlocated: int = 0  # triples whose head or tail is not in the sentence


def read_rows(path: Path) -> list[Row]:
    """(sentence, head, relation, tail) from converted Parquet or a raw BioMedRAG file.

    Exact repeats are dropped, as the convert stage drops them.
    """
    return list(dict.fromkeys(_rows(path)))


def _rows(path: Path) -> list[Row]:
    if not path.exists():
        raise UserError(f"--train: file not found: {path}")
    if path.suffix == ".parquet":
        df = pd.read_parquet(path, columns=["sentence", "head", "relation", "tail"])
        return list(df.itertuples(index=False, name=None))
    if path.suffix == ".jsonl":  # GM-CIHT (and the embedded set): one triple per line
        rows = []
        for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            if line.strip():
                o = json.loads(line)
                try:
                    rows.append(tuple(o[k].strip() for k in ("SENTENCE", "SUBJECT_TEXT", "PREDICATE", "OBJECT_TEXT")))
                except (KeyError, AttributeError):
                    raise UserError(f"{path}:{n}: expected SENTENCE, SUBJECT_TEXT, PREDICATE, OBJECT_TEXT strings") from None
        return rows
    if path.suffix == ".json":  # DDI, ChemProt: [{"text", "triple_list": [[h, r, t], ...]}, ...]
        rows = []
        for item in json.loads(path.read_text(encoding="utf-8")):
            for h, r, t in item["triple_list"]:
                rows.append((item["text"].strip(), h.strip(), r.strip(), t.strip()))
        return rows
    raise UserError(f"--train: expected a .parquet, .jsonl or .json file, got {path}")


def count(rows: Iterable[Row], near: int = NEAR) -> Counts:
    by_sentence: dict[str, list[Row]] = defaultdict(list)
    for row in rows:
        by_sentence[row[0]].append(row)
    c = Counts()
    for sentence, group in by_sentence.items():
        words = tokens(sentence)
        mentions = {m for _, h, _, t in group for m in (h, t)}
        masked = {k for m in mentions for span in _find_all(sentence, m) for k in _word_range(words, span)}
        for _, head, relation, tail in group:
            pair = _closest_pair(sentence, head, tail)
            if pair is None:
                c.unlocated += 1
                continue
            a = _word_range(words, pair[0])
            b = _word_range(words, pair[1])
            lo, hi = min(a.start, b.start), max(a.stop, b.stop)
            context = range(max(lo - near, 0), min(hi + near, len(words)))
            c.per_relation[relation] += 1
            keys = {}
            for k in context:
                w = words[k]
                if k not in masked and _countable(w):
                    keys.setdefault(w.norm, w.core)
            for key, form in keys.items():
                c.per_word[key][relation] += 1
                c.surface[key][form] += 1
    return c


def tiered(c: Counts, min_count: int = MIN_COUNT, max_per_relation: int = MAX_PER_RELATION) -> dict[str, dict]:
    """word -> {tier, relations, count, share}: the lexicon entries (see the module docstring)."""
    located = sum(c.per_relation.values())
    scored: dict[str, list[tuple[float, str, dict]]] = defaultdict(list)
    for key, per_rel in c.per_word.items():
        n = sum(per_rel.values())
        share = {r: k / n for r, k in per_rel.items()}
        prior = {r: c.per_relation[r] / located for r in per_rel}
        lift = {r: share[r] / prior[r] for r in per_rel}
        # Specific to r: twice r's base rate, or (for a relation too common to double, like
        # ChemProt's DOWNREGULATOR at 55%) at least half-way from its base rate to always.
        specific = [r for r in per_rel if lift[r] >= MIN_LIFT or (share[r] - prior[r]) >= MIN_GAIN * (1 - prior[r])]
        ranked = sorted((r for r in specific if per_rel[r] >= min_count), key=lambda r: (-share[r], -lift[r], r))
        if not ranked:
            continue
        best = ranked[0]
        tier = 1 if share[best] >= PRIMARY else 2 if share[best] >= SECONDARY else 3
        word = c.surface[key].most_common(1)[0][0]
        entry = {"tier": tier, "relations": ranked[:MAX_RELATIONS], "count": n, "share": round(share[best], 2)}
        scored[best].append((per_rel[best] * lift[best], word, entry))
    out = {w: e for kept in scored.values() for _, w, e in sorted(kept, key=lambda x: (-x[0], x[1]))[:max_per_relation]}
    return dict(sorted(out.items(), key=lambda kv: (kv[1]["tier"], kv[1]["relations"][0], -kv[1]["count"], kv[0])))


def render(entries: dict[str, dict], header: str) -> str:
    lines = [f"# {h}" if h else "#" for h in header.splitlines()]
    lines.append("triggers:")
    tier = None
    for word, e in entries.items():
        if e["tier"] != tier:
            tier = e["tier"]
            lines.append(f"  # tier {tier}")
        rels = ", ".join(_scalar(r) for r in e["relations"])
        lines.append(f"  {_scalar(word)}: {{tier: {e['tier']}, relations: [{rels}], count: {e['count']}, share: {e['share']}}}")
    return "\n".join(lines) + "\n"


def _scalar(s: str) -> str:
    """``s`` bare when YAML reads it back as the same string, else quoted."""
    try:
        plain = yaml.safe_load(f"k: {s}")["k"] == s
    except yaml.YAMLError:
        plain = False
    return s if plain else json.dumps(s)


def _countable(w: Token) -> bool:
    return w.is_word and w.core.replace("-", "").isalpha()


def _find_all(text: str, mention: str) -> Iterator[tuple[int, int]]:
    low, m = text.lower(), mention.lower()
    i = low.find(m)
    while m and i >= 0:
        yield i, i + len(m)
        i = low.find(m, i + 1)


def _closest_pair(text: str, head: str, tail: str) -> tuple[tuple[int, int], tuple[int, int]] | None:
    hs, ts = list(_find_all(text, head)), list(_find_all(text, tail))
    if not hs or not ts:
        return None
    return min(((h, t) for h in hs for t in ts), key=lambda p: (abs(p[0][0] - p[1][0]), p[0][0]))


def _word_range(words: list[Token], span: tuple[int, int]) -> range:
    idx = [k for k, w in enumerate(words) if w.start < span[1] and span[0] < w.end]
    return range(idx[0], idx[-1] + 1) if idx else range(0)


def main() -> None:
    ap = argparse.ArgumentParser(description="Induce a trigger lexicon from annotated training triples.")
    ap.add_argument("--dataset", required=True, help="dataset name: its relations come from configs/<dataset>.yaml")
    ap.add_argument("--train", required=True, type=Path, help="train.parquet (converted) or the raw .jsonl/.json file")
    ap.add_argument("--out", required=True, type=Path)
    ap.add_argument("--min-count", type=int, default=MIN_COUNT)
    ap.add_argument("--near", type=int, default=NEAR)
    args = ap.parse_args()
    if args.min_count < 1 or args.near < 0:
        raise UserError(f"--min-count must be >= 1 and --near >= 0, got {args.min_count}, {args.near}")
    relations = dataset_relations(args.dataset)
    rows = read_rows(args.train)
    unknown = sorted({r for _, _, r, _ in rows} - set(relations))
    if unknown:
        raise UserError(f"{args.train}: relations {', '.join(unknown)} are not in configs/{args.dataset}.yaml")
    c = count(rows, args.near)
    entries = tiered(c, args.min_count)
    header = (
        f"Induced by: python -m biochunk.chunking.biomedical.induce --dataset {args.dataset} --train {args.train}"
        f" --out {args.out} --min-count {args.min_count} --near {args.near}\n"
        f"{len(rows)} triples, {sum(c.per_relation.values())} located in their sentence, {c.unlocated} not.\n"
        "count: triples with the word near the pair; share: the part of them with the first relation.\n"
        "Generated, not curated: configs/triggers/<dataset>.yaml is the file the chunker reads."
    )
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(render(entries, header), encoding="utf-8")
    tiers = Counter(e["tier"] for e in entries.values())
    log.info("%s: %d triggers (tiers %s) -> %s", args.dataset, len(entries), dict(sorted(tiers.items())), args.out)


if __name__ == "__main__":
    from biochunk import cli

    cli.run(main)
