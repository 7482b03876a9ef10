"""Dataset registry, download (mirror, network, checksums) and the format converters.

Fixtures are written by the tests into tmp_path. The real-data tests at the end run the
whole download (mirror mode) + convert path for every registered benchmark against
../shared/datasets and skip when that folder is absent.
"""

from __future__ import annotations

import hashlib
import json
import urllib.error
import urllib.request
from pathlib import Path

import pandas as pd
import pyarrow.parquet as pq
import pytest
import yaml
from hypothesis import given
from hypothesis import strategies as st

import biochunk.datasets.formats  # noqa: F401  (registers the converters)
from biochunk.datasets import download as dl
from biochunk.datasets.convert import CONVERTERS, convert
from biochunk.datasets.formats.squad import paragraph_spans
from biochunk.datasets.registry import REGISTRY, DatasetSpec, RemoteFile, load_registry
from biochunk.errors import UserError
from biochunk.io import (
    ANSWERS,
    CLASSIFICATION,
    CORPUS,
    DOCUMENTS,
    QA_QUESTIONS,
    QA_SNIPPETS,
    QRELS,
    QUERIES,
    TRIPLES,
)

SHARED = Path(__file__).resolve().parents[1].parent / "shared" / "datasets"


def spec(
    fmt: str, splits: dict[str, list[str]], task: str = "triples", name: str = "toy", files: tuple[RemoteFile, ...] = ()
) -> DatasetSpec:
    return DatasetSpec(name=name, task=task, format=fmt, mirror_dir=name, files=files, splits=splits, config=None)


def run(tmp_path: Path, s: DatasetSpec, skip_malformed: bool = False) -> tuple[dict, dict[str, pd.DataFrame]]:
    out = tmp_path / "out"
    report = convert(s, tmp_path / "raw", out, skip_malformed=skip_malformed)
    tables = {p.stem: pq.read_table(p).to_pandas() for p in sorted(out.glob("*.parquet"))}
    return report, tables


def write(tmp_path: Path, name: str, content: str | bytes) -> Path:
    path = tmp_path / "raw" / name
    path.parent.mkdir(parents=True, exist_ok=True)
    if isinstance(content, bytes):
        path.write_bytes(content)
    else:
        path.write_text(content, encoding="utf-8")
    return path


def jsonl(*objs: object) -> str:
    return "".join(json.dumps(o) + "\n" for o in objs)


NL = b"\n"


def sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


# ---------------------------------------------------------------- converters, one per format


def test_gmciht_dedups_and_groups_by_sentence(tmp_path):
    row = {"PREDICATE": "TREATS", "SUBJECT_TEXT": "aspirin", "OBJECT_TEXT": "pain", "SENTENCE": "Aspirin treats pain."}
    write(tmp_path, "t.jsonl", jsonl(row, row, {**row, "PREDICATE": "CAUSES", "OBJECT_TEXT": "ulcers"}))
    report, tables = run(tmp_path, spec("gmciht", {"test": ["t.jsonl"]}))
    assert len(tables["test"]) == 2 and tables["test"]["id"].nunique() == 1
    assert report["rows_dropped"] == {"test": {"exact duplicate": 1}}


def test_biomedrag_triples(tmp_path):
    items = [
        {"text": "A raises B levels. ", "triple_list": [["A", "mechanism", "B"]]},
        {"text": "A raises B levels.", "triple_list": [["A", "None", "C"]]},  # same sentence, another pair
        {"text": "A raises B levels. ", "triple_list": [["A", "mechanism", "B"]]},  # exact repeat
        {"text": "D alone.", "triple_list": []},
    ]
    write(tmp_path, "train.json", json.dumps(items))
    write(tmp_path, "rel2id.json", json.dumps([{"0": "mechanism", "1": "None"}, {"mechanism": 0, "None": 1}]))
    report, tables = run(tmp_path, spec("biomedrag_triples", {"train": ["train.json"]}))
    df = tables["train"]
    assert list(df.columns) == TRIPLES.names
    assert df[["sentence", "head", "relation", "tail"]].values.tolist() == [
        ["A raises B levels.", "A", "mechanism", "B"],
        ["A raises B levels.", "A", "None", "C"],
    ]
    assert df["id"].nunique() == 1
    assert report["rows_read"] == {"train": 4}
    assert report["rows_dropped"] == {"train": {"exact duplicate": 1, "sentence without triples": 1}}


