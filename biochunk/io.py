"""Parquet schemas, atomic writes and stage reports: the typed doors between stages."""

from __future__ import annotations

import json
import math
import os
import re
import shutil
import subprocess
import tempfile
import time
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Callable, Iterator, Mapping

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq

from biochunk.errors import UserError

# One triple per row; sentences with several triples share their `id`.
TRIPLES = pa.schema(
    [
        ("id", pa.string()),
        ("split", pa.string()),
        ("sentence", pa.string()),
        ("head", pa.string()),
        ("relation", pa.string()),
        ("tail", pa.string()),
    ]
)

# The chunk memory: `start`/`end` are character offsets into the source document,
# so `doc_text[start:end] == text` always holds. `labels` carries the relations of the
# source sentence for triple datasets (empty for plain document corpora).
CHUNKS = pa.schema(
    [
        ("doc_id", pa.string()),
        ("chunk_id", pa.string()),
        ("text", pa.string()),
        ("start", pa.int64()),
        ("end", pa.int64()),
        ("n_tokens", pa.int64()),
        ("method", pa.string()),
        ("labels", pa.list_(pa.string())),
        ("metadata", pa.string()),  # JSON object: method-specific extras (e.g. header)
    ]
)


def vectors_schema(dim: int) -> pa.Schema:
    """Embeddings keyed by id: `kind` is chunk, input or relation."""
    return pa.schema(
        [
            ("id", pa.string()),
            ("kind", pa.string()),
            ("vector", pa.list_(pa.float32(), dim)),
        ]
    )


# Ranked candidates per input; `stage` says who ranked them (dense, scorer, ...).
RANKINGS = pa.schema(
    [
        ("split", pa.string()),
        ("input_id", pa.string()),
        ("rank", pa.int32()),
        ("chunk_id", pa.string()),
        ("score", pa.float32()),
        ("ranker", pa.string()),
    ]
)

PREDICTIONS = pa.schema(
    [
        ("id", pa.string()),
        ("sentence", pa.string()),
        ("prompt", pa.string()),
        ("raw_output", pa.string()),  # kept verbatim, so parsing can be audited
        ("triples", pa.list_(pa.list_(pa.string(), 3))),  # parsed [head, relation, tail] lists
        ("parsed", pa.bool_()),
    ]
)


# Temporary siblings are `.<name>.<pid>.<8 random chars>.tmp`: the pattern names them exactly
# and the pid says whether their writer still runs, so cleaning up after a killed run never
# touches another output's files nor a live run's.
TMP_SUFFIX = ".tmp"
# Fault injection for the kill-safety tests, once the temporary output is complete and before
# it is renamed: `kill-before-rename:<path suffix>` ends the process (as SIGKILL would, exit
# 137); `sleep-before-rename:<path suffix>` waits a minute (a window to send a signal in).
FAULT_ENV = "BIOCHUNK_FAULT"
# Written into the directory outputs of a command that names itself (``atomic_path(owner=)``):
# a folder holding it, with the same command inside, is one this command may replace.
MARKER = ".biochunk-output"
# The checkout itself: never an output, nor anything above it.
REPO_ROOT = Path(__file__).resolve().parents[1]


def _pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # someone else's live process
        return True
    return True


def _leftover(path: Path, pid: str | None) -> bool:
    """Whether ``path`` (named by one of our patterns) is a dead run's: ours, and its pid gone."""
    try:
        if path.is_symlink() or path.lstat().st_uid != os.getuid():
            return False
    except OSError:
        return False
    # Names without a pid come from versions before the pid tag: no run can still own them.
    return pid is None or (int(pid) != os.getpid() and not _pid_alive(int(pid)))


def _stale_temps(final: Path) -> list[Path]:
    pattern = re.compile(re.escape(f".{final.name}.") + r"(?:(\d+)\.)?[a-z0-9_]{8}" + re.escape(TMP_SUFFIX))
    return [p for p in final.parent.iterdir() if (m := pattern.fullmatch(p.name)) and _leftover(p, m.group(1))]


