"""The bad-input corpus: user mistakes fed to the stage scripts, and how each one ends.

Every case runs a stage's ``main`` in this process (``runpy``, as ``python stages/x.py``
would, without paying a torch import per case) in a fresh folder, and is scored:

- clear error: exit 2, exactly one ``error:`` line, naming the file or key (``needle``),
  no traceback, nothing at the stage's declared outputs (nor a temporary sibling);
- handled: a case that must succeed (``expect="ok"``: skipped-and-counted lines, datasets
  without training judgements), exit 0 and its ``check`` holds;
- traceback, partial output, silent (exit 0 where an error was due), unclear (exit 2 but
  the line does not name the key or file, or several lines).

tests/test_bad_inputs.py runs the same table; ``python benchmarks/bad_inputs.py`` prints
the summary and the cases that are not clear (run from the repository root).
"""

from __future__ import annotations

import contextlib
import copy
import hashlib
import io
import json
import logging
import math
import os
import runpy
import sys
import traceback
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

import yaml

ROOT = Path(__file__).resolve().parents[1]
DELETE = object()  # a params value: remove the key

Files = dict[str, "bytes | Callable[[Path], None]"]


@dataclass(frozen=True)
class Case:
    id: str
    group: str  # params | models | raw | mirror | inputs | judgements
    stage: str  # script under stages/
    args: tuple[str, ...]  # {d}: the case folder
    needle: str  # the key or file the error line must name (expect="ok": unused)
    outputs: tuple[str, ...]  # declared outputs that must not exist after an error
    params: dict[str, Any] = field(default_factory=dict)  # dotted key -> value over the repo's params.yaml
    files: Files = field(default_factory=dict)  # path under the case folder -> bytes or a writer
    params_text: str | None = None  # the params file verbatim instead
    dvc_yaml: bool = False  # put the repo's dvc.yaml beside the params file
    expect: str = "error"  # or "ok"
    check: Callable[[Path], None] | None = None  # for expect="ok": raises AssertionError when wrong
    needs: str | None = None  # a module the case needs (skipped by the test when absent)
    # "root": the stage runs from the repository root, as under dvc; "case": from the case
    # folder, so a case whose bug would empty the working directory empties only that folder.
    cwd: str = "root"
    # For expect="error" too: what must still hold after the error (a folder not emptied,
    # a file not replaced); raises AssertionError when broken (scored "destroyed").
    guard: Callable[[Path], None] | None = None
    params_arg: bool = True  # pass --params (the paper stages sample, sample_documents take none)


@dataclass
class Outcome:
    case: Case
    code: int | None  # None: an exception escaped
    stderr: str
    kind: str  # clear | handled | traceback | partial | silent | unclear | wrong | destroyed
    detail: str = ""


# ---------------------------------------------------------------- raw file builders

GOOD = {"PREDICATE": "TREATS", "SUBJECT_TEXT": "aspirin", "OBJECT_TEXT": "pain", "SENTENCE": "Aspirin treats pain."}


def jsonl(*objs: object) -> bytes:
    return "".join(json.dumps(o) + "\n" for o in objs).encode()


GOOD_LINES = jsonl(GOOD, {**GOOD, "OBJECT_TEXT": "fever", "SENTENCE": "Aspirin treats fever."})


def embedded_raw(**override: bytes) -> Files:
    """The embedded dataset's three raw files (gmciht format), one of them replaced."""
    files = {f"raw/{s}.jsonl": GOOD_LINES for s in ("train", "dev", "test")}
    files.update({f"raw/{k}.jsonl": v for k, v in override.items()})
    return files


BEIR_CORPUS = jsonl({"_id": "d1", "title": "A", "text": "Aspirin treats pain."}, {"_id": "d2", "title": "", "text": "Statins."})
BEIR_QUERIES = jsonl({"_id": "q1", "text": "what treats pain"}, {"_id": "q2", "text": "cholesterol"})
QRELS_HEAD = b"query-id\tcorpus-id\tscore\n"


def beir_raw(**override: bytes) -> Files:
    files = {
        "raw/corpus.jsonl": BEIR_CORPUS,
        "raw/queries.jsonl": BEIR_QUERIES,
        "raw/qrels/train.tsv": QRELS_HEAD + b"q2\td2\t1\n",
        "raw/qrels/test.tsv": QRELS_HEAD + b"q1\td1\t1\n",
    }
    files.update({f"raw/{k}": v for k, v in override.items()})
    return files


DDI_ITEMS = json.dumps([{"text": "A raises B.", "triple_list": [["A", "mechanism", "B"]]}]).encode()
DDI_REL = json.dumps([{"0": "mechanism"}, {"mechanism": 0}]).encode()


def ddi_raw(**override: bytes) -> Files:
    files = {f"raw/{s}_triples.json": DDI_ITEMS for s in ("train", "dev", "test")} | {"raw/rel2id.json": DDI_REL}
    files.update({f"raw/{k}": v for k, v in override.items()})
    return files


def sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def mirror(folder: str, files: dict[str, bytes], sums: dict[str, bytes] | None = None, sums_text: bytes | None = None) -> Files:
    """A mirror folder ``mirror/<folder>`` with ``files`` and a SHA256SUMS over ``sums`` (default: the files)."""
    out: Files = {f"mirror/{folder}/{k}": v for k, v in files.items()}
    if sums_text is not None:
        out[f"mirror/{folder}/SHA256SUMS"] = sums_text
    elif sums != {}:
        out[f"mirror/{folder}/SHA256SUMS"] = "".join(f"{sha(v)}  ./{k}\n" for k, v in (sums or files).items()).encode()
    return out


GMCIHT = {f"renew_triplet_T_{s}.jsonl": GOOD_LINES for s in ("train", "dev", "test")}


def retrieval_data(qrels: list[tuple[str, str, int, str]]) -> Callable[[Path], None]:
    """A converted BEIR folder ``data/`` (corpus, queries, qrels) written as Parquet."""

    def write(d: Path) -> None:
        import pandas as pd

        from biochunk.io import CORPUS, QRELS, QUERIES, write_table

        docs = [
            ("d1", "Aspirin", "Aspirin reduces fever."),
            ("d2", "Statins", "Statins lower cholesterol."),
            ("d3", "Sleep", "Sleep aids memory."),
        ]
        write_table(pd.DataFrame(docs, columns=CORPUS.names), d / "data" / "corpus.parquet", CORPUS)
        queries = [("q1", "aspirin fever"), ("q2", "what lowers cholesterol")]
        write_table(pd.DataFrame(queries, columns=QUERIES.names), d / "data" / "queries.parquet", QUERIES)
        write_table(pd.DataFrame(qrels, columns=QRELS.names), d / "data" / "qrels.parquet", QRELS)

    return write


def _bioasq(d: Path, rows: list[tuple[str, str, str, str]]) -> None:
    """A converted BioASQ folder: one question per row ``(id, split, question, snippet)``,
    its answer and gold record ``u<n>`` taken from the snippet."""
    import pandas as pd

    from biochunk.io import QA_QUESTIONS, QA_SNIPPETS, write_table

    qs, sn = [], []
    for i, (qid, split, question, snippet) in enumerate(rows, 1):
        answer = snippet.split()[0].lower()
        qs.append((qid, split, "factoid", question, [answer], [answer], [f"u{i}"]))
        sn.append((qid, f"{qid}-0", snippet, f"u{i}", "abstract", "abstract", 0, len(snippet)))
    write_table(pd.DataFrame(qs, columns=QA_QUESTIONS.names), d / "data" / "questions.parquet", QA_QUESTIONS)
    write_table(pd.DataFrame(sn, columns=QA_SNIPPETS.names), d / "data" / "snippets.parquet", QA_SNIPPETS)


def bioasq_data(d: Path) -> None:
    _bioasq(d, [("q1", "B1", "what lowers cholesterol", "Statins lower cholesterol.")])


def bioasq_two_batches(d: Path) -> None:
    """Two batches (7B1 examples, 8B1 answered), one question each."""
    _bioasq(
        d,
        [
            ("q1", "7B1", "what lowers cholesterol", "Statins lower cholesterol."),
            ("q2", "8B1", "what lowers fever", "Aspirin lowers fever."),
        ],
    )


def report(path: str, **expected: Any) -> Callable[[Path], None]:
    """A check that the JSON report at ``path`` holds ``expected`` (dotted keys)."""

    def check(d: Path) -> None:
        data = json.loads((d / path).read_text())
        for key, want in expected.items():
            value = data
            for part in key.split("."):
                value = value[part]
            assert value == want, f"{path}: {key} is {value!r}, expected {want!r}"

    return check


def all_of(*checks: Callable[[Path], None]) -> Callable[[Path], None]:
    def check(d: Path) -> None:
        for c in checks:
            c(d)

    return check


def no_file(path: str) -> Callable[[Path], None]:
    def check(d: Path) -> None:
        assert not (d / path).exists(), f"{path} should not exist"

    return check


# ---------------------------------------------------------------- the corpus

NAN, INF = math.nan, math.inf
DL = ("download.py", ("--dataset", "embedded", "--out", "{d}/raw"), ("raw",))  # a stage that reads none of the params below
CHUNK = ("chunk.py", ("--dataset", "embedded", "--train", "{d}/train.parquet", "--out", "{d}/chunks"), ("chunks",))
EMBED = (
    "embed.py",
    ("--chunks", "{d}/c.parquet", "--data", "{d}/data", "--config", "configs/embedded.yaml", "--out", "{d}/embed"),
    ("embed",),
)
SCORER = (
    "train_scorer.py",
    ("--chunks", "{d}/c.parquet", "--data", "{d}/data", "--rankings", "{d}/r.parquet", "--out", "{d}/scorer"),
    ("scorer",),
)
RERANKER = ("train_reranker.py", ("--dataset", "scifact", "--data", "{d}/data", "--out", "{d}/rr"), ("rr",))
RETRIEVE = (
    "retrieve.py",
    (
        "--dataset",
        "scifact",
        "--data",
        "{d}/data",
        "--reranker",
        "{d}/rr",
        "--out",
        "{d}/out",
        "--metrics",
        "{d}/m.json",
        "--scores",
        "{d}/q.parquet",
        "--timing",
        "{d}/t.json",
        "--cache",
        "{d}/cache",
    ),
    ("out", "m.json", "q.parquet", "t.json"),
)
GENERATE = (
    "generate.py",
    (
        "--chunks",
        "{d}/c.parquet",
        "--data",
        "{d}/data",
        "--rankings",
        "{d}/r.parquet",
        "--config",
        "configs/embedded.yaml",
        "--out",
        "{d}/gen",
    ),
    ("gen",),
)
EVAL_QA = (
    "evaluate_qa.py",
    (
        "--dataset",
        "bioasq",
        "--qa",
        "{d}/qa",
        "--answers",
        "{d}/ans",
        "--metrics",
        "{d}/m.json",
        "--report",
        "{d}/rep",
        "--plots",
        "{d}/plots",
    ),
    ("m.json", "rep", "plots"),
)
CLASSIFY = (
    "classify.py",
    ("--dataset", "ade", "--data", "{d}/data", "--out", "{d}/out", "--metrics", "{d}/m.json", "--items", "{d}/items.parquet", "--plots", "{d}/plots"),
    ("out", "m.json", "items.parquet", "plots"),
)
QA_CONTEXT = ("qa_context.py", ("--dataset", "bioasq", "--data", "{d}/data", "--out", "{d}/qa"), ("qa",))
CHUNK_DOCS = (
    "chunk_docs.py",
    ("--dataset", "covidqa", "--data", "{d}/data", "--out", "{d}/c.parquet", "--runs", "{d}/runs.json", "--timing", "{d}/t.json"),
    ("c.parquet", "runs.json", "t.json"),
)
CONVERT = lambda ds: ("convert.py", ("--dataset", ds, "--raw", "{d}/raw", "--out", "{d}/interim"), ("interim",))  # noqa: E731
DOWNLOAD = lambda ds: ("download.py", ("--dataset", ds, "--out", "{d}/raw"), ("raw",))  # noqa: E731
NO_MODEL = "nonexistent-org/nonexistent-model"


