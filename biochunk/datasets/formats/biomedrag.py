"""BioMedRAG's relation-extraction and classification files (DDI, ChemProt, ADE).

DDI and ChemProt: one JSON list per split of ``{"text", "triple_list": [[head, relation,
tail], ...]}``. Upstream lists a sentence once per entity pair, so one sentence recurs in
many items; ``triples_frame`` gives all triples of a sentence one id and drops (and counts)
exact repeats, which DDI has where a drug is mentioned twice in one sentence.

ADE: JSON lines ``{"text", "label"}`` with label 1 = adverse drug event.
"""

from __future__ import annotations

import json

import pandas as pd

from biochunk.datasets.convert import Context, Tables, converter, jsonl_records, malformed, triples_frame
from biochunk.datasets.formats._common import load_json, nonempty_str, raw_file
from biochunk.io import CLASSIFICATION, TRIPLES

# Upstream ships the relation inventory next to the data; when present, a triple whose
# relation is not in it is malformed (a typo or a shifted column, not a new relation).
RELATION_FILE = "rel2id.json"


@converter("biomedrag_triples")
def convert_triples(ctx: Context) -> Tables:
    allowed = _relations(ctx)
    tables: Tables = {}
    for split, files in ctx.spec.splits.items():
        rows: list[tuple[str, str, str, str]] = []
        for name in files:
            path = raw_file(ctx, name)
            items = load_json(ctx, path, split)
            if items is None:
                continue
            if not isinstance(items, list):
                malformed(ctx, split, str(path), f"expected a JSON list of sentences, got {type(items).__name__}")
                continue
            for i, item in enumerate(items):
                ctx.report.rows_read[split] += 1
                rows.extend(_item_triples(ctx, split, f"{path}:item {i}", item, allowed))
        tables[split] = (triples_frame(ctx, split, rows), TRIPLES)
    return tables


def _item_triples(
    ctx: Context, split: str, where: str, item: object, allowed: set[str] | None
) -> list[tuple[str, str, str, str]]:
    if not isinstance(item, dict) or not nonempty_str(item.get("text")) or not isinstance(item.get("triple_list"), list):
        malformed(ctx, split, where, 'expected {"text": non-empty string, "triple_list": list}')
        return []
    if not item["triple_list"]:
        ctx.report.drop(split, "sentence without triples")
        return []
    sentence = item["text"].strip()
    out = []
    for j, triple in enumerate(item["triple_list"]):
        if not isinstance(triple, list) or len(triple) != 3 or not all(nonempty_str(x) for x in triple):
            malformed(ctx, split, f"{where}, triple {j}", f"expected [head, relation, tail] of non-empty strings, got {triple!r}")
            continue
        head, relation, tail = (x.strip() for x in triple)
        if allowed is not None and relation not in allowed:
            why = f"relation {relation!r} is not in {RELATION_FILE} ({', '.join(sorted(allowed))})"
            malformed(ctx, split, f"{where}, triple {j}", why)
            continue
        out.append((sentence, head, relation, tail))
    return out


def _relations(ctx: Context) -> set[str] | None:
    path = ctx.raw / RELATION_FILE
    if not path.exists():
        return None
    # rel2id.json is [id -> name, name -> id].
    try:
        id2rel, rel2id = json.loads(path.read_text(encoding="utf-8"))
        names = set(rel2id)
        consistent = names == set(id2rel.values())
    except (ValueError, TypeError, AttributeError) as e:
        malformed(ctx, "all", str(path), f"expected [{{id: relation}}, {{relation: id}}] ({e}); relations go unchecked")
        return None
    if not consistent:
        malformed(ctx, "all", str(path), "its two maps disagree; relations go unchecked")
        return None
    return names


@converter("biomedrag_classification")
def convert_classification(ctx: Context) -> Tables:
    tables: Tables = {}
    for split, files in ctx.spec.splits.items():
        rows = []
        for name in files:
            path = raw_file(ctx, name)
            for n, obj in jsonl_records(ctx, path, split):
                label = obj.get("label") if isinstance(obj, dict) else None
                # bool is an int subclass; true/false in the file would be a different format.
                text_ok = isinstance(obj, dict) and nonempty_str(obj.get("text"))
                if not text_ok or type(label) is not int or label not in (0, 1):
                    malformed(ctx, split, f"{path}:{n}", 'expected {"text": non-empty string, "label": 0 or 1}')
                    continue
                # Line numbers keep ids stable when a malformed line is skipped. Exact repeats
                # are kept: ADE's published test set counts them (500 rows, 3 repeated).
                rows.append({"id": f"{ctx.spec.name}-{split}-{n}", "split": split, "text": obj["text"].strip(), "label": label})
        tables[split] = (pd.DataFrame(rows, columns=CLASSIFICATION.names), CLASSIFICATION)
    return tables
