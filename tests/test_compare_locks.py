"""CI's check on another CPU vendor's processor: the committed dvc.lock up to rounding only."""

from __future__ import annotations

import copy
import importlib.util
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[1]
_spec = importlib.util.spec_from_file_location("compare_locks", ROOT / "scripts" / "compare_locks.py")
compare_locks = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(compare_locks)

COMMITTED = yaml.safe_load((ROOT / "dvc.lock").read_text())["stages"]


def _set(lock: dict, path: str, md5: str, kinds=("deps", "outs")) -> dict:
    """Every entry for ``path`` (a stage's output and the inputs that read it) gets ``md5``."""
    for stage in lock.values():
        for kind in kinds:
            for entry in stage.get(kind, []):
                if entry["path"] == path:
                    entry["md5"] = md5
    return lock


def _out_of(stage: str) -> str:
    return COMMITTED[stage]["outs"][0]["path"]


def test_the_committed_lock_agrees_with_itself():
    assert compare_locks.compare(COMMITTED, copy.deepcopy(COMMITTED)) == ([], [])


def test_rounding_in_embed_may_reach_every_stage_downstream():
    # What an AMD clone of an Intel-written lock shows (2026-12-03): embed's vectors differ in
    # their last bits, and so do rank's, the scorer's and the generator's outputs.
    produced = copy.deepcopy(COMMITTED)
    for stage in ("embed@embedded", "rank@embedded", "train_scorer@embedded", "generate@embedded"):
        _set(produced, _out_of(stage), "f" * 32)
    problems, rounded = compare_locks.compare(COMMITTED, produced)
    assert problems == []
    assert _out_of("embed@embedded") in rounded and _out_of("generate@embedded") in rounded


def test_a_stage_without_float_kernels_must_write_the_same_bytes():
    produced = _set(copy.deepcopy(COMMITTED), _out_of("chunk@embedded"), "0" * 32 + ".dir")
    problems, _ = compare_locks.compare(COMMITTED, produced)
    assert any(p.startswith("chunk@embedded: output") for p in problems)


def test_a_changed_source_is_never_rounding():
    produced = copy.deepcopy(COMMITTED)
    script = next(d for d in produced["evaluate@embedded"]["deps"] if d["path"] == "stages/evaluate.py")
    script["md5"] = "0" * 32
    problems, _ = compare_locks.compare(COMMITTED, produced)
    assert problems == ["evaluate@embedded: source stages/evaluate.py differs (code, config or raw data): not rounding"]


def test_changed_params_or_stages_are_reported():
    produced = copy.deepcopy(COMMITTED)
    produced["chunk@embedded"]["params"] = {"params.yaml": {"chunk.method": "fixed-size-changed"}}
    assert compare_locks.compare(COMMITTED, produced)[0] == ["chunk@embedded: command or params differ"]
    del produced["evaluate@embedded"]
    assert compare_locks.compare(COMMITTED, produced)[0] == ["stages differ: ['evaluate@embedded']"]


def test_the_vendor_that_wrote_the_lock_is_recorded():
    assert (ROOT / ".ci" / "lock-vendor").read_text().strip() in {"GenuineIntel", "AuthenticAMD"}


def _locks(tmp_path, produced: dict) -> list[str]:
    paths = [tmp_path / "committed.lock", tmp_path / "produced.lock"]
    for path, stages in zip(paths, (COMMITTED, produced)):
        path.write_text(yaml.safe_dump({"schema": "2.0", "stages": stages}))
    return [str(p) for p in paths]


def test_rounding_is_excused_on_another_vendor_only(tmp_path, monkeypatch, capsys):
    writer = (ROOT / ".ci" / "lock-vendor").read_text().strip()
    other = "AuthenticAMD" if writer == "GenuineIntel" else "GenuineIntel"
    rounded = _set(copy.deepcopy(COMMITTED), _out_of("embed@embedded"), "f" * 32)
    monkeypatch.setattr(compare_locks, "cpu_vendor", lambda: other)
    assert compare_locks.main(_locks(tmp_path, rounded)) == 0
    assert "1 outputs differ by rounding: data/embed/embedded" in capsys.readouterr().out
    monkeypatch.setattr(compare_locks, "cpu_vendor", lambda: writer)
    assert compare_locks.main(_locks(tmp_path, rounded)) == 1
    assert "the vendor that wrote the committed dvc.lock" in capsys.readouterr().err
    # The same lock passes anywhere.
    assert compare_locks.main(_locks(tmp_path, copy.deepcopy(COMMITTED))) == 0


def test_stage_order_in_the_lock_does_not_matter():
    produced = copy.deepcopy(COMMITTED)
    for stage in ("embed@embedded", "rank@embedded"):
        _set(produced, _out_of(stage), "f" * 32)
    backwards = dict(reversed(list(COMMITTED.items())))
    assert compare_locks.compare(backwards, produced)[0] == []
