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


@pytest.fixture(scope="module")
def repo(tmp_path_factory) -> tuple[Path, dict]:
    dest = tmp_path_factory.mktemp("e2e") / "repo"
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
        "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@example.org", "GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@example.org",
    }
    _sh(["git", "init", "-q"], dest, env)
    return dest, env


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
