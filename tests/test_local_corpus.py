"""Your own corpus (issue 15): a local folder, BEIR folder or SQuAD file -> the registry datasets'
Parquet schemas; PDF pages and HTML blocks kept with offsets; bad input stops with one line
and writes nothing; the one comparison command end to end on the shipped example."""

from __future__ import annotations

import html
import importlib.util
import json
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pyarrow.parquet as pq
import pytest

from biochunk.datasets.formats.folder import PAGE_TITLE
from biochunk.datasets.local import convert_local, detect_kind
from biochunk.errors import UserError
from biochunk.evaluation.corpus_compare import answer_hits, load, section_of
from biochunk.evaluation.corpus_report import use_snippet
from biochunk.io import ANSWERS, CORPUS, DOCUMENTS, QRELS, QUERIES
from tests.conftest import ROOT, metrics_diff_module

EXAMPLE = ROOT / "docs" / "example-corpus"


def write_pdf(path: Path, pages: list[str], title: str = "") -> None:
    from fpdf import FPDF  # a dev requirement: the test writes its PDFs, none are committed

    pdf = FPDF()
    pdf.set_font("helvetica", size=11)
    if title:
        pdf.set_title(title)
    for text in pages:
        pdf.add_page()
        pdf.multi_cell(0, 6, text)
    pdf.output(str(path))


def schema_of(path: Path):
    return pq.read_schema(path).remove_metadata()


def test_folder_of_text_markdown_html_jsonl(tmp_path):
    (tmp_path / "a.txt").write_text("Title line\n\nFirst paragraph here.\n\nSecond one.\n")
    (tmp_path / "b.md").write_text("# Intro\n\nSome text.\n\n## Methods\n\nMore text.\n")
    (tmp_path / "c.html").write_text(
        "<html><head><title>Page</title><script>var hidden = 1;</script></head><body><nav>Menu</nav>"
        "<h1>Heading</h1><p>Para <b>one</b>.</p><ul><li>item</li></ul></body></html>"
    )
    (tmp_path / "d.jsonl").write_text('{"id": "j1", "title": "T", "text": "JSON lines document."}\n')
    info = convert_local(tmp_path, tmp_path / "out", name="mine")
    assert info["kind"] == "folder" and info["task"] == "documents"
    assert schema_of(tmp_path / "out" / "documents.parquet").equals(DOCUMENTS)
    docs = pd.read_parquet(tmp_path / "out" / "documents.parquet").set_index("doc_id")
    assert sorted(docs.index) == ["a.txt", "b.md", "c.html", "j1"]
    html = docs.loc["c.html"]
    assert html["title"] == "Page" and html["text"] == "Heading\n\nPara one .\n\nitem"
    assert "hidden" not in html["text"] and "Menu" not in html["text"]
    md = docs.loc["b.md"]
    assert [s["title"] for s in md["sections"]] == ["Intro", "Methods"]
    for _, d in docs.iterrows():  # every paragraph and section is a span of the text
        for p in d["paragraphs"]:
            assert d["text"][p["start"] : p["end"]].strip() == d["text"][p["start"] : p["end"]] != ""


def test_pdf_pages_are_sections_and_chunks_find_their_page(tmp_path):
    write_pdf(tmp_path / "guide.pdf", ["Page one talks about fever.", "", "Page three talks about asthma."], title="Guide")
    convert_local(tmp_path, tmp_path / "out")
    doc = pd.read_parquet(tmp_path / "out" / "documents.parquet").iloc[0]
    assert doc["doc_id"] == "guide.pdf" and doc["title"] == "Guide"
    pages = list(doc["sections"])
    assert [p["title"] for p in pages] == [PAGE_TITLE.format(1), PAGE_TITLE.format(3)]  # the blank page keeps its number
    assert doc["text"][pages[1]["start"] : pages[1]["end"]] == "Page three talks about asthma."
    asthma = doc["text"].index("asthma")
    assert section_of(pages, asthma) == "page 3" and section_of(pages, 0) == "page 1"


