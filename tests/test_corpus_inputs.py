"""The user's own corpus as users have it (issue 25): symbolic links, standard SQuAD v1/v2,
empty ids, CJK text, questions files in the wrong place, and parsing in linear time.

Speed is measured by ``benchmarks/parse_speed.py`` (figures, not assertions); here the
many-headings and deep-nesting inputs only have to come out right."""

from __future__ import annotations

import json
import logging
import os
import random
import re
from pathlib import Path

import pandas as pd
import pytest

from biochunk.chunking.windows import FixedWindowChunker
from biochunk.datasets.convert import convert
from biochunk.datasets.formats.folder import md_headings
from biochunk.datasets.local import convert_local
from biochunk.datasets.registry import DatasetSpec, get_spec
from biochunk.errors import UserError
from biochunk.text.counting import WordTable, count_words, span_counter
from biochunk.text.segment import word_spans
from tests.conftest import ROOT, SHARED

EXAMPLE = ROOT / "docs" / "example-corpus"


def docs(out: Path) -> pd.DataFrame:
    return pd.read_parquet(out / "documents.parquet").set_index("doc_id")


def folder(tmp_path: Path, files: dict[str, str]) -> Path:
    root = tmp_path / "corpus"
    for name, text in files.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text, encoding="utf-8")
    root.mkdir(exist_ok=True)
    return root


# ---------------------------------------------------------------- symbolic links


@pytest.fixture
def outside(tmp_path: Path) -> Path:
    secret = tmp_path / "secret"
    secret.mkdir()
    (secret / "passwords.txt").write_text("the secret that must not leak")
    return secret


@pytest.mark.parametrize(
    "link,target",
    [
        ("leak.txt", "secret/passwords.txt"),  # a file out of the folder
        ("sub/docs", "secret"),  # a folder out of the folder
        ("gone.md", "secret/nothing.md"),  # a link to nothing
        ("questions.jsonl", "secret/passwords.txt"),  # the questions file itself
    ],
)
def test_links_out_of_the_corpus_are_refused_naming_them(tmp_path, outside, link, target):
    root = folder(tmp_path, {"a.md": "# A\n\nText.\n", "sub/b.txt": "B."})
    os.symlink(tmp_path / target, root / link)
    with pytest.raises(UserError) as e:
        convert_local(root, tmp_path / "out")
    message = str(e.value)
    assert len(message.splitlines()) == 1 and str(root / link) in message and "symbolic link out of the corpus" in message
    assert not (tmp_path / "out").exists()


def test_a_link_to_a_link_out_is_refused(tmp_path, outside):
    root = folder(tmp_path, {"a.md": "A."})
    os.symlink(outside / "passwords.txt", root / "hop.txt.lnk")  # not a document name: never read itself
    os.symlink("hop.txt.lnk", root / "b.txt")
    with pytest.raises(UserError, match=r"b\.txt -> .*passwords\.txt"):
        convert_local(root, tmp_path / "out")


def test_a_loop_of_links_is_refused_not_a_traceback(tmp_path):
    root = folder(tmp_path, {"a.txt": "A."})
    os.symlink("y.txt", root / "x.txt")
    os.symlink("x.txt", root / "y.txt")
    with pytest.raises(UserError, match=r"x\.txt -> y\.txt \(a loop of links\)"):
        convert_local(root, tmp_path / "out")


def test_links_inside_are_not_followed_and_are_counted(tmp_path, caplog):
    root = folder(tmp_path, {"a.md": "# A\n\nText.\n", "sub/b.txt": "B text."})
    os.symlink("../a.md", root / "sub" / "again.md")
    os.symlink("..", root / "sub" / "up")  # a loop, were it followed
    os.symlink("sub", root / "alias")
    with caplog.at_level(logging.WARNING):
        info = convert_local(root, tmp_path / "out")
    assert sorted(docs(tmp_path / "out").index) == ["a.md", "sub/b.txt"]  # each file once, under its own path
    (reason,) = info["rows_dropped"]["documents"]
    assert reason.startswith("symbolic link inside the corpus") and info["rows_dropped"]["documents"][reason] == 3
    assert any("3 symbolic links inside the corpus not followed (alias, sub/again.md, sub/up)" in n for n in info["notes"])
    assert "not followed" in caplog.text
    report = json.loads((tmp_path / "out" / "report.json").read_text())
    assert report["notes"] == info["notes"]


def test_the_corpus_path_itself_may_be_a_link(tmp_path):
    root = folder(tmp_path, {"a.txt": "Alpha."})
    os.symlink(root, tmp_path / "mine")
    convert_local(tmp_path / "mine", tmp_path / "out")
    assert list(docs(tmp_path / "out").index) == ["a.txt"]


