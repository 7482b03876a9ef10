"""The papers' tables are DVC pipelines (experiments/<paper>/dvc.yaml): a table is stale
exactly when code or params it was made from change, and every interval it shows is
recomputed from the per-item scores the pipeline tracks in git."""

from __future__ import annotations

import hashlib
import json
import re
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import yaml

from biochunk import experiments
from biochunk.evaluation.papers import mean_ci, paired_delta, read_items
from biochunk.errors import UserError
from biochunk.evaluation.reports.structural import values
from tests.conftest import ROOT
from tests.forked import run_python

DVC = Path(sys.executable).with_name("dvc")
STRUCTURAL = ROOT / "experiments" / "structural"


def test_every_structural_interval_is_recomputed_from_the_tracked_per_item_scores():
    paper = experiments.load(STRUCTURAL / "params.yaml")
    table = json.loads((ROOT / "docs/results/data/structural-scifact-chunk-retrieval.json").read_text())
    items = {n: read_items(ROOT / "metrics/papers/structural" / f"{n}.parquet") for n in paper.settings}
    assert [r["label"] for r in table["rows"]] == list(paper.settings)
    for row in table["rows"]:
        for metric, shown in row["ours"].items():
            again = mean_ci(values(items[row["label"]], metric), paper.sample.bootstrap)
            assert (again.value, again.lo, again.hi) == pytest.approx((shown["value"], shown["lo"], shown["hi"]), abs=1e-12)
    assert table["differences"], "the table shows no paired difference"
    for d in table["differences"]:
        b, a = d["label"].split(" − ")
        again = paired_delta(values(items[a], d["metric"]), values(items[b], d["metric"]), paper.sample.bootstrap)
        assert (again.value, again.lo, again.hi) == pytest.approx((d["ours"]["value"], d["ours"]["lo"], d["ours"]["hi"]), abs=1e-12)


def test_every_tracked_output_is_the_one_its_lock_records():
    # A rendered page edited by hand after its report ran (a prose fix) makes `dvc status` report
    # the report stage changed in an unchanged checkout (docs/pipeline.md says how to record it).
    tracked = set(subprocess.run(["git", "ls-files"], cwd=ROOT, capture_output=True, text=True, check=True).stdout.splitlines())
    checked, wrong = 0, []
    for lock in [ROOT / "dvc.lock", *sorted((ROOT / "experiments").glob("*/dvc.lock"))]:
        for name, stage in yaml.safe_load(lock.read_text())["stages"].items():
            for out in stage.get("outs", []):
                if out["path"] not in tracked or "md5" not in out or out["md5"].endswith(".dir"):
                    continue
                checked += 1
                if hashlib.md5((ROOT / out["path"]).read_bytes()).hexdigest() != out["md5"]:
                    wrong.append(f"{lock.relative_to(ROOT)} {name}: {out['path']}")
    assert checked > 50, checked
    assert not wrong, "edited after the stage ran (docs/pipeline.md, 'A paper as a pipeline'): " + "; ".join(wrong)


# What each paper's report reads besides code, params and tracked files: outputs of its own
# pipeline's stages that DVC keeps out of git, so a fresh clone cannot re-render that page
# without re-running them (issue 26 asks that a report read tracked metrics and per-item scores
# only). biomedrag, documents, qa and retrieval already do (TRACKED_REPORTS).
UNTRACKED_REPORT_READS = {
    "bioasq": {"data/papers/bioasq/main", "data/papers/bioasq/icl", "data/papers/bioasq/paper", "data/papers/bioasq/icl-paper",
               "data/papers/bioasq/grid-paper", "data/papers/bioasq/reranker/report.json"},
    "clinical": {f"data/papers/clinical/{p}" for p in (
        "retrieval/sample/sample.json", "retrieval/sample/corpus.parquet", "retrieval/sizes", "non-response/qa/report.json",
        "non-response/answers/report.json", "proposition/sample/sample.json", "proposition/sizes",
        "proposition/chunks/proposition.parquet", "headers/sample/sample.json", "headers/sizes", "headers/chunks/adaptive.parquet",
        "headers/chunks/adaptive-generator-header.parquet")},
    "semchunk": {f"data/papers/semchunk/{s}/{p}" for s in ("covidqa", "bioasq") for p in ("sample/sample.json", "sizes")},
    "structural": {"data/papers/structural/sample/sample.json", "data/papers/structural/sizes"},
}  # fmt: skip


