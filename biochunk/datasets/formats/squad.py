"""SQuAD-format reading comprehension (COVID-QA; SQuAD v1.1 and v2.0) -> DOCUMENTS + ANSWERS.

Each paragraph's ``context`` is one document. Its id is the paragraph's ``document_id`` where
there is one (COVID-QA: one article per paragraph); standard SQuAD files have none, so it is
derived from the article ``title`` (slugified; ``-p<n>`` per paragraph where an article has
several; ``-2``, ``-3`` for a repeat), else the article's position (``article-<n>``). An empty
``document_id`` is treated as absent and counted as a repair. SQuAD v2's unanswerable
questions (``is_impossible``) are skipped and counted; their ``plausible_answers`` are not read.

COVID-QA gives each article as one ``context``: title, URL, authors, then ``Abstract: ...``
and ``Text: ...``, paragraphs separated by blank lines. The context is kept verbatim as the
document text, so answer offsets stay valid; paragraphs are its blank-line-separated blocks,
and the ``Abstract:``/``Text:`` blocks open the two sections where they occur.

About one answer in six has an ``answer_start`` a few characters off (COVID-QA's
annotation tool counted some characters differently). Such an answer is moved to the
occurrence of its text nearest the stated offset, within ``REPAIR_WINDOW``; one with no
occurrence there, or two equally near, is dropped and counted.
"""

from __future__ import annotations

import logging
import re
from collections import Counter
from typing import Any

import pandas as pd

from biochunk.datasets.convert import Context, Tables, converter, malformed
from biochunk.datasets.formats._common import load_json, nonempty_str, raw_file
from biochunk.io import ANSWERS, DOCUMENTS

log = logging.getLogger(__name__)

# Characters an upstream answer_start may be off and still be repaired. COVID-QA's
# misses are -1, +2 and +3; a wider miss is more likely a different answer than a shift.
REPAIR_WINDOW = 100
BLOCK_BREAK = re.compile(r"\n[ \t]*\n\s*")
SECTION_MARKERS = ("Abstract", "Text")  # COVID-QA (CORD-19) prefixes "Abstract: " and "Text: "


@converter("squad")
def convert_squad(ctx: Context) -> Tables:
    documents: list[dict[str, Any]] = []
    answers: list[dict[str, Any]] = []
    repairs: Counter[int] = Counter()
    doc_ids: set[str] = set()
    question_ids: set[str] = set()
    derived = 0
    for files in ctx.spec.splits.values():
        for name in files:
            path = raw_file(ctx, name)
            squad = load_json(ctx, path, "documents")
            if squad is None:
                continue
            if not isinstance(squad, dict) or not isinstance(squad.get("data"), list):
                malformed(ctx, "documents", str(path), 'expected SQuAD format {"data": [...]}')
                continue
            for i, article in enumerate(squad["data"]):
                paragraphs = article.get("paragraphs") if isinstance(article, dict) else None
                if not isinstance(paragraphs, list):
                    malformed(ctx, "documents", f"{path}:data[{i}]", 'expected {"paragraphs": [...]}')
                    continue
                title = article.get("title")
                base = _slug(title) if isinstance(title, str) else ""
                for j, para in enumerate(paragraphs):
                    where = f"{path}:data[{i}].paragraphs[{j}]"
                    ctx.report.rows_read["documents"] += 1
                    fallback = (base or f"article-{i + 1}") + (f"-p{j + 1}" if len(paragraphs) > 1 else "")
                    doc = _document(ctx, where, para, doc_ids, fallback, title if base else None)
                    if doc is None:
                        continue
                    derived += doc.pop("derived")
                    documents.append(doc)
                    answers.extend(_answers(ctx, where, para.get("qas", []), doc, question_ids, repairs))
    for shift, n in sorted(repairs.items()):
        ctx.report.repair("answers", f"answer_start off by {shift:+d} characters", n)
    if repairs:
        log.warning("%d answer offsets repaired (shift: count) %s", sum(repairs.values()), dict(sorted(repairs.items())))
    if derived:
        ctx.report.notes.append(
            f"{derived} document ids derived from the article titles (or positions): the file gives no document_id"
        )
    return {
        "documents": (pd.DataFrame(documents, columns=DOCUMENTS.names), DOCUMENTS),
        "answers": (pd.DataFrame(answers, columns=ANSWERS.names), ANSWERS),
    }


def _document(ctx: Context, where: str, para: Any, doc_ids: set[str], fallback: str, title: str | None) -> dict[str, Any] | None:
    """The paragraph as a document; ``fallback`` is its id when it has no document_id, ``title`` its article's."""
    if not isinstance(para, dict) or not nonempty_str(para.get("context")):
        malformed(ctx, "documents", where, "expected a non-empty context")
        return None
    given = para.get("document_id")
    if given is not None and not str(given).strip():
        ctx.report.repair("documents", "empty document_id: id derived from the article title or position")
        given = None
    if given is not None:
        doc_id = str(given)
        if doc_id in doc_ids:
            malformed(ctx, "documents", where, f"document_id {doc_id} occurs twice")
            return None
    else:
        # A repeated title (or two titles with one slug) gets -2, -3 ...: in file order, so deterministic.
        doc_id, n = fallback, 1
        while doc_id in doc_ids:
            n += 1
            doc_id = f"{fallback}-{n}"
    doc_ids.add(doc_id)
    text = para["context"]
    blocks = paragraph_spans(text)
    return {
        "doc_id": doc_id,
        # COVID-QA's context opens with its article's title; a standard SQuAD article names it.
        "title": title.strip() if given is None and title else text[blocks[0][0] : blocks[0][1]].split("\n", 1)[0].strip(),
        "text": text,
        "sections": _sections(text, blocks),
        "paragraphs": [{"start": s, "end": e} for s, e in blocks],
        "derived": given is None,
    }


