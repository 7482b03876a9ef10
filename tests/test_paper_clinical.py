"""The clinical paper pipeline (experiments/clinical): its own stages (documents-first samples,
whole clusters, BM25 search), its params and runs, and its tables, every interval of which is
recomputed here from the per-item scores the pipeline tracks in git."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import yaml

from biochunk import experiments, params
from biochunk.errors import UserError
from biochunk.evaluation import judge
from biochunk.evaluation.papers import mean_ci, paired_delta, read_items
from biochunk.evaluation.reports import clinical
from biochunk.io import CHUNK_HITS, CHUNKS, read_json, read_table, write_table
from biochunk.retrieval import collection
from biochunk.retrieval.draws import documents_first
from tests.conftest import ROOT
from tests.knobs import clinical_stand_ins, item_scores
from tests.forked import run_python

CLINICAL = ROOT / "experiments" / "clinical"
RESULTS = ROOT / "docs" / "results" / "data"
SCORES = ROOT / "metrics" / "papers" / "clinical"

DOCS = {
    "d1": "Aspirin lowers fever. It also thins the blood. Children with a fever should not take it.",
    "d2": "Masks reduce droplet spread. Hand washing removes the virus. Distance helps too.",
    "d3": "Vaccines train the immune system. Boosters restore waning antibodies. Side effects are mild.",
}
QUESTIONS = {
    "q1": ("what lowers fever", "d1", 0, 20),
    "q2": ("what removes the virus", "d2", 29, 56),
    "q3": ("what restores antibodies", "d3", 34, 67),
}


def _paper(tmp_path: Path, dataset: str = "covidqa", **extra) -> Path:
    body = {
        "samples": {"toy": {"dataset": dataset, "max_queries": None, "max_documents": None, "seed": 42, "ks": [2], "bootstrap": 20}},
        "settings": {"cluster": {"method": "cluster", "n_clusters": 2}, "fixed": {"method": "fixed", "window": 3}},
    }  # fmt: skip
    body.update(extra)
    path = tmp_path / "params.yaml"
    path.write_text(yaml.safe_dump(body))
    return path


def _toy_sample(tmp_path: Path) -> Path:
    """A sampled folder as the sample stage writes it: the documents, questions and gold spans."""
    qrels = {q: {d: 1} for q, (_, d, _, _) in QUESTIONS.items()}
    queries = pd.DataFrame({"query_id": list(QUESTIONS), "text": [t for t, *_ in QUESTIONS.values()], "split": "test"})
    coll = collection.Collection(pd.DataFrame({"doc_id": list(DOCS), "text": list(DOCS.values())}), queries, qrels, {}, qrels)
    gold = pd.DataFrame(
        [(q, d, s, e) for q, (_, d, s, e) in QUESTIONS.items()], columns=["question_id", "doc_id", "start", "end"]
    )
    out = tmp_path / "sample"
    out.mkdir()
    collection.write(coll, out, gold)
    return out


def _stage(script: str, *args: str) -> subprocess.CompletedProcess:
    return run_python([sys.executable, str(ROOT / "stages" / script), *args], ROOT)


def _one_line(r: subprocess.CompletedProcess, needle: str) -> None:
    lines = [line for line in r.stderr.splitlines() if line.strip()]
    assert r.returncode == 2 and len(lines) == 1 and needle in lines[0], r.stderr


# -- BM25 as a search stage -----------------------------------------------------------------


@pytest.mark.slow
def test_search_bm25_writes_the_search_stages_table_with_the_params_k1_and_b(tmp_path):
    from biochunk.retrieval import bm25

    data = _toy_sample(tmp_path)
    sentences = [
        (d, i, t) for d, text in DOCS.items() for i, t in enumerate(s.strip() + "." for s in text.split(".") if s.strip())
    ]
    chunks = pd.DataFrame(
        {"doc_id": [d for d, _, _ in sentences], "chunk_id": [f"{d}#{i}" for d, i, _ in sentences], "text": [t for *_, t in sentences],
         "start": 0, "end": 1, "n_tokens": 1, "method": "toy", "labels": [[] for _ in sentences], "metadata": "{}"}
    )  # fmt: skip
    write_table(chunks, tmp_path / "chunks.parquet", CHUNKS)
    study = tmp_path / "project-params.yaml"
    study.write_text(yaml.safe_dump({"retrieve": {"k1": 1.2, "b": 0.75}}))  # the rest: params.yaml's values
    out = tmp_path / "hits.parquet"
    r = _stage("search_bm25.py", "--data", str(data), "--chunks", str(tmp_path / "chunks.parquet"), "--paper", str(_paper(tmp_path)),
               "--out", str(out), "--params", str(study))  # fmt: skip
    assert r.returncode == 0, r.stderr
    hits = read_table(out, CHUNK_HITS)
    assert sorted(set(hits["query_id"])) == list(QUESTIONS) and hits["rank"].max() == 2  # k = max of ks
    top = hits[hits["rank"] == 1].set_index("query_id")
    assert top.loc["q1", "chunk_id"] == "d1#0" and top.loc["q1", "doc_id"] == "d1"
    # The params file's k1 and b reach Pyserini: the same ranking and scores as bm25_run with them.
    direct = bm25.bm25_run(chunks["chunk_id"].tolist(), chunks["text"].tolist(), [t for t, *_ in QUESTIONS.values()], list(QUESTIONS), 2,
                           tmp_path / "index", 1.2, 0.75)  # fmt: skip
    for q, ranked in direct.items():
        got = hits[hits["query_id"] == q].sort_values("rank")
        assert got["chunk_id"].tolist() == [c for c, _ in ranked]
        assert got["score"].to_numpy() == pytest.approx([s for _, s in ranked], rel=1e-6)


@pytest.mark.parametrize(
    "args,needle",
    [
        (["--sample", "other"], "--sample other: not in"),
        (["--params", "BAD"], "retrieve.k1"),
    ],
)
def test_bad_arguments_of_search_bm25_end_in_one_error_line(tmp_path, args, needle):
    bad = tmp_path / "bad.yaml"
    bad.write_text(yaml.safe_dump({"retrieve": {"k1": -1.0}}))
    args = [str(bad) if a == "BAD" else a for a in args]
    out = tmp_path / "out"
    r = _stage("search_bm25.py", "--data", str(tmp_path), "--chunks", "c", "--paper", str(_paper(tmp_path)), *args, "--out", str(out))
    _one_line(r, needle)
    assert not out.exists()


# -- whole clusters ----------------------------------------------------------------------------


def test_whole_clusters_joins_the_cluster_runs_chunks_into_one_per_cluster(tmp_path):
    from biochunk.chunking.cluster import whole_clusters

    data, paper = _toy_sample(tmp_path), _paper(tmp_path)
    r = _stage("chunk_corpus.py", "--data", str(data), "--paper", str(paper), "--setting", "cluster", "--out", str(tmp_path / "c.parquet"))
    assert r.returncode == 0, r.stderr
    r = _stage("whole_clusters.py", "--chunks", str(tmp_path / "c.parquet"), "--out", str(tmp_path / "w.parquet"))
    assert r.returncode == 0, r.stderr
    runs, joined = read_table(tmp_path / "c.parquet", CHUNKS), read_table(tmp_path / "w.parquet", CHUNKS)
    pd.testing.assert_frame_equal(joined, whole_clusters(runs))
    assert len(joined) == len(runs.groupby(["doc_id", runs["metadata"].map(lambda m: json.loads(m)["cluster"])]))
    assert all("spans" in json.loads(m) for m in joined["metadata"])


def test_whole_clusters_of_another_methods_chunks_ends_in_one_line(tmp_path):
    data, paper = _toy_sample(tmp_path), _paper(tmp_path)
    r = _stage("chunk_corpus.py", "--data", str(data), "--paper", str(paper), "--setting", "fixed", "--out", str(tmp_path / "f.parquet"))
    assert r.returncode == 0, r.stderr
    r = _stage("whole_clusters.py", "--chunks", str(tmp_path / "f.parquet"), "--out", str(tmp_path / "w.parquet"))
    _one_line(r, "give the chunks of a setting with method: cluster")
    assert not (tmp_path / "w.parquet").exists()


# -- documents-first samples -------------------------------------------------------------------


def _collection() -> collection.Collection:
    docs = pd.DataFrame({"doc_id": [f"d{i}" for i in range(10)], "text": [f"text {i}" for i in range(10)]})
    qrels = {f"q{i:02d}": {f"d{i % 10}": 1} for i in range(30)}
    qrels["q99"] = {"d1": 1, "d2": 1}  # about two documents
    queries = pd.DataFrame({"query_id": list(qrels), "text": list(qrels), "split": "test"})
    return collection.Collection(docs, queries, qrels, {}, qrels)


def test_a_documents_first_sample_keeps_the_drawn_documents_and_every_question_about_them():
    coll = _collection()
    part = documents_first(coll, None, 3, seed=7)
    drawn = collection.seeded_sample(coll.docs["doc_id"].tolist(), 3, 7)
    assert part.docs["doc_id"].tolist() == drawn  # the one seeded draw, in document order
    about = sorted(q for q, r in coll.qrels.items() if set(r) & set(drawn))
    assert part.queries["query_id"].tolist() == about
    assert all(set(r) <= set(drawn) and r for r in part.qrels.values())  # judgements on drawn documents only
    assert documents_first(coll, 2, 3, seed=7).queries["query_id"].tolist() == about[:2]
    assert documents_first(coll, None, None, 7).qrels == coll.qrels  # null: everything


def test_the_sample_documents_stage_draws_from_a_sample_into_the_sample_stages_layout(tmp_path):
    """Out of a sample stage's folder: the same draw as documents_first, read back by every later
    stage, the gold spans of what is kept, and a sample.json that says how it was drawn."""
    full = _collection()
    source = tmp_path / "source"
    source.mkdir()
    gold = pd.DataFrame([(q, d, 0, 4) for q, r in full.qrels.items() for d in r], columns=["question_id", "doc_id", "start", "end"])
    collection.write(full, source, gold)
    (source / "sample.json").write_text(json.dumps({"dataset": "covidqa", "left out": {"questions without a located gold span": 2}}))
    paper = _paper(tmp_path, samples={"toy": {"dataset": "covidqa", "max_queries": None, "max_documents": 3, "seed": 7, "ks": [2],
                                              "bootstrap": 20}})  # fmt: skip
    r = _stage("sample_documents.py", "--data", str(source), "--paper", str(paper), "--sample", "toy", "--out", str(tmp_path / "out"))
    assert r.returncode == 0, r.stderr
    got, want = collection.load(tmp_path / "out", "retrieval"), documents_first(collection.load(source, "retrieval"), None, 3, 7)
    assert got.docs["doc_id"].tolist() == want.docs["doc_id"].tolist() and got.qrels == want.qrels
    kept = collection.read_gold(tmp_path / "out")
    assert set(kept["question_id"]) == set(want.qrels) and set(kept["doc_id"]) <= set(want.docs["doc_id"])
    meta = read_json(tmp_path / "out" / "sample.json")
    assert meta["draw"] == "documents" and (meta["documents"], meta["of_documents"], meta["queries"]) == (3, 10, len(want.queries))
    assert meta["left out"] == {"questions without a located gold span": 2}  # the source's count, carried
    other = _paper(tmp_path, dataset="bioasq")
    r = _stage("sample_documents.py", "--data", str(source), "--paper", str(other), "--out", str(tmp_path / "other"))
    _one_line(r, "a sample of covidqa, but samples.toy.dataset is bioasq")


# -- the paper's params and runs ---------------------------------------------------------------


def test_the_clinical_params_and_runs_name_every_part_and_row():
    paper = experiments.load(CLINICAL / "params.yaml")
    parts = clinical.parts(paper)
    assert list(parts) == list(paper.samples) == ["retrieval", "proposition", "headers"]  # one sample per part
    assert parts["retrieval"].joined == {"cluster-whole": "cluster"}
    assert parts["retrieval"].settings == ("recursive", "fixed", "cluster", "adaptive", "fixed-250", "fixed-400", "fixed-600",
                                           "cluster-whole", "adaptive-sentence", "adaptive-repair")  # table order  # fmt: skip
    for name in (*parts["retrieval"].settings, *parts["proposition"].settings):
        assert name in clinical.ROWS, f"{name}: no row in the report module"
    # The study's settings start from the project's chunk section (retrieve.chunk's cap undone).
    assert all(s.overrides.get("max_tokens", "unset") is None for s in paper.settings.values())


def _runs(tmp_path: Path, mutate) -> Path:
    """A copy of the study's params and runs, with ``mutate`` applied to the runs."""
    (tmp_path / "params.yaml").write_text((CLINICAL / "params.yaml").read_text())
    runs = yaml.safe_load((CLINICAL / "runs.yaml").read_text())
    mutate(runs)
    (tmp_path / "runs.yaml").write_text(yaml.safe_dump(runs))
    return tmp_path / "params.yaml"


