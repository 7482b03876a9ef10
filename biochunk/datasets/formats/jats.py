"""JATS XML full-text articles (PLOS) -> DOCUMENTS.

The document text is the article ``<body>``: each section title on a line of its own,
directly followed by the section's content; blocks (paragraphs, captions, lists, tables,
display formulas and quotes) separated by blank lines. Every ``<sec>`` becomes a section
span (title line included; subsections nest inside their parent) and every block a
paragraph span.

What the text leaves out, and how it is accounted for:
- front matter (abstract, authors) and back matter (references, acknowledgements) are not
  body, by design; the title goes into the ``title`` column.
- images (``graphic``/``inline-graphic``) have no text: each one without a textual
  alternative is counted in the report; a figure keeps its label and caption.
- where ``<alternatives>`` offers the same content twice (an image and MathML, an image
  and a table), the text form is kept and the image is not counted.
- ``object-id`` (a DOI of a figure or table) is metadata, not content.
"""

from __future__ import annotations

import re
import sys
import xml.etree.ElementTree as ET
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pandas as pd

from biochunk.datasets.convert import Context, Tables, converter, malformed
from biochunk.datasets.formats._common import raw_file
from biochunk.io import DOCUMENTS

SPLIT = "documents"  # the report's key: a document collection has no splits
IMAGES = ("graphic", "inline-graphic")
METADATA = ("object-id",)
BLOCK_CONTAINERS = ("boxed-text", "disp-quote")  # their children are blocks of their own
CELL_SEPARATOR = " | "
# Children that end a word even when the XML puts no whitespace after them.
WORD_BREAKING = frozenset(
    ("p", "title", "label", "caption", "list", "list-item", "break")
    + ("disp-formula", "disp-quote", "sec", "table", "tr", "td", "th")
)
_SPACE = re.compile(r"\s+")


@converter("jats")
def convert_jats(ctx: Context) -> Tables:
    rows = []
    for files in ctx.spec.splits.values():
        for name in files:
            path = raw_file(ctx, name)
            ctx.report.rows_read[SPLIT] += 1
            row = _article(ctx, path)
            if row is not None:
                rows.append(row)
    return {"documents": (pd.DataFrame(rows, columns=DOCUMENTS.names), DOCUMENTS)}


def _article(ctx: Context, path: Path) -> dict[str, Any] | None:
    try:
        root = ET.parse(path).getroot()
    except ET.ParseError as e:
        line = e.position[0] if e.position else 0
        malformed(ctx, SPLIT, f"{path}:{line}", f"not well-formed XML ({e})")
        return None
    body = root.find("body")
    if body is None:
        malformed(ctx, SPLIT, str(path), "article has no <body>")
        return None
    title_el = root.find("front/article-meta/title-group/article-title")
    doc = _Builder(ctx)
    try:
        doc.blocks(body)
    except RecursionError:
        malformed(ctx, SPLIT, str(path), f"elements nested deeper than {sys.getrecursionlimit()} levels")
        return None
    doc.sections = [r for r in doc.sections if not r.get("empty")]
    if not doc.parts:
        malformed(ctx, SPLIT, str(path), "article <body> has no text")
        return None
    return {
        "doc_id": path.stem,  # e.g. journal.pbio.0020188, the DOI's suffix (10.1371/...)
        "title": inline_text(title_el, ctx) if title_el is not None else "",
        "text": "".join(doc.parts),
        "sections": doc.sections,
        "paragraphs": doc.paragraphs,
    }


