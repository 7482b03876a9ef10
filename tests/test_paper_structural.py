"""The structural paper pipeline: bad arguments end in one error line before any work, and the
report judges the uncapped (`-nocap`) settings among themselves, on made-up scores."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from tests.forked import run_python

ROOT = Path(__file__).resolve().parents[1]
PAPER = ROOT / "experiments" / "structural" / "params.yaml"


@pytest.mark.parametrize(
    "stage,args,needle",
    [
        ("chunk_corpus.py", ["--data", "{tmp}", "--paper", str(PAPER), "--setting", "semantic"], "--setting semantic: not in"),
        ("sample.py", ["--data", "nowhere", "--paper", str(PAPER)], "--data nowhere: no corpus.parquet"),
        ("sample.py", ["--data", "{tmp}", "--paper", "missing.yaml"], "missing.yaml: no such paper params file"),
        ("search.py", ["--data", "{tmp}", "--chunks", "c", "--embeddings", "e", "--paper", "missing.yaml"], "missing.yaml: no such paper params"),
    ],
)
def test_bad_arguments_end_in_one_error_line(tmp_path, stage, args, needle) -> None:
    argv = [a.replace("{tmp}", str(tmp_path)) for a in args]
    r = run_python([sys.executable, str(ROOT / "stages" / stage), *argv, "--out", str(tmp_path / "out")], ROOT)
    assert r.returncode == 2, r.stderr
    lines = [line for line in r.stderr.splitlines() if line.strip()]
    assert len(lines) == 1 and needle in lines[0], r.stderr
    assert not (tmp_path / "out").exists()


COLUMNS = ["item_id", "metric", "value"]


def _tables(tmp_path: Path, settings: dict) -> list:
    """The report's tables over made-up per-query scores and chunk sizes (no model): ``settings``
    as in experiments/structural/params.yaml, the project's params.yaml beneath them."""
    import numpy as np
    import pandas as pd
    import yaml

    from biochunk import experiments, params
    from biochunk.evaluation.reports import structural
    from biochunk.io import ITEM_SCORES, write_table

    body = yaml.safe_load(PAPER.read_text())
    body["settings"] = settings
    (tmp_path / "params.yaml").write_text(yaml.safe_dump(body, sort_keys=False))
    paper = experiments.load(tmp_path / "params.yaml")
    base, rp = params.section("chunk", ROOT / "params.yaml"), params.section("retrieve", ROOT / "params.yaml")
    chunk_params = {n: s.chunk_params(base, rp.chunk) for n, s in paper.settings.items()}
    rng = np.random.default_rng(0)
    queries = [f"q{i:02d}" for i in range(40)]
    for i, n in enumerate(paper.settings):
        rows = []
        for k in (5, 10):
            recall = rng.uniform(0, 1, len(queries)) * (i % 3 + 1) / 3
            per_query = {"p": recall / 2, "recall": recall, "f1": recall / 1.5, "ap": recall / 2, "success": recall > 0.2}
            rows += [(q, f"{m}@{k}", float(x)) for m, v in per_query.items() for q, x in zip(queries, v)]
        write_table(pd.DataFrame(rows, columns=COLUMNS), tmp_path / "scores" / f"{n}.parquet", ITEM_SCORES)
        words = rng.integers(20, 256 if chunk_params[n] and chunk_params[n].max_tokens else 600, 30)
        sizes = [(f"c{j}", m, float(w * f)) for j, w in enumerate(words) for m, f in (("words", 1), ("tokens", 1.5))]
        write_table(pd.DataFrame(sizes, columns=COLUMNS), tmp_path / "sizes" / n / "sizes.parquet", ITEM_SCORES)
    sample = {"queries": len(queries), "documents": 100}
    sizes_dirs, samples = {"scifact": tmp_path / "sizes"}, {"scifact": sample}
    return structural.tables(paper, chunk_params, tmp_path / "scores", sizes_dirs, samples, "minilm", tmp_path / "sizes.png")