def _add(key: str, run: str, body: dict):
    return lambda r: r[key].update({run: body})


@pytest.mark.parametrize(
    "mutate,needle",
    [
        (_add("measured", "headers-nope", {"sample": "headers", "setting": "nope"}), "setting 'nope' is not in"),
        (_add("measured", "x-adaptive", {"sample": "x", "setting": "adaptive"}), "measured.x-adaptive.sample: 'x' is not a part's sample"),
        (_add("measured", "h", {"sample": "headers", "setting": "adaptive"}), "name the run <sample>-<setting>"),
        (_add("measured", "headers-fixed", {"sample": "headers", "setting": "fixed"}), "chunked: 'headers-fixed' disagrees with measured"),
        (_add("chunked", "headers-fixed", {"sample": "headers", "setting": "fixed"}), "chunked: 'headers-fixed' disagrees with measured"),
        (lambda r: r["whole_clusters"]["retrieval-cluster-whole"].pop("of"), "expected {of, sample, setting}"),
        (lambda r: r["bm25"].pop("retrieval-fixed"), "bm25: 'retrieval-fixed' disagrees with measured"),
        (_add("bm25", "headers-adaptive", {"sample": "headers", "setting": "adaptive"}), "bm25: 'headers-adaptive' disagrees"),
        (lambda r: r.pop("chunked"), "chunked: expected a mapping"),
        (lambda r: [r[k].pop(n) for k in r for n in list(r[k]) if n.startswith("headers-")], "no run of the headers part"),
    ],
)
def test_a_bad_runs_file_is_named_before_any_table(tmp_path, mutate, needle):
    paper = experiments.load(_runs(tmp_path, mutate))
    with pytest.raises(UserError) as e:
        clinical.parts(paper)
    assert needle in str(e.value)