def test_biomedrag_triples_rejects_relation_outside_rel2id(tmp_path):
    write(tmp_path, "train.json", json.dumps([{"text": "A and B.", "triple_list": [["A", "mechanisms", "B"]]}]))
    write(tmp_path, "rel2id.json", json.dumps([{"0": "mechanism"}, {"mechanism": 0}]))
    with pytest.raises(UserError, match=r"train\.json:item 0, triple 0: relation 'mechanisms' is not in rel2id\.json"):
        run(tmp_path, spec("biomedrag_triples", {"train": ["train.json"]}))


def test_biomedrag_classification(tmp_path):
    rows = [{"text": "Drug X caused rash.", "label": 1}, {"text": "No issue.", "label": 0}, {"text": "No issue.", "label": 0}]
    write(tmp_path, "test.json", jsonl(*rows))
    report, tables = run(tmp_path, spec("biomedrag_classification", {"test": ["test.json"]}, task="classification"))
    df = tables["test"]
    assert list(df.columns) == CLASSIFICATION.names
    assert df["label"].tolist() == [1, 0, 0] and str(df["label"].dtype) == "int8"
    assert df["id"].tolist() == ["toy-test-1", "toy-test-2", "toy-test-3"]  # repeats are kept
    assert report["rows_dropped"] == {}


def test_beir(tmp_path):
    docs = [
        {"_id": "d1", "title": "T1", "text": "one"},
        {"_id": "d2", "title": "", "text": "two"},
        {"_id": "d1", "title": "T1", "text": "one"},  # an exact repeat: dropped and counted
    ]
    write(tmp_path, "corpus.jsonl", jsonl(*docs))
    write(tmp_path, "queries.jsonl", jsonl({"_id": "q1", "text": "first?", "metadata": {}}, {"_id": "q2", "text": "second?"}))
    write(tmp_path, "qrels/test.tsv", "query-id\tcorpus-id\tscore\nq1\td1\t1\nq1\td2\t1\nq2\td9\t1\nq1\td1\t1\n")
    write(tmp_path, "qrels/train.tsv", "query-id\tcorpus-id\tscore\nq2\td2\t2\n")
    splits = {"corpus": ["corpus.jsonl"], "queries": ["queries.jsonl"], "train": ["qrels/train.tsv"], "test": ["qrels/test.tsv"]}
    s = spec("beir", splits, task="retrieval")
    report, tables = run(tmp_path, s)
    assert list(tables["corpus"].columns) == CORPUS.names and tables["corpus"]["doc_id"].tolist() == ["d1", "d2"]
    assert list(tables["queries"].columns) == QUERIES.names and len(tables["queries"]) == 2
    qrels = tables["qrels"]
    assert list(qrels.columns) == QRELS.names
    assert qrels.values.tolist() == [["q2", "d2", 2, "train"], ["q1", "d1", 1, "test"], ["q1", "d2", 1, "test"]]
    assert report["rows_dropped"] == {
        "corpus": {"duplicate _id (first kept)": 1},
        "test": {"doc_id not in corpus": 1, "duplicate (query_id, doc_id) (first kept)": 1},
    }


def test_bioasq(tmp_path):
    pubmed = "http://www.ncbi.nlm.nih.gov/pubmed/1"
    snippet = {"text": "X binds Y.", "document": pubmed, "beginSection": "abstract", "endSection": "abstract"}
    snippet |= {"offsetInBeginSection": 5, "offsetInEndSection": 15}
    questions = [
        {"id": "a", "type": "yesno", "body": "Does X bind Y?", "ideal_answer": ["Yes."], "exact_answer": "Yes"}
        | {"documents": [pubmed], "snippets": [snippet]},
        {"id": "b", "type": "list", "body": "Which bind Y?", "ideal_answer": ["X and Z."], "exact_answer": [["X", "x1"], ["Z"]]}
        | {"documents": [], "snippets": [snippet, snippet]},
        {"id": "c", "type": "summary", "body": "What is Y?", "ideal_answer": "A protein.", "documents": [], "snippets": []},
    ]
    write(tmp_path, "T/7B1_golden.json", json.dumps({"questions": questions}))
    report, tables = run(tmp_path, spec("bioasq", {"7B1": ["T/7B1_golden.json"]}, task="qa"))
    q, s = tables["questions"], tables["snippets"]
    assert list(q.columns) == QA_QUESTIONS.names and list(s.columns) == QA_SNIPPETS.names
    assert q["split"].tolist() == ["7B1"] * 3
    assert [list(x) for x in q["exact_answer"]] == [["yes"], ["X", "x1", "Z"], []]
    assert list(q["ideal_answer"][2]) == ["A protein."]
    assert s["snippet_id"].tolist() == ["a-0", "b-0", "b-1"]
    assert s.iloc[0][["offset_begin", "offset_end", "begin_section"]].tolist() == [5, 15, "abstract"]
    assert report["rows_read"] == {"7B1": 3}


