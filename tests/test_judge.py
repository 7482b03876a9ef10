"""The LLM-judge proxy of the clinical study's clinician ratings (biochunk.evaluation.judge,
stages/judge_qa.py): the rubric is the paper's words, a rating is read only where the reply
gives one, every unparseable reply is kept and counted, and the stage writes what the report
reads (with a scripted model here; with the offline SmolLM2-135M in the slow test)."""

from __future__ import annotations

import importlib.util
import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest
import yaml

from biochunk.errors import UserError
from biochunk.evaluation import judge
from biochunk.generation.model import LoadedLM
from biochunk.io import QA_ANSWERS, QA_SAMPLE, read_json, read_table, write_table
from tests.conftest import ROOT
from tests.forked import run_python

PAPER = ROOT.parent / "shared" / "papers" / "001_88a13a60ea369314.txt"
CLINICAL = ROOT / "experiments" / "clinical"


# -- the rubric ---------------------------------------------------------------------------------


def test_the_rubric_is_the_papers_words_in_the_papers_order():
    for scale in judge.SCALES.values():
        at = [scale.quote.index(a) for a in scale.anchors]  # each anchor is a phrase of the quote
        assert at == sorted(at), f"{scale.name}: anchors out of the paper's order"
        system = judge.system_message(scale)
        for i, anchor in enumerate(scale.anchors, 1):
            assert f"{i}: {anchor}\n" in system
        assert scale.name in system and system.endswith("Reply with one digit: 1, 2 or 3.")
    if PAPER.is_file():
        line = " ".join(PAPER.read_text(encoding="utf-8").splitlines()[113].split())  # §2.3, line 114
        assert all(" ".join(s.quote.split()) in line for s in judge.SCALES.values())


def test_the_user_turn_gives_question_references_and_answer():
    text = judge.user_message("What lowers fever?", [" aspirin ", "", "paracetamol"], "Aspirin does.")
    assert text == "Question: What lowers fever?\nReference answer: aspirin | paracetamol\nAnswer to rate: Aspirin does.\n\nRating (1, 2 or 3):"
    assert f"Answer to rate: {judge.NO_ANSWER}" in judge.user_message("q", ["r"], "  ")
    assert "Reference answer: (none)" in judge.user_message("q", [], "a")


# -- parsing ------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "raw,rating",
    [
        ("3", 3), (" 2\n", 2), ("1.", 1), ("Rating: 1", 1), ("rating is 3", 3), ("**3**", 3), ("Score = 2/3", 2),
        ("3 - fully accurate", 3), ("Medical accuracy: 2", 2), ("Clinical relevance - 3", 3), ('"2"', 2), ("(1)", 1),
        ("", None), ("4", None), ("0", None), ("10", None), ("2.5", None), ("The answer is accurate.", None),
        ("I would rate it 3", None), ("Rating:", None), ("Answer: 3", None), ("1. The median", None), ("2) yes", None),
        ("3.\n", 3), ("3 out of 3", 3),
    ],
)  # fmt: skip
def test_a_rating_is_read_only_where_the_reply_opens_with_one(raw, rating):
    assert judge.parse_rating(raw) == rating


# -- the table of answers to rate ----------------------------------------------------------------


def _questions() -> pd.DataFrame:
    rows = [
        ("q2", "test", "extractive", "What removes the virus?", ["hand washing"], ["d2"], "", "answer"),
        ("q1", "test", "extractive", "What lowers fever?", ["aspirin"], ["d1"], "", "answer"),
        ("e1", "dev", "extractive", "What helps?", ["distance"], ["d3"], "", "example"),
    ]
    return pd.DataFrame(rows, columns=QA_SAMPLE.names)


def _answers(pairs: list[tuple[str, str, str]]) -> pd.DataFrame:
    return pd.DataFrame(
        [(q, m, "ctx", "prompt", a, a, "") for q, m, a in pairs], columns=QA_ANSWERS.names
    )


ANSWERS = [("q1", "fixed", "Aspirin."), ("q2", "fixed", ""), ("q1", "adaptive", "Aspirin lowers fever."), ("q2", "adaptive", "Washing.")]


def test_items_are_every_arms_answer_in_arm_then_question_order():
    got = judge.items(_questions(), _answers(ANSWERS), ["adaptive", "fixed"])
    assert list(zip(got["method"], got["question_id"])) == [("adaptive", "q1"), ("adaptive", "q2"), ("fixed", "q1"), ("fixed", "q2")]
    assert got["references"].tolist()[0] == ["aspirin"] and got["question"].tolist()[1] == "What removes the virus?"
    assert got["answer"].tolist()[3] == ""


