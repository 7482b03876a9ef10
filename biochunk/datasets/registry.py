"""The dataset registry: every file of every dataset, pinned by location and checksum.

The registry itself is data (``configs/datasets.yaml``); this module gives it types
and checks it, so that a broken entry fails with the dataset and field named.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

import yaml

from biochunk.errors import UserError

REGISTRY = Path(__file__).resolve().parents[2] / "configs" / "datasets.yaml"
TASKS = ("triples", "classification", "retrieval", "qa", "documents")
# Dataset names reach shell command lines through dvc.yaml's ${item}: nothing a shell reads
# specially may pass (params.yaml's data.* lists are held to it too).
DATASET_NAME = re.compile(r"[a-z0-9_-]+")


@dataclass(frozen=True)
class RemoteFile:
    path: str  # where the file lands under data/raw/<dataset>/ (and lies in the mirror folder)
    url: str | None = None  # public source; "package:<repo path>" for files shipped with the project
    sha256: str | None = None  # of the file as published; null when upstream is an archive
    archive: str | None = None  # for files inside an upstream archive: the archive's URL
    archive_md5: str | None = None  # the checksum the archive's publisher states
    member: str | None = None  # the file's path inside that archive
    mirror_sha256: str | None = None  # of a mirror copy that is not byte-identical to upstream (rebuilt archive members)

    @property
    def mirror_only(self) -> bool:
        return self.url is None and self.archive is None


@dataclass(frozen=True)
class DatasetSpec:
    name: str
    task: str
    format: str  # which converter reads the raw files
    mirror_dir: str  # folder name inside a mirror (e.g. ../shared/datasets/<mirror_dir>)
    files: tuple[RemoteFile, ...]
    splits: dict[str, list[str]]  # split -> raw file paths (converter-specific)
    config: str | None  # per-dataset configuration (relation definitions, ...) under configs/


def load_registry(path: Path = REGISTRY) -> dict[str, DatasetSpec]:
    try:
        raw = yaml.safe_load(path.read_text())
    except (OSError, yaml.YAMLError) as e:
        raise UserError(f"dataset registry {path} cannot be read: {e}".replace("\n", " ")) from None
    if not isinstance(raw, dict):
        raise UserError(f"dataset registry {path} must be a mapping of dataset names to entries")
    specs = {}
    for name, entry in raw.items():
        where = f"{path.name}: {name}"
        if not isinstance(name, str) or not DATASET_NAME.fullmatch(name):
            raise UserError(f"{where}: dataset names may use only a-z, 0-9, '_' and '-' (dvc.yaml puts them into shell commands)")
        try:
            files = tuple(RemoteFile(**f) for f in entry["files"])
            spec = DatasetSpec(
                name=name,
                task=entry["task"],
                format=entry["format"],
                mirror_dir=entry.get("mirror_dir", name),
                files=files,
                splits={k: list(v) if isinstance(v, list) else [v] for k, v in (entry.get("splits") or {}).items()},
                config=entry.get("config"),
            )
        except (KeyError, TypeError) as e:
            raise UserError(f"{where}: malformed entry ({e})") from None
        if spec.task not in TASKS:
            raise UserError(f"{where}: task {spec.task!r} is not one of {', '.join(TASKS)}")
        for f in files:
            if f.mirror_only and not f.sha256:
                raise UserError(f"{where}: file {f.path} has neither url nor archive, so only a mirror has it; pin its sha256")
        specs[name] = spec
    return specs


def get_spec(name: str, path: Path = REGISTRY) -> DatasetSpec:
    specs = load_registry(path)
    if name not in specs:
        raise UserError(f"data.datasets: unknown dataset {name!r}; registered: {', '.join(sorted(specs))}")
    return specs[name]
