"""The results index (docs/results/README.md) and the README quote headline figures by hand; the
pages beside the index are rendered from tracked metrics and per-item scores. A quoted figure
that a re-rendered page no longer holds would be a second, stale home of a result, so every
figure the two quote must stand on a rendered page: each interval as a whole, each number with
three or more decimals as written."""

import re

import pytest

from tests.conftest import ROOT

RESULTS = ROOT / "docs" / "results"
INDEXES = (RESULTS / "README.md", ROOT / "README.md")
INTERVAL = re.compile(r"([+−-]?\d+\.\d+) \[([+−-]?\d+\.\d+), ([+−-]?\d+\.\d+)\]")
FIGURE = re.compile(r"(?<![\d.])[+−-]?\d+\.\d{3,}(?![\d.])")


def _plain(text: str) -> str:
    """Signs as a page may write them: − or -, and + dropped (a page's cells are unsigned)."""
    return text.replace("−", "-").replace("+", "")


def _pages() -> str:
    return _plain(" ".join(p.read_text() for p in sorted(RESULTS.glob("*.md")) if p.name != "README.md"))


def _stands(figure: str, pages: str) -> bool:
    """``figure`` (plain) on a page, whole: not the tail of a longer number or of a negative one,
    so a quote whose sign or leading digit differs from the page's is not found."""
    return re.search(rf"(?<![\d.-]){re.escape(_plain(figure))}(?![\d])", pages) is not None


def test_the_index_quotes_figures():
    # The check below must have something to check: the index states its headline intervals.
    assert len(INTERVAL.findall(INDEXES[0].read_text())) >= 10


@pytest.mark.parametrize("index", INDEXES, ids=lambda p: p.relative_to(ROOT).as_posix())
def test_every_figure_an_index_quotes_stands_on_a_rendered_page(index):
    pages, text = _pages(), index.read_text()
    stale = [" ".join(m) for m in INTERVAL.findall(text) if not _stands(f"{m[0]} [{m[1]}, {m[2]}]", pages)]
    stale += [f for f in FIGURE.findall(text) if not _stands(f, pages)]
    assert not stale, f"{index.relative_to(ROOT)} quotes figures no page in docs/results holds: {stale}; copy them from the pages"
