"""A folder of the user's own documents -> DOCUMENTS (+ ANSWERS from ``questions.jsonl``).

Registry ``splits`` (built by ``datasets.local``, not written by hand): ``documents`` lists
the document files relative to the folder, ``questions`` the questions file if there is one.

- ``.txt`` / ``.md``: the file is the document; paragraphs are its blank-line-separated
  blocks, Markdown ``#`` headings open sections.
- ``.jsonl``: one document per line, ``{"id" | "_id" | "doc_id", "title"?, "text"}``.
- ``.pdf`` (pypdf): the pages' text joined by a blank line; each page is a section titled
  ``page <n>`` spanning its text, so a chunk's page is the section holding its start.
- ``.html`` / ``.htm`` (BeautifulSoup): the text of each block element (paragraph, list item,
  heading, table cell, ...) is a paragraph; scripts, styles and navigation are left out;
  headings open sections.

A file's document id is its path relative to the folder (``notes/a.pdf``); a JSON-lines
document keeps its own id. ``questions.jsonl``: ``{"id", "question", "doc_id", "answer"}``
(the answer's first occurrence in the document) or with ``"start"`` too (the occurrence
there); a question naming a document the folder lacks is an error, never a dropped row.
"""

from __future__ import annotations

import io
import logging
import re
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pandas as pd
from bs4 import BeautifulSoup, Tag
from pypdf import PdfReader
from pypdf.errors import PyPdfError

from biochunk.datasets.convert import Context, Tables, converter, decode, jsonl_records, malformed
from biochunk.datasets.formats._common import nonempty_str, raw_file
from biochunk.datasets.formats.squad import paragraph_spans
from biochunk.errors import UserError
from biochunk.io import ANSWERS, DOCUMENTS

log = logging.getLogger(__name__)

TEXT_SUFFIXES = (".txt", ".md")
HTML_SUFFIXES = (".html", ".htm")
DOCUMENT_SUFFIXES = (*TEXT_SUFFIXES, ".jsonl", ".pdf", *HTML_SUFFIXES)
QUESTIONS_FILE = "questions.jsonl"
PAGE_BREAK = "\n\n"  # between PDF pages, so paragraph splitting also breaks there
PAGE_TITLE = "page {}"  # a PDF page's section title (1-based)
# An ATX heading line: 1-6 '#', blanks, the title. The title's closing blanks and '#'s are cut
# in ``md_headings``: as a regex tail (``(.+?)[ \t#]*$``) they backtrack over each '#' run of a
# long line, quadratic in its length (issue 25: 0.25 MB took 200 s).
MD_HEADING = re.compile(r"^(#{1,6})([ \t]+)(.*)$", re.MULTILINE)
# HTML elements whose text is one paragraph; the innermost one wins where they nest.
HTML_BLOCKS = (
    "p",
    "li",
    "h1",
    "h2",
    "h3",
    "h4",
    "h5",
    "h6",
    "pre",
    "blockquote",
    "td",
    "th",
    "dd",
    "dt",
    "figcaption",
    "caption",
)
HTML_BLOCK_SET = frozenset(HTML_BLOCKS)
HTML_HEADINGS = ("h1", "h2", "h3", "h4", "h5", "h6")
HTML_SKIP = ("script", "style", "noscript", "nav", "template", "svg", "head")


@converter("folder")
def convert_folder(ctx: Context) -> Tables:
    docs: list[dict[str, Any]] = []
    seen: set[str] = set()
    for name in ctx.spec.splits.get("documents", []):
        path = raw_file(ctx, name)
        for doc in _read(ctx, path, name):
            if doc["doc_id"] in seen:
                malformed(ctx, "documents", str(path), f"document id {doc['doc_id']!r} occurs twice in the folder")
                continue
            seen.add(doc["doc_id"])
            docs.append(doc)
    answers = [a for name in ctx.spec.splits.get("questions", []) for a in _questions(ctx, raw_file(ctx, name), docs)]
    tables: Tables = {"documents": (pd.DataFrame(docs, columns=DOCUMENTS.names), DOCUMENTS)}
    if ctx.spec.splits.get("questions"):
        tables["answers"] = (pd.DataFrame(answers, columns=ANSWERS.names), ANSWERS)
    return tables


def _read(ctx: Context, path: Path, name: str) -> list[dict[str, Any]]:
    ctx.report.rows_read["documents"] += 1
    suffix = path.suffix.lower()
    if suffix == ".jsonl":
        ctx.report.rows_read["documents"] -= 1  # counted per line instead
        return [d for n, obj in jsonl_records(ctx, path, "documents") if (d := _jsonl_doc(ctx, f"{path}:{n}", obj))]
    if suffix == ".pdf":
        doc = _pdf(ctx, path, name)
    elif suffix in HTML_SUFFIXES:
        doc = _html(ctx, path, name)
    else:
        doc = _text(ctx, path, name)
    return [doc] if doc else []


def _decoded(ctx: Context, path: Path) -> str | None:
    text, why = decode(path.read_bytes())
    if text is None:
        _empty(ctx, path, f"{why}; save it as UTF-8 text, or remove it from the folder")
    return text


