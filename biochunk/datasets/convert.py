"""Raw files -> unified Parquet, one converter per source format.

A converter returns tables (name -> (dataframe, schema)) and fills a ``Report``
with every row it read, wrote or dropped and why; ``convert`` writes them all
atomically as one directory, plus ``report.json``.
"""

from __future__ import annotations

import json
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Iterator

import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq

from biochunk.datasets.registry import DatasetSpec
from biochunk.errors import UserError
from biochunk.io import TRIPLES, atomic_path, write_json

Tables = dict[str, tuple[pd.DataFrame, pa.Schema]]


@dataclass
class Report:
    """Counts of what a conversion did; written to report.json and surfaced by evaluate."""

    rows_read: Counter[str] = field(default_factory=Counter)
    rows_written: Counter[str] = field(default_factory=Counter)
    dropped: dict[str, Counter[str]] = field(default_factory=dict)  # split -> reason -> count
    repaired: dict[str, Counter[str]] = field(default_factory=dict)  # kept, but fixed: split -> reason -> count
    # What the user should know that is not a row: a file not read, a questions file missing.
    notes: list[str] = field(default_factory=list)

    def drop(self, split: str, reason: str, n: int = 1) -> None:
        if n:
            self.dropped.setdefault(split, Counter())[reason] += n

    def repair(self, split: str, reason: str, n: int = 1) -> None:
        if n:
            self.repaired.setdefault(split, Counter())[reason] += n

    def as_dict(self) -> dict[str, Any]:
        return {
            "rows_read": dict(self.rows_read),
            "rows_written": dict(self.rows_written),
            "rows_dropped": {s: dict(c) for s, c in self.dropped.items()},
            "rows_repaired": {s: dict(c) for s, c in self.repaired.items()},
            # Only when there are any: the registry datasets' report.json stay byte for byte.
            **({"notes": list(self.notes)} if self.notes else {}),
        }


@dataclass(frozen=True)
class Context:
    spec: DatasetSpec
    raw: Path
    skip_malformed: bool
    report: Report


Converter = Callable[[Context], Tables]
CONVERTERS: dict[str, Converter] = {}


def converter(fmt: str) -> Callable[[Converter], Converter]:
    def deco(fn: Converter) -> Converter:
        if fmt in CONVERTERS:
            raise ValueError(f"converter {fmt!r} registered twice")
        CONVERTERS[fmt] = fn
        return fn

    return deco


def convert(
    spec: DatasetSpec, raw: Path, out: Path, skip_malformed: bool = False, report: Report | None = None
) -> dict[str, Any]:
    """Convert ``raw`` into the folder ``out``; ``report`` may already hold what the caller counted."""
    import biochunk.datasets.formats  # noqa: F401  (registers the converters of the real benchmarks)

    if spec.format not in CONVERTERS:
        raise UserError(f"{spec.name}: no converter for format {spec.format!r}; known: {', '.join(sorted(CONVERTERS))}")
    if not raw.is_dir():
        raise UserError(f"raw data folder not found: {raw} (run the download stage first: `dvc repro download@{spec.name}`)")
    report = report if report is not None else Report()
    tables = CONVERTERS[spec.format](Context(spec, raw, skip_malformed, report))
    for name, (df, _) in tables.items():
        if df.empty:
            raise UserError(_empty_message(spec, raw, name, report))
    with atomic_path(out) as tmp:
        tmp.mkdir(parents=True)
        for name, (df, schema) in tables.items():
            table = pa.Table.from_pandas(df[schema.names], schema=schema, preserve_index=False)
            pq.write_table(table, tmp / f"{name}.parquet")
            report.rows_written[name] = len(df)
        write_json({"dataset": spec.name, "task": spec.task, **report.as_dict()}, tmp / "report.json")
    return report.as_dict()


def _empty_message(spec: DatasetSpec, raw: Path, table: str, report: Report) -> str:
    # An empty table is never a dataset: every stage after it would run on nothing and
    # exit 0, so it stops here, naming the raw files it came from.
    files = spec.splits.get(table) or [f for fs in spec.splits.values() for f in fs]
    shown = ", ".join(str(raw / f) for f in files[:3]) + (f" and {len(files) - 3} more" if len(files) > 3 else "")
    read = report.rows_read.get(table, 0) if table in spec.splits else sum(report.rows_read.values())
    dropped = sum(report.dropped.get(table, {}).values()) if table in spec.splits else sum(sum(c.values()) for c in report.dropped.values())
    return (
        f"{shown}: {spec.name} {table} has no rows after conversion ({read} read, {dropped} dropped); "
        "check that the file is the published one, or re-run the download stage"
    )