def test_beir_folder_uses_the_beir_converter(tmp_path):
    (tmp_path / "qrels").mkdir()
    (tmp_path / "corpus.jsonl").write_text(
        '{"_id": "d1", "title": "A", "text": "alpha"}\n{"_id": "d2", "title": "", "text": "beta"}\n'
    )
    (tmp_path / "queries.jsonl").write_text('{"_id": "q1", "text": "alpha?"}\n{"_id": "q2", "text": "beta?"}\n')
    (tmp_path / "qrels" / "dev.tsv").write_text("query-id\tcorpus-id\tscore\nq1\td1\t1\nq2\td2\t1\n")
    assert detect_kind(tmp_path) == "beir"
    info = convert_local(tmp_path, tmp_path / "out")
    assert info["task"] == "retrieval"
    for name, schema in (("corpus", CORPUS), ("queries", QUERIES), ("qrels", QRELS)):
        assert schema_of(tmp_path / "out" / f"{name}.parquet").equals(schema)
    corpus = load(tmp_path / "out", "retrieval")
    assert corpus.eval_split == "dev"  # no test split: the first one that is not train
    assert corpus.coll.qrels == {"q1": {"d1": 1}, "q2": {"d2": 1}} and not corpus.coll.train_qrels
    first = load(tmp_path / "out", "retrieval", max_documents=1)  # q2's only judged document is cut off
    assert list(first.coll.docs["doc_id"]) == ["d1"] and first.coll.qrels == {"q1": {"d1": 1}}


def test_squad_file_uses_the_squad_converter(tmp_path):
    squad = {"data": [{"paragraphs": [{"document_id": 7, "context": "Aspirin thins blood.", "qas": [
        {"id": "x", "question": "What thins blood?", "answers": [{"text": "Aspirin", "answer_start": 0}]}]}]}]}  # fmt: skip
    (tmp_path / "qa.json").write_text(json.dumps(squad))
    convert_local(tmp_path / "qa.json", tmp_path / "out")
    assert schema_of(tmp_path / "out" / "answers.parquet").equals(ANSWERS)
    corpus = load(tmp_path / "out", "documents")
    assert corpus.coll.qrels == {"x": {"7": 1}} and len(corpus.answers) == 1


def test_questions_file_gives_answers_and_answer_hits(tmp_path):
    (tmp_path / "a.txt").write_text("The spacer is washed once a month in warm water.")
    (tmp_path / "questions.jsonl").write_text(
        '{"id": "q", "question": "How often?", "doc_id": "a.txt", "answer": "once a month"}\n'
    )
    convert_local(tmp_path, tmp_path / "out")
    corpus = load(tmp_path / "out", "documents")
    a = corpus.answers.iloc[0]
    assert (a["start"], a["end"]) == (21, 33)
    chunks = pd.DataFrame({"chunk_id": ["c1", "c2"], "doc_id": ["a.txt"] * 2, "start": [0, 27], "end": [27, 49]})
    assert answer_hits({"q": [("c1", 1.0), ("c2", 0.5)]}, chunks, corpus.answers) == {
        "answer@1": 0.0,
        "answer@3": 0.0,
    }  # cut in two
    assert answer_hits({"q": [("a.txt", 1.0)]}, None, corpus.answers)["answer@1"] == 1.0  # whole documents