@pytest.mark.parametrize(
    "answers,needle",
    [
        (ANSWERS + [("e1", "fixed", "x")], "did not ask (e.g. 'e1')"),  # an example is never answered
        (ANSWERS + [("q1", "gold", "x")], "arm 'gold', which qa_context did not build"),
        (ANSWERS + [("q1", "fixed", "again")], "two answers of arm 'fixed' to question 'q1'"),
    ],
)
def test_answers_that_do_not_match_the_questions_stop_with_one_line(answers, needle):
    with pytest.raises(UserError) as e:
        judge.items(_questions(), _answers(answers), ["fixed", "adaptive"])
    assert needle in str(e.value)


class PlainTokenizer:
    """A tokenizer without a chat template: generation.qa.render writes the turns as labelled text."""

    chat_template = None


def test_prompts_share_the_rubric_as_prefix_and_differ_in_the_user_turn():
    rated = judge.items(_questions(), _answers(ANSWERS), ["fixed", "adaptive"])
    for scale in judge.SCALES.values():
        prefix, suffixes = judge.prompts(PlainTokenizer(), scale, rated)
        assert prefix == f"System: {judge.system_message(scale)}\n\n"
        assert len(suffixes) == len(rated) and all(s.startswith("User: Question: ") and s.endswith("Assistant: Rating: ") for s in suffixes)
        assert "Answer to rate: (no answer)" in suffixes[1]


def test_ratings_keep_every_reply_and_count_the_unparseable():
    rated = judge.items(_questions(), _answers(ANSWERS), ["fixed", "adaptive"])
    raw = {"accuracy": ["3", "Rating: 1", "maybe", "2"], "relevance": ["3", "3", "3", ""]}
    table = judge.ratings(rated, raw)
    assert len(table) == 8 and table["rating"].isna().sum() == 2
    assert table["raw_output"].tolist()[:4] == raw["accuracy"]
    assert judge.counts(table) == {
        "fixed": {"accuracy": {"rated": 2, "unparseable": 0}, "relevance": {"rated": 2, "unparseable": 0}},
        "adaptive": {"accuracy": {"rated": 1, "unparseable": 1}, "relevance": {"rated": 1, "unparseable": 1}},
    }
    with pytest.raises(ValueError, match="3 replies for 4 answers"):
        judge.ratings(rated, {"accuracy": ["1", "2", "3"]})


# -- the stage ----------------------------------------------------------------------------------


def _inputs(tmp_path: Path, arms: list[str], answers: list[tuple[str, str, str]]) -> tuple[Path, Path]:
    qa, ans = tmp_path / "qa", tmp_path / "answers"
    qa.mkdir()
    ans.mkdir()
    write_table(_questions(), qa / "questions.parquet", QA_SAMPLE)
    (qa / "report.json").write_text(json.dumps({"arms": arms}))
    write_table(_answers(answers), ans / "answers.parquet", QA_ANSWERS)
    (ans / "report.json").write_text(json.dumps({"model": "smollm2-135m"}))
    return qa, ans


