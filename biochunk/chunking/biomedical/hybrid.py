"""The hybrid chunker: a pool of overlapping candidate chunks per sentence.

Source: "Configurable Semantic Chunking for Biomedical Information Extraction in RAG"
(issue 4). The pool of one sentence holds, each behind its switch:

| kind            | what                                                | switch                  |
|-----------------|-----------------------------------------------------|-------------------------|
| entity_window   | 8-word windows, stride 3, never cutting an entity   | ``entity_windows``      |
| trigger_window  | the trigger and 4 words on each side                | ``trigger_windows``     |
| proposition     | trigger + nearest arguments (``propositions.py``)   | ``propositions``        |
| fixed           | BioMedRAG's 5-word windows (``FixedWindowChunker``) | always: never empty     |

The pool is not a partition: chunks overlap, and each keeps exact offsets. A span made
by several kinds is kept once, under the first kind in the table order above
(proposition first), with all its kinds listed in ``metadata["kinds"]``. A text of several
sentences gets one pool per sentence; the fixed windows run over the whole text, exactly
as ``chunk.method: fixed`` cuts it, so the hybrid memory always holds the baseline's chunks.

Metadata of every chunk: ``kind``, ``kinds``, ``priority`` (P of a proposition, else 0),
``tier`` and ``relation_hint`` (of the best trigger in the chunk, or null; a proposition's
are its own trigger's), ``entities`` (entities wholly inside) and ``structural`` in [0, 1]::

    structural = 0.5 * P / P_max  +  0.25 * best trigger bonus / 3  +  0.25 * min(entities, 2) / 2

where ``P_max`` is the highest priority the lexicon and hierarchy allow, so only a
proposition reaches above 0.5. Propositions add ``head``, ``tail``, ``trigger``,
``pattern``, ``passive``, ``negated`` and ``hedged``.
"""

from __future__ import annotations

from typing import Any, Sequence

from biochunk.chunking.base import Chunk, Chunker, RewriterFactory, register
from biochunk.chunking.biomedical import entities as ent
from biochunk.chunking.biomedical.hierarchy import FLAT, Hierarchy, dataset_hierarchy, reorder
from biochunk.chunking.biomedical.propositions import Proposition, Scoring, extract, outside_entities
from biochunk.chunking.biomedical.triggers import TIER_BONUS, Lexicon, Trigger, dataset_lexicon, find_triggers
from biochunk.chunking.biomedical.windows import TokenRange, entity_ranges, snap, window_ranges
from biochunk.chunking.biomedical.words import Token, tokens
from biochunk.chunking.sizing import make_counter
from biochunk.chunking.windows import FixedWindowChunker
from biochunk.text.counting import TokenCounter, count_words
from biochunk.text.segment import sentence_spans

KINDS = ("proposition", "trigger_window", "entity_window", "fixed")  # precedence for duplicate spans
TRIGGER_CONTEXT = 4  # words on each side of a trigger in a trigger window
FIXED_WORDS = 5  # the fallback: BioMedRAG's 5-word chunks
# Weights of the structural score (they sum to 1).
W_PRIORITY, W_TRIGGER, W_ENTITIES = 0.5, 0.25, 0.25
ENTITIES_FOR_FULL_SCORE = 2  # a chunk holding a head and a tail

_Placed = tuple[int, int, Trigger]  # a trigger found in the text: its character span


