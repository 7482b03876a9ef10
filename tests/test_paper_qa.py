"""The QA pipeline (experiments/qa): its three tables are rendered from the tracked per-question
scores, every interval recomputes from them, and a run whose arms cannot be paired is refused."""

from __future__ import annotations

import dataclasses
import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import yaml

from biochunk.errors import UserError
from biochunk.evaluation.papers import mean_ci, paired_delta
from biochunk.evaluation.reports import qa
from tests.conftest import ROOT

METHODS = ["fixed", "recursive", "adaptive", "cluster"]
SETTINGS = qa.Settings(1000, 42, "smollm2-135m", 1, "minilm", 4)


def _scores(path, arms, n=30, seed=0, holds=True):
    """evaluate_qa's scores.csv for ``n`` questions and ``arms`` (``adaptive`` a little better)."""
    rng = np.random.default_rng(seed)
    rows = []
    for a in arms:
        for q in range(n):
            f = float(np.clip(rng.normal(0.2 + (0.05 if a == "adaptive" else 0.0), 0.1), 0, 1))
            rows.append({"question_id": f"q{q:02d}", "method": a, "rouge2_precision": f, "rouge2_recall": f, "rouge2_f1": f,
                         "rougesu4_f1": f / 2, "bertscore_f1": 0.5 + f, "declined": 0.0, "yesno_correct": np.nan,
                         "context_has_answer": float(rng.random() < 0.4) if holds and a not in qa.CONTEXTS else np.nan})  # fmt: skip
    path.parent.mkdir(parents=True, exist_ok=True)
    pd.DataFrame(rows).to_csv(path, index=False)
    return path


def test_the_tables_are_means_and_paired_differences_of_the_per_question_scores(tmp_path):
    bio = _scores(tmp_path / "bioasq.csv", [*METHODS, "reshaped", "gold", "none"], holds=False)
    cov = _scores(tmp_path / "covidqa.csv", METHODS, n=20, seed=1)
    methods, contexts = qa.tables({"bioasq": bio, "covidqa": cov}, SETTINGS)
    assert [r.label for r in methods.rows] == METHODS
    assert "COVID-QA context holds the answer" in methods.metrics and "BioASQ context holds the answer" not in methods.metrics
    b, c = pd.read_csv(bio), pd.read_csv(cov)
    arm = lambda d, m, col: d[d["method"] == m].sort_values("question_id")[col].to_numpy()  # noqa: E731
    adaptive = next(r for r in methods.rows if r.label == "adaptive")
    assert adaptive.ours["BioASQ ROUGE-2 F1"] == mean_ci(arm(b, "adaptive", "rouge2_f1"))
    assert adaptive.ours["COVID-QA context holds the answer"] == mean_ci(arm(c, "adaptive", "context_has_answer"))
    d = next(x for x in methods.differences if x.label == "adaptive − recursive (COVID-QA)")
    assert d.ours == paired_delta(arm(c, "recursive", "rouge2_f1"), arm(c, "adaptive", "rouge2_f1"))
    assert len(methods.differences) == 6 and all(x.paper is None for x in methods.differences)  # 3 methods x 2 datasets
    assert [r.label for r in contexts.rows] == ["no context", "retrieved (recursive)", "reshaped", "gold snippets"]
    g = next(x for x in contexts.differences if x.label == "gold snippets − no context" and x.metric == "BERTScore F1")
    assert g.ours == paired_delta(arm(b, "none", "bertscore_f1"), arm(b, "gold", "bertscore_f1"))
    assert len(contexts.differences) == 15  # five contrasts x three measures
    assert any(n.startswith("Multiple comparisons: 15 paired differences") for n in contexts.notes)


def test_each_declared_param_reaches_the_page(tmp_path):
    # The report stage's params: the resamples and seed move the intervals, the models the models line.
    cov = _scores(tmp_path / "covidqa.csv", METHODS)
    base = qa.tables({"covidqa": cov}, SETTINGS)[0]
    for field, value in (("n_boot", 200), ("seed", 7), ("generator", "meta-llama/Llama-3.1-8B-Instruct"), ("n_examples", 3),
                         ("bertscore_model", "roberta-large"), ("bertscore_layers", 17)):  # fmt: skip
        other = qa.tables({"covidqa": cov}, dataclasses.replace(SETTINGS, **{field: value}))[0]
        changed = (other.rows[0].ours != base.rows[0].ours) if field in ("n_boot", "seed") else (other.models != base.models)
        assert changed, field