def test_the_runs_file_is_a_params_file_as_any():
    """DVC reads runs.yaml as params (the report stage's), so it takes the project's rules for
    one: no anchors or aliases, no duplicate keys (the report module reads it with plain YAML)."""
    text = (CLINICAL / "runs.yaml").read_text()
    assert params.parse_yaml_text(text, "runs.yaml") == yaml.safe_load(text)


def test_the_project_params_are_the_projects_but_the_studys_keys():
    ours = yaml.safe_load((CLINICAL / "project-params.yaml").read_text())
    project = yaml.safe_load((ROOT / "params.yaml").read_text())
    changed = {"qa": {"methods", "contexts", "corpus", "decline"}, "retrieve": {"k1", "b"}}
    for section in set(ours) | set(project):
        keep = changed.get(section, set())
        mine, theirs = ours.get(section), project.get(section)
        if isinstance(mine, dict) and isinstance(theirs, dict):
            mine, theirs = ({k: v for k, v in d.items() if k not in keep} for d in (mine, theirs))
        assert mine == theirs, f"project-params.yaml: {section} differs from params.yaml beyond the study's keys {sorted(keep)}"
    from biochunk.retrieval.contexts import arms

    loaded = params.load(CLINICAL / "project-params.yaml")  # a valid params file, checked as any
    qa, rp = loaded["qa"], loaded["retrieve"]
    assert qa.decline and qa.corpus == "sampled" and arms(qa.contexts, qa.methods) == list(clinical.ANSWER_ARMS)  # every arm has a row
    assert (rp.k1, rp.b) == (1.2, 0.75)  # the study's BM25