def case(id: str, group: str, stage: tuple, needle: str = "", **kw: Any) -> Case:
    script, args, outputs = stage
    return Case(id=id, group=group, stage=script, args=args, needle=needle, outputs=outputs, **kw)


CASES: list[Case] = [
    # -- params: NaN and infinities wherever a number is expected
    case("nan-threshold-fixed", "params", CHUNK, "chunk.threshold", params={"chunk.threshold": NAN}),
    case("nan-threshold-adaptive", "params", CHUNK, "chunk.threshold", params={"chunk.threshold": NAN, "chunk.method": "adaptive"}),
    case("nan-scorer-lr", "params", SCORER, "train_scorer.lr", params={"train_scorer.lr": NAN}),
    case("inf-reranker-lr", "params", RERANKER, "train_reranker.lr", params={"train_reranker.lr": INF}),
    case("neg-inf-generate-lr", "params", GENERATE, "generate.lr", params={"generate.lr": -INF}),
    case("nan-bm25-k1", "params", RETRIEVE, "retrieve.k1", params={"retrieve.k1": NAN}),
    case("nan-retrieve-chunk-override", "params", RETRIEVE, "retrieve.chunk.threshold", params={"retrieve.chunk.threshold": NAN}),
    case("inf-alpha", "params", CHUNK, "chunk.alpha", params={"chunk.alpha": INF}),
    case("inf-top-k", "params", DL, "rank.top_k", params={"rank.top_k": INF}),
    case("nan-breakpoint-amount", "params", CHUNK, "chunk.breakpoint_amount", params={"chunk.breakpoint_amount": NAN}),
    case("nan-boundary-percentile", "params", CHUNK, "chunk.boundary_percentile", params={"chunk.boundary_percentile": NAN}),
    case("nan-reshape-threshold", "params", DL, "reshape.threshold", params={"reshape.threshold": NAN}),
    # -- params: data.* (read by dvc.yaml, now checked by every stage)
    case("data-datasets-empty", "params", CHUNK, "data.triples", params={"data.datasets": []}),
    case("data-unknown-dataset", "params", DL, "data.datasets", params={"data.datasets": ["embedded", "pubmedqa"]}),
    case("data-name-with-shell", "params", DL, "data.datasets[1]", params={"data.datasets": ["embedded", "x;touch pwned"]}),
    case("data-name-uppercase", "params", CHUNK, "data.triples[0]", params={"data.triples": ["Embedded"]}),
    case("data-wrong-task", "params", DL, "data.triples", params={"data.datasets": ["embedded", "scifact"], "data.triples": ["scifact"]}),
    case("data-not-a-list", "params", DL, "data.datasets", params={"data.datasets": "embedded"}),
    case("data-qa-not-downloaded", "params", DL, "data.qa", params={"data.qa": ["covidqa"]}),
    case("data-retrieval-not-downloaded", "params", DL, "data.retrieval", params={"data.retrieval": ["scifact"]}),
    # -- params: the whole file, whichever stage runs first
    case("missing-rank-top-k", "params", DL, "rank.top_k", params={"rank.top_k": DELETE}, dvc_yaml=True),
    case("missing-chunk-section", "params", DL, "chunk is missing", params={"chunk": DELETE}, dvc_yaml=True),
    case("unknown-section", "params", DL, "chunks: unknown section", params={"chunks": {"method": "fixed"}}),
    case("unknown-key-elsewhere", "params", DL, "evaluate.bootstap", params={"evaluate.bootstap": 10}),
    case("section-not-mapping", "params", DL, "chunk must be a mapping", params={"chunk": 5}),
    case("params-not-yaml", "params", DL, "params.yaml: not valid YAML", params_text="chunk: {method: [\n"),
    case("params-not-mapping", "params", DL, "params.yaml: expected a mapping", params_text="- chunk\n- embed\n"),
    case("params-bad-utf8", "params", DL, "params.yaml: not valid YAML", params_text=None, files={"params.yaml": b"chunk: {method: fix\xe9d}\n"}),
    case("unknown-method", "params", CHUNK, "chunk.method", params={"chunk.method": "sentencepiece"}),
    case("zero-batch", "params", DL, "embed.batch_size", params={"embed.batch_size": 0}),
    case("string-for-int", "params", DL, "rank.top_k", params={"rank.top_k": "five"}),
    case("bool-for-int", "params", DL, "generate.train_steps", params={"generate.train_steps": True}),
    case("zero-timeout", "params", DL, "download.timeout_s", params={"download.timeout_s": 0}),
    case("empty-ks", "params", DL, "retrieve.ks", params={"retrieve.ks": []}),
    case("string-for-bool", "params", DL, "convert.skip_malformed", params={"convert.skip_malformed": "yes"}),
    case("empty-model-name", "params", DL, "generate.model", params={"generate.model": ""}),
    # -- models: every model param resolved the same way, before any input is read
    case("embed-model-missing-path", "models", EMBED, "embed.model: local path /nonexistent/minilm", params={"embed.model": "/nonexistent/minilm"}),
    case("embed-model-bad-hub-id", "models", EMBED, f"embed.model: hub model '{NO_MODEL}'", params={"embed.model": NO_MODEL}),
    case("embed-model-empty-folder", "models", EMBED, "embed.model: folder", params={"embed.model": "{d}/empty"}, files={"empty/README": b"not a model\n"}),
    case("embed-model-invalid-id", "models", EMBED, "embed.model: 'not a model!'", params={"embed.model": "not a model!"}),
    case("scorer-model-missing-path", "models", SCORER, "train_scorer.model: local path", params={"train_scorer.model": "./models/scorer"}),
    case("scorer-model-bad-hub-id", "models", SCORER, "train_scorer.model: hub model", params={"train_scorer.model": NO_MODEL}),
    case("reranker-model-missing-path", "models", RERANKER, "train_reranker.model: local path", params={"train_reranker.model": "/nonexistent/ce"}),
    case("reranker-model-bad-hub-id", "models", RETRIEVE, "train_reranker.model: hub model", params={"train_reranker.model": NO_MODEL}),
    case("generate-model-missing-path", "models", GENERATE, "generate.model: local path", params={"generate.model": "/nonexistent/llm.gguf"}),
    case("generate-model-bad-hub-id", "models", GENERATE, "generate.model: hub model", params={"generate.model": NO_MODEL}),
    case("classify-generator-bad-hub-id", "models", CLASSIFY, "generate.model: hub model", params={"generate.model": NO_MODEL}),
    case("proposition-generator-missing", "models", CHUNK, "chunk.generator: local path", params={"chunk.method": "proposition", "chunk.generator": "/nonexistent/lm"}),
    case("header-generator-bad-hub-id", "models", CHUNK, "chunk.generator: hub model", params={"chunk.method": "adaptive", "chunk.header": "generator", "chunk.generator": NO_MODEL}),
    case("semchunk-embedder-missing", "models", CHUNK, "embed.model: local path", params={"chunk.method": "semchunk", "embed.model": "/nonexistent/minilm"}),
    case("bertscore-model-bad-hub-id", "models", EVAL_QA, "evaluate_qa.bertscore_model: hub model", params={"evaluate_qa.bertscore_model": NO_MODEL}),
    case("qa-context-embedder-bad", "models", QA_CONTEXT, "embed.model: hub model", params={"embed.model": NO_MODEL}),
    case("qa-question-splits-unknown", "params", QA_CONTEXT, "qa.question_splits: unknown split '12B1'; allowed: 8B1", params={"qa.question_splits": ["12B1"]}, files={"data": bioasq_two_batches}),
    case("chunk-docs-embedder-missing", "models", CHUNK_DOCS, "embed.model: local path", params={"embed.model": "~/nonexistent-minilm"}),
    # -- raw files (convert)
    case("bad-utf8", "raw", CONVERT("embedded"), "train.jsonl:3: not valid UTF-8", files=embedded_raw(train=GOOD_LINES + b'{"SENTENCE": "caf\xe9"}\n')),
    case("nul-byte", "raw", CONVERT("embedded"), "dev.jsonl:1: contains a NUL byte", files=embedded_raw(dev=b'{"SENTENCE": "a\x00b"}\n' + GOOD_LINES)),
    case("empty-train-file", "raw", CONVERT("embedded"), "raw/train.jsonl: embedded train has no rows", files=embedded_raw(train=b"")),
    case("blank-train-file", "raw", CONVERT("embedded"), "raw/train.jsonl: embedded train has no rows", files=embedded_raw(train=b"\n \n\n")),
    case("empty-split-after-skipping", "raw", CONVERT("embedded"), "raw/test.jsonl: embedded test has no rows", params={"convert.skip_malformed": True}, files=embedded_raw(test=b"{broken\n[1, 2]\n")),
    case("truncated-line", "raw", CONVERT("embedded"), "train.jsonl:3: not valid JSON", files=embedded_raw(train=GOOD_LINES + b'{"PREDICATE": "TREATS", "SUBJ')),
    case("missing-field", "raw", CONVERT("embedded"), "test.jsonl:1: expected non-empty string fields", files=embedded_raw(test=jsonl({k: v for k, v in GOOD.items() if k != "PREDICATE"}))),
    case("empty-field", "raw", CONVERT("embedded"), "train.jsonl:1: expected non-empty string fields", files=embedded_raw(train=jsonl({**GOOD, "OBJECT_TEXT": "  "}))),
    case("wrong-json-type", "raw", CONVERT("embedded"), "dev.jsonl:1: expected non-empty string fields", files=embedded_raw(dev=b"[1, 2, 3]\n")),
    case("10mb-document", "raw", CONVERT("embedded"), "train.jsonl:1: line of 10,485,8", files=embedded_raw(train=jsonl({**GOOD, "SENTENCE": "word " * 2_097_152}))),
    case("raw-file-missing", "raw", CONVERT("embedded"), "raw file not found", files={"raw/train.jsonl": GOOD_LINES}),
    case("raw-folder-missing", "raw", CONVERT("embedded"), "raw data folder not found"),
    case("beir-duplicate-id-other-text", "raw", CONVERT("scifact"), "corpus.jsonl:2: _id 'd1' was already given", files=beir_raw(**{"corpus.jsonl": jsonl({"_id": "d1", "title": "", "text": "one"}, {"_id": "d1", "title": "", "text": "two"})})),
    case("beir-qrels-score", "raw", CONVERT("scifact"), "test.tsv:2: score 'high'", files=beir_raw(**{"qrels/test.tsv": QRELS_HEAD + b"q1\td1\thigh\n"})),
    case("beir-qrels-fields", "raw", CONVERT("scifact"), "train.tsv:2: expected 3 tab-separated fields", files=beir_raw(**{"qrels/train.tsv": QRELS_HEAD + b"q2 d2 1\n"})),
    case("beir-qrels-bad-utf8", "raw", CONVERT("scifact"), "test.tsv:2: not valid UTF-8", files=beir_raw(**{"qrels/test.tsv": QRELS_HEAD + b"q1\td\xff1\t1\n"})),
    case("beir-empty-corpus", "raw", CONVERT("scifact"), "corpus.jsonl: scifact corpus has no rows", files=beir_raw(**{"corpus.jsonl": b""})),
    case("beir-queries-nul", "raw", CONVERT("scifact"), "queries.jsonl:3: contains a NUL byte", files=beir_raw(**{"queries.jsonl": BEIR_QUERIES + b"\x00\x00\x00\n"})),
    case("ddi-truncated-json", "raw", CONVERT("ddi"), "train_triples.json:1: not valid JSON", files=ddi_raw(**{"train_triples.json": DDI_ITEMS[:-5]})),
    case("ddi-bad-utf8", "raw", CONVERT("ddi"), "dev_triples.json:2: not valid UTF-8", files=ddi_raw(**{"dev_triples.json": b'[\n{"text": "\xc3(", "triple_list": []}]'})),
    case("ddi-empty-list", "raw", CONVERT("ddi"), "test_triples.json: ddi test has no rows", files=ddi_raw(**{"test_triples.json": b"[]"})),
    case("ade-bad-label", "raw", CONVERT("ade"), "ade_corpus_v2_test.json:1: expected", files={"raw/ade_corpus_v2_train_4000.json": jsonl({"text": "ok", "label": 1}), "raw/ade_corpus_v2_test.json": jsonl({"text": "x", "label": 2})}),
    case("bioasq-truncated", "raw", CONVERT("bioasq"), "7B1_golden.json:1: not valid JSON", files={"raw/Task7B/7B1_golden.json": b'{"questions": [{"id": "a"'}),
    case("squad-bad-utf8", "raw", CONVERT("covidqa"), "200423_covidQA.json:1: not valid UTF-8", files={"raw/200423_covidQA.json": b'{"data": "\xff"}'}),
    case("jats-not-xml", "raw", CONVERT("plos"), "journal.pbio.0020188.xml:2: not well-formed XML", files={"raw/journal.pbio.0020188.xml": b"<article>\n<body><p>x</body>\n</article>"}),
    # -- raw files that must be accepted, with every repair counted
    case("bom-strict", "raw", CONVERT("embedded"), expect="ok", files=embedded_raw(train=b"\xef\xbb\xbf" + GOOD_LINES), check=report("interim/report.json", rows_written={"train": 2, "dev": 2, "test": 2}, rows_dropped={})),
    case("bom-skip-malformed", "raw", CONVERT("embedded"), expect="ok", params={"convert.skip_malformed": True}, files=embedded_raw(train=b"\xef\xbb\xbf" + GOOD_LINES), check=report("interim/report.json", **{"rows_written.train": 2}, rows_dropped={})),
    case("bad-utf8-skip-malformed", "raw", CONVERT("embedded"), expect="ok", params={"convert.skip_malformed": True}, files=embedded_raw(train=GOOD_LINES + b'{"SENTENCE": "caf\xe9"}\n'), check=report("interim/report.json", **{"rows_written.train": 2, "rows_read.train": 3, "rows_dropped.train": {"malformed: not valid UTF-8 (byte 0xe9 at offset 17)": 1}})),
    case("nul-skip-malformed", "raw", CONVERT("embedded"), expect="ok", params={"convert.skip_malformed": True}, files=embedded_raw(dev=GOOD_LINES + b"\x00\n"), check=report("interim/report.json", **{"rows_written.dev": 2, "rows_dropped.dev": {"malformed: contains a NUL byte (binary data, not text)": 1}})),
    # -- mirrors (download)
    case("mirror-folder-missing", "mirror", DOWNLOAD("gm-ciht"), "download.mirror: folder", params={"download.mirror": "{d}/no-such-mirror"}),
    case("mirror-dataset-folder-missing", "mirror", DOWNLOAD("gm-ciht"), "has no folder gm-ciht/", params={"download.mirror": "{d}/mirror"}, files={"mirror/ddi/SHA256SUMS": b""}),
    case("mirror-sums-missing", "mirror", DOWNLOAD("gm-ciht"), "has no SHA256SUMS", params={"download.mirror": "{d}/mirror"}, files=mirror("gm-ciht", GMCIHT, sums={})),
    case("mirror-sums-malformed", "mirror", DOWNLOAD("gm-ciht"), "SHA256SUMS:1: expected", params={"download.mirror": "{d}/mirror"}, files=mirror("gm-ciht", GMCIHT, sums_text=b"not-a-sum-line\n")),
    case("mirror-sums-lack-file", "mirror", DOWNLOAD("gm-ciht"), "has no line for renew_triplet_T_train.jsonl", params={"download.mirror": "{d}/mirror"}, files=mirror("gm-ciht", GMCIHT, sums={"other.jsonl": b"x"})),
    case("mirror-file-missing", "mirror", DOWNLOAD("gm-ciht"), "download.mirror: ", params={"download.mirror": "{d}/mirror"}, files=mirror("gm-ciht", {k: v for k, v in GMCIHT.items() if "train" not in k})),
    case("mirror-tampered", "mirror", DOWNLOAD("gm-ciht"), "renew_triplet_T_train.jsonl (mirror SHA256SUMS)", params={"download.mirror": "{d}/mirror"}, files=mirror("gm-ciht", GMCIHT, sums={k: b"published\n" for k in GMCIHT})),
    case("mirror-tampered-sums-rewritten", "mirror", DOWNLOAD("gm-ciht"), "renew_triplet_T_train.jsonl (registry pin)", params={"download.mirror": "{d}/mirror"}, files=mirror("gm-ciht", GMCIHT)),
    case("mirror-archive-member-tampered", "mirror", DOWNLOAD("scifact"), "corpus.jsonl (registry pin)", params={"download.mirror": "{d}/mirror"}, files=mirror("scifact", {"corpus.jsonl": BEIR_CORPUS})),
    # -- stage inputs
    case("input-missing", "inputs", CHUNK, "input file not found: {d}/train.parquet"),
    case("input-not-parquet", "inputs", CHUNK, "train.parquet: not a readable Parquet file", files={"train.parquet": b"PAR1 but not really\n"}),
    case("input-old-schema", "inputs", CHUNK, "train.parquet: columns ['split', 'sentence'", files={"train.parquet": lambda d: __import__("pandas").DataFrame({"id": ["a"]}).to_parquet(d / "train.parquet")}),
    # -- datasets without training judgements: handled, and said so
    case("beir-without-train-qrels", "judgements", RERANKER, expect="ok", params={"data.datasets": ["embedded", "scifact"], "data.retrieval": ["scifact"]}, files={"data": retrieval_data([("q1", "d1", 1, "test")])}, check=all_of(report("rr/report.json", reranking=False, trained=False), no_file("rr/reranker_head.pt"))),
    case("bioasq-all-batches-held-out", "judgements", ("train_reranker.py", ("--dataset", "bioasq", "--data", "{d}/data", "--out", "{d}/rr"), ("rr",)), expect="ok", params={"retrieve.qa_test_splits": ["B1"]}, files={"data": bioasq_data}, check=report("rr/report.json", reranking=False)),
    case("retrieve-with-reranking-off", "judgements", RETRIEVE, expect="ok", needs="pyserini", params={"retrieve.bm25_methods": ["none"], "retrieve.dense_methods": [], "retrieve.ks": [1, 2], "retrieve.depth": 3, "retrieve.save_depth": 3, "retrieve.rerank_depth": 2, "reshape.passages": 3}, files={"data": retrieval_data([("q1", "d1", 1, "test")]), "rr/report.json": json.dumps({"reranking": False, "reason": "no training judgements in data"}).encode()}, check=report("m.json", rerank={"skipped": "no training judgements in data"})),
]  # fmt: skip

