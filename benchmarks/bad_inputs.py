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


@dataclass
class Outcome:
    case: Case
    code: int | None  # None: an exception escaped
    stderr: str
    kind: str  # clear | handled | traceback | partial | silent | unclear | wrong
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
        "--cache",
        "{d}/cache",
    ),
    ("out", "m.json"),
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
    ("--dataset", "ade", "--data", "{d}/data", "--out", "{d}/out", "--metrics", "{d}/m.json", "--plots", "{d}/plots"),
    ("out", "m.json", "plots"),
)
QA_CONTEXT = ("qa_context.py", ("--dataset", "bioasq", "--data", "{d}/data", "--out", "{d}/qa"), ("qa",))
CHUNK_DOCS = (
    "chunk_docs.py",
    ("--dataset", "covidqa", "--data", "{d}/data", "--out", "{d}/c.parquet", "--metrics", "{d}/m.json", "--plots", "{d}/plots"),
    ("c.parquet", "m.json", "plots"),
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
    return [str(ROOT / "stages" / c.stage), *(a.replace("{d}", str(d)) for a in c.args), "--params", str(d / "params.yaml")]


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
        os.chdir(ROOT)  # stages run from the repository root, as under dvc
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


COLUMNS = ("cases", "clear", "handled", "traceback", "partial", "silent", "unclear", "wrong")


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