@dataclass
class _Builder:
    """Appends blocks to the text and records where each section and paragraph lies."""

    ctx: Context
    parts: list[str] = field(default_factory=list)
    pos: int = 0
    after_title: bool = False
    open_sections: list[dict[str, Any]] = field(default_factory=list)
    # open_sections[unstarted:] have no text yet: each add starts only those, and a section's
    # end is set when it closes, so a block costs O(1) however deep the nesting (issue 25).
    unstarted: int = 0
    last_end: int = 0
    sections: list[dict[str, Any]] = field(default_factory=list)
    paragraphs: list[dict[str, int]] = field(default_factory=list)

    def blocks(self, parent: ET.Element) -> None:
        for el in parent:
            tag = el.tag
            if tag == "sec":
                self.section(el)
            elif tag == "title" and parent.tag == "sec":
                continue  # section() made it the heading line
            elif tag in METADATA:
                continue
            elif tag in BLOCK_CONTAINERS:
                self.blocks(el)
            elif tag == "fig" or tag == "supplementary-material":
                self.caption_block(el)
            elif tag == "table-wrap":
                self.table_wrap(el)
            elif tag == "list":
                self.paragraph("\n".join(list_lines(el, self.ctx)))
            else:  # p, disp-formula and anything else: its text as one paragraph
                self.paragraph(inline_text(el, self.ctx))

    def section(self, sec: ET.Element) -> None:
        title_el = sec.find("title")
        title = inline_text(title_el, self.ctx) if title_el is not None else ""
        # Listed on entry so that sections stay in document order; filled in as text arrives.
        record: dict[str, Any] = {"title": title, "start": None, "end": None}
        self.sections.append(record)
        self.open_sections.append(record)
        if title:
            self.add(title, is_title=True)
        self.blocks(sec)
        self.open_sections.pop()
        self.unstarted = min(self.unstarted, len(self.open_sections))
        if record["start"] is None:
            record["empty"] = True  # removed at the end: removing it here is quadratic in the sections
            self.ctx.report.drop(SPLIT, "section without title or text")
        else:
            record["end"] = self.last_end  # the last add since it started was inside it

    def caption_block(self, el: ET.Element) -> None:
        """A figure or supplementary file: its label and caption as one paragraph."""
        pieces = [inline_text(c, self.ctx) for c in el if c.tag in ("label", "caption")]
        for c in el:
            if c.tag in IMAGES:
                count_image(self.ctx, c)
            elif c.tag not in ("label", "caption", *METADATA):
                pieces.append(inline_text(c, self.ctx))
        self.paragraph(" ".join(p for p in pieces if p))

    def table_wrap(self, el: ET.Element) -> None:
        self.paragraph(" ".join(p for p in (inline_text(c, self.ctx) for c in el if c.tag in ("label", "caption")) if p))
        for c in el:
            if c.tag in ("label", "caption", *METADATA):
                continue
            if c.tag == "alternatives":
                tables = [a for a in c if a.tag == "table"]
                if tables:
                    for t in tables:
                        self.paragraph("\n".join(table_lines(t, self.ctx)))
                else:
                    for a in c:
                        self.blocks_of_alternative(a)
            elif c.tag == "table":
                self.paragraph("\n".join(table_lines(c, self.ctx)))
            elif c.tag in IMAGES:
                count_image(self.ctx, c)
            else:  # table-wrap-foot and the like
                self.paragraph(inline_text(c, self.ctx))

    def blocks_of_alternative(self, el: ET.Element) -> None:
        if el.tag in IMAGES:
            count_image(self.ctx, el)
        else:
            self.paragraph(inline_text(el, self.ctx))

    def paragraph(self, text: str) -> None:
        text = text.strip()
        if not text:
            self.ctx.report.drop(SPLIT, "block without text (kept nothing)")
            return
        start, end = self.add(text, is_title=False)
        self.paragraphs.append({"start": start, "end": end})

    def add(self, text: str, is_title: bool) -> tuple[int, int]:
        if self.parts:
            sep = "\n" if self.after_title else "\n\n"
            self.parts.append(sep)
            self.pos += len(sep)
        start, end = self.pos, self.pos + len(text)
        self.parts.append(text)
        self.pos = end
        self.after_title = is_title
        for record in self.open_sections[self.unstarted :]:
            record["start"] = start
        self.unstarted = len(self.open_sections)
        self.last_end = end
        return start, end


def inline_text(el: ET.Element, ctx: Context) -> str:
    """The element's text on one line: whitespace runs collapsed, images counted."""
    pieces: list[str] = []
    _walk(el, ctx, pieces)
    return _SPACE.sub(" ", "".join(pieces)).strip()


def _walk(el: ET.Element, ctx: Context, out: list[str]) -> None:
    if el.tag in IMAGES:
        count_image(ctx, el)
    elif el.tag == "alternatives":
        # The same content in several forms: keep the first textual one; the images
        # beside it lose nothing and are not counted.
        texts = [a for a in el if a.tag not in IMAGES]
        if texts:
            _walk(texts[0], ctx, out)
        else:
            for a in el:
                count_image(ctx, a)
    elif el.tag not in METADATA:
        if el.text:
            out.append(el.text)
        for child in el:
            _walk(child, ctx, out)
            if child.tag in WORD_BREAKING:
                out.append(" ")
            # A child's tail is the parent's text that follows it, kept even after an image.
            if child.tail:
                out.append(child.tail)


def list_lines(el: ET.Element, ctx: Context) -> list[str]:
    """One line per list item, nested lists flattened in order."""
    lines = []
    for item in el:
        if item.tag != "list-item":
            text = inline_text(item, ctx)
            if text:
                lines.append(text)
            continue
        own: list[str] = [item.text or ""]  # label first: it precedes the item's text
        nested: list[str] = []
        for c in item:
            if c.tag == "list":
                nested.extend(list_lines(c, ctx))
            else:
                own.append(inline_text(c, ctx))
            own.append(c.tail or "")
        line = _SPACE.sub(" ", " ".join(own)).strip()
        if line:
            lines.append(line)
        lines.extend(nested)
    return lines


def table_lines(table: ET.Element, ctx: Context) -> list[str]:
    """One line per table row, cells joined by ``CELL_SEPARATOR``."""
    rows = (CELL_SEPARATOR.join(inline_text(cell, ctx) for cell in tr if cell.tag in ("td", "th")) for tr in table.iter("tr"))
    # Empty cells leave bare separators at a row's ends; trimmed so no block starts with a space.
    return [row.strip() for row in rows if row.strip()]


def count_image(ctx: Context, el: ET.Element) -> None:
    ctx.report.drop(SPLIT, f"{el.tag} (image, no text to keep)")
