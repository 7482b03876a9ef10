"""What a converted dataset holds, as numbers small enough for git: the rows the convert stage
read, wrote and dropped per split (its report.json) and, for the labelled tasks, each split's
label counts.

The describe stage writes one per dataset (``metrics/papers/datasets/<dataset>.json``, tracked
by git, not the DVC cache), so a page that quotes split sizes (``docs/results/biomedrag.md``
beside the paper's Table 2) renders from tracked files in a fresh clone, and ``dvc metrics
diff`` shows what a change to a converter did to the data.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pyarrow as pa

from biochunk.io import CLASSIFICATION, TRIPLES, read_json, read_table

# The column holding each row's label, per task, and the table schema it is read with; the
# other tasks (retrieval, qa, documents) have no label.
LABELS: dict[str, tuple[str, pa.Schema]] = {"triples": ("relation", TRIPLES), "classification": ("label", CLASSIFICATION)}
SPLITS = ("train", "dev", "test")


def describe(data: Path, task: str) -> dict[str, Any]:
    """The converted folder ``data``: report.json's row counts, and ``labels`` (split -> label
    -> rows, labels as strings, sorted) for the splits it holds where ``task`` has labels."""
    report = read_json(data / "report.json")
    out: dict[str, Any] = {k: report[k] for k in ("rows_read", "rows_written", "rows_dropped")}
    if task in LABELS:
        column, schema = LABELS[task]
        out["labels"] = {
            s: {str(k): int(v) for k, v in sorted(read_table(data / f"{s}.parquet", schema)[column].value_counts().items())}
            for s in SPLITS
            if (data / f"{s}.parquet").is_file()
        }
    return out
