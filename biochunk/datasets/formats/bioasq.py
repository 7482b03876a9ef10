"""BioASQ Task B golden batches (``{"questions": [...]}``, one file per test batch).

Registry ``splits`` maps each batch name (7B1 ... 11B4) to its file; the batch name becomes
the ``split`` column. Questions carry PubMed URLs but no abstracts: the gold snippets are
the passage text, kept with their section and character offsets.
"""

from __future__ import annotations

from typing import Any

import pandas as pd

from biochunk.datasets.convert import Context, Tables, converter, malformed
from biochunk.datasets.formats._common import load_json, nonempty_str, raw_file
from biochunk.io import QA_QUESTIONS, QA_SNIPPETS

TYPES = ("yesno", "factoid", "list", "summary")
SNIPPET_KEYS = ("text", "document", "beginSection", "endSection", "offsetInBeginSection", "offsetInEndSection")


@converter("bioasq")
def convert_bioasq(ctx: Context) -> Tables:
    questions: list[dict[str, Any]] = []
    snippets: list[dict[str, Any]] = []
    seen: set[str] = set()
    for batch, files in ctx.spec.splits.items():
        for name in files:
            path = raw_file(ctx, name)
            doc = load_json(ctx, path, batch)
            if doc is None:
                continue
            if not isinstance(doc, dict) or not isinstance(doc.get("questions"), list):
                malformed(ctx, batch, str(path), 'expected {"questions": [...]}')
                continue
            for i, q in enumerate(doc["questions"]):
                ctx.report.rows_read[batch] += 1
                where = f"{path}:questions[{i}]"
                row = _question(ctx, batch, where, q)
                if row is None:
                    continue
                if row["id"] in seen:
                    ctx.report.drop(batch, "question id already seen in an earlier batch (first kept)")
                    continue
                seen.add(row["id"])
                questions.append(row)
                snippets.extend(_snippets(ctx, batch, where, row["id"], q.get("snippets") or []))
    return {
        "questions": (pd.DataFrame(questions, columns=QA_QUESTIONS.names), QA_QUESTIONS),
        "snippets": (pd.DataFrame(snippets, columns=QA_SNIPPETS.names), QA_SNIPPETS),
    }


def _question(ctx: Context, batch: str, where: str, q: Any) -> dict[str, Any] | None:
    if not isinstance(q, dict) or not nonempty_str(q.get("id")) or not nonempty_str(q.get("body")):
        malformed(ctx, batch, where, "expected a question object with non-empty id and body")
        return None
    qtype = q.get("type")
    if qtype not in TYPES:
        malformed(ctx, batch, where, f"question {q['id']}: type {qtype!r} is not one of {', '.join(TYPES)}")
        return None
    ideal = q.get("ideal_answer", [])
    ideal = [ideal] if isinstance(ideal, str) else ideal
    documents = q.get("documents", [])
    if not _strings(ideal) or not _strings(documents):
        malformed(ctx, batch, where, f"question {q['id']}: ideal_answer and documents must be lists of strings")
        return None
    exact = _exact(q.get("exact_answer"), qtype)
    if exact is None:
        malformed(ctx, batch, where, f"question {q['id']}: exact_answer {q.get('exact_answer')!r} does not fit type {qtype}")
        return None
    return {
        "id": q["id"],
        "split": batch,
        "type": qtype,
        "body": q["body"].strip(),
        "ideal_answer": [s.strip() for s in ideal],
        "exact_answer": exact,
        "documents": list(documents),
    }


def _exact(value: Any, qtype: str) -> list[str] | None:
    """The exact answer as a flat list of strings, or None when it does not fit the type."""
    if qtype == "summary":
        return []  # summary questions have only an ideal answer
    if qtype == "yesno":
        # One 11B question says "Yes"; the answer is the same.
        answer = value.strip().lower() if isinstance(value, str) else None
        return [answer] if answer in ("yes", "no") else None
    # factoid and list: [[answer, synonym, ...], ...], older batches also a flat list.
    if value is None:
        return []
    if isinstance(value, str):
        value = [value]
    flat: list[str] = []
    stack = list(reversed(value)) if isinstance(value, list) else None
    if stack is None:
        return None
    while stack:
        item = stack.pop()
        if isinstance(item, list):
            stack.extend(reversed(item))
        elif isinstance(item, str):
            if item.strip():
                flat.append(item.strip())
        else:
            return None
    return flat


def _snippets(ctx: Context, batch: str, where: str, qid: str, raw: Any) -> list[dict[str, Any]]:
    if not isinstance(raw, list):
        malformed(ctx, batch, where, f"question {qid}: snippets must be a list")
        return []
    out = []
    for j, s in enumerate(raw):
        ok = (
            isinstance(s, dict)
            and all(k in s for k in SNIPPET_KEYS)
            and nonempty_str(s["text"])
            and all(isinstance(s[k], str) for k in ("document", "beginSection", "endSection"))
            and all(type(s[k]) is int for k in ("offsetInBeginSection", "offsetInEndSection"))
        )
        if not ok:
            why = f"question {qid}: expected string fields text/document/beginSection/endSection and integer offsets"
            malformed(ctx, batch, f"{where}.snippets[{j}]", why)
            continue
        out.append(
            {
                "question_id": qid,
                "snippet_id": f"{qid}-{j}",
                "text": s["text"],
                "document": s["document"],
                "begin_section": s["beginSection"],
                "end_section": s["endSection"],
                "offset_begin": s["offsetInBeginSection"],
                "offset_end": s["offsetInEndSection"],
            }
        )
    return out


def _strings(value: Any) -> bool:
    return isinstance(value, list) and all(isinstance(x, str) for x in value)
