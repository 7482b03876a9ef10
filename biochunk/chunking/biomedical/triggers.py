"""Trigger lexicons: words that signal a relation, in three tiers, plus negation and hedge markers.

One YAML file per dataset, ``configs/triggers/<dataset>.yaml``::

    triggers:
      inhibit: {tier: 1, relations: [INHIBITS]}                # primary: bonus 3
      reduce: {tier: 3, relations: [AFFECTS, INHIBITS], variants: [reduction]}
      associated with: {tier: 2, relations: [ASSOCIATED_WITH]}  # several words
    negations: [not, no, does not, fails to]
    hedges: [may, might, possibly]

- ``tier``: 1 primary, 2 secondary, 3 tertiary (see ``TIER_BONUS``).
- ``relations``: the relation(s) the word signals, most typical first; a proposition built
  on the trigger takes the first. Every name must be in ``configs/<dataset>.yaml``.
- Morphological variants are merged by ``words.normalise`` (inhibit, inhibits, inhibited,
  inhibition, inhibitor all match ``inhibit``); forms it does not fold go in ``variants``.
- ``count`` and ``share`` (written by ``induce``) are provenance and are not read.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any, Collection, Sequence

import yaml

from biochunk.chunking.biomedical.words import STOP_WORDS, Token, normalise_phrase
from biochunk.corpus import relation_definitions
from biochunk.errors import UserError

CONFIGS = Path(__file__).resolve().parents[3] / "configs"
TRIGGER_DIR = CONFIGS / "triggers"

# Tier -> bonus added to a proposition's priority. Tier 1 words (nearly always seen with
# one relation) count most.
TIER_BONUS = {1: 3, 2: 2, 3: 1}
TIER_NAMES = {1: "primary", 2: "secondary", 3: "tertiary"}
# The bonus every trigger gets when tiers are switched off (`chunk.tiers: false`).
UNTIERED_BONUS = 2
ENTRY_KEYS = frozenset({"tier", "relations", "variants", "count", "share"})


@dataclass(frozen=True, slots=True)
class Trigger:
    word: str
    tier: int
    relations: tuple[str, ...]

    @property
    def relation(self) -> str:
        return self.relations[0]

    @property
    def bonus(self) -> int:
        return TIER_BONUS[self.tier]


@dataclass(frozen=True)
class Lexicon:
    """Normalised word sequences -> trigger; marker phrases as normalised word sequences."""

    triggers: dict[tuple[str, ...], Trigger]
    negations: frozenset[tuple[str, ...]]
    hedges: frozenset[tuple[str, ...]]
    source: str = ""

    @property
    def relations(self) -> set[str]:
        return {r for t in self.triggers.values() for r in t.relations}


@dataclass(frozen=True, slots=True)
class Hit:
    """A match in a token list: words ``[i, j)``."""

    i: int
    j: int
    trigger: Trigger


def find_triggers(tokens: Sequence[Token], lexicon: Lexicon) -> list[Hit]:
    """Trigger matches, longest first at each position, left to right, not overlapping.

    A one-word match on a function word is skipped (a trigger "us" would hit the pronoun).
    """
    longest = max((len(k) for k in lexicon.triggers), default=0)
    out: list[Hit] = []
    i = 0
    while i < len(tokens):
        for n in range(min(longest, len(tokens) - i), 0, -1):
            key = tuple(t.norm for t in tokens[i : i + n])
            trig = lexicon.triggers.get(key)
            if trig is not None and not (n == 1 and tokens[i].is_stop):
                out.append(Hit(i, i + n, trig))
                i += n
                break
        else:
            i += 1
    return out


def find_phrases(tokens: Sequence[Token], phrases: Collection[tuple[str, ...]]) -> list[tuple[int, int]]:
    """Word ranges ``[i, j)`` where one of ``phrases`` (normalised) occurs."""
    out = []
    for p in phrases:
        n = len(p)
        for i in range(len(tokens) - n + 1):
            if all(tokens[i + k].norm == p[k] for k in range(n)):
                out.append((i, i + n))
    return sorted(out)


def load_lexicon(path: str | Path, relations: Collection[str]) -> Lexicon:
    """Read and check a trigger file; ``relations`` are the names the dataset defines.

    Raises ``UserError`` naming the file and the entry for malformed YAML, an unknown
    relation, a tier outside 1..3 or two entries that normalise to the same word.
    """
    p = Path(path)
    data = read_yaml(p)
    raw = data.get("triggers")
    if not isinstance(raw, dict) or not raw:
        raise UserError(f"{p}: `triggers` must map each trigger word to {{tier, relations}}")
    known = set(relations)
    triggers: dict[tuple[str, ...], Trigger] = {}
    owner: dict[tuple[str, ...], str] = {}
    for word, entry in raw.items():
        where = f"{p}: triggers.{word}"
        trig, forms = _parse_entry(where, word, entry, known)
        for form in forms:
            key = normalise_phrase(form)
            if not any(key):
                raise UserError(f"{where}: {form!r} has no letters or digits to match")
            if len(key) == 1 and form.lower() in STOP_WORDS:
                raise UserError(f"{where}: {form!r} is a function word, which never matches on its own; use a phrase")
            if key in owner and owner[key] != str(word):
                raise UserError(
                    f"{where}: {form!r} matches the same words as triggers.{owner[key]} "
                    f"(both normalise to {' '.join(key)!r}); merge them into one entry"
                )
            owner[key] = str(word)
            triggers[key] = trig
    return Lexicon(
        triggers=triggers,
        negations=_markers(p, data, "negations"),
        hedges=_markers(p, data, "hedges"),
        source=str(p),
    )


def _parse_entry(where: str, word: Any, entry: Any, known: set[str]) -> tuple[Trigger, list[str]]:
    if not isinstance(word, str) or not word.strip():
        raise UserError(f"{where}: a trigger must be a non-empty string")
    if not isinstance(entry, dict):
        raise UserError(f"{where}: expected {{tier: 1|2|3, relations: [...]}}, got {entry!r}")
    unknown = sorted(set(entry) - ENTRY_KEYS)
    if unknown:
        raise UserError(f"{where}: unknown key {unknown[0]!r}; allowed: {', '.join(sorted(ENTRY_KEYS))}")
    tier = entry.get("tier")
    if isinstance(tier, bool) or tier not in TIER_BONUS:
        raise UserError(f"{where}: tier must be 1 (primary), 2 (secondary) or 3 (tertiary), got {tier!r}")
    rels = entry.get("relations")
    if isinstance(rels, str):
        rels = [rels]
    if not isinstance(rels, list) or not rels or not all(isinstance(r, str) for r in rels):
        raise UserError(f"{where}: relations must be a non-empty list of relation names, got {rels!r}")
    for r in rels:
        if r not in known:
            raise UserError(f"{where}: unknown relation {r!r}; the dataset defines: {', '.join(sorted(known))}")
    variants = entry.get("variants", [])
    if not isinstance(variants, list) or not all(isinstance(v, str) and v.strip() for v in variants):
        raise UserError(f"{where}: variants must be a list of words, got {variants!r}")
    forms = list(dict.fromkeys([word, *variants]))
    return Trigger(word=word, tier=tier, relations=tuple(dict.fromkeys(rels))), forms


def _markers(p: Path, data: dict[str, Any], key: str) -> frozenset[tuple[str, ...]]:
    raw = data.get(key, [])
    if not isinstance(raw, list):
        raise UserError(f"{p}: `{key}` must be a list of words or phrases, got {raw!r}")
    for i, m in enumerate(raw):
        if not isinstance(m, str) or not m.strip():
            quote = '(quote YAML keywords: "no", "yes", "on", "off")'
            raise UserError(f"{p}: {key}[{i}]: expected a word or phrase, got {m!r} {quote}")
    return frozenset(normalise_phrase(m) for m in raw)


class _StrictLoader(yaml.SafeLoader):
    """safe_load that refuses a key given twice (plain YAML keeps the last one silently)."""


def _no_duplicates(loader: _StrictLoader, node: yaml.MappingNode, deep: bool = False) -> dict[Any, Any]:
    seen: set[Any] = set()
    for key_node, _ in node.value:
        key = loader.construct_object(key_node, deep=deep)
        if key in seen:
            raise yaml.constructor.ConstructorError(None, None, f"{key!r} is given twice", key_node.start_mark)
        seen.add(key)
    return loader.construct_mapping(node, deep=deep)


_StrictLoader.add_constructor(yaml.resolver.BaseResolver.DEFAULT_MAPPING_TAG, _no_duplicates)


def read_yaml(p: Path) -> dict[str, Any]:
    """A config file's top-level mapping; ``UserError`` naming the file if it is not one."""
    if not p.exists():
        raise UserError(f"config not found: {p}")
    try:
        data = yaml.load(p.read_text(encoding="utf-8"), Loader=_StrictLoader)  # noqa: S506 (a SafeLoader)
    except yaml.YAMLError as e:
        raise UserError(f"{p}: not valid YAML: {e}".replace("\n", " ")) from None
    if not isinstance(data, dict):
        raise UserError(f"{p}: expected a mapping at the top level, got {type(data).__name__}")
    return data


def dataset_relations(dataset: str) -> list[str]:
    """The relation names of ``configs/<dataset>.yaml``."""
    return list(relation_definitions(CONFIGS / f"{dataset}.yaml"))


def dataset_lexicon(dataset: str) -> Lexicon:
    """The curated lexicon ``configs/triggers/<dataset>.yaml``, checked against the dataset's relations."""
    path = TRIGGER_DIR / f"{dataset}.yaml"
    if not path.exists():
        raise UserError(f"no trigger lexicon for dataset {dataset!r}: write {path} (see configs/triggers/README.md)")
    return load_lexicon(path, dataset_relations(dataset))