def _fault(final: Path) -> None:
    spec = os.environ.get(FAULT_ENV, "")
    action, _, suffix = spec.partition(":")
    if suffix and final.as_posix().endswith(suffix):
        if action == "kill-before-rename":
            os._exit(137)
        if action == "sleep-before-rename":
            time.sleep(60)


def _holds_tracked_files(folder: Path) -> bool:
    """Whether git tracks a file inside ``folder`` (False where git or a repository is absent)."""
    try:
        r = subprocess.run(
            ["git", "-C", str(folder), "ls-files", "--", "."], capture_output=True, text=True, timeout=30, check=False
        )
    except (OSError, subprocess.SubprocessError):
        return False
    return r.returncode == 0 and bool(r.stdout.strip())


def check_output(
    path: str | os.PathLike[str],
    flag: str | None = None,
    *,
    owner: str | None = None,
    directory: bool | None = None,
    spare: Mapping[str, str | os.PathLike[str]] | None = None,
) -> Path:
    """``path`` as an absolute path, or a ``UserError`` when writing it could destroy what a run did not create.

    Refused: an empty path, the working directory or a folder above it, the checkout or a
    git repository (or a folder holding one), a path under a file, a file over a folder
    (``directory=False``) or a folder over a file (``directory=True``), and an existing
    non-empty folder that this command did not write: with ``owner``, one without this
    command's ``MARKER``; without, one holding another command's marker or files under git.
    ``spare`` (e.g. ``{"the corpus": path}``): inputs the output must neither be, lie in, nor
    hold. ``flag`` (e.g. ``--out``) names the path in the error line. Called by ``atomic_path``
    before and after the work; a command calls it first to fail before any work.
    """
    name = f"{flag} {os.fspath(path)!r}" if flag else f"output {os.fspath(path)!r}"
    if not os.fspath(path).strip():
        raise UserError(f"{name}: an empty path names the working directory; name a new file or folder")
    final = Path(os.path.abspath(path))
    real = final.resolve()
    cwd = Path.cwd().resolve()
    if real == cwd or real in cwd.parents:
        raise UserError(f"{name} is the working directory or a folder above it; name a new folder inside it (e.g. build/x)")
    if real == REPO_ROOT or real in REPO_ROOT.parents:
        raise UserError(f"{name} is the repository {REPO_ROOT} or a folder above it; name a new folder inside it (e.g. build/x)")
    if ".git" in real.parts:
        raise UserError(f"{name} is inside a .git folder; name a path outside it")
    for what, other in (spare or {}).items():
        o = Path(other).resolve()
        if real == o or o in real.parents or real in o.parents:
            raise UserError(f"{name} overlaps {what} {os.fspath(other)!r}; name a path outside it")
    for above in real.parents:
        if above.exists():
            if not above.is_dir():
                raise UserError(f"{name}: {above} is a file, not a folder; name a path in a folder")
            break
    if not real.exists():
        return final
    if not real.is_dir() and not real.is_file():
        # A device, pipe or socket (/dev/null, say): a rename onto it would replace it, as root
        # the system's own /dev/null, with a plain file.
        raise UserError(f"{name} is a device, pipe or socket, not a file; name a new file or folder")
    if real.is_dir():
        if directory is False:
            raise UserError(f"{name} is an existing folder; name a file (a path that is not a folder)")
        if (real / ".git").exists():
            raise UserError(f"{name} is a git repository; name a new folder")
        if any(real.iterdir()):
            marker = real / MARKER
            written_by = marker.read_text(encoding="utf-8", errors="replace").strip() if marker.is_file() else None
            if owner is not None and written_by != owner:
                raise UserError(
                    f"{name} is an existing folder that {owner} did not write (no {MARKER} marker naming it); "
                    "name a new folder, or remove this one first"
                )
            if owner is None and (written_by is not None or _holds_tracked_files(real)):
                what = f"{written_by} wrote it" if written_by is not None else "it holds files under git"
                raise UserError(
                    f"{name} is an existing folder this command did not write ({what}); name a new folder, or remove it first"
                )
    elif directory is True:
        raise UserError(f"{name} is an existing file; name a folder")
    return final


