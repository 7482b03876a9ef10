"""The context-reshaping paper pipeline (experiments/bioasq): its two runs' params, its DAG, and
its tables, every Table 1 / 2 / ICL interval of which is recomputed here from the per-question
scores the pipeline tracks in git."""

from __future__ import annotations

import json
import re
import subprocess
import sys

import numpy as np
import pandas as pd
import pytest
import yaml

from biochunk import params
from biochunk.errors import UserError
from biochunk.evaluation.papers import mean_ci, paired_delta
from biochunk.evaluation.reports import bioasq
from biochunk.io import QA_ANSWERS, write_table
from biochunk.retrieval.contexts import arms
from tests.conftest import ROOT

BIOASQ = ROOT / "experiments" / "bioasq"
RESULTS = ROOT / "docs" / "results" / "data"
SCORES = ROOT / "metrics" / "papers" / "bioasq"
# The paper's keys of each run's params file; every other key is params.yaml's.
MAIN_KEYS = {
    "qa": {"corpus", "context_words", "max_questions", "question_splits", "n_examples", "contexts"},
    "reshape": {"reranker", "variants"},
}
ICL_KEYS = {"qa": MAIN_KEYS["qa"] | {"examples_by_type"}, "reshape": MAIN_KEYS["reshape"]}


def _load(name: str) -> dict:
    return yaml.safe_load((BIOASQ / name).read_text())


def _stage(script: str, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, str(ROOT / "stages" / script), *args], cwd=ROOT, capture_output=True, text=True, check=False
    )


# -- params ---------------------------------------------------------------------------------


@pytest.mark.parametrize("name,changed", [("params.yaml", MAIN_KEYS), ("icl-params.yaml", ICL_KEYS)])
def test_each_runs_params_are_the_projects_but_the_papers_keys(name, changed):
    ours, project = _load(name), yaml.safe_load((ROOT / "params.yaml").read_text())
    for section in set(ours) | set(project):
        keep = changed.get(section, set())
        mine, theirs = ours.get(section), project.get(section)
        if isinstance(mine, dict) and isinstance(theirs, dict):
            mine, theirs = ({k: v for k, v in d.items() if k not in keep} for d in (mine, theirs))
        assert mine == theirs, f"{name}: {section} differs from params.yaml beyond the paper's keys {sorted(keep)}"
    params.load(BIOASQ / name)  # a valid params file, checked as any
    text = (BIOASQ / name).read_text()
    assert params.parse_yaml_text(text, name) == yaml.safe_load(text)  # DVC reads it as params: no anchors


def test_the_main_run_gives_table_1_and_2s_arms_on_held_out_questions_only():
    loaded = params.load(BIOASQ / "params.yaml")
    got = arms(loaded["qa"].contexts, loaded["qa"].methods, [a for a, _ in loaded["reshape"].expand()])
    assert got == ["none", "gold", bioasq.UNRANKED, *bioasq.TABLE2]
    settings = dict(loaded["reshape"].expand())
    assert settings[bioasq.UNRANKED].rank == "none"
    assert (settings["reshaped:ce-10x15"].top_m, settings["reshaped:ce-10x15"].keep) == (10, 15)
    assert loaded["qa"].max_questions == 40  # the sample: a param (null: every held-out question)
    # The reranker trains on every batch but the held-out ones; only those are answered.
    assert list(loaded["qa"].question_splits) == list(loaded["retrieve"].qa_test_splits) and loaded["qa"].question_splits
    assert loaded["reshape"].reranker == "data/papers/bioasq/reranker"  # the train_reranker stage's output
    main, icl = _load("params.yaml"), _load("icl-params.yaml")
    bioasq.check_params(main, icl)
    assert icl["qa"]["examples_by_type"] and icl["qa"]["n_examples"] == 3
    assert {k: v for k, v in icl["qa"].items() if k not in ("contexts", "n_examples", "examples_by_type")} == {
        k: v for k, v in main["qa"].items() if k not in ("contexts", "n_examples", "examples_by_type")
    }


@pytest.mark.parametrize(
    "which,mutate,needle",
    [
        ("main", lambda p: p["reshape"]["variants"].pop(), "reshape.variants must name unranked-5x4"),
        ("main", lambda p: p["qa"].update(contexts=["none", "reshaped"]), "qa.contexts must be [none, gold, reshaped]"),
        ("icl", lambda p: p["reshape"].update(variants=[{"name": "unranked-5x4"}]), "must name one Table 2 variant"),
        ("icl", lambda p: p["qa"].update(max_questions=7), "qa.max_questions must equal params.yaml's"),
        ("both", lambda p: p["qa"].update(question_splits=["7B1"]), "qa.question_splits must be retrieve.qa_test_splits"),
    ],
)
def test_params_that_would_not_give_the_tables_are_named_in_one_line(which, mutate, needle):
    main, icl = _load("params.yaml"), _load("icl-params.yaml")
    for p in {"main": [main], "icl": [icl], "both": [main, icl]}[which]:
        mutate(p)
    with pytest.raises(UserError, match=re.escape(needle)):
        bioasq.check_params(main, icl)


