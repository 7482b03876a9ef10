"""The paper-vs-project table: direction of published differences, and the marked block."""

from __future__ import annotations

import json

import numpy as np

from biochunk.evaluation.papers import Difference, Estimate, PaperTable, Row, direction, paired_delta, publish


def test_direction_needs_an_interval_that_excludes_zero():
    assert direction(+0.5, Estimate(0.2, 0.1, 0.3)) == "confirmed"
    assert direction(-0.5, Estimate(0.2, 0.1, 0.3)) == "reversed"
    assert direction(+0.5, Estimate(0.2, -0.1, 0.3)) == "not separable"
    assert direction(None, Estimate(0.2, 0.1, 0.3)) == "no published figure"


def test_paired_delta_is_narrower_than_unpaired_noise():
    rng = np.random.default_rng(0)
    a = rng.normal(size=200)
    b = a + 0.1  # the same items, shifted: every resample sees exactly +0.1
    d = paired_delta(a, b)
    assert abs(d.value - 0.1) < 1e-12 and d.lo > 0.09 and d.hi < 0.11


def test_publish_replaces_only_its_block(tmp_path):
    md = tmp_path / "p.md"
    md.write_text("# P\n\nprose before\n", encoding="utf-8")
    t = PaperTable(
        paper="p",
        section="s1",
        title="T",
        command="make paper-p",
        sample="10 items",
        models="m",
        wall_s=60,
        metrics=["f1"],
        rows=[Row("a", {"f1": 0.5}, {"f1": Estimate(0.4, 0.3, 0.5)})],
        differences=[Difference("b − a", "f1", 0.1, Estimate(0.05, -0.01, 0.11))],
        not_run=[("c", "needs a GPU")],
    )
    publish(t, tmp_path)
    publish(t, tmp_path)  # idempotent: one block, prose kept
    text = md.read_text(encoding="utf-8")
    assert text.count("paper-table:s1:start") == 1 and "prose before" in text
    assert "0.500 / 0.400 [0.300, 0.500]" in text and "not separable" in text and "- c: needs a GPU" in text
    body = json.loads((tmp_path / "data" / "p-s1.json").read_text())
    assert body["differences"][0]["direction"] == "not separable"


def test_metric_digits_format_only_their_metric():
    from biochunk.evaluation.papers import render

    t = PaperTable(
        paper="p", section="s", title="T", command="c", sample="n", models="m", wall_s=1, metrics=["f1", "chunks"],
        rows=[Row("a", {}, {"f1": Estimate(0.4, 0.3, 0.5), "chunks": Estimate(812.0)})],
    )  # fmt: skip
    assert "— / 812.000 |" in render(t)
    t.metric_digits = {"chunks": 0}
    assert "— / 812 |" in render(t) and "— / 0.400 [0.300, 0.500]" in render(t)


def test_a_direction_stated_in_words_is_judged_and_every_source_is_listed_once():
    from biochunk.evaluation.papers import NotRun, Source, render, to_json

    said = Source("p.txt", "line 3", "B beats A", None)
    number = Source("p.txt", "Table 2, line 9", "A scores 0.50", "0.50")
    t = PaperTable(
        paper="p", section="s", title="T", command="c", sample="n", models="m", wall_s=None, metrics=["f1"],
        rows=[Row("a", {"f1": 0.5}, {"f1": Estimate(0.4, 0.3, 0.5)}, sources={"f1": (number,)})],
        differences=[
            Difference("b − a", "f1", None, Estimate(-0.1, -0.2, -0.05), claim=1, sources=(said,), setting="k 5, not 10"),
            Difference("c − a", "f1", None, Estimate(0.1, 0.05, 0.2), claim=1, sources=(said,)),
            Difference("d − a", "f1", None, Estimate(0.1, 0.05, 0.2)),
        ],
        not_run=[NotRun("e", "needs an API", "`run e`", (said,))],
    )  # fmt: skip
    assert [d.direction for d in t.differences] == ["reversed", "confirmed", "no published figure"]
    text = render(t)
    assert "0.500 [1] / 0.400" in text and "| > 0 (stated) [2] |" in text and "| reversed | k 5, not 10 |" in text
    assert "- e [2]: needs an API Command: `run e`" in text
    assert text.count("`p.txt`, line 3: “B beats A”") == 1 and "`p.txt`, Table 2, line 9: “A scores 0.50”" in text
    body = to_json(t)
    assert body["differences"][0]["sources"][0]["quote"] == "B beats A" and body["rows"][0]["sources"]["f1"][0]["figure"] == "0.50"