def test_what_each_report_reads_is_tracked_or_listed_as_untracked():
    # A new report input outside git fails here until it is tracked (metrics/papers/, cache: false)
    # or listed above; one made tracked must leave the list.
    tracked = set(subprocess.run(["git", "ls-files"], cwd=ROOT, capture_output=True, text=True, check=True).stdout.split())
    found: dict[str, set[str]] = {}
    for path in sorted(ROOT.glob("experiments/*/dvc.yaml")):
        for name, stage in yaml.safe_load(path.read_text())["stages"].items():
            if not name.startswith("report"):
                continue
            for dep in stage.get("do", stage).get("deps", []):
                files = {f for f in tracked if f == dep or f.startswith(dep.rstrip("/") + "/")}
                if not dep.startswith(("stages/", "biochunk/")) and not {f for f in files if not f.endswith(".gitignore")}:
                    found.setdefault(path.parent.name, set()).add(dep)
    assert found == UNTRACKED_REPORT_READS


# The papers whose report stage reads tracked files only (none listed above).
TRACKED_REPORTS = sorted(
    p.parent.name for p in ROOT.glob("experiments/*/dvc.yaml")
    if "report" in yaml.safe_load(p.read_text())["stages"] and p.parent.name not in UNTRACKED_REPORT_READS
)  # fmt: skip


@pytest.mark.slow  # a copy of the checkout and a report run per paper: the full suite only
@pytest.mark.parametrize("paper", TRACKED_REPORTS)
def test_a_report_reading_tracked_files_only_renders_its_page_in_a_fresh_copy(paper, tmp_path):
    # What a fresh clone holds is enough: the report's command, run in a copy of the tracked
    # files with its outputs removed (the page is kept: the report writes between its markers),
    # writes them again byte for byte.
    assert set(TRACKED_REPORTS) >= {"biomedrag", "documents", "retrieval"}
    _copy_tracked(tmp_path)
    stage = yaml.safe_load((ROOT / "experiments" / paper / "dvc.yaml").read_text())["stages"]["report"]
    outs = {next(iter(o)) if isinstance(o, dict) else o: o for o in stage["outs"]}
    for path, o in outs.items():
        if not (isinstance(o, dict) and o[path].get("persist")):
            (tmp_path / path).unlink()
        else:  # the page keeps its prose; its tables are emptied, so the report must write them again
            page = tmp_path / path
            page.write_text(re.sub(r"(<!-- paper-table:(\S+):start -->).*?(<!-- paper-table:\2:end -->)", r"\1\n\3", page.read_text(), flags=re.DOTALL))
    words = stage["cmd"].split()
    assert words[0] == "python"
    done = subprocess.run([sys.executable, *words[1:]], cwd=tmp_path, capture_output=True, text=True, env={"PATH": "/usr/bin:/bin", "HOME": str(tmp_path)})
    assert done.returncode == 0, done.stderr[-3000:]
    for path in outs:
        assert (tmp_path / path).read_bytes() == (ROOT / path).read_bytes(), f"{paper}: {path} differs from the committed one"


def test_the_committed_metrics_are_the_means_of_the_per_item_scores():
    for path in sorted((ROOT / "metrics/papers/structural").glob("*.json")):
        metrics = json.loads(path.read_text())
        items = read_items(path.with_suffix(".parquet"))
        assert metrics["queries"] == len(items["f1@10"])
        for m, scores in items.items():
            assert metrics[m] == pytest.approx(scores.mean(), abs=1e-12), f"{path.name}: {m}"


def _copy_tracked(dst: Path) -> None:
    files = subprocess.run(["git", "ls-files", "-z"], cwd=ROOT, capture_output=True, check=True).stdout.split(b"\0")
    for f in filter(None, files):
        src = ROOT / f.decode()
        if src.is_file():
            (dst / f.decode()).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(src, dst / f.decode())
    subprocess.run(["git", "init", "-q"], cwd=dst, check=True)