def test_the_pipeline_runs_each_part_on_its_sample():
    dvc = yaml.safe_load((CLINICAL / "dvc.yaml").read_text())
    stages = dvc["stages"]
    assert dvc["vars"] == ["runs.yaml", "judge.yaml"]
    parts = clinical.parts(experiments.load(CLINICAL / "params.yaml"))  # also checks that the lists agree
    assert stages["chunk"]["foreach"] == "${chunked}" and "stages/chunk_corpus.py" in stages["chunk"]["do"]["cmd"]
    assert stages["whole_clusters"]["foreach"] == "${whole_clusters}"
    for group in ("embed", "search", "evaluate"):
        assert stages[group]["foreach"] == "${measured}", group
    for group in ("search_bm25", "evaluate_bm25"):
        assert stages[group]["foreach"] == "${bm25}", group
    # The generator's samples are drawn documents first, the retrieval sample queries first.
    assert set(stages["sample_documents"]["foreach"]) == {parts["proposition"].sample, parts["headers"].sample}
    assert f"--sample {parts['retrieval'].sample} " in stages["sample"]["cmd"]
    # The report reads every sample's sample.json and sizes, in the params' order.
    cmd = stages["report"]["cmd"].split()
    samples = list(experiments.load(CLINICAL / "params.yaml").samples)
    assert [cmd[i + 1] for i, w in enumerate(cmd) if w == "--sample"] == [f"data/papers/clinical/{s}/sample/sample.json" for s in samples]
    assert [cmd[i + 1] for i, w in enumerate(cmd) if w == "--evaluated"] == [f"data/papers/clinical/{s}/sizes" for s in samples]


