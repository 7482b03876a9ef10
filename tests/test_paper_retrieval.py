"""The document-retrieval pipeline (experiments/retrieval): its page is rendered from the
tracked metrics and per-query scores, every interval recomputes from those scores, the page
fills method by method, and its report reads nothing else."""

from __future__ import annotations

import json
import sys

import numpy as np
import pandas as pd
import pytest

from biochunk import params
from biochunk.errors import UserError
from biochunk.evaluation.papers import read_items, to_json
from biochunk.evaluation.reports import retrieval
from biochunk.evaluation.stats import bootstrap_ci
from biochunk.io import ITEM_SCORES, write_table
from tests.conftest import ROOT
from tests.forked import run_python

METRICS = ROOT / "metrics" / "papers" / "retrieval"
DATASETS = ["scifact", "bioasq"]  # the report's --datasets in experiments/retrieval/dvc.yaml
RETRIEVERS = ["bm25", "dense", "hybrid"]
MEASURES = ["ndcg@10", "map", "mrr@10", "recall@5", "recall@100"]


def _toy(folder, n: int = 40, methods=("none", "fixed", "semchunk"), seed: int = 0, rerank: bool = True) -> None:
    """The retrieve stages' metrics and per-query scores for ``n`` queries, one pair of files per
    method and one for reranking, under ``folder/toy`` (``fixed`` and the trained reranker a little better)."""
    rng = np.random.default_rng(seed)
    out = folder / "toy"
    out.mkdir(parents=True, exist_ok=True)

    def scores(runs):
        rows, m = [], {}
        for r, x in runs:
            lift = 0.05 if x == "fixed" or r == "rerank-trained" else 0.0
            for measure in MEASURES:
                v = np.clip(rng.uniform(0, 1, n) + lift, 0, 1)
                rows += [(f"q{i}", f"{r}/{x}/{measure}", float(s)) for i, s in enumerate(v)]
                m.setdefault(r, {}).setdefault(x, {"queries": n})[measure] = float(v.mean())
        return pd.DataFrame(rows, columns=ITEM_SCORES.names), m

    for i, x in enumerate(methods):
        df, m = scores([(r, x) for r in RETRIEVERS])
        m["rerank"] = {"skipped": "no --reranker given"}
        m["corpus"] = {"documents": 90, "queries": n, "chunks": {x: 100 + i}}
        (out / f"{x}.json").write_text(json.dumps(m))
        write_table(df, out / f"{x}.parquet", ITEM_SCORES)
    if rerank:
        df, m = scores([(r, "none") for r in [*RETRIEVERS, *retrieval.RERANK]])
        body = {r: m[r] for r in RETRIEVERS}
        body["rerank"] = {"base": "bm25/none", "depth": 10, **{k: m[f"rerank-{k}"]["none"] for k in ("bm25", "init", "trained")}}
        body["corpus"] = {"documents": 90, "queries": n, "chunks": {"none": 90}}
        (out / "rerank.json").write_text(json.dumps(body))
        write_table(df, out / "rerank.parquet", ITEM_SCORES)


def test_every_cell_of_the_page_is_the_tracked_metrics_and_scores():
    # The committed JSON beside the page is what the report builds today from the committed
    # metrics and per-query scores: no cell was typed by hand, and none is stale.
    rp = params.section("retrieve", ROOT / "params.yaml")
    unit = params.section("corpus", ROOT / "params.yaml").bioasq_unit
    built = retrieval.tables(METRICS, DATASETS, rp.bm25_methods + rp.dense_methods, rp.ks, bioasq_unit=unit)
    assert [t.section for t in built] == [s for ds in DATASETS for s in (ds, f"{ds}-rerank")]
    for t in built:
        committed = json.loads((ROOT / "docs/results/data" / f"retrieval-{t.section}.json").read_text())
        assert json.loads(json.dumps(to_json(t), default=float)) == committed, t.section
        assert f"<!-- paper-table:{t.section}:start -->" in (ROOT / "docs/results/retrieval.md").read_text()
    # The per-query means are the metrics each stage wrote (one scoring, two views of it).
    for path in sorted(p for ds in DATASETS for p in (METRICS / ds).glob("*.json")):
        metrics = json.loads(path.read_text())
        items = read_items(path.with_suffix(".parquet"))
        for r in RETRIEVERS:
            for x, m in metrics.get(r, {}).items():
                assert items[f"{r}/{x}/ndcg@10"].mean() == pytest.approx(m["ndcg@10"], abs=1e-12), path.name
                assert len(items[f"{r}/{x}/ndcg@10"]) == m["queries"] == metrics["corpus"]["queries"]
        if "trained" in metrics["rerank"]:
            assert items["rerank-trained/none/ndcg@10"].mean() == pytest.approx(metrics["rerank"]["trained"]["ndcg@10"], abs=1e-12)


