"""The semchunk paper pipeline's pieces: named samples, peer settings, QA datasets judged by
answer spans, and the stages end to end on a made-up COVID-QA folder."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import yaml

from biochunk import experiments
from biochunk.chunking import Document, chunk_table
from biochunk.chunking.peers import PeerChunker
from biochunk.errors import UserError
from biochunk.evaluation.papers import ALPHA, detectable, holm, mean_ci, p_value, paired_delta, read_items
from biochunk.io import ANSWERS, DOCUMENTS, QA_QUESTIONS, QA_SNIPPETS, write_table
from biochunk.retrieval import collection
from tests.conftest import ROOT
from tests.forked import run_python

SEMCHUNK = ROOT / "experiments" / "semchunk"
SAMPLE = {"dataset": "covidqa", "max_queries": None, "max_documents": None, "seed": 42, "ks": [1, 2], "bootstrap": 50}


def _paper(tmp_path: Path, body: dict) -> Path:
    path = tmp_path / "params.yaml"
    path.write_text(yaml.safe_dump(json.loads(json.dumps(body)), sort_keys=False))  # no aliases; settings in order
    return path


def test_named_samples_and_peer_settings_are_read_and_checked(tmp_path):
    paper = experiments.load(SEMCHUNK / "params.yaml")
    assert set(paper.samples) == {"covidqa", "bioasq"}
    assert paper.sample_named("bioasq").dataset == "bioasq"
    assert paper.settings["semchunk"].peer == "semchunk" and paper.settings["ours-semchunk"].peer is None
    with pytest.raises(UserError, match="several samples"):
        paper.sample  # noqa: B018
    with pytest.raises(UserError, match="--sample pubmed: not in"):
        paper.sample_named("pubmed")
    settings = {"a": {"method": "recursive"}}
    for body, needle in [
        ({"sample": SAMPLE, "samples": {"x": SAMPLE}, "settings": settings}, "not both"),
        ({"settings": settings}, "not neither"),
        ({"samples": {"x": {**SAMPLE, "ks": []}}, "settings": settings}, r"samples\.x\.ks"),
        ({"samples": {"x": SAMPLE}, "settings": {"p": {"method": "peer"}}}, r"settings\.p\.peer: name the peer"),
    ]:
        with pytest.raises(UserError, match=needle):
            experiments.load(_paper(tmp_path, body))


class _Counter:
    def __call__(self, text: str) -> int:
        return len(text.split())


def test_a_peer_chunker_gets_exact_offsets_and_counts_what_it_repaired_or_dropped():
    text = "Alpha beta. Gamma delta. Epsilon."
    peer = PeerChunker("semchunk", _Counter())  # the library is not imported until it runs
    peer.run = lambda texts: [[(0, 11, "Alpha beta."), (0, 12, "Gamma delta."), (30, 40, "not in the text")] for _ in texts]
    table = chunk_table([Document("d", text)], peer)
    assert [text[s:e] for s, e in zip(table["start"], table["end"])] == list(table["text"]) == ["Alpha beta.", "Gamma delta."]
    assert peer.located == {"reported": 3, "repaired": 1, "dropped": 1}
    assert set(table["method"]) == {"peer:semchunk"} and list(table["n_tokens"]) == [2, 2]
    with pytest.raises(UserError, match="unknown peer chunker 'nltk'"):
        PeerChunker("nltk", _Counter())
    with pytest.raises(UserError, match="unknown option 'size'"):
        PeerChunker("semchunk", _Counter(), size=3)


def _covidqa(data: Path, n: int = 6) -> None:
    docs, answers = [], []
    topics = ["heart failure", "asthma", "cirrhosis", "kidney disease", "influenza", "diabetes"]
    for i, t in enumerate(topics[:n]):
        text = f"A review of {t}. " + " ".join(f"Finding {j} on {t} was reported in cohort {j}." for j in range(8))
        answer = f"Finding 5 on {t} was reported in cohort 5."
        start = text.index(answer)
        docs.append({"doc_id": str(i), "title": t, "text": text, "sections": [], "paragraphs": []})
        answers.append({"question_id": f"q{i}", "doc_id": str(i), "question": f"What was found in cohort 5 on {t}?",
                        "answer_text": answer, "start": start, "end": start + len(answer)})  # fmt: skip
    write_table(pd.DataFrame(docs), data / "documents.parquet", DOCUMENTS)
    write_table(pd.DataFrame(answers), data / "answers.parquet", ANSWERS)


def test_qa_datasets_become_collections_judged_by_answer_spans(tmp_path):
    _covidqa(tmp_path)
    coll, gold, dropped = collection.spans("covidqa", tmp_path)
    assert len(coll.docs) == 6 and len(coll.eval_queries()) == 6 and dropped["questions without a located gold span"] == 0
    text = dict(zip(coll.docs["doc_id"], coll.docs["text"]))
    assert all(text[d][s:e].startswith("Finding 5") for d, s, e in zip(gold["doc_id"], gold["start"], gold["end"]))
    # BioASQ: each sentence of a gold snippet, located in its PubMed record, is a gold span.
    snip = "Aspirin inhibits COX. It lowers fever."
    pd_snippets = pd.DataFrame([
        {"question_id": "b1", "snippet_id": "s1", "text": snip, "document": "http://www.ncbi.nlm.nih.gov/pubmed/11",
         "begin_section": "abstract", "end_section": "abstract", "offset_begin": 0, "offset_end": len(snip)},
        # Inside s1's span, so the record keeps s1's text only, where this text is not found.
        {"question_id": "b2", "snippet_id": "s2", "text": "Aspirin blocks", "document": "http://www.ncbi.nlm.nih.gov/pubmed/11",
         "begin_section": "abstract", "end_section": "abstract", "offset_begin": 0, "offset_end": 5},
    ])  # fmt: skip
    questions = pd.DataFrame([
        {"id": q, "split": "11B1", "type": "summary", "body": f"question {q}?", "ideal_answer": ["x"], "exact_answer": [], "documents": []}
        for q in ("b1", "b2", "b3")
    ])  # fmt: skip
    write_table(pd_snippets, tmp_path / "snippets.parquet", QA_SNIPPETS)
    write_table(questions, tmp_path / "questions.parquet", QA_QUESTIONS)
    coll, gold, dropped = collection.spans("bioasq", tmp_path)
    record = dict(zip(coll.docs["doc_id"], coll.docs["text"]))
    assert [record[d][s:e] for d, s, e in zip(gold["doc_id"], gold["start"], gold["end"])] == ["Aspirin inhibits COX.", "It lowers fever."]
    assert list(coll.eval_queries()["query_id"]) == ["b1"]
    assert dropped == {"gold snippets not found in their record": 1, "questions without a located gold span": 2}


def test_span_scores_judge_the_top_k_chunks_against_the_gold_spans():
    sys.path.insert(0, str(ROOT / "stages"))
    from evaluate_retrieval import span_scores

    chunks = pd.DataFrame({"chunk_id": ["a#0", "a#1", "b#0"], "doc_id": ["a", "a", "b"], "start": [0, 10, 0], "end": [10, 20, 10],
                           "metadata": ["{}"] * 3})  # fmt: skip
    gold = pd.DataFrame({"question_id": ["q1", "q2"], "doc_id": ["a", "a"], "start": [12, 8], "end": [15, 12]})
    hits = pd.DataFrame({"query_id": ["q1", "q1", "q2", "q2"], "rank": [1, 2, 1, 2], "chunk_id": ["b#0", "a#1", "a#0", "a#1"],
                         "doc_id": ["b", "a", "a", "a"], "score": [0.9, 0.8, 0.9, 0.8]})  # fmt: skip
    s = span_scores(chunks, hits, gold, ["q1", "q2"], (1, 2))
    assert list(s["holds@1"]) == [0, 0] and list(s["holds@2"]) == [1, 0]  # q2's span straddles two chunks
    assert list(s["overlaps@1"]) == [0, 1] and list(s["overlaps@2"]) == [1, 1]
    assert list(s["p@2"]) == [0.5, 1.0] and list(s["recall@1"]) == [0.0, 1.0]


def test_every_semchunk_interval_is_recomputed_from_the_tracked_per_item_scores():
    paper = experiments.load(SEMCHUNK / "params.yaml")
    for name, s in paper.samples.items():
        table = json.loads((ROOT / f"docs/results/data/semchunk-retrieval-{name}.json").read_text())
        items = {n: read_items(ROOT / "metrics/papers/semchunk" / name / f"{n}.parquet") for n in paper.settings}
        holds = table["metrics"][0]
        for n, row in zip(paper.settings, table["rows"], strict=True):
            again = mean_ci(items[n]["holds@1"], s.bootstrap, s.seed)
            shown = row["ours"][holds]
            assert (again.value, again.lo, again.hi) == pytest.approx((shown["value"], shown["lo"], shown["hi"]), abs=1e-12)
        pairs = [tuple(d["label"].split(" − ")) for d in table["differences"]]
        assert {("semchunk", n) for n in paper.settings if n != "semchunk"} <= set(pairs), "semchunk − every other row"
        for (b, a), d in zip(pairs, table["differences"], strict=True):
            again = paired_delta(items[a]["holds@1"], items[b]["holds@1"], s.bootstrap, s.seed)
            assert (again.value, again.lo, again.hi) == pytest.approx((d["ours"]["value"], d["ours"]["lo"], d["ours"]["hi"]), abs=1e-12)
        # The multiple-comparison and power notes, recomputed from the same per-question contrasts.
        contrasts = [items[b]["holds@1"] - items[a]["holds@1"] for b, a in pairs]
        ps = [p_value(c) for c in contrasts]
        kept = sum(a < ALPHA for a in holm(ps))
        notes = " ".join(table["notes"])
        assert f"Multiple comparisons: {len(pairs)} paired differences" in notes
        assert f"p < {ALPHA} before adjustment for {sum(p < ALPHA for p in ps)}" in notes
        assert f"after Holm's adjustment over all {len(pairs)}: {kept}" in notes
        sizes = [detectable(c) for c in contrasts]
        assert f"n = {len(contrasts[0])}," in notes and f"{min(sizes):.3f}–{max(sizes):.3f}" in notes
        same = [f"{b} − {a}" for (b, a), c in zip(pairs, contrasts) if not c.any()]
        assert ("Identical on every question" in notes) == bool(same) and all(x in notes for x in same)


def _run(stage: str, *args: str) -> None:
    r = run_python([sys.executable, str(ROOT / "stages" / stage), *args], cwd=ROOT)
    assert r.returncode == 0, f"{stage}: {r.stderr[-2000:]}"


@pytest.mark.slow
def test_the_semchunk_stages_end_to_end_on_a_small_covidqa(tmp_path):
    """sample -> units -> chunk -> embed -> search -> evaluate -> report on made-up articles:
    the settings reach the chunks and the scores, and the page's intervals are the items'."""
    data = tmp_path / "covidqa"
    data.mkdir()
    _covidqa(data)
    paper = _paper(tmp_path, {
        "samples": {"covidqa": SAMPLE},
        "settings": {
            "semchunk": {"method": "semchunk", "counter": "embedder", "max_tokens": 24},
            "ours-recursive": {"method": "recursive", "counter": "embedder", "max_tokens": 24, "chunk_size": 10**9, "chunk_overlap": 0},
            "ours-fixed": {"method": "fixed", "counter": "embedder", "max_tokens": 256, "window": 200, "overlap": 0},
        },
    })  # fmt: skip
    w = tmp_path / "work" / "covidqa"
    args = ["--paper", str(paper), "--sample", "covidqa"]
    _run("sample.py", "--data", str(data), *args, "--out", str(w / "sample"))
    assert (w / "sample" / "gold.parquet").is_file()
    _run("embed_units.py", "--data", str(w / "sample"), "--out", str(w / "units"))
    scores = tmp_path / "scores"
    for s in ("semchunk", "ours-recursive", "ours-fixed"):
        chunks = w / "chunks" / f"{s}.parquet"
        _run("chunk_corpus.py", "--data", str(w / "sample"), *args, "--units", str(w / "units"), "--setting", s,
             "--out", str(chunks), "--report", str(scores / "covidqa" / "chunks" / f"{s}.json"))  # fmt: skip
        _run("embed.py", "--chunks", str(chunks), "--out", str(w / "embed" / s))
        _run("search.py", "--data", str(w / "sample"), "--chunks", str(chunks), "--embeddings", str(w / "embed" / s), *args,
             "--out", str(w / "hits" / f"{s}.parquet"))  # fmt: skip
        _run("evaluate_retrieval.py", "--data", str(w / "sample"), "--chunks", str(chunks), "--hits", str(w / "hits" / f"{s}.parquet"),
             *args, "--scores", str(scores / "covidqa" / f"{s}.parquet"), "--sizes", str(w / "sizes" / s / "sizes.parquet"),
             "--metrics", str(scores / "covidqa" / f"{s}.json"))  # fmt: skip
    chunks = {s: json.loads((scores / "covidqa" / "chunks" / f"{s}.json").read_text())["chunks"] for s in ("semchunk", "ours-fixed")}
    assert chunks["ours-fixed"] == 6 < chunks["semchunk"], chunks  # one 200-word window per article; 24-token pieces
    fixed = read_items(scores / "covidqa" / "ours-fixed.parquet")
    assert set(fixed) == {f"{m}@{k}" for m in ("holds", "overlaps", "p", "recall", "f1") for k in (1, 2)}
    assert np.all(fixed["holds@1"] <= fixed["overlaps@1"]) and fixed["holds@1"].mean() > 0  # whole articles hold their answer
    results = tmp_path / "results"
    _run("report.py", "--paper", "semchunk", "--paper-params", str(paper), "--sample", str(w / "sample" / "sample.json"),
         "--scores", str(scores), "--evaluated", str(w / "sizes"), "--results", str(results))  # fmt: skip
    table = json.loads((results / "data" / "semchunk-retrieval-covidqa.json").read_text())
    row = next(r for r in table["rows"] if r["label"].startswith("ours-fixed"))
    assert row["ours"]["top-1 holds answer"]["value"] == pytest.approx(fixed["holds@1"].mean())
    assert [d["label"].split(" − ")[1].split(":")[0] for d in table["differences"]] == ["ours-recursive", "ours-fixed"]
    assert "semchunk − ours-fixed" in (results / "semchunk.md").read_text()