def test_bioasq_bad_exact_answer_is_malformed(tmp_path):
    q = {"id": "a", "type": "yesno", "body": "Does X bind Y?", "ideal_answer": [], "exact_answer": "maybe"}
    q |= {"documents": [], "snippets": []}
    write(tmp_path, "b.json", json.dumps({"questions": [q]}))
    with pytest.raises(UserError, match=r"b\.json:questions\[0\]: question a: exact_answer 'maybe'"):
        run(tmp_path, spec("bioasq", {"7B1": ["b.json"]}, task="qa"))


SQUAD_CONTEXT = (
    "A Title\n\nhttps://example.org/1\n\nAbstract: Short abstract.\n\n"
    "Text: First body paragraph.\n\nSecond paragraph with the answer."
)


def test_squad_documents_and_answer_repair(tmp_path, caplog):
    ctx = SQUAD_CONTEXT
    good = ctx.index("the answer")
    qas = [
        {"id": 1, "question": "Where?", "answers": [{"text": "the answer", "answer_start": good}]},
        {"id": 2, "question": "Off by one?", "answers": [{"text": "the answer", "answer_start": good + 1}]},
        {"id": 3, "question": "Absent?", "answers": [{"text": "not in the text", "answer_start": 3}]},
    ]
    for qa in qas:
        qa["is_impossible"] = False
    write(tmp_path, "qa.json", json.dumps({"data": [{"paragraphs": [{"context": ctx, "document_id": 7, "qas": qas}]}]}))
    report, tables = run(tmp_path, spec("squad", {"all": ["qa.json"]}, task="documents"))
    doc = tables["documents"].iloc[0]
    assert list(tables["documents"].columns) == DOCUMENTS.names
    assert doc["doc_id"] == "7" and doc["title"] == "A Title" and doc["text"] == ctx
    paras = [ctx[p["start"] : p["end"]] for p in doc["paragraphs"]]
    assert paras == ctx.split("\n\n")
    sections = {s["title"]: ctx[s["start"] : s["end"]] for s in doc["sections"]}
    assert sections == {
        "Abstract": "Abstract: Short abstract.",
        "Text": "Text: First body paragraph.\n\nSecond paragraph with the answer.",
    }
    answers = tables["answers"]
    assert list(answers.columns) == ANSWERS.names
    assert answers["question_id"].tolist() == ["1", "2"]
    assert all(ctx[r.start : r.end] == r.answer_text for r in answers.itertuples())
    assert report["rows_dropped"] == {"answers": {"answer text not within 100 characters of answer_start": 1}}
    assert "1 answer offsets repaired (shift: count) {-1: 1}" in caplog.text


JATS = """<?xml version="1.0" encoding="UTF-8"?>
<!DOCTYPE article PUBLIC "-//NLM//DTD Journal Publishing DTD v3.0 20080202//EN" "journalpublishing3.dtd">
<article xmlns:mml="http://www.w3.org/1998/Math/MathML" xmlns:xlink="http://www.w3.org/1999/xlink">
  <front><article-meta><title-group><article-title>A <italic>Test</italic> Article</article-title></title-group>
    <abstract><p>Not body.</p></abstract></article-meta></front>
  <body>
    <sec id="s1"><title>Introduction</title>
      <p>First   paragraph with a citation <xref ref-type="bibr" rid="r1">[1]</xref>.</p>
      <p>Formula <inline-formula><inline-graphic xlink:href="f1"/></inline-formula> here.</p>
    </sec>
    <sec id="s2"><title>Results</title>
      <sec id="s2a"><title>Sub</title>
        <p>Nested text.</p>
        <fig id="f1"><object-id>10.1371/x</object-id><label>Figure 1</label>
          <caption><title>Cap.</title><p>Detail.</p></caption><graphic xlink:href="g1"/></fig>
        <list><list-item><p>one</p></list-item>
          <list-item><p>two</p><list><list-item><label>2a.</label><p>nested</p></list-item></list></list-item>
          <list-item>bare</list-item></list>
        <table-wrap id="t1"><label>Table 1</label><caption><p>Counts.</p></caption>
          <alternatives><graphic xlink:href="t1"/>
            <table><tr><th>a</th><th>b</th></tr><tr><td>1</td><td></td></tr></table></alternatives>
        </table-wrap>
      </sec>
    </sec>
  </body>
  <back><ref-list><ref id="r1"><mixed-citation>Ref.</mixed-citation></ref></ref-list></back>
</article>
"""

