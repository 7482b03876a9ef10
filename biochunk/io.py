"""Parquet schemas, atomic writes and stage reports: the typed doors between stages."""

from __future__ import annotations

import json
import os
import re
import shutil
import tempfile
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Callable, Iterator

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


# Temporary siblings are `.<name>.<8 random chars>.tmp`; the pattern names them exactly, so
# cleaning up after a killed run never touches another output's files.
TMP_SUFFIX = ".tmp"
# Fault injection for the kill-safety test: `kill-before-rename:<path suffix>` ends the process
# (as SIGKILL would, exit 137) once the temporary output is complete, before it is renamed.
FAULT_ENV = "BIOCHUNK_FAULT"


def _stale_temps(final: Path) -> list[Path]:
    pattern = re.compile(re.escape(f".{final.name}.") + r"[a-z0-9_]{8}" + re.escape(TMP_SUFFIX))
    return [p for p in final.parent.iterdir() if pattern.fullmatch(p.name)]


def _fault(final: Path) -> None:
    spec = os.environ.get(FAULT_ENV, "")
    if spec.startswith("kill-before-rename:") and final.as_posix().endswith(spec.split(":", 1)[1]):
        os._exit(137)


@contextmanager
def atomic_path(path: str | os.PathLike[str]) -> Iterator[Path]:
    """Yield a temporary sibling of `path`; rename it onto `path` only on success.

    A stage killed halfway leaves the old output (or nothing), never a partial file; the
    temporary sibling it leaves (a SIGKILL runs no cleanup) is removed by the next write of
    the same output. Works for files and directories alike.
    """
    final = Path(path)
    final.parent.mkdir(parents=True, exist_ok=True)
    for stale in _stale_temps(final):
        shutil.rmtree(stale, ignore_errors=True)
    tmp = Path(tempfile.mkdtemp(prefix=f".{final.name}.", suffix=TMP_SUFFIX, dir=final.parent)) / final.name
    try:
        yield tmp
        _fault(final)
        if final.is_dir() and not final.is_symlink():
            shutil.rmtree(final)
        os.replace(tmp, final)
    finally:
        shutil.rmtree(tmp.parent, ignore_errors=True)


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


def write_json(obj: Any, path: str | os.PathLike[str]) -> None:
    with atomic_path(path) as tmp:
        tmp.write_text(json.dumps(obj, indent=2, sort_keys=True, default=_json_default) + "\n")


def read_json(path: str | os.PathLike[str]) -> Any:
    p = Path(path)
    if not p.exists():
        raise UserError(f"input file not found: {p} (run the stage that produces it, e.g. `dvc repro`)")
    try:
        return json.loads(p.read_text(encoding="utf-8"))
    except ValueError as e:  # JSONDecodeError and UnicodeDecodeError
        raise UserError(f"{p}: not valid JSON ({str(e).splitlines()[0]}); re-run the stage that produces it") from None


def _json_default(o: Any) -> Any:
    # numpy scalars appear in metrics; JSON wants plain numbers.
    if hasattr(o, "item"):
        return o.item()
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