@contextmanager
def atomic_path(path: str | os.PathLike[str], owner: str | None = None) -> Iterator[Path]:
    """Yield a temporary sibling of `path`; rename it onto `path` only on success.

    A stage killed halfway leaves the old output (or nothing), never a partial file; the
    temporary sibling it leaves (a SIGKILL runs no cleanup) is removed by the next write of
    the same output. Works for files and directories alike. ``check_output`` refuses paths
    whose replacement could destroy what no run of this command wrote, before and again after
    the work (the output's kind is known then); ``owner`` (the command's name) is written into
    a directory output as ``MARKER``, so the next run of the same command may replace it. The
    old output is moved into the temporary folder before the new one takes its place: the
    temporary folder is the only thing ever removed.
    """
    final = check_output(path, owner=owner)
    final.parent.mkdir(parents=True, exist_ok=True)
    for stale in _stale_temps(final):
        shutil.rmtree(stale, ignore_errors=True)
    work = Path(tempfile.mkdtemp(prefix=f".{final.name}.{os.getpid()}.", suffix=TMP_SUFFIX, dir=final.parent))
    tmp = work / final.name
    try:
        yield tmp
        if owner is not None and tmp.is_dir():
            (tmp / MARKER).write_text(owner + "\n", encoding="utf-8")
        check_output(final, owner=owner, directory=tmp.is_dir())
        _fault(final)
        if final.is_symlink() or final.is_dir():
            # Set aside (a link itself, never its target), removed with the temporary folder.
            os.replace(final, work / f"{final.name}.old")
        os.replace(tmp, final)
    finally:
        shutil.rmtree(work, ignore_errors=True)


def new_scratch_dir(prefix: str) -> Path:
    """A fresh folder ``<prefix><pid>-<random>`` in the temporary directory (the caller removes it).

    A run killed with SIGKILL (or a crash of the interpreter) cannot remove its scratch
    folder: first, the folders of the same ``prefix`` whose process is gone are removed, so
    the next run leaves ``$TMPDIR`` clean.
    """
    base = Path(tempfile.gettempdir())
    pattern = re.compile(re.escape(prefix) + r"(\d+)-[a-z0-9_]{8}")
    for p in base.iterdir():
        if (m := pattern.fullmatch(p.name)) and _leftover(p, m.group(1)):
            shutil.rmtree(p, ignore_errors=True)
    return Path(tempfile.mkdtemp(prefix=f"{prefix}{os.getpid()}-", dir=base))


@contextmanager
def scratch_dir(prefix: str) -> Iterator[Path]:
    """``new_scratch_dir(prefix)``, removed on exit (an exception and SIGTERM, through
    ``cli.run``, included)."""
    folder = new_scratch_dir(prefix)
    try:
        yield folder
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def write_table(df: pd.DataFrame, path: str | os.PathLike[str], schema: pa.Schema) -> None:
    """Write `df` as Parquet with exactly `schema` (column order and types), atomically."""
    missing = [name for name in schema.names if name not in df.columns]
    if missing:
        raise ValueError(f"{path}: dataframe lacks columns {missing} of the schema")
    table = pa.Table.from_pandas(df[schema.names], schema=schema, preserve_index=False)
    with atomic_path(path) as tmp:
        pq.write_table(table, tmp)


@contextmanager
def table_writer(path: str | os.PathLike[str], schema: pa.Schema) -> Iterator[Callable[[pa.Table], None]]:
    """Write Parquet one row group per call, atomically: ``with table_writer(p, S) as write: write(t)``.

    For outputs streamed partition by partition: memory holds one partition, not the file.
    Each table passed in becomes its own row group(s), so the file's bytes follow the
    partitions; a single table gives exactly the bytes ``write_table`` would. With nothing
    written, the file still holds the (empty) schema.
    """
    with atomic_path(path) as tmp:
        writer: pq.ParquetWriter | None = None

        def write(table: pa.Table) -> None:
            nonlocal writer
            if table.schema.names != schema.names:
                raise ValueError(f"{path}: table columns {table.schema.names} differ from the schema's {schema.names}")
            if writer is None:
                # The first table's schema (its pandas metadata included) is the file's, as in write_table.
                writer = pq.ParquetWriter(tmp, table.schema)
            writer.write_table(table)

        try:
            yield write
            if writer is None:
                writer = pq.ParquetWriter(tmp, schema)
        finally:
            if writer is not None:
                writer.close()