def _modified_deps(repo: Path, target: str) -> set[str]:
    """Stages of ``target`` whose code or params changed (outputs that a clone does not have
    yet, and data deps not produced yet, are not what this asks)."""
    out = subprocess.run(
        [str(DVC), "status", "--json", target], cwd=repo, capture_output=True, text=True, check=True,
        env={"PATH": f"{DVC.parent}:/usr/bin:/bin", "DVC_NO_ANALYTICS": "1", "HOME": str(repo)},
    ).stdout  # fmt: skip
    stale = set()
    for stage, changes in json.loads(out or "{}").items():
        for change in changes:
            if not isinstance(change, dict):
                continue
            deps = change.get("changed deps", {})
            # Code (modules, stage scripts, configs) or params (a dict); a data dep that an earlier
            # stage writes is missing or partial in a copy, and says nothing about the code.
            code = ("biochunk/", "stages/", "configs/")
            if any(isinstance(v, dict) or (k.startswith(code) and v in ("modified", "new")) for k, v in deps.items()):
                stale.add(stage.split(":")[-1])
    return stale


@pytest.mark.slow
def test_a_library_change_makes_exactly_the_tables_that_use_it_stale(tmp_path):
    _copy_tracked(tmp_path)
    target, semchunk = "experiments/structural/dvc.yaml", "experiments/semchunk/dvc.yaml"
    documents, retrieval = "experiments/documents/dvc.yaml", "experiments/retrieval/dvc.yaml"
    for pipeline in (target, semchunk, "experiments/bioasq/dvc.yaml", "experiments/clinical/dvc.yaml", documents):
        assert _modified_deps(tmp_path, pipeline) == set(), f"{pipeline}: an unchanged checkout must report every stage up to date"
    # BioMedRAG is filled rung by rung: every stage it has run is up to date, the rest never ran.
    biomedrag = ROOT / "experiments/biomedrag"
    ran = set(yaml.safe_load((biomedrag / "dvc.lock").read_text())["stages"])
    stale = _modified_deps(tmp_path, "experiments/biomedrag/dvc.yaml")
    assert not stale & ran, f"experiments/biomedrag: {sorted(stale & ran)} ran but are stale in an unchanged checkout"
    # Document retrieval fills method by method too.
    ran_r = set(yaml.safe_load((ROOT / "experiments/retrieval/dvc.lock").read_text())["stages"])
    assert {"retrieve@scifact-none", "report"} <= ran_r and not _modified_deps(tmp_path, retrieval) & ran_r
    # Chunking and its measures are separate stages: an edit to the measures re-runs no chunker.
    measures = tmp_path / "biochunk/evaluation/chunking.py"
    original = measures.read_bytes()
    measures.write_bytes(original + b"\n# an edit\n")
    assert _modified_deps(tmp_path, documents) == {"evaluate_docs@covidqa", "evaluate_docs@plos"}
    measures.write_bytes(original)
    with open(tmp_path / "biochunk/chunking/structural.py", "a") as f:
        f.write("\n# an edit\n")
    settings = yaml.safe_load((STRUCTURAL / "params.yaml").read_text())["settings"]
    assert _modified_deps(tmp_path, target) == {f"chunk@{s}" for s in settings}
    assert _modified_deps(tmp_path, "dvc.yaml") == {"chunk@embedded"}  # the default pipeline's chunk stage imports it too
    assert _modified_deps(tmp_path, documents) == {"chunk_docs@covidqa", "chunk_docs@plos"}  # every chunk_docs method runs
    # Every chunk method's stage (and reranking's) builds its chunker through chunking.build, which imports them all.
    chunked_r = _modified_deps(tmp_path, retrieval) & ran_r
    assert chunked_r == {s for s in ran_r if s.startswith(("retrieve@", "rerank@"))}, chunked_r
    # semchunk's chunk stage builds any chunker from params, so it imports this one too; nothing
    # after chunking reads it.
    chunked = _modified_deps(tmp_path, semchunk)
    assert chunked and all(s.startswith("chunk@") for s in chunked), chunked
    with open(tmp_path / "biochunk/evaluation/reports/structural.py", "a") as f:
        f.write("\n# an edit\n")
    assert "report" in _modified_deps(tmp_path, target)
    assert _modified_deps(tmp_path, "dvc.yaml") == {"chunk@embedded"}, "a paper's report is no dependency of the default pipeline"
    # Each paper's report imports its own table builder only (stages/report.py imports it by name).
    assert _modified_deps(tmp_path, semchunk) == chunked, "semchunk's report does not read structural's table builder"
    with open(tmp_path / "biochunk/evaluation/reports/semchunk.py", "a") as f:
        f.write("\n# an edit\n")
    assert _modified_deps(tmp_path, semchunk) == chunked | {"report"}
    assert _modified_deps(tmp_path, target) == {f"chunk@{s}" for s in settings} | {"report"}, "structural does not read semchunk's report"
    with open(tmp_path / "biochunk/evaluation/reports/documents.py", "a") as f:
        f.write("\n# an edit\n")
    assert _modified_deps(tmp_path, documents) == {"chunk_docs@covidqa", "chunk_docs@plos", "report"}
    assert _modified_deps(tmp_path, semchunk) == chunked | {"report"}, "semchunk does not read the long-document report"
    with open(tmp_path / "biochunk/evaluation/reports/retrieval.py", "a") as f:
        f.write("\n# an edit\n")
    assert _modified_deps(tmp_path, retrieval) & ran_r == chunked_r | {"report"}
    assert _modified_deps(tmp_path, documents) == {"chunk_docs@covidqa", "chunk_docs@plos", "report"}, "documents does not read it"