_NOT_WORD = re.compile(r"[\W_]+")
SLUG_CHARS = 80  # ids appear in reports and logs; a whole sentence as a title would not read


def _slug(title: str) -> str:
    """``"Super_Bowl_50"`` -> ``"super-bowl-50"``; letters of any script are kept."""
    return _NOT_WORD.sub("-", title.lower())[:SLUG_CHARS].strip("-")


def paragraph_spans(text: str) -> list[tuple[int, int]]:
    """(start, end) of each blank-line-separated block, trimmed of surrounding whitespace."""
    spans = []
    pos = 0
    for m in [*BLOCK_BREAK.finditer(text), None]:
        end = m.start() if m else len(text)
        block = text[pos:end]
        if block.strip():
            lead = len(block) - len(block.lstrip())
            spans.append((pos + lead, pos + len(block.rstrip())))
        pos = m.end() if m else len(text)
    return spans


def _sections(text: str, blocks: list[tuple[int, int]]) -> list[dict[str, Any]]:
    """A section per ``Abstract:``/``Text:`` marker, running to the next marker or the end."""
    starts = [(k, marker) for k, (s, _) in enumerate(blocks) for marker in SECTION_MARKERS if text.startswith(f"{marker}:", s)]
    sections = []
    for n, (k, marker) in enumerate(starts):
        last = starts[n + 1][0] - 1 if n + 1 < len(starts) else len(blocks) - 1
        sections.append({"title": marker, "start": blocks[k][0], "end": blocks[last][1]})
    return sections


def _answers(
    ctx: Context, where: str, qas: Any, doc: dict[str, Any], question_ids: set[str], repairs: Counter[int]
) -> list[dict[str, Any]]:
    if not isinstance(qas, list):
        malformed(ctx, "answers", where, "qas must be a list")
        return []
    text = doc["text"]
    out = []
    for k, qa in enumerate(qas):
        here = f"{where}.qas[{k}]"
        ctx.report.rows_read["answers"] += 1
        # An empty id is no id: two of them would collide, and runs are keyed by question id.
        id_text = str(qa.get("id")).strip() if isinstance(qa, dict) and qa.get("id") is not None else ""
        ok = isinstance(qa, dict) and id_text != "" and nonempty_str(qa.get("question"))
        impossible = ok and qa.get("is_impossible") is True  # v2 may leave its answers out
        if not ok or not (impossible or isinstance(qa.get("answers"), list)):
            malformed(ctx, "answers", here, "expected a non-empty id, a question and an answers list")
            continue
        qid = str(qa["id"])
        if qid in question_ids:
            malformed(ctx, "answers", here, f"question id {qid} occurs twice")
            continue
        question_ids.add(qid)
        if qa.get("is_impossible") is True:
            # SQuAD v2: unanswerable by design; its plausible_answers are wrong on purpose.
            ctx.report.drop("answers", "unanswerable question (is_impossible)")
            continue
        if qa.get("is_impossible") or not qa["answers"]:
            ctx.report.drop("answers", "question without an answer")
            continue
        # COVID-QA gives one answer per question; further ones would be alternatives.
        if len(qa["answers"]) > 1:
            ctx.report.drop("answers", "alternative answer beyond the first", len(qa["answers"]) - 1)
        answer = qa["answers"][0]
        if not isinstance(answer, dict) or not nonempty_str(answer.get("text")) or type(answer.get("answer_start")) is not int:
            malformed(ctx, "answers", here, "expected an answer with non-empty text and an integer answer_start")
            continue
        answer_text, start = answer["text"], answer["answer_start"]
        if text[start : start + len(answer_text)] != answer_text:
            fixed = _nearest(text, answer_text, start)
            if isinstance(fixed, str):
                ctx.report.drop("answers", fixed)
                continue
            repairs[fixed - start] += 1
            start = fixed
        out.append(
            {
                "question_id": qid,
                "doc_id": doc["doc_id"],
                "question": qa["question"].strip(),
                "answer_text": answer_text,
                "start": start,
                "end": start + len(answer_text),
            }
        )
    return out


def _nearest(text: str, answer: str, start: int) -> int | str:
    """The start of the occurrence of ``answer`` nearest ``start``, or why there is none."""
    lo = max(0, start - REPAIR_WINDOW)
    hi = min(len(text), start + REPAIR_WINDOW + len(answer))
    found = []
    pos = text.find(answer, lo, hi)
    while pos != -1:
        found.append(pos)
        pos = text.find(answer, pos + 1, hi)
    if not found:
        return f"answer text not within {REPAIR_WINDOW} characters of answer_start"
    found.sort(key=lambda p: abs(p - start))
    if len(found) > 1 and abs(found[0] - start) == abs(found[1] - start):
        return "answer text occurs equally near answer_start twice"
    return found[0]
