"""The embed stage writes the same bytes whatever the thread count and the machine's load.

A fresh clone on a loaded two-core machine once wrote `data/embed` vectors whose hashes
differed from the committed lock (issue 25): MKL split each matrix product's reduction by
thread, so a run that got one thread (a CPU quota, ``taskset``, ``OMP_NUM_THREADS=1``)
rounded differently from a run with two. ``import biochunk`` now asks MKL for its strict
conditional-numerical-reproducibility mode (``MKL_CBWR=<branch>,STRICT``, biochunk/numerics.py). This runs the real
stage on the embedded dataset's chunks with one, two and three threads, the last beside
two processes that keep both cores busy, and requires identical output files.
"""

import hashlib
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import ROOT

pytestmark = pytest.mark.slow

BUSY = "import time\nend = time.time() + 600\nwhile time.time() < end: pass\n"


def _stage(script: str, *args: str, env: dict[str, str]) -> None:
    r = subprocess.run([sys.executable, str(ROOT / "stages" / script), *args], cwd=ROOT, env=env, capture_output=True, text=True)
    assert r.returncode == 0, f"{script} failed:\n{r.stderr[-3000:]}"


def _digest(folder: Path) -> dict[str, str]:
    return {p.name: hashlib.sha256(p.read_bytes()).hexdigest() for p in sorted(folder.iterdir())}


@pytest.fixture(scope="module")
def chunks(tmp_path_factory) -> tuple[Path, dict[str, str]]:
    d = tmp_path_factory.mktemp("threads")
    # The stages import this checkout's library; a user's MKL_CBWR would override the pin.
    env = {k: v for k, v in os.environ.items() if k not in ("MKL_CBWR", "OMP_NUM_THREADS", "MKL_NUM_THREADS")}
    env["PYTHONPATH"] = str(ROOT)
    params = ("--params", str(ROOT / "params.yaml"))
    _stage("download.py", "--dataset", "embedded", "--out", str(d / "raw"), *params, env=env)
    _stage("convert.py", "--dataset", "embedded", "--raw", str(d / "raw"), "--out", str(d / "interim"), *params, env=env)
    _stage("chunk.py", "--dataset", "embedded", "--train", str(d / "interim" / "train.parquet"), "--out", str(d / "chunks"), *params, env=env)
    return d, env


def _embed(d: Path, env: dict[str, str], threads: int, out: str) -> dict[str, str]:
    args = ("--chunks", str(d / "chunks" / "chunks.parquet"), "--data", str(d / "interim"))
    args += ("--config", str(ROOT / "configs" / "embedded.yaml"), "--out", str(d / out), "--params", str(ROOT / "params.yaml"))
    _stage("embed.py", *args, env={**env, "OMP_NUM_THREADS": str(threads), "MKL_NUM_THREADS": str(threads)})
    return _digest(d / out)


def test_embed_vectors_do_not_depend_on_threads_or_load(chunks):
    d, env = chunks
    one = _embed(d, env, 1, "one")
    two = _embed(d, env, 2, "two")
    busy = [subprocess.Popen([sys.executable, "-c", BUSY]) for _ in range(2)]
    try:
        loaded = _embed(d, env, 3, "loaded")
    finally:
        for p in busy:
            p.kill()
            p.wait()
    assert set(one) == {"vectors.parquet", "chunks.faiss"}
    assert one == two, "one thread and two threads wrote different embed outputs"
    assert one == loaded, "a run beside two busy processes wrote different embed outputs"
