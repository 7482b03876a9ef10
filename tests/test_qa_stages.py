"""The QA and classification stages end to end on tiny written fixtures (real models, CPU)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest
import yaml

from biochunk.generation.qa import DECLINE_REPLY, SYSTEM_QA, system_qa
from biochunk.io import ANSWERS, CHUNKS, CLASSIFICATION, DOCUMENTS, QA_ANSWERS, QA_CONTEXTS, QA_SAMPLE, read_table, write_table
from tests.conftest import ROOT, assert_metrics_diff_pairs

pytestmark = pytest.mark.slow

FACTS = [
    ("Aspirin", "inhibits cyclooxygenase and reduces fever"),
    ("Metformin", "lowers hepatic glucose production in type 2 diabetes"),
    ("Remdesivir", "is a nucleotide analogue that blocks the viral polymerase"),
    ("Ivermectin", "is an antiparasitic drug used against river blindness"),
    ("Insulin", "is a hormone that lets cells take up glucose"),
    ("Penicillin", "kills bacteria by blocking cell wall synthesis"),
    ("Heparin", "is an anticoagulant given to prevent thrombosis"),
    ("Statins", "lower cholesterol by inhibiting HMG-CoA reductase"),
    ("Warfarin", "is a vitamin K antagonist used to prevent clots"),
    ("Oseltamivir", "inhibits influenza neuraminidase"),
]


def _run(script: str, *args: str, cwd: Path) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": str(ROOT), "OMP_NUM_THREADS": "1"}
    r = subprocess.run([sys.executable, str(ROOT / "stages" / script), *args], cwd=cwd, env=env, capture_output=True, text=True)
    assert r.returncode == 0, r.stderr[-3000:]
    return r


@pytest.fixture
def covidqa_like(tmp_path: Path) -> Path:
    data = tmp_path / "interim"
    docs, answers = [], []
    for i, (drug, fact) in enumerate(FACTS):
        text = f"{drug} overview.\n{drug} {fact}. It was studied in several trials. Side effects were reported rarely."
        docs.append({"doc_id": str(i), "title": drug, "text": text, "sections": [], "paragraphs": []})
        span = f"{drug} {fact}"
        start = text.index(span)
        answers.append(
            {
                "question_id": f"q{i}",
                "doc_id": str(i),
                "question": f"What does {drug} do?",
                "answer_text": span,
                "start": start,
                "end": start + len(span),
            }
        )
    write_table(pd.DataFrame(docs), data / "documents.parquet", DOCUMENTS)
    write_table(pd.DataFrame(answers), data / "answers.parquet", ANSWERS)
    return data


def _params(tmp_path: Path, **sections) -> Path:
    base = yaml.safe_load((ROOT / "params.yaml").read_text())
    for name, values in sections.items():
        base[name].update(values)
    tmp_path.mkdir(exist_ok=True)
    p = tmp_path / "params.yaml"
    p.write_text(yaml.safe_dump(base, sort_keys=False))
    return p


def test_qa_stages_write_contexts_answers_metrics_and_the_comparison(tmp_path, covidqa_like):
    params = _params(
        tmp_path,
        qa={
            "methods": ["fixed", "recursive"],
            "max_questions": 4,
            "max_new_tokens": 8,
            "n_examples": 1,
            "top_k": 3,
            "context_words": 30,
        },
        evaluate={"bootstrap": 50},
    )
    p = ["--params", str(params)]
    _run("qa_context.py", "--dataset", "covidqa", "--data", str(covidqa_like), "--out", "qa", *p, cwd=tmp_path)
    questions = read_table(tmp_path / "qa" / "questions.parquet", QA_SAMPLE)
    answered, examples = questions[questions["role"] == "answer"], questions[questions["role"] == "example"]
    assert len(answered) == 4 and set(examples["split"]) == {"dev"} and set(answered["split"]) == {"test"}
    contexts = read_table(tmp_path / "qa" / "contexts.parquet", QA_CONTEXTS)
    assert set(contexts["method"]) == {"fixed", "recursive"} and contexts["rank"].max() == 3

    _run("generate_qa.py", "--qa", "qa", "--out", "answers", *p, cwd=tmp_path)
    answers = read_table(tmp_path / "answers" / "answers.parquet", QA_ANSWERS)
    assert len(answers) == 8  # 4 questions x 2 methods
    assert all(pr.startswith("<|im_start|>system\n") for pr in answers["prompt"])
    assert all(pr.count("<|im_start|>assistant") == 2 for pr in answers["prompt"])  # one example + the question
    # qa.decline reaches the model: the same questions, the permission to decline in the prompt.
    declining = _params(tmp_path / "decline", qa={**yaml.safe_load(params.read_text())["qa"], "decline": True})
    _run("generate_qa.py", "--qa", "qa", "--out", "answers-decline", "--params", str(declining), cwd=tmp_path)
    allowed = read_table(tmp_path / "answers-decline" / "answers.parquet", QA_ANSWERS)
    assert list(allowed["question_id"]) == list(answers["question_id"])
    assert not answers["prompt"].str.contains(DECLINE_REPLY, regex=False).any()
    assert all(b == a.replace(SYSTEM_QA, system_qa(True), 1) for a, b in zip(answers["prompt"], allowed["prompt"]))

    _run(
        "evaluate_qa.py", "--dataset", "covidqa", "--qa", "qa", "--answers", "answers", "--metrics", "m.json",
        "--report", "report", "--plots", "plots", *p, cwd=tmp_path,
    )  # fmt: skip
    metrics = json.loads((tmp_path / "m.json").read_text())
    for method in ("fixed", "recursive"):
        m = metrics[method]
        for key in ("rouge2_f1", "rougesu4_f1", "bertscore_f1", "gold_doc_hit@1", "declined"):
            assert m[f"{key}_ci_low"] <= m[key] <= m[f"{key}_ci_high"]
    assert set(metrics["anova"]) == {"rouge2_f1", "rougesu4_f1", "bertscore_f1"}
    # A pull-request diff pairs each method's ROUGE-2 change over these questions.
    rouge2 = {f"{m}.rouge2_f1": metrics[m]["rouge2_f1"] for m in ("fixed", "recursive")}
    assert_metrics_diff_pairs(tmp_path / "report" / "scores.csv", "metrics/qa-covidqa.json", rouge2)
    md = (tmp_path / "report" / "comparison.md").read_text()
    assert "One-way ANOVA" in md and "Tukey HSD" in md
    assert (tmp_path / "plots" / "summary.png").stat().st_size > 5000
    assert set(pd.read_csv(tmp_path / "plots" / "f1.csv")["metric"]) == {"rouge2_f1", "rougesu4_f1", "bertscore_f1"}


def test_the_four_context_arms_reach_the_model_through_the_same_stages(tmp_path, covidqa_like):
    params = _params(
        tmp_path,
        qa={"methods": ["fixed"], "contexts": ["retrieved", "reshaped", "gold", "none"], "max_questions": 4,
            "max_new_tokens": 4, "n_examples": 1, "top_k": 3, "context_words": 40},
        reshape={"passages": 3, "top_m": 2, "keep": 2},
        evaluate={"bootstrap": 50},
    )  # fmt: skip
    p = ["--params", str(params)]
    _run("qa_context.py", "--dataset", "covidqa", "--data", str(covidqa_like), "--out", "qa", *p, cwd=tmp_path)
    report = json.loads((tmp_path / "qa" / "report.json").read_text())
    assert report["arms"] == ["fixed", "reshaped", "gold", "none"]
    chunks = read_table(tmp_path / "qa" / "chunks.parquet", CHUNKS).set_index("chunk_id")
    docs = read_table(covidqa_like / "documents.parquet", DOCUMENTS).set_index("doc_id")["text"]
    for cid, c in chunks.iterrows():  # every arm's chunks point back to exact characters
        if c["method"] == "reshaped":
            spans = json.loads(c["metadata"])["spans"]
            assert c["text"] == " ".join(docs[d][a:b] for d, a, b in spans)
        else:
            assert docs[c["doc_id"]][c["start"] : c["end"]] == c["text"], cid

    _run("generate_qa.py", "--qa", "qa", "--out", "answers", *p, cwd=tmp_path)
    answers = read_table(tmp_path / "answers" / "answers.parquet", QA_ANSWERS)
    assert sorted(answers["method"].unique()) == ["fixed", "gold", "none", "reshaped"] and len(answers) == 16
    none = answers[answers["method"] == "none"]
    assert (none["context"] == "").all() and not none["prompt"].str.contains("Context:").any()
    for arm in ("fixed", "reshaped", "gold"):
        got = answers[answers["method"] == arm]
        assert (got["context"] != "").all() and all(c in pr for c, pr in zip(got["context"], got["prompt"]))
    assert answers.groupby("question_id")["context"].nunique().min() >= 3, "the arms give the model different contexts"

    _run(
        "evaluate_qa.py", "--dataset", "covidqa", "--qa", "qa", "--answers", "answers", "--metrics", "m.json",
        "--report", "report", "--plots", "plots", *p, cwd=tmp_path,
    )  # fmt: skip
    metrics = json.loads((tmp_path / "m.json").read_text())
    assert {"fixed", "reshaped", "gold", "none"} <= set(metrics)
    # The gold passage holds every answer whole; no context holds none.
    assert metrics["gold"]["context_has_answer"] == 1.0 and metrics["none"]["context_has_answer"] == 0.0


def test_classify_stage_scores_yes_no_answers(tmp_path):
    rows = []
    for i, (drug, fact) in enumerate(FACTS):
        rows.append({"id": f"tr{i}a", "split": "train", "text": f"{drug} caused severe rash in a patient.", "label": 1})
        rows.append({"id": f"tr{i}b", "split": "train", "text": f"{drug} {fact}.", "label": 0})
    test = [
        {"id": f"te{i}", "split": "test", "text": f"A patient developed hepatitis after {d}.", "label": 1}
        for i, (d, _) in enumerate(FACTS[:3])
    ]
    data = tmp_path / "interim"
    write_table(pd.DataFrame(rows), data / "train.parquet", CLASSIFICATION)
    write_table(pd.DataFrame(test), data / "test.parquet", CLASSIFICATION)
    params = _params(tmp_path, classify={"max_inputs": 3, "n_examples": 2}, evaluate={"bootstrap": 50})
    r = _run(
        "classify.py", "--dataset", "ade", "--data", str(data), "--out", "out", "--metrics", "m.json",
        "--items", "items.parquet", "--plots", "plots", "--params", str(params), cwd=tmp_path,
    )  # fmt: skip
    metrics = json.loads((tmp_path / "m.json").read_text())
    assert metrics["data"]["test_inputs"] == 3 and metrics["data"]["examples"] == 2
    for k in ("generator", "evidence_vote"):
        assert 0.0 <= metrics[k]["f1"] <= 1.0 and metrics[k]["f1_ci_low"] <= metrics[k]["f1"] <= metrics[k]["f1_ci_high"]
    preds = pd.read_parquet(tmp_path / "out" / "predictions.parquet")
    assert set(preds["prediction"]) <= {-1, 0, 1} and preds["raw_output"].notna().all()
    assert "unparsed outputs" in r.stderr
    assert (tmp_path / "plots" / "pr.png").stat().st_size > 5000
    # The per-sentence scores recompute the metrics: every interval and paired difference can.
    items = pd.read_parquet(tmp_path / "items.parquet").pivot(index="item_id", columns="metric", values="value")
    assert set(items.columns) == {"label", "generator", "unparsed", "vote"} and len(items) == 3
    assert items["unparsed"].sum() == metrics["data"]["unparsed_outputs"]
    tp = ((items["generator"] == 1) & (items["label"] == 1)).sum()
    assert metrics["generator"]["recall"] == pytest.approx(tp / items["label"].sum())