# The own-corpus command (stages/compare.py) and the params path, tried as a user with a
# messy or hostile corpus would (issue 25). One block per group; each group's helpers live
# beside its cases.

# ---- group "outputs": --out / --metrics never delete or replace what the run did not create
# Every case holds a corpus, a sentinel file and a fake `.git`; those that point an output at
# the working directory run from the case folder (cwd="case"), so a bug there empties only
# that folder, and the guard scores it "destroyed". The corpus has no questions: the cases
# that succeed measure sizes only (the encoder, no BM25).
SAFE: dict[str, bytes] = {
    "corpus/a.txt": b"Aspirin treats pain. It is cheap.\n\nStatins lower cholesterol.\n",
    "corpus/b.txt": b"Sleep aids memory.\n",
    "sentinel.txt": b"keep me\n",
    ".git/HEAD": b"ref: refs/heads/main\n",
}
# A converted corpus's report.json as convert_local writes it (the tables are not read before the checks).
CONVERTED: dict[str, bytes] = {"conv/report.json": b'{"dataset": "corpus", "kind": "folder", "task": "documents"}'}
COMPARE_OUTS = ("out", "report.html", "chunks.parquet", "metrics.json", "data")  # what a bug would write, wherever
SQUAD_ONE = json.dumps({"data": [{"title": "t", "paragraphs": [{"context": "Aspirin treats pain.", "qas": [{"id": "q1", "question": "What treats pain?", "answers": [{"text": "Aspirin", "answer_start": 0}]}]}]}]}).encode()  # fmt: skip


def compare_stage(*extra: str, corpus: str = "{d}/corpus", outputs: tuple[str, ...] = COMPARE_OUTS) -> tuple:
    return ("compare.py", ("--corpus", corpus, "--methods", "fixed", "--no-rerank", *extra), outputs)


def safe(extra: Files | None = None) -> Files:
    return {**SAFE, **(extra or {})}


def intact(extra: dict[str, bytes] | None = None) -> Callable[[Path], None]:
    """A guard: the files of ``SAFE`` and ``extra`` still hold what was written."""

    def guard(d: Path) -> None:
        for rel, data in {**SAFE, **(extra or {})}.items():
            assert (d / rel).is_file(), f"{rel} was removed"
            assert (d / rel).read_bytes() == data, f"{rel} was changed"

    return guard