def test_beir_files_linked_out_are_refused(tmp_path, outside):
    root = folder(tmp_path, {"queries.jsonl": '{"_id": "q1", "text": "x"}\n', "qrels/test.tsv": "q1\td1\t1\n"})
    (outside / "corpus.jsonl").write_text('{"_id": "d1", "title": "", "text": "secret"}\n')
    os.symlink(outside / "corpus.jsonl", root / "corpus.jsonl")
    with pytest.raises(UserError, match=r"corpus\.jsonl -> .*symbolic link out of the corpus"):
        convert_local(root, tmp_path / "out")


# ---------------------------------------------------------------- questions files


def test_questions_in_a_subfolder_are_stated_not_silently_ignored(tmp_path, caplog):
    root = folder(tmp_path, {"a.txt": "Alpha beta.", "notes/questions.jsonl": '{"id": "q"}\n'})
    with caplog.at_level(logging.INFO):
        info = convert_local(root, tmp_path / "out")
    (nested,) = info["notes"]
    assert nested.startswith(f"{root / 'notes' / 'questions.jsonl'}: not read, only the top folder's questions.jsonl is")
    assert f"{root}: no questions.jsonl, so no retrieval scores: the methods are compared by size only" in caplog.text
    assert "notes/questions.jsonl: not read" in caplog.text and "no questions.jsonl" in caplog.text


def test_a_folder_with_questions_has_no_notes(tmp_path):
    info = convert_local(EXAMPLE, tmp_path / "out")
    assert "notes" not in info and "notes" not in json.loads((tmp_path / "out" / "report.json").read_text())


# ---------------------------------------------------------------- empty ids


def test_empty_jsonl_document_id_is_refused_with_file_and_line(tmp_path):
    root = folder(tmp_path, {"d.jsonl": '{"id": "d1", "text": "One."}\n{"id": "  ", "text": "Two."}\n'})
    with pytest.raises(UserError, match=r"d\.jsonl:2: document id '  ' is not a non-empty string or integer"):
        convert_local(root, tmp_path / "out")


def test_empty_jsonl_document_id_is_counted_when_skipping(tmp_path):
    root = folder(tmp_path, {"d.jsonl": '{"id": "d1", "text": "One."}\n{"id": "", "text": "Two."}\n{"_id": 5, "text": "3"}\n'})
    info = convert_local(root, tmp_path / "out", skip_malformed=True)
    assert sorted(docs(tmp_path / "out").index) == ["5", "d1"]
    why = "malformed: document id '' is not a non-empty string or integer; give it an id"
    assert info["rows_dropped"] == {"documents": {why: 1}}


def test_empty_question_id_is_refused_with_file_and_line(tmp_path):
    root = folder(tmp_path, {"a.txt": "Alpha beta.", "questions.jsonl": '{"id": "", "question": "?", "doc_id": "a.txt", "answer": "beta"}\n'})
    with pytest.raises(UserError, match=r"questions\.jsonl:1: the question id is empty"):
        convert_local(root, tmp_path / "out")


# ---------------------------------------------------------------- standard SQuAD


def squad_file(tmp_path: Path, data: list, version: str = "1.1") -> Path:
    path = tmp_path / "squad.json"
    path.write_text(json.dumps({"version": version, "data": data}))
    return path


def qa(qid: str, context: str, answer: str, **kw) -> dict:
    return {"id": qid, "question": f"Question {qid}?", "answers": [{"text": answer, "answer_start": context.index(answer)}], **kw}


NORMANS = "The Normans were the people who in the 10th and 11th centuries gave their name to Normandy."
NORMANS2 = "The Norman dynasty had a major political, cultural and military impact."
SUPER_BOWL = "Super Bowl 50 was an American football game to determine the champion of the NFL."


def test_squad_v1_without_document_ids(tmp_path):
    data = [
        {"title": "Normans", "paragraphs": [
            {"context": NORMANS, "qas": [qa("a1", NORMANS, "Normandy"), qa("a2", NORMANS, "10th and 11th centuries")]},
            {"context": NORMANS2, "qas": [qa("a3", NORMANS2, "Norman dynasty")]}]},
        {"title": "Super_Bowl_50", "paragraphs": [{"context": SUPER_BOWL, "qas": [qa("b1", SUPER_BOWL, "Super Bowl 50")]}]},
        {"title": "Normans", "paragraphs": [{"context": NORMANS2, "qas": []}]},  # the same title again
        {"paragraphs": [{"context": SUPER_BOWL, "qas": []}]},  # no title: its position
        {"title": "!!!", "paragraphs": [{"context": NORMANS, "qas": []}]},  # a title without letters
    ]  # fmt: skip
    info = convert_local(squad_file(tmp_path, data), tmp_path / "out")
    d = docs(tmp_path / "out")
    assert list(d.index) == ["normans-p1", "normans-p2", "super-bowl-50", "normans", "article-4", "article-5"]
    assert d.loc["normans-p1", "title"] == "Normans" and d.loc["super-bowl-50", "text"] == SUPER_BOWL
    answers = pd.read_parquet(tmp_path / "out" / "answers.parquet")
    assert dict(zip(answers["question_id"], answers["doc_id"])) == {
        "a1": "normans-p1", "a2": "normans-p1", "a3": "normans-p2", "b1": "super-bowl-50"
    }  # fmt: skip
    assert info["notes"] == ["6 document ids derived from the article titles (or positions): the file gives no document_id"]
    assert info["rows_dropped"] == {}


