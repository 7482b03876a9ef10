"""Is the dvc.lock a clean run wrote the committed one, up to rounding on another CPU vendor?

    python scripts/compare_locks.py COMMITTED_LOCK PRODUCED_LOCK

A lock is reproduced byte for byte only on processors of the vendor that wrote it: MKL runs
its AVX2 branch on Intel processors only, and LoRA training rounds differently by vendor under
every pin tried (docs/reproducibility.md). So on another vendor's processor CI cannot ask for
an identical lock, but it can ask for everything rounding cannot explain to be identical:

- the same stages, each with the same command and the same params;
- every dependency that no stage writes (code, configs, raw data) with the same hash;
- every output of a stage that computes with no float kernels with the same hash, unless one of
  its dependencies differs (a stage downstream of one that rounds sees other bytes);
- and, checked by the caller, metrics/ and plots/ byte for byte (git tracks them).

On the vendor that wrote the committed lock (``.ci/lock-vendor``) nothing may differ. Exit 0
and one summary line when the lock holds; otherwise one line per disagreement and exit 1.
"""

from __future__ import annotations

import sys
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
from biochunk.numerics import cpu_vendor  # noqa: E402

# The vendor of the processor that wrote the committed dvc.lock: re-writing the lock on another
# vendor's processor means writing that vendor here.
LOCK_VENDOR = ROOT / ".ci" / "lock-vendor"

# Stages whose outputs carry float-kernel rounding under the committed params: sentence
# embeddings (torch/MKL), FAISS search and score ties in rank, LoRA training of the scorer and
# the generator's fine-tuning and decoding. Any other stage must write the same bytes on every
# vendor's processor when its inputs are the same (download, convert, chunk, evaluate).
ROUNDING_STAGES = frozenset({"embed", "rank", "train_scorer", "generate"})


def _entries(stage: dict, kind: str) -> dict[str, str]:
    return {e["path"]: e.get("md5", "") for e in stage.get(kind, [])}


def _under(path: str, roots: set[str]) -> bool:
    return any(path == r or path.startswith(r.rstrip("/") + "/") for r in roots)


def compare(committed: dict, produced: dict) -> tuple[list[str], list[str]]:
    """(disagreements, outputs that differ by rounding) between two locks' ``stages``."""
    if committed.keys() != produced.keys():
        return [f"stages differ: {sorted(committed.keys() ^ produced.keys())}"], []
    written = {p for st in committed.values() for p in _entries(st, "outs")}
    # Rounding spreads downstream; judging until the set stops growing needs no stage order.
    rounded: set[str] = set()
    while True:
        problems, grown = _judge(committed, produced, written, rounded)
        if grown == rounded:
            return problems, sorted(rounded)
        rounded = grown


def _judge(committed: dict, produced: dict, written: set[str], rounded: set[str]) -> tuple[list[str], set[str]]:
    problems: list[str] = []
    grown = set(rounded)
    for name, old in committed.items():
        new = produced[name]
        if old.get("cmd") != new.get("cmd") or old.get("params") != new.get("params"):
            problems.append(f"{name}: command or params differ")
            continue
        old_deps, new_deps = _entries(old, "deps"), _entries(new, "deps")
        if old_deps.keys() != new_deps.keys():
            problems.append(f"{name}: dependencies differ: {sorted(old_deps.keys() ^ new_deps.keys())}")
            continue
        moved_inputs = False
        for path, md5 in old_deps.items():
            if md5 == new_deps[path]:
                continue
            if _under(path, rounded):
                moved_inputs = True
            elif _under(path, written):
                problems.append(f"{name}: input {path} differs, but the stage that writes it did not round")
            else:
                problems.append(f"{name}: source {path} differs (code, config or raw data): not rounding")
        may_round = moved_inputs or name.split("@")[0] in ROUNDING_STAGES
        new_outs = _entries(new, "outs")
        for path, md5 in _entries(old, "outs").items():
            if md5 == new_outs.get(path):
                continue
            if may_round:
                grown.add(path)
            else:
                problems.append(f"{name}: output {path} differs though its inputs are the same and it computes no floats")
    return problems, grown


def main(argv: list[str]) -> int:
    if len(argv) != 2:
        print("usage: compare_locks.py COMMITTED_LOCK PRODUCED_LOCK", file=sys.stderr)
        return 2
    committed, produced = (yaml.safe_load(Path(p).read_text())["stages"] for p in argv)
    if committed == produced:
        print("the same lock")
        return 0
    writer, vendor = LOCK_VENDOR.read_text().strip(), cpu_vendor() or "unknown"
    if vendor == writer:
        print(f"error: a clean run on this {vendor} processor, of the vendor that wrote the committed dvc.lock, "
              f"does not reproduce it (if another vendor's processor wrote it, put that vendor in {LOCK_VENDOR.relative_to(ROOT)})",
              file=sys.stderr)
        return 1
    problems, rounded = compare(committed, produced)
    for line in problems:
        print(f"error: {line} (lock written on a {writer} processor, this one is {vendor})", file=sys.stderr)
    if problems:
        return 1
    print(f"dvc.lock was written on a {writer} processor and this one is {vendor}: same sources, params and "
          f"commands; {len(rounded)} outputs differ by rounding: {', '.join(rounded)}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