def arrow_table(df: pd.DataFrame, schema: pa.Schema) -> pa.Table:
    """``df`` as an Arrow table with exactly ``schema`` (what ``write_table`` writes)."""
    missing = [name for name in schema.names if name not in df.columns]
    if missing:
        raise ValueError(f"dataframe lacks columns {missing} of the schema")
    return pa.Table.from_pandas(df[schema.names], schema=schema, preserve_index=False)


def iter_table(
    path: str | os.PathLike[str], rows: int | None, columns: list[str] | None = None, schema: pa.Schema | None = None
) -> Iterator[pd.DataFrame]:
    """A Parquet file in frames of ``rows`` rows, read batch by batch (None: the whole file at once)."""
    if rows is None:
        df = read_table(path, schema)
        yield df[columns] if columns is not None else df
        return
    pf = _parquet_file(path, schema)
    for batch in pf.iter_batches(batch_size=rows, columns=columns):
        yield batch.to_pandas()


def count_rows(path: str | os.PathLike[str], schema: pa.Schema | None = None) -> int:
    """Rows of a Parquet file, from its footer (nothing else is read)."""
    return _parquet_file(path, schema).metadata.num_rows


def _parquet_file(path: str | os.PathLike[str], schema: pa.Schema | None) -> pq.ParquetFile:
    p = Path(path)
    if not p.exists():
        raise UserError(f"input file not found: {p} (run the stage that produces it, e.g. `dvc repro`)")
    try:
        pf = pq.ParquetFile(p)
    except (pa.ArrowInvalid, OSError) as e:
        raise UserError(f"{p}: not a readable Parquet file ({str(e).splitlines()[0]}); re-run the stage that produces it") from None
    if schema is not None:
        missing = [n for n in schema.names if n not in pf.schema_arrow.names]
        if missing:
            raise UserError(f"{p}: columns {missing} are missing; the file predates this schema, re-run its stage")
    return pf


def read_table(path: str | os.PathLike[str], schema: pa.Schema | None = None) -> pd.DataFrame:
    """Read a Parquet file, failing with the path and the fix when it is missing."""
    p = Path(path)
    if not p.exists():
        raise UserError(f"input file not found: {p} (run the stage that produces it, e.g. `dvc repro`)")
    try:
        table = pq.read_table(p)
    except (pa.ArrowInvalid, OSError) as e:
        raise UserError(f"{p}: not a readable Parquet file ({str(e).splitlines()[0]}); re-run the stage that produces it") from None
    if schema is not None:
        missing = [n for n in schema.names if n not in table.schema.names]
        if missing:
            raise UserError(f"{p}: columns {missing} are missing; the file predates this schema, re-run its stage")
    return table.to_pandas()


def write_json(obj: Any, path: str | os.PathLike[str], owner: str | None = None) -> None:
    """Strict JSON (RFC 8259), atomically: NaN and infinities (an undefined mean, an interval
    without resamples) become null, since bare ``NaN`` breaks every parser but Python's."""
    text = json.dumps(_finite(obj), indent=2, sort_keys=True, default=_json_default, allow_nan=False)
    with atomic_path(path, owner) as tmp:
        tmp.write_text(text + "\n")


def read_json(path: str | os.PathLike[str]) -> Any:
    p = Path(path)
    if not p.exists():
        raise UserError(f"input file not found: {p} (run the stage that produces it, e.g. `dvc repro`)")
    try:
        return json.loads(p.read_text(encoding="utf-8"))
    except ValueError as e:  # JSONDecodeError and UnicodeDecodeError
        raise UserError(f"{p}: not valid JSON ({str(e).splitlines()[0]}); re-run the stage that produces it") from None


def _finite(o: Any) -> Any:
    """``o`` with every non-finite float (numpy's too) replaced by None, containers walked."""
    if isinstance(o, dict):
        return {k: _finite(v) for k, v in o.items()}
    if isinstance(o, (list, tuple)):
        return [_finite(v) for v in o]
    if isinstance(o, (np.ndarray, np.generic)):
        return _finite(o.tolist())
    if isinstance(o, float) and not math.isfinite(o):
        return None
    return o


