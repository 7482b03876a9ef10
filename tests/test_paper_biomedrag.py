"""BioMedRAG as a pipeline (experiments/biomedrag/): its rung lists and settings files agree,
every rung's settings reach the stages that read them, and the page's figures are recomputed
from the tracked per-sentence scores; a rung not run yet is listed with its command."""

from __future__ import annotations

import json
import subprocess
import sys

import numpy as np
import pandas as pd
import pytest
import yaml

from biochunk import params as P
from biochunk.datasets.describe import describe
from biochunk.errors import UserError
from biochunk.evaluation.papers import paired_statistic
from biochunk.evaluation.reports import biomedrag as B
from biochunk.evaluation.triples import micro
from biochunk.io import CLASSIFICATION, ITEM_SCORES, TRIPLES, write_json, write_table
from tests.conftest import ROOT

HERE = ROOT / "experiments" / "biomedrag"
SPEC = yaml.safe_load((HERE / "rungs.yaml").read_text())
PIPELINE = yaml.safe_load((HERE / "dvc.yaml").read_text())["stages"]
# What a triple rung's file may set: the paper's switches and the sample size (rungs.yaml says why).
TRIPLE_KEYS = {
    "chunk": {"method", "entity_windows", "propositions", "tiers", "hierarchy", "hierarchy_order", "entities"},
    "rank": {"selection"},
    "generate": {"n_examples", "max_inputs"},
}
ADE_KEYS = {"chunk": {"method"}, "classify": {"max_inputs"}}


def rung_file(name: str) -> dict:
    return yaml.safe_load((HERE / "rungs" / f"{name}.yaml").read_text())


def _keys(d: dict) -> dict[str, set[str]]:
    return {s: set(body) for s, body in d.items()}


def test_every_rung_has_a_settings_file_with_exactly_the_switches_dvc_tracks():
    files = {p.stem for p in (HERE / "rungs").glob("*.yaml")}
    assert files == set(SPEC["rungs"]) | set(SPEC["ade"]), "rungs/ holds a file per rung and ADE arm, no other"
    for name in SPEC["rungs"]:
        assert _keys(rung_file(name)) == TRIPLE_KEYS, name
    for name in SPEC["ade"]:
        assert _keys(rung_file(name)) == ADE_KEYS, name
    # Each file is valid params (every value checked as the stages check it).
    for name in files:
        P.load(HERE / "rungs" / f"{name}.yaml")
    # dvc.yaml lists exactly these keys under the rung's file, the rest under params.yaml.
    listed = {
        k for st in ("chunk", "rank", "generate") for e in PIPELINE[st]["do"]["params"] if isinstance(e, dict)
        for f, keys in e.items() if f.startswith("experiments/biomedrag/rungs/") for k in keys
    }  # fmt: skip
    assert listed == {f"{s}.{k}" for s, ks in TRIPLE_KEYS.items() for k in ks}


def test_rungs_on_one_memory_chunk_alike_and_every_memory_is_used():
    memories = SPEC["memories"]
    used = {r["memory"] for r in SPEC["rungs"].values()}
    assert used == set(memories), "a memory no rung reads, or a rung on a memory not listed"
    for name, r in SPEC["rungs"].items():
        m = memories[r["memory"]]
        assert m["dataset"] == r["dataset"], f"{name}: its memory chunks another dataset"
        assert rung_file(name)["chunk"] == rung_file(m["rung"])["chunk"], (
            f"{name}: its chunk settings differ from those its memory {r['memory']} was made with ({m['rung']}.yaml)"
        )
    # The GM-CIHT rungs are compared pairwise: one sample size for all.
    sizes = {rung_file(n)["generate"]["max_inputs"] for n, r in SPEC["rungs"].items() if r["dataset"] == "gm-ciht"}
    assert len(sizes) == 1


