"""Clinical decision support (the chunking study): retrieval P / R / F1 @ 5 on COVID-QA.

Inputs, per part of ``experiments/clinical/runs.yaml`` (a sample of ``params.yaml`` and the
settings that chunk it) and retriever: the per-question scores of the ``evaluate_retrieval``
stage (``p@5``, ``recall@5``, ``f1@5``: a retrieved chunk is relevant when it overlaps the
question's gold answer span) and its per-chunk sizes; the k1 and b of the ``search_bm25``
stage's reports; the proposition and header chunks
themselves (what the generator wrote); the QA stages' outputs for the non-response part, and
the judge_qa stage's ratings of the same answers on the study's two 3-point scales (an LLM-judge
proxy of its clinician ratings). A sample's chunks and its sampled corpus lie beside its sizes
folder (``data/papers/clinical/<sample>/``), the QA stages' outputs beside the samples' folders.
Every interval is recomputed from those per-item files: 95% bootstrap over questions, paired
for differences, with the paper's figures and the direction of each published difference
beside ours.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import yaml

from biochunk.errors import UserError
from biochunk.evaluation import compare, judge
from biochunk.evaluation.papers import (
    Difference,
    Judged,
    NotRun,
    PaperTable,
    Row,
    Source,
    mean_ci,
    paired_delta,
    read_items,
    stats_notes,
)
from biochunk.io import CHUNKS, CORPUS, ITEM_SCORES, read_json, read_table
from biochunk.models import resolve

PAPER = "clinical"
COMMAND = "dvc repro experiments/clinical/dvc.yaml"
# Beside the paper's params.yaml: which setting chunks which sample (the parts).
RUNS = "runs.yaml"
PARTS = ("retrieval", "proposition", "headers")  # each part measures the sample of its name
JOINED = "whole_clusters"  # runs.yaml: runs joined from another setting's chunks of their sample
# runs.yaml's lists other than ``measured``, which DVC iterates, and what each must hold.
KEYS_SAY = {"chunked": "measured but the joined runs", JOINED: "the measured runs with an of", "bm25": "the retrieval part's measured runs"}
K = 5  # the paper's cut-off: its figures are P / R / F1 at 5
# Table metric -> evaluate_retrieval's per-question metric.
METRICS = {f"precision@{K}": f"p@{K}", f"recall@{K}": f"recall@{K}", f"f1@{K}": f"f1@{K}"}
# The paper text (../shared/papers/): every figure and direction below is quoted from it.
TEXT = "001_88a13a60ea369314.txt"


def _at(where: str, quote: str, figure: str | None = None) -> Source:
    return Source(TEXT, where, quote, figure)


# Retrieval P, R, F1 @ 5 of the paper (30 questions), per row of its Table 1 (lines 133-144): the
# cells show the table. Its text disagrees in three rows (the abstract, line 5, and §3.3, line
# 158): basic RAG F1 0.24, proposition P 0.39 and F1 0.50, adaptive R 0.88 and F1 0.64; those
# cells cite both and say so.
TABLE1 = {
    "basic RAG": (
        _at("Table 1, Basic RAG, line 133", "Precision 0.17 [0.04–0.32]", "0.17"),
        _at("Table 1, Basic RAG, line 134", "Recall 0.40 [0.10–0.70]", "0.40"),
        _at("Table 1, Basic RAG, line 135", "F1 score 0.21 [0.00–0.39]", "0.21"),
    ),
    "semantic": (
        _at("Table 1, Semantic, line 136", "Precision 0.33 [0.16–0.52]", "0.33"),
        _at("Table 1, Semantic, line 137", "Recall 0.75 [0.50–1.00]", "0.75"),
        _at("Table 1, Semantic, line 138", "F1 score 0.46 [0.19–0.64]", "0.46"),
    ),
    "proposition": (
        _at("Table 1, Proposition, line 139", "Precision 0.38 [0.21–0.57]", "0.38"),
        _at("Table 1, Proposition, line 140", "Recall 0.71 [0.46–0.93]", "0.71"),
        _at("Table 1, Proposition, line 141", "F1 score 0.49 [0.25–0.67]", "0.49"),
    ),
    "adaptive": (
        _at("Table 1, Adaptive, line 142", "Precision 0.50 [0.31–0.68]", "0.50"),
        _at("Table 1, Adaptive, line 143", "Recall 0.87 [0.69–1.00]", "0.87"),
        _at("Table 1, Adaptive, line 144", "F1 score 0.63 [0.36–0.78]", "0.63"),
    ),
}
FIGURES = {row: tuple(float(c.figure) for c in cells) for row, cells in TABLE1.items()}  # type: ignore[arg-type]
# Where the text prints another number than Table 1: (row, metric index) -> the text's sources.
BASELINE_TEXT = _at(
    "§3.3, line 158", "with 0.17 (0.04–0.32) precision, 0.40 (0.10–0.70) recall, and an F1 of 0.24 (0.00–0.39)", "0.24"
)
ABSTRACT = _at("abstract, line 5", "(precision 0.50, recall 0.88, F1 0.64) versus baseline (0.17, 0.40, 0.24)")
PROPOSITION_TEXT = _at(
    "§3.3, line 158", "The proposition-based model followed with 0.39 (0.21–0.57), recall 0.71 (0.46–0.93), and an F1 of 0.50 (0.25–0.67)", "0.39"
)
ADAPTIVE_TEXT = _at("§3.3, line 158", "a recall of 0.88 (0.69–1.00), and an F1 score of 0.64 (0.36–0.78)", "0.88")
TEXT_DIFFERS = {
    ("basic RAG", 2): ((BASELINE_TEXT, ABSTRACT), "F1 0.24"),
    ("proposition", 0): ((PROPOSITION_TEXT,), "precision 0.39"),
    ("proposition", 2): ((PROPOSITION_TEXT,), "F1 0.50"),
    ("adaptive", 1): ((ADAPTIVE_TEXT, ABSTRACT), "recall 0.88"),
    ("adaptive", 2): ((ADAPTIVE_TEXT, ABSTRACT), "F1 0.64"),
}
# The published directions in words: every advanced method above the baseline, adaptive above both.
IMPROVED = _at(
    "abstract, line 5", "Proposition and semantic strategies improved all metrics relative to baseline, though less than adaptive."
)
ADAPTIVE_GAIN = _at(
    "§3.3, line 158", "Relative to baseline, adaptive chunking improved precision by +0.33, recall by +0.48, and F1 by +0.42.", "+0.48"
)
# The pilot's window sweep (§2.2.5) and header ablation (§2.2.4), stated in words.
WINDOWS = _at(
    "§2.2.5, line 87",
    "Larger window sizes tended to introduce redundancy, which reduced precision, while smaller windows disrupted "
    "multi-sentence instructions, lowering recall.",
)
SWEEP = _at("§2.2.6, line 106", "Fixed-window Baseline: 250/400/600 spaCy-token spans with 50-token overlap")
HEADERS = _at(
    "§2.2.4, line 83",
    "Early versions without micro-headers improved recall but reduced precision due to topic drift; adding concise "
    "summaries corrected this by tightening query alignment.",
)
NO_ABLATION = _at("§4, line 214", "We did not isolate the individual contribution of micro-headers")
ACCURACY = _at("Table 1, line 133", "Basic RAG\t1.64 [1.40–1.90]\t2.60 [2.33–2.87]", "1.64")
ACCURACY_TEST = _at("§3.1, line 128", "This performance was significantly superior to the basic model implementing a fixed-size chunking strategy (p = 0.001).", "0.001")
RELEVANCE = _at("Table 1, line 142", "Adaptive\t2.37 [2.10–2.60]\t2.90 [2.73–3.00]", "2.90")
RELEVANCE_TEST = _at("§3.2, line 154", "Although there was no statistically significant difference between the different chunking strategies")
MODELS = _at("§2.2.6, lines 101-104", "Backbone LLM: Gemini 1.0 Pro (no fine-tuning).")
NON_RESPONSE = _at("§2.2.6, line 109", "Metrics included precision, recall, F₁, and non-response rate")
# What every measured row shares and the paper's set-up does not (§2.2.6, lines 101-104; §2.1).
SETUP = "COVID-QA articles and MiniLM, not the rhinoplasty reference and text-embedding-004"
# Each setting's row: its label, the paper's row it stands against, what it is, and how it differs
# from the paper's method of that row ("" where it is the paper's form; the corpus and embedder
# differ for every row: SETUP). The boundary-repair row states its overlap from the setting's params.
ROWS = {
    "recursive": ("recursive 1000/100", "basic RAG", "paper baseline (§2.2.1): LangChain's recursive splitter, 1,000 / 100 characters", ""),
    "fixed": ("fixed", "basic RAG", "project default: chunk.window-word windows", "5-word windows, not the recursive 1,000 / 100 splitter"),
    "cluster": ("cluster", "semantic", "project default: one chunk per run of a cluster", "a chunk per run of a cluster, not one per cluster"),
    "adaptive": ("adaptive", "adaptive", "project default: clause units, min_words, phrase header", "clause units and a noun-phrase header, not sentences and a BART title"),
    "proposition": ("proposition", "proposition", "chunk.generator rewrites each sentence", "SmolLM2-135M writes the propositions, not text-bison"),
    "fixed-250": ("fixed 250/50", "basic RAG", "paper sweep, in words", "words, not spaCy tokens; the sweep, not the baseline"),
    "fixed-400": ("fixed 400/50", "basic RAG", "paper sweep, in words", "words, not spaCy tokens; the sweep, not the baseline"),
    "fixed-600": ("fixed 600/50", "basic RAG", "paper sweep, in words", "words, not spaCy tokens; the sweep, not the baseline"),
    "cluster-whole": ("cluster whole", "semantic", "paper form: one chunk per cluster", ""),
    "adaptive-sentence": ("adaptive sentence", "adaptive", "paper form: sentence units, minimum 60 words", "a noun-phrase header, not a BART title"),
    "adaptive-repair": (
        "adaptive sentence + repair", "adaptive",
        "paper form: sentence units, minimum 60 words, boundary-repair overlap of ≤ {overlap} words (≈ 30 spaCy tokens)",
        "a noun-phrase header, not a BART title",
    ),
}  # fmt: skip
# The four-way comparisons (ANOVA + Tukey), each among the settings a part has: the project's
# defaults, and the paper's forms (its baseline: the recursive 1,000 / 100 splitter, §2.2.1).
GROUPS = {
    "project defaults": ["fixed", "cluster", "proposition", "adaptive"],
    "paper forms": ["recursive", "cluster-whole", "proposition", "adaptive-repair"],
}
# Published differences B − A within each group; a pair with a setting the part lacks is skipped.
DIFFERENCES = [(a, b) for g in GROUPS.values() for a, b in [(g[0], g[3]), (g[0], g[1]), (g[1], g[3]), (g[0], g[2]), (g[2], g[3])]]
REPAIR = ("adaptive-sentence", "adaptive-repair")  # the boundary repair's own effect: the same chunks without and with it
# The pilot's window sweep (WINDOWS): smaller windows lower recall, larger ones precision.
SWEEP_PAIR = ("fixed-250", "fixed-600")
# The headers part: adaptive chunks with each kind of micro-header (chunk.header), and the pairs compared.
HEADER_NOTES = {
    "phrase": "project default: a noun-phrase micro-header",
    "generator": "a title of 5–15 words written by chunk.generator (the paper: a BART summariser)",
    "none": "no header",
}
HEADER_PAIRS = [("phrase", "generator"), ("none", "generator"), ("none", "phrase")]
# A header's published effect (HEADERS), B − A with A = no header: precision up, recall down.
HEADER_CLAIMS = {f"precision@{K}": +1, f"recall@{K}": -1}
# The non-response part: the arms the QA stages answered with (qa.methods' retrieved contexts,
# the gold passage, none), their labels, the metrics of evaluate_qa's per-question scores, and
# the paired differences of the non-response rate.
ANSWER_ARMS = {
    "fixed": "fixed (project default, retrieved)",
    "cluster": "cluster (project default, retrieved)",
    "adaptive": "adaptive (project default, retrieved)",
    "gold": "gold passage",
    "none": "no context",
}
ANSWER_METRICS = {"non-response": "declined", "context holds the answer": "context_has_answer", "ROUGE-2 F1": "rouge2_f1"}
ANSWER_PAIRS = [("fixed", "adaptive"), ("fixed", "cluster"), ("cluster", "adaptive"), ("gold", "adaptive"), ("none", "adaptive")]

# The clinicians' ratings (§2.3) and the LLM judge that stands in for them (stages/judge_qa.py,
# its rubric the paper's words: biochunk.evaluation.judge). Each Table 1 row's accuracy and
# relevance cells (lines 133-142: the row's name and its cells up to the one cited); the text (§3.1, line 128) prints basic RAG 1.63 and semantic
# 2.03 for accuracy, and those cells cite it too.
RATERS = _at("§2.3, line 114", "Two medical experts independently rated each response’s medical accuracy and relevance using three-point scales.")
RUBRIC_ACCURACY = _at("§2.3, line 114", judge.SCALES["accuracy"].quote)
RUBRIC_RELEVANCE = _at("§2.3, line 114", judge.SCALES["relevance"].quote)
GROUND_TRUTH = _at("§2.3, line 116", "Ground-truth information for evaluating the answers was drawn from the same authoritative rhinoplasty resources")
RATING_CELLS = {
    "basic RAG": (
        _at("Table 1, Basic RAG, line 133", "Basic RAG\t1.64 [1.40–1.90]", "1.64"),
        _at("Table 1, Basic RAG, line 133", "Basic RAG\t1.64 [1.40–1.90]\t2.60 [2.33–2.87]", "2.60"),
    ),
    "semantic": (
        _at("Table 1, Semantic, line 136", "Semantic\t2.04 [1.77–2.33]", "2.04"),
        _at("Table 1, Semantic, line 136", "Semantic\t2.04 [1.77–2.33]\t2.87 [2.70–3.00]", "2.87"),
    ),
    "proposition": (
        _at("Table 1, Proposition, line 139", "Proposition\t2.07 [1.80–2.33]", "2.07"),
        _at("Table 1, Proposition, line 139", "Proposition\t2.07 [1.80–2.33]\t2.80 [2.57–2.97]", "2.80"),
    ),
    "adaptive": (
        _at("Table 1, Adaptive, line 142", "Adaptive\t2.37 [2.10–2.60]", "2.37"),
        _at("Table 1, Adaptive, line 142", "Adaptive\t2.37 [2.10–2.60]\t2.90 [2.73–3.00]", "2.90"),
    ),
}
RATING_TEXT = {
    ("basic RAG", 0): (_at("§3.1, line 128", "the basic model’s mean accuracy was 1.63 ± 0.72 (95% CI 1.40–1.90)", "1.63"), "accuracy 1.63"),
    ("semantic", 0): (_at("§3.1, line 128", "the semantic model reached 2.03 ± 0.76 (95% CI 1.77–2.33)", "2.03"), "accuracy 2.03"),
}
# The paper's tests of the ratings (§2.4: one-way ANOVA, Tukey post hoc, p < 0.05, 30 items an arm).
RATING_TESTS = _at(
    "§2.4, line 122",
    "a one-way ANOVA was performed, and Tukey post hoc tests were conducted for pairwise differences where applicable, "
    "with significance defined as p < 0.05.",
)
ACCURACY_NOT_SIGNIFICANT = _at(
    "§3.1, line 128", "Differences between the proposition-based or semantic models and the basic model did not reach statistical significance."
)
ACCURACY_VS_SEMANTIC = _at("§3.1, line 128", "moderate improvements relative to semantic (d = 0.46)", "0.46")
# The judge's scales, as the table's metrics: metric -> (judge.SCALES key, index in a RATING_CELLS pair).
JUDGE_METRICS = {"medical accuracy (1–3)": ("accuracy", 0), "clinical relevance (1–3)": ("relevance", 1)}
# The paper's pairs among the arms (B − A), and per scale what it says of each beyond Table 1's means.
JUDGE_PAIRS = {
    ("fixed", "adaptive"): {"accuracy": (ACCURACY_TEST,), "relevance": (RELEVANCE_TEST,)},
    ("fixed", "cluster"): {"accuracy": (ACCURACY_NOT_SIGNIFICANT,), "relevance": (RELEVANCE_TEST,)},
    ("cluster", "adaptive"): {"accuracy": (ACCURACY_VS_SEMANTIC,), "relevance": (RELEVANCE_TEST,)},
}
# What the paper's own test found of each pair (the verdicts judge the sign of its Table 1 difference).
JUDGE_PAPER_TEST = {
    ("fixed", "adaptive"): {"accuracy": "significant, p = 0.001", "relevance": "not significant"},
    ("fixed", "cluster"): {"accuracy": "not significant", "relevance": "not significant"},
    ("cluster", "adaptive"): {"accuracy": "d = 0.46, no p given", "relevance": "not significant"},
}
# A judge too small to stand in for clinicians: with it the table tests the plumbing, not the claim.
SMALL_JUDGES = {"smollm2-135m": "SmolLM2-135M"}
# The proxy with a capable judge (any instruction-tuned hub id or local path; a GPU for a 7B model).
CAPABLE_JUDGE = "Qwen/Qwen2.5-7B-Instruct"
JUDGE_COMMAND = f"HF_HUB_OFFLINE=0 dvc exp run experiments/clinical/dvc.yaml -S 'experiments/clinical/judge.yaml:judge.model={CAPABLE_JUDGE}'"
# The retrieval part's proposition row, which the full corpus lacks (runs.yaml gains the run).
PROPOSITION_RUN = "{sample: retrieval, setting: proposition}"
PROPOSITION_COMMAND = "dvc exp run experiments/clinical/dvc.yaml " + " ".join(
    f"-S 'experiments/clinical/runs.yaml:+{key}.retrieval-proposition={PROPOSITION_RUN}'" for key in ("measured", "chunked", "bm25")
)


@dataclass(frozen=True)
class Part:
    name: str  # also its sample's name: one sample per part
    settings: tuple[str, ...]  # table order: ROWS' order where the setting has a row, then runs.yaml's
    joined: dict[str, str]  # a whole-cluster table -> the setting whose chunks it joins

    @property
    def sample(self) -> str:
        return self.name


def parts(paper: Any) -> dict[str, Part]:
    """The study's parts, from ``runs.yaml`` beside the paper's params, checked against the
    paper before any table: every run is ``<sample>-<setting>`` of one of its samples (one per
    part, PARTS) and settings (a joined run: the setting it joins, ``of``); the lists dvc.yaml
    iterates agree (measured = chunked + whole_clusters; bm25 = the retrieval part's runs)."""
    path = Path(paper.path).parent / RUNS
    if not path.is_file():
        raise UserError(f"{path}: no such file; it lists the study's runs, <sample>-<setting>: {{sample, setting}}")
    # A file of the repository that DVC reads as params too (tests/test_paper_clinical.py checks
    # it as a params file: no anchors, no duplicate keys).
    data = yaml.safe_load(path.read_text(encoding="utf-8")) or {}
    for key in ("measured", "chunked", JOINED, "bm25"):
        if not isinstance(data.get(key), dict) or not data[key]:
            raise UserError(f"{path}: {key}: expected a mapping of <sample>-<setting> -> {{sample, setting}}")
        for run, r in data[key].items():
            keys = {"sample", "setting", "of"} if key == JOINED or (isinstance(r, dict) and "of" in r) else {"sample", "setting"}
            if not isinstance(r, dict) or set(r) != keys:
                raise UserError(f"{path}: {key}.{run}: expected {{{', '.join(sorted(keys))}}}, got {r!r}")
            if r["sample"] not in PARTS or r["sample"] not in paper.samples:
                allowed = ", ".join(p for p in PARTS if p in paper.samples)
                raise UserError(f"{path}: {key}.{run}.sample: {r['sample']!r} is not a part's sample in {paper.path}; allowed: {allowed}")
            if r.get("of", r["setting"]) not in paper.settings:
                raise UserError(
                    f"{path}: {key}.{run}: setting {r.get('of', r['setting'])!r} is not in {paper.path} settings; allowed: {', '.join(paper.settings)}"
                )
            if run != f"{r['sample']}-{r['setting']}":
                raise UserError(f"{path}: {key}.{run}: name the run <sample>-<setting>, {r['sample']}-{r['setting']}")
    measured = data["measured"]
    retrieval = {k: v for k, v in measured.items() if v["sample"] == "retrieval"}
    for key, want in (("chunked", {k: v for k, v in measured.items() if "of" not in v}), (JOINED, {k: v for k, v in measured.items() if "of" in v}), ("bm25", retrieval)):
        got = data[key]
        if got != want:
            odd = sorted(set(got) ^ set(want)) or sorted(k for k in got if got[k] != want[k])
            raise UserError(f"{path}: {key}: {odd[0]!r} disagrees with measured ({key} is {KEYS_SAY[key]})")
    out = {}
    for name in PARTS:
        runs = [r for r in measured.values() if r["sample"] == name]
        if not runs:
            raise UserError(f"{path}: measured: no run of the {name} part (sample {name})")
        names = [r["setting"] for r in runs]
        order = [n for n in ROWS if n in names] + [n for n in names if n not in ROWS]
        out[name] = Part(name, tuple(order), {r["setting"]: r["of"] for r in runs if "of" in r})
    return out


def label(name: str) -> str:
    return ROWS[name][0] if name in ROWS else name


def _params(chunk_params: dict, part: Part, name: str) -> Any:
    """A setting's chunk params; a joined table's are those of the setting it joins."""
    return chunk_params[part.joined.get(name, name)]


def _scores(scores_dir: Path, sample: str, retriever: str, names: list[str]) -> dict[str, dict[str, np.ndarray]]:
    return {n: read_items(scores_dir / sample / retriever / f"{n}.parquet") for n in names}


def _question_ids(path: Path) -> np.ndarray:
    """The item ids of a per-item scores file, in the order ``read_items`` gives its values."""
    df = read_table(path, ITEM_SCORES)
    return df.loc[df["metric"] == df["metric"].iloc[0], "item_id"].to_numpy()


def _words(sizes_dir: Path, names: list[str]) -> dict[str, np.ndarray]:
    return {n: read_items(sizes_dir / n / "sizes.parquet")["words"] for n in names}


def _drawn_documents_first(sample: dict, p: Part) -> None:
    """The proposition and headers tables describe articles drawn first (stages/sample_documents.py)."""
    if sample.get("draw") != "documents":
        raise UserError(
            f"samples.{p.sample}: the {p.name} table counts a seeded set of articles and their questions, but its "
            "sample.json was drawn queries first; make it with stages/sample_documents.py (experiments/clinical/dvc.yaml)"
        )


def _chunk_list(names: list[str], words: dict[str, np.ndarray]) -> str:
    return ", ".join(f"{label(n)} {len(words[n]):,} (mean {words[n].mean():.0f} words)" for n in names)


def retrieval_table(
    paper: Any,
    p: Part,
    retriever: str,
    scores_dir: Path,
    chunk_params: dict,
    section: str,
    title: str,
    sample: str,
    models: str,
) -> PaperTable:
    """Per setting of ``part``: P / R / F1 @ 5 beside the paper's row; the published differences
    (paired); the boundary repair's own effect; ANOVA + Tukey on F1 within each group."""
    s = paper.samples[p.sample]
    if K not in s.ks:
        raise UserError(f"{paper.path}: samples.{p.sample}.ks: the paper's figures are at k = {K}; keep {K} in ks")
    names = list(p.settings)
    unknown = [n for n in names if n not in ROWS]
    if unknown:
        raise UserError(
            f"{paper.path.parent / RUNS}: {p.name}: setting {unknown[0]} has no row in biochunk/evaluation/reports/clinical.py ROWS; add one"
        )
    scores = _scores(scores_dir, p.sample, retriever, names)
    rows = [_row(n, scores[n], _params(chunk_params, p, n).boundary_overlap, s.bootstrap, s.seed) for n in names]
    judged: list[Judged] = []
    for a, b in DIFFERENCES:
        if a not in scores or b not in scores:
            continue
        ra, rb = ROWS[a][1], ROWS[b][1]
        said = (IMPROVED,) if ra in ("basic RAG",) or rb == "adaptive" else ()
        said += (ADAPTIVE_GAIN,) if (ra, rb) == ("basic RAG", "adaptive") else ()
        for i, (m, col) in enumerate(METRICS.items()):
            d = paired_delta(scores[a][col], scores[b][col], s.bootstrap, s.seed)
            paper = round(FIGURES[rb][i] - FIGURES[ra][i], 10)
            diff = Difference(f"{label(b)} − {label(a)}", m, paper, d, sources=(TABLE1[ra][i], TABLE1[rb][i], *said), setting=_differs(a, b))
            judged.append(Judged(diff, scores[b][col] - scores[a][col]))
    a, b = SWEEP_PAIR
    if a in scores and b in scores:
        for m, claim in ((f"precision@{K}", -1), (f"recall@{K}", +1)):
            d = paired_delta(scores[a][METRICS[m]], scores[b][METRICS[m]], s.bootstrap, s.seed)
            setting = f"{SHARED}; the pilot's windows were the recursive splitter's (§2.2.5), these are word windows of the sweep"
            diff = Difference(f"{label(b)} − {label(a)}", m, None, d, claim=claim, sources=(WINDOWS, SWEEP), setting=setting)
            judged.append(Judged(diff, scores[b][METRICS[m]] - scores[a][METRICS[m]]))
    diffs = [j.diff for j in judged]
    notes = [
        f"Our setting differs: every row reads {SETUP} (the paper's §2.1, §2.2.6), and a retrieved chunk counts as relevant "
        "when it overlaps the question's gold answer span; a difference row names what else differs from the paper's "
        "method of that row."
    ]
    a, b = REPAIR
    if a in scores and b in scores:
        effect = "; ".join(
            f"{m} {paired_delta(scores[a][col], scores[b][col], s.bootstrap, s.seed).fmt(signed=True)}"
            for m, col in METRICS.items()
        )
        notes += ["", f"Boundary-repair overlap alone ({label(b)} − {label(a)}, paired): {effect}."]
    notes += ["", *(line for n in stats_notes(judged, len(next(iter(scores.values()))[METRICS[f"f1@{K}"]])) for line in (n, ""))]
    ids = _question_ids(scores_dir / p.sample / retriever / f"{names[0]}.parquet")
    for group, members in GROUPS.items():
        present = [n for n in members if n in scores]
        if len(present) >= 2:
            notes += anova_note(
                group, [(label(n), pd.DataFrame({"question_id": ids, f"f1@{K}": scores[n][f"f1@{K}"]})) for n in present]
            )
    return PaperTable(
        paper=PAPER, section=section, title=title, command=COMMAND, sample=sample, models=models, wall_s=None,
        metrics=list(METRICS), rows=rows, differences=diffs, notes=notes,
    )  # fmt: skip


SHARED = "COVID-QA, MiniLM"


def _differs(*names: str) -> str:
    """What a comparison of these settings does not share with the paper's (SETUP for all)."""
    return "; ".join([SHARED, *(f"{label(n)}: {ROWS[n][3]}" for n in names if ROWS[n][3])])


def _row(name: str, scores: dict[str, np.ndarray], overlap: int, bootstrap: int, seed: int) -> Row:
    """A setting's row: ours beside the paper's Table 1 row it stands against, each cell cited
    (and the text's own number too where it disagrees with the table)."""
    text, paper_row, note, _ = ROWS[name]
    sources, said = {}, []
    for i, m in enumerate(METRICS):
        extra, what = TEXT_DIFFERS.get((paper_row, i), ((), ""))
        sources[m] = (TABLE1[paper_row][i], *extra)
        said += [what] if what else []
    table = f"vs paper {paper_row} (Table 1" + (f"; its text: {', '.join(said)}" if said else "") + ")"
    ours = {m: mean_ci(scores[col], bootstrap, seed) for m, col in METRICS.items()}
    return Row(text, dict(zip(METRICS, FIGURES[paper_row])), ours, f"{note.format(overlap=overlap)}; {table}", sources)


def anova_note(name: str, groups: list[tuple[str, pd.DataFrame]]) -> list[str]:
    """One-way ANOVA + Tukey HSD on per-question F1 across ``groups`` (label, scores), with effect sizes."""
    long = pd.concat([df.assign(method=lab) for lab, df in groups], ignore_index=True)
    m = f"f1@{K}"
    a, tk = compare.anova(long, m), compare.tukey(long, m)
    out = [
        "",
        (
            f"{name}, {m}: one-way ANOVA across {', '.join(lab for lab, _ in groups)}: F({a['df_between']}, {a['df_within']}) = "
            f"{a['F']:.2f}, p = {a['p']:.3g}, η² = {a['eta_sq']:.3f}. Tukey HSD (B − A, adjusted p, Cohen's d_z: "
            "mean of the per-question differences over their standard deviation):"
        ),
        "",
        "| A | B | mean(B) − mean(A) | p adj. | d_z | differ |",
        "|---|---|---:|---:|---:|---|",
    ]
    for t in tk:
        out.append(
            f"| {t['a']} | {t['b']} | {t['mean_diff']:+.3f} | {t['p_adj']:.3g} | {t['cohen_dz']:+.2f} | {'yes' if t['reject'] else 'no'} |"
        )
    return out


def spacy_tokens_per_word(texts: list[str]) -> float:
    """spaCy's English tokens (whitespace tokens left out) per whitespace word over ``texts``."""
    import spacy

    tok = spacy.blank("en").tokenizer
    tokens = sum(sum(not t.is_space for t in tok(x)) for x in texts)
    return tokens / max(1, sum(len(x.split()) for x in texts))


def embedder_window(model: str) -> int | None:
    """The embedder's ``max_seq_length`` from its ``sentence_bert_config.json`` (no weights loaded)."""
    path = Path(resolve(model, "embed.model")) / "sentence_bert_config.json"
    value = json.loads(path.read_text(encoding="utf-8")).get("max_seq_length") if path.is_file() else None
    return value if isinstance(value, int) else None


def bm25_params(reports: Path, names: list[str]) -> tuple[float, float]:
    """The k1 and b every BM25 run of the table searched with (the search_bm25 stage's reports)."""
    used = {n: (r["k1"], r["b"]) for n in names for r in [read_json(reports / f"{n}.json")]}
    if len(set(used.values())) != 1:
        raise UserError(f"{reports}: the BM25 runs of one table searched with different k1 / b: {used}; re-run search_bm25")
    return next(iter(used.values()))


def full_corpus_tables(
    paper: Any, p: Part, chunk_params: dict, scores_dir: Path, sizes_dir: Path, sample: dict, embed_model: str
) -> list[PaperTable]:
    """The retrieval part: every setting on all questions, dense and BM25, each its own table."""
    names = list(p.settings)
    words = _words(sizes_dir, names)
    which = "all" if sample["queries"] == sample["of_queries"] else f"the first by id of {sample['of_queries']}"
    text = (
        f"{sample['queries']} COVID-QA questions ({which}; "
        f"the paper: 30), each with one gold answer span; the chunks of all {sample['documents']} articles pooled in one index; "
        f"k = {K}. Chunks: {_chunk_list(names, words)}"
    )
    dense = retrieval_table(
        paper, p, "dense", scores_dir, chunk_params, "retrieval", "Retrieval P / R / F1 @ 5, dense (MiniLM), COVID-QA",
        text, f"embedder {embed_model} (embed.model); no generator",
    )  # fmt: skip
    dense.not_run = []
    if "proposition" not in names:
        dense.not_run += [
            NotRun(
                "proposition (paper 0.38 / 0.71 / 0.49)",
                "the generator rewrites every sentence (14,798 in COVID-QA; SmolLM2-135M rewrote 0.44 sentences/s "
                "on two free cores, about 9 h): on a GPU, the command adds a retrieval-proposition run to "
                "experiments/clinical/runs.yaml; on a sample of articles: the proposition table.",
                PROPOSITION_COMMAND,
            ),
            NotRun(
                "proposition in the ANOVA + Tukey",
                "the four-way comparisons lack proposition (above); the three-way ones are below, a four-way one on a "
                "sample in the proposition table. The retrieval-proposition run (the row above) completes them.",
                PROPOSITION_COMMAND,
            ),
        ]
    dense.not_run.append(
        NotRun(
            "adaptive: BART micro-headers",
            "no BART summariser ships offline, and chunk.generator loads causal LMs, not a sequence-to-sequence "
            "summariser; the rows use the noun-phrase header. The nearest the pipeline runs: the headers table's "
            "generator-written titles, by a capable causal LM instead of SmolLM2-135M.",
            f"HF_HUB_OFFLINE=0 dvc exp run experiments/clinical/dvc.yaml "
            f"-S 'experiments/clinical/params.yaml:+settings.adaptive-generator-header.generator={CAPABLE_JUDGE}'",
        )
    )
    dense.not_run += [
        NotRun(
            "medical accuracy, clinician-rated (3-point Likert; the paper's only significant test, adaptive vs basic p = 0.001)",
            "two medical experts rated the answers to 30 rhinoplasty questions; no rater here. The LLM-judge proxy "
            "(stage judge_qa, its own table) rates this pipeline's answers on the paper's scales, but its offline "
            "default, SmolLM2-135M, is not a capable judge; the command runs it with a capable one (a GPU).",
            JUDGE_COMMAND,
            sources=(ACCURACY, ACCURACY_TEST, RATERS),
        ),
        NotRun(
            "clinical relevance, clinician-rated (3-point Likert; no significant difference)",
            "as medical accuracy (the same judge rates both scales).",
            JUDGE_COMMAND,
            sources=(RELEVANCE, RELEVANCE_TEST),
        ),
        NotRun(
            "the paper's models (text-embedding-004 embedder, Gemini 1.0 Pro generator)",
            "hub and API models, not reachable offline; a user with them names them as params",
            "set embed.model (and generate.model) in params.yaml and experiments/clinical/project-params.yaml, then "
            "dvc repro experiments/clinical/dvc.yaml",
            sources=(MODELS,),
        ),
    ]
    notes = []
    if any(_params(chunk_params, p, n).method == "fixed" for n in names):
        docs = read_table(sizes_dir.parent / "sample" / "corpus.parquet", CORPUS)["text"].tolist()
        notes.append(
            "The paper's fixed windows count spaCy tokens; this project's fixed windows count whitespace words "
            f"(chunk.window / chunk.overlap), and on COVID-QA spaCy's English tokenizer gives {spacy_tokens_per_word(docs):.2f} tokens per word."
        )
    window = embedder_window(embed_model)
    if window is not None:
        notes.append(
            f"The embedder reads the first {window} word pieces of a chunk (its max_seq_length); the rest of a longer chunk is not embedded."
        )
    dense.notes = [line for n in notes for line in (n, "")] + dense.notes
    k1, b = bm25_params(scores_dir / p.sample / "search-bm25", names)
    bm25 = retrieval_table(
        paper, p, "bm25", scores_dir, chunk_params, "bm25", f"Retrieval P / R / F1 @ 5, BM25 (k1 {k1:g}, b {b:g}), COVID-QA",
        text, f"BM25 (Pyserini, k1 {k1:g}, b {b:g}); the paper's figures are for its own retriever",
    )  # fmt: skip
    return [dense, bm25]


def proposition_table(
    paper: Any, p: Part, chunk_params: dict, scores_dir: Path, sizes_dir: Path, sample: dict, embed_model: str
) -> PaperTable:
    """The four-way comparison with proposition chunks, on the proposition part's sample of articles."""
    _drawn_documents_first(sample, p)
    names = list(p.settings)
    words = _words(sizes_dir, names)
    prop = [n for n in names if _params(chunk_params, p, n).method == "proposition"]
    written = fallback = 0
    sentences: set[tuple[str, int, int]] = set()
    generator = chunk_params[prop[0]].generator if prop else "—"
    for n in prop:
        chunks = read_table(sizes_dir.parent / "chunks" / f"{n}.parquet", CHUNKS)
        for doc, m in zip(chunks["doc_id"], chunks["metadata"]):
            meta = json.loads(m)
            written += len(meta.get("propositions", []))
            fallback += meta.get("fallback", 0)
            sentences |= {(doc, s, e) for _, s, e in meta.get("propositions", [])}
    text = (
        f"{sample['queries']} COVID-QA questions about a seeded sample of {sample['documents']} articles "
        f"(samples.{p.sample}.max_documents; {len(sentences):,} sentences), their chunks pooled in one index; k = {K}. "
        f"Chunks: {_chunk_list(names, words)}"
    )
    t = retrieval_table(
        paper, p, "dense", scores_dir, chunk_params, "proposition",
        "Retrieval P / R / F1 @ 5 with proposition, dense (MiniLM), COVID-QA sample", text,
        f"embedder {embed_model} (embed.model); proposition writer {generator} (chunk.generator, temperature 0.2, "
        "≤ 256 new tokens per sentence)",
    )  # fmt: skip
    t.notes = [
        (
            f"The generator wrote {written:,} propositions; {fallback:,} sentences got none usable and stand for "
            'themselves (`metadata["fallback"]`). The same articles and questions in every row, so the differences '
            "are paired; the full-corpus rows above lack proposition."
        ),
        "",
    ] + t.notes
    return t


def headers_table(
    paper: Any, p: Part, chunk_params: dict, scores_dir: Path, sizes_dir: Path, sample: dict, embed_model: str
) -> PaperTable:
    """Dense P / R / F1 @ 5 of adaptive chunks with each kind of micro-header (paired over questions)."""
    _drawn_documents_first(sample, p)
    s = paper.samples[p.sample]
    by_header = {_params(chunk_params, p, n).header: n for n in p.settings}
    scores = _scores(scores_dir, p.sample, "dense", list(p.settings))
    words = _words(sizes_dir, list(p.settings))
    rows = [
        Row(
            f"adaptive, {h} header",
            dict(zip(METRICS, FIGURES["adaptive"])),
            {m: mean_ci(scores[n][col], s.bootstrap, s.seed) for m, col in METRICS.items()},
            HEADER_NOTES.get(h, ""),
            {m: (TABLE1["adaptive"][i],) for i, m in enumerate(METRICS)},
        )
        for h, n in by_header.items()
    ]
    judged = [
        Judged(Difference(
            f"{b} header − {a} header",
            m,
            None,
            paired_delta(scores[by_header[a]][col], scores[by_header[b]][col], s.bootstrap, s.seed),
            # The pilot (§2.2.4): a header raised precision and cost recall; it states nothing of F1
            # and nothing between two kinds of header.
            claim=HEADER_CLAIMS.get(m) if a == "none" else None,
            sources=(HEADERS,) if a == "none" and m in HEADER_CLAIMS else (NO_ABLATION,),
            setting=f"{SHARED}; {HEADER_NOTES.get(b, b)}, not a BART summary; the pilot's, not the study's, result"
            if a == "none" and m in HEADER_CLAIMS
            else "",
        ), scores[by_header[b]][col] - scores[by_header[a]][col])
        for a, b in HEADER_PAIRS
        if a in by_header and b in by_header
        for m, col in METRICS.items()
    ]  # fmt: skip
    diffs = [j.diff for j in judged]
    counts = {len(w) for w in words.values()}
    cuts = (
        f"{counts.pop():,} adaptive chunks (the same cuts in every row)"
        if len(counts) == 1
        else "adaptive chunks: " + ", ".join(f"{h} header {len(words[n]):,}" for h, n in by_header.items())
    )
    titles = {}
    for h in ("generator", "phrase"):
        if h in by_header:
            chunks = read_table(sizes_dir.parent / "chunks" / f"{by_header[h]}.parquet", CHUNKS)
            titles[h] = [json.loads(m).get("header", "") for m in chunks["metadata"].head(3)]
    generator = chunk_params[by_header["generator"]].generator if "generator" in by_header else "—"
    notes = [
        (
            "The paper's figures are its adaptive row (with BART micro-headers); it reports no header ablation in its "
            "results (§4), only its pilot's finding in words (§2.2.4): without headers recall rose and precision fell. "
            "Those two directions are judged below; F1 and generator against noun-phrase headers have none. A header "
            "is embedded with its chunk and is outside the chunk's offsets, so the rows differ only in what the "
            "embedder reads."
        )
    ]
    n_questions = len(next(iter(scores.values()))[METRICS[f"f1@{K}"]])
    notes += [line for n in stats_notes(judged, n_questions) for line in ("", n)]
    if len(titles) == 2:
        notes += [
            "",
            "The first three chunks' headers, generator: "
            + "; ".join(f"“{t}”" for t in titles["generator"])
            + "; noun phrase: "
            + "; ".join(f"“{t}”" for t in titles["phrase"]),
        ]
    return PaperTable(
        paper=PAPER, section="headers",
        title="Micro-headers: generator-written titles against the project's, dense P / R / F1 @ 5, COVID-QA",
        command=COMMAND,
        sample=(
            f"{sample['queries']} COVID-QA questions about a seeded sample of {sample['documents']} articles "
            f"(samples.{p.sample}.max_documents), their chunks pooled in one index; k = {K}; {cuts}"
        ),
        models=f"embedder {embed_model} (embed.model); header writer {generator} (chunk.generator)",
        wall_s=None, metrics=list(METRICS), rows=rows, differences=diffs, notes=notes,
    )  # fmt: skip


def non_response_table(scores_dir: Path, work: Path, embed_model: str, bootstrap: int, seed: int) -> PaperTable:
    """The share of answers that decline, per arm of the QA stages (qa_context -> generate_qa ->
    evaluate_qa): their per-question scores under ``scores_dir``, their reports under ``work``
    (``metrics/`` and ``data/papers/clinical/non-response``)."""
    scores_file = scores_dir / "report" / "scores.csv"
    scores = pd.read_csv(scores_file, dtype={"question_id": str}).sort_values(["method", "question_id"])
    by = {m: g for m, g in scores.groupby("method")}
    context = read_json(work / "qa" / "report.json")
    gen = read_json(work / "answers" / "report.json")
    rows = [
        Row(lab, {}, {name: mean_ci(by[arm][col].to_numpy(), bootstrap, seed) for name, col in ANSWER_METRICS.items()})
        for arm, lab in ANSWER_ARMS.items()
        if arm in by
    ]
    judged = [
        Judged(
            Difference(
                f"{b} − {a}",
                "non-response",
                None,
                paired_delta(by[a]["declined"].to_numpy(), by[b]["declined"].to_numpy(), bootstrap, seed),
                sources=(NON_RESPONSE,),  # a metric of the paper's, with no figure printed for it
            ),
            by[b]["declined"].to_numpy(dtype=float) - by[a]["declined"].to_numpy(dtype=float),
        )
        for a, b in ANSWER_PAIRS
        if a in by and b in by
    ]
    diffs = [j.diff for j in judged]
    n = len(next(iter(by.values())))
    example = "example" if gen["n_examples"] == 1 else "examples"
    return PaperTable(
        paper=PAPER, section="non-response", title="Non-response rate: answers that decline, per chunk method, COVID-QA",
        command=COMMAND,
        sample=(
            f"{n} COVID-QA questions (a seeded sample, qa.max_questions; qa.corpus: {context['corpus']['mode']}, i.e. the articles of the "
            f"sampled questions pooled), top {context['top_k']} chunks within {gen['context_words']} words per prompt, "
            f"{gen['n_examples']} in-context {example}; every arm answers the same questions"
        ),
        models=f"generator {gen['model']} (generate.model), greedy, ≤ {gen['max_new_tokens']} new tokens; embedder {embed_model}",
        wall_s=None, metrics=list(ANSWER_METRICS), rows=rows, differences=diffs,
        notes=[
            (
                'Non-response: the answer is empty or declines (`biochunk.evaluation.answers.declined`: "the context does not '
                'say / mention ...", "not mentioned / stated ...", "no / not enough information", "I don\'t know", '
                '"cannot be answered / determined"). The system prompt allows it (`qa.decline: true`): "If the context '
                'passages do not contain the answer, reply only: The context does not say." The paper gives no figure to '
                "compare with: it names the non-response rate among its metrics (§2.2.6) but prints no figure for it."
            ),
            "",
            (
                "Context holds the answer: the gold answer span appears whole in the context the model read. ROUGE-2 F1: "
                f"against the gold span. Per-question scores: `{scores_file.as_posix()}`."
            ),
            *(line for note in stats_notes(judged, n) for line in ("", note)),
        ],
    )  # fmt: skip


def _ratings(path: Path) -> dict[str, dict[str, pd.Series]]:
    """judge_qa's ratings.parquet as arm -> scale -> rating by question id (unparseable: NaN)."""
    df = read_table(path, judge.RATINGS)
    out: dict[str, dict[str, pd.Series]] = {}
    for (arm, scale), g in df.groupby(["method", "scale"], sort=False):
        out.setdefault(str(arm), {})[str(scale)] = g.set_index("question_id")["rating"].astype("float64").sort_index()
    return out


def judge_table(scores_dir: Path, work: Path, embed_model: str, bootstrap: int, seed: int) -> PaperTable:
    """The LLM-judge proxy of the clinician ratings: per arm of the non-response part, the mean
    medical accuracy and clinical relevance (1-3) its answers get from judge_qa, beside the
    paper's Table 1; the paper's pairs, paired over the questions both arms were rated on.
    ``scores_dir``: metrics/papers/clinical/non-response (judge_qa writes ``judge/`` there);
    ``work``: data/papers/clinical/non-response (generate_qa's report)."""
    folder = scores_dir / "judge"
    if not (folder / "ratings.parquet").is_file():
        raise UserError(f"{folder}: no ratings.parquet; run the judge_qa stage first ({COMMAND})")
    rep = read_json(folder / "report.json")
    gen = read_json(work / "answers" / "report.json")
    ratings = _ratings(folder / "ratings.parquet")
    model, generator = rep["model"], gen["model"]
    rows = []
    for arm, lab in ANSWER_ARMS.items():
        if arm not in ratings:
            continue
        paper_row = ROWS[arm][1] if arm in ROWS else None
        paper, sources, said = {}, {}, []
        ours, rated = {}, []
        for metric, (scale, i) in JUDGE_METRICS.items():
            x = ratings[arm][scale].dropna().to_numpy()
            ours[metric] = mean_ci(x, bootstrap, seed)
            rated.append(f"{scale} {len(x)}")
            if paper_row:
                cell = RATING_CELLS[paper_row][i]
                text, what = RATING_TEXT.get((paper_row, i), (None, ""))
                paper[metric] = float(cell.figure)  # type: ignore[arg-type]
                sources[metric] = (cell, text) if text else (cell,)
                said += [what] if what else []
        n = len(ratings[arm]["accuracy"])
        vs = f"vs paper {paper_row} (Table 1" + (f"; its text: {', '.join(said)}" if said else "") + "); " if paper_row else "no paper row; "
        rows.append(Row(lab, paper, ours, f"{vs}rated of {n}: {', '.join(rated)}", sources))
    judged = []
    for (a, b), extra in JUDGE_PAIRS.items():
        if a not in ratings or b not in ratings:
            continue
        ra, rb = ROWS[a][1], ROWS[b][1]
        for metric, (scale, i) in JUDGE_METRICS.items():
            both = pd.concat([ratings[a][scale], ratings[b][scale]], axis=1, join="inner").dropna()
            d = paired_delta(both.iloc[:, 0].to_numpy(), both.iloc[:, 1].to_numpy(), bootstrap, seed)
            figure = round(float(RATING_CELLS[rb][i].figure) - float(RATING_CELLS[ra][i].figure), 10)  # type: ignore[arg-type]
            setting = "; ".join(
                [
                    f"judge {model}, not two medical experts; COVID-QA, not rhinoplasty; answers by {generator}, not Gemini 1.0 Pro",
                    f"the paper's test: {JUDGE_PAPER_TEST[a, b][scale]}",
                    *(f"{label(n)}: {ROWS[n][3]}" for n in (a, b) if ROWS[n][3]),
                ]
            )
            diff = Difference(
                f"{b} − {a}", metric, figure, d, sources=(RATING_CELLS[ra][i], RATING_CELLS[rb][i], *extra[scale]), setting=setting
            )
            judged.append(Judged(diff, both.iloc[:, 1].to_numpy() - both.iloc[:, 0].to_numpy()))
    counts = rep["counts"]
    lost = {s: sum(c[s]["unparseable"] for c in counts.values()) for s in judge.SCALES}
    n_answers = sum(len(v["accuracy"]) for v in ratings.values())
    small = SMALL_JUDGES.get(model)
    capability = (
        f"{small} is not a capable judge: with it these numbers test the plumbing (prompts, parsing, pairing), not the "
        f"paper's claim. A capable judge: `{JUDGE_COMMAND}`."
        if small
        else f"The judge, {model}, is a proxy: no agreement with clinicians' ratings has been measured for it."
    )
    notes = [
        (
            "The rubric is the paper's (§2.3): the judge's system message states each scale's three anchors in the "
            "paper's words (cited under “Not run here”); its user turn gives the question, the gold answer "
            "span(s) as the reference answer (the paper's raters judged against its reference texts), and the answer "
            f"(an empty one as “{judge.NO_ANSWER}”); its own turn opens with “{rep['cue'].strip()}” and it replies with "
            f"one digit, greedy, ≤ {rep['max_new_tokens']} new tokens. "
            "A declining answer is rated like any other. A reply that does not open with 1, 2 or 3 (after markup and a "
            "label such as “Rating:”) is unparseable: kept in ratings.parquet with no rating, left out of its arm's mean "
            "(each row says how many were rated) and of the paired differences (the questions rated in both arms). "
            f"Unparseable here: accuracy {lost['accuracy']} and relevance {lost['relevance']} of {n_answers} replies each."
        ),
        "",
        (
            "Our setting differs: the paper's ratings are two medical experts' consensus on Gemini 1.0 Pro's answers to 30 "
            f"rhinoplasty questions; here {model} rates {generator}'s answers to COVID-QA questions. The arms are the "
            "project's defaults (qa.methods: fixed 5-word windows stand against basic RAG's recursive 1,000 / 100 "
            "splitter, cluster runs against semantic's one chunk per cluster, the project's adaptive against the paper's), "
            "each with its retrieved context; the gold passage and no context are this project's, with no paper row; "
            "proposition is not an arm (the generator would rewrite every sentence of the pooled articles)."
        ),
        "",
        (
            "The paper's tests were a one-way ANOVA and Tukey post hoc tests over 30 unpaired items an arm (§2.4): "
            "accuracy, adaptive above basic RAG (p = 0.001), semantic and proposition not significantly above basic; "
            "relevance, no significant difference between any (§3.2). A verdict judges the sign of the Table 1 "
            "difference with our paired interval; where the paper's test found no significant difference, "
            "“not separable” is what that test found."
        ),
        "",
        capability,
    ]
    n_questions = rep["questions"]
    for line in stats_notes(judged, n_questions):
        notes += ["", line]
    return PaperTable(
        paper=PAPER, section="judge", title="LLM-judge proxy of the clinician ratings: medical accuracy and clinical relevance (1–3), COVID-QA",
        command=COMMAND,
        sample=(
            f"{n_questions} COVID-QA questions, the non-response part's (its answers, every arm answering the same "
            "questions; the paper: 30 rhinoplasty questions); every answer rated once per scale"
        ),
        models=(
            f"judge {model} (experiments/clinical/judge.yaml judge.model), greedy, ≤ {rep['max_new_tokens']} new tokens; "
            f"answers by generator {generator} (generate.model); embedder {embed_model}"
        ),
        wall_s=None, metrics=list(JUDGE_METRICS), rows=rows, differences=[j.diff for j in judged],
        not_run=[
            NotRun(
                "the clinicians' ratings (two medical experts, consensus; the paper's scales)",
                "no rater here; this table's judge stands in for them, on the same scales."
                + (f" Its offline default, {small}, is too small to stand in; the command runs a capable judge (a GPU)." if small else ""),
                JUDGE_COMMAND,
                sources=(RATERS, RUBRIC_ACCURACY, RUBRIC_RELEVANCE, GROUND_TRUTH, RATING_TESTS),
            )
        ],
        notes=notes,
    )  # fmt: skip


def tables(
    paper: Any, chunk_params: dict, scores_dir: Path, sizes: dict[str, Path], samples: dict[str, dict], embed_model: str, plot: Path
) -> list[PaperTable]:
    """Every part's tables, then the non-response table and the LLM-judge proxy's. ``sizes``, ``samples``: each sample's
    sizes folder (its other inputs lie beside it) and ``sample.json`` by name; ``plot`` unused.

    The non-response part's bootstrap is the retrieval sample's (1,000 resamples, seed 42), as
    every interval on the page."""
    ps = parts(paper)
    r, prop, head = ps["retrieval"], ps["proposition"], ps["headers"]
    out = full_corpus_tables(paper, r, chunk_params, scores_dir, sizes[r.sample], samples[r.sample], embed_model)
    out.append(proposition_table(paper, prop, chunk_params, scores_dir, sizes[prop.sample], samples[prop.sample], embed_model))
    out.append(headers_table(paper, head, chunk_params, scores_dir, sizes[head.sample], samples[head.sample], embed_model))
    s = paper.samples[r.sample]
    # The QA stages' outputs: data/papers/clinical/non-response, beside the samples' folders.
    work = sizes[r.sample].parent.parent / "non-response"
    out.append(non_response_table(scores_dir / "non-response", work, embed_model, s.bootstrap, s.seed))
    out.append(judge_table(scores_dir / "non-response", work, embed_model, s.bootstrap, s.seed))
    return out
