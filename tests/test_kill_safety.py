"""Kill safety, proven: a stage killed inside its atomic-write window leaves no partial output,
and the next `dvc repro` recovers with valid outputs and no leftover temporary files.

The kill comes from the fault hook in ``biochunk.io.atomic_path`` (``BIOCHUNK_FAULT=
kill-before-rename:<path>``): the process exits 137 as SIGKILL would, after the temporary
output is complete and before it is renamed, the worst moment. Cheapest stages only
(download, convert, chunk on the embedded dataset), in a temporary copy of the repository.
"""

import subprocess
from pathlib import Path

import pyarrow.parquet as pq
import pytest
import yaml

from biochunk.io import FAULT_ENV
from tests.conftest import copy_repo

pytestmark = pytest.mark.slow


def _dvc(dest: Path, env: dict, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run(["dvc", *args], cwd=dest, env=env, capture_output=True, text=True)


def _temps(root: Path) -> list[Path]:
    return [p for p in root.rglob(".*.tmp")]


@pytest.fixture
def repo(tmp_path) -> tuple[Path, dict]:
    return copy_repo(tmp_path / "repo")


def test_a_stage_killed_before_its_rename_recovers_on_the_next_repro(repo):
    dest, env = repo
    interim = dest / "data" / "interim" / "embedded"

    # 1. convert dies with its complete output still in the temporary sibling.
    killed = _dvc(dest, {**env, FAULT_ENV: "kill-before-rename:data/interim/embedded"}, "repro", "convert@embedded")
    assert killed.returncode != 0, killed.stdout + killed.stderr
    assert (dest / "data" / "raw" / "embedded" / "train.jsonl").is_file()  # download finished before
    assert not interim.exists()  # nothing at the declared output
    (stale,) = _temps(dest / "data")
    assert stale.parent == interim.parent and sorted(p.name for p in (stale / "embedded").iterdir()) == [
        "dev.parquet",
        "report.json",
        "test.parquet",
        "train.parquet",
    ]  # fmt: skip  (the kill came after the temporary output was complete)

    # 2. The next repro reruns convert, writes valid outputs and removes the stale sibling.
    ok = _dvc(dest, env, "repro", "chunk@embedded")
    assert ok.returncode == 0, ok.stdout + ok.stderr
    assert pq.read_table(interim / "train.parquet").num_rows > 0
    chunks = dest / "data" / "chunks" / "embedded" / "chunks.parquet"
    before = pq.read_table(chunks)
    assert before.num_rows > 0 and not _temps(dest / "data")

    # 3. A killed rerun of a stage whose output already exists: never a partial output.
    params = yaml.safe_load((dest / "params.yaml").read_text())
    params["chunk"]["window"] = 7
    (dest / "params.yaml").write_text(yaml.safe_dump(params, sort_keys=False))
    killed = _dvc(dest, {**env, FAULT_ENV: "kill-before-rename:data/chunks/embedded"}, "repro", "chunk@embedded")
    assert killed.returncode != 0
    # DVC removes a stage's outputs before running it; either way no half-written file remains.
    assert not chunks.exists() or pq.read_table(chunks).equals(before)
    assert len(_temps(dest / "data")) == 1

    ok = _dvc(dest, env, "repro", "chunk@embedded")
    assert ok.returncode == 0, ok.stdout + ok.stderr
    after = pq.read_table(chunks).to_pandas()
    assert after["n_tokens"].max() == 7 and not _temps(dest / "data")
    assert "up to date" in _dvc(dest, env, "status", "chunk@embedded").stdout
