"""The whole DAG on a tiny configuration, and the re-run contract of a chunk.* change."""

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from tests.conftest import copy_repo

pytestmark = pytest.mark.slow

TINY = {
    "train_scorer": {"steps": 2},
    "generate": {"train_steps": 2, "max_inputs": 4, "max_new_tokens": 16},
    "evaluate": {"bootstrap": 50},
}
ALL_STAGES = ["download", "convert", "describe", "chunk", "embed", "rank", "train_scorer", "generate", "evaluate"]


def _sh(cmd, cwd, env):
    r = subprocess.run(cmd, cwd=cwd, env=env, capture_output=True, text=True)
    assert r.returncode == 0, f"{' '.join(cmd)} failed:\n{r.stdout[-3000:]}\n{r.stderr[-3000:]}"
    return r.stdout + r.stderr


def _ran(output: str) -> set[str]:
    return {m.split("@")[0] for m in re.findall(r"Running stage '([^']+)'", output)}


@pytest.fixture(scope="module")
def repo(tmp_path_factory) -> tuple[Path, dict]:
    return copy_repo(tmp_path_factory.mktemp("e2e") / "repo", TINY)


def test_repro_runs_every_stage_and_writes_metrics(repo):
    dest, env = repo
    out = _sh(["dvc", "repro"], dest, env)
    assert _ran(out) == set(ALL_STAGES)
    metrics = json.loads((dest / "metrics" / "embedded.json").read_text())
    assert set(metrics) >= {"triple", "head", "relation", "tail", "retrieval", "chunks", "data"}
    assert metrics["data"]["test_inputs"] == 4
    assert set(metrics["retrieval"]) == {"dense", "scorer"}
    assert 0.0 <= metrics["retrieval"]["dense"]["relation_hit@5"] <= 1.0
    assert (dest / "plots" / "embedded" / "summary.png").stat().st_size > 1000
    # Nothing half-written is left beside the outputs.
    assert not list((dest / "data").rglob(".*.*"))


def _outs(lock: Path) -> dict[str, str]:
    stages = yaml.safe_load(lock.read_text())["stages"]
    return {o["path"]: o["md5"] for st in stages.values() for o in st.get("outs", [])}


def test_a_second_clean_run_writes_identical_outputs(repo, tmp_path):
    # The committed dvc.lock and metrics/ are what a clean clone produces: every output of
    # every stage, training and generation included, byte for byte. Another hash seed
    # catches anything that depends on set or dict order; one thread instead of the machine's
    # count, anything that depends on how a product or a gradient is split between threads (a
    # CPU quota or a busy machine; MKL_CBWR's STRICT and determinism.TRAIN_THREADS).
    first, _ = repo
    second, env = copy_repo(tmp_path / "repo", TINY)
    one_thread = {"OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1"}
    _sh(["dvc", "repro"], second, {**env, "PYTHONHASHSEED": "12345", **one_thread})
    a, b = _outs(first / "dvc.lock"), _outs(second / "dvc.lock")
    assert a.keys() == b.keys() and len(a) >= len(ALL_STAGES)
    differ = sorted(k for k in a if a[k] != b[k])
    assert not differ, f"outputs differ between two clean runs: {differ}"
    assert (first / "metrics" / "embedded.json").read_bytes() == (second / "metrics" / "embedded.json").read_bytes()
    # Nor may an output name the machine it ran on: a clone elsewhere (CI, a colleague) has its
    # checkout and its virtual environment at other paths. (Both copies here share this venv.)
    places = [str(first).encode(), sys.prefix.encode(), str(Path(sys.prefix).resolve()).encode()]
    for f in (first / "data").rglob("*"):
        if f.is_file():
            body = f.read_bytes()
            assert not any(p in body for p in places), f"{f.relative_to(first)} records a local path"


def test_chunk_param_reruns_chunk_and_downstream_only(repo):
    dest, env = repo
    _sh(["git", "add", "-A"], dest, env)
    _sh(["git", "commit", "-qm", "baseline"], dest, env)
    out = _sh(["dvc", "exp", "run", "-S", "chunk.method=adaptive"], dest, env)
    assert _ran(out) == set(ALL_STAGES) - {"download", "convert", "describe"}
    diff = _sh(["dvc", "metrics", "diff", "--md"], dest, env)
    # Clause-level adaptive chunks are fewer and longer than five-word windows.
    assert "| Path" in diff and "chunks.count" in diff and "chunks.tokens_max" in diff


def test_unchanged_pipeline_is_up_to_date(repo):
    dest, env = repo
    # The default pipeline: the papers' (experiments/*/dvc.yaml) are not run here, and a copy
    # has none of their cached outputs.
    out = _sh(["dvc", "status", "dvc.yaml"], dest, env)
    assert "up to date" in out
