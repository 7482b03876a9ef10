"""The bad-input corpus (benchmarks/bad_inputs.py): every user mistake ends in one clear line.

Each case asserts exit 2, exactly one `error:` line naming the file or key, no traceback
and nothing at the stage's declared outputs; the cases that must succeed (lines skipped
and counted, datasets without training judgements) assert exit 0 and their report.
Most run the stage's main in-process; a few run the real command line end to end.
"""

import sys

import pytest

from benchmarks.bad_inputs import CASES, prepare, run_case, score
from tests.conftest import ROOT
from tests.forked import run_python


def _expected(case) -> str:
    return "handled" if case.expect == "ok" else "clear"


def test_the_corpus_is_large_and_covers_every_group():
    assert len(CASES) >= 60 and len({c.id for c in CASES}) == len(CASES)
    assert {c.group for c in CASES} >= {"params", "models", "raw", "mirror", "inputs", "judgements", "outputs", "corpus", "flags"}


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_bad_input(case, tmp_path):
    if case.needs:
        pytest.importorskip(case.needs)
    outcome = run_case(case, tmp_path)
    assert outcome.kind == _expected(case), f"{outcome.kind}: {outcome.detail}\n{outcome.stderr[-3000:]}"


# One per group (issue 25's groups: one each of outputs, corpus, guards, flags), through
# `python stages/<stage>.py` as dvc runs it.
THROUGH_THE_CLI = [
    "nan-threshold-adaptive",
    "missing-rank-top-k",
    "embed-model-bad-hub-id",
    "bad-utf8",
    "mirror-tampered-sums-rewritten",
    "beir-without-train-qrels",
    "out-dot",
    "corpus-file-link-out",
    "duplicate-key",
    "bootstrap-negative",
]


@pytest.mark.parametrize("case_id", THROUGH_THE_CLI)
def test_bad_input_through_the_command_line(case_id, tmp_path):
    (case,) = [c for c in CASES if c.id == case_id]
    argv = prepare(case, tmp_path / case.id)
    # A case whose bug would empty the working directory runs in its own folder (Case.cwd).
    cwd = ROOT if case.cwd == "root" else tmp_path / case.id
    r = run_python([sys.executable, *argv], cwd)
    outcome = score(case, tmp_path / case.id, r.returncode, r.stderr)
    assert outcome.kind == _expected(case), f"{outcome.kind}: {outcome.detail}\n{r.stderr[-3000:]}"
    if case.expect != "ok":
        assert r.stderr.strip().splitlines()[-1].startswith("error: ")