def malformed(ctx: Context, split: str, where: str, why: str) -> None:
    """Skip-and-count when the param allows it, else stop with the file and line."""
    if not ctx.skip_malformed:
        raise UserError(f"{where}: {why} (fix the line, or set convert.skip_malformed: true to skip and count it)")
    ctx.report.drop(split, f"malformed: {why}")


# One line of a line-oriented raw file (a JSON-lines record, a qrels row) longer than this is
# not a record: two records run together, or binary data. Real records are under 100 kB.
MAX_LINE_BYTES = 1 << 20


def decode(data: bytes) -> tuple[str | None, str]:
    """Bytes of a text file or line -> (text, "") or (None, why it is not text).

    UTF-8 with an optional BOM (editors on Windows write one): the BOM is not data, and
    left in place it would make the first record malformed. A NUL byte never belongs in
    a text format; it means a binary or truncated-and-padded file.
    """
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as e:
        return None, f"not valid UTF-8 (byte 0x{data[e.start]:02x} at offset {e.start})"
    if "\x00" in text:
        return None, "contains a NUL byte (binary data, not text)"
    return text, ""


def text_lines(ctx: Context, path: Path, split: str) -> Iterator[tuple[int, str]]:
    """(line number, text) of each non-blank line; a line that is not text is malformed (counted as read)."""
    if not path.exists():
        raise UserError(f"raw file not found: {path} (re-run the download stage)")
    with open(path, "rb") as f:
        for n, raw in enumerate(f, 1):
            if len(raw) > MAX_LINE_BYTES:
                ctx.report.rows_read[split] += 1
                why = f"line of {len(raw):,} bytes exceeds the {MAX_LINE_BYTES:,}-byte limit of one record (a missing line break?)"
                malformed(ctx, split, f"{path}:{n}", why)
                continue
            text, why = decode(raw)
            if text is None:
                ctx.report.rows_read[split] += 1
                malformed(ctx, split, f"{path}:{n}", why)
                continue
            if text.strip():
                yield n, text


def jsonl_records(ctx: Context, path: Path, split: str) -> Iterator[tuple[int, Any]]:
    """(line number, parsed object) for each non-blank line of a JSON-lines file."""
    for n, line in text_lines(ctx, path, split):
        ctx.report.rows_read[split] += 1
        try:
            yield n, json.loads(line)
        except json.JSONDecodeError as e:
            malformed(ctx, split, f"{path}:{n}", f"not valid JSON ({e.msg})")


def triples_frame(ctx: Context, split: str, rows: list[tuple[str, str, str, str]]) -> pd.DataFrame:
    """(sentence, head, relation, tail) rows -> TRIPLES frame.

    Exact duplicate triples are dropped and counted (GM-CIHT's test file lists each of
    its 465 rows twice); triples of the same sentence share one id.
    """
    seen: set[tuple[str, str, str, str]] = set()
    ids: dict[str, str] = {}
    out = []
    for row in rows:
        if row in seen:
            ctx.report.drop(split, "exact duplicate")
            continue
        seen.add(row)
        sentence, head, relation, tail = row
        sid = ids.setdefault(sentence, f"{ctx.spec.name}-{split}-{len(ids)}")
        out.append({"id": sid, "split": split, "sentence": sentence, "head": head, "relation": relation, "tail": tail})
    return pd.DataFrame(out, columns=TRIPLES.names)


@converter("gmciht")
def convert_gmciht(ctx: Context) -> Tables:
    """GM-CIHT (BioMedRAG): JSON lines ``{PREDICATE, SUBJECT_TEXT, OBJECT_TEXT, SENTENCE}``."""
    tables: Tables = {}
    keys = ("SENTENCE", "SUBJECT_TEXT", "PREDICATE", "OBJECT_TEXT")
    for split, files in ctx.spec.splits.items():
        rows = []
        for name in files:
            path = ctx.raw / name
            for n, obj in jsonl_records(ctx, path, split):
                if not isinstance(obj, dict) or any(not isinstance(obj.get(k), str) or not obj[k].strip() for k in keys):
                    malformed(ctx, split, f"{path}:{n}", f"expected non-empty string fields {', '.join(keys)}")
                    continue
                rows.append(tuple(obj[k].strip() for k in keys))
        tables[split] = (triples_frame(ctx, split, rows), TRIPLES)
    return tables