JATS_TEXT = (
    "Introduction\nFirst paragraph with a citation [1].\n\nFormula here.\n\n"
    "Results\nSub\nNested text.\n\nFigure 1 Cap. Detail.\n\none\ntwo\n2a. nested\nbare\n\nTable 1 Counts.\n\na | b\n1 |"
)


def test_jats(tmp_path):
    write(tmp_path, "journal.ptest.0000001.xml", JATS)
    report, tables = run(tmp_path, spec("jats", {"all": ["journal.ptest.0000001.xml"]}, task="documents"))
    doc = tables["documents"].iloc[0]
    text = doc["text"]
    assert doc["doc_id"] == "journal.ptest.0000001" and doc["title"] == "A Test Article"
    assert text == JATS_TEXT
    assert [text[p["start"] : p["end"]] for p in doc["paragraphs"]] == [
        "First paragraph with a citation [1].",
        "Formula here.",
        "Nested text.",
        "Figure 1 Cap. Detail.",
        "one\ntwo\n2a. nested\nbare",
        "Table 1 Counts.",
        "a | b\n1 |",
    ]
    sections = [(s["title"], text[s["start"] : s["end"]]) for s in doc["sections"]]
    assert [t for t, _ in sections] == ["Introduction", "Results", "Sub"]
    assert sections[0][1] == "Introduction\nFirst paragraph with a citation [1].\n\nFormula here."
    assert sections[1][1].startswith("Results\nSub\n") and sections[1][1].endswith("1 |")
    assert sections[2][1].startswith("Sub\nNested") and text.endswith(sections[2][1])
    # Two images without text (the inline formula, the figure); the table's image had a text alternative.
    images = {"inline-graphic (image, no text to keep)": 1, "graphic (image, no text to keep)": 1}
    assert report["rows_dropped"] == {"documents": images}


def test_jats_malformed_xml_names_file_and_line(tmp_path):
    write(tmp_path, "bad.xml", "<article>\n<body><p>unclosed</body>\n</article>")
    with pytest.raises(UserError, match=r"bad\.xml:2: not well-formed XML"):
        run(tmp_path, spec("jats", {"all": ["bad.xml"]}, task="documents"))


@given(st.lists(st.sampled_from(["a", "b c", " ", "\n", "\n\n", "\n \n", "\t"]), max_size=20).map("".join))
def test_paragraph_spans_cover_the_text_trimmed(text):
    spans = paragraph_spans(text)
    blocks = [text[s:e] for s, e in spans]
    assert all(b and b == b.strip() for b in blocks)
    assert all(e1 < s2 for (_, e1), (s2, _) in zip(spans, spans[1:]))
    assert "".join("".join(b.split()) for b in blocks) == "".join(text.split())


# ---------------------------------------------------------------- malformed lines


def test_beir_id_with_two_texts_is_malformed(tmp_path):
    write(tmp_path, "corpus.jsonl", jsonl({"_id": "d1", "title": "", "text": "one"}, {"_id": "d1", "title": "", "text": "two"}))
    write(tmp_path, "queries.jsonl", jsonl({"_id": "q1", "text": "first?"}))
    s = spec("beir", {"corpus": ["corpus.jsonl"], "queries": ["queries.jsonl"]}, task="retrieval")
    with pytest.raises(UserError, match=r"corpus\.jsonl:2: _id 'd1' was already given a different title or text"):
        run(tmp_path, s)


GOOD = {"PREDICATE": "TREATS", "SUBJECT_TEXT": "aspirin", "OBJECT_TEXT": "pain", "SENTENCE": "Aspirin treats pain."}