def repository_intact(d: Path) -> None:
    intact()(d)
    assert (ROOT / ".git").exists() and (ROOT / "dvc.yaml").is_file(), "the repository was emptied"


def marked_output_replaced(d: Path) -> None:
    out = d / "out"
    assert (out / "report.html").is_file() and not (out / "old.txt").exists(), "the previous run's folder was not replaced"
    assert (out / ".biochunk-output").read_text() == "compare\n"
    assert not list(d.glob(".out.*.tmp")), "a temporary sibling was left"


def default_out_written(d: Path) -> None:
    assert (d / "build" / "compare" / "corpus" / "report.html").is_file()


def link_to_case(d: Path) -> None:
    (d / "link").symlink_to(d)


DOCS = {"docs/guide.md": b"# Guide\n"}
OTHER_COMMAND = {"docs/.biochunk-output": b"chunk\n", "docs/chunks.parquet": b"x"}
PROJECT = {"proj/code.py": b"print(1)\n", "proj/.git/HEAD": b"ref: refs/heads/main\n"}
NOTES = {"notes.txt": b"mine\n"}
README = {"README.md": b"# mine\n"}
METRICS_DIR = {"m/keep": b"x"}
SQUAD_FILE = {"qa.json": SQUAD_ONE}
PREVIOUS_RUN = {"out/.biochunk-output": b"compare\n", "out/old.txt": b"x"}
BAD_LINE = {"corpus/bad.jsonl": b"not json\n"}
OUT = ("--out", "{d}/out")


def still_a_device(path: str) -> Callable[[Path], None]:
    def guard(d: Path) -> None:
        import stat

        assert stat.S_ISCHR(os.stat(path).st_mode), f"{path} is no longer a character device"

    return guard


def fifo(rel: str) -> Callable[[Path], None]:
    def write(d: Path) -> None:
        os.mkfifo(d / rel)

    return write

OUTPUT_CASES: list[Case] = [
    case("out-dot", "outputs", compare_stage("--out", "."), "--out '.' is the working directory", cwd="case", files=safe(), guard=intact()),
    case("out-dot-slash", "outputs", compare_stage("--out", "./"), "--out './' is the working directory", cwd="case", files=safe(), guard=intact()),
    case("out-empty", "outputs", compare_stage("--out", ""), "--out '': an empty path", cwd="case", files=safe(), guard=intact()),
    case("out-parent-of-cwd", "outputs", compare_stage("--out", ".."), "--out '..' is the working directory or a folder above it", cwd="case", files=safe(), guard=intact()),
    case("out-symlink-to-cwd", "outputs", compare_stage("--out", "link"), "--out 'link' is the working directory", cwd="case", files=safe({"link": link_to_case}), guard=intact()),
    case("out-repository", "outputs", compare_stage("--out", str(ROOT)), "is the repository", cwd="case", files=safe(), guard=repository_intact),
    case("out-inside-git", "outputs", compare_stage("--out", ".git/report"), "--out '.git/report' is inside a .git folder", cwd="case", files=safe(), guard=intact()),
    case("out-other-repository", "outputs", compare_stage("--out", "{d}/proj"), "--out '{d}/proj' is a git repository", files=safe(PROJECT), guard=intact(PROJECT)),
    case("out-is-corpus", "outputs", compare_stage("--out", "{d}/corpus"), "--out '{d}/corpus' overlaps the corpus", files=safe(), guard=intact()),
    case("out-inside-corpus", "outputs", compare_stage("--out", "{d}/corpus/report"), "overlaps the corpus", files=safe(), guard=intact()),
    case("out-holds-corpus", "outputs", compare_stage("--out", "{d}"), "--out '{d}' overlaps the corpus", files=safe(), guard=intact()),
    # the DVC branch's halves: convert_local's --out, and compare's --data (convert_local's folder)
    case("convert-local-out-inside-corpus", "outputs", ("convert_local.py", ("--corpus", "{d}/corpus", "--out", "{d}/corpus/data"), ("corpus/data",)), "--out '{d}/corpus/data' overlaps the corpus", files=safe(), guard=intact()),
    # the benchmarks' own stages: download's --out against the mirror, convert's against the raw files
    case("download-out-is-mirror-folder", "outputs", ("download.py", ("--dataset", "gm-ciht", "--out", "{d}/mirror/gm-ciht"), ()), "--out '{d}/mirror/gm-ciht' overlaps download.mirror", params={"download.mirror": "{d}/mirror"}, files=safe(mirror("gm-ciht", GMCIHT)), guard=intact(mirror("gm-ciht", GMCIHT))),
    case("download-out-inside-mirror", "outputs", ("download.py", ("--dataset", "gm-ciht", "--out", "{d}/mirror/raw"), ("mirror/raw",)), "overlaps download.mirror", params={"download.mirror": "{d}/mirror"}, files=safe(mirror("gm-ciht", GMCIHT)), guard=intact(mirror("gm-ciht", GMCIHT))),
    case("convert-out-is-raw", "outputs", ("convert.py", ("--dataset", "embedded", "--raw", "{d}/raw", "--out", "{d}/raw"), ()), "--out '{d}/raw' overlaps --raw '{d}/raw'", files=safe(embedded_raw()), guard=intact(embedded_raw())),
    case("convert-out-inside-raw", "outputs", ("convert.py", ("--dataset", "embedded", "--raw", "{d}/raw", "--out", "{d}/raw/interim"), ("raw/interim",)), "overlaps --raw", files=safe(embedded_raw()), guard=intact(embedded_raw())),
    case("describe-out-inside-data", "outputs", ("describe.py", ("--dataset", "embedded", "--data", "{d}/raw", "--out", "{d}/raw/d.json"), ("raw/d.json",)), "--out '{d}/raw/d.json' overlaps --data", files=safe(embedded_raw()), guard=intact(embedded_raw()), params_arg=False),
    case("describe-not-converted", "outputs", ("describe.py", ("--dataset", "embedded", "--data", "{d}/raw", "--out", "{d}/d.json"), ("d.json",)), "input file not found: {d}/raw/report.json", files=safe(embedded_raw()), guard=intact(embedded_raw()), params_arg=False),
    case("compare-data-not-converted", "outputs", ("compare.py", ("--data", "{d}/corpus", "--out", "{d}/out"), ("out",)), "--data '{d}/corpus': no readable report.json there; name the folder stages/convert_local.py wrote", files=safe(), guard=intact()),
    case("compare-data-a-benchmark", "outputs", ("compare.py", ("--data", "{d}/interim", "--out", "{d}/out"), ("out",)), "report.json is not a converted local corpus's", files=safe({"interim/report.json": b'{"dataset": "embedded", "task": "triples"}'}), guard=intact()),
    # compare's reranker from the compare_reranker stage (--reranker): its folder, for this corpus
    case("compare-reranker-not-a-folder-of-it", "outputs", ("compare.py", ("--corpus", "{d}/corpus", "--reranker", "{d}/corpus", "--out", "{d}/out"), ("out",)), "--reranker '{d}/corpus': no readable report.json there; name the folder stages/compare_reranker.py wrote", files=safe(), guard=intact()),
    case("compare-reranker-of-another-corpus", "outputs", ("compare.py", ("--corpus", "{d}/corpus", "--reranker", "{d}/rr", "--out", "{d}/out"), ("out",)), "--reranker '{d}/rr' was trained on 'other', not on the corpus compared, 'corpus'", files=safe({"rr/report.json": b'{"corpus": "other", "reranking": false, "max_length": 128}'}), guard=intact()),
    case("compare-reranker-and-no-rerank", "flags", ("compare.py", ("--corpus", "{d}/corpus", "--reranker", "{d}/rr", "--no-rerank", "--out", "{d}/out"), ("out",)), "argument --no-rerank: not allowed with argument --reranker", files=safe(), guard=intact()),
    case("compare-reranker-data-not-converted", "outputs", ("compare_reranker.py", ("--data", "{d}/corpus", "--out", "{d}/rr"), ("rr",)), "--data '{d}/corpus': no readable report.json there", files=safe(), guard=intact()),
    case("compare-reranker-out-inside-data", "outputs", ("compare_reranker.py", ("--data", "{d}/conv", "--out", "{d}/conv/rr"), ("conv/rr",)), "--out '{d}/conv/rr' overlaps --data '{d}/conv'", files=safe(CONVERTED), guard=intact(CONVERTED)),
    case("compare-data-out-inside", "outputs", ("compare.py", ("--data", "{d}/corpus", "--out", "{d}/corpus/out"), ("corpus/out",)), "--out '{d}/corpus/out' overlaps --data '{d}/corpus'", files=safe(), guard=intact()),
    case("out-existing-folder", "outputs", compare_stage("--out", "{d}/docs"), "--out '{d}/docs' is an existing folder that compare did not write", files=safe(DOCS), guard=intact(DOCS)),
    case("out-folder-of-another-command", "outputs", compare_stage("--out", "{d}/docs"), "compare did not write", files=safe(OTHER_COMMAND), guard=intact(OTHER_COMMAND)),
    case("out-existing-file", "outputs", compare_stage("--out", "{d}/notes.txt"), "--out '{d}/notes.txt' is an existing file; name a folder", files=safe(NOTES), guard=intact(NOTES)),
    case("out-under-a-file", "outputs", compare_stage("--out", "{d}/sentinel.txt/out"), "sentinel.txt is a file, not a folder", files=safe(), guard=intact()),
    case("out-checked-before-the-corpus", "outputs", compare_stage("--out", "."), "--out '.'", cwd="case", files=safe(BAD_LINE), guard=intact(BAD_LINE)),
    case("metrics-dot", "outputs", compare_stage(*OUT, "--metrics", "."), "--metrics '.' is the working directory", cwd="case", files=safe(), guard=intact()),
    case("metrics-empty", "outputs", compare_stage(*OUT, "--metrics", ""), "--metrics '': an empty path", cwd="case", files=safe(), guard=intact()),
    case("metrics-existing-folder", "outputs", compare_stage(*OUT, "--metrics", "{d}/m"), "--metrics '{d}/m' is an existing folder; name a file", files=safe(METRICS_DIR), guard=intact(METRICS_DIR)),
    case("metrics-under-a-file", "outputs", compare_stage(*OUT, "--metrics", "{d}/sentinel.txt/m.json"), "sentinel.txt is a file, not a folder", files=safe(), guard=intact()),
    case("metrics-in-corpus", "outputs", compare_stage(*OUT, "--metrics", "{d}/corpus/m.json"), "--metrics '{d}/corpus/m.json' overlaps the corpus", files=safe(), guard=intact()),
    case("metrics-is-a-document", "outputs", compare_stage(*OUT, "--metrics", "{d}/corpus/a.txt"), "overlaps the corpus", files=safe(), guard=intact()),
    case("metrics-is-the-squad-corpus", "outputs", compare_stage(*OUT, "--metrics", "{d}/qa.json", corpus="{d}/qa.json"), "--metrics '{d}/qa.json' overlaps the corpus", files=safe(SQUAD_FILE), guard=intact(SQUAD_FILE)),
    case("metrics-foreign-file", "outputs", compare_stage(*OUT, "--metrics", "{d}/README.md"), "--metrics '{d}/README.md' is an existing file that compare did not write", files=safe(README), guard=intact(README)),
    case("metrics-is-dev-null", "outputs", compare_stage(*OUT, "--metrics", "/dev/null"), "--metrics '/dev/null' is a device, pipe or socket", files=safe(), guard=all_of(intact(), still_a_device("/dev/null"))),
    case("out-is-a-fifo", "outputs", compare_stage("--out", "{d}/pipe"), "--out '{d}/pipe' is a device, pipe or socket", files={**safe(), "pipe": fifo("pipe")}, guard=intact()),
    case("metrics-inside-out", "outputs", compare_stage(*OUT, "--metrics", "{d}/out/m.json"), "--metrics '{d}/out/m.json' overlaps --out", files=safe(), guard=intact()),
    case("metrics-holds-out", "outputs", compare_stage("--out", "{d}/res/out", "--metrics", "{d}/res"), "--metrics '{d}/res' overlaps --out", files=safe(), guard=intact()),
    case("items-foreign-file", "outputs", compare_stage(*OUT, "--items", "{d}/README.md"), "--items '{d}/README.md' is an existing file that compare did not write", files=safe(README), guard=intact(README)),
    case("items-is-the-metrics-file", "outputs", compare_stage(*OUT, "--metrics", "{d}/m.json", "--items", "{d}/m.json"), "--items '{d}/m.json' is the --metrics file", files=safe(), guard=intact()),
    case("items-in-corpus", "outputs", compare_stage(*OUT, "--items", "{d}/corpus/i.parquet"), "--items '{d}/corpus/i.parquet' overlaps the corpus", files=safe(), guard=intact()),
    case("items-inside-out", "outputs", compare_stage(*OUT, "--items", "{d}/out/i.parquet"), "--items '{d}/out/i.parquet' overlaps --out", files=safe(), guard=intact()),
    case("out-marked-folder-replaced", "outputs", compare_stage(*OUT, outputs=()), expect="ok", files=safe(PREVIOUS_RUN), guard=intact(), check=marked_output_replaced),
    case("out-default-under-cwd", "outputs", compare_stage(outputs=()), expect="ok", cwd="case", files=safe(), guard=intact(), check=default_out_written),
]  # fmt: skip