@pytest.mark.parametrize("dataset", DATASETS)
def test_a_published_interval_recomputes_from_the_tracked_per_query_scores(dataset):
    # One interval of the page, resampled again from the parquet files by hand: the paired
    # bootstrap over queries of a chunk method minus whole documents under BM25.
    committed = json.loads((ROOT / f"docs/results/data/retrieval-{dataset}.json").read_text())
    diff = committed["differences"][0]  # the first method run, under BM25
    method = diff["label"].split(" − ")[0]
    assert diff["label"] == f"{method} − none (bm25)"
    a, b = (read_items(METRICS / dataset / f"{x}.parquet") for x in ("none", method))
    d = b[f"bm25/{method}/ndcg@10"] - a["bm25/none/ndcg@10"]
    lo, hi = bootstrap_ci(d, np.mean, 1000, 42)
    assert (diff["ours"]["value"], diff["ours"]["lo"], diff["ours"]["hi"]) == pytest.approx((d.mean(), lo, hi), abs=1e-12)


def test_tables_hold_every_method_in_params_order_with_paired_differences(tmp_path):
    _toy(tmp_path)
    methods_t, rerank_t = retrieval.tables(tmp_path, ["toy"], ["none", "semchunk", "fixed", "none"], [5, 100])
    assert not methods_t.not_run and not rerank_t.not_run
    assert [r.label for r in methods_t.rows] == ["none", "semchunk", "fixed"]  # params order, once each
    assert methods_t.metrics == ["chunks"] + [f"{r} {x}" for r in RETRIEVERS for x in ("nDCG@10", "R@100")]
    assert methods_t.rows[2].ours["chunks"].value == 101
    fixed_metrics = json.loads((tmp_path / "toy" / "fixed.json").read_text())
    assert methods_t.rows[2].ours["dense nDCG@10"].value == pytest.approx(fixed_metrics["dense"]["fixed"]["ndcg@10"])
    assert [d.label for d in methods_t.differences] == [f"{x} − none ({r})" for r in RETRIEVERS for x in ("semchunk", "fixed")]
    assert all(d.direction == "no published figure" for d in methods_t.differences)  # no paper states these
    none, fixed = (read_items(tmp_path / "toy" / f"{x}.parquet") for x in ("none", "fixed"))
    d = fixed["bm25/fixed/ndcg@10"] - none["bm25/none/ndcg@10"]
    ours = methods_t.differences[1].ours
    assert (ours.value, ours.lo, ours.hi) == pytest.approx((d.mean(), *bootstrap_ci(d, np.mean, 1000, 42)))
    assert any(n.startswith("Multiple comparisons: 6 paired differences") for n in methods_t.notes)
    assert [r.label for r in rerank_t.rows] == list(retrieval.RERANK.values())
    assert rerank_t.metrics == ["nDCG@10", "MAP", "MRR@10", "R@5"]
    assert [d.label for d in rerank_t.differences] == [
        "cross-encoder, trained − cross-encoder, untrained initialisation", "cross-encoder, trained − BM25 alone"
    ]


def test_methods_not_run_yet_and_reranking_off_are_listed_with_their_command(tmp_path):
    _toy(tmp_path, methods=("none", "fixed"), rerank=False)
    methods_t, rerank_t = retrieval.tables(tmp_path, ["toy"], ["none", "fixed", "semchunk", "cluster"], [5, 100])
    assert [r.label for r in methods_t.rows] == ["none", "fixed"]
    assert [(n.row, n.command) for n in methods_t.not_run] == [
        (x, f"`dvc repro experiments/retrieval/dvc.yaml:retrieve@toy-{x}`") for x in ("semchunk", "cluster")
    ]
    assert not rerank_t.rows and rerank_t.not_run[0].command == "`dvc repro experiments/retrieval/dvc.yaml:rerank@toy`"
    # A collection without training judgements: the stage ran and said why it did not rerank.
    (tmp_path / "toy" / "rerank.json").write_text(json.dumps({"rerank": {"skipped": "no training judgements in data"}}))
    _, rerank_t = retrieval.tables(tmp_path, ["toy"], ["none", "fixed"], [5, 100])
    assert rerank_t.not_run[0].reason == "no training judgements in data"