@pytest.mark.parametrize(
    "content, needle",
    [
        (jsonl(GOOD).encode() + b'{"SENTENCE": "caf\xe9"}\n', r"t\.jsonl:2: not valid UTF-8 \(byte 0xe9 at offset 17\)"),
        (jsonl(GOOD).encode() + b'{"SENTENCE": "a\x00b"}\n', r"t\.jsonl:2: contains a NUL byte"),
        (jsonl(GOOD).encode() + b'{"SENTENCE": "' + b"x" * (2 << 20) + b'"}\n', r"t\.jsonl:2: line of 2,097,169 bytes exceeds"),
    ],
    ids=["bad-utf8", "nul", "oversized-line"],
)
def test_lines_that_are_not_text_are_malformed(tmp_path, content, needle):
    write(tmp_path, "t.jsonl", content)
    s = spec("gmciht", {"test": ["t.jsonl"]})
    with pytest.raises(UserError, match=needle):
        run(tmp_path, s)
    report, tables = run(tmp_path, s, skip_malformed=True)
    assert len(tables["test"]) == 1 and report["rows_read"] == {"test": 2}
    assert sum(report["rows_dropped"]["test"].values()) == 1


def test_a_bom_is_not_data(tmp_path):
    write(tmp_path, "t.jsonl", b"\xef\xbb\xbf" + jsonl(GOOD, {**GOOD, "OBJECT_TEXT": "fever"}).encode())
    report, tables = run(tmp_path, spec("gmciht", {"test": ["t.jsonl"]}), skip_malformed=True)
    assert len(tables["test"]) == 2 and report["rows_dropped"] == {}
    write(tmp_path, "d.json", b"\xef\xbb\xbf" + json.dumps([{"text": "A and B.", "triple_list": [["A", "x", "B"]]}]).encode())
    _, tables = run(tmp_path, spec("biomedrag_triples", {"train": ["d.json"]}))
    assert len(tables["train"]) == 1


def test_bad_utf8_in_a_whole_file_json_names_the_line(tmp_path):
    write(tmp_path, "d.json", b'[\n{"text": "ok", "triple_list": []},\n{"text": "caf\xe9"}]')
    with pytest.raises(UserError, match=r"d\.json:3: not valid UTF-8"):
        run(tmp_path, spec("biomedrag_triples", {"train": ["d.json"]}))


@pytest.mark.parametrize("content", [b"", b"\n\n", b"{not json\n"], ids=["empty", "blank", "all-malformed"])
def test_an_empty_split_is_an_error_naming_the_file(tmp_path, content):
    write(tmp_path, "train.jsonl", content)
    write(tmp_path, "test.jsonl", jsonl(GOOD))
    with pytest.raises(UserError) as e:
        run(tmp_path, spec("gmciht", {"train": ["train.jsonl"], "test": ["test.jsonl"]}), skip_malformed=True)
    assert "raw/train.jsonl: toy train has no rows after conversion" in str(e.value)
    assert not (tmp_path / "out").exists()


def test_malformed_line_names_file_and_line(tmp_path):
    path = write(tmp_path, "test.json", jsonl({"text": "ok", "label": 1}) + "{not json\n" + jsonl({"text": "ok", "label": 2}))
    with pytest.raises(UserError) as e:
        run(tmp_path, spec("biomedrag_classification", {"test": ["test.json"]}, task="classification"))
    assert f"{path}:2: not valid JSON" in str(e.value) and "convert.skip_malformed" in str(e.value)


def test_skip_malformed_counts_each_line(tmp_path):
    bad = [{"text": "ok", "label": 2}, {"text": "", "label": 0}]
    write(tmp_path, "test.json", jsonl({"text": "ok", "label": 1}) + "{not json\n" + jsonl(*bad, {"text": "fine", "label": 0}))
    s = spec("biomedrag_classification", {"test": ["test.json"]}, task="classification")
    report, tables = run(tmp_path, s, skip_malformed=True)
    assert len(tables["test"]) == 2
    assert report["rows_read"] == {"test": 5} and report["rows_written"] == {"test": 2}
    dropped = report["rows_dropped"]["test"]
    assert sum(dropped.values()) == 3 and all(reason.startswith("malformed: ") for reason in dropped)


# ---------------------------------------------------------------- download: checksums, mirror, network