def _empty(ctx: Context, path: Path, what: str) -> None:
    # A whole file that yields no document: "fix the line" (``malformed``) would not fit it.
    if not ctx.skip_malformed:
        raise UserError(f"{path}: {what}")
    ctx.report.drop("documents", what.split(" (")[0].split(";")[0])


def _text(ctx: Context, path: Path, name: str) -> dict[str, Any] | None:
    text = _decoded(ctx, path)
    if text is None:
        return None
    if not text.strip():
        _empty(ctx, path, "the file holds no text; remove it from the folder")
        return None
    paragraphs = paragraph_spans(text)
    sections = []
    if path.suffix.lower() == ".md":
        heads = md_headings(text)
        for k, (head, start) in enumerate(heads):
            end = heads[k + 1][1] if k + 1 < len(heads) else len(text)
            # The section's own slice, not text[:end]: one copy of each section, linear in all.
            sections.append({"title": head, "start": start, "end": start + len(text[start:end].rstrip())})
    title = sections[0]["title"] if sections else text[paragraphs[0][0] : paragraphs[0][1]].split("\n", 1)[0].strip()
    return _doc(name, title, text, sections, paragraphs)


def md_headings(text: str) -> list[tuple[str, int]]:
    r"""(title, start) of each Markdown ATX heading, in order; linear in the text.

    The same titles as ``^(#{1,6})[ \t]+(.+?)[ \t#]*$`` (the title without its closing
    blanks and '#'s), down to headings of blanks and '#'s only.
    """
    out = []
    for m in MD_HEADING.finditer(text):
        blanks, rest = m.group(2), m.group(3)
        title = rest.rstrip(" \t#")
        if not title:  # "# ##": the lazy title keeps one character, a '#' or the last blank
            if rest:
                title = rest[0]
            elif len(blanks) > 1:
                title = blanks[-1]
            else:
                continue  # "# " alone is no heading
        out.append((title, m.start()))
    return out


def _jsonl_doc(ctx: Context, where: str, obj: Any) -> dict[str, Any] | None:
    key = next((k for k in ("id", "_id", "doc_id") if isinstance(obj, dict) and obj.get(k) is not None), None)
    if key is None or not nonempty_str(obj.get("text")):
        malformed(ctx, "documents", where, 'expected {"id": ..., "text": "..."} (a "title" is optional)')
        return None
    # An empty id is no id: questions could not name the document, and two empty ids would
    # collide; a float or a list is a shifted column, not an id.
    if type(obj[key]) not in (str, int) or not str(obj[key]).strip():
        malformed(ctx, "documents", where, f"document {key} {obj[key]!r} is not a non-empty string or integer; give it an id")
        return None
    text = obj["text"]
    title = obj.get("title") if isinstance(obj.get("title"), str) else ""
    return _doc(str(obj[key]), title.strip(), text, [], paragraph_spans(text))


def _pdf(ctx: Context, path: Path, name: str) -> dict[str, Any] | None:
    try:
        with _quiet_pypdf():
            reader = PdfReader(io.BytesIO(path.read_bytes()))
        if reader.is_encrypted:
            _empty(ctx, path, "the PDF is encrypted; decrypt it first (e.g. `qpdf --decrypt`)")
            return None
        with _quiet_pypdf():
            pages = [(page.extract_text() or "").strip() for page in reader.pages]
        meta_title = (reader.metadata.title if reader.metadata else None) or ""
    except (PyPdfError, ValueError, KeyError, TypeError, OSError) as e:
        why = f"{type(e).__name__}: {str(e).splitlines()[0]}" if str(e) else type(e).__name__
        _empty(ctx, path, f"not a readable PDF ({why}); export it again, or remove it from the folder")
        return None
    if not any(pages):
        _empty(ctx, path, "the PDF has no text layer (a scan?); run OCR on it first, or remove it from the folder")
        return None
    parts: list[str] = []
    pos, sections = 0, []
    for n, page in enumerate(pages, 1):
        if not page:
            continue  # a blank page: no section, the page numbers of the others stay true
        if parts:
            parts.append(PAGE_BREAK)
            pos += len(PAGE_BREAK)
        sections.append({"title": PAGE_TITLE.format(n), "start": pos, "end": pos + len(page)})
        parts.append(page)
        pos += len(page)
    text = "".join(parts)
    paragraphs = paragraph_spans(text)
    title = str(meta_title).strip() or text[paragraphs[0][0] : paragraphs[0][1]].split("\n", 1)[0].strip()
    return _doc(name, title, text, sections, paragraphs)


@contextmanager
def _quiet_pypdf() -> Iterator[None]:
    # pypdf logs a warning for every defect it works around ("EOF marker not found"); a PDF it
    # cannot read ends in one error line of ours instead, one it can is read as it is.
    logger = logging.getLogger("pypdf")
    level = logger.level
    logger.setLevel(logging.ERROR)
    try:
        yield
    finally:
        logger.setLevel(level)


