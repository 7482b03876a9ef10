"""The long-document chunking pipeline (experiments/documents): its page is rendered from the
tracked evaluate_docs metrics, cell for cell, and its report reads nothing else."""

from __future__ import annotations

import json
import sys

import pytest

from biochunk import params
from biochunk.errors import UserError
from biochunk.evaluation.papers import to_json
from biochunk.evaluation.reports import documents
from tests.conftest import ROOT
from tests.forked import run_python

METRICS = ROOT / "metrics" / "papers" / "documents"
DATASETS = ["covidqa", "plos"]


def _metrics(answers: int = 0) -> dict:
    method = {
        "chunks": 3, "documents": 1, "counter": "words", "tokens_mean": 12.5, "embedder_tokens_median": 16.0,
        "embedder_tokens_p95": 30.2, "embedder_tokens_max": 31, "cut_answers": 1, "cut_answer_share": 0.25,
    }  # fmt: skip
    return {
        "stddev": method, "fixed": {**method, "chunks": 9}, "semchunk": {**method, "counter": "embedder"},
        "corpus": {"documents": 1, "megabytes": 0.01, "answers": answers},
    }  # fmt: skip


def test_every_cell_of_the_page_is_the_tracked_metrics():
    # The committed JSON beside the page is what the report builds from the committed metrics
    # today: no cell was typed by hand, and none is stale.
    for ds in DATASETS:
        methods = params.section("chunk_docs", ROOT / "params.yaml").methods
        (table,) = documents.tables(METRICS, [ds], "minilm", methods)
        committed = json.loads((ROOT / "docs/results/data" / f"long-documents-{ds}.json").read_text())
        assert json.loads(json.dumps(to_json(table), default=float)) == committed, ds
        metrics = json.loads((METRICS / f"{ds}.json").read_text())
        for row in committed["rows"]:
            m = metrics[row["label"]]
            assert row["ours"]["chunks"]["value"] == m["chunks"]
            assert row["ours"]["embedder tokens max"]["value"] == m["embedder_tokens_max"]
        page = (ROOT / "docs/results/long-documents.md").read_text()
        assert f"<!-- paper-table:{ds}:start -->" in page


def test_rows_follow_the_chunking_order_and_cut_answers_show_only_with_answers():
    t = documents.table("toy", _metrics(), "minilm", ["semchunk", "stddev", "fixed"])
    assert [r.label for r in t.rows] == ["semchunk", "stddev", "fixed"]  # chunk_docs.methods' order
    assert t.metrics == documents.SIZES
    assert t.rows[0].note == "size in embedder tokens" and t.rows[2].note == "size in words"
    with_answers = documents.table("toy", _metrics(answers=4), "minilm", ["fixed", "semchunk", "stddev"])
    assert with_answers.metrics == documents.SIZES + documents.CUTS
    assert with_answers.rows[0].ours["share cut (%)"].value == pytest.approx(25.0)


def test_metrics_without_a_corpus_entry_are_refused_in_one_line():
    body = _metrics()
    del body["corpus"]
    with pytest.raises(UserError, match=r"metrics of toy: no corpus entry; re-run experiments/documents/dvc.yaml:evaluate_docs@toy"):
        documents.table("toy", body, "minilm", ["fixed"])
    # Metrics of other methods than chunk_docs.methods names: stale, refused before rendering.
    with pytest.raises(UserError, match=r"metrics of toy: methods .*; re-run experiments/documents/dvc.yaml:evaluate_docs@toy"):
        documents.table("toy", _metrics(), "minilm", ["fixed", "semchunk"])


def test_the_report_stage_renders_into_the_page_and_keeps_its_prose(tmp_path):
    metrics = tmp_path / "metrics"
    metrics.mkdir()
    (metrics / "toy.json").write_text(json.dumps(_metrics(answers=4)))
    (tmp_path / "params.yaml").write_text("chunk_docs:\n  methods: [fixed, semchunk, stddev]\n")
    results = tmp_path / "results"
    results.mkdir()
    (results / "long-documents.md").write_text("# Page\n\nProse kept.\n\n<!-- paper-table:toy:start -->\nOLD-TABLE\n<!-- paper-table:toy:end -->\n")
    r = run_python(
        [sys.executable, str(ROOT / "stages" / "report_documents.py"), "--metrics", str(metrics), "--datasets", "toy",
         "--results", str(results), "--params", str(tmp_path / "params.yaml")], tmp_path,
    )  # fmt: skip
    assert r.returncode == 0, r.stderr[-2000:]
    page = (results / "long-documents.md").read_text()
    assert page.startswith("# Page\n\nProse kept.\n") and "OLD-TABLE" not in page
    assert "| fixed (size in words) | — / 9 |" in page and "share cut (%)" in page
    assert json.loads((results / "data" / "long-documents-toy.json").read_text())["section"] == "toy"
    figure = (results / documents.FIGURE).read_bytes()
    assert figure.startswith(b"\x89PNG") and len(figure) > 5000
    again = run_python(r.args, tmp_path)
    assert again.returncode == 0 and (results / documents.FIGURE).read_bytes() == figure, "the figure must reproduce byte for byte"
    bad = run_python(
        [sys.executable, str(ROOT / "stages" / "report_documents.py"), "--metrics", str(metrics), "--datasets", "nope",
         "--results", str(results), "--params", str(tmp_path / "params.yaml")], tmp_path,
    )  # fmt: skip
    lines = [x for x in bad.stderr.splitlines() if x.strip()]
    assert bad.returncode != 0 and len(lines) == 1 and "nope.json" in lines[0], bad.stderr


def test_the_window_line_is_drawn_only_for_an_embedder_whose_window_is_known(tmp_path, monkeypatch):
    # The dashed line says "256: MiniLM's window"; another embed.model does not read 256 tokens,
    # so its figure leaves the line out rather than mislabel it.
    import matplotlib.axes

    drawn: list[float] = []
    original = matplotlib.axes.Axes.axvline
    monkeypatch.setattr(matplotlib.axes.Axes, "axvline", lambda self, x=0, *a, **k: drawn.append(x) or original(self, x, *a, **k))
    metrics = {"toy": _metrics()}
    documents.size_plot(metrics, ["fixed", "semchunk", "stddev"], tmp_path / "a.png", "minilm")
    assert drawn == [documents.WINDOW]
    drawn.clear()
    documents.size_plot(metrics, ["fixed", "semchunk", "stddev"], tmp_path / "b.png", "ncbi/MedCPT-Article-Encoder")
    assert drawn == [] and (tmp_path / "b.png").read_bytes().startswith(b"\x89PNG")