# ---- group "corpus": corpus folders and files users have (symlinks, SQuAD, CJK, formats)
# Nothing outside the corpus is read: a link out of it (or to nothing) stops the command
# naming it; a link inside is not followed and is counted. Error cases stop in the
# conversion, before any chunking; the ok cases measure sizes only, except the SQuAD ones,
# which run dense retrieval over two documents.
def link(rel: str, target: str) -> Callable[[Path], None]:
    """A symbolic link at ``{d}/rel`` pointing at ``target`` (``{d}`` filled in)."""

    def write(d: Path) -> None:
        (d / rel).symlink_to(target.replace("{d}", str(d)))

    return write


def fifo(rel: str) -> Callable[[Path], None]:
    def write(d: Path) -> None:
        os.mkfifo(d / rel)  # reading it would wait forever for a writer

    return write


def empty_folder(rel: str) -> Callable[[Path], None]:
    return lambda d: (d / rel).mkdir()


def squad(*paragraphs: dict, version: str = "1.1") -> bytes:
    """A standard SQuAD file: an article per paragraph, titled, no document_id."""
    data = [{"title": f"Article {n}", "paragraphs": [p]} for n, p in enumerate(paragraphs)]
    return json.dumps({"version": version, "data": data}).encode()


def qa(qid: str, context: str, answer: str, **kw: Any) -> dict:
    return {"id": qid, "question": f"What about {answer.lower()}?", "answers": [{"text": answer, "answer_start": context.index(answer)}], **kw}  # fmt: skip


PAIN, CHOL = "Aspirin treats pain and fever.", "Statins lower cholesterol in adults."
SQUAD_V1 = squad({"context": PAIN, "qas": [qa("q1", PAIN, "Aspirin")]}, {"context": CHOL, "qas": [qa("q2", CHOL, "Statins")]})
UNANSWERABLE = {"id": "q3", "question": "Who sells it?", "answers": [], "is_impossible": True, "plausible_answers": [{"text": "Aspirin", "answer_start": 0}]}  # fmt: skip
SQUAD_V2 = squad({"context": PAIN, "qas": [qa("q1", PAIN, "Aspirin", is_impossible=False), UNANSWERABLE]}, {"context": CHOL, "qas": [qa("q2", CHOL, "Statins")]}, version="v2.0")  # fmt: skip
CHINESE = ("新型冠状病毒肺炎是一种传染病。患者应该隔离十四天，并接受核酸检测。" * 10).encode()  # 330 words, no space
ONE_DOC = {"corpus/a.txt": b"Aspirin treats pain.\n"}
SECRET = {"secret.txt": b"a file outside the corpus\n", "secret/notes.md": b"# Private\n"}
LINK_OUT = "symbolic link out of the corpus folder (or to nothing), not read"
SQUAD = compare_stage("--out", "{d}/out", "--retrievers", "dense", corpus="{d}/qa.json", outputs=())


def page_notes_say(*parts: str) -> Callable[[Path], None]:
    """The notes the report page shows (compare's metrics.json) hold each of ``parts``."""

    def check(d: Path) -> None:
        notes = json.loads((d / "out" / "metrics.json").read_text()).get("notes", [])
        for part in parts:
            assert any(part in n for n in notes), f"no page note says {part!r}: {notes}"

    return check


def notes_say(*parts: str) -> Callable[[Path], None]:
    def check(d: Path) -> None:
        notes = json.loads((d / "out" / "data" / "report.json").read_text()).get("notes", [])
        for part in parts:
            assert any(part in n for n in notes), f"no note says {part!r}: {notes}"

    return check


def several_chunks(d: Path) -> None:
    from biochunk.io import read_table

    chunks = read_table(d / "out" / "chunks.parquet")
    assert len(chunks) > 1, f"a Chinese document came out as {len(chunks)} chunk: its characters are not counted as words"


CORPUS = compare_stage("--out", "{d}/out")  # error cases: nothing may appear at any output
CORPUS_OK = compare_stage("--out", "{d}/out", outputs=())
CORPUS_CASES: list[Case] = [
    # -- symbolic links: never read through one out of the corpus
    case("corpus-file-link-out", "corpus", CORPUS, f"/corpus/leak.txt -> {{d}}/secret.txt: {LINK_OUT}", files={**ONE_DOC, **SECRET, "corpus/leak.txt": link("corpus/leak.txt", "{d}/secret.txt")}),
    case("corpus-relative-link-out", "corpus", CORPUS, f"/corpus/sub/up.md -> {{d}}/secret/notes.md: {LINK_OUT}", files={**ONE_DOC, **SECRET, "corpus/sub/up.md": link("corpus/sub/up.md", "../../secret/notes.md")}),
    case("corpus-folder-link-out", "corpus", CORPUS, f"/corpus/more -> {{d}}/secret: {LINK_OUT}", files={**ONE_DOC, **SECRET, "corpus/more": link("corpus/more", "{d}/secret")}),
    case("corpus-link-to-nothing", "corpus", CORPUS, f"/corpus/gone.md -> {{d}}/nothing.md (missing): {LINK_OUT}", files={**ONE_DOC, "corpus/gone.md": link("corpus/gone.md", "{d}/nothing.md")}),
    case("corpus-link-loop", "corpus", CORPUS, "/corpus/x.md -> y.md (a loop of links); ", files={**ONE_DOC, "corpus/x.md": link("corpus/x.md", "y.md"), "corpus/y.md": link("corpus/y.md", "x.md")}),
    case("corpus-link-to-system-file", "corpus", CORPUS, f"/corpus/passwd.txt -> /etc/passwd: {LINK_OUT}", files={**ONE_DOC, "corpus/passwd.txt": link("corpus/passwd.txt", "/etc/passwd")}),
    case("corpus-questions-link-out", "corpus", CORPUS, f"/corpus/questions.jsonl -> {{d}}/secret.txt: {LINK_OUT}", files={**ONE_DOC, **SECRET, "corpus/questions.jsonl": link("corpus/questions.jsonl", "{d}/secret.txt")}),
    case("beir-corpus-link-out", "corpus", CORPUS, f"/corpus/corpus.jsonl -> {{d}}/secret.txt: {LINK_OUT}", files={**SECRET, "corpus/queries.jsonl": BEIR_QUERIES, "corpus/qrels/test.tsv": QRELS_HEAD + b"q1\td1\t1\n", "corpus/corpus.jsonl": link("corpus/corpus.jsonl", "{d}/secret.txt")}),
    case("corpus-links-inside-counted", "corpus", CORPUS_OK, expect="ok", files={**ONE_DOC, "corpus/again.txt": link("corpus/again.txt", "a.txt"), "corpus/loop": link("corpus/loop", "{d}/corpus")}, check=all_of(report("out/data/report.json", rows_written={"documents": 1}, rows_dropped={"documents": {"symbolic link inside the corpus (not followed: its target is read as itself)": 2}}), notes_say("2 symbolic links inside the corpus not followed (again.txt, loop)"))),
    # -- what a folder holds
    case("corpus-empty-folder", "corpus", CORPUS, "{d}/corpus: no documents found", files={"corpus": empty_folder("corpus")}),
    case("corpus-only-hidden-files", "corpus", CORPUS, "{d}/corpus: no documents found", files={"corpus/.draft.txt": b"Hidden.\n", "corpus/.git/a.md": b"# x\n"}),
    case("corpus-fifo-named-txt", "corpus", CORPUS, "{d}/corpus: no documents found", files={"corpus/a.txt": fifo("corpus/a.txt")}),
    case("corpus-binary-txt", "corpus", CORPUS, "/corpus/a.txt: contains a NUL byte (binary data, not text); save it as UTF-8 text", files={"corpus/a.txt": b"GIF89a\x01\x00\x01\x00\x00\xff"[:9]}),
    case("corpus-bad-utf8-md", "corpus", CORPUS, "/corpus/b.md: not valid UTF-8 (byte 0xe9 at offset 8); save it as UTF-8 text", files={**ONE_DOC, "corpus/b.md": b"# Caf\xc3\xa9\n\xe9t\xe9\n"}),
    case("corpus-bad-utf8-md-skipped", "corpus", CORPUS_OK, expect="ok", params={"convert.skip_malformed": True}, files={**ONE_DOC, "corpus/b.md": b"# Caf\xc3\xa9\n\xe9t\xe9\n"}, check=report("out/data/report.json", rows_written={"documents": 1}, rows_dropped={"documents": {"not valid UTF-8": 1}})),
    case("corpus-html-without-text", "corpus", CORPUS, "/corpus/page.html: the page holds no text", files={**ONE_DOC, "corpus/page.html": b"<html><head><script>var x;</script></head><body><nav>Menu</nav></body></html>"}),
    case("corpus-jsonl-empty-id", "corpus", CORPUS, "/corpus/d.jsonl:2: document id '' is not a non-empty string or integer; give it an id", files={"corpus/d.jsonl": jsonl({"id": "d1", "text": "One."}, {"id": "", "text": "Two."})}),
    case("corpus-jsonl-float-id", "corpus", CORPUS, "/corpus/d.jsonl:1: document id 1.5 is not a non-empty string or integer", files={"corpus/d.jsonl": jsonl({"id": 1.5, "text": "One."})}),
    case("corpus-markdown-long-heading-line", "corpus", CORPUS_OK, expect="ok", files={"corpus/a.md": b"# a" + b" #" * 200_000 + b" x\n\nText.\n"}, check=report("out/data/report.json", rows_written={"documents": 1})),
    case("corpus-cjk-document", "corpus", CORPUS_OK, expect="ok", files={"corpus/zh.txt": CHINESE}, check=several_chunks),
    # -- questions files
    case("corpus-questions-in-subfolder", "corpus", CORPUS_OK, expect="ok", files={**ONE_DOC, "corpus/sub/questions.jsonl": jsonl({"id": "q1", "question": "what?", "doc_id": "a.txt", "answer": "pain"})}, check=all_of(notes_say("sub/questions.jsonl: not read, only the top folder's questions.jsonl is"), page_notes_say("sub/questions.jsonl: not read", "no questions: methods are compared by size only"))),
    case("corpus-questions-unknown-document", "corpus", CORPUS, "/corpus/questions.jsonl:1: question q1 names document 'b.txt', which is not in the folder (a.txt)", files={**ONE_DOC, "corpus/questions.jsonl": jsonl({"id": "q1", "question": "what?", "doc_id": "b.txt", "answer": "pain"})}),
    case("corpus-questions-answer-absent", "corpus", CORPUS, "/corpus/questions.jsonl:1: answer 'fever' is not in document a.txt", files={**ONE_DOC, "corpus/questions.jsonl": jsonl({"id": "q1", "question": "what?", "doc_id": "a.txt", "answer": "fever"})}),
    # -- SQuAD files as published: v1 without document_id, v2 with unanswerable questions
    case("squad-v1-standard", "corpus", SQUAD, expect="ok", files={"qa.json": SQUAD_V1}, check=all_of(report("out/data/report.json", rows_written={"documents": 2, "answers": 2}, rows_dropped={}), notes_say("2 document ids derived from the article titles"))),
    case("squad-v2-unanswerable-counted", "corpus", SQUAD, expect="ok", files={"qa.json": SQUAD_V2}, check=report("out/data/report.json", rows_written={"documents": 2, "answers": 2}, rows_dropped={"answers": {"unanswerable question (is_impossible)": 1}})),
    case("squad-empty-question-id", "corpus", compare_stage("--out", "{d}/out", corpus="{d}/qa.json"), "qa.json:data[0].paragraphs[0].qas[0]: expected a non-empty id", files={"qa.json": squad({"context": PAIN, "qas": [qa(" ", PAIN, "Aspirin")]})}),
    case("squad-duplicate-document-id", "corpus", compare_stage("--out", "{d}/out", corpus="{d}/qa.json"), "qa.json:data[1].paragraphs[0]: document_id 7 occurs twice", files={"qa.json": squad({"document_id": 7, "context": PAIN, "qas": []}, {"document_id": 7, "context": CHOL, "qas": []})}),
]  # fmt: skip