# -- the tables, from the tracked per-item scores ----------------------------------------------


def _table(section: str) -> dict:
    path = RESULTS / f"clinical-{section}.json"
    table = json.loads(path.read_text()) if path.is_file() else {}
    if table.get("command") != clinical.COMMAND:  # absent, or still the retired script's table
        pytest.skip(f"{path.name}: not rendered by the pipeline yet (dvc repro experiments/clinical/dvc.yaml)")
    return table


def _close(estimate, shown: dict) -> None:
    assert (estimate.value, estimate.lo, estimate.hi) == pytest.approx((shown["value"], shown["lo"], shown["hi"]), abs=1e-12)


@pytest.mark.parametrize("section,part,retriever", [("retrieval", "retrieval", "dense"), ("bm25", "retrieval", "bm25"),
                                                    ("proposition", "proposition", "dense"), ("headers", "headers", "dense")])  # fmt: skip
def test_every_clinical_interval_is_recomputed_from_the_tracked_per_item_scores(section, part, retriever):
    table = _table(section)
    paper = experiments.load(CLINICAL / "params.yaml")
    p = clinical.parts(paper)[part]
    s = paper.samples[p.sample]
    items = {n: read_items(SCORES / p.sample / retriever / f"{n}.parquet") for n in p.settings}
    assert len(table["rows"]) == len(p.settings)
    for name, row in zip(p.settings, table["rows"]):
        for metric, col in clinical.METRICS.items():
            _close(mean_ci(items[name][col], s.bootstrap, s.seed), row["ours"][metric])
    by_label = {clinical.label(n): n for n in p.settings}
    if part == "headers":
        base, rp = params.section("chunk", ROOT / "params.yaml"), params.section("retrieve", ROOT / "params.yaml")
        by_label = {f"{paper.settings[n].chunk_params(base, rp.chunk).header} header": n for n in p.settings}
    assert table["differences"], "the table shows no paired difference"
    for d in table["differences"]:
        b, a = (by_label[x] for x in d["label"].split(" − "))
        _close(
            paired_delta(items[a][clinical.METRICS[d["metric"]]], items[b][clinical.METRICS[d["metric"]]], s.bootstrap, s.seed),
            d["ours"],
        )


