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

Symbolic links: nothing outside the corpus is ever read. A link inside the corpus that
resolves outside it (or nowhere) stops the conversion with one line naming it; a link that
resolves inside is not followed (what it points to is read once, under its own path) and is
counted. The path the user names may itself be a link. Only the top folder's
``questions.jsonl`` is read: one in a sub-folder is stated in a note (and a warning), as is a
folder without any.
"""

from __future__ import annotations

import json
import logging
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from biochunk.datasets.convert import Report, convert
from biochunk.datasets.formats.folder import DOCUMENT_SUFFIXES, QUESTIONS_FILE
from biochunk.datasets.registry import DATASET_NAME, DatasetSpec
from biochunk.errors import UserError

log = logging.getLogger(__name__)

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
    # abspath: `.` and `..` name the folder they stand for (as the user sees it, links unresolved).
    stem = Path(os.path.abspath(path)).stem
    name = "".join(c if DATASET_NAME.fullmatch(c) else "-" for c in stem.lower()).strip("-")
    return name or "corpus"


@dataclass
class _Walk:
    """What a walk of the corpus folder found besides the documents, for the report."""

    links_inside: list[str] = field(default_factory=list)  # links not followed (their targets are read)
    nested_questions: list[str] = field(default_factory=list)  # questions.jsonl in sub-folders, not read
    warnings: list[str] = field(default_factory=list)  # something the user gave was not read
    infos: list[str] = field(default_factory=list)  # a fact about the corpus (no questions file)


def local_spec(path: str | Path, kind: str | None = None, name: str | None = None) -> tuple[DatasetSpec, Path]:
    """The spec the converters read for the corpus at ``path``, and the folder its files are relative to."""
    spec, raw, _ = _local_spec(Path(path), kind, name)
    return spec, raw


def _local_spec(path: Path, kind: str | None, name: str | None) -> tuple[DatasetSpec, Path, _Walk]:
    if not path.exists():
        raise UserError(f"{path}: no such file or folder (name a folder of documents, a BEIR folder or a SQuAD .json file)")
    kind = kind or detect_kind(path)
    if kind not in KINDS:
        raise UserError(f"corpus kind {kind!r} is not one of {', '.join(KINDS)}")
    name = name or dataset_name(path)
    walk = _Walk()
    if kind == "squad":
        if not path.is_file():
            raise UserError(f"{path}: kind squad needs the SQuAD-format .json file itself, not a folder")
        raw, splits = path.parent, {"all": [path.name]}
    elif kind == "beir":
        missing = [f for f in BEIR_FILES if not (path / f).is_file()]
        if missing:
            raise UserError(f"{path}: a BEIR folder needs {', '.join(BEIR_FILES)} (missing: {', '.join(missing)})")
        _refuse_outside_links(path, [path / f for f in BEIR_FILES] + [path / "qrels"])
        qrels = sorted((path / "qrels").glob("*.tsv")) if (path / "qrels").is_dir() else []
        _refuse_outside_links(path, qrels)
        if not qrels:
            raise UserError(f"{path}: a BEIR folder needs judgements in qrels/<split>.tsv (e.g. qrels/test.tsv); none found")
        raw, splits = (
            path,
            {"corpus": [BEIR_FILES[0]], "queries": [BEIR_FILES[1]], **{q.stem: [f"qrels/{q.name}"] for q in qrels}},
        )
    else:
        if not path.is_dir():
            raise UserError(f"{path}: kind folder needs a folder of documents")
        raw, splits = path, _folder_splits(path, walk)
    spec = DatasetSpec(name=name, task=TASK[kind], format=FORMAT[kind], mirror_dir=name, files=(), splits=splits, config=None)
    return spec, raw, walk


def _folder_splits(path: Path, walk: _Walk) -> dict[str, list[str]]:
    files = _documents(path, walk)
    if not files:
        raise UserError(
            f"{path}: no documents found ({', '.join(DOCUMENT_SUFFIXES)}); put documents there, "
            "or name a BEIR folder (corpus.jsonl, queries.jsonl, qrels/) or a SQuAD .json file"
        )
    splits = {"documents": files}
    questions = path / QUESTIONS_FILE
    if questions.is_symlink():
        _refuse_outside_links(path, [questions])  # one inside is read: it is the questions file named
    if questions.is_file():
        splits["questions"] = [QUESTIONS_FILE]
    for q in walk.nested_questions:
        walk.warnings.append(
            f"{path / q}: not read, only the top folder's {QUESTIONS_FILE} is; move its questions there "
            "(doc_id: the document's path inside the top folder)"
        )
    if not questions.is_file():
        walk.infos.append(f"{path}: no {QUESTIONS_FILE}, so no retrieval scores: the methods are compared by size only")
    return splits


def _documents(root: Path, walk: _Walk) -> list[str]:
    """Paths (relative, sorted) of the document files under ``root``, walked without following links.

    Hidden files and folders are skipped, as is every ``questions.jsonl``. Links are checked
    here, before any file is read: one out of the folder stops the conversion.
    """
    files, links = [], []
    stack = [root]
    while stack:
        folder = stack.pop()
        try:
            with os.scandir(folder) as it:
                entries = list(it)
        except OSError as e:
            why = f"cannot list the folder ({e.strerror}); fix its permissions or move it out of the corpus"
            raise UserError(f"{folder}: {why}") from None
        for entry in entries:
            if entry.name.startswith("."):
                continue
            rel = Path(entry.path).relative_to(root).as_posix()
            if entry.is_symlink():
                links.append(Path(entry.path))
            elif entry.is_dir(follow_symlinks=False):
                stack.append(Path(entry.path))
            elif entry.name == QUESTIONS_FILE:
                if folder != root:
                    walk.nested_questions.append(rel)
            elif entry.is_file(follow_symlinks=False) and Path(entry.name).suffix.lower() in DOCUMENT_SUFFIXES:
                files.append(rel)
    # The links that would be read: documents and folders (a link named notes.docx never is);
    # the top questions.jsonl is the caller's.
    links = [
        p
        for p in links
        if (p.suffix.lower() in DOCUMENT_SUFFIXES or p.is_dir()) and not (p.parent == root and p.name == QUESTIONS_FILE)
    ]
    _refuse_outside_links(root, links)
    walk.links_inside = sorted(p.relative_to(root).as_posix() for p in links)
    walk.nested_questions.sort()
    return sorted(files)


def _refuse_outside_links(root: Path, paths: list[Path]) -> None:
    """One error line naming the links among ``paths`` that lead out of ``root`` (or nowhere)."""
    top = root.resolve()
    bad = []
    for p in paths:
        if not p.is_symlink():
            continue
        try:
            target = p.resolve()  # the whole chain, so a link to a link out is caught too
        except (OSError, RuntimeError):  # a loop of links (RuntimeError before Python 3.13)
            bad.append(f"{p} -> {os.readlink(p)} (a loop of links)")
            continue
        if not target.exists():
            bad.append(f"{p} -> {os.readlink(p)} (missing)")
        elif target != top and top not in target.parents:
            bad.append(f"{p} -> {target}")
    if bad:
        more = f" and {len(bad) - 3} more" if len(bad) > 3 else ""
        raise UserError(
            f"{'; '.join(bad[:3])}{more}: symbolic link out of the corpus folder (or to nothing), not read; "
            "copy what it points to into the folder, or remove the link"
        )


def convert_local(
    path: str | Path, out: Path, kind: str | None = None, name: str | None = None, skip_malformed: bool = False
) -> dict[str, Any]:
    """Convert the corpus at ``path`` into the folder ``out`` (Parquet tables + report.json).

    The returned report (and report.json) carries ``notes`` where something was not read or
    is missing: the caller shows them to the user.
    """
    spec, raw, walk = _local_spec(Path(path), kind, name)
    kind = kind or detect_kind(Path(path))
    report = _LocalReport(kind=kind)
    links = walk.links_inside
    if links:
        report.drop("documents", "symbolic link inside the corpus (not followed: its target is read as itself)", len(links))
        shown = ", ".join(links[:3]) + (f" and {len(links) - 3} more" if len(links) > 3 else "")
        what = f"{len(links)} symbolic links inside the corpus not followed ({shown})"
        walk.warnings.append(f"{what}: their targets are read as themselves")
    for note in walk.warnings:
        log.warning("%s", note)
    for note in walk.infos:
        log.info("%s", note)
    # Facts (no questions file) are logged only: the comparison states what they imply itself.
    report.notes.extend(walk.warnings)
    info = convert(spec, raw, out, skip_malformed, report)
    return {"dataset": spec.name, "task": spec.task, **info}


def converted(data: Path, flag: str = "--data") -> dict[str, Any]:
    """The report.json of a folder that ``convert_local`` wrote (dataset, kind, task, notes), or
    one line naming ``flag`` and the fix: the stages that read a converted corpus (compare and
    compare_reranker) check it before any work."""
    fix = f"name the folder stages/convert_local.py wrote (`python stages/convert_local.py --corpus <path> --out {data}`)"
    try:
        report: Any = json.loads((data / "report.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        raise UserError(f"{flag} {str(data)!r}: no readable report.json there; {fix}") from None
    if not isinstance(report, dict) or not {"dataset", "kind", "task"} <= report.keys() or report["kind"] not in KINDS:
        raise UserError(f"{flag} {str(data)!r}: report.json is not a converted local corpus's (no dataset, kind and task); {fix}")
    return report


@dataclass
class _LocalReport(Report):
    """A local corpus's report also names its layout: the compare stage reads the converted
    folder (``--data``), and reports the layout as ``--corpus`` does."""

    kind: str = ""

    def as_dict(self) -> dict[str, Any]:
        return {"kind": self.kind, **super().as_dict()}