# ---- group "flags": every compare flag and every param checked before any work
# The error cases fail before the corpus is converted or a model loaded (an unknown embed
# model beside a bad flag: the flag is named); the ok cases run the command on a tiny corpus.
JSONL_WITH_BAD_LINE = {"corpus/more.jsonl": b'{"id": "d1", "text": "Statins lower cholesterol."}\nnot json\n'}
ONE_QUESTION = {"corpus/questions.jsonl": b'{"id": "q1", "question": "what treats pain", "doc_id": "a.txt", "answer": "Aspirin"}\n'}


def malformed_line_skipped(d: Path) -> None:
    report("out/data/report.json", rows_dropped={"documents": {"malformed: not valid JSON (Expecting value)": 1}})(d)
    report("out/metrics.json", **{"corpus.documents": 3})(d)


def _bare(constant: str) -> None:
    raise ValueError(f"bare {constant} in metrics.json (strict JSON has null)")


def no_intervals(d: Path) -> None:
    data = json.loads((d / "out" / "metrics.json").read_text(), parse_constant=_bare)
    (row,) = [r for r in data["ranking"] if r["method"] == "fixed"]
    assert row["ci_low"] is None and row["ci_high"] is None, f"intervals without resamples: {row}"


FLAG_CASES: list[Case] = [
    case("bootstrap-negative", "flags", compare_stage(*OUT, "--bootstrap", "-1"), "--bootstrap -1: must be at least 0", files=safe()),
    case("samples-negative", "flags", compare_stage(*OUT, "--samples", "-2"), "--samples -2: must be at least 0", files=safe()),
    case("max-documents-zero", "flags", compare_stage(*OUT, "--max-documents", "0"), "--max-documents 0: must be at least 1", files=safe()),
    case("max-documents-negative", "flags", compare_stage(*OUT, "--max-documents", "-5"), "--max-documents -5", files=safe()),
    case("flag-checked-before-models", "flags", compare_stage(*OUT, "--bootstrap", "-1"), "--bootstrap -1", params={"embed.model": NO_MODEL}, files=safe()),
    case("metrics-checked-before-models", "flags", compare_stage(*OUT, "--metrics", "{d}/m"), "--metrics '{d}/m'", params={"embed.model": NO_MODEL}, files=safe(METRICS_DIR), guard=intact(METRICS_DIR)),
    case("flag-checked-before-the-corpus", "flags", compare_stage(*OUT, "--samples", "-1"), "--samples -1", files=safe(JSONL_WITH_BAD_LINE)),
    case("hybrid-method-refused", "flags", compare_stage(*OUT, "--methods", "fixed", "hybrid"), "--methods lists hybrid, which reads a triple dataset's trigger lexicon", files=safe(JSONL_WITH_BAD_LINE)),
    case("malformed-line-names-skip-malformed", "flags", compare_stage(*OUT), "more.jsonl:2: not valid JSON (Expecting value) (fix the line, or set convert.skip_malformed", files=safe(JSONL_WITH_BAD_LINE)),
    # argparse's own mistakes: one line too (cli.ArgumentParser), not a usage block
    case("unknown-retriever", "flags", compare_stage(*OUT, "--retrievers", "bogus"), "argument --retrievers: invalid choice: 'bogus'", files=safe()),
    case("bootstrap-not-a-number", "flags", compare_stage(*OUT, "--bootstrap", "many"), "argument --bootstrap: invalid int value: 'many'", files=safe()),
    case("skip-malformed-honoured", "flags", compare_stage(*OUT, outputs=()), expect="ok", params={"convert.skip_malformed": True}, files=safe(JSONL_WITH_BAD_LINE), check=malformed_line_skipped),
    case("max-documents-one", "flags", compare_stage(*OUT, "--max-documents", "1", outputs=()), expect="ok", files=safe(), check=report("out/metrics.json", **{"corpus.documents": 1})),
    case("bootstrap-zero-no-intervals", "flags", compare_stage(*OUT, "--retrievers", "bm25", "--bootstrap", "0", "--samples", "0", outputs=()), expect="ok", needs="pyserini", files=safe(ONE_QUESTION), check=no_intervals),
]  # fmt: skip

# ---- group "guards": params files and params that must be refused before DVC or a stage
# works (duplicate keys, alias bombs, shell characters, sizes out of relation, devices)
LOL = '["lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol"]'
# "Billion laughs": nine levels of nine aliases, 9**9 strings once anything walks the values.
ALIAS_BOMB = f"a: &a {LOL}\n" + "".join(f"{n}: &{n} [{', '.join([f'*{p}'] * 9)}]\n" for p, n in zip("abcdefgh", "bcdefghi"))


def params_folder(d: Path) -> None:
    """params.yaml is a folder (a wrong --params)."""
    (d / "params.yaml").unlink()
    (d / "params.yaml").mkdir()


def guard(id: str, needle: str, **kw: Any) -> Case:
    # download reads none of these params: whatever refuses them is the whole-file check.
    return case(id, "guards", DL, needle, **kw)


GUARD_CASES: list[Case] = [
    # -- the YAML itself: DVC parses it before any stage (scripts/check_params.py runs first in `make repro`)
    guard("duplicate-key", "chunk.window is given twice (also at line 2); keep one", params_text="chunk:\n  window: 5\n  overlap: 1\n  window: 7\n"),
    guard("duplicate-section", "chunk is given twice (also at line 1)", params_text="chunk: {window: 5}\nembed: {}\nchunk: {window: 7}\n"),
    guard("duplicate-key-in-list", "reshape.variants[0].keep is given twice", params_text="reshape:\n  variants:\n    - {name: a, keep: 2, keep: 3}\n"),
    guard("alias-bomb", "YAML anchors and aliases (&a) are not allowed", params_text=ALIAS_BOMB),
    guard("merge-key", "YAML anchors and aliases (&b) are not allowed", params_text="base: &b {window: 5}\nchunk:\n  <<: *b\n"),
    guard("deep-nesting", "nested more than 32 levels deep", params_text="chunk: " + "[" * 20_000 + "]" * 20_000 + "\n"),
    guard("oversized-params-file", "bytes; a params file is a few KB", params_text="# padding\n" * 200_000),
    guard("python-tag", "params.yaml: not valid YAML", params_text="chunk: !!python/object/apply:os.system [echo pwned]\n"),
    guard("params-is-a-folder", "params.yaml is not a file", files={"params.yaml": params_folder}),
    # -- data.local paths: unquoted in the compare stage's shell command (an allow-list now)
    guard("local-path-redirect", "data.local.mine: 'corpus>out' has '>'", params={"data.local": {"mine": "corpus>out"}}),
    guard("local-path-newline", "data.local.mine: 'docs\\nrm -rf x' has '\\n'", params={"data.local": {"mine": "docs\nrm -rf x"}}),
    guard("local-path-tab", "has '\\t'", params={"data.local": {"mine": "docs\tx"}}),
    guard("local-path-hash", "data.local.mine: 'docs#x' has '#'", params={"data.local": {"mine": "docs#x"}}),
    guard("local-path-tilde", "write the full path instead of ~", params={"data.local": {"mine": "~/corpus"}}),
    guard("local-path-option", "data.local.mine: '-rf' starts with '-'", params={"data.local": {"mine": "-rf"}}),
    guard("local-path-not-a-string", "data.local.mine must be a path", params={"data.local": {"mine": 7}}),
    # -- sizes that contradict each other
    guard("min-words-above-max-words", "chunk.min_words (600) is above chunk.max_words (500)", params={"chunk.min_words": 600, "chunk.max_words": 500}),
    guard("min-words-above-max-tokens", "chunk.min_words (60) is above chunk.max_tokens (50 words)", params={"chunk.max_tokens": 50}),
    guard("retrieve-chunk-min-above-max", "retrieve.chunk.min_words (900) is above retrieve.chunk.max_words (500)", params={"retrieve.chunk.min_words": 900}),
    guard("boundary-overlap-fills-chunk", "chunk.boundary_overlap (500) must be below chunk.max_words (500)", params={"chunk.boundary_overlap": 500}),
    guard("negative-overlap", "chunk.overlap must be in [0, 4], got -1", params={"chunk.overlap": -1}),
    guard("overlap-equals-window", "chunk.overlap must be in [0, 4], got 5", params={"chunk.overlap": 5}),
    guard("chunk-overlap-equals-size", "chunk.chunk_overlap must be in [0, 999], got 1000", params={"chunk.chunk_overlap": 1000}),
    guard("retrieve-overlap-equals-window", "retrieve.chunk.overlap must be in [0, 127], got 128", params={"retrieve.chunk.overlap": 128}),
    # -- devices and remote addresses, before any work
    guard("unknown-device", "embed.device: unknown device 'gpu'", params={"embed.device": "gpu"}),
    guard("device-uppercase", "embed.device: unknown device 'CUDA'", params={"embed.device": "CUDA"}),
    guard("absent-gpu", "embed.device is cuda:99 but torch sees", params={"embed.device": "cuda:99"}, needs="torch"),
    guard("dask-port-out-of-range", "compute.address: port 99999 is not a TCP port", params={"compute.engine": "dask", "compute.address": "tcp://127.0.0.1:99999", "compute.partition_rows": 8}),
]  # fmt: skip