def test_the_non_response_intervals_are_recomputed_from_the_tracked_per_question_scores():
    table = _table("non-response")
    s = experiments.load(CLINICAL / "params.yaml").samples["retrieval"]
    scores = pd.read_csv(SCORES / "non-response" / "report" / "scores.csv", dtype={"question_id": str})
    by = {m: g for m, g in scores.sort_values(["method", "question_id"]).groupby("method")}
    arms = {label: arm for arm, label in clinical.ANSWER_ARMS.items()}
    assert table["rows"], "the table shows no arm"
    for row in table["rows"]:
        for metric, col in clinical.ANSWER_METRICS.items():
            _close(mean_ci(by[arms[row["label"]]][col].to_numpy(), s.bootstrap, s.seed), row["ours"][metric])
    for d in table["differences"]:
        b, a = d["label"].split(" − ")
        _close(paired_delta(by[a]["declined"].to_numpy(), by[b]["declined"].to_numpy(), s.bootstrap, s.seed), d["ours"])


def _judged(ratings: pd.DataFrame) -> dict[str, dict[str, pd.Series]]:
    """judge_qa's ratings as arm -> scale -> rating by question id, as the report pairs them."""
    return {
        arm: {scale: r.set_index("question_id")["rating"].astype(float).sort_index() for scale, r in g.groupby("scale")}
        for arm, g in ratings.groupby("method")
    }


def _check_judge_table(table: dict, ratings: pd.DataFrame, bootstrap: int, seed: int) -> None:
    """Every interval of the judge table is its ratings' (a rating left empty is out of its arm's
    mean and of the pairs it is in), every paper cell and direction cited, every setting named."""
    by = _judged(ratings)
    arms = {label: arm for arm, label in clinical.ANSWER_ARMS.items()}
    assert [row["label"] for row in table["rows"]] == [lab for arm, lab in clinical.ANSWER_ARMS.items() if arm in by]
    for row in table["rows"]:
        for metric, (scale, _) in clinical.JUDGE_METRICS.items():
            _close(mean_ci(by[arms[row["label"]]][scale].dropna().to_numpy(), bootstrap, seed), row["ours"][metric])
            assert row["paper"].get(metric) is None or row["sources"][metric], f"{row['label']}: a paper cell without its source"
    assert len(table["differences"]) == 2 * len(clinical.JUDGE_PAIRS)
    for d in table["differences"]:
        b, a = d["label"].split(" − ")
        scale = clinical.JUDGE_METRICS[d["metric"]][0]
        both = pd.concat([by[a][scale], by[b][scale]], axis=1, join="inner").dropna()
        _close(paired_delta(both.iloc[:, 0].to_numpy(), both.iloc[:, 1].to_numpy(), bootstrap, seed), d["ours"])
        assert d["paper"] and d["sources"] and d["setting"] and d["direction"] in ("confirmed", "reversed", "not separable"), d
        assert "not two medical experts" in d["setting"] and "the paper's test: " in d["setting"]
    assert all(n["command"] == clinical.JUDGE_COMMAND for n in table["not_run"])


def test_the_judge_intervals_are_recomputed_from_the_tracked_ratings():
    table = _table("judge")
    s = experiments.load(CLINICAL / "params.yaml").samples["retrieval"]
    _check_judge_table(table, read_table(SCORES / "non-response" / "judge" / "ratings.parquet", judge.RATINGS), s.bootstrap, s.seed)


def test_the_committed_clinical_metrics_are_the_means_of_the_per_item_scores():
    files = sorted(f for r in ("dense", "bm25") for f in SCORES.glob(f"*/{r}/*.json"))
    if not files:
        if any(_rendered(s) for s in ("retrieval", "bm25", "proposition", "headers")):
            pytest.fail(f"the clinical tables are rendered, but {SCORES} holds no per-setting metrics")
        pytest.skip("no clinical metrics yet (dvc repro experiments/clinical/dvc.yaml)")
    for path in files:
        metrics = json.loads(path.read_text())
        items = read_items(path.with_suffix(".parquet"))
        assert metrics["queries"] == len(items["f1@5"])
        for m, values in items.items():
            assert metrics[m] == pytest.approx(float(np.mean(values)), abs=1e-12), f"{path}: {m}"


