"""Every param a stage declares has a knob or an inert reason (tests/knobs.py's table against
dvc.yaml), and the chunk stage warns about a key its method does not read. The knobs' end-to-end
cases are in tests/test_knobs_<branch>.py."""

from __future__ import annotations

import hashlib
import subprocess

import pytest

from biochunk import params as P
from biochunk.errors import UserError
from tests.conftest import ROOT, copy_repo
from tests.knobs import BRANCHES, EXECUTION, HYBRID_ONLY, INERT, KNOBS, _sh, declared


def test_every_declared_param_has_a_knob_or_a_reason():
    for stage, keys in declared().items():
        knobs, inert = set(KNOBS.get(stage, {})), set(INERT.get(stage, {}))
        assert not knobs & inert, f"{stage}: {sorted(knobs & inert)} both a knob and inert"
        assert keys == knobs | inert, (
            f"{stage}: dvc.yaml declares {sorted(keys - knobs - inert)} without a knob or an inert reason here; "
            f"{sorted((knobs | inert) - keys)} are not declared"
        )


def test_every_knob_and_execution_check_runs_in_one_branch_module():
    ran = [s for stages in BRANCHES.values() for s in stages]
    assert len(ran) == len(set(ran)), f"a stage is in two branches: {ran}"
    missing = (set(KNOBS) | {e[0] for e in EXECUTION}) - set(ran)
    assert not missing, f"{sorted(missing)}: no branch of tests/knobs.py's BRANCHES runs their cases"
    for branch in BRANCHES:
        module = ROOT / "tests" / f"test_knobs_{branch}.py"
        assert f'branch_tests("{branch}")' in module.read_text(), f"{module} does not run branch_tests({branch!r})"


def test_each_chunk_knob_is_tried_under_a_method_that_reads_it():
    # The end-to-end cases (tests/test_knobs_triple.py) prove params.CHUNK_READS' entries live; the chunk stage warns
    # about a change to any key outside them (test_dvc_exp_run_of_a_key_the_method_does_not_read_...).
    for key, knob in KNOBS["chunk"].items():
        if not key.startswith("chunk."):
            continue
        setting = {k.removeprefix("chunk."): v for k, v in knob.setting.items() if k.startswith("chunk.")}
        cp = P.defaults("chunk", **{"method": "fixed", **setting})
        assert key.removeprefix("chunk.") in cp.reads(), f"{key} is tried under chunk.method {cp.method}, which does not read it"


def test_the_chunk_keys_inert_in_retrieve_belong_to_a_method_it_rejects():
    # INERT's reason for HYBRID_ONLY in retrieve: hybrid alone reads them, and neither method list takes it.
    assert HYBRID_ONLY and set(HYBRID_ONLY) <= set(INERT["retrieve"])
    for key in ("bm25_methods", "dense_methods"):
        with pytest.raises(UserError, match=f"retrieve.{key}: unknown value 'hybrid'"):
            P.section("retrieve", data={"retrieve": {key: ["hybrid"]}})
        assert getattr(P.section("retrieve", data={"retrieve": {key: ["fixed"]}}), key) == ["fixed"]  # the method, not the list


@pytest.mark.slow
def test_dvc_exp_run_of_a_key_the_method_does_not_read_warns_and_leaves_the_chunks(tmp_path):
    """`dvc exp run -S chunk.threshold=…` under chunk.method fixed re-runs the chunk stage for
    nothing; the stage says so (against the params dvc.lock recorded), and only then."""
    dest, env = copy_repo(tmp_path / "repo")
    chunks = dest / "data/chunks/embedded/chunks.parquet"
    _sh(["dvc", "repro", "chunk@embedded"], dest, env)
    _sh(["git", "add", "-A"], dest, env)
    _sh(["git", "commit", "-qm", "baseline"], dest, env)
    before = hashlib.md5(chunks.read_bytes()).hexdigest()
    threshold = P.section("chunk", dest / "params.yaml").threshold

    def exp_run(setting: str) -> str:
        cmd = ["dvc", "exp", "run", "-S", setting, "chunk@embedded"]
        r = subprocess.run(cmd, cwd=dest, env=env, capture_output=True, text=True)
        assert r.returncode == 0, r.stderr[-3000:]
        assert "Running stage 'chunk@embedded'" in r.stdout + r.stderr, "DVC did not re-run the stage"
        return r.stdout + r.stderr

    out = exp_run("chunk.threshold=0.5")
    assert f"chunk.threshold changed since this stage last ran ({threshold!r} -> 0.5)" in out, out[-2000:]
    assert "chunk.method fixed does not read it" in out
    assert hashlib.md5(chunks.read_bytes()).hexdigest() == before
    out = exp_run("chunk.window=7")  # fixed's own key: no warning, other chunks
    assert "does not read it" not in out, out[-2000:]
    assert hashlib.md5(chunks.read_bytes()).hexdigest() != before
