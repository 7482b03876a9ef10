"""Views of the converted data that the stages share: chunk corpora, inputs, gold triples.

Also the types of that data the layers above exchange (``Document``, the unit a chunker
cuts; ``Triple``, a relation triple) and the per-dataset relation definitions, so that
chunking, generation and evaluation read them from here and not from each other.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Iterable, Iterator

import pandas as pd
import yaml

from biochunk.errors import UserError
from biochunk.io import TRIPLES, iter_table, read_table

CONFIGS = Path(__file__).resolve().parents[1] / "configs"

Triple = tuple[str, str, str]  # head, relation, tail


@dataclass(frozen=True, slots=True)
class Document:
    """A unit of the corpus being chunked (a training sentence, an article, ...)."""

    doc_id: str
    text: str
    labels: tuple[str, ...] = ()


def memory_documents(train: pd.DataFrame) -> list[Document]:
    """The chunk memory's corpus: each distinct training sentence, keyed by its relations.

    As in BioMedRAG, a chunk inherits the relation(s) of the sentence it was cut from.
    """
    docs = []
    for sid, g in train.groupby("id", sort=False):
        docs.append(Document(str(sid), str(g["sentence"].iloc[0]), tuple(sorted(set(g["relation"])))))
    return docs


def stream_memory_documents(path: str | Path, rows: int) -> tuple[int, Iterable[Document]] | None:
    """``memory_documents`` of a TRIPLES file, read ``rows`` rows at a time: (count, documents).

    A document is complete once its id's rows end, so the stream needs each id's rows to be
    adjacent (the converters write them so); a first pass over the id column alone checks
    that. None when they are not: the caller reads the table whole.
    """
    runs, ids, last = 0, set(), None
    for frame in iter_table(path, rows, ["id"], TRIPLES):
        for sid in frame["id"]:
            if sid != last:
                runs, last = runs + 1, sid
                ids.add(sid)
    if runs != len(ids):
        return None

    def documents() -> Iterator[Document]:
        current: list = []  # [id, sentence, relations] of the document being read
        for frame in iter_table(path, rows, ["id", "sentence", "relation"], TRIPLES):
            for sid, sentence, relation in zip(frame["id"], frame["sentence"], frame["relation"]):
                if current and sid != current[0]:
                    yield Document(str(current[0]), str(current[1]), tuple(sorted(current[2])))
                    current = []
                if not current:
                    current = [sid, sentence, set()]
                current[2].add(relation)
        if current:
            yield Document(str(current[0]), str(current[1]), tuple(sorted(current[2])))

    return len(ids), documents()


def inputs(df: pd.DataFrame) -> pd.DataFrame:
    """One row per distinct sentence: id, split, sentence."""
    return df.drop_duplicates("id")[["id", "split", "sentence"]].reset_index(drop=True)


def gold_triples(df: pd.DataFrame) -> dict[str, list[Triple]]:
    out: dict[str, list[Triple]] = {}
    for row in df.itertuples(index=False):
        out.setdefault(str(row.id), []).append((row.head, row.relation, row.tail))
    return out


def predicted_triples(preds: pd.DataFrame) -> dict[str, list[Triple]]:
    """The generate stage's PREDICTIONS as ``gold_triples`` gives the gold: input id -> triples."""
    return {str(i): [tuple(t) for t in ts] for i, ts in zip(preds["id"], preds["triples"])}


def relation_definitions(config: str | Path) -> dict[str, str]:
    """``relations:`` of a per-dataset config file, checked to be name -> definition."""
    p = Path(config)
    if not p.is_absolute() and not p.exists():
        p = CONFIGS / p
    if not p.exists():
        raise UserError(f"dataset config not found: {p} (each dataset needs configs/<name>.yaml with relation definitions)")
    try:
        data = yaml.safe_load(p.read_text()) or {}
    except yaml.YAMLError as e:
        raise UserError(f"{p}: not valid YAML: {e}".replace("\n", " ")) from None
    rels = data.get("relations")
    if not isinstance(rels, dict) or not rels or not all(isinstance(k, str) and isinstance(v, str) and v.strip() for k, v in rels.items()):
        raise UserError(f"{p}: `relations` must map each relation name to a non-empty definition string")
    return rels


def read_triples(folder: str | Path, splits: tuple[str, ...] = ("train", "dev", "test")) -> pd.DataFrame:
    """The converted triple splits present in ``folder`` (a dataset may lack dev), concatenated."""
    folder = Path(folder)
    present = [folder / f"{s}.parquet" for s in splits if (folder / f"{s}.parquet").exists()]
    if not present:
        raise UserError(f"no converted splits ({', '.join(splits)}) in {folder}; run the convert stage first")
    return pd.concat([read_table(p, TRIPLES) for p in present], ignore_index=True)
