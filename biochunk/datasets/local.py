"""The user's own corpus: a local path in place of a registry entry (no URL, no checksum to pin).

Three layouts, told apart by what the path holds (or named with ``kind``):

- ``beir``: a folder with ``corpus.jsonl``, ``queries.jsonl`` and ``qrels/<split>.tsv``
  -> CORPUS, QUERIES, QRELS (the ``beir`` converter, as for SciFact);
- ``squad``: a SQuAD-format JSON file of contexts with questions and answer spans
  -> DOCUMENTS, ANSWERS (the ``squad`` converter, as for COVID-QA);
- ``folder``: a folder of ``.txt`` / ``.md`` / ``.jsonl`` / ``.pdf`` / ``.html`` documents, with
  an optional ``questions.jsonl`` -> DOCUMENTS [+ ANSWERS] (``formats.folder``).

Each becomes a ``DatasetSpec`` built here, so the conversion is the registry datasets' own
``convert``: the same Parquet schemas, the same report of dropped rows, written atomically.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from biochunk.datasets.convert import convert
from biochunk.datasets.formats.folder import DOCUMENT_SUFFIXES, QUESTIONS_FILE
from biochunk.datasets.registry import DATASET_NAME, DatasetSpec
from biochunk.errors import UserError

KINDS = ("folder", "beir", "squad")
BEIR_FILES = ("corpus.jsonl", "queries.jsonl")
FORMAT = {"folder": "folder", "beir": "beir", "squad": "squad"}
TASK = {"folder": "documents", "beir": "retrieval", "squad": "documents"}


def detect_kind(path: Path) -> str:
    """``beir``, ``squad`` or ``folder``, from what ``path`` holds."""
    if path.is_file():
        if path.suffix.lower() == ".json":
            return "squad"
        raise UserError(f"{path}: a local corpus is a folder (documents, or a BEIR layout) or a SQuAD-format .json file")
    if all((path / f).is_file() for f in BEIR_FILES):
        return "beir"
    return "folder"


def dataset_name(path: Path) -> str:
    """A registry-style name from the folder or file name (it appears in file names and logs)."""
    name = "".join(c if DATASET_NAME.fullmatch(c) else "-" for c in path.stem.lower()).strip("-")
    return name or "corpus"


def local_spec(path: str | Path, kind: str | None = None, name: str | None = None) -> tuple[DatasetSpec, Path]:
    """The spec the converters read for the corpus at ``path``, and the folder its files are relative to."""
    path = Path(path)
    if not path.exists():
        raise UserError(f"{path}: no such file or folder (name a folder of documents, a BEIR folder or a SQuAD .json file)")
    kind = kind or detect_kind(path)
    if kind not in KINDS:
        raise UserError(f"corpus kind {kind!r} is not one of {', '.join(KINDS)}")
    name = name or dataset_name(path)
    if kind == "squad":
        if not path.is_file():
            raise UserError(f"{path}: kind squad needs the SQuAD-format .json file itself, not a folder")
        raw, splits = path.parent, {"all": [path.name]}
    elif kind == "beir":
        missing = [f for f in BEIR_FILES if not (path / f).is_file()]
        if missing:
            raise UserError(f"{path}: a BEIR folder needs {', '.join(BEIR_FILES)} (missing: {', '.join(missing)})")
        qrels = sorted((path / "qrels").glob("*.tsv")) if (path / "qrels").is_dir() else []
        if not qrels:
            raise UserError(f"{path}: a BEIR folder needs judgements in qrels/<split>.tsv (e.g. qrels/test.tsv); none found")
        raw, splits = (
            path,
            {"corpus": [BEIR_FILES[0]], "queries": [BEIR_FILES[1]], **{q.stem: [f"qrels/{q.name}"] for q in qrels}},
        )
    else:
        if not path.is_dir():
            raise UserError(f"{path}: kind folder needs a folder of documents")
        raw, splits = path, _folder_splits(path)
    spec = DatasetSpec(name=name, task=TASK[kind], format=FORMAT[kind], mirror_dir=name, files=(), splits=splits, config=None)
    return spec, raw


def _folder_splits(path: Path) -> dict[str, list[str]]:
    files = sorted(
        p.relative_to(path).as_posix()
        for p in path.rglob("*")
        if p.is_file()
        and p.suffix.lower() in DOCUMENT_SUFFIXES
        and p.name != QUESTIONS_FILE
        and not any(part.startswith(".") for part in p.relative_to(path).parts)
    )
    if not files:
        raise UserError(
            f"{path}: no documents found ({', '.join(DOCUMENT_SUFFIXES)}); put documents there, "
            "or name a BEIR folder (corpus.jsonl, queries.jsonl, qrels/) or a SQuAD .json file"
        )
    splits = {"documents": files}
    if (path / QUESTIONS_FILE).is_file():
        splits["questions"] = [QUESTIONS_FILE]
    return splits


def convert_local(
    path: str | Path, out: Path, kind: str | None = None, name: str | None = None, skip_malformed: bool = False
) -> dict[str, Any]:
    """Convert the corpus at ``path`` into the folder ``out`` (Parquet tables + report.json)."""
    spec, raw = local_spec(path, kind, name)
    report = convert(spec, raw, out, skip_malformed)
    return {"dataset": spec.name, "kind": kind or detect_kind(Path(path)), "task": spec.task, **report}
