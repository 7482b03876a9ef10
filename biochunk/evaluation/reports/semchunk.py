"""semchunk (paper 3): does the top-1 chunk at 256 embedder tokens hold the answer?

Inputs, per sample (COVID-QA, BioASQ) and setting of ``experiments/semchunk/params.yaml``:
the per-question scores of the ``evaluate_retrieval`` stage (``holds@1``, ``overlaps@1``),
its per-chunk sizes, and the chunk stage's report (a peer's offsets: exact, repaired,
dropped). semchunk minus every other row gets a paired interval over the same questions.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

from biochunk.evaluation.papers import Difference, Estimate, PaperTable, Row, mean_ci, paired_delta, read_items
from biochunk.io import read_json
from biochunk.models import OFFLINE

PAPER = "semchunk"
REFERENCE = "semchunk"  # the paper's system: every difference is semchunk − another row
COMMAND = "dvc repro experiments/semchunk/dvc.yaml"
TITLES = {"covidqa": "COVID-QA", "bioasq": "BioASQ"}
HOLDS = {"covidqa": "top-1 holds answer", "bioasq": "top-1 holds a gold sentence"}
OVERLAPS = {"covidqa": "top-1 overlaps answer", "bioasq": "top-1 overlaps a gold snippet"}
CORRECT = {
    "covidqa": (
        "Correct = the top-1 chunk (dense, all articles' chunks pooled) lies in the answer's article and its span "
        "contains the gold answer span whole; overlaps = shares at least one character with it."
    ),
    "bioasq": (
        "Correct = the top-1 chunk (dense, all records' chunks pooled) lies in a record of the question's gold "
        "snippets and its span contains one sentence of one of those snippets whole (the snippet located in the "
        "record, cut by the project's sentence splitter); overlaps = shares at least one character with a gold "
        "snippet sentence."
    ),
}
SIZE_METRICS = ["chunks", "tokens median", "tokens p95"]


def label(name: str, setting: Any, chunk_params: Any) -> str:
    """The row's name: the setting's key and what it runs."""
    if setting.peer:
        extra = {k: v for k, v in setting.overrides.items() if k not in ("method", "peer", "max_tokens")}
        return f"{name} (peer library" + "".join(f", {k} {v}" for k, v in extra.items()) + ")"
    cp = chunk_params
    if cp is None:
        return f"{name}: whole documents"
    # A character bound past any article is no bound: the token budget alone decides.
    chars = "no character bound" if cp.chunk_size >= 10**8 else f"{cp.chunk_size:,} chars"
    what = {"fixed": f"{cp.window}-word windows", "recursive": f"{chars}, overlap {cp.chunk_overlap}"}.get(cp.method, "")
    return f"{name}: ours, {cp.method}" + (f" ({what})" if what else "")


def table(paper: Any, chunk_params: dict, name: str, scores_dir: Path, sizes_dir: Path, sample: dict, embed_model: str) -> PaperTable:
    """The table of sample ``name``: ``sizes_dir`` holds its per-chunk sizes, ``<setting>/sizes.parquet``."""
    s = paper.samples[name]
    dataset = s.dataset
    settings = list(paper.settings)
    scores = {n: read_items(scores_dir / name / f"{n}.parquet") for n in settings}
    tokens = {n: read_items(sizes_dir / n / "sizes.parquet")["tokens"] for n in settings}
    chunked = {n: read_json(scores_dir / name / "chunks" / f"{n}.json") for n in settings}
    holds, overlaps = HOLDS[dataset], OVERLAPS[dataset]
    budget = {n: (paper.settings[n].overrides.get("max_tokens") or chunk_params[n].max_tokens) for n in settings}
    # The model's own name where the param is an offline alias (``minilm``), else the param as given.
    model = OFFLINE[embed_model][2].rsplit("/", 1)[-1] if embed_model in OFFLINE else embed_model
    budgets = sorted({b for b in budget.values() if b})

    def row(n: str) -> Row:
        t, c = tokens[n], chunked[n]
        notes = []
        if "reported" in c:
            exact = c["reported"] - c["repaired"] - c["dropped"]
            notes.append(f"offsets: {exact:,} of {c['reported']:,} exact, {c['repaired']} repaired, {c['dropped']} dropped")
        over = int((t > budget[n]).sum()) if budget[n] else 0
        if over:
            notes.append(f"{over} chunks over {budget[n]} tokens")
        ours = {
            holds: mean_ci(scores[n]["holds@1"], s.bootstrap, s.seed),
            overlaps: mean_ci(scores[n]["overlaps@1"], s.bootstrap, s.seed),
            "chunks": Estimate(float(len(t))),
            "tokens median": Estimate(float(np.median(t)) if len(t) else float("nan")),
            "tokens p95": Estimate(float(np.quantile(t, 0.95)) if len(t) else float("nan")),
        }
        return Row(label(n, paper.settings[n], chunk_params[n]), {}, ours, "; ".join(notes))

    rows = [row(n) for n in settings]
    diffs = []
    if REFERENCE in scores:
        ref = scores[REFERENCE]["holds@1"]
        diffs = [
            Difference(f"semchunk − {label(n, paper.settings[n], chunk_params[n])}", holds, None,
                       paired_delta(scores[n]["holds@1"], ref, s.bootstrap, s.seed))
            for n in settings if n != REFERENCE
        ]  # fmt: skip
    ahead = [d.label.split(" − ", 1)[1] for d in diffs if d.ours.lo > 0]
    behind = [d.label.split(" − ", 1)[1] for d in diffs if d.ours.hi < 0]
    if dataset == "covidqa":
        text = f"COVID-QA: {sample['queries']:,} questions over {sample['documents']} articles"
    else:
        text = (
            f"BioASQ: {sample['queries']:,} questions with a gold snippet located in its record; corpus: the "
            f"{sample['documents']:,} PubMed records of the gold snippets (record unit)"
        )
    if sample["queries"] < sample["of_queries"] or sample["documents"] < sample["of_documents"]:
        text += f" (of {sample['of_queries']:,} questions and {sample['of_documents']:,} documents; sample seed {sample['seed']})"
    left = sample.get("left out", {})
    if left:
        text += "; left out: " + ", ".join(f"{k} {v:,}" for k, v in left.items())
    return PaperTable(
        paper=PAPER,
        section=f"retrieval-{name}",
        title=f"Retrieval correctness at {'/'.join(map(str, budgets))} {model} tokens, top-1, {TITLES.get(dataset, dataset)}",
        command=COMMAND,
        sample=text,
        models=f"{model} (`embed.model: {embed_model}`): tokenizer for every chunker's sizes; embedder for retrieval and the semantic chunkers",
        wall_s=None,
        metrics=[holds, overlaps, *SIZE_METRICS],
        rows=rows,
        differences=diffs,
        notes=[
            (
                "The paper's figures are not in references.md (no number of its comparison could be found to cite), "
                'so the paper column is empty and each direction reads "no published figure"; the claim to test '
                "is semchunk ≥ every peer."
            ),
            (
                f"Our paired intervals: semchunk ahead of {', '.join(ahead) or 'none'}; "
                f"behind {', '.join(behind) or 'none'}; the rest not separable."
            ),
            CORRECT[dataset],
            "Chunking speed is measured apart, against the same peers, in the speed tables above (`benchmarks/chunking_speed.py`).",
        ],
        metric_digits={"chunks": 0, "tokens median": 0, "tokens p95": 0},
    )


def tables(paper: Any, chunk_params: dict, scores_dir: Path, sizes: dict[str, Path], samples: dict[str, dict], embed_model: str, plot: Path) -> list[PaperTable]:
    """One table per sample; ``sizes``, ``samples``: each sample's sizes folder and ``sample.json``
    by name; ``plot`` unused (no figure)."""
    return [table(paper, chunk_params, n, scores_dir, sizes[n], samples[n], embed_model) for n in paper.samples]