def fake_mirror(tmp_path: Path, files: dict[str, bytes], sums: dict[str, bytes] | None = None) -> Path:
    """A mirror folder ``<tmp>/mirror/toy`` holding ``files`` and a SHA256SUMS over ``sums`` (default: files)."""
    folder = tmp_path / "mirror" / "toy"
    for name, data in files.items():
        (folder / name).parent.mkdir(parents=True, exist_ok=True)
        (folder / name).write_bytes(data)
    lines = [f"{sha(data)}  ./{name}" for name, data in (sums or files).items()]
    (folder / "SHA256SUMS").write_text("\n".join(lines) + "\n")
    return folder.parent


def test_mirror_mode_copies_and_verifies(tmp_path):
    files = {"a.jsonl": b'{"x": 1}\n', "sub/b.tsv": b"q\td\t1\n"}
    mirror = fake_mirror(tmp_path, files)
    remote = (
        RemoteFile(path="a.jsonl", url="https://example.org/a.jsonl", sha256=sha(files["a.jsonl"])),
        # an archive member rebuilt for the mirror: pinned by mirror_sha256
        RemoteFile(path="sub/b.tsv", archive="https://example.org/x.zip", member="x/sub/b.tsv", mirror_sha256=sha(files["sub/b.tsv"])),
    )
    s = spec("gmciht", {}, files=remote)
    sizes = dl.download(s, tmp_path / "raw", mirror=str(mirror))
    assert sizes == {"a.jsonl": 9, "sub/b.tsv": 6}
    assert (tmp_path / "raw" / "sub" / "b.tsv").read_bytes() == files["sub/b.tsv"]


def test_mirror_file_differing_from_its_sha256sums_is_refused(tmp_path):
    mirror = fake_mirror(tmp_path, {"a.jsonl": b"tampered\n"}, sums={"a.jsonl": b"original\n"})
    s = spec("gmciht", {}, files=(RemoteFile(path="a.jsonl", url="https://example.org/a.jsonl"),))
    with pytest.raises(UserError, match=f"expected sha256 {sha(b'original' + NL)}, got {sha(b'tampered' + NL)}"):
        dl.download(s, tmp_path / "raw", mirror=str(mirror))
    assert not (tmp_path / "raw").exists()  # nothing half-written


def test_checksum_refusal_names_both_sums(tmp_path):
    data = b"the published bytes\n"
    mirror = fake_mirror(tmp_path, {"a.jsonl": data})
    pinned = "0" * 64
    s = spec("gmciht", {}, files=(RemoteFile(path="a.jsonl", url="https://example.org/a.jsonl", sha256=pinned),))
    with pytest.raises(UserError) as e:
        dl.download(s, tmp_path / "raw", mirror=str(mirror))
    assert pinned in str(e.value) and sha(data) in str(e.value) and "refusing" in str(e.value)


def test_network_download_refuses_a_changed_file(tmp_path, monkeypatch):
    class Response:
        def __enter__(self):
            return self

        def __exit__(self, *exc):
            return False

        def read(self):
            return b"changed upstream\n"

    monkeypatch.setattr(urllib.request, "urlopen", lambda url, timeout: Response())
    pinned = sha(b"as published\n")
    s = spec("gmciht", {}, files=(RemoteFile(path="a.jsonl", url="https://example.org/a.jsonl", sha256=pinned),))
    with pytest.raises(UserError, match=f"expected sha256 {pinned}, got {sha(b'changed upstream' + NL)}"):
        dl.download(s, tmp_path / "raw", mirror=None)


def test_rewritten_sha256sums_do_not_vouch_for_an_edited_file(tmp_path):
    edited = b'{"_id": "d1", "title": "", "text": "edited"}\n'
    mirror = fake_mirror(tmp_path, {"corpus.jsonl": edited})  # SHA256SUMS rewritten to match the edit
    member = RemoteFile(path="corpus.jsonl", archive="https://example.org/x.zip", member="x/corpus.jsonl", mirror_sha256=sha(b"published\n"))
    with pytest.raises(UserError, match=f"corpus.jsonl \\(registry pin\\): expected sha256 {sha(b'published' + NL)}, got {sha(edited)}"):
        dl.download(spec("beir", {}, files=(member,)), tmp_path / "raw", mirror=str(mirror))
    unpinned = RemoteFile(path="corpus.jsonl", archive="https://example.org/x.zip", member="x/corpus.jsonl")
    with pytest.raises(UserError, match="toy file corpus.jsonl pins neither sha256 nor mirror_sha256"):
        dl.download(spec("beir", {}, files=(unpinned,)), tmp_path / "raw", mirror=str(mirror))
    assert not (tmp_path / "raw").exists()