def _stage_module():
    spec = importlib.util.spec_from_file_location("judge_qa_stage", ROOT / "stages" / "judge_qa.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_the_stage_rates_every_answer_on_both_scales_with_a_scripted_model(tmp_path, monkeypatch):
    """The stage end to end, its model replaced by a script: a reply per prompt as the generator
    returns them, the rubric in the shared prefix, the unparseable reply kept and counted."""
    qa, ans = _inputs(tmp_path, ["fixed", "adaptive", "none"], ANSWERS)
    stage = _stage_module()
    calls = []

    def generate(lm, prefix, suffixes, max_new_tokens, batch_size, temperature=0.0, seed=0):
        calls.append((prefix, list(suffixes), max_new_tokens, batch_size))
        return ["Rating: 1" if "(no answer)" in s else "fine" if "Washing." in s else "3" for s in suffixes]

    monkeypatch.setattr(stage, "load_causal_lm", lambda name, param, quantize: LoadedLM(None, PlainTokenizer(), "cpu", False, name))
    monkeypatch.setattr(stage.generator, "generate", generate)
    out = tmp_path / "judge"
    monkeypatch.setattr(sys, "argv", ["judge_qa.py", "--qa", str(qa), "--answers", str(ans), "--out", str(out),
                                      "--model", "smollm2-135m", "--max-new-tokens", "5", "--batch-size", "2"])  # fmt: skip
    stage.main()
    assert [c[0] for c in calls] == [f"System: {judge.system_message(s)}\n\n" for s in judge.SCALES.values()]
    assert all((c[2], c[3]) == (5, 2) and len(c[1]) == 4 for c in calls)
    table = read_table(out / "ratings.parquet", judge.RATINGS)
    assert len(table) == 8 and set(table["scale"]) == set(judge.SCALES)
    by = table.set_index(["scale", "method", "question_id"])["rating"]
    assert by["accuracy", "fixed", "q2"] == 1 and by["relevance", "adaptive", "q1"] == 3 and pd.isna(by["accuracy", "adaptive", "q2"])
    report = read_json(out / "report.json")
    assert report["arms"] == ["fixed", "adaptive"]  # the arms answered, in qa_context's order
    assert (report["questions"], report["answers"], report["replies"], report["unparseable"]) == (2, 4, 8, 2)
    assert report["counts"]["adaptive"]["relevance"] == {"rated": 1, "unparseable": 1}
    assert report["rubric"] == {n: judge.system_message(s) for n, s in judge.SCALES.items()}
    assert report["model"] == "smollm2-135m" and report["generator"] == "smollm2-135m" and report["max_new_tokens"] == 5


def _run(*args: str) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": str(ROOT), "OMP_NUM_THREADS": "1"}
    return subprocess.run([sys.executable, str(ROOT / "stages" / "judge_qa.py"), *args], cwd=ROOT, env=env, capture_output=True, text=True)


@pytest.mark.parametrize(
    "extra,needle",
    [
        (["--max-new-tokens", "0"], "judge.max_new_tokens must be a whole number of at least 1, got '0'"),
        (["--batch-size", "x"], "judge.batch_size must be a whole number of at least 1"),
        (["--quantize", "int8"], "argument --quantize: invalid choice"),
        (["--model", "./no/such/model"], "judge.model: local path ./no/such/model does not exist"),
    ],
)
def test_bad_judge_settings_end_in_one_line_before_any_work(tmp_path, extra, needle):
    qa, ans = _inputs(tmp_path, ["fixed", "adaptive"], ANSWERS)
    args = ["--qa", str(qa), "--answers", str(ans), "--out", str(tmp_path / "out"), "--model", "smollm2-135m", *extra]
    r = run_python([sys.executable, str(ROOT / "stages" / "judge_qa.py"), *args], ROOT)
    lines = [x for x in r.stderr.splitlines() if x.strip() and not x.startswith("usage")]
    assert r.returncode == 2 and len(lines) == 1 and needle in lines[0], r.stderr
    assert not (tmp_path / "out").exists()


@pytest.mark.slow
def test_the_stage_with_the_offline_smollm2_writes_a_rating_or_a_counted_miss_per_reply(tmp_path):
    qa, ans = _inputs(tmp_path, ["fixed", "adaptive"], ANSWERS)
    out = tmp_path / "judge"
    r = _run("--qa", str(qa), "--answers", str(ans), "--out", str(out), "--model", "smollm2-135m", "--batch-size", "4")
    assert r.returncode == 0, r.stderr[-3000:]
    table = read_table(out / "ratings.parquet", judge.RATINGS)
    assert len(table) == 2 * len(ANSWERS)
    assert set(table["rating"].dropna()) <= {1, 2, 3}
    assert [judge.parse_rating(x) for x in table["raw_output"]] == [None if pd.isna(v) else v for v in table["rating"]]
    report = read_json(out / "report.json")
    assert report["unparseable"] == int(table["rating"].isna().sum())
    assert sum(c["rated"] + c["unparseable"] for arm in report["counts"].values() for c in arm.values()) == len(table)


# -- its place in the pipeline ----------------------------------------------------------------


def test_the_judge_is_a_vars_file_every_key_of_which_reaches_the_stage():
    """judge.yaml is a params file as any (no anchors, no duplicate keys), a vars file of the
    clinical dvc.yaml, and every key of its judge section is a flag of judge_qa's command, which
    declares the section under its params (so -S judge.yaml:judge.model=... re-runs it)."""
    from biochunk import params

    text = (CLINICAL / "judge.yaml").read_text()
    data = params.parse_yaml_text(text, "judge.yaml")
    assert data == yaml.safe_load(text) and list(data) == ["judge"]
    dvc = yaml.safe_load((CLINICAL / "dvc.yaml").read_text())
    assert "judge.yaml" in dvc["vars"]
    stage = dvc["stages"]["judge_qa"]
    used = re.findall(r"--([a-z-]+) \$\{judge\.([a-z_]+)\}", stage["cmd"])
    assert sorted(k for _, k in used) == sorted(data["judge"]) and all(f == k.replace("_", "-") for f, k in used)
    assert stage["params"] == [{"experiments/clinical/judge.yaml": ["judge"]}]
    assert data["judge"]["model"] == "smollm2-135m"  # the offline default: the pipeline runs without network
