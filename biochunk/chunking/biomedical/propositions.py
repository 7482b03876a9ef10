"""Proposition-first extraction: a trigger, its two nearest arguments, and the span around them.

For each trigger, the nearest arguments within ``REACH`` words are read in one of three
patterns, tried in this order:

- infix:   E1 trigger E2          ("aspirin inhibits COX-2")
- prefix:  trigger ... E1 ... E2  ("inhibition of COX-2 by aspirin")
- postfix: E1 ... E2 trigger      ("aspirin and warfarin interact")

The proposition's span is the smallest one holding trigger and arguments, widened by
``EXPAND`` words on each side (not past a clause break: , ; : .) so that a negation or
hedge next to it is kept (and flagged), and never cutting an entity. Its priority is P = hierarchy weight of the relation + the
trigger's tier bonus; of two competing propositions (one's core span holds the other's
trigger) the higher P is kept, ties going to the better tier.

Arguments: the detected entities, and runs of content words (no function word, trigger,
marker or phrase-breaking punctuation between them), a run touching an entity being
widened over it. The runs stand in for noun phrases: the regex rules miss single-word
and lower-case names ("aspirin", "inflammation"; GM-CIHT is lower-cased throughout).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

from biochunk.chunking.biomedical.entities import Span
from biochunk.chunking.biomedical.hierarchy import FLAT, Hierarchy
from biochunk.chunking.biomedical.triggers import TIER_BONUS, UNTIERED_BONUS, Hit, Lexicon, Trigger, find_phrases
from biochunk.chunking.biomedical.windows import TokenRange, snap
from biochunk.chunking.biomedical.words import Token

REACH = 25  # words: how far from the trigger an argument may start or end
EXPAND = 3  # words kept on each side of the minimal span (negations, hedges), within its clause
# After a passive trigger ("was inhibited by"), these introduce the agent, which becomes
# the head; after a nominalised trigger ("inhibition of X by Y") "by" does the same.
AGENT_MARKERS = frozenset({"by", "with"})
PARTICIPLE_ENDINGS = ("ed", "en")


@dataclass(frozen=True)
class Scoring:
    """How triggers and relations turn into a priority, with the two ablation switches."""

    hierarchy: Hierarchy = FLAT
    tiers: bool = True  # False: every trigger gets UNTIERED_BONUS and no tier

    def bonus(self, trigger: Trigger) -> int:
        return trigger.bonus if self.tiers else UNTIERED_BONUS

    def tier(self, trigger: Trigger) -> int | None:
        return trigger.tier if self.tiers else None

    def priority(self, trigger: Trigger) -> int:
        return self.hierarchy.weight(trigger.relation) + self.bonus(trigger)

    @property
    def max_priority(self) -> int:
        return self.hierarchy.max_weight + (max(TIER_BONUS.values()) if self.tiers else UNTIERED_BONUS)


@dataclass(frozen=True, slots=True)
class Proposition:
    start: int  # character span of the (widened) proposition
    end: int
    head: Span
    tail: Span
    trigger: str  # the trigger's words, lower-cased
    trigger_span: Span
    relation: str
    tier: int | None
    priority: int
    pattern: str  # infix | prefix | postfix
    passive: bool  # roles inverted: the agent after by/with is the head
    negated: bool
    hedged: bool


def outside_entities(hits: Sequence[Hit], ranges: Sequence[TokenRange]) -> list[Hit]:
    """Hits that are not part of an entity (a name is not a predicate: "[Inhibitor Protein 2]")."""
    return [h for h in hits if not any(a < h.j and h.i < b for a, b in ranges)]


def argument_ranges(tokens: Sequence[Token], entities: Sequence[TokenRange], blocked: set[int]) -> list[TokenRange]:
    """Word ranges that can fill an argument slot: entities, and runs of content words."""
    in_entity = {k for a, b in entities for k in range(a, b)}
    runs: list[TokenRange] = []
    start: int | None = None
    for k, t in enumerate(tokens):
        content = k in in_entity or (t.is_word and k not in blocked)
        if start is not None and (not content or t.opens):
            runs.append((start, k))
            start = None
        if content:
            if start is None:
                start = k
            if t.closes:
                runs.append((start, k + 1))
                start = None
    if start is not None:
        runs.append((start, len(tokens)))
    merged: list[TokenRange] = []
    for a, b in sorted(runs + list(entities)):
        if merged and a < merged[-1][1]:
            merged[-1] = (merged[-1][0], max(merged[-1][1], b))
        else:
            merged.append((a, b))
    return merged


def extract(
    tokens: Sequence[Token],
    entities: Sequence[TokenRange],
    hits: Sequence[Hit],
    lexicon: Lexicon,
    scoring: Scoring,
    reach: int = REACH,
    expand: int = EXPAND,
) -> list[Proposition]:
    """The propositions of one sentence (its ``tokens``), in text order, conflicts resolved.

    ``entities`` are word ranges (``windows.entity_ranges``), ``hits`` the triggers found
    in ``tokens`` outside entities.
    """
    negations = find_phrases(tokens, lexicon.negations)
    hedges = find_phrases(tokens, lexicon.hedges)
    blocked = {k for h in hits for k in range(h.i, h.j)} | {k for a, b in negations + hedges for k in range(a, b)}
    args = argument_ranges(tokens, entities, blocked)
    found: list[tuple[Proposition, TokenRange, Hit]] = []
    for hit in hits:
        roles = _roles(tokens, hit, args, reach)
        if roles is None:
            continue
        pattern, e1, e2, passive = roles
        core = (min(e1[0], hit.i), max(e2[1], hit.j))
        i, j = snap(*_widen(tokens, core, expand), entities)
        head, tail = (e2, e1) if passive else (e1, e2)
        trig = hit.trigger
        prop = Proposition(
            start=tokens[i].start,
            end=tokens[j - 1].end,
            head=_core_chars(tokens, head),
            tail=_core_chars(tokens, tail),
            trigger=" ".join(t.core for t in tokens[hit.i : hit.j]),
            trigger_span=_core_chars(tokens, (hit.i, hit.j)),
            relation=trig.relation,
            tier=scoring.tier(trig),
            priority=scoring.priority(trig),
            pattern=pattern,
            passive=passive,
            negated=any(i <= a and b <= j for a, b in negations),
            hedged=any(i <= a and b <= j for a, b in hedges),
        )
        found.append((prop, core, hit))
    return _resolve(found, scoring)


def _widen(tokens: Sequence[Token], core: TokenRange, expand: int) -> TokenRange:
    """``core`` plus up to ``expand`` words each side, not across a clause break (, ; : .)."""
    i, j = core
    while i > 0 and core[0] - i < expand and not tokens[i - 1].ends_clause:
        i -= 1
    while j < len(tokens) and j - core[1] < expand and not tokens[j - 1].ends_clause:
        j += 1
    return i, j


def _roles(
    tokens: Sequence[Token], hit: Hit, args: Sequence[TokenRange], reach: int
) -> tuple[str, TokenRange, TokenRange, bool] | None:
    """(pattern, E1, E2, passive) for ``hit``, or None when two arguments are not in reach."""
    left = [a for a in args if a[1] <= hit.i and hit.i - a[1] < reach]
    right = [a for a in args if a[0] >= hit.j and a[0] - hit.j < reach]
    if left and right:
        e1, e2 = left[-1], right[0]
        after = tokens[hit.j].core if hit.j < len(tokens) else ""
        passive = tokens[hit.j - 1].core.endswith(PARTICIPLE_ENDINGS) and after in AGENT_MARKERS
        return "infix", e1, e2, passive
    if len(right) >= 2:
        e1, e2 = right[0], right[1]
        return "prefix", e1, e2, tokens[e2[0] - 1].core in AGENT_MARKERS
    if len(left) >= 2:
        return "postfix", left[-2], left[-1], False
    return None


def _resolve(found: list[tuple[Proposition, TokenRange, Hit]], scoring: Scoring) -> list[Proposition]:
    """Keep the best of competing propositions: highest P, then best tier bonus, then leftmost."""
    order = sorted(found, key=lambda f: (-f[0].priority, -scoring.bonus(f[2].trigger), f[1][0], f[2].i))
    kept: list[tuple[Proposition, TokenRange, Hit]] = []
    for prop, core, hit in order:
        if not any(_competes(core, hit, c, h) for _, c, h in kept):
            kept.append((prop, core, hit))
    return sorted((p for p, _, _ in kept), key=lambda p: (p.start, p.end, p.trigger_span))


def _competes(core_a: TokenRange, hit_a: Hit, core_b: TokenRange, hit_b: Hit) -> bool:
    """Two readings of the same words: one's core span holds the other's trigger."""
    return (core_a[0] < hit_b.j and hit_b.i < core_a[1]) or (core_b[0] < hit_a.j and hit_a.i < core_b[1])


def _core_chars(tokens: Sequence[Token], r: TokenRange) -> Span:
    """Characters of words ``r`` without the punctuation at the two ends ("pain." -> "pain")."""
    return tokens[r[0]].core_start, tokens[r[1] - 1].core_end