def test_squad_ids_are_deduplicated_deterministically(tmp_path):
    data = [{"title": t, "paragraphs": [{"context": NORMANS, "qas": []}]} for t in ("A b", "a-b", "A  B", "a-b-2")]
    data[0]["paragraphs"][0]["qas"] = [qa("q", NORMANS, "Normandy")]  # a SQuAD file without questions is refused
    convert_local(squad_file(tmp_path, data), tmp_path / "out")
    assert list(docs(tmp_path / "out").index) == ["a-b", "a-b-2", "a-b-3", "a-b-2-2"]


def test_squad_v2_unanswerable_questions_are_counted(tmp_path):
    impossible = {"id": "x1", "question": "Who?", "answers": [], "is_impossible": True}
    plausible = {"id": "x2", "question": "When?", "is_impossible": True}
    plausible["plausible_answers"] = [{"text": "10th", "answer_start": 38}]  # v2 train: no answers key at all
    data = [{"title": "Normans", "paragraphs": [
        {"context": NORMANS, "qas": [qa("a1", NORMANS, "Normandy", is_impossible=False), impossible, plausible]}]}]  # fmt: skip
    info = convert_local(squad_file(tmp_path, data, "v2.0"), tmp_path / "out")
    answers = pd.read_parquet(tmp_path / "out" / "answers.parquet")
    assert answers["question_id"].tolist() == ["a1"]  # plausible_answers are not answers
    assert info["rows_read"]["answers"] == 3
    assert info["rows_dropped"] == {"answers": {"unanswerable question (is_impossible)": 2}}


def test_squad_empty_document_id_is_derived_and_counted(tmp_path):
    data = [{"title": "Normans", "paragraphs": [{"document_id": " ", "context": NORMANS, "qas": [qa("q", NORMANS, "Normandy")]}]},
            {"title": "Other", "paragraphs": [{"document_id": 12, "context": NORMANS2, "qas": []}]}]  # fmt: skip
    info = convert_local(squad_file(tmp_path, data), tmp_path / "out")
    assert list(docs(tmp_path / "out").index) == ["normans", "12"]
    assert info["rows_repaired"] == {"documents": {"empty document_id: id derived from the article title or position": 1}}


def test_squad_empty_question_id_is_malformed(tmp_path):
    data = [{"title": "N", "paragraphs": [{"context": NORMANS, "qas": [qa("", NORMANS, "Normandy")]}]}]
    with pytest.raises(UserError, match=r"squad\.json:data\[0\]\.paragraphs\[0\]\.qas\[0\]: expected a non-empty id"):
        convert_local(squad_file(tmp_path, data), tmp_path / "out")


@pytest.mark.skipif(not (SHARED / "covidqa").is_dir(), reason=f"COVID-QA not available: {SHARED / 'covidqa'} is absent")
def test_covidqa_converts_as_before(tmp_path):
    """COVID-QA keeps its document_ids, first-line titles and repairs, and gets no notes."""
    raw = SHARED / "covidqa"
    report = convert(get_spec("covidqa"), raw, tmp_path / "out")
    source = json.loads((raw / "200423_covidQA.json").read_text())
    ids = [str(p["document_id"]) for a in source["data"] for p in a["paragraphs"]]
    d = pd.read_parquet(tmp_path / "out" / "documents.parquet")
    assert d["doc_id"].tolist() == ids and "notes" not in report
    assert all(t == text.strip().split("\n", 1)[0].strip() for t, text in zip(d["title"], d["text"]))
    assert report["rows_written"] == {"documents": 98, "answers": 1380} and report["rows_dropped"] == {}
    shifts = {-1: 196, 2: 10, 3: 28}
    assert report["rows_repaired"] == {"answers": {f"answer_start off by {k:+d} characters": n for k, n in shifts.items()}}


# ---------------------------------------------------------------- linear-time parsing, right answers


OLD_MD_HEADING = re.compile(r"^(#{1,6})[ \t]+(.+?)[ \t#]*$", re.MULTILINE)  # the quadratic one it replaces