# ---- group "report": what the report page and metrics.json say on small corpora
def _compare(*extra: str) -> tuple:
    """stages/compare.py on the case's corpus/ folder: one chunk method, few resamples, no reranker."""
    args = ("--corpus", "{d}/corpus", "--out", "{d}/out", "--methods", "fixed", "--samples", "1", "--no-rerank")
    return ("compare.py", (*args, *extra), ("out",))


def _strict_metrics(d: Path) -> dict[str, Any]:
    """out/metrics.json read as strict JSON: a bare NaN or Infinity fails the case."""

    def bare(token: str) -> None:
        raise AssertionError(f"metrics.json holds a bare {token}, not JSON (null is)")

    return json.loads((d / "out" / "metrics.json").read_text(encoding="utf-8"), parse_constant=bare)


def compared(check: Callable[[dict[str, Any], str], None]) -> Callable[[Path], None]:
    """A check of the compare outputs: ``check(metrics, report page)`` on strict metrics."""

    import re

    def run(d: Path) -> None:
        page = (d / "out" / "report.html").read_text(encoding="utf-8")
        text = re.sub(r"data:image/png;base64,[A-Za-z0-9+/=]+", "", page)  # inlined plots are not text
        assert not re.search(r"\bnan\b", text, re.IGNORECASE), "report.html prints nan where a value is undefined"
        check(_strict_metrics(d), page)

    return run


# Two identical leaflets: BM25 scores them alike, so only the order of a tie puts the judged
# one first or second (Anserini breaks the tie by document id, a.txt first: trec_eval sees 1.0).
_SPACER = b"Spacers help inhalers work. Wash the spacer once a month in warm water and let it dry in air."
TWINS: Files = {
    "corpus/a.txt": _SPACER,
    "corpus/b.txt": _SPACER,
    "corpus/c.txt": b"Fever in children is common. Paracetamol lowers a fever; give plenty of fluids.",
    "corpus/questions.jsonl": jsonl(
        {"id": "q1", "question": "How often is the spacer washed?", "doc_id": "a.txt", "answer": "once a month"},
        {"id": "q2", "question": "How does a spacer dry?", "doc_id": "a.txt", "answer": "let it dry in air"},
    ),
}
_HALF = (1 + 1 / math.log2(3)) / 2  # the judged twin at rank 1 or 2, each in half of the orders


def _ties_are_expected(m: dict[str, Any], page: str) -> None:
    for method in ("none", "fixed"):
        r = m["retrieval"]["bm25"][method]
        assert abs(r["ndcg@10"] - _HALF) < 1e-9, f"{method}: nDCG@10 {r['ndcg@10']}, tie-aware {_HALF}"
        assert r["ndcg@10_trec_eval"] == 1.0 and r["tie_sensitive"] == 2 and r["ties_at_cutoff"] == 0
    assert "tie-aware" in page and "Tied scores: on up to 2 of 2 questions" in page


def _reference_last(m: dict[str, Any], page: str) -> None:
    first, last = m["ranking"][0], m["ranking"][-1]
    assert last["method"] == "none" and last["reference"] is True and last["rank"] is None, last
    assert first["method"] == "fixed" and first["rank"] == 1 and first["vs_best"] == 0.0
    assert last["separable"] in (True, False) and last["vs_best_low"] is not None  # paired against the best
    assert "none (reference)" in page and "its top chunk is a whole document" in page


def _no_answers_are_null(m: dict[str, Any], page: str) -> None:
    assert all(r["answer@1"] is None and r["cut_answer_share"] is None for r in m["ranking"]), m["ranking"]


def _no_resamples_are_null(m: dict[str, Any], page: str) -> None:
    assert all(r["ci_low"] is None and r["ci_high"] is None and r["vs_best_low"] is None for r in m["ranking"]), m["ranking"]
    assert "<td>—</td>" in page


def _over_window(m: dict[str, Any], page: str) -> None:
    w = m["window"]
    assert w["max_seq_length"] == 256 and w["over"]["fixed"] >= 1 and w["over"]["none"] == 1, w
    assert any("longer than the encoder's window (minilm: 256 tokens)" in n for n in m["notes"]), m["notes"]
    assert "longer than the encoder's window (256 tokens)" in page


_BEIR: Files = {
    "corpus/corpus.jsonl": jsonl(
        {"_id": "d1", "title": "Aspirin", "text": "Aspirin reduces fever."},
        {"_id": "d2", "title": "Statins", "text": "Statins lower cholesterol."},
        {"_id": "d3", "title": "Sleep", "text": "Sleep aids memory."},
    ),
    "corpus/queries.jsonl": jsonl({"_id": "q1", "text": "aspirin fever"}, {"_id": "q2", "text": "what lowers cholesterol"}),
    "corpus/qrels/test.tsv": b"query-id\tcorpus-id\tscore\nq1\td1\t1\nq2\td2\t1\n",
}
_LONG = " ".join(f"Inhaled steroids are taken every day, step {i} of the plan, even when breathing is easy." for i in range(60))
REPORT_CASES: list[Case] = [
    case("report-ties-are-tie-aware", "report", _compare("--retrievers", "bm25", "--bootstrap", "50"), expect="ok", needs="pyserini", files=TWINS, check=compared(_ties_are_expected)),
    case("report-whole-documents-are-a-reference", "report", _compare("--retrievers", "bm25", "--bootstrap", "50"), expect="ok", needs="pyserini", files=TWINS, check=compared(_reference_last)),
    case("report-no-answers-are-null", "report", _compare("--retrievers", "bm25", "--bootstrap", "50"), expect="ok", needs="pyserini", files=_BEIR, check=compared(_no_answers_are_null)),
    case("report-no-resamples-are-null", "report", _compare("--retrievers", "bm25", "--bootstrap", "0"), expect="ok", needs="pyserini", files=TWINS, check=compared(_no_resamples_are_null)),
    case("report-chunks-over-the-encoder-window", "report", _compare("--retrievers", "dense", "--bootstrap", "50"), expect="ok", params={"retrieve.chunk.window": 400}, files={"corpus/steroids.txt": _LONG.encode(), "corpus/questions.jsonl": jsonl({"id": "q", "question": "How often are inhaled steroids taken?", "doc_id": "steroids.txt", "answer": "every day"})}, check=compared(_over_window)),
]  # fmt: skip

# ---- group "papers": the paper pipelines' stages (experiments/<paper>/dvc.yaml) on a mistaken
# paper params file or on inputs from another run
PAPER_FILE = {
    "sample": {"dataset": "scifact", "max_queries": None, "max_documents": None, "seed": 42, "ks": [1, 2], "bootstrap": 10},
    "settings": {"fixed": {"method": "fixed"}, "none": {"method": "none"}},
}


def paper_file(**changes: Any) -> bytes:
    """PAPER_FILE with dotted ``changes`` (``sample__ks=5``: sample.ks; DELETE removes the key)."""
    data = copy.deepcopy(PAPER_FILE)
    for key, value in changes.items():
        *parents, leaf = key.split("__")
        node = data
        for name in parents:
            node = node[name]
        if value is DELETE:
            del node[leaf]
        else:
            node[leaf] = value
    return yaml.safe_dump(data, sort_keys=False).encode()


def retrieval_data(d: Path) -> None:
    """data/: a converted retrieval folder, three abstracts and two judged test queries."""
    import pandas as pd

    from biochunk.retrieval import collection

    docs = pd.DataFrame({"doc_id": ["d1", "d2", "d3"], "text": [
        "Aspirin reduces fever. It also thins the blood.", "Statins lower cholesterol. They protect the heart.",
        "Sleep aids memory. Naps help too."]})  # fmt: skip
    queries = pd.DataFrame({"query_id": ["q1", "q2"], "text": ["aspirin fever", "what lowers cholesterol"], "split": "test"})
    qrels = {"q1": {"d1": 1}, "q2": {"d2": 1}}
    (d / "data").mkdir(exist_ok=True)
    collection.write(collection.Collection(docs, queries, qrels, {}, qrels), d / "data")


def chunk_inputs(ids: tuple[str, ...], hits_depth: int = 2) -> Callable[[Path], None]:
    """c.parquet (one chunk per abstract), vectors of the chunk ids ``ids`` (emb/), and the top
    ``hits_depth`` chunks of each query (hits.parquet), as the earlier stages write them."""

    def write(d: Path) -> None:
        import numpy as np
        import pandas as pd

        from biochunk import vectors
        from biochunk.io import CHUNK_HITS, CHUNKS, write_table

        retrieval_data(d)
        docs = pd.read_parquet(d / "data" / "corpus.parquet")
        chunks = pd.DataFrame({"doc_id": docs["doc_id"], "chunk_id": docs["doc_id"], "text": docs["text"], "start": 0,
                               "end": docs["text"].str.len(), "n_tokens": 8, "method": "none", "labels": [[]] * len(docs),
                               "metadata": "{}"})  # fmt: skip
        write_table(chunks, d / "c.parquet", CHUNKS)
        (d / "emb").mkdir()
        vecs = np.eye(len(ids), 384, dtype=np.float32)
        vectors.write([vectors.frame(list(ids), "chunk", vecs)], 384, d / "emb" / "vectors.parquet")
        rows = [(q, r, c, c, 1.0 / r) for q in ("q1", "q2") for r, c in enumerate(list(docs["doc_id"])[:hits_depth], 1)]
        write_table(pd.DataFrame(rows, columns=CHUNK_HITS.names), d / "hits.parquet", CHUNK_HITS)

    return write