def _rendered(section: str) -> bool:
    path = RESULTS / f"clinical-{section}.json"
    return path.is_file() and json.loads(path.read_text()).get("command") == clinical.COMMAND


# -- the report stage on made-up per-item files --------------------------------------------------


def test_the_report_stage_renders_every_clinical_table_from_the_per_item_files(tmp_path):
    """report.py --paper clinical on made-up inputs laid out as experiments/clinical/dvc.yaml
    lays them out: five tables, one row per run of each part, every interval the items'."""
    study = tmp_path / "experiments"
    study.mkdir()
    body = yaml.safe_load((CLINICAL / "params.yaml").read_text())
    for s in body["samples"].values():
        s["bootstrap"] = 30
    (study / "params.yaml").write_text(yaml.safe_dump(body))
    for f in ("runs.yaml", "project-params.yaml"):
        (study / f).write_text((CLINICAL / f).read_text())
    paper = experiments.load(study / "params.yaml")
    parts = clinical.parts(paper)
    data, scores, rng = tmp_path / "data", tmp_path / "metrics", np.random.default_rng(0)
    questions = {p: [f"q{i:03d}" for i in range(n)] for p, n in (("retrieval", 40), ("proposition", 12), ("headers", 20))}
    items = {}
    for part in parts.values():
        work = data / part.sample
        (work / "sample").mkdir(parents=True)
        draw = {"draw": "documents"} if part.name != "retrieval" else {}
        (work / "sample" / "sample.json").write_text(json.dumps(
            {"dataset": "covidqa", **draw, "queries": len(questions[part.sample]), "of_queries": 1380, "documents": 2,
             "of_documents": 98, "seed": 42}))  # fmt: skip
        for n in part.settings:
            sizes = {"words": np.array([10, 20, 30]), "tokens": np.array([12, 24, 36])}
            item_scores(work / "sizes" / n / "sizes.parquet", ["c1", "c2", "c3"], sizes)
            for r in ("dense", "bm25") if part.name == "retrieval" else ("dense",):
                p = rng.random(len(questions[part.sample]))
                items[part.name, r, n] = {"p@5": p, "recall@5": p**0.5, "f1@5": p * 0.8}
                item_scores(scores / part.sample / r / f"{n}.parquet", questions[part.sample], items[part.name, r, n])
            if part.name == "retrieval":  # what search_bm25 --report writes
                (scores / part.sample / "search-bm25").mkdir(parents=True, exist_ok=True)
                (scores / part.sample / "search-bm25" / f"{n}.json").write_text(json.dumps({"k1": 1.2, "b": 0.75}))
    clinical_stand_ins(data)
    arms = list(clinical.ANSWER_ARMS)
    answered = pd.DataFrame([(a, f"q{i}", float(rng.random() < 0.2), float(rng.random() < 0.5), rng.random()) for a in arms for i in range(10)],
                            columns=["method", "question_id", "declined", "context_has_answer", "rouge2_f1"])  # fmt: skip
    (scores / "non-response" / "report").mkdir(parents=True)
    answered.to_csv(scores / "non-response" / "report" / "scores.csv", index=False)
    # What judge_qa writes: a rating per arm, question and scale, a few replies without one.
    rated = pd.DataFrame([(f"q{i}", a, sc, "r", None if rng.random() < 0.1 else int(rng.integers(1, 4)))
                          for sc in judge.SCALES for a in arms for i in range(10)], columns=judge.RATINGS.names)  # fmt: skip
    rated["rating"] = rated["rating"].astype("Int64")
    write_table(rated, scores / "non-response" / "judge" / "ratings.parquet", judge.RATINGS)
    (scores / "non-response" / "judge" / "report.json").write_text(json.dumps(
        {"model": "smollm2-135m", "max_new_tokens": 4, "cue": judge.CUE, "questions": 10, "counts": judge.counts(rated)}))  # fmt: skip
    results = tmp_path / "results"
    args = [a for s in paper.samples for a in ("--sample", str(data / s / "sample" / "sample.json"), "--evaluated", str(data / s / "sizes"))]
    r = _stage("report.py", "--paper", "clinical", "--paper-params", str(study / "params.yaml"), "--scores", str(scores),
               "--results", str(results), *args)  # fmt: skip
    assert r.returncode == 0, r.stderr[-3000:]
    s = paper.samples["retrieval"]
    for section, part, retriever in (("retrieval", "retrieval", "dense"), ("bm25", "retrieval", "bm25"),
                                     ("proposition", "proposition", "dense"), ("headers", "headers", "dense")):  # fmt: skip
        table = json.loads((results / "data" / f"clinical-{section}.json").read_text())
        assert table["command"] == clinical.COMMAND and len(table["rows"]) == len(parts[part].settings), section
        first = parts[part].settings[0]
        _close(mean_ci(items[part, retriever, first]["f1@5"], s.bootstrap, s.seed), table["rows"][0]["ours"]["f1@5"])
    bm25 = json.loads((results / "data" / "clinical-bm25.json").read_text())
    assert "k1 1.2, b 0.75" in bm25["title"]  # what search_bm25 reported
    table = json.loads((results / "data" / "clinical-non-response.json").read_text())
    assert [row["label"] for row in table["rows"]] == list(clinical.ANSWER_ARMS.values())
    table = json.loads((results / "data" / "clinical-judge.json").read_text())
    _check_judge_table(table, rated, s.bootstrap, s.seed)
    page = (results / "clinical.md").read_text()
    assert "SmolLM2-135M is not a capable judge" in page and clinical.JUDGE_COMMAND in page
    lost = int(rated[rated["scale"] == "accuracy"]["rating"].isna().sum())
    assert f"Unparseable here: accuracy {lost} and relevance" in page
    # Every row not run, in every table, says why and gives the command that would run it.
    for path in sorted((results / "data").glob("clinical-*.json")):
        for n in json.loads(path.read_text())["not_run"]:
            assert n["reason"] and n["command"], f"{path.name}: {n['row']}: not run, without the reason and the command"
    # A proposition sample drawn queries first is refused: its table counts articles drawn first.
    (data / "proposition" / "sample" / "sample.json").write_text(json.dumps({"queries": 12, "documents": 2}))
    r = _stage("report.py", "--paper", "clinical", "--paper-params", str(study / "params.yaml"), "--scores", str(scores),
               "--results", str(results), *args)  # fmt: skip
    _one_line(r, "samples.proposition: the proposition table counts a seeded set of articles")