def _json_default(o: Any) -> Any:
    # Scalars of other array libraries (torch) appear in metrics; JSON wants plain numbers.
    if hasattr(o, "item"):
        return _finite(o.item())
    raise TypeError(f"not JSON serialisable: {type(o).__name__}")


# --- schemas of the real benchmarks (issue 3) ---
# The tables each converter under biochunk/datasets/formats/ writes; docs/schemas.md says
# which dataset produces which.

# Sentence classification (ADE): one row per sentence.
CLASSIFICATION = pa.schema(
    [
        ("id", pa.string()),
        ("split", pa.string()),
        ("text", pa.string()),
        ("label", pa.int8()),  # 1 = the sentence reports an adverse drug event, 0 = it does not
    ]
)

# Retrieval (BEIR layout): documents, queries, and relevance judgements per split.
CORPUS = pa.schema([("doc_id", pa.string()), ("title", pa.string()), ("text", pa.string())])
QUERIES = pa.schema([("query_id", pa.string()), ("text", pa.string())])
QRELS = pa.schema(
    [
        ("query_id", pa.string()),
        ("doc_id", pa.string()),
        ("relevance", pa.int32()),
        ("split", pa.string()),
    ]
)

# Biomedical QA (BioASQ Task B): `split` is the test batch (e.g. 7B1). `exact_answer` is
# flattened: ["yes"]/["no"] for yesno, the answer strings (synonyms included) for
# factoid/list, [] for summary questions.
QA_QUESTIONS = pa.schema(
    [
        ("id", pa.string()),
        ("split", pa.string()),
        ("type", pa.string()),  # yesno, factoid, list or summary
        ("body", pa.string()),
        ("ideal_answer", pa.list_(pa.string())),
        ("exact_answer", pa.list_(pa.string())),
        ("documents", pa.list_(pa.string())),  # PubMed URLs
    ]
)
# Gold snippets of a question: the passage text with its place in the PubMed record.
QA_SNIPPETS = pa.schema(
    [
        ("question_id", pa.string()),
        ("snippet_id", pa.string()),
        ("text", pa.string()),
        ("document", pa.string()),
        ("begin_section", pa.string()),  # "title" or "abstract"
        ("end_section", pa.string()),
        ("offset_begin", pa.int64()),
        ("offset_end", pa.int64()),
    ]
)

# Long documents: `text[start:end]` is the section (heading included) or paragraph.
# Sections may nest (a subsection's span lies inside its parent's); they are listed in
# document order.
DOCUMENTS = pa.schema(
    [
        ("doc_id", pa.string()),
        ("title", pa.string()),
        ("text", pa.string()),
        (
            "sections",
            pa.list_(pa.struct([("title", pa.string()), ("start", pa.int64()), ("end", pa.int64())])),
        ),
        ("paragraphs", pa.list_(pa.struct([("start", pa.int64()), ("end", pa.int64())]))),
    ]
)

# Extractive answers into DOCUMENTS (COVID-QA): `text[start:end] == answer_text` holds
# for every row (the converter repairs or drops upstream offsets that miss).
ANSWERS = pa.schema(
    [
        ("question_id", pa.string()),
        ("doc_id", pa.string()),
        ("question", pa.string()),
        ("answer_text", pa.string()),
        ("start", pa.int64()),
        ("end", pa.int64()),
    ]
)

# --- QA and classification through the RAG flow (issue 7) ---

# A question with its references, in one shape for every QA dataset (biochunk.datasets.qa).
QA_ITEMS = pa.schema(
    [
        ("id", pa.string()),
        ("split", pa.string()),  # BioASQ batch; COVID-QA: dev (example source) or test
        ("type", pa.string()),  # yesno | factoid | list | summary (BioASQ), extractive (COVID-QA)
        ("question", pa.string()),
        ("references", pa.list_(pa.string())),  # BioASQ: ideal answers; COVID-QA: the answer span
        ("doc_ids", pa.list_(pa.string())),  # gold documents (PMIDs / article ids)
        ("exact", pa.string()),  # "yes" / "no" for yes/no questions, else ""
    ]
)
# The questions a run uses: `role` is answer (scored) or example (in-context, another split).
QA_SAMPLE = pa.schema(list(QA_ITEMS) + [pa.field("role", pa.string())])