def test_a_run_that_cannot_be_paired_or_lacks_the_baseline_is_refused(tmp_path):
    path = _scores(tmp_path / "s.csv", METHODS)
    d = pd.read_csv(path)
    d[~((d["method"] == "fixed") & (d["question_id"] == "q00"))].to_csv(path, index=False)
    with pytest.raises(UserError, match="answered different questions"):
        qa.tables({"covidqa": path}, SETTINGS)
    with pytest.raises(UserError, match="no recursive arm"):
        qa.tables({"covidqa": _scores(tmp_path / "t.csv", ["fixed", "adaptive"])}, SETTINGS)
    with pytest.raises(UserError, match="input file not found"):
        qa.tables({"covidqa": tmp_path / "none.csv"}, SETTINGS)


def test_the_header_table_pairs_each_header_run_with_its_run(tmp_path):
    bio = _scores(tmp_path / "bioasq.csv", [*METHODS, "reshaped", "gold", "none"], holds=False)
    cov = _scores(tmp_path / "covidqa.csv", METHODS, n=20, seed=1)
    bio_h = _scores(tmp_path / "bioasq-header.csv", ["adaptive"], seed=2, holds=False)
    cov_h = _scores(tmp_path / "covidqa-header.csv", ["adaptive"], n=20, seed=3)
    headers = {"bioasq": ("phrase", "none"), "covidqa": ("phrase", "none")}
    table = qa.tables({"bioasq": bio, "covidqa": cov}, SETTINGS, {"bioasq": bio_h, "covidqa": cov_h}, headers)[2]
    assert table.section == "headers" and [r.label for r in table.rows] == ["adaptive, noun-phrase header", "adaptive, no header"]
    assert "COVID-QA context holds the answer" in table.metrics and "BioASQ context holds the answer" not in table.metrics
    arm = lambda path, m, col: (d := pd.read_csv(path))[d["method"] == m].sort_values("question_id")[col].to_numpy()  # noqa: E731
    base, none = table.rows
    assert base.ours["BioASQ ROUGE-2 F1"] == mean_ci(arm(bio, "adaptive", "rouge2_f1"))
    assert none.ours["COVID-QA context holds the answer"] == mean_ci(arm(cov_h, "adaptive", "context_has_answer"))
    d = next(x for x in table.differences if x.label == "adaptive, no header − adaptive, noun-phrase header (COVID-QA)" and x.metric == "COVID-QA BERTScore F1")
    assert d.ours == paired_delta(arm(cov, "adaptive", "bertscore_f1"), arm(cov_h, "adaptive", "bertscore_f1"))
    assert len(table.differences) == 6 and all(x.paper is None for x in table.differences)  # 3 measures x 2 datasets
    # Each side's chunk.header names its rows: the params the report stage declares reach the page.
    other = qa.tables({"covidqa": cov}, SETTINGS, {"covidqa": cov_h}, {"covidqa": ("generator", "none")})[1]
    assert [r.label for r in other.rows] == ["adaptive, generator-written header", "adaptive, no header"]
    other = qa.tables({"covidqa": cov}, SETTINGS, {"covidqa": cov_h}, {"covidqa": ("phrase", "generator")})[1]
    assert [r.label for r in other.rows] == ["adaptive, noun-phrase header", "adaptive, generator-written header"]


def test_a_header_run_that_cannot_be_paired_is_refused(tmp_path):
    cov = _scores(tmp_path / "covidqa.csv", METHODS)
    same = {"covidqa": ("phrase", "phrase")}
    with pytest.raises(UserError, match="chunk.header is 'phrase', as the covidqa run's"):
        qa.tables({"covidqa": cov}, SETTINGS, {"covidqa": _scores(tmp_path / "h.csv", ["adaptive"])}, same)
    headers = {"covidqa": ("phrase", "none")}
    with pytest.raises(UserError, match="'semchunk' is not among the covidqa run's qa.methods"):
        qa.tables({"covidqa": cov}, SETTINGS, {"covidqa": _scores(tmp_path / "m.csv", ["adaptive", "semchunk"])}, headers)
    with pytest.raises(UserError, match="its questions are not the covidqa run's"):
        qa.tables({"covidqa": cov}, SETTINGS, {"covidqa": _scores(tmp_path / "q.csv", ["adaptive"], n=29)}, headers)
    with pytest.raises(UserError, match="no run bioasq to pair it with"):
        qa.tables({"covidqa": cov}, SETTINGS, {"bioasq": _scores(tmp_path / "b.csv", ["adaptive"])}, {"bioasq": ("phrase", "none")})