CAPPED = {
    "structural-project": {"method": "structural"},
    "structural-authors": {"method": "structural", "alpha": 0.05, "structural_distance": "similarity"},
    "percentile": {"method": "percentile"},
    "recursive": {"method": "recursive"},
    "none": {"method": "none"},
}
UNCAPPED = {f"{n}-nocap": {**s, "max_tokens": None} for n, s in CAPPED.items() if n != "none"}


def test_uncapped_settings_are_judged_among_themselves_and_say_so(tmp_path) -> None:
    retrieval, sizes = _tables(tmp_path, {**CAPPED, **UNCAPPED})
    assert [r.label for r in retrieval.rows] == [*CAPPED, *UNCAPPED] == [r.label for r in sizes.rows]
    assert dict((r.label, r.note) for r in retrieval.rows)["percentile-nocap"] == "no cap"
    assert dict((r.label, r.note) for r in retrieval.rows)["percentile"] == "256-word cap"
    claimed = [d for d in retrieval.differences if d.claim is not None]
    # each structural form against percentile and recursive, under the four judged metrics, capped and not
    assert len(claimed) == 2 * 2 * 4 * 2
    for d in retrieval.differences:
        a, b = d.label.split(" − ")
        assert a.endswith("-nocap") == b.endswith("-nocap"), f"{d.label}: a capped setting paired with an uncapped one"
    for d in claimed:
        uncapped = d.label.split(" − ")[0].endswith("-nocap")
        assert ("no cap on any method" in d.setting) == uncapped and ("256-word cap" in d.setting) != uncapped, d
        assert d.sources and ("the project's form" in d.setting) == d.label.startswith("structural-project"), d
    forms = {"structural-authors-nocap − structural-project-nocap", "structural-authors − structural-project"}
    assert forms <= {d.label for d in retrieval.differences}
    notes = [n for n in retrieval.notes if n.startswith("The paper's claim")]
    assert len(notes) == 2 and "16 paired intervals of structural − baseline with the 256-word cap" in notes[0]
    assert "16 paired intervals of structural − baseline without a cap" in notes[1]
    assert not any("word cap" in (n.row if hasattr(n, "row") else n[0]) for n in retrieval.not_run)
    assert (tmp_path / "sizes.png").stat().st_size > 0


def test_a_capped_setting_without_its_uncapped_twin_is_listed_as_not_run(tmp_path) -> None:
    retrieval, _ = _tables(tmp_path, {**CAPPED, "percentile-nocap": UNCAPPED["percentile-nocap"]})
    (cap,) = [n for n in retrieval.not_run if "word cap" in n.row]
    assert cap.row.startswith("structural-project, structural-authors, recursive without the 256-word cap") and cap.command
    # no uncapped structural form: nothing uncapped to judge the claim with
    assert not any(d.label.endswith("percentile-nocap") for d in retrieval.differences)


def test_an_uncapped_setting_with_a_cap_is_refused(tmp_path) -> None:
    from biochunk.errors import UserError

    with pytest.raises(UserError, match=r"settings\.percentile-nocap: a -nocap setting is uncapped; add max_tokens: null"):
        _tables(tmp_path, {**CAPPED, "percentile-nocap": {"method": "percentile"}})


def test_the_project_form_note_states_the_committed_settings() -> None:
    """FORMS' note on the project's form is fixed text (the rows' own descriptions come from the
    params): hold it to structural-project's committed α and D_struct."""
    from biochunk import experiments, params
    from biochunk.evaluation.reports import structural

    paper = experiments.load(PAPER)
    base, rp = params.section("chunk", ROOT / "params.yaml"), params.section("retrieve", ROOT / "params.yaml")
    cp = paper.settings["structural-project"].chunk_params(base, rp.chunk)
    assert cp.method == "structural"
    assert f"α {cp.alpha:g}, {cp.structural_distance.capitalize()} D_struct" in structural.FORMS["structural-project"]