def test_best_variant_is_a_table_2_arm():
    scores = pd.DataFrame(
        {"method": ["gold", bioasq.UNRANKED, *bioasq.TABLE2], "rouge2_f1": [0.9, 0.8, 0.1, 0.5, 0.2, 0.3, 0.1, 0.1]}
    )
    assert bioasq.best_variant(scores) == "reshaped:ce-5x10"  # gold and unranked are not Table 2 arms


def test_ranker_note_reports_the_gold_record_hit_rates_per_top_m():
    hits = {a: {"gold_doc_hit@1": 0.5, "gold_doc_hit@k": 0.8} for a in [bioasq.UNRANKED, *bioasq.TABLE2]}
    hits["reshaped:ce-10x4"] = {"gold_doc_hit@1": 0.6, "gold_doc_hit@k": 0.9}
    note = bioasq.ranker_note({"gold_document_hits": hits})
    assert "unranked topics 0.500 / 0.800" in note and "ranked, 10 communities 0.600 / 0.900" in note
    assert "x 10" not in note  # keep does not change which communities are read first


# -- the DAG --------------------------------------------------------------------------------


def test_the_pipeline_runs_both_qa_runs_on_their_params_and_reports_them_in_order():
    stages = yaml.safe_load((BIOASQ / "dvc.yaml").read_text())["stages"]
    runs = {"main": {"params": "params.yaml"}, "icl": {"params": "icl-params.yaml"}}
    for name in ("qa_context", "generate_qa", "evaluate_qa"):
        assert stages[name]["foreach"] == runs, name
        assert "--params experiments/bioasq/${item.params}" in stages[name]["do"]["cmd"], name
    assert "--params experiments/bioasq/params.yaml" in stages["train_reranker"]["cmd"]
    assert "data/papers/bioasq/reranker" in stages["qa_context"]["do"]["deps"]  # reshape.reranker's folder
    cmd = stages["report"]["cmd"].split()
    assert [cmd[i + 1] for i, w in enumerate(cmd) if w == "--runs"] == [f"data/papers/bioasq/{r}" for r in bioasq.RUNS]
    assert "--paper bioasq" in stages["report"]["cmd"] and list(runs) == list(bioasq.RUNS)


# -- the report, end to end on made-up runs ---------------------------------------------------


def _make_run(root, run: str, run_arms: list[str], questions: list[str], rng, n_examples: int) -> pd.DataFrame:
    (root / run / "qa").mkdir(parents=True)
    (root / run / "answers").mkdir()
    hits = {a: {"gold_doc_hit@1": 0.5, "gold_doc_hit@k": 0.75} for a in run_arms}
    reshape = {a: {"communities_mean": 9.5, "sentences_kept_mean": 6.0} for a in run_arms if a.startswith("reshaped:")}
    (root / run / "qa" / "report.json").write_text(json.dumps(
        {"arms": run_arms, "example_split": "7B1", "corpus": {"documents": 99}, "gold_document_hits": hits, "reshape": reshape}))  # fmt: skip
    (root / run / "answers" / "report.json").write_text(json.dumps(
        {"model": "smollm2-135m", "n_examples": n_examples, "context_words": 300, "max_new_tokens": 48, "methods": {}}))  # fmt: skip
    rows = [
        (q, a, "" if a == "none" else "some context words", "p", "an answer", "an answer", "")
        for a in run_arms
        for q in questions
    ]
    write_table(pd.DataFrame(rows, columns=QA_ANSWERS.names), root / run / "answers" / "answers.parquet", QA_ANSWERS)
    cols = list(bioasq.METRICS.values())
    return pd.DataFrame(
        [(a, q, *rng.random(len(cols))) for a in run_arms for q in questions], columns=["method", "question_id", *cols]
    )


