"""BEIR retrieval layout (SciFact): ``corpus.jsonl``, ``queries.jsonl``, ``qrels/<split>.tsv``.

Registry ``splits``: the keys ``corpus`` and ``queries`` name those files; every other key
is a qrels split (``train``, ``test``) whose judgements go into one ``qrels`` table.
"""

from __future__ import annotations

import pandas as pd

from biochunk.datasets.convert import Context, Tables, converter, jsonl_records, malformed, text_lines
from biochunk.datasets.formats._common import nonempty_str, raw_file
from biochunk.errors import UserError
from biochunk.io import CORPUS, QRELS, QUERIES

QRELS_HEADER = ("query-id", "corpus-id", "score")


@converter("beir")
def convert_beir(ctx: Context) -> Tables:
    for key in ("corpus", "queries"):
        if key not in ctx.spec.splits:
            raise UserError(f"{ctx.spec.name}: a beir dataset needs a splits.{key} entry in the registry")
    corpus = _records(ctx, "corpus", ("_id", "title", "text"), {"doc_id": "_id", "title": "title", "text": "text"})
    queries = _records(ctx, "queries", ("_id", "text"), {"query_id": "_id", "text": "text"})
    doc_ids, query_ids = set(corpus["doc_id"]), set(queries["query_id"])
    qrels = [
        _qrels(ctx, split, files, doc_ids, query_ids)
        for split, files in ctx.spec.splits.items()
        if split not in ("corpus", "queries")
    ]
    return {
        "corpus": (corpus, CORPUS),
        "queries": (queries, QUERIES),
        "qrels": (pd.concat(qrels, ignore_index=True) if qrels else pd.DataFrame(columns=QRELS.names), QRELS),
    }


def _records(ctx: Context, split: str, required: tuple[str, ...], columns: dict[str, str]) -> pd.DataFrame:
    rows: list[dict[str, str]] = []
    seen: dict[str, dict[str, str]] = {}
    for name in ctx.spec.splits[split]:
        path = raw_file(ctx, name)
        for n, obj in jsonl_records(ctx, path, split):
            # BEIR titles may be empty (queries have none); ids and text may not.
            ok = isinstance(obj, dict) and all(isinstance(obj.get(k), str) for k in required)
            if not ok or not nonempty_str(obj["_id"]) or not nonempty_str(obj["text"]):
                malformed(ctx, split, f"{path}:{n}", f"expected string fields {', '.join(required)} with non-empty _id and text")
                continue
            row = {col: obj[key].strip() for col, key in columns.items()}
            first = seen.get(obj["_id"])
            if first is not None:
                # A repeat is harmless; one id with two texts leaves no way to know which was judged.
                if first != row:
                    malformed(ctx, split, f"{path}:{n}", f"_id {obj['_id']!r} was already given a different title or text")
                else:
                    ctx.report.drop(split, "duplicate _id (first kept)")
                continue
            seen[obj["_id"]] = row
            rows.append(row)
    return pd.DataFrame(rows, columns=list(columns))


def _qrels(ctx: Context, split: str, files: list[str], doc_ids: set[str], query_ids: set[str]) -> pd.DataFrame:
    rows, seen = [], set()
    for name in files:
        path = raw_file(ctx, name)
        for n, line in text_lines(ctx, path, split):
            fields = line.rstrip("\r\n").split("\t")
            if n == 1 and tuple(fields) == QRELS_HEADER:
                continue
            ctx.report.rows_read[split] += 1
            if len(fields) != 3 or not fields[0].strip() or not fields[1].strip():
                why = f"expected 3 tab-separated fields {'/'.join(QRELS_HEADER)}, got {len(fields)}"
                malformed(ctx, split, f"{path}:{n}", why)
                continue
            query_id, doc_id = fields[0].strip(), fields[1].strip()
            try:
                relevance = int(fields[2])
            except ValueError:
                malformed(ctx, split, f"{path}:{n}", f"score {fields[2]!r} is not an integer")
                continue
            if query_id not in query_ids:
                ctx.report.drop(split, "query_id not in queries")
                continue
            if doc_id not in doc_ids:
                ctx.report.drop(split, "doc_id not in corpus")
                continue
            if (query_id, doc_id) in seen:
                ctx.report.drop(split, "duplicate (query_id, doc_id) (first kept)")
                continue
            seen.add((query_id, doc_id))
            rows.append({"query_id": query_id, "doc_id": doc_id, "relevance": relevance, "split": split})
    return pd.DataFrame(rows, columns=QRELS.names)