# What each question's context is made of, per arm (a chunk method, reshaped, gold), in reading
# order (rank 1 first); the chunk ids point into the qa_context chunks table.
QA_CONTEXTS = pa.schema(
    [
        ("question_id", pa.string()),
        ("method", pa.string()),
        ("rank", pa.int32()),
        ("chunk_id", pa.string()),
        ("doc_id", pa.string()),
        ("score", pa.float32()),
        ("retriever", pa.string()),
    ]
)

# One generated answer per question and chunk method; the raw output is kept verbatim.
QA_ANSWERS = pa.schema(
    [
        ("question_id", pa.string()),
        ("method", pa.string()),  # the context arm: a chunk method, reshaped, gold or none
        ("context", pa.string()),  # the question's context as the model read it ("" for none)
        ("prompt", pa.string()),
        ("raw_output", pa.string()),
        ("answer", pa.string()),  # parsed: the first line without an "Answer:" lead-in
        ("yesno", pa.string()),  # "yes" / "no" when the answer starts with one, else ""
    ]
)

# Binary classification through retrieval + generation (ADE): one row per test sentence.
CLASSIFY_PREDICTIONS = pa.schema(
    [
        ("id", pa.string()),
        ("text", pa.string()),
        ("label", pa.int8()),
        ("prompt", pa.string()),
        ("raw_output", pa.string()),
        ("prediction", pa.int8()),  # 1 yes, 0 no, -1 unparsable (scored as 0, counted)
    ]
)

# --- retrieval (issue 6) ---
# Document-level runs of every (retriever, chunk method) pair of the retrieve stage:
# chunk hits are already mapped to their documents. `retriever` is bm25, dense, hybrid
# (RRF of the two), or rerank-trained / rerank-init (the cross-encoder over BM25's top).
RUNS = pa.schema(
    [
        ("retriever", pa.string()),
        ("method", pa.string()),  # chunk method, or "none" (each document one chunk)
        ("query_id", pa.string()),
        ("rank", pa.int32()),  # from 1
        ("doc_id", pa.string()),  # CORPUS.doc_id; BioASQ: a pooled-snippet id (s<n>)
        ("score", pa.float32()),
    ]
)

# Generation contexts for QA questions (BioASQ), two per question: `retrieved` (the top
# passages joined) and `reshaped` (context reshaping: communities of sentences, TextRank,
# cross-encoder ranking). `snippet_ids` are QA_SNIPPETS.snippet_id values of the passages
# that the context draws on (a passage text shared by several snippets lists them all).
CONTEXTS = pa.schema(
    [
        ("question_id", pa.string()),
        ("method", pa.string()),
        ("context", pa.string()),  # paragraphs separated by a blank line, best first
        ("snippet_ids", pa.list_(pa.string())),
        ("n_units", pa.int64()),  # passages (retrieved) or sentences (reshaped) in the context
    ]
)

# Chunk hits of a dense search (the search stage): the top chunks per query, best first, each
# with its document, so evaluation can judge a chunk by its document's relevance.
CHUNK_HITS = pa.schema(
    [
        ("query_id", pa.string()),
        ("rank", pa.int32()),  # from 1
        ("chunk_id", pa.string()),
        ("doc_id", pa.string()),
        ("score", pa.float32()),
    ]
)

# Per-item scores (the evaluate stages): one row per (item, metric), long format so every
# paper's measures share one schema. Every interval and paired difference a results page
# shows is recomputed from these (``evaluation.papers``), in ``item_id`` order.
ITEM_SCORES = pa.schema([("item_id", pa.string()), ("metric", pa.string()), ("value", pa.float64())])
# Where each question's answer lies (a paper pipeline's sample of a QA dataset): character
# offsets into the document's text; a question may have several spans (BioASQ: the sentences
# of its gold snippets).
GOLD_SPANS = pa.schema(
    [("question_id", pa.string()), ("doc_id", pa.string()), ("start", pa.int64()), ("end", pa.int64())]
)
