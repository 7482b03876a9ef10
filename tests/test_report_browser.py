"""The comparison report displays in a real browser: headless Chromium renders a non-blank page
with the ranking, the inlined plots load, and the console stays free of errors (issue 15).

Skips when no Chromium is installed (``make install-browser`` installs Debian's package).
"""

from __future__ import annotations

import re
from pathlib import Path

import pandas as pd
import pytest
from browser import chromium, console_messages, needs_chromium
from PIL import Image

from biochunk.chunking.runs import MethodRun
from biochunk.evaluation.corpus_report import render

pytestmark = needs_chromium


def comparison() -> tuple[dict, list[dict], list[MethodRun]]:
    def chunks(method: str, sizes: list[int]) -> pd.DataFrame:
        return pd.DataFrame({"doc_id": "a.pdf", "chunk_id": [f"a-{method}-{i}" for i in range(len(sizes))], "n_tokens": sizes})

    runs = [
        MethodRun("fixed", chunks("fixed", [128, 128, 40]), 0.1, "words"),
        MethodRun("recursive", chunks("recursive", [90, 150, 60]), 0.1, "words"),
    ]
    sizes = {
        r.method: {"chunks": 3, "counter": "words", "tokens_mean": 99.0, "tokens_median": 90.0, "tokens_p95": 140.0, "tokens_max": 150,
                   "embedder_tokens_mean": 120.0, "answers": 2, "cut_answers": i, "cut_answer_share": i / 2}
        for i, r in enumerate(runs)
    }  # fmt: skip
    ranking = [
        {"method": m, "retriever": "hybrid", "ndcg@10": v, "ci_low": v - 0.1, "ci_high": min(1.0, v + 0.1), "hybrid_ndcg@10": v,
         "bm25_ndcg@10": v, "dense_ndcg@10": v, "recall@10": 1.0, "answer@1": a, "chunks": 3, "cut_answer_share": c}
        for m, v, a, c in (("fixed", 0.9, 1.0, 0.0), ("none", 0.85, 1.0, 0.0), ("recursive", 0.7, 0.5, 0.5))
    ]  # fmt: skip
    text = "Oral iron is taken on alternate days, with water."

    def card(method: str, mark) -> dict:
        return {"method": method, "chunk_id": "c", "doc_id": "a.pdf", "text": text, "start": 0, "end": len(text), "score": 1.0,
                "relevant": True, "section": "page 2", "mark": mark, "answer_whole": mark is not None}  # fmt: skip

    samples = [{"query_id": "q", "question": "How is oral iron taken?", "answer": "on alternate days", "relevant": ["a.pdf"],
                "retriever": "dense", "best": card("fixed", [19, 36]), "worst": card("recursive", None)}]  # fmt: skip
    metrics = {"corpus": {"dataset": "mine", "kind": "folder", "documents": 1, "questions": 2}, "sizes": sizes, "ranking": ranking,
               "notes": ["reranking skipped: no training judgements"]}  # fmt: skip
    return metrics, samples, runs


@pytest.fixture(scope="module")
def page(tmp_path_factory) -> Path:
    path = tmp_path_factory.mktemp("report") / "report.html"
    path.write_text(render(*comparison()), encoding="utf-8")
    return path


def test_report_is_self_contained(page):
    html = page.read_text()
    assert "<script" not in html and not re.search(r"""(src|href)=["']https?:""", html)
    assert html.count('src="data:image/png;base64,') == 3  # ranking, sizes, cut answers
    assert "<mark>on alternate days</mark>" in html and "page 2" in html


@pytest.mark.slow
def test_report_renders_non_blank_in_chromium(page, tmp_path):
    shot = tmp_path / "shot.png"
    r = chromium([f"--screenshot={shot}", "--window-size=1100,1600", page.as_uri()], tmp_path)
    assert shot.exists(), r.stderr[-2000:]
    img = Image.open(shot).convert("RGB")
    assert img.size == (1100, 1600)
    colours = img.getcolors(maxcolors=1 << 20)
    assert colours is not None and len(colours) > 50  # text, tables, the highlighted answer, plots
    assert img.getpixel((5, 5)) == (255, 255, 255)  # the page, not an error screen, fills the window


@pytest.mark.slow
def test_report_dom_and_console(page, tmp_path):
    r = chromium(["--virtual-time-budget=2000", "--dump-dom", page.as_uri()], tmp_path)
    assert "Chunk methods on" in r.stdout and "<mark>" in r.stdout and r.stdout.count("<tr") >= 6
    assert console_messages(page, tmp_path) == []


@pytest.mark.slow
def test_console_check_sees_an_error(tmp_path):
    # The console check above could pass by seeing nothing at all: it must see a real error.
    bad = tmp_path / "bad.html"
    bad.write_text("<html><body><p>x</p><script>console.error('boom'); undefinedCall();</script></body></html>")
    found = console_messages(bad, tmp_path)
    assert any("boom" in line for line in found) and any("Uncaught" in line for line in found), found
