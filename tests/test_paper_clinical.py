"""benchmarks/papers/clinical.py: a wrong flag stops it with one line before any work; the
non-response run's params."""

import argparse
import subprocess
import sys

import pytest
import yaml

from tests.conftest import ROOT

SCRIPT = ROOT / "benchmarks" / "papers" / "clinical.py"


@pytest.mark.parametrize(
    "args,message",
    [
        (["--settings", "fixed,nope"], "error: --settings: unknown setting 'nope'; known: fixed, cluster"),
        (["--retrievers", "splade"], "error: --retrievers: unknown retriever 'splade'; known: dense, bm25"),
        (["--max-questions", "0"], "error: --max-questions must be >= 1, got 0"),
        (["--k", "10"], "error: --k: the paper's figures are at k = 5"),
        (
            ["--parts", "retrieval,tables"],
            "error: --parts: unknown part 'tables'; known: retrieval, proposition, headers, non-response",
        ),
        (["--answer-questions", "0"], "error: --answer-questions must be >= 1, got 0"),
        (["--proposition-articles", "-1"], "error: --proposition-articles must be >= 1, got -1"),
    ],
)
def test_bad_flags_give_one_line(tmp_path, args, message):
    r = subprocess.run(
        [sys.executable, str(SCRIPT), "--data", str(tmp_path), "--out", str(tmp_path / "out"), *args],
        capture_output=True, text=True, cwd=ROOT, check=False,
    )  # fmt: skip
    assert r.returncode == 2 and r.stderr.startswith(message) and "Traceback" not in r.stderr, r.stderr[-2000:]
    assert not (tmp_path / "out").exists()


def test_missing_data_is_named(tmp_path):
    r = subprocess.run(
        [sys.executable, str(SCRIPT), "--data", str(tmp_path / "none")], capture_output=True, text=True, cwd=ROOT, check=False
    )
    assert r.returncode == 2 and "--data: no documents.parquet in" in r.stderr and "Traceback" not in r.stderr


def test_non_response_run_params_answer_every_method_with_decline_allowed(tmp_path):
    from benchmarks.papers.clinical import ANSWER_ARMS, ANSWER_METHODS, answer_params
    from biochunk import params
    from biochunk.retrieval.contexts import arms

    pf = tmp_path / "params.yaml"
    pf.write_text(yaml.safe_dump(answer_params(argparse.Namespace(params=ROOT / "params.yaml", answer_questions=100))))
    qa = params.load(pf)["qa"]
    assert qa.decline and qa.max_questions == 100 and qa.corpus == "sampled"
    assert arms(qa.contexts, qa.methods) == list(ANSWER_ARMS) and qa.methods == ANSWER_METHODS  # every arm has a row