@register("hybrid")
class HybridChunker(Chunker):
    """Entity-aware windows, trigger windows, propositions and fixed windows, pooled per sentence."""

    def __init__(
        self,
        lexicon: Lexicon,
        hierarchy: Hierarchy = FLAT,
        entity_windows: bool = True,
        propositions: bool = True,
        tiers: bool = True,
        use_hierarchy: bool = True,
        trigger_windows: bool | None = None,
        entities: str = "regex",
        counter: TokenCounter = count_words,
        max_tokens: int | None = None,
    ) -> None:
        super().__init__(counter, max_tokens)
        if entities not in ent.ENTITY_MODES:
            raise ValueError(f"chunk.entities must be one of {', '.join(ent.ENTITY_MODES)}, got {entities!r}")
        self.lexicon = lexicon
        self.scoring = Scoring(hierarchy if use_hierarchy else FLAT, tiers)
        self.entity_windows = entity_windows
        self.propositions = propositions
        # Trigger windows come with the tiered lexicon (the paper's "+ tiered triggers" step).
        self.trigger_windows = tiers if trigger_windows is None else trigger_windows
        self.entities = entities
        self.fallback = FixedWindowChunker(size=FIXED_WORDS, overlap=0, counter=counter, max_tokens=max_tokens)
        self.dropped_oversize = 0  # pool chunks over max_tokens (the fixed fallback is split instead)

    needs_dataset = True  # configs/triggers/<dataset>.yaml, configs/hierarchy/<dataset>.yaml

    @classmethod
    def from_params(
        cls, params: Any, encoder: Any = None, rewriter: RewriterFactory | None = None, dataset: str | None = None
    ) -> "HybridChunker":
        """From ``ChunkParams`` and the dataset whose lexicon and hierarchy it reads (no default:
        another dataset's triggers would silently stand in)."""
        if dataset is None:
            raise ValueError("chunk.method hybrid needs the dataset whose triggers and hierarchy it reads")
        return cls(
            lexicon=dataset_lexicon(dataset),
            hierarchy=reorder(dataset_hierarchy(dataset), params.hierarchy_order),
            entity_windows=params.entity_windows,
            propositions=params.propositions,
            tiers=params.tiers,
            use_hierarchy=params.hierarchy,
            entities=params.entities,
            counter=make_counter(params.counter, encoder),
            max_tokens=params.max_tokens,
        )

    def spans(self, text: str) -> list[tuple[int, int, dict[str, Any]]]:
        return self._pool(text, ent.detect([text], self.entities)[0])

    def chunk_batch(self, texts: Sequence[str]) -> list[list[Chunk]]:
        found = ent.detect(texts, self.entities)  # one spaCy pass for the whole batch
        return [self._build(t, self._pool(t, e)) for t, e in zip(texts, found)]

    def _pool(self, text: str, entity_spans: Sequence[ent.Span]) -> list[tuple[int, int, dict[str, Any]]]:
        pool: dict[tuple[int, int], dict[str, Any]] = {}
        triggers: list[_Placed] = []
        for s, e in sentence_spans(text):
            words = tokens(text, s, e)
            inside = [(a, b) for a, b in entity_spans if a < e and s < b]
            for start, end, meta in self._sentence_pool(words, inside, triggers):
                _add(pool, start, end, meta)
        for start, end, _ in self.fallback.spans(text):
            _add(pool, start, end, self._meta(start, end, "fixed", triggers, entity_spans))
        out = []
        for (start, end), meta in sorted(pool.items()):
            if meta["kind"] != "fixed" and self.max_tokens is not None and self.counter(text[start:end]) > self.max_tokens:
                self.dropped_oversize += 1
                continue
            out.append((start, end, meta))
        return out

    def _sentence_pool(
        self, words: Sequence[Token], entity_spans: Sequence[ent.Span], placed: list[_Placed]
    ) -> list[tuple[int, int, dict[str, Any]]]:
        """Entity windows, trigger windows and propositions of one sentence's ``words``.

        The triggers found are appended to ``placed``, for the metadata of the fixed windows.
        """
        if not words:
            return []
        ranges = entity_ranges([(w.start, w.end) for w in words], entity_spans)
        hits = outside_entities(find_triggers(words, self.lexicon), ranges)
        triggers = [(words[h.i].start, words[h.j - 1].end, h.trigger) for h in hits]
        placed.extend(triggers)
        out: list[tuple[int, int, dict[str, Any]]] = []
        windows: list[tuple[TokenRange, str]] = []
        if self.entity_windows:
            windows += [(r, "entity_window") for r in window_ranges(len(words), ranges)]
        if self.trigger_windows:
            for h in hits:
                r = snap(max(h.i - TRIGGER_CONTEXT, 0), min(h.j + TRIGGER_CONTEXT, len(words)), ranges)
                windows.append((r, "trigger_window"))
        for (i, j), kind in windows:
            start, end = words[i].start, words[j - 1].end
            out.append((start, end, self._meta(start, end, kind, triggers, entity_spans)))
        if self.propositions:
            for p in extract(words, ranges, hits, self.lexicon, self.scoring):
                out.append((p.start, p.end, self._proposition_meta(p, triggers, entity_spans)))
        return out

    def _meta(
        self, start: int, end: int, kind: str, triggers: Sequence[_Placed], entity_spans: Sequence[ent.Span], priority: int = 0
    ) -> dict[str, Any]:
        inside = [t for a, b, t in triggers if start <= a and b <= end]
        best = max(inside, key=lambda t: (self.scoring.bonus(t), self.scoring.priority(t)), default=None)
        bonus = self.scoring.bonus(best) if best else 0
        n_ent = sum(1 for a, b in entity_spans if start <= a and b <= end)
        structural = (
            W_PRIORITY * priority / self.scoring.max_priority
            + W_TRIGGER * bonus / max(TIER_BONUS.values())
            + W_ENTITIES * min(n_ent, ENTITIES_FOR_FULL_SCORE) / ENTITIES_FOR_FULL_SCORE
        )
        return {
            "kind": kind,
            "kinds": [kind],
            "priority": priority,
            "tier": self.scoring.tier(best) if best else None,
            "relation_hint": best.relation if best else None,
            "entities": n_ent,
            "structural": round(min(structural, 1.0), 4),
        }

    def _proposition_meta(self, p: Proposition, triggers: Sequence[_Placed], entity_spans: Sequence[ent.Span]) -> dict[str, Any]:
        meta = self._meta(p.start, p.end, "proposition", triggers, entity_spans, p.priority)
        # Its own trigger sets tier and relation_hint, not the best trigger around it.
        meta.update(
            tier=p.tier,
            relation_hint=p.relation,
            head=list(p.head),
            tail=list(p.tail),
            trigger=p.trigger,
            pattern=p.pattern,
            passive=p.passive,
            negated=p.negated,
            hedged=p.hedged,
        )
        return meta


def _add(pool: dict[tuple[int, int], dict[str, Any]], start: int, end: int, meta: dict[str, Any]) -> None:
    """Keep one chunk per span: the kind first in ``KINDS`` (or the higher priority) wins."""
    key = (start, end)
    old = pool.get(key)
    if old is None:
        pool[key] = meta
        return
    kinds = sorted(set(old["kinds"]) | {meta["kind"]}, key=KINDS.index)
    rank_old, rank_new = KINDS.index(old["kind"]), KINDS.index(meta["kind"])
    if rank_new < rank_old or (rank_new == rank_old and meta["priority"] > old["priority"]):
        pool[key] = meta
    pool[key]["kinds"] = kinds