SAMPLE = ("sample.py", ("--data", "{d}/data", "--paper", "{d}/paper.yaml", "--out", "{d}/sample"), ("sample",))
SAMPLE_DOCS = ("sample_documents.py", ("--data", "{d}/data", "--paper", "{d}/paper.yaml", "--out", "{d}/docs"), ("docs",))
CHUNK_CORPUS = lambda setting: (  # noqa: E731
    "chunk_corpus.py", ("--data", "{d}/data", "--paper", "{d}/paper.yaml", "--setting", setting, "--out", "{d}/c.parquet"),
    ("c.parquet",),
)  # fmt: skip
SEARCH = (
    "search.py",
    ("--data", "{d}/data", "--chunks", "{d}/c.parquet", "--embeddings", "{d}/emb", "--paper", "{d}/paper.yaml",
     "--out", "{d}/out.parquet"),
    ("out.parquet",),
)  # fmt: skip
EVALUATE = (
    "evaluate_retrieval.py",
    ("--data", "{d}/data", "--chunks", "{d}/c.parquet", "--hits", "{d}/hits.parquet", "--paper", "{d}/paper.yaml",
     "--scores", "{d}/s.parquet", "--sizes", "{d}/z.parquet", "--metrics", "{d}/m.json"),
    ("s.parquet", "z.parquet", "m.json"),
)  # fmt: skip
DATA = {"data/": retrieval_data}
PAPER_CASES: list[Case] = [
    case("paper-file-missing", "papers", SAMPLE, "paper.yaml: no such paper params file", files=DATA, params_arg=False),
    case("paper-sample-key-missing", "papers", SAMPLE, "sample.max_queries: missing", files={**DATA, "paper.yaml": paper_file(sample__max_queries=DELETE)}, params_arg=False),
    case("paper-sample-key-unknown", "papers", SAMPLE, "sample.max_querys: unknown key", files={**DATA, "paper.yaml": paper_file(sample__max_querys=3)}, params_arg=False),
    case("paper-ks-not-a-list", "papers", SAMPLE, "sample.ks: expected a list", files={**DATA, "paper.yaml": paper_file(sample__ks=5)}, params_arg=False),
    case("paper-max-documents-zero", "papers", SAMPLE, "sample.max_documents: expected a whole number >= 1 or null", files={**DATA, "paper.yaml": paper_file(sample__max_documents=0)}, params_arg=False),
    case("paper-unknown-section", "papers", SAMPLE, "setting: unknown section", files={**DATA, "paper.yaml": paper_file(setting={"x": 1})}, params_arg=False),
    case("paper-sample-and-samples", "papers", SAMPLE, "give one sample (sample:) or named ones (samples:), not both", files={**DATA, "paper.yaml": paper_file(samples={"a": copy.deepcopy(PAPER_FILE["sample"])})}, params_arg=False),
    case("paper-several-samples-unnamed", "papers", SAMPLE, "--sample:", files={**DATA, "paper.yaml": paper_file(sample=DELETE, samples={"a": copy.deepcopy(PAPER_FILE["sample"]), "b": copy.deepcopy(PAPER_FILE["sample"])})}, params_arg=False),
    case("paper-not-converted", "papers", SAMPLE, "no corpus.parquet; convert scifact first", files={"paper.yaml": paper_file()}, params_arg=False),
    # The stage's line names the registry's key (data.datasets); scripts/check_params.py, which
    # `make paper-<name>` runs first, names the paper file's sample.dataset.
    case("paper-unknown-dataset", "papers", SAMPLE, "unknown dataset 'pubmedqa'", files={**DATA, "paper.yaml": paper_file(sample__dataset="pubmedqa")}, params_arg=False),
    case("paper-draw-from-a-converted-folder", "papers", SAMPLE_DOCS, "no sample.json; give the sample stage's output folder", files={**DATA, "paper.yaml": paper_file()}, params_arg=False),
    case("paper-setting-unknown", "papers", CHUNK_CORPUS("bogus"), "--setting bogus: not in", files={**DATA, "paper.yaml": paper_file()}),
    case("paper-setting-no-method", "papers", CHUNK_CORPUS("fixed"), "settings.x: expected a mapping with a method", files={**DATA, "paper.yaml": paper_file(settings__x={"window": 5})}),
    case("paper-setting-bad-value", "papers", CHUNK_CORPUS("fixed"), "settings.fixed", files={**DATA, "paper.yaml": paper_file(settings__fixed={"method": "fixed", "window": 0})}),
    case("paper-setting-unknown-method", "papers", CHUNK_CORPUS("x"), "settings.x.method", files={**DATA, "paper.yaml": paper_file(settings__x={"method": "fixd"})}),
    case("paper-peer-unnamed", "papers", CHUNK_CORPUS("p"), "settings.p.peer: name the peer library's chunker", files={**DATA, "paper.yaml": paper_file(settings__p={"method": "peer"})}),
    case("paper-vectors-of-other-chunks", "papers", SEARCH, "its chunk ids are not those of --chunks", files={"paper.yaml": paper_file(), "c.parquet": chunk_inputs(("d1", "d2", "x"))}),
    case("paper-hits-too-shallow", "papers", EVALUATE, "holds the top 1 chunks, sample.ks needs 2; re-run search", files={"paper.yaml": paper_file(), "c.parquet": chunk_inputs(("d1", "d2", "d3"), hits_depth=1)}),
]  # fmt: skip

CASES += OUTPUT_CASES + CORPUS_CASES + FLAG_CASES + GUARD_CASES + REPORT_CASES + PAPER_CASES


# ---------------------------------------------------------------- running a case


def _set(data: dict, dotted: str, value: Any) -> None:
    *parents, leaf = dotted.split(".")
    node = data
    for p in parents:
        node = node.setdefault(p, {})
    if value is DELETE:
        node.pop(leaf, None)
    else:
        node[leaf] = value


def _fill(value: Any, d: Path) -> Any:
    if isinstance(value, str):
        return value.replace("{d}", str(d))
    if isinstance(value, list):
        return [_fill(v, d) for v in value]
    if isinstance(value, dict):
        return {k: _fill(v, d) for k, v in value.items()}
    return value


def prepare(c: Case, d: Path) -> list[str]:
    """Write the case's folder; returns the stage's argv."""
    d.mkdir(parents=True)
    base = yaml.safe_load((ROOT / "params.yaml").read_text())
    data = copy.deepcopy(base)
    for key, value in c.params.items():
        _set(data, key, value if value is DELETE else _fill(value, d))
    (d / "params.yaml").write_text(c.params_text if c.params_text is not None else yaml.safe_dump(data, sort_keys=False))
    if c.dvc_yaml:
        (d / "dvc.yaml").write_text((ROOT / "dvc.yaml").read_text())
    for rel, content in c.files.items():
        path = d / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        if callable(content):
            content(d)
        else:
            path.write_bytes(content)
    extra = ["--params", str(d / "params.yaml")] if c.params_arg else []
    return [str(ROOT / "stages" / c.stage), *(a.replace("{d}", str(d)) for a in c.args), *extra]


def run_case(c: Case, workdir: Path) -> Outcome:
    """Run one case in ``workdir/<id>`` in this process and score it."""
    d = workdir / c.id
    argv = prepare(c, d)
    err = io.StringIO()
    code: int | None
    cwd, old_argv = os.getcwd(), sys.argv
    root = logging.getLogger()
    saved_handlers = root.handlers[:]
    root.handlers.clear()  # cli.run's basicConfig then logs into this case's stderr
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    try:
        os.chdir(ROOT if c.cwd == "root" else d)  # stages run from the repository root, as under dvc
        sys.argv = argv
        with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()):
            try:
                runpy.run_path(argv[0], run_name="__main__")
                code = 0
            except SystemExit as e:
                code = e.code if isinstance(e.code, int) else (0 if e.code is None else 1)
            except BaseException:  # noqa: BLE001 - a traceback is what the corpus counts
                traceback.print_exc(file=err)
                code = None
    finally:
        os.chdir(cwd)
        sys.argv = old_argv
        root.handlers[:] = saved_handlers
    return score(c, d, code, err.getvalue())


def score(c: Case, d: Path, code: int | None, stderr: str) -> Outcome:
    errors = [line for line in stderr.splitlines() if line.startswith("error:")]
    if c.guard is not None:
        try:
            c.guard(d)
        except (AssertionError, OSError) as e:
            return Outcome(c, code, stderr, "destroyed", f"{type(e).__name__}: {e}")
    if code is None or "Traceback" in stderr:
        return Outcome(c, code, stderr, "traceback", stderr.strip().splitlines()[-1] if stderr.strip() else "")
    if c.expect == "ok":
        if code != 0:
            return Outcome(c, code, stderr, "wrong", errors[0] if errors else f"exit {code}")
        try:
            if c.check is not None:
                c.check(d)
        except (AssertionError, OSError, KeyError, ValueError) as e:
            return Outcome(c, code, stderr, "wrong", f"{type(e).__name__}: {e}")
        return Outcome(c, code, stderr, "handled")
    left = [o for o in c.outputs if (d / o).exists()] + [p.name for p in d.rglob(".*.tmp")]
    if left:
        return Outcome(c, code, stderr, "partial", f"left behind: {', '.join(left)}")
    if code == 0:
        return Outcome(c, code, stderr, "silent", "exit 0")
    needle = c.needle.replace("{d}", str(d))
    if code == 2 and len(errors) == 1 and needle in errors[0]:
        return Outcome(c, code, stderr, "clear", errors[0])
    return Outcome(c, code, stderr, "unclear", " | ".join(errors) or f"exit {code}")


COLUMNS = ("cases", "clear", "handled", "traceback", "partial", "silent", "unclear", "wrong", "destroyed")


def summary(outcomes: list[Outcome]) -> dict[str, int]:
    counts = {k: 0 for k in COLUMNS}
    counts["cases"] = len(outcomes)
    for o in outcomes:
        counts[o.kind] += 1
    return counts


def table(outcomes: list[Outcome]) -> str:
    groups = sorted({o.case.group for o in outcomes}, key=[c.group for c in CASES].index)
    head = "| group | " + " | ".join(COLUMNS) + " |\n|---|" + "---:|" * len(COLUMNS) + "\n"
    rows = []
    for g in [*groups, "all"]:
        s = summary([o for o in outcomes if g in ("all", o.case.group)])
        rows.append(f"| {g} | " + " | ".join(str(s[k]) for k in COLUMNS) + " |")
    return head + "\n".join(rows)


def main() -> None:
    import tempfile

    sys.path.insert(0, str(ROOT))
    with tempfile.TemporaryDirectory() as tmp:
        outcomes = [run_case(c, Path(tmp)) for c in CASES]
    print(table(outcomes))
    for o in outcomes:
        if o.kind not in ("clear", "handled"):
            print(f"{o.kind:9} {o.case.id}: {o.detail}")


if __name__ == "__main__":
    main()