def test_the_row_labels_state_the_committed_settings():
    """ROWS' labels are fixed text: a changed setting does not show on its row (docs/pipeline.md,
    the knob test's finding). Until they are derived from the settings, hold them to the
    committed settings, so an edit of experiments/clinical/params.yaml that they misdescribe fails here."""
    paper = experiments.load(CLINICAL / "params.yaml")
    base, rp = params.section("chunk", ROOT / "params.yaml"), params.section("retrieve", ROOT / "params.yaml")
    cp = {n: s.chunk_params(base, rp.chunk) for n, s in paper.settings.items()}
    label, _, note, _ = clinical.ROWS["recursive"]
    r = cp["recursive"]
    assert r.method == "recursive" and f"{r.chunk_size}/{r.chunk_overlap}" in label
    assert f"{r.chunk_size:,} / {r.chunk_overlap}" in note
    for n in ("fixed-250", "fixed-400", "fixed-600"):
        label, *_ = clinical.ROWS[n]
        assert cp[n].method == "fixed" and f"{cp[n].window}/{cp[n].overlap}" in label, n
    for n in clinical.REPAIR:
        label, _, note, _ = clinical.ROWS[n]
        assert cp[n].method == "adaptive" and cp[n].unit == "sentence" and "sentence" in label, n
        assert f"sentence units, minimum {cp[n].min_words} words" in note, n
    assert cp["adaptive-sentence"].boundary_overlap == 0 < cp["adaptive-repair"].boundary_overlap