def _script():
    spec = importlib.util.spec_from_file_location("compare_stage", ROOT / "stages" / "compare.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def _bad_folder(kind: str, tmp: Path) -> Path:
    folder = tmp / "corpus"
    folder.mkdir()
    if kind == "empty":
        (folder / "notes.docx").write_bytes(b"not a format we read")
    elif kind == "bad-pdf":
        (folder / "ok.txt").write_text("A readable note.")
        (folder / "broken.pdf").write_bytes(b"%PDF-1.4\n this is not really a PDF \x00\x01")
    elif kind == "unknown-doc":
        (folder / "a.txt").write_text("Some text with an answer.")
        (folder / "questions.jsonl").write_text(
            '{"id": "q1", "question": "Where?", "doc_id": "missing.pdf", "answer": "answer"}\n'
        )
    return folder


@pytest.mark.parametrize(
    "kind,expected",
    [
        ("empty", "no documents found"),
        ("bad-pdf", "broken.pdf: not a readable PDF (PdfStreamError: Stream has ended unexpectedly); export it again"),
        ("unknown-doc", "names document 'missing.pdf', which is not in the folder"),
    ],
)
def test_bad_input_one_line_and_no_output(kind, expected, tmp_path, monkeypatch, capsys, caplog):
    folder = _bad_folder(kind, tmp_path)
    out = tmp_path / "report"
    monkeypatch.chdir(ROOT)
    monkeypatch.setattr(sys, "argv", ["compare.py", "--corpus", str(folder), "--out", str(out), "--methods", "fixed"])
    with pytest.raises(SystemExit) as e:
        from biochunk import cli

        cli.run(_script().main)
    assert e.value.code == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("error: ") and expected in err[0], err
    assert not out.exists() and [p.name for p in tmp_path.iterdir()] == ["corpus"]
    assert not [r.getMessage() for r in caplog.records if r.name.startswith("pypdf")]  # no "EOF marker not found" line


def test_bad_input_errors_name_the_fix(tmp_path):
    with pytest.raises(UserError, match="put documents there"):
        convert_local(_bad_folder("empty", tmp_path), tmp_path / "out")


@pytest.mark.slow
def test_compare_command_on_example_with_a_pdf(tmp_path, monkeypatch):
    """The one command on the shipped example plus a generated PDF: report, metrics, chunks."""
    corpus = tmp_path / "corpus"
    corpus.mkdir()
    for f in EXAMPLE.iterdir():
        (corpus / f.name).write_bytes(f.read_bytes())
    write_pdf(
        corpus / "iron.pdf", ["Iron deficiency is the commonest cause of anaemia.", "Oral iron is taken on alternate days."]
    )
    with (corpus / "questions.jsonl").open("a") as f:
        f.write(
            '{"id": "p1", "question": "How is oral iron taken?", "doc_id": "iron.pdf", "answer": "Oral iron is taken on alternate days"}\n'
        )
    out = tmp_path / "report"
    monkeypatch.chdir(ROOT)
    argv = [
        "x",
        "--corpus",
        str(corpus),
        "--out",
        str(out),
        "--methods",
        "fixed",
        "recursive",
        "percentile",
        "--samples",
        "2",
        "--bootstrap",
        "100",
        "--items",
        str(tmp_path / "items.parquet"),
    ]
    monkeypatch.setattr(sys, "argv", argv)
    _script().main()
    page = (out / "report.html").read_text()
    assert "<mark>" in page and "data:image/png;base64," in page and "http" not in page.split("<body>", 1)[1]
    m = json.loads((out / "metrics.json").read_text())
    assert m["corpus"]["documents"] == 4 and m["corpus"]["questions"] == 11
    assert {r["method"] for r in m["ranking"]} == {"none", "fixed", "recursive", "percentile"}
    assert all(r["ci_low"] <= r["ndcg@10"] <= r["ci_high"] for r in m["ranking"])
    # Each question's nDCG@10 per retriever and method, under the metric's own key: its mean is
    # the metric, so a paired difference between two runs is recomputed from this file.
    items = pd.read_parquet(tmp_path / "items.parquet")
    for retriever, by_method in m["retrieval"].items():
        for method, values in by_method.items():
            scores = items[items["metric"] == f"retrieval.{retriever}.{method}.ndcg@10"]
            assert len(scores) == 11 and scores["value"].mean() == values["ndcg@10"]
            # Its interval under the metric's name (``<metric>_ci_low``), where metrics_diff
            # looks for it when a change cannot be paired.
            assert values["ndcg@10_ci_low"] <= values["ndcg@10"] <= values["ndcg@10_ci_high"]
    timing = json.loads((out / "timing.json").read_text())  # wall time apart: the metrics reproduce
    assert set(timing) == set(m["sizes"]) and timing["fixed"]["seconds"] >= 0
    assert not any(k in size for size in m["sizes"].values() for k in ("seconds", "mb_per_s", "chunks_per_s"))
    chunks = pd.read_parquet(out / "chunks.parquet")
    assert set(chunks["method"]) == {"fixed", "recursive", "percentile"} and (out / "runs.parquet").exists()
    # Each method's settings cut the same chunks again through the report's snippet, the
    # semantic method with its encoder: what a user copies to chunk documents of their own.
    settings = m["settings"]
    assert settings["percentile"]["embed.model"] == "minilm" and "embed.model" not in settings["fixed"]
    assert "chunk.window" in settings["fixed"] and "chunk.window" not in settings["recursive"]
    best = next(r["method"] for r in m["ranking"] if not r["reference"])
    assert "ranks first here" in page and html.escape(use_snippet(settings[best])) in page
    docs = load(out / "data", m["corpus"]["task"]).coll.docs
    monkeypatch.chdir(tmp_path)
    for method, values in settings.items():
        (tmp_path / "document.txt").write_text(docs["text"].iloc[0], encoding="utf-8")
        names: dict = {}
        exec(use_snippet(values), names)  # the whole snippet runs: it reads document.txt and prints the chunks
        for doc_id, text in zip(docs["doc_id"], docs["text"]):
            want = chunks[(chunks["method"] == method) & (chunks["doc_id"] == doc_id)]
            got = [(c.start, c.end, c.text) for c in names["chunker"].chunk(text)]
            assert got == list(zip(want["start"], want["end"], want["text"])), (method, doc_id)


def test_answer_across_a_line_break_is_found_and_counted(tmp_path):
    (tmp_path / "a.txt").write_text("Wash the spacer once a\nmonth in warm water.")
    (tmp_path / "questions.jsonl").write_text(
        '{"id": "q", "question": "How often?", "doc_id": "a.txt", "answer": "once a month"}\n'
    )
    info = convert_local(tmp_path, tmp_path / "out")
    a = pd.read_parquet(tmp_path / "out" / "answers.parquet").iloc[0]
    assert a["answer_text"] == "once a\nmonth" and (a["start"], a["end"]) == (16, 28)
    assert info["rows_repaired"] == {"answers": {"answer found with other whitespace between its words": 1}}


@pytest.mark.slow
def test_train_judgements_train_a_reranker_that_reranks(tmp_path):
    """With qrels/train.tsv the comparison trains the cross-encoder (as the train_reranker stage
    does) and reranks BM25's top documents; without a reranker it says why in one note."""
    import dataclasses

    from biochunk import params
    from biochunk.embedding import SentenceEncoder
    from biochunk.evaluation import corpus_compare as compare

    (tmp_path / "qrels").mkdir()
    topics = ["iron deficiency anaemia", "asthma inhaler technique", "hand hygiene soap", "fever in children", "vitamin d bones"]
    docs = [{"_id": f"d{i}", "title": "", "text": f"{t} is discussed here in plain words, sentence {j}."} for i, t in enumerate(topics) for j in range(1)]
    docs += [{"_id": f"n{i}", "title": "", "text": f"unrelated note number {i} about scheduling and billing."} for i in range(6)]
    (tmp_path / "corpus.jsonl").write_text("".join(json.dumps(d) + "\n" for d in docs))
    queries = [{"_id": f"q{i}", "text": f"what about {t}?"} for i, t in enumerate(topics)]
    (tmp_path / "queries.jsonl").write_text("".join(json.dumps(q) + "\n" for q in queries))
    (tmp_path / "qrels" / "train.tsv").write_text("query-id\tcorpus-id\tscore\n" + "".join(f"q{i}\td{i}\t1\n" for i in range(3)))
    (tmp_path / "qrels" / "test.tsv").write_text("query-id\tcorpus-id\tscore\n" + "".join(f"q{i}\td{i}\t1\n" for i in range(3, 5)))
    convert_local(tmp_path, tmp_path / "out")
    corpus = load(tmp_path / "out", "retrieval")
    assert corpus.coll.train_qrels and set(corpus.coll.qrels) == {"q3", "q4"}
    # retrieve.chunk: {} keeps chunk.* as it is (params.yaml's retrieve.chunk would make 128-word windows)
    cp, rp = params.section("chunk", data={}), params.section("retrieve", data={"retrieve": {"chunk": {}}})
    tp = dataclasses.replace(params.section("train_reranker", data={}), steps=2, batch_size=2, negatives=1)
    encoder = SentenceEncoder(params.section("embed", data={}).model)
    c = compare.run(corpus, ["fixed"], lambda m: rp.chunk_params(cp, m), rp, encoder, ["bm25"], n_samples=1, n_boot=50, reranker=tp)
    assert c.rerank["report"]["trained"] and c.rerank["report"]["steps"] == 2
    assert set(c.rerank) >= {"bm25", "reranked"} and 0.0 <= c.rerank["reranked"]["ndcg@10"] <= 1.0
    assert any(n.startswith("reranker (trained 2 steps") and "paired over the same 2 questions" in n for n in c.notes)
    # The paired difference is the mean of the per-question differences, and the items give back
    # both runs' means, so a later change of reranker pairs in scripts/metrics_diff.py.
    per = {k: c.items[c.items["metric"] == f"rerank.{k}.ndcg@10"]["value"].to_numpy() for k in ("bm25", "reranked")}
    assert all(len(v) == 2 and v.mean() == pytest.approx(c.rerank[k]["ndcg@10"], abs=1e-12) for k, v in per.items())
    d = c.rerank["reranked_minus_bm25"]
    assert d["ndcg@10"] == pytest.approx((per["reranked"] - per["bm25"]).mean(), abs=1e-12)
    assert d["ndcg@10_ci_low"] <= d["ndcg@10"] <= d["ndcg@10_ci_high"] and d["separable"] in (True, False)
    assert "per_query" not in c.rerank
    # The PR table pairs a change of the reranked nDCG@10 (a primary metric) over these items.
    md = metrics_diff_module()
    v = c.rerank["reranked"]["ndcg@10"]
    diff = {"metrics/compare-x.json": {"rerank.reranked.ndcg@10": {"old": v, "new": v}}}
    (row,) = md.primary_rows(diff, {"metrics/compare-x.json": (c.items, c.items)})
    assert row["metric"] == "nDCG@10 (BM25, reranked)" and row["paired"] and row["ci"] == (0.0, 0.0)
    # A rerun may replace an items file holding reranked scores, and nothing else's.
    c.items.to_parquet(tmp_path / "items.parquet", index=False)
    assert _script()._compare_items(tmp_path / "items.parquet")
    c.items.assign(metric="triple.f1").to_parquet(tmp_path / "other.parquet", index=False)
    assert not _script()._compare_items(tmp_path / "other.parquet")
    off = compare.run(corpus, ["fixed"], lambda m: rp.chunk_params(cp, m), rp, encoder, ["bm25"], n_samples=1, n_boot=50)
    assert not off.rerank and any(n.startswith("reranking skipped: turned off") for n in off.notes)
    # Dense retrieval alone leaves no BM25 run to rerank: said, not skipped silently.
    dense = compare.run(corpus, ["fixed"], lambda m: rp.chunk_params(cp, m), rp, encoder, ["dense"], n_samples=1, n_boot=50, reranker=tp)
    assert not dense.rerank and any(n.startswith("reranking skipped: it reranks BM25's top documents") for n in dense.notes)
    # The DVC branch trains it in compare_reranker's stage and compare loads the saved folder:
    # the same reranked run, score for score, as training inside the comparison.
    from biochunk.retrieval import experiment
    from biochunk.scoring import crossencoder

    ce, report = experiment.train_reranker(corpus.coll, tp, rp.k1, rp.b, "the corpus")
    crossencoder.save(ce, tmp_path / "reranker")
    loaded = compare.Trained(crossencoder.load(str(tmp_path / "reranker"), max_length=tp.max_length), report)
    again = compare.run(corpus, ["fixed"], lambda m: rp.chunk_params(cp, m), rp, encoder, ["bm25"], n_samples=1, n_boot=50, reranker=loaded)
    assert again.rerank["reranked"] == c.rerank["reranked"] and again.rerank["reranked_minus_bm25"] == c.rerank["reranked_minus_bm25"]


@pytest.mark.slow
def test_a_ready_reranker_reranks_a_corpus_without_train_judgements_through_both_routes(tmp_path):
    """train_reranker.model naming a ready cross-encoder (a folder here; a hub id on a user's
    machine) is loaded, not trained: compare_reranker saves it with its max_length even where the
    corpus has no train judgements, compare --reranker reranks with it, and the one command that
    loads it in-process writes the same metrics."""
    import yaml

    from biochunk import params
    from biochunk.evaluation import corpus_compare
    from biochunk.scoring import crossencoder

    beir = tmp_path / "beir"
    (beir / "qrels").mkdir(parents=True)
    topics = ["iron deficiency anaemia", "asthma inhaler technique", "hand hygiene soap", "fever in children"]
    docs = [{"_id": f"d{i}", "title": "", "text": f"{t} is discussed here in plain words."} for i, t in enumerate(topics)]
    docs += [{"_id": f"n{i}", "title": "", "text": f"unrelated note number {i} about scheduling and billing."} for i in range(4)]
    (beir / "corpus.jsonl").write_text("".join(json.dumps(d) + "\n" for d in docs))
    (beir / "queries.jsonl").write_text("".join(json.dumps({"_id": f"q{i}", "text": f"what about {t}?"}) + "\n" for i, t in enumerate(topics)))
    (beir / "qrels" / "test.tsv").write_text("query-id\tcorpus-id\tscore\n" + "".join(f"q{i}\td{i}\t1\n" for i in range(4)))
    data = yaml.safe_load((ROOT / "params.yaml").read_text())
    ready = tmp_path / "ready"  # a cross-encoder saved as a user's fine-tuned one would be
    crossencoder.save(crossencoder.load(data["train_reranker"]["model"], max_length=96), ready)
    data["train_reranker"].update(model=str(ready), max_length=96)
    (tmp_path / "params.yaml").write_text(yaml.safe_dump(data, sort_keys=False))
    run = lambda *a: subprocess.run([sys.executable, *a, "--params", str(tmp_path / "params.yaml")], cwd=ROOT, capture_output=True, text=True)  # noqa: E731
    assert run("stages/convert_local.py", "--corpus", str(beir), "--out", str(tmp_path / "data")).returncode == 0
    done = run("stages/compare_reranker.py", "--data", str(tmp_path / "data"), "--out", str(tmp_path / "rr"))
    assert done.returncode == 0, done.stderr[-3000:]
    # What it does not read is said: nothing is trained, and the saved folder keeps its max_length.
    (warned,) = [line for line in done.stderr.splitlines() if "is a ready cross-encoder, used as it is" in line]
    assert all(f"train_reranker.{k}" in warned for k in ("steps", "lr", "seed", "max_length")) and "retrieve.k1" in warned
    assert corpus_compare.unread_by_ready(params.section("train_reranker", data={})) == []  # the offline alias is trained
    report = json.loads((tmp_path / "rr" / crossencoder.REPORT_FILE).read_text())
    assert report["reranking"] and not report["trained"] and report["max_length"] == 96 and report["model"] == str(ready)
    flags = ("--methods", "fixed", "--retrievers", "bm25", "--bootstrap", "50")
    staged = run("stages/compare.py", "--data", str(tmp_path / "data"), "--reranker", str(tmp_path / "rr"), "--out", str(tmp_path / "a"), *flags)
    assert staged.returncode == 0, staged.stderr[-3000:]
    alone = run("stages/compare.py", "--corpus", str(beir), "--out", str(tmp_path / "b"), *flags)
    assert alone.returncode == 0, alone.stderr[-3000:]
    assert "train_reranker.steps" in next(line for line in alone.stderr.splitlines() if "is a ready cross-encoder" in line)
    a, b = (json.loads((tmp_path / d / "metrics.json").read_text()) for d in ("a", "b"))
    assert a["rerank"]["report"] == {k: v for k, v in report.items() if k not in ("corpus", "max_length")}
    assert 0.0 <= a["rerank"]["reranked"]["ndcg@10"] <= 1.0 and a["rerank"] == b["rerank"]
    assert any(n.startswith(f"reranker ({ready}, used as is)") for n in a["notes"]), a["notes"]
    assert {k: v for k, v in a.items() if k != "samples"} == {k: v for k, v in b.items() if k != "samples"}


@pytest.mark.slow
def test_dvc_branch_converts_once_and_compares_as_the_command_does(tmp_path):
    """data.local as DVC runs it: convert_local@<name> then compare@<name> on the converted folder.
    Its metrics are the one command's (--corpus); a chunk param re-runs the comparison only, an
    edited document both stages."""
    from tests.conftest import copy_repo

    repo, env = copy_repo(tmp_path / "repo", {"data": {"local": {"mine": "docs/example-corpus"}}, "chunk_docs": {"methods": ["fixed"]}})
    env["DVC_NO_ANALYTICS"] = "1"  # as .dvc/config says too
    run = lambda *cmd: subprocess.run(cmd, cwd=repo, env=env, capture_output=True, text=True)  # noqa: E731
    assert run("git", "add", "-A").returncode == 0 and run("git", "commit", "-qm", "x").returncode == 0
    done = run("dvc", "repro", "compare@mine")
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    ran = [f"Running stage '{s}@mine'" in done.stdout for s in ("convert_local", "compare_reranker", "compare")]
    assert all(ran), done.stdout[-3000:]
    # No train judgements here: the reranker stage says so, and compare says that reranking is off.
    assert json.loads((repo / "data/compare-reranker/mine/report.json").read_text())["reranking"] is False
    assert json.loads((repo / "data/local/mine/report.json").read_text())["kind"] == "folder"
    assert not (repo / "data/compare/mine/data").exists()  # the converted tables are convert_local's output only
    alone = run(sys.executable, "stages/compare.py", "--corpus", "docs/example-corpus", "--methods", "fixed", "--out", "build/c")
    assert alone.returncode == 0, alone.stderr[-3000:]
    # BM25's JVM logs at WARN (cli.run): without that, log4j printed 8 INFO lines to stdout here
    # (the analyzer's settings, per index) and Lucene a 2-line notice to stderr.
    java_info = [l for l in (alone.stdout + alone.stderr).splitlines() if "SimpleIndexer" in l or "MemorySegmentIndexInput" in l]
    assert not java_info, java_info
    # The --metrics copy is metrics.json without the settings (DVC diffs those as params) and the samples.
    full = json.loads((repo / "build/c/metrics.json").read_text())
    assert json.loads((repo / "metrics/compare-mine.json").read_text()) == {k: v for k, v in full.items() if k not in ("settings", "samples")}
    params = repo / "params.yaml"
    params.write_text(params.read_text().replace("window: 128", "window: 64", 1))
    stale = run("dvc", "status", "--with-deps", "compare@mine").stdout
    assert "compare@mine" in stale and "convert_local@mine" not in stale and "compare_reranker@mine" not in stale, stale
    run("git", "checkout", "params.yaml")
    # A reranker param re-runs the reranker's stage; compare follows only if what it trained changed.
    params.write_text(params.read_text().replace("steps: 120", "steps: 60", 1))
    stale = run("dvc", "status", "--with-deps", "compare@mine").stdout
    # (The root dvc.yaml's stages print without a file prefix: "compare@mine:".)
    assert "compare_reranker@mine" in stale and "compare@mine" not in stale.replace("compare_reranker@mine", ""), stale
    run("git", "checkout", "params.yaml")
    # convert.skip_malformed is convert_local's param, not compare's (compare reads it with
    # --corpus only): the conversion re-runs, and compare too only if the tables changed.
    params.write_text(params.read_text().replace("skip_malformed: false", "skip_malformed: true", 1))
    stale = run("dvc", "status", "--with-deps", "compare@mine").stdout
    assert "convert_local@mine" in stale and "compare@mine" not in stale, stale
    again = run("dvc", "repro", "compare@mine")
    assert "Running stage 'convert_local@mine'" in again.stdout, again.stdout[-3000:] + again.stderr[-3000:]
    assert "Stage 'compare@mine' didn't change, skipping" in again.stdout, again.stdout[-3000:]  # no malformed rows here
    run("git", "checkout", "params.yaml")
    (repo / "docs/example-corpus/new.md").write_text("Paracetamol lowers a fever.\n")
    stale = run("dvc", "status", "--with-deps", "compare@mine").stdout
    assert "convert_local@mine" in stale and "modified:" in stale, stale