def test_the_report_stage_renders_every_bioasq_table_from_the_per_question_scores(tmp_path):
    """report_runs.py --paper bioasq on made-up runs laid out as experiments/bioasq/dvc.yaml lays them
    out: four tables, the page's prose kept, every Table 1 interval the scores'."""
    paper = tmp_path / "experiments"
    paper.mkdir()
    main = _load("params.yaml")
    main["evaluate"]["bootstrap"] = 30
    (paper / "params.yaml").write_text(yaml.safe_dump(main))
    (paper / "icl-params.yaml").write_text((BIOASQ / "icl-params.yaml").read_text())
    rng, questions = np.random.default_rng(0), [f"q{i:02d}" for i in range(12)]
    data, scores = tmp_path / "data", tmp_path / "metrics"
    main_arms = ["none", "gold", bioasq.UNRANKED, *bioasq.TABLE2]
    icl_arm = "reshaped:" + _load("icl-params.yaml")["reshape"]["variants"][0]["name"]
    frames = {
        "main": _make_run(data, "main", main_arms, questions, rng, 1),
        "icl": _make_run(data, "icl", ["none", icl_arm], questions, rng, 3),
    }
    for run, df in frames.items():
        (scores / run / "report").mkdir(parents=True)
        df.to_csv(scores / run / "report" / "scores.csv", index=False)
    results = tmp_path / "results"
    results.mkdir()
    (results / "bioasq-reshaping.md").write_text(
        "# Prose kept\n\n<!-- paper-table:table1:start -->\nold\n<!-- paper-table:table1:end -->\n\nMore prose.\n"
    )
    r = _stage("report_runs.py", "--paper", "bioasq", "--paper-params", str(paper / "params.yaml"), "--scores", str(scores),
               "--results", str(results), "--runs", str(data / "main"), "--runs", str(data / "icl"))  # fmt: skip
    assert r.returncode == 0, r.stderr[-3000:]
    page = (results / "bioasq-reshaping.md").read_text()
    assert page.startswith("# Prose kept") and "More prose." in page and "\nold\n" not in page
    for section in ("table1", "table2", "table5", "icl"):
        table = json.loads((results / "data" / f"bioasq-reshaping-{section}.json").read_text())
        assert table["command"] == bioasq.COMMAND and table["wall_s"] is None, section
    t1 = json.loads((results / "data" / "bioasq-reshaping-table1.json").read_text())
    df = frames["main"].sort_values("question_id")
    got = mean_ci(df[df["method"] == "gold"]["bertscore_f1"].to_numpy(), 30, 42)
    shown = t1["rows"][2]["ours"]["BERTScore F1"]
    assert (got.value, got.lo, got.hi) == pytest.approx((shown["value"], shown["lo"], shown["hi"]), abs=1e-12)
    icl = json.loads((results / "data" / "bioasq-reshaping-icl.json").read_text())
    assert len(icl["rows"]) == 4 and "3 examples of the question's type" in icl["rows"][1]["label"]
    # The ICL run must answer the main run's questions.
    frames["icl"][frames["icl"]["question_id"] != "q00"].to_csv(scores / "icl" / "report" / "scores.csv", index=False)
    r = _stage("report_runs.py", "--paper", "bioasq", "--paper-params", str(paper / "params.yaml"), "--scores", str(scores),
               "--results", str(results), "--runs", str(data / "main"), "--runs", str(data / "icl"))  # fmt: skip
    lines = [x for x in r.stderr.splitlines() if x.strip()]
    assert r.returncode == 2 and len(lines) == 1 and "did not answer the same questions" in lines[0], r.stderr


# -- the published tables, from the tracked per-question scores --------------------------------


def _table(section: str) -> dict:
    path = RESULTS / f"bioasq-reshaping-{section}.json"
    table = json.loads(path.read_text()) if path.is_file() else {}
    if table.get("command") != bioasq.COMMAND:  # absent, or still the retired script's table
        pytest.skip(f"{path.name}: not rendered by the pipeline yet (dvc repro experiments/bioasq/dvc.yaml)")
    return table


def _close(estimate, shown: dict) -> None:
    assert (estimate.value, estimate.lo, estimate.hi) == pytest.approx((shown["value"], shown["lo"], shown["hi"]), abs=1e-12)


@pytest.mark.parametrize("section", ["table1", "table2"])
def test_every_table_1_and_2_interval_is_recomputed_from_the_tracked_per_question_scores(section):
    table = _table(section)
    path = SCORES / "main" / "report" / "scores.csv"
    if not path.is_file():
        pytest.fail(f"{section} is rendered by the pipeline, but {path} is not tracked")
    ev = _load("params.yaml")["evaluate"]
    w = bioasq.wide(bioasq.read_scores(path))
    by_label = {bioasq.label(a): a for a in ("none", "gold", bioasq.UNRANKED, *bioasq.TABLE2)}
    assert table["rows"], "the table shows no arm"
    for row in table["rows"]:
        arm = by_label[row["label"]]
        for metric, col in bioasq.METRICS.items():
            _close(mean_ci(w[col][arm].to_numpy(), ev["bootstrap"], ev["seed"]), row["ours"][metric])
    for d in table["differences"]:
        b, a = (by_label[x] for x in d["label"].split(" − "))
        col = bioasq.METRICS[d["metric"]]
        _close(paired_delta(w[col][a].to_numpy(), w[col][b].to_numpy(), ev["bootstrap"], ev["seed"]), d["ours"])


def test_the_icl_intervals_are_recomputed_from_both_runs_tracked_scores():
    table = _table("icl")
    ev = _load("params.yaml")["evaluate"]
    one = bioasq.read_scores(SCORES / "main" / "report" / "scores.csv")
    many = bioasq.read_scores(SCORES / "icl" / "report" / "scores.csv")
    arm = "reshaped:" + _load("icl-params.yaml")["reshape"]["variants"][0]["name"]
    for i, a in enumerate(("none", arm)):
        x = one[one["method"] == a].set_index("question_id").sort_index()
        y = many[many["method"] == a].set_index("question_id").reindex(x.index)
        for j, t in enumerate((x, y)):
            for metric in bioasq.TESTED:
                _close(
                    mean_ci(t[bioasq.METRICS[metric]].to_numpy(), ev["bootstrap"], ev["seed"]),
                    table["rows"][2 * i + j]["ours"][metric],
                )
