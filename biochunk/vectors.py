"""Embedding tables: what the embed stage writes and rank / train_scorer read."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd

from biochunk.io import read_table, vectors_schema, write_table


def embedding_text(text: str, metadata: str) -> str:
    """The text a chunk is embedded as: a micro-header, when a chunker wrote one, goes first;
    a proposition chunk is embedded as its propositions.

    Neither the header nor the propositions are part of the chunk's offsets.
    """
    meta = json.loads(metadata or "{}")
    props = meta.get("propositions")
    body = "\n".join(p[0] for p in props) if props else text
    header = meta.get("header")
    return f"{header}\n{body}" if header else body


def embedding_texts(chunks: pd.DataFrame) -> list[str]:
    """``embedding_text`` of every row of a CHUNKS table."""
    return [embedding_text(t, m) for t, m in zip(chunks["text"], chunks["metadata"])]


def frame(ids: list[str], kind: str, vecs: np.ndarray) -> pd.DataFrame:
    return pd.DataFrame({"id": ids, "kind": kind, "vector": list(vecs)})


def write(frames: list[pd.DataFrame], dim: int, path: Path) -> None:
    write_table(pd.concat(frames, ignore_index=True), path, vectors_schema(dim))


def read(path: Path, kind: str) -> tuple[list[str], np.ndarray]:
    df = read_table(path)
    df = df[df["kind"] == kind]
    vecs = np.stack(df["vector"].to_numpy()).astype(np.float32) if len(df) else np.zeros((0, 0), np.float32)
    return df["id"].astype(str).tolist(), vecs
