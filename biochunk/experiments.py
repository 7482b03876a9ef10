"""A paper pipeline's own params file (``experiments/<paper>/params.yaml``).

Each paper's experiments run as a DVC pipeline of the shared stages; what is the paper's
own lives in its params file, beside the project's ``params.yaml`` (whose sections the
stages read as usual):

- ``sample``: which part of the dataset is measured (the CPU-sized default; ``null``:
  everything), so the same pipeline runs the full test set on a bigger machine;
- ``settings``: the arms of the comparison, each a chunk method with ``chunk.*``
  overrides on top of ``retrieve.chunk`` (a foreach in the paper's dvc.yaml runs each).

One parser, so a typo in a paper's params stops the stage with one line before any work.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from biochunk import params
from biochunk.errors import UserError


@dataclass(frozen=True)
class Sample:
    dataset: str
    max_queries: int | None  # the first n evaluation queries by id; null: all
    max_documents: int | None  # search pool: every judged document + a seeded sample of the rest; null: all
    seed: int
    ks: tuple[int, ...]  # cut-offs of the per-query metrics
    bootstrap: int  # resamples of every interval


@dataclass(frozen=True)
class Setting:
    name: str
    method: str
    overrides: dict[str, Any] = field(default_factory=dict)

    def chunk_params(self, chunk: params.ChunkParams, retrieve_chunk: dict[str, Any]) -> params.ChunkParams | None:
        """``retrieve.chunk`` over ``chunk``, this setting's overrides on top, validated as any
        ``chunk`` section is (the method too); ``None``: whole documents.

        Nothing here imports a chunker: a stage that reads the settings but cuts nothing
        (sample, evaluate, report) must not depend on every chunker's code."""
        if self.method == params.NO_CHUNKING:
            return None
        # As RetrieveParams.chunk_params layers retrieve.chunk over chunk, then this setting's keys.
        values = {**dataclasses.asdict(chunk), **retrieve_chunk, "method": self.method, **self.overrides}
        return params.parse(params.ChunkParams, values, f"settings.{self.name}")


@dataclass(frozen=True)
class Paper:
    path: Path
    sample: Sample
    settings: dict[str, Setting]


def _int_or_none(key: str, v: Any) -> int | None:
    if v is None:
        return None
    if isinstance(v, bool) or not isinstance(v, int) or v < 1:
        raise UserError(f"{key}: expected a whole number >= 1 or null, got {v!r}")
    return v


def load(path: str | Path) -> Paper:
    """The paper's params file, validated (every setting's chunk params are checked too)."""
    path = Path(path)
    if not path.is_file():
        raise UserError(f"{path}: no such paper params file (experiments/<paper>/params.yaml)")
    data = params.parse_yaml_text(path.read_text(encoding="utf-8"), str(path)) or {}
    unknown = sorted(set(data) - {"sample", "settings"})
    if unknown:
        raise UserError(f"{path}: {unknown[0]}: unknown section; allowed: sample, settings")
    s = data.get("sample") or {}
    allowed = {f.name for f in dataclasses.fields(Sample)}
    if set(s) != allowed:
        missing, extra = sorted(allowed - set(s)), sorted(set(s) - allowed)
        raise UserError(f"{path}: sample.{(missing or extra)[0]}: {'missing' if missing else 'unknown key'}; keys: {', '.join(sorted(allowed))}")
    ks = s["ks"]
    if not isinstance(ks, list) or not ks or any(isinstance(k, bool) or not isinstance(k, int) or k < 1 for k in ks):
        raise UserError(f"{path}: sample.ks: expected a list of whole numbers >= 1, got {ks!r}")
    if isinstance(s["bootstrap"], bool) or not isinstance(s["bootstrap"], int) or s["bootstrap"] < 0:
        raise UserError(f"{path}: sample.bootstrap: expected a whole number >= 0, got {s['bootstrap']!r}")
    if isinstance(s["seed"], bool) or not isinstance(s["seed"], int):
        raise UserError(f"{path}: sample.seed: expected a whole number, got {s['seed']!r}")
    sample = Sample(
        str(s["dataset"]), _int_or_none("sample.max_queries", s["max_queries"]),
        _int_or_none("sample.max_documents", s["max_documents"]), s["seed"], tuple(sorted(set(ks))), s["bootstrap"],
    )  # fmt: skip
    settings: dict[str, Setting] = {}
    for name, body in (data.get("settings") or {}).items():
        if not isinstance(body, dict) or "method" not in body:
            raise UserError(f"{path}: settings.{name}: expected a mapping with a method, e.g. {{method: recursive}}")
        settings[str(name)] = Setting(str(name), str(body["method"]), {k: v for k, v in body.items() if k != "method"})
    if not settings:
        raise UserError(f"{path}: settings: empty; name at least one setting")
    return Paper(path, sample, settings)


def setting(paper: Paper, name: str) -> Setting:
    if name not in paper.settings:
        raise UserError(f"--setting {name}: not in {paper.path} settings; allowed: {', '.join(paper.settings)}")
    return paper.settings[name]