def test_the_report_knows_every_rung_and_cites_every_paper_number():
    assert {r.name for r in B.RUNGS} | {f"{d}-{m}" for d in B.OTHER for m in ("fixed", "hybrid")} == set(SPEC["rungs"])
    assert set(B.ADE_ARMS.values()) == set(SPEC["ade"])
    for r in B.RUNGS:
        assert (r.f1 is None) == (r.source is None), r.name
        if r.source:
            assert r.source.figure and float(r.source.figure) / 100 == pytest.approx(r.f1), r.name
    for (p, rec, f), sources in B.TABLE3.values():
        assert sources[0].quote.split()[-3:] == [f"{x * 100:.1f}" for x in (p, rec, f)]
    # A published step's delta is its two rungs' published figures apart (Table 4-7's Δ column).
    for a, b, label, delta, claim, source in B.STEPS:
        assert (delta is None and claim is None) == (source is None), label
        if delta is not None:
            assert B.BY_NAME[b].f1 - B.BY_NAME[a].f1 == pytest.approx(delta, abs=1e-9), label


def _items(rows: dict[str, tuple[float, float, float]]) -> pd.DataFrame:
    out = []
    for i, (tp, pred, gold) in rows.items():
        for part in ("triple", "head", "relation", "tail"):
            out += [(i, f"{part}.tp", tp), (i, f"{part}.predicted", pred), (i, f"{part}.gold", gold)]
    return pd.DataFrame(out, columns=ITEM_SCORES.names)


def _converted(root, relations: dict[str, list[str]]) -> None:
    """Converted splits as the convert stage writes them: one triple row per relation label
    given, per split, and report.json counting the rows (ADE: no dev, labels 0/1)."""
    for ds in B.TABLE2:
        folder = root / ds
        folder.mkdir(parents=True)
        splits = ("train", "test") if ds == "ade" else ("train", "dev", "test")
        written = {}
        for s in splits:
            if ds == "ade":
                df = pd.DataFrame({"id": [f"{s}-0", f"{s}-1"], "split": s, "text": ["a", "b"], "label": [0, 1]})
                write_table(df, folder / f"{s}.parquet", CLASSIFICATION)
            else:
                rels = relations.get(ds, ["r"])
                df = pd.DataFrame({"id": [f"{s}-{i}" for i in range(len(rels))], "split": s, "sentence": "x", "head": "h", "relation": rels, "tail": "t"})
                write_table(df, folder / f"{s}.parquet", TRIPLES)
            written[s] = len(df)
        dropped = {"test": {"exact duplicate": 3}} if ds == "gm-ciht" else {}
        read = {s: n + sum(dropped.get(s, {}).values()) for s, n in written.items()}
        write_json({"dataset": ds, "rows_read": read, "rows_written": written, "rows_dropped": dropped, "rows_repaired": {}}, folder / "report.json")


def _described(root) -> list:
    """The describe stage's file per converted folder under ``root`` (metrics/papers/datasets/<dataset>.json)."""
    for ds in B.TABLE2:
        task = "classification" if ds == "ade" else "triples"
        write_json({"dataset": ds, "task": task, **describe(root / ds, task)}, root / "described" / f"{ds}.json")
    return [root / "described" / f"{ds}.json" for ds in B.TABLE2]


def test_the_splits_table_sets_the_converted_counts_beside_table_2(tmp_path):
    _converted(tmp_path, {"ddi": ["None", "None", "effect"]})
    t = B.splits_table(_described(tmp_path))
    rows = {r.label: r for r in t.rows}
    assert rows["gm-ciht: rows in the mirror's files"].ours["test"].value == 4  # 1 kept + 3 dropped
    assert rows["gm-ciht: what the pipeline reads"].ours["test"].value == 1
    ddi = rows["ddi: without the None label"]
    assert ddi.ours["relation types"].value == 1 and ddi.ours["train"].value == 1
    assert rows["ddi: rows in the mirror's files"].ours["relation types"].value == 2
    assert "dev" not in rows["ade: rows in the mirror's files"].ours  # the mirror ships no ADE dev split
    for r in t.rows:  # every paper cell is Table 2's, with its line
        ds = r.label.split(":")[0]
        assert r.paper == B.TABLE2[ds][0] and all(s == (B.TABLE2[ds][1],) for s in r.sources.values())
    assert B.TABLE2["ddi"][0] == {"relation types": 4, "train": 1027, "dev": 258, "test": 1094}
    ddi = rows["ddi: without the None label"]
    assert ddi.note == "pairs with no interaction stated; 6 rows" and list(ddi.ours) == ["relation types", "train", "dev", "test"]
    with pytest.raises(UserError, match="--datasets names no ade.json"):
        B.splits_table([tmp_path / "described" / "ddi.json"])