def test_md_headings_match_the_old_pattern():
    rng = random.Random(25)
    for _ in range(5000):
        text = "".join(rng.choice("## \tab\r\n") for _ in range(rng.randint(0, 16)))
        assert md_headings(text) == [(m.group(2), m.start()) for m in OLD_MD_HEADING.finditer(text)], repr(text)


def test_markdown_with_many_headings_has_every_section(tmp_path):
    n = 3000
    text = "".join(f"{'#' * (1 + k % 3)} Part {k} ##\n\nBody of part {k}.\n\n" for k in range(n))
    root = folder(tmp_path, {"big.md": text, "long.md": "# a" + " #" * 50_000 + " x\n\nText.\n"})
    convert_local(root, tmp_path / "out")
    d = docs(tmp_path / "out")
    sections = list(d.loc["big.md", "sections"])
    assert [s["title"] for s in sections] == [f"Part {k}" for k in range(n)]
    for k, s in enumerate(sections):
        assert text[s["start"] : s["end"]] == f"{'#' * (1 + k % 3)} Part {k} ##\n\nBody of part {k}."
    (long,) = d.loc["long.md", "sections"]
    assert long["title"] == "a" + " #" * 50_000 + " x"


def test_html_innermost_blocks_and_deep_nesting(tmp_path):
    nested = "<div>" * 5000 + "<p>deep <b>text</b></p>" + "</div>" * 5000
    root = folder(tmp_path, {
        "a.html": "<body><h1>T</h1><blockquote><p>inner</p>tail</blockquote><td>cell <p>para</p></td><li>item</li></body>",
        "deep.html": nested,
    })  # fmt: skip
    convert_local(root, tmp_path / "out")
    d = docs(tmp_path / "out")
    assert d.loc["a.html", "text"] == "T\n\ninner\n\npara\n\nitem"  # blocks holding blocks give way to them
    assert d.loc["deep.html", "text"] == "deep text"


def test_jats_deeply_nested_and_empty_sections(tmp_path):
    import xml.etree.ElementTree as ET

    from biochunk.datasets.convert import Context, Report
    from biochunk.datasets.formats.jats import _Builder

    body = ET.fromstring(
        "<body><sec><title>A</title><sec></sec><sec><title>B</title><p>b</p><sec/></sec><p>a</p></sec><sec/></body>"
    )
    ctx = Context(DatasetSpec("t", "documents", "jats", "t", (), {}, None), tmp_path, False, Report())
    doc = _Builder(ctx)
    doc.blocks(body)
    text = "".join(doc.parts)
    spans = [(s["title"], text[s["start"] : s["end"]]) for s in doc.sections if not s.get("empty")]
    assert spans == [("A", "A\nB\nb\n\na"), ("B", "B\nb")]
    assert ctx.report.dropped == {"documents": {"section without title or text": 3}}


# ---------------------------------------------------------------- CJK word counts


CHINESE = "新型冠状病毒肺炎是一种传染病。患者应该隔离十四天，并接受核酸检测。"


def test_cjk_characters_count_as_words():
    assert count_words(CHINESE) == 33  # 30 characters, and 。，。 where each stands alone
    assert count_words("COVID-19疫苗 is 有效") == 6
    assert count_words("ひらがなとカタカナ") == 9
    assert count_words("한국어 문장입니다") == 2  # Korean is written with spaces
    assert count_words("plain English, as before.") == 4


def test_cjk_spans_count_what_they_hold():
    text = "Aspirin（阿司匹林）reduces 发热。 It works 很好。"
    table = span_counter(count_words, text, max_tokens=10)
    assert isinstance(table, WordTable)
    for a in range(len(text) + 1):
        for b in range(a, len(text) + 1):
            assert table.count(a, b) == count_words(text[a:b]), (a, b)


def test_fixed_windows_cut_a_chinese_document():
    chunks = FixedWindowChunker(size=5).spans(CHINESE)
    assert len(chunks) == 7 and all(count_words(CHINESE[s:e]) <= 5 for s, e, _ in chunks)


def test_english_word_counts_are_unchanged():
    """The shipped English texts count and split exactly as whitespace words (the committed lock's counts)."""
    texts = [p.read_text(encoding="utf-8") for p in sorted(EXAMPLE.iterdir())]
    embedded = ROOT / "biochunk" / "datasets" / "embedded"
    lines = [line for p in sorted(embedded.glob("*.jsonl")) for line in p.read_text().splitlines() if line]
    texts += [json.loads(line)["SENTENCE"] for line in lines]
    assert len(texts) > 100
    for t in texts:
        assert count_words(t) == len(t.split())
        assert word_spans(t) == [m.span() for m in re.finditer(r"\S+", t)]
