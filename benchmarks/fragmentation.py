"""Entity fragmentation of chunk pools on real test sentences, and how often propositions appear.

    python benchmarks/fragmentation.py [--mirror ../shared/datasets] [--datasets gm-ciht ddi chemprot] [--ner]

Reads each dataset's raw test file from a mirror laid out like ../shared/datasets (exact
repeats dropped, as the convert stage does) and prints, per dataset:

- fragmentation of a pool kind: the share of gold mentions that are not wholly inside at
  least one chunk of that kind ("in no chunk whole"), and, stricter, the share with a
  chunk boundary of that kind strictly inside them ("cut by some chunk": some chunk holds
  only part of the name). A mention is a distinct head or tail string of the sentence's
  triples, placed at its first case-insensitive occurrence; mentions not found are counted
  apart and left out;
- for: fixed 5-word windows (BioMedRAG), plain 8-word / stride-3 windows with no entities
  (what overlap alone does), entity-aware windows (regex entities; spaCy NER with --ner),
  and the whole hybrid pool;
- the share of sentences with at least one proposition, and the mean pool size per
  sentence, by kind (the pool of HybridChunker with every switch on).

Prints only; nothing here is a test.
"""

from __future__ import annotations

import argparse
import time
from collections import Counter, defaultdict
from pathlib import Path

from biochunk.chunking.biomedical import entities as ent
from biochunk.chunking.biomedical.hierarchy import dataset_hierarchy
from biochunk.chunking.biomedical.hybrid import HybridChunker
from biochunk.chunking.biomedical.induce import read_rows
from biochunk.chunking.biomedical.triggers import dataset_lexicon
from biochunk.chunking.biomedical.windows import entity_windows
from biochunk.chunking.windows import FixedWindowChunker
from biochunk.datasets.registry import get_spec
from biochunk.text.segment import word_spans

Span = tuple[int, int]


def test_sentences(mirror: Path, dataset: str) -> dict[str, set[str]]:
    """Sentence -> its gold mentions (heads and tails), from the raw test file."""
    spec = get_spec(dataset)
    out: dict[str, set[str]] = defaultdict(set)
    for name in spec.splits["test"]:
        for sentence, head, _, tail in read_rows(mirror / spec.mirror_dir / name):
            out[sentence] |= {head, tail}
    return out


def locate(sentence: str, mention: str) -> Span | None:
    i = sentence.lower().find(mention.lower())
    return None if i < 0 or not mention.strip() else (i, i + len(mention))


def fragmented(mentions: list[Span], chunks: list[Span]) -> int:
    """Mentions not wholly inside any chunk."""
    return sum(not any(s <= a and b <= e for s, e in chunks) for a, b in mentions)


def cut_by_a_boundary(mentions: list[Span], chunks: list[Span]) -> int:
    """Mentions with some chunk boundary strictly inside them (a chunk holds part of the name)."""
    return sum(any(a < x < b for c in chunks for x in c) for a, b in mentions)


def run(mirror: Path, dataset: str, ner: bool) -> None:
    sentences = test_sentences(mirror, dataset)
    chunker = HybridChunker(dataset_lexicon(dataset), dataset_hierarchy(dataset))
    fixed = FixedWindowChunker(size=5)
    texts = list(sentences)
    regex = [ent.regex_entities(t) for t in texts]
    found_ner = ent.detect(texts, "ner") if ner else None
    cut: Counter[str] = Counter()
    split: Counter[str] = Counter()
    sizes: Counter[str] = Counter()
    n_mentions = unlocated = with_prop = 0
    # The guarantee of entity-aware windows is about *detected* entities: none is ever cut.
    detected = detected_cut_fixed = detected_cut_aware = 0
    t0 = time.perf_counter()
    for k, text in enumerate(texts):
        mentions = [m for m in (locate(text, g) for g in sentences[text]) if m is not None]
        unlocated += len(sentences[text]) - len(mentions)
        n_mentions += len(mentions)
        words = word_spans(text)
        pool = chunker.chunk(text)
        by_kind: dict[str, list[Span]] = defaultdict(list)
        for c in pool:
            for kind in c.metadata["kinds"]:
                by_kind[kind].append((c.start, c.end))
            sizes[c.metadata["kind"]] += 1
        kinds = {
            "fixed 5-word": [(s, e) for s, e, _ in fixed.spans(text)],
            "sliding 8/3, no entities": entity_windows(words, []),
            "entity-aware (regex)": entity_windows(words, regex[k]),
            "hybrid pool (all kinds)": [(c.start, c.end) for c in pool],
        }
        if found_ner is not None:
            kinds["entity-aware (NER)"] = entity_windows(words, found_ner[k])
        detected += len(regex[k])
        detected_cut_fixed += cut_by_a_boundary(list(regex[k]), kinds["fixed 5-word"])
        detected_cut_aware += cut_by_a_boundary(list(regex[k]), kinds["entity-aware (regex)"])
        for name, chunks in kinds.items():
            cut[name] += fragmented(mentions, chunks)
            split[name] += cut_by_a_boundary(mentions, chunks)
        with_prop += bool(by_kind["proposition"])
    seconds = time.perf_counter() - t0
    n = len(texts)
    print(f"\n== {dataset}: {n} test sentences, {n_mentions} gold mentions located ({unlocated} not found)")
    print(f"   {'pool kind':28s} {'in no chunk whole':>20s} {'cut by some chunk':>20s}")
    for name in cut:
        m = max(n_mentions, 1)
        print(f"   {name:28s} {cut[name]:7d} {cut[name] / m:11.1%} {split[name]:7d} {split[name] / m:11.1%}")
    d = max(detected, 1)
    print(
        f"   detected (regex) entities: {detected}; cut by fixed 5-word windows {detected_cut_fixed} "
        f"({detected_cut_fixed / d:.1%}), by entity-aware windows {detected_cut_aware} ({detected_cut_aware / d:.1%})"
    )
    print(f"   sentences with >= 1 proposition: {with_prop} ({with_prop / max(n, 1):.1%})")
    total = sum(sizes.values())
    by = ", ".join(f"{k} {sizes[k] / n:.2f}" for k in ("fixed", "entity_window", "trigger_window", "proposition"))
    print(f"   pool per sentence (mean): {total / n:.2f} chunks ({by}; a span made by several kinds counts once)")
    print(f"   chunking time: {seconds:.1f} s ({n / seconds:.0f} sentences/s)")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--mirror", type=Path, default=Path(__file__).resolve().parents[2] / "shared" / "datasets")
    ap.add_argument("--datasets", nargs="+", default=["gm-ciht", "ddi", "chemprot"])
    ap.add_argument("--ner", action="store_true", help="also entity-aware windows over spaCy NER spans")
    args = ap.parse_args()
    for dataset in args.datasets:
        run(args.mirror, dataset, args.ner)


if __name__ == "__main__":
    main()