def test_missing_mirror_folders_are_named(tmp_path):
    s = spec("gmciht", {}, files=(RemoteFile(path="a.jsonl", url="https://example.org/a.jsonl", sha256="0" * 64),))
    with pytest.raises(UserError, match=r"^download\.mirror: folder .*/nowhere does not exist"):
        dl.download(s, tmp_path / "raw", mirror=str(tmp_path / "nowhere"))
    (tmp_path / "empty").mkdir()
    with pytest.raises(UserError, match=r"^download\.mirror: .*/empty has no folder toy/ for dataset toy"):
        dl.download(s, tmp_path / "raw", mirror=str(tmp_path / "empty"))
    assert not (tmp_path / "raw").exists()


def test_a_mirror_only_file_needs_no_url(tmp_path):
    data = b"only on the mirror\n"
    only = RemoteFile(path="a.jsonl", sha256=sha(data))
    assert dl.download(spec("gmciht", {}, files=(only,)), tmp_path / "raw", mirror=str(fake_mirror(tmp_path, {"a.jsonl": data}))) == {"a.jsonl": 19}
    with pytest.raises(UserError, match=r"^toy: a\.jsonl is published only on a mirror; set download\.mirror"):
        dl.download(spec("gmciht", {}, files=(only,)), tmp_path / "raw2", mirror=None)
    registry = tmp_path / "datasets.yaml"
    registry.write_text(yaml.safe_dump({"x": {"task": "triples", "format": "gmciht", "files": [{"path": "a.jsonl"}]}}))
    with pytest.raises(UserError, match="file a.jsonl has neither url nor archive, so only a mirror has it; pin its sha256"):
        load_registry(registry)


def test_mirror_without_the_file_says_where(tmp_path):
    mirror = fake_mirror(tmp_path, {"a.jsonl": b"x\n"})
    s = spec("gmciht", {}, files=(RemoteFile(path="missing.jsonl", url="https://example.org/m.jsonl"),))
    with pytest.raises(UserError, match=r"download\.mirror: .*missing\.jsonl not found"):
        dl.download(s, tmp_path / "raw", mirror=str(mirror))


@pytest.mark.parametrize(
    "remote",
    [
        RemoteFile(path="a.jsonl", url="https://example.org/data/a.jsonl", sha256="0" * 64),
        RemoteFile(
            path="corpus.jsonl", archive="https://example.org/data/bundle.zip", archive_md5="0" * 32, member="bundle/corpus.jsonl"
        ),
    ],
    ids=["url", "archive"],
)
def test_no_network_and_no_mirror_names_url_and_mirror_hint(tmp_path, monkeypatch, remote):
    def offline(url, timeout):
        raise urllib.error.URLError("Temporary failure in name resolution")

    monkeypatch.setattr(urllib.request, "urlopen", offline)
    with pytest.raises(UserError) as e:
        dl.download(spec("gmciht", {}, files=(remote,)), tmp_path / "raw", mirror=None)
    message = str(e.value)
    assert (remote.url or remote.archive) in message
    assert "Temporary failure in name resolution" in message
    assert "download.mirror" in message and dl.MIRROR_HINT in message


# ---------------------------------------------------------------- the registry itself


def test_registry_entries_are_pinned_and_converters_exist():
    registry = load_registry()
    for name, s in registry.items():
        assert s.format in CONVERTERS, f"{name}: no converter {s.format}"
        paths = [f.path for f in s.files]
        assert len(paths) == len(set(paths)), f"{name}: a file is listed twice"
        assert {p for files in s.splits.values() for p in files} <= set(paths), f"{name}: a split names an unlisted file"
        for f in s.files:
            if f.url and f.url.startswith("package:"):
                continue
            if f.archive:
                assert f.archive_md5 and f.member and f.sha256 is None, f"{name}: {f.path}"
                assert len(f.mirror_sha256 or "") == 64, f"{name}: {f.path}: a mirror copy must be pinned"
            else:
                assert f.url.startswith("https://") and len(f.sha256 or "") == 64, f"{name}: {f.path} is not pinned"
        if s.config is not None:
            assert (REGISTRY.parent / s.config).exists(), f"{name}: config {s.config} missing"