def test_stale_or_partial_outputs_are_refused_in_one_line(tmp_path):
    _toy(tmp_path)
    # Metrics of a method the params no longer name: stale, refused before rendering.
    with pytest.raises(UserError, match=r"metrics of toy: methods .*; re-run experiments/retrieval/dvc.yaml"):
        retrieval.tables(tmp_path, ["toy"], ["none", "fixed"], [5, 100])
    # Without whole documents there is nothing to compare the chunk methods with.
    (tmp_path / "toy" / "none.json").unlink()
    with pytest.raises(UserError, match=r"no none run in .*retrieve@toy-none"):
        retrieval.tables(tmp_path, ["toy"], ["none", "fixed", "semchunk"], [5, 100])
    # Methods measured over different collections cannot share a table.
    _toy(tmp_path)
    body = json.loads((tmp_path / "toy" / "fixed.json").read_text())
    body["corpus"]["queries"] = 7
    (tmp_path / "toy" / "fixed.json").write_text(json.dumps(body))
    with pytest.raises(UserError, match=r"fixed.json: 7 queries, other methods 40: not one collection"):
        retrieval.tables(tmp_path, ["toy"], ["none", "fixed", "semchunk"], [5, 100])
    # Per-query files whose queries are not in the same order cannot be paired position by position.
    _toy(tmp_path)
    scores = pd.read_parquet(tmp_path / "toy" / "semchunk.parquet")
    write_table(scores.iloc[::-1], tmp_path / "toy" / "semchunk.parquet", ITEM_SCORES)
    with pytest.raises(UserError, match=r"semchunk.parquet: its queries differ from none's"):
        retrieval.tables(tmp_path, ["toy"], ["none", "fixed", "semchunk"], [5, 100])
    # A per-query file that lacks a run its metrics name.
    _toy(tmp_path)
    scores = pd.read_parquet(tmp_path / "toy" / "fixed.parquet")
    write_table(scores[~scores.metric.str.startswith("dense/fixed/")], tmp_path / "toy" / "fixed.parquet", ITEM_SCORES)
    with pytest.raises(UserError, match=r"per-query scores of toy: no per-query scores 'dense/fixed/ndcg@10'"):
        retrieval.tables(tmp_path, ["toy"], ["none", "fixed", "semchunk"], [5, 100])


def test_the_report_stage_renders_into_the_page_and_keeps_its_prose(tmp_path):
    metrics = tmp_path / "metrics"
    _toy(metrics)
    (tmp_path / "params.yaml").write_text("retrieve:\n  bm25_methods: [none, fixed, semchunk]\n  dense_methods: [none, fixed, semchunk]\n  ks: [5, 100]\n")
    results = tmp_path / "results"
    results.mkdir()
    (results / "retrieval.md").write_text("# Page\n\nProse kept.\n\n<!-- paper-table:toy:start -->\nOLD-TABLE\n<!-- paper-table:toy:end -->\n")
    cmd = [
        sys.executable, str(ROOT / "stages" / "report_retrieval.py"), "--metrics", str(metrics), "--datasets", "toy",
        "--results", str(results), "--params", str(tmp_path / "params.yaml"),
    ]  # fmt: skip
    r = run_python(cmd, tmp_path)
    assert r.returncode == 0, r.stderr[-2000:]
    page = (results / "retrieval.md").read_text()
    assert page.startswith("# Page\n\nProse kept.\n") and "OLD-TABLE" not in page
    assert "| fixed − none (dense) | nDCG@10 | — |" in page and "<!-- paper-table:toy-rerank:start -->" in page
    assert json.loads((results / "data" / "retrieval-toy.json").read_text())["section"] == "toy"
    figure = (results / retrieval.FIGURE).read_bytes()
    assert figure.startswith(b"\x89PNG") and len(figure) > 5000
    again = run_python(cmd, tmp_path)
    assert again.returncode == 0 and (results / retrieval.FIGURE).read_bytes() == figure, "the figure must reproduce byte for byte"
    bad = run_python([*cmd[:5], "nope", *cmd[6:]], tmp_path)
    lines = [x for x in bad.stderr.splitlines() if x.strip()]
    assert bad.returncode != 0 and len(lines) == 1 and "no none run in" in lines[0], bad.stderr


def test_the_pipeline_has_one_stage_per_method_the_params_name():
    # DVC iterates a list written in dvc.yaml; the report lists a params method without scores as
    # "not run yet" with the command of its stage, so that stage must exist.
    import yaml

    stages = yaml.safe_load((ROOT / "experiments/retrieval/dvc.yaml").read_text())["stages"]
    rp = params.section("retrieve", ROOT / "params.yaml")
    assert stages["retrieve"]["matrix"]["method"] == list(dict.fromkeys(rp.bm25_methods + rp.dense_methods))
    # Every dataset the report renders has its retrieve, rerank and reranker-training stages.
    assert stages["retrieve"]["matrix"]["dataset"] == stages["rerank"]["foreach"] == stages["train_reranker"]["foreach"] == DATASETS
    assert f"--datasets {' '.join(DATASETS)}" in stages["report"]["cmd"]
