"""A paper pipeline's own params file (``experiments/<paper>/params.yaml``).

Each paper's experiments run as a DVC pipeline of the shared stages; what is the paper's
own lives in its params file, beside the project's ``params.yaml`` (whose sections the
stages read as usual):

- ``sample``: which part of the dataset is measured (the CPU-sized default; ``null``:
  everything), so the same pipeline runs the full test set on a bigger machine; or
  ``samples``, several of them by name (a paper measured on two datasets; the stages take
  ``--sample <name>``, and the paper's dvc.yaml runs each setting on each sample);
- ``settings``: the arms of the comparison, each a chunk method with ``chunk.*``
  overrides on top of ``retrieve.chunk`` (a foreach in the paper's dvc.yaml runs each), or
  a peer library's chunker (``method: peer``, ``chunking.peers``).

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


PEER = "peer"  # a setting's method: a peer library's chunker (chunking.peers), not one of ours


@dataclass(frozen=True)
class Setting:
    name: str
    method: str
    overrides: dict[str, Any] = field(default_factory=dict)

    @property
    def peer(self) -> str | None:
        """The peer library's chunker this setting runs (``method: peer``), else None."""
        return str(self.overrides["peer"]) if self.method == PEER else None

    def chunk_params(self, chunk: params.ChunkParams, retrieve_chunk: dict[str, Any]) -> params.ChunkParams | None:
        """``retrieve.chunk`` over ``chunk``, this setting's overrides on top, validated as any
        ``chunk`` section is (the method too); ``None``: whole documents.

        Nothing here imports a chunker: a stage that reads the settings but cuts nothing
        (sample, evaluate, report) must not depend on every chunker's code."""
        if self.method in (params.NO_CHUNKING, PEER):
            return None
        # As RetrieveParams.chunk_params layers retrieve.chunk over chunk, then this setting's keys.
        values = {**dataclasses.asdict(chunk), **retrieve_chunk, "method": self.method, **self.overrides}
        return params.parse(params.ChunkParams, values, f"settings.{self.name}")


@dataclass(frozen=True)
class Paper:
    path: Path
    samples: dict[str, Sample]  # by name; a file with one ``sample`` names it by its dataset
    settings: dict[str, Setting]

    def sample_named(self, name: str | None = None) -> Sample:
        """The sample ``name`` (a stage's ``--sample``); without a name, the paper's only one."""
        if name is None:
            if len(self.samples) != 1:
                raise UserError(f"--sample: {self.path} has several samples; name one of: {', '.join(self.samples)}")
            return next(iter(self.samples.values()))
        if name not in self.samples:
            raise UserError(f"--sample {name}: not in {self.path} samples; allowed: {', '.join(self.samples)}")
        return self.samples[name]

    @property
    def sample(self) -> Sample:
        return self.sample_named()


def _int_or_none(key: str, v: Any) -> int | None:
    if v is None:
        return None
    if isinstance(v, bool) or not isinstance(v, int) or v < 1:
        raise UserError(f"{key}: expected a whole number >= 1 or null, got {v!r}")
    return v


def _sample(path: Path, key: str, s: Any) -> Sample:
    if not isinstance(s, dict):
        raise UserError(f"{path}: {key}: expected a mapping of {', '.join(f.name for f in dataclasses.fields(Sample))}")
    allowed = {f.name for f in dataclasses.fields(Sample)}
    if set(s) != allowed:
        missing, extra = sorted(allowed - set(s)), sorted(set(s) - allowed)
        raise UserError(f"{path}: {key}.{(missing or extra)[0]}: {'missing' if missing else 'unknown key'}; keys: {', '.join(sorted(allowed))}")
    ks = s["ks"]
    if not isinstance(ks, list) or not ks or any(isinstance(k, bool) or not isinstance(k, int) or k < 1 for k in ks):
        raise UserError(f"{path}: {key}.ks: expected a list of whole numbers >= 1, got {ks!r}")
    if isinstance(s["bootstrap"], bool) or not isinstance(s["bootstrap"], int) or s["bootstrap"] < 0:
        raise UserError(f"{path}: {key}.bootstrap: expected a whole number >= 0, got {s['bootstrap']!r}")
    if isinstance(s["seed"], bool) or not isinstance(s["seed"], int):
        raise UserError(f"{path}: {key}.seed: expected a whole number, got {s['seed']!r}")
    return Sample(
        str(s["dataset"]), _int_or_none(f"{key}.max_queries", s["max_queries"]),
        _int_or_none(f"{key}.max_documents", s["max_documents"]), s["seed"], tuple(sorted(set(ks))), s["bootstrap"],
    )  # fmt: skip


def _setting(path: Path, name: str, body: Any) -> Setting:
    if not isinstance(body, dict) or "method" not in body:
        raise UserError(f"{path}: settings.{name}: expected a mapping with a method, e.g. {{method: recursive}}")
    overrides = {k: v for k, v in body.items() if k != "method"}
    setting = Setting(str(name), str(body["method"]), overrides)
    if setting.method == PEER and not isinstance(overrides.get("peer"), str):
        # The peer's name and options are checked where it is built (chunking.peers.PeerChunker,
        # before any work): importing the chunkers here would make every stage that reads a
        # paper's params depend on their code.
        raise UserError(f"{path}: settings.{name}.peer: name the peer library's chunker, e.g. {{method: peer, peer: semchunk}}")
    return setting


def load(path: str | Path) -> Paper:
    """The paper's params file, validated (every setting's chunk params are checked too)."""
    path = Path(path)
    if not path.is_file():
        raise UserError(f"{path}: no such paper params file (experiments/<paper>/params.yaml)")
    data = params.parse_yaml_text(path.read_text(encoding="utf-8"), str(path)) or {}
    unknown = sorted(set(data) - {"sample", "samples", "settings"})
    if unknown:
        raise UserError(f"{path}: {unknown[0]}: unknown section; allowed: sample (or samples), settings")
    if ("sample" in data) == ("samples" in data):
        raise UserError(f"{path}: give one sample (sample:) or named ones (samples:), not {'both' if 'sample' in data else 'neither'}")
    if "sample" in data:
        one = _sample(path, "sample", data["sample"])
        samples = {one.dataset: one}
    else:
        if not isinstance(data["samples"], dict) or not data["samples"]:
            raise UserError(f"{path}: samples: expected a mapping of name -> sample")
        samples = {str(n): _sample(path, f"samples.{n}", s) for n, s in data["samples"].items()}
    settings = {str(n): _setting(path, str(n), b) for n, b in (data.get("settings") or {}).items()}
    if not settings:
        raise UserError(f"{path}: settings: empty; name at least one setting")
    return Paper(path, samples, settings)


def setting(paper: Paper, name: str) -> Setting:
    if name not in paper.settings:
        raise UserError(f"--setting {name}: not in {paper.path} settings; allowed: {', '.join(paper.settings)}")
    return paper.settings[name]