def _html(ctx: Context, path: Path, name: str) -> dict[str, Any] | None:
    markup = _decoded(ctx, path)
    if markup is None:
        return None
    soup = BeautifulSoup(markup, "html.parser")
    title = soup.title.get_text(" ", strip=True) if soup.title else ""
    for tag in soup.find_all(HTML_SKIP):
        tag.decompose()
    blocks: list[Tag] = _leaf_blocks(soup)
    if not blocks:  # no block markup: the page's text as one paragraph
        blocks = [soup]
    parts: list[str] = []  # joined once: growing one string block by block copies it each time
    pos, paragraphs, heads = 0, [], []
    for b in blocks:
        words = " ".join(b.get_text(" ").split())
        if not words:
            continue
        if parts:
            parts.append("\n\n")
            pos += 2
        paragraphs.append((pos, pos + len(words)))
        if getattr(b, "name", None) in HTML_HEADINGS:
            heads.append((words, pos))
        parts.append(words)
        pos += len(words)
    text = "".join(parts)
    if not text:
        _empty(ctx, path, "the page holds no text; remove it from the folder")
        return None
    sections = [
        {"title": t, "start": s, "end": heads[k + 1][1] - 2 if k + 1 < len(heads) else len(text)}
        for k, (t, s) in enumerate(heads)
    ]
    return _doc(name, title or (heads[0][0] if heads else ""), text, sections, paragraphs)


def _leaf_blocks(soup: BeautifulSoup) -> list[Tag]:
    """The block elements with no block element inside, in document order, in one walk of the tree.

    Asking each block whether it holds another (``b.find(HTML_BLOCKS)``) costs a search per
    block: 70 s for a 4 MB page. Walked with an explicit stack, so deep nesting cannot
    exhaust Python's recursion limit either. Leaves never nest, so the order in which they
    close is their document order.
    """
    leaves: list[Tag] = []
    stack: list[tuple[Tag, Iterator[Any], list[bool]]] = [(soup, iter(soup.contents), [False])]
    while stack:
        tag, children, below = stack[-1]
        child = next(children, None)
        if isinstance(child, Tag):
            stack.append((child, iter(child.contents), [False]))
        elif child is None:  # the tag closes
            stack.pop()
            block = tag is not soup and tag.name in HTML_BLOCK_SET
            if block and not below[0]:
                leaves.append(tag)
            if stack and (block or below[0]):
                stack[-1][2][0] = True
    return leaves


def _doc(doc_id: str, title: str, text: str, sections: list[dict[str, Any]], paragraphs: list[tuple[int, int]]) -> dict[str, Any]:
    return {
        "doc_id": doc_id,
        "title": title,
        "text": text,
        "sections": sections,
        "paragraphs": [{"start": s, "end": e} for s, e in paragraphs],
    }


def _questions(ctx: Context, path: Path, docs: list[dict[str, Any]]) -> list[dict[str, Any]]:
    text_of = {d["doc_id"]: d["text"] for d in docs}
    out, ids = [], set()
    for n, q in jsonl_records(ctx, path, "answers"):
        where = f"{path}:{n}"
        ok = isinstance(q, dict) and q.get("id") is not None and nonempty_str(q.get("question")) and q.get("doc_id") is not None
        if not ok or not nonempty_str(q.get("answer")):
            malformed(ctx, "answers", where, 'expected {"id", "question", "doc_id", "answer"} (and optionally "start")')
            continue
        if not str(q["id"]).strip():  # runs and the report are keyed by question id
            malformed(ctx, "answers", where, "the question id is empty; give every question an id")
            continue
        doc_id, answer = str(q["doc_id"]), q["answer"]
        if doc_id not in text_of:
            known = ", ".join(sorted(text_of)[:5]) + (" ..." if len(text_of) > 5 else "")
            raise UserError(
                f"{where}: question {q['id']} names document {doc_id!r}, which is not in the folder ({known}); fix its doc_id"
            )
        if str(q["id"]) in ids:
            malformed(ctx, "answers", where, f"question id {q['id']} occurs twice")
            continue
        text = text_of[doc_id]
        start = q.get("start")
        if type(start) is not int:
            start = text.find(answer)
        if start < 0 and "start" not in q:
            # A PDF breaks lines where its layout wrapped them: the answer as the user typed it
            # matches the text with any run of whitespace between its words (counted).
            m = re.search(r"\s+".join(map(re.escape, answer.split())), text)
            if m:
                start, answer = m.start(), m.group(0)
                ctx.report.repair("answers", "answer found with other whitespace between its words")
        if start < 0 or text[start : start + len(answer)] != answer:
            where_ = "at the given start" if "start" in q else "anywhere (whitespace aside)"
            malformed(ctx, "answers", where, f"answer {answer[:40]!r} is not in document {doc_id} {where_}")
            continue
        ids.add(str(q["id"]))
        out.append(
            {
                "question_id": str(q["id"]),
                "doc_id": doc_id,
                "question": q["question"].strip(),
                "answer_text": answer,
                "start": start,
                "end": start + len(answer),
            }
        )
    return out