# ---------------------------------------------------------------- real data (../shared/datasets)

# Row counts per output table after conversion (see ../shared/README.md).
EXPECTED = {
    "gm-ciht": {"train": 3734, "dev": 492, "test": 465},
    "ddi": {"train": 4339, "dev": 1202, "test": 1200},
    "chemprot": {"train": 4019, "dev": 2374, "test": 3372},
    "ade": {"train": 4000, "test": 500},
    "scifact": {"corpus": 5183, "queries": 1109, "qrels": 1258},
    "bioasq": {"questions": 2310, "snippets": 21998},
    "covidqa": {"documents": 98, "answers": 1380},
    "plos": {"documents": 122},
}
needs_shared = pytest.mark.skipif(not SHARED.is_dir(), reason=f"real datasets not available: {SHARED} is absent")


@pytest.fixture(scope="module")
def converted(tmp_path_factory):
    """Download (mirror mode) and convert each real dataset once for this module."""
    if not SHARED.is_dir():
        pytest.skip(f"real datasets not available: {SHARED} is absent")
    registry = load_registry()
    root = tmp_path_factory.mktemp("real")
    cache: dict[str, tuple[dict, dict[str, pd.DataFrame]]] = {}

    def get(name: str) -> tuple[dict, dict[str, pd.DataFrame]]:
        if name not in cache:
            raw, out = root / "raw" / name, root / "interim" / name
            dl.download(registry[name], raw, mirror=str(SHARED))
            report = convert(registry[name], raw, out)
            cache[name] = (report, {p.stem: pd.read_parquet(p) for p in sorted(out.glob("*.parquet"))})
        return cache[name]

    return get


def test_every_real_dataset_has_expected_counts():
    assert set(load_registry()) - {"embedded"} == set(EXPECTED)


@needs_shared
@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_real_dataset_row_counts(converted, name):
    report, tables = converted(name)
    assert {t: len(df) for t, df in tables.items()} == EXPECTED[name]
    assert report["rows_written"] == EXPECTED[name]
    # Nothing is malformed in the published files.
    assert not any(r.startswith("malformed") for reasons in report["rows_dropped"].values() for r in reasons)


@needs_shared
def test_real_scifact_test_qrels(converted):
    qrels = converted("scifact")[1]["qrels"]
    test = qrels[qrels["split"] == "test"]
    assert len(test) == 339 and test["query_id"].nunique() == 300


@needs_shared
def test_real_gmciht_drops_only_the_test_duplicates(converted):
    report, _ = converted("gm-ciht")
    assert report["rows_dropped"] == {"test": {"exact duplicate": 465}}


@needs_shared
@pytest.mark.parametrize("name", ["gm-ciht", "ddi", "chemprot"])
def test_real_relations_all_have_definitions(converted, name):
    config = yaml.safe_load((REGISTRY.parent / load_registry()[name].config).read_text())
    seen = set(pd.concat(converted(name)[1].values())["relation"])
    assert seen == set(config["relations"]), f"{name}: data {sorted(seen)} vs config {sorted(config['relations'])}"
    assert all(isinstance(d, str) and d.strip() for d in config["relations"].values())


@needs_shared
def test_real_ade_labels_have_definitions(converted):
    config = yaml.safe_load((REGISTRY.parent / "ade.yaml").read_text())
    labels = set(pd.concat(converted("ade")[1].values())["label"])
    assert labels == set(config["labels"]) and set(config["labels"].values()) == set(config["relations"])


@needs_shared
@pytest.mark.parametrize("name", ["covidqa", "plos"])
def test_real_document_offsets_hold(converted, name):
    tables = converted(name)[1]
    for doc in tables["documents"].itertuples():
        text = doc.text
        for p in doc.paragraphs:
            block = text[p["start"] : p["end"]]
            assert block and block == block.strip(), f"{doc.doc_id}: paragraph {p}"
        for s in doc.sections:
            assert 0 <= s["start"] < s["end"] <= len(text)
            assert text.startswith(s["title"], s["start"]), f"{doc.doc_id}: section {s['title']!r}"
    if name == "covidqa":
        texts = dict(zip(tables["documents"]["doc_id"], tables["documents"]["text"]))
        answers = tables["answers"]
        assert all(texts[a.doc_id][a.start : a.end] == a.answer_text for a in answers.itertuples())
        assert answers["question_id"].is_unique