def test_rungs_are_paired_on_the_same_sentences_and_missing_ones_are_listed(tmp_path):
    scores = tmp_path / "scores"
    scores.mkdir()
    write_table(_items({"1": (1, 1, 1), "2": (0, 1, 1), "3": (1, 2, 1)}), scores / "fixed-items.parquet", ITEM_SCORES)
    write_table(_items({"1": (1, 1, 1), "2": (1, 1, 1), "3": (1, 1, 1)}), scores / "hybrid-bias-items.parquet", ITEM_SCORES)
    _converted(tmp_path / "interim", {})
    described = _described(tmp_path / "interim")
    tables = B.tables(HERE / "rungs.yaml", scores, described)
    gm = next(t for t in tables if t.section == "gm-ciht-ablations")
    assert [r.label for r in gm.rows] == ["fixed 5-word windows", "+hierarchy = hybrid, proposition bias"]
    assert gm.rows[1].ours["exact-triple F1"].value == 1.0
    step = next(d for d in gm.differences if d.label == "hybrid − fixed" and d.metric == "exact-triple F1")
    assert step.ours.value == pytest.approx(1.0 - micro(np.array([[1, 1, 1], [0, 1, 1], [1, 2, 1]]))["f1"])
    assert step.paper == 0.084 and step.sources and step.setting
    missing = {n.row for n in gm.not_run} - {B.PAPER_MODELS.row}  # the paper's 13B models: a GPU's run, always listed
    assert missing == {r.label for r in B.RUNGS} - {r.label for r in gm.rows}
    assert all("dvc repro experiments/biomedrag/dvc.yaml:evaluate@" in n.command for n in gm.not_run if n is not B.PAPER_MODELS)
    assert B.PAPER_MODELS in gm.not_run and "generate.model" in B.PAPER_MODELS.command
    ade = next(t for t in tables if t.section == "ade")
    assert {n.row for n in ade.not_run} == {"ADE fixed", "ADE hybrid"}
    # A dataset with both arms is paired and says what its sample can detect; the other is listed.
    write_table(_items({"1": (1, 1, 1), "2": (0, 1, 1), "3": (0, 2, 1)}), scores / "ddi-fixed-items.parquet", ITEM_SCORES)
    write_table(_items({"1": (1, 1, 1), "2": (1, 1, 1), "3": (0, 2, 1)}), scores / "ddi-hybrid-items.parquet", ITEM_SCORES)
    other = next(t for t in B.tables(HERE / "rungs.yaml", scores, described) if t.section == "ddi-chemprot")
    assert {d.label for d in other.differences} == {"ddi: hybrid − fixed"}
    assert {n.row for n in other.not_run} == {"chemprot fixed", "chemprot hybrid"}
    detect = [n for n in other.notes if n.startswith("Smallest exact-triple F1 difference")]
    assert len(detect) == 1 and "n = 150 sentences" in detect[0], other.notes
    # Another sample for one rung is refused in one line, not silently intersected.
    write_table(_items({"1": (1, 1, 1), "4": (1, 1, 1)}), scores / "hybrid-entity-items.parquet", ITEM_SCORES)
    with pytest.raises(UserError, match="other test sentences"):
        B.tables(HERE / "rungs.yaml", scores, described)