def _report_stage() -> dict:
    return yaml.safe_load((ROOT / "experiments/qa/dvc.yaml").read_text())["stages"]["report"]


def test_each_run_file_sets_exactly_the_keys_its_stage_declares_from_it():
    # A key set in experiments/qa/<run>.yaml but not declared would change a run while DVC saw
    # nothing (generate_qa and evaluate_qa declare params.yaml's keys only); and the report reads
    # the main runs' chunk.header from params.yaml, which holds only while their files leave it out.
    stages = yaml.safe_load((ROOT / "experiments/qa/dvc.yaml").read_text())["stages"]
    seen = 0
    for name in ("qa_context", "qa_context_header"):
        spec = stages[name]
        ((template, keys),) = [(f, k) for e in spec["do"]["params"] if isinstance(e, dict) for f, k in e.items() if f != "params.yaml"]
        for item in spec["foreach"]:
            data = yaml.safe_load((ROOT / template.replace("${item}", item)).read_text())
            assert {f"{sec}.{k}" for sec, body in data.items() for k in body} == set(keys), template.replace("${item}", item)
            seen += 1
    assert seen == 4


def _flags(cmd: str) -> dict[str, list[str]]:
    """The report command's flags and the values after each."""
    out: dict[str, list[str]] = {}
    for w in cmd.split()[2:]:
        if w.startswith("--"):
            flag = out.setdefault(w, [])
        else:
            flag.append(w)
    return out


def test_the_committed_tables_recompute_from_the_tracked_scores():
    """Every interval of the three published tables, from metrics/papers/qa/<run>/report/scores.csv."""
    flags = _flags(_report_stage()["cmd"])
    reports = [ROOT / w for w in flags["--reports"]]
    p = yaml.safe_load((ROOT / "params.yaml").read_text())
    s = qa.Settings(p["evaluate"]["bootstrap"], p["evaluate"]["seed"], p["generate"]["model"], p["qa"]["n_examples"],
                    p["evaluate_qa"]["bertscore_model"], p["evaluate_qa"]["bertscore_layers"])  # fmt: skip
    header_runs = {Path(w).parent.name.removesuffix(qa.HEADER_RUN): ROOT / w / "scores.csv" for w in flags["--headers"]}
    headers = {ds: (p["chunk"]["header"], yaml.safe_load((ROOT / f).read_text())["chunk"]["header"]) for ds, f in zip(header_runs, flags["--header-params"])}
    tables = qa.tables({r.parent.name: r / "scores.csv" for r in reports}, s, header_runs, headers)
    assert [t.section for t in tables] == ["methods", "contexts", "headers"]
    for t in tables:
        shown = json.loads((ROOT / f"docs/results/data/{t.paper}-{t.section}.json").read_text())
        again = {(r.label, m): e for r in t.rows for m, e in r.ours.items()}
        assert len(again) == sum(len(r["ours"]) for r in shown["rows"])
        for r in shown["rows"]:
            for m, e in r["ours"].items():
                assert (again[(r["label"], m)].value, again[(r["label"], m)].lo, again[(r["label"], m)].hi) == pytest.approx(
                    (e["value"], e["lo"], e["hi"]), abs=1e-12
                )


@pytest.mark.parametrize(
    "extra, needle",
    [
        (["--headers", "metrics/papers/qa/bioasq-header/report"], "--header-params: give one per --headers folder (1), in the same order"),
        (["--headers", "metrics/papers/qa/bioasq/report", "--header-params", "experiments/qa/bioasq-header.yaml"], "not a header run's report"),
        (["--headers", *["metrics/papers/qa/bioasq-header/report"] * 2, "--header-params", *["experiments/qa/bioasq-header.yaml"] * 2],
         "a second header run of bioasq"),
    ],
)
def test_report_qa_refuses_unpaired_header_arguments_in_one_line_before_writing(tmp_path, extra, needle):
    cmd = [sys.executable, "stages/report_qa.py", "--reports", "metrics/papers/qa/bioasq/report", *extra, "--results", str(tmp_path)]
    done = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True)
    assert done.returncode != 0 and needle in done.stderr
    assert len(done.stderr.strip().splitlines()) == 1, done.stderr
    assert not any(tmp_path.iterdir()), "nothing is written"
