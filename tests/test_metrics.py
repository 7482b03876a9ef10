import numpy as np
import pytest

from biochunk.evaluation.report import extraction_metrics, paired_difference
from biochunk.evaluation.stats import bootstrap_ci
from biochunk.evaluation.triples import counts, hit_at_k, micro, triple_metrics

GOLD = {
    "s1": [("Aspirin", "INHIBITS", "COX-2")],
    "s2": [("metformin", "TREATS", "diabetes"), ("metformin", "CAUSES", "lactic acidosis")],
    "s3": [("warfarin", "INTERACTS_WITH", "aspirin")],
}
PRED = {
    "s1": [("aspirin", "inhibits", "cox-2")],  # matches: comparison is lower-cased
    "s2": [("metformin", "TREATS", "diabetes"), ("metformin", "TREATS", "lactic acidosis")],
    # s3: no prediction
}


def test_micro_triples_by_hand():
    # tp = 1 (s1) + 1 (s2) = 2; predicted = 3; gold = 4
    m = triple_metrics(GOLD, PRED)["triple"]
    assert m["precision"] == pytest.approx(2 / 3)
    assert m["recall"] == pytest.approx(2 / 4)
    assert m["f1"] == pytest.approx(2 * (2 / 3) * 0.5 / (2 / 3 + 0.5))


def test_parts_by_hand():
    m = triple_metrics(GOLD, PRED)
    # heads as sets per input: s1 {aspirin} vs {aspirin}; s2 {metformin} vs {metformin}; s3 {warfarin} vs {}
    assert m["head"] == pytest.approx({"precision": 1.0, "recall": 2 / 3, "f1": 0.8})
    # relations: s1 1/1; s2 pred {treats} gold {treats, causes} -> tp 1; s3 gold 1
    assert m["relation"]["precision"] == pytest.approx(1.0)
    assert m["relation"]["recall"] == pytest.approx(2 / 4)
    # tails: s2 pred {diabetes, lactic acidosis} both gold
    assert m["tail"]["precision"] == pytest.approx(1.0) and m["tail"]["recall"] == pytest.approx(3 / 4)


def test_empty_prediction_scores_zero():
    assert micro(counts(GOLD, {}))["f1"] == 0.0


def test_hit_at_k():
    flags = [[False, True, False], [True, False, False], [False, False, False]]
    assert hit_at_k(flags, 1).tolist() == [0.0, 1.0, 0.0]
    assert hit_at_k(flags, 2).tolist() == [1.0, 1.0, 0.0]


def test_bootstrap_is_seeded_and_brackets_the_mean():
    data = np.array([0.0] * 30 + [1.0] * 70)
    a = bootstrap_ci(data, np.mean, n=1000, seed=7)
    assert a == bootstrap_ci(data, np.mean, n=1000, seed=7)
    assert a[0] < 0.7 < a[1]
    # a normal-approximation interval is 0.7 +- 1.96 * sqrt(0.21 / 100) = +-0.09
    assert a[1] - a[0] == pytest.approx(0.18, abs=0.03)


def test_extraction_metrics_have_intervals():
    m = extraction_metrics(GOLD, PRED, n_boot=200, seed=1)
    assert m["triple"]["f1_ci_low"] <= m["triple"]["f1"] <= m["triple"]["f1_ci_high"]


def test_paired_difference_by_hand_and_tighter_than_unpaired():
    # 100 inputs with one gold triple each; A right on the first 50, B on the first 52.
    gold = {f"s{i}": [("a", "r", f"t{i}")] for i in range(100)}
    a = {f"s{i}": [("a", "r", f"t{i}")] for i in range(50)}
    b = {f"s{i}": [("a", "r", f"t{i}")] for i in range(52)}
    d = paired_difference(gold, a, b, n_boot=500, seed=3)["triple"]
    # A: P 1, R 0.50 -> F1 2/3; B: P 1, R 0.52 -> F1 1.04/1.52
    assert d["f1_a"] == pytest.approx(2 / 3) and d["f1_b"] == pytest.approx(1.04 / 1.52)
    assert d["delta"] == pytest.approx(1.04 / 1.52 - 2 / 3)
    # B is never worse on any input, so no resample has B below A...
    assert 0.0 <= d["ci_low"] <= d["delta"] <= d["ci_high"]
    # ...and the paired interval is far narrower than either system's own.
    own = extraction_metrics(gold, b, n_boot=500, seed=3)["triple"]
    assert d["ci_high"] - d["ci_low"] < (own["f1_ci_high"] - own["f1_ci_low"]) / 3
    same = paired_difference(gold, a, a, n_boot=100, seed=3)["relation"]
    assert same["delta"] == same["ci_low"] == same["ci_high"] == 0.0


def test_histogram_table_gives_one_bar_per_size_when_sizes_are_few():
    import pandas as pd

    from biochunk.evaluation.plots import histogram_table

    chunks = pd.DataFrame({"method": ["fixed"] * 6 + ["adaptive"] * 3, "n_tokens": [1, 2, 5, 5, 5, 5, 10, 400, 900]})
    h = histogram_table(chunks, bins=30)
    fixed = h[h["method"] == "fixed"]
    # one row per integer size 1..5, none of two bins rounded onto one label
    assert fixed["n_tokens"].tolist() == [1, 2, 3, 4, 5] and fixed["chunks"].tolist() == [1, 1, 0, 0, 4]
    wide = h[h["method"] == "adaptive"]
    assert len(wide) == 30 and wide["chunks"].sum() == 3  # a wide range is binned