def test_the_committed_page_is_recomputed_from_the_tracked_scores():
    """Every interval of the GM-CIHT table, from metrics/papers/biomedrag/<rung>-items.parquet."""
    table = json.loads((ROOT / "docs/results/data/biomedrag-gm-ciht-ablations.json").read_text())
    scores = ROOT / "metrics/papers/biomedrag"
    by_label = {r.label: r.name for r in B.RUNGS}
    assert table["rows"], "no rung measured"
    for row in table["rows"]:
        w = B.read_wide(scores / f"{by_label[row['label']]}-items.parquet")
        c = w[["triple.tp", "triple.predicted", "triple.gold"]].to_numpy(dtype=float)
        again = paired_statistic(c, lambda x: micro(x)["f1"], B.N_BOOT, B.SEED)
        shown = row["ours"]["exact-triple F1"]
        assert (again.value, again.lo, again.hi) == pytest.approx((shown["value"], shown["lo"], shown["hi"]), abs=1e-12)
    lock = yaml.safe_load((HERE / "dvc.lock").read_text())["stages"]
    measured = {n for n in SPEC["rungs"] if f"evaluate@{n}" in lock} | {n for n in SPEC["ade"] if f"classify@{n}" in lock}
    assert measured == {p.name[: -len("-items.parquet")] for p in scores.glob("*-items.parquet")}, (
        "the tracked scores are exactly those of the rungs the lock records as run"
    )
    listed = {n["row"] for t in ("gm-ciht-ablations", "ddi-chemprot", "ade")
              for n in json.loads((ROOT / f"docs/results/data/biomedrag-{t}.json").read_text())["not_run"]} - {B.PAPER_MODELS.row}  # fmt: skip
    labels = {r.name: r.label for r in B.RUNGS} | {f"{d}-{m}": f"{d} {m}" for d in B.OTHER for m in ("fixed", "hybrid")}
    labels |= {v: f"ADE {k}" for k, v in B.ADE_ARMS.items()}
    assert listed == {labels[n] for n in [*SPEC["rungs"], *SPEC["ade"]] if n not in measured}


def test_a_rungs_settings_reach_the_stage_that_reads_them(tmp_path):
    """A rung file's switch decides what the stage computes: the chunk stage on the embedded
    data with two rung files that differ only in chunk.method writes different memories."""
    data = ROOT / "data" / "interim" / "embedded" / "train.parquet"
    if not data.is_file():
        pytest.skip(f"{data} is absent: run `dvc repro convert@embedded` first")
    out = {}
    for name in ("fixed", "hybrid-bias"):
        dst = tmp_path / name
        r = subprocess.run(
            [sys.executable, "stages/chunk.py", "--dataset", "embedded", "--train", str(data), "--out", str(dst),
             "--params", str(HERE / "rungs" / f"{name}.yaml")],
            cwd=ROOT, capture_output=True, text=True,
        )  # fmt: skip
        assert r.returncode == 0, r.stderr[-2000:]
        out[name] = pd.read_parquet(dst / "chunks.parquet")
    assert set(out["fixed"]["method"]) == {"fixed"} and set(out["hybrid-bias"]["method"]) == {"hybrid"}
    assert len(out["hybrid-bias"]) > len(out["fixed"])


def test_the_bootstrap_p_agrees_with_the_interval_and_holm_counts_the_whole_table():
    """p < 0.05 where the paired 95% interval excludes 0; identical rungs give p = 1; the note
    adjusts over every difference of the table, not only the published ones."""
    rng = np.random.default_rng(0)
    n = 120
    fixed = _items({str(i): (float(rng.random() < 0.3), 1, 1) for i in range(n)}).pivot(index="item_id", columns="metric", values="value")
    better = fixed.copy()
    better["triple.tp"] = 1.0  # every sentence right: far above fixed
    est, p = B._triple_difference(fixed, better, "exact-triple F1")
    assert est.lo > 0 and p < 0.05
    est, p = B._triple_difference(fixed, fixed, "exact-triple F1")
    assert est.value == 0 and p == 1.0
    d = B.Difference("b − a", "exact-triple F1", None, est)
    note = B._holm_note([(d, 0.01), (d, 0.04), (d, 0.5)])
    assert "3 paired differences" in note and "before adjustment for 2" in note
    assert "Holm p = 0.030" in note and "after Holm's adjustment over all 3: 1" in note