def test_a_paper_params_file_is_checked_before_any_work(tmp_path):
    good = yaml.safe_load((STRUCTURAL / "params.yaml").read_text())
    for mutate, needle in [
        (lambda p: p["sample"].pop("ks"), "sample.ks: missing"),
        (lambda p: p["sample"].update(max_queries=0), "sample.max_queries"),
        (lambda p: p.update(extra={}), "extra: unknown section"),
        (lambda p: p["settings"].update(bad="recursive"), "settings.bad: expected a mapping"),
    ]:
        p = yaml.safe_load(yaml.safe_dump(good))
        mutate(p)
        path = tmp_path / "params.yaml"
        path.write_text(yaml.safe_dump(p))
        with pytest.raises(UserError, match=needle.replace(".", r"\.")):
            experiments.load(path)


def test_the_default_pipelines_intervals_are_recomputed_from_its_per_input_counts():
    from biochunk import params
    from biochunk.evaluation.stats import bootstrap_ci
    from biochunk.evaluation.triples import PARTS, micro

    p = params.section("evaluate", ROOT / "params.yaml")
    metrics = json.loads((ROOT / "metrics/embedded.json").read_text())
    items = read_items(ROOT / "metrics/embedded-items.parquet")
    for part in PARTS:
        c = np.column_stack([items[f"{part}.{col}"] for col in ("tp", "predicted", "gold")])
        assert len(c) == metrics["data"]["test_inputs"]
        shown = metrics[part]
        assert micro(c)["f1"] == pytest.approx(shown["f1"], abs=1e-12)
        lo, hi = bootstrap_ci(c, lambda x: micro(x)["f1"], p.bootstrap, p.seed)
        assert (lo, hi) == pytest.approx((shown["f1_ci_low"], shown["f1_ci_high"]), abs=1e-12), part


def _run(stage: str, *args: str) -> None:
    r = run_python([sys.executable, str(ROOT / "stages" / stage), *args], cwd=ROOT)
    assert r.returncode == 0, f"{stage}: {r.stderr[-2000:]}"


