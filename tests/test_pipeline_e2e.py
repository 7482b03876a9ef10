"""The whole DAG on a tiny configuration, and the re-run contract of a chunk.* change."""

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from tests.conftest import ROOT

pytestmark = pytest.mark.slow

TINY = {
    "train_scorer": {"steps": 2},
    "generate": {"train_steps": 2, "max_inputs": 4, "max_new_tokens": 16},
    "evaluate": {"bootstrap": 50},
}
ALL_STAGES = ["download", "convert", "chunk", "embed", "rank", "train_scorer", "generate", "evaluate"]


def _sh(cmd, cwd, env):
    r = subprocess.run(cmd, cwd=cwd, env=env, capture_output=True, text=True)
    assert r.returncode == 0, f"{' '.join(cmd)} failed:\n{r.stdout[-3000:]}\n{r.stderr[-3000:]}"
    return r.stdout + r.stderr


def _ran(output: str) -> set[str]:
    return {m.split("@")[0] for m in re.findall(r"Running stage '([^']+)'", output)}


def _copy_repo(dest: Path) -> tuple[Path, dict]:
    """What a clean clone holds (tracked and new files, no lock, metrics or tests), tiny params."""
    listed = subprocess.run(
        ["git", "ls-files", "--cached", "--others", "--exclude-standard"], cwd=ROOT, capture_output=True, text=True, check=True
    ).stdout.split()
    for rel in listed:
        src = ROOT / rel
        if rel == "dvc.lock" or rel.startswith(("metrics/", "plots/", "tests/")) or not src.is_file():
            continue
        (dest / rel).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(src, dest / rel)
    params = yaml.safe_load((dest / "params.yaml").read_text())
    for section, values in TINY.items():
        params[section].update(values)
    (dest / "params.yaml").write_text(yaml.safe_dump(params, sort_keys=False))
    env = {
        **os.environ,
        "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}",
        "PYTHONPATH": str(dest),
        "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@example.org", "GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@example.org",
    }
    _sh(["git", "init", "-q"], dest, env)
    return dest, env


@pytest.fixture(scope="module")
def repo(tmp_path_factory) -> tuple[Path, dict]:
    return _copy_repo(tmp_path_factory.mktemp("e2e") / "repo")


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
    # catches anything that depends on set or dict order.
    first, _ = repo
    second, env = _copy_repo(tmp_path / "repo")
    _sh(["dvc", "repro"], second, {**env, "PYTHONHASHSEED": "12345"})
    a, b = _outs(first / "dvc.lock"), _outs(second / "dvc.lock")
    assert a.keys() == b.keys() and len(a) >= len(ALL_STAGES)
    differ = sorted(k for k in a if a[k] != b[k])
    assert not differ, f"outputs differ between two clean runs: {differ}"
    assert (first / "metrics" / "embedded.json").read_bytes() == (second / "metrics" / "embedded.json").read_bytes()


def test_chunk_param_reruns_chunk_and_downstream_only(repo):
    dest, env = repo
    _sh(["git", "add", "-A"], dest, env)
    _sh(["git", "commit", "-qm", "baseline"], dest, env)
    out = _sh(["dvc", "exp", "run", "-S", "chunk.method=adaptive"], dest, env)
    assert _ran(out) == set(ALL_STAGES) - {"download", "convert"}
    diff = _sh(["dvc", "metrics", "diff", "--md"], dest, env)
    # Clause-level adaptive chunks are fewer and longer than five-word windows.
    assert "| Path" in diff and "chunks.count" in diff and "chunks.tokens_max" in diff


def test_unchanged_pipeline_is_up_to_date(repo):
    dest, env = repo
    out = _sh(["dvc", "status"], dest, env)
    assert "up to date" in out
