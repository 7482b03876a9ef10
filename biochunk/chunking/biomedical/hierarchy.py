"""Relation hierarchy: how much a proposition's relation counts toward its priority.

One YAML file per dataset, ``configs/hierarchy/<dataset>.yaml``::

    default: 1          # any relation not listed
    weights:
      TREATS: 4
      INHIBITS: 3

Kept apart from the trigger lexicon so that re-inducing triggers never touches the
weights, and so that ``chunk.hierarchy: false`` (every weight 1) is one switch.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Collection

from biochunk.chunking.biomedical.triggers import CONFIGS, dataset_relations, read_yaml
from biochunk.errors import UserError

HIERARCHY_DIR = CONFIGS / "hierarchy"


@dataclass(frozen=True)
class Hierarchy:
    weights: dict[str, int] = field(default_factory=dict)
    default: int = 1

    def weight(self, relation: str) -> int:
        return self.weights.get(relation, self.default)

    @property
    def max_weight(self) -> int:
        return max([self.default, *self.weights.values()])


FLAT = Hierarchy()  # `chunk.hierarchy: false`: every relation weighs 1

# `chunk.hierarchy_order`, the paper's ordering ablation: the weights as the file states them,
# all equal (the same priorities as `chunk.hierarchy: false`), or the file's order reversed.
HIERARCHY_ORDERS = ("paper", "flat", "inverted")


def reorder(h: Hierarchy, order: str) -> Hierarchy:
    """``h`` under one of ``HIERARCHY_ORDERS``.

    inverted maps each weight w (the default included) to max + min − w: the relation the file
    ranks highest weighs what the lowest did, and the spread of priorities stays the same.
    """
    if order == "paper":
        return h
    if order == "flat":
        return FLAT
    if order == "inverted":
        ws = [h.default, *h.weights.values()]
        top, bottom = max(ws), min(ws)
        return Hierarchy({r: top + bottom - w for r, w in h.weights.items()}, top + bottom - h.default)
    raise ValueError(f"chunk.hierarchy_order must be one of {', '.join(HIERARCHY_ORDERS)}, got {order!r}")


def load_hierarchy(path: str | Path, relations: Collection[str]) -> Hierarchy:
    """Read and check a hierarchy file against the dataset's relation names."""
    p = Path(path)
    data = read_yaml(p)
    unknown = sorted(set(data) - {"default", "weights"})
    if unknown:
        raise UserError(f"{p}: unknown key {unknown[0]!r}; allowed: default, weights")
    default = data.get("default", 1)
    _check_weight(f"{p}: default", default)
    raw = data.get("weights")
    if not isinstance(raw, dict) or not raw:
        raise UserError(f"{p}: `weights` must map relation names to integer weights >= 1")
    known = set(relations)
    for rel, w in raw.items():
        if rel not in known:
            raise UserError(f"{p}: weights.{rel}: unknown relation; the dataset defines: {', '.join(sorted(known))}")
        _check_weight(f"{p}: weights.{rel}", w)
    return Hierarchy(weights=dict(raw), default=default)


def _check_weight(where: str, w: object) -> None:
    if isinstance(w, bool) or not isinstance(w, int) or w < 1:
        raise UserError(f"{where}: a weight must be an integer >= 1, got {w!r}")


def dataset_hierarchy(dataset: str) -> Hierarchy:
    path = HIERARCHY_DIR / f"{dataset}.yaml"
    if not path.exists():
        raise UserError(f"no relation hierarchy for dataset {dataset!r}: write {path} (see configs/triggers/README.md)")
    return load_hierarchy(path, dataset_relations(dataset))