@pytest.mark.slow
def test_the_structural_stages_end_to_end_on_a_small_collection(tmp_path):
    """sample -> embed_units -> chunk -> embed -> search -> evaluate -> report on a made-up
    BEIR folder: the settings reach the chunks, and the page's intervals are the items'."""
    import pandas as pd

    from biochunk.retrieval import collection

    topics = {
        "heart": "Cardiac output falls in heart failure. Diuretics relieve congestion. Beta blockers lower mortality.",
        "lung": "Asthma narrows the airways. Inhaled steroids reduce inflammation. Bronchodilators relax smooth muscle.",
        "liver": "Cirrhosis scars the liver. Alcohol is a common cause. Portal hypertension leads to varices.",
        "kidney": "Chronic kidney disease lowers filtration. Proteinuria predicts progression. Dialysis replaces function.",
    }
    docs = {f"{t}{i}": f"{t.title()} study {i}. " + (text + " ") * (1 + i) for t, text in topics.items() for i in range(3)}
    queries = pd.DataFrame({"query_id": [f"q{t}" for t in topics], "text": [f"treatment of {t} disease" for t in topics]})
    qrels = {f"q{t}": {f"{t}0": 1, f"{t}1": 1} for t in topics}
    coll = collection.Collection(pd.DataFrame({"doc_id": list(docs), "text": list(docs.values())}), queries, qrels, {}, qrels)
    data = tmp_path / "beir"
    data.mkdir()
    collection.write(coll, data)
    paper = tmp_path / "params.yaml"
    paper.write_text(yaml.safe_dump({
        "sample": {"dataset": "scifact", "max_queries": None, "max_documents": None, "seed": 42, "ks": [1, 3], "bootstrap": 50},
        "settings": {
            "structural-project": {"method": "structural"},
            "recursive": {"method": "recursive", "chunk_size": 120, "chunk_overlap": 0},
            "none": {"method": "none"},
            "structural-project-nocap": {"method": "structural", "max_tokens": None},
            "recursive-nocap": {"method": "recursive", "chunk_size": 120, "chunk_overlap": 0, "max_tokens": None},
        },
    }))  # fmt: skip
    settings = ("structural-project", "recursive", "none", "structural-project-nocap", "recursive-nocap")
    w = tmp_path / "work"
    _run("sample.py", "--data", str(data), "--paper", str(paper), "--out", str(w / "sample"))
    _run("embed_units.py", "--data", str(w / "sample"), "--out", str(w / "units"))
    counts = {}
    for s in settings:
        chunks = w / "chunks" / f"{s}.parquet"
        _run("chunk_corpus.py", "--data", str(w / "sample"), "--paper", str(paper), "--units", str(w / "units"), "--setting", s, "--out", str(chunks))
        _run("embed.py", "--chunks", str(chunks), "--out", str(w / "embed" / s))
        _run("search.py", "--data", str(w / "sample"), "--chunks", str(chunks), "--embeddings", str(w / "embed" / s),
             "--paper", str(paper), "--out", str(w / "hits" / f"{s}.parquet"))  # fmt: skip
        _run("evaluate_retrieval.py", "--data", str(w / "sample"), "--chunks", str(chunks), "--hits", str(w / "hits" / f"{s}.parquet"),
             "--paper", str(paper), "--scores", str(w / "scores" / f"{s}.parquet"), "--sizes", str(w / "sizes" / s / "sizes.parquet"),
             "--metrics", str(w / "scores" / f"{s}.json"))  # fmt: skip
        counts[s] = json.loads((w / "scores" / f"{s}.json").read_text())["chunks"]
    assert counts["none"] == len(docs) and counts["recursive"] > counts["none"], counts
    results = tmp_path / "results"
    _run("report.py", "--paper", "structural", "--paper-params", str(paper), "--sample", str(w / "sample" / "sample.json"),
         "--scores", str(w / "scores"), "--evaluated", str(w / "sizes"), "--results", str(results))  # fmt: skip
    page = (results / "structural.md").read_text()
    assert all(f"| {s} (" in page for s in settings), page
    table = json.loads((results / "data" / "structural-scifact-chunk-retrieval.json").read_text())
    # the uncapped rows are judged among themselves, and their verdicts say there is no cap
    verdicts = {d["label"]: d for d in table["differences"] if d["metric"] == "f1@3"}
    assert set(verdicts) == {"structural-project − recursive", "structural-project-nocap − recursive-nocap"}, verdicts
    assert "no cap on any method" in verdicts["structural-project-nocap − recursive-nocap"]["setting"]
    f1 = read_items(w / "scores" / "recursive.parquet")["f1@3"]
    row = next(r for r in table["rows"] if r["label"] == "recursive")
    assert row["ours"]["f1@3"]["value"] == pytest.approx(f1.mean())
    assert (results / "structural-sizes.png").stat().st_size > 0
