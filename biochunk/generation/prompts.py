"""Prompts for triple extraction, and parsing of what the generator writes back."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Sequence

from biochunk.corpus import Triple

INSTRUCTION = "Extract the relation triples from the sentence, one per line, as: head | relation | tail"


@dataclass(frozen=True)
class Evidence:
    text: str
    labels: tuple[str, ...] = ()

    def render(self) -> str:
        rel = f" (relation: {', '.join(self.labels)})" if self.labels else ""
        return f'Evidence: "{self.text}"{rel}'


@dataclass(frozen=True)
class Example:
    sentence: str
    evidence: tuple[Evidence, ...] = ()
    triples: tuple[Triple, ...] = field(default_factory=tuple)


def format_triples(triples: Sequence[Triple]) -> str:
    return "\n".join(f"{h} | {r} | {t}" for h, r, t in triples)


def render_block(sentence: str, evidence: Sequence[Evidence]) -> str:
    lines = [f"Sentence: {sentence}"] + [e.render() for e in evidence] + ["Triples:"]
    return "\n".join(lines)


def prompt_parts(
    sentence: str, evidence: Sequence[Evidence], examples: Sequence[Example], relations: Sequence[str]
) -> tuple[str, str]:
    """(shared prefix, per-input suffix): instruction, relation inventory and worked examples,
    then the input block.

    The prefix is identical for every input of a run, so the generator encodes it once
    and reuses its key/value cache for every batch.
    """
    parts = [INSTRUCTION, f"Relations: {', '.join(relations)}"]
    for ex in examples:
        parts.append(render_block(ex.sentence, ex.evidence) + " " + format_triples(ex.triples))
    return "\n\n".join(parts) + "\n\n", render_block(sentence, evidence)


def build_prompt(sentence: str, evidence: Sequence[Evidence], examples: Sequence[Example], relations: Sequence[str]) -> str:
    return "".join(prompt_parts(sentence, evidence, examples, relations))


_TRIPLE = re.compile(r"^\s*([^|\n]+?)\s*\|\s*([^|\n]+?)\s*\|\s*([^|\n]+?)\s*$")


def parse_triples(raw: str, relations: Sequence[str] | None = None) -> list[Triple]:
    """Triples from the generator's text: ``head | relation | tail`` lines until the first other line.

    The relation is matched case-insensitively to the inventory when one is given
    (the small model writes "treats" for TREATS); an unknown relation is kept as
    written, so evaluation counts it as wrong rather than dropping it.
    """
    canon = {r.lower(): r for r in relations or ()}
    out: list[Triple] = []
    for line in raw.strip().splitlines():
        m = _TRIPLE.match(line)
        if not m:
            break
        h, r, t = m.groups()
        triple = (h, canon.get(r.lower(), r), t)
        if triple not in out:
            out.append(triple)
    return out
