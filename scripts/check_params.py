"""Check a params file the way every stage does, before DVC reads it: `make repro` runs this first.

DVC parses params.yaml itself, before any stage (and so before the stages' own check) runs:
an alias bomb hangs it, a duplicate key passes silently, a bad value only stops the first
stage that reads it. This runs the stages' check (``biochunk.params.load``: every section,
the relations between sizes, the keys dvc.yaml lists, the device) in about a second, and
prints its one line.

A paper's own params file (``experiments/<paper>/params.yaml``: sample or samples, settings)
is checked as its stages check it, and further: every sample's dataset is a registered one,
and every setting's chunk params (over the project's ``--project`` params file) and peer are
valid. Each stage checks only the setting it runs, so without this a typo in one setting
stops the pipeline at that setting's chunk stage, after the settings before it have run
(`make paper-<name>` runs this first).

    python scripts/check_params.py            # params.yaml
    python scripts/check_params.py other.yaml
    python scripts/check_params.py experiments/structural/params.yaml
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
from biochunk import cli, experiments, params  # noqa: E402
from biochunk.chunking.peers import OPTIONS, PEERS  # noqa: E402
from biochunk.datasets.registry import load_registry  # noqa: E402
from biochunk.errors import UserError  # noqa: E402

PAPER_SECTIONS = {"sample", "samples", "settings"}


def check_paper(path: Path, project: Path) -> None:
    """What every stage of the paper's pipeline would refuse, before the first one runs."""
    data = params.load_yaml(path)
    paper = experiments.load(path)
    registered = load_registry()
    for name, sample in paper.samples.items():
        if sample.dataset not in registered:
            key = "sample" if "sample" in data else f"samples.{name}"
            known = ", ".join(sorted(registered))
            raise UserError(f"{path}: {key}.dataset: unknown dataset {sample.dataset!r}; registered: {known}")
    chunk, retrieve = params.section("chunk", project), params.section("retrieve", project)
    for setting in paper.settings.values():
        if setting.peer is not None:  # the stage checks these when it builds the peer (chunking.peers)
            where, unknown = f"{path}: settings.{setting.name}", sorted(set(setting.overrides) - {"peer", *OPTIONS})
            if setting.peer not in PEERS:
                raise UserError(f"{where}.peer: unknown peer chunker {setting.peer!r}; allowed: {', '.join(PEERS)}")
            if unknown:
                raise UserError(f"{where}.{unknown[0]}: unknown option; allowed: {', '.join(OPTIONS)}")
        try:
            setting.chunk_params(chunk, retrieve.chunk)  # names settings.<name>.<key> when a value is wrong
        except UserError as e:
            raise UserError(f"{path}: {e}") from None


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("params", nargs="?", default="params.yaml", type=Path, help="params file (default: params.yaml)")
    ap.add_argument("--project", default=ROOT / "params.yaml", type=Path, help="for a paper's file: the project's params file")
    args = ap.parse_args()
    data = params.load_yaml(args.params)  # the guarded reader: one line for a bad file, before anything
    if data and set(data) <= PAPER_SECTIONS:
        params.load(args.project)
        check_paper(args.params, args.project)
    else:
        params.load(args.params)
    print(f"{args.params}: ok")


if __name__ == "__main__":
    cli.run(main)
