"""benchmarks/papers/bioasq.py: the experiment's params are valid and give the paper's arms."""

from __future__ import annotations

import argparse

import pandas as pd
import pytest
import yaml

from benchmarks.papers.bioasq import TABLE2, UNRANKED, best_variant, icl_params, run_params
from biochunk import params
from biochunk.errors import UserError
from biochunk.retrieval.contexts import arms
from tests.conftest import ROOT


def _args(**kw):
    base = {
        "params": ROOT / "params.yaml", "max_questions": 40, "context_words": 300, "n_examples": 1, "reranker": "minilm",
        "set": [], "icl_examples": 3, "out": ROOT / "build" / "paper-bioasq",
    }  # fmt: skip
    return argparse.Namespace(**{**base, **kw})


def test_run_params_give_table_1_and_2_arms(tmp_path):
    pf = tmp_path / "params.yaml"
    pf.write_text(yaml.safe_dump(run_params(_args(set=["generate.model=smollm2-135m"]))))
    loaded = params.load(pf)
    got = arms(loaded["qa"].contexts, loaded["qa"].methods, [a for a, _ in loaded["reshape"].expand()])
    assert got == ["none", "gold", UNRANKED, *TABLE2]
    settings = dict(loaded["reshape"].expand())
    assert (
        settings[UNRANKED].rank == "none"
        and settings["reshaped:ce-10x15"].top_m == 10
        and settings["reshaped:ce-10x15"].keep == 15
    )
    assert loaded["qa"].max_questions == 40
    assert run_params(_args(max_questions=0))["qa"]["max_questions"] is None  # 0: every held-out question
    with pytest.raises(UserError, match="--set nope"):
        run_params(_args(set=["nope"]))


def test_best_variant_and_its_icl_run(tmp_path):
    scores = pd.DataFrame({"method": ["gold", UNRANKED, *TABLE2], "rouge2_f1": [0.9, 0.8, 0.1, 0.5, 0.2, 0.3, 0.1, 0.1]})
    assert best_variant(scores) == "reshaped:ce-5x10"  # gold and unranked are not Table 2 arms
    p = icl_params(_args(), "reshaped:ce-5x10")
    assert p["qa"]["contexts"] == ["none", "reshaped"] and p["qa"]["examples_by_type"] and p["qa"]["n_examples"] == 3
    assert [v["name"] for v in p["reshape"]["variants"]] == ["ce-5x10"]


def test_trained_reranker_answers_only_the_batches_it_never_saw(tmp_path):
    p = run_params(_args(reranker="trained", out=tmp_path / "run"))
    held_out = yaml.safe_load((ROOT / "params.yaml").read_text())["retrieve"]["qa_test_splits"]
    assert p["qa"]["question_splits"] == held_out and held_out
    assert p["reshape"]["reranker"] == str(tmp_path / "run" / "reranker")  # the train_reranker stage's output
    untrained = run_params(_args(reranker="minilm", out=tmp_path / "run"))
    assert untrained["qa"]["question_splits"] == [] and untrained["reshape"]["reranker"] == "minilm"


def test_the_script_finds_the_repository_params_and_stages():
    from benchmarks.papers import bioasq

    assert bioasq.ROOT == ROOT and (bioasq.ROOT / "stages" / "qa_context.py").is_file()


def test_ranker_note_reports_the_gold_record_hit_rates_per_top_m():
    from benchmarks.papers.bioasq import ranker_note

    hits = {a: {"gold_doc_hit@1": 0.5, "gold_doc_hit@k": 0.8} for a in [UNRANKED, *TABLE2]}
    hits["reshaped:ce-10x4"] = {"gold_doc_hit@1": 0.6, "gold_doc_hit@k": 0.9}
    note = ranker_note({"gold_document_hits": hits})
    assert "unranked topics 0.500 / 0.800" in note and "ranked, 10 communities 0.600 / 0.900" in note
    assert "x 10" not in note  # keep does not change which communities are read first
