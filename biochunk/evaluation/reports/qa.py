"""QA through retrieval + generation (``experiments/qa``): questions answered by the generator
with each chunk method's retrieved context, and on BioASQ also with the reshaped context, the
gold snippets and no context.

The two tables of ``docs/results/qa.md``, both rendered from the tracked per-question scores
that ``evaluate_qa`` writes (``metrics/papers/qa/<dataset>/report/scores.csv``: one row per
question and arm, ROUGE-2, ROUGE-SU4 and BERTScore precision / recall / F1, and whether the
context held the answer):

- ``methods``: every chunk method's retrieved context on BioASQ and COVID-QA, each method minus
  ``recursive`` (the clinical study's own baseline splitter, 1,000 / 100 characters) paired over
  the same questions;
- ``contexts``: BioASQ with no context, ``recursive``'s retrieved context, the reshaped context and
  the gold snippets, each minus no context and minus the retrieved one;
- ``headers``: the micro-header ablation, each method of a dataset's header run
  (``experiments/qa/<dataset>-header.yaml``: its chunk.header, ``none`` by default) minus the same
  method of the dataset's run (params.yaml's chunk.header), paired over the same questions.

Means and intervals are computed here from the per-question scores, so each one can be
recomputed from tracked files. None of the five papers of ``../shared/papers/`` reports these
arms with this generator: the clinical study rates answers by clinicians, and the context
reshaping paper's own comparisons are the Tables 1, 2 and 5 of its pipeline
(``experiments/bioasq``). So every paper cell is — and no difference has a published direction.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import pandas as pd

from biochunk.errors import UserError
from biochunk.evaluation.papers import Difference, Judged, PaperTable, Row, mean_ci, paired_delta, stats_notes

PAGE = "qa"  # docs/results/qa.md
COMMAND = "dvc repro experiments/qa/dvc.yaml"
NAMES = {"bioasq": "BioASQ", "covidqa": "COVID-QA"}
MEASURES = {"rouge2_f1": "ROUGE-2 F1", "rougesu4_f1": "ROUGE-SU4 F1", "bertscore_f1": "BERTScore F1"}
PRIMARY = "rouge2_f1"
HOLDS = "context_has_answer"  # the gold answer span appears whole in the context the generator read
BASE = "recursive"  # the clinical study's baseline splitter; every chunk method is compared with it
CONTEXTS = ("none", "gold", "reshaped")  # the arms of qa.contexts that are not a chunk method's retrieval
COLUMNS = ("question_id", "method", *MEASURES, HOLDS)
HEADER_RUN = "-header"  # run <dataset>-header: the header ablation of run <dataset> (experiments/qa/dvc.yaml)
HEADER_LABELS = {"phrase": "noun-phrase header", "generator": "generator-written header", "none": "no header"}


@dataclass(frozen=True)
class Settings:
    """What the runs were made with (params.yaml; the datasets' files set only qa.corpus,
    qa.max_questions and qa.contexts): the intervals' resamples and seed, and the models line."""

    n_boot: int  # evaluate.bootstrap
    seed: int  # evaluate.seed
    generator: str  # generate.model
    n_examples: int  # qa.n_examples
    bertscore_model: str  # evaluate_qa.bertscore_model
    bertscore_layers: int  # evaluate_qa.bertscore_layers

    def models(self, embeds: str) -> str:
        shots = {0: "no in-context example", 1: "one in-context example"}.get(self.n_examples, f"{self.n_examples} in-context examples")
        return (
            f"{self.generator} (generate.model, greedy), {shots} (qa.n_examples); the embed.model encoder for {embeds}; "
            f"BERTScore with {self.bertscore_model} (layer {self.bertscore_layers})"
        )


def read_scores(path: Path) -> pd.DataFrame:
    """evaluate_qa's ``scores.csv``: one row per question and arm, every arm over the same questions."""
    if not path.is_file():
        raise UserError(f"input file not found: {path} (run `{COMMAND}`)")
    scores = pd.read_csv(path, dtype={"question_id": str})
    missing = [c for c in COLUMNS if c not in scores.columns]
    if missing:
        raise UserError(f"{path}: no column {missing[0]!r}; re-run `{COMMAND}`")
    per_arm = scores.groupby("method", sort=False)["question_id"].apply(lambda q: tuple(sorted(q)))
    if per_arm.nunique() != 1:
        raise UserError(f"{path}: the arms answered different questions, so none can be paired; re-run `{COMMAND}`")
    return scores


def wide(scores: pd.DataFrame, column: str) -> pd.DataFrame:
    """question × arm of one score, questions sorted, arms in the file's order."""
    arms = list(dict.fromkeys(scores["method"]))
    return scores.pivot(index="question_id", columns="method", values=column).sort_index()[arms]


def methods(scores: pd.DataFrame) -> list[str]:
    """The chunk methods' retrieved arms, in qa.methods order (the file's)."""
    return [m for m in dict.fromkeys(scores["method"]) if m not in CONTEXTS and not m.startswith("reshaped:")]


def _holds(scores: pd.DataFrame) -> pd.DataFrame | None:
    # Only where every retrieved arm says (COVID-QA's extractive spans; BioASQ's ideal answers are
    # written, not found in the text, so the column is empty there).
    w = wide(scores, HOLDS)[methods(scores)]
    return None if w.isna().any().any() else w


def methods_table(runs: dict[str, pd.DataFrame], s: Settings) -> PaperTable:
    """Chunk method × dataset: the three F1s with intervals (and, where the answer is a span of
    the text, how often the context held it), then every method minus ``recursive`` on ROUGE-2 F1."""
    names = {ds: methods(s) for ds, s in runs.items()}
    for ds, ms in names.items():
        if BASE not in ms:
            raise UserError(f"{ds}: no {BASE} arm among {ms}; qa.methods must include it (the baseline every method is compared with)")
    order = list(dict.fromkeys(m for ms in names.values() for m in ms))
    metrics, rows, judged = [], {m: {} for m in order}, []
    for ds, scores in runs.items():
        name = NAMES.get(ds, ds)
        holds = _holds(scores)
        for col, label in MEASURES.items():
            metrics.append(f"{name} {label}")
            w = wide(scores, col)
            for m in names[ds]:
                rows[m][f"{name} {label}"] = mean_ci(w[m].to_numpy(), s.n_boot, s.seed)
        if holds is not None:
            metrics.append(f"{name} context holds the answer")
            for m in names[ds]:
                rows[m][f"{name} context holds the answer"] = mean_ci(holds[m].to_numpy(dtype=float), s.n_boot, s.seed)
        w = wide(scores, PRIMARY)
        base = w[BASE].to_numpy()
        for m in names[ds]:
            if m != BASE:
                x = w[m].to_numpy()
                judged.append(Judged(Difference(f"{m} − {BASE} ({name})", f"{name} {MEASURES[PRIMARY]}", None, paired_delta(base, x, s.n_boot, s.seed)), x - base))
    n = {NAMES.get(ds, ds): s["question_id"].nunique() for ds, s in runs.items()}
    return PaperTable(
        paper=PAGE, section="methods",
        title="QA through retrieval + generation: each chunk method's retrieved context (" + ", ".join(n) + ")",
        command=COMMAND,
        sample="; ".join(f"{name}: {q} questions (a seeded sample), every method answering the same ones" for name, q in n.items()),
        models=s.models("the chunk embeddings, dense retrieval"),
        wall_s=None, metrics=metrics, rows=[Row(m, {}, rows[m]) for m in order],
        differences=[j.diff for j in judged], digits=3,
        notes=[
            "Each question retrieves the top qa.top_k chunks of its method from the pooled documents of the sampled "
            "questions (qa.corpus: sampled, experiments/qa/<dataset>.yaml), packed in rank order into the same "
            "qa.context_words budget for every method. F1 means with 95% percentile bootstrap intervals over the "
            "questions; the differences are paired over the same questions. `recursive` is the clinical study's own "
            "baseline, the 1,000 / 100-character recursive splitter. \"Context holds the answer\": the gold answer "
            "span appears whole in the context the generator read (COVID-QA's answers are spans of the article; "
            "BioASQ's ideal answers are written, so the column is not defined there).",
            *(line for note in stats_notes(judged, min(n.values())) for line in ("", note)),
        ],
    )  # fmt: skip


def contexts_table(scores: pd.DataFrame, s: Settings) -> PaperTable:
    """BioASQ: no context, ``recursive``'s retrieved context, the reshaped context and the gold
    snippets, with every measure's interval; each arm minus no context and minus the retrieved one."""
    arms = [a for a in ("none", BASE, "reshaped", "gold") if a in set(scores["method"])]
    if arms != ["none", BASE, "reshaped", "gold"]:
        raise UserError(f"bioasq: arms {sorted(set(scores['method']))}; qa.contexts must hold retrieved, reshaped, gold and none, qa.methods {BASE}")
    labels = {"none": "no context", BASE: f"retrieved ({BASE})", "reshaped": "reshaped", "gold": "gold snippets"}
    per = {col: wide(scores, col) for col in MEASURES}
    rows = [Row(labels[a], {}, {label: mean_ci(per[col][a].to_numpy(), s.n_boot, s.seed) for col, label in MEASURES.items()}) for a in arms]
    judged = []
    for b, a in (((BASE, "none"), ("reshaped", "none"), ("gold", "none"), ("reshaped", BASE), ("gold", BASE))):
        for col, label in MEASURES.items():
            x, y = per[col][a].to_numpy(), per[col][b].to_numpy()
            judged.append(Judged(Difference(f"{labels[b]} − {labels[a]}", label, None, paired_delta(x, y, s.n_boot, s.seed)), y - x))
    n = scores["question_id"].nunique()
    return PaperTable(
        paper=PAGE, section="contexts",
        title="What the model reads: no context, retrieved chunks, the reshaped context, the gold snippets (BioASQ)",
        command=COMMAND, sample=f"BioASQ: {n} questions (a seeded sample), every arm answering the same ones",
        models=s.models("the embeddings, the communities"),
        wall_s=None, metrics=list(MEASURES.values()), rows=rows, differences=[j.diff for j in judged], digits=3,
        notes=[
            f"`retrieved ({BASE})`: the top qa.top_k chunks of the 1,000 / 100-character recursive splitter; `reshaped`: "
            "the top reshape.passages records split into sentences, communities at cosine reshape.threshold, "
            "reshape.keep TextRank sentences per community, the reshape.top_m communities closest to the question "
            "(reshape.rank: cosine); `gold`: the sentences around the question's own gold snippets. Every arm shares "
            "the qa.context_words budget. F1 means with 95% percentile bootstrap intervals over the questions, the "
            "differences paired over the same questions. The context reshaping paper states that its exact context and "
            "its unranked topics beat no context (its Table 1); those directions are judged with its own arms and "
            "settings by `experiments/bioasq` (bioasq-reshaping.md, Table 1). The arms here differ (the recursive "
            "splitter's chunks, cosine-ranked communities, one in-context example, a 150-word budget), so no paper "
            "direction is claimed for them.",
            *(line for note in stats_notes(judged, n) for line in ("", note)),
        ],
    )  # fmt: skip


def headers_table(runs: dict[str, pd.DataFrame], variants: dict[str, pd.DataFrame], headers: dict[str, tuple[str, str]], s: Settings) -> PaperTable:
    """The micro-header ablation: per dataset, each method of its header run against the same
    method of its run, every measure with its interval, and the paired differences.

    ``variants``: dataset -> the header run's scores; ``headers``: dataset -> (chunk.header of
    the run, chunk.header of the header run)."""
    metrics: list[str] = []
    rows: dict[str, dict] = {}
    judged = []
    for ds, var in variants.items():
        name = NAMES.get(ds, ds)
        if ds not in runs:
            raise UserError(f"{ds}{HEADER_RUN}: no run {ds} to pair it with; give its report too (--reports)")
        base_header, header = headers[ds]
        if header == base_header:
            raise UserError(f"experiments/qa/{ds}{HEADER_RUN}.yaml: chunk.header is {header!r}, as the {ds} run's; set another one (phrase, generator, none)")
        base = runs[ds]
        ms = methods(var)
        missing = [m for m in ms if m not in set(base["method"])]
        if missing:
            raise UserError(f"{ds}{HEADER_RUN}: method {missing[0]!r} is not among the {ds} run's qa.methods, so it has nothing to pair with")
        if set(var["question_id"]) != set(base["question_id"]):
            raise UserError(f"{ds}{HEADER_RUN}: its questions are not the {ds} run's; give both runs the same qa.max_questions and qa.seed")
        sides = ((base_header, base), (header, var))
        holds = [wide(scores, HOLDS)[ms] for _, scores in sides]
        held = not any(h.isna().any().any() for h in holds)  # defined where the answer is a span (COVID-QA)
        cols = [*(f"{name} {label}" for label in MEASURES.values()), *([f"{name} context holds the answer"] if held else [])]
        metrics += [c for c in cols if c not in metrics]
        per = [{col: wide(scores, col)[ms] for col in MEASURES} for _, scores in sides]
        for m in ms:
            labels = [f"{m}, {HEADER_LABELS.get(h, h)}" for h, _ in sides]
            for label, side, hold in zip(labels, per, holds):
                cells = rows.setdefault(label, {})
                for col, mlabel in MEASURES.items():
                    cells[f"{name} {mlabel}"] = mean_ci(side[col][m].to_numpy(), s.n_boot, s.seed)
                if held:
                    cells[f"{name} context holds the answer"] = mean_ci(hold[m].to_numpy(dtype=float), s.n_boot, s.seed)
            for col, mlabel in MEASURES.items():
                x, y = per[0][col][m].to_numpy(), per[1][col][m].to_numpy()
                diff = Difference(f"{labels[1]} − {labels[0]} ({name})", f"{name} {mlabel}", None, paired_delta(x, y, s.n_boot, s.seed))
                judged.append(Judged(diff, y - x))
    n = {NAMES.get(ds, ds): v["question_id"].nunique() for ds, v in variants.items()}
    return PaperTable(
        paper=PAGE, section="headers",
        title="Micro-headers: the same chunks embedded with and without their header (" + ", ".join(n) + ")",
        command=COMMAND,
        sample="; ".join(f"{name}: the {q} questions of the methods table, both settings answering the same ones" for name, q in n.items()),
        models=s.models("the chunk embeddings, dense retrieval"),
        wall_s=None, metrics=metrics, rows=[Row(label, {}, cells) for label, cells in rows.items()],
        differences=[j.diff for j in judged], digits=3,
        notes=[
            "Each pair cuts the same chunks: a micro-header is written beside a chunk, outside its offsets. It is "
            "embedded with the chunk (vectors.embedding_text: the header first) and never shown to the generator, so "
            "the header changes which chunks each question retrieves, not the text of a chunk. The header run "
            "(experiments/qa/<dataset>-header.yaml) sets chunk.header and qa.methods; everything else is params.yaml's, "
            "as for the methods table, whose rows give the run's side. F1 means with 95% percentile bootstrap "
            "intervals over the questions; the differences are paired over the same questions. The clinical study "
            "credits micro-headers with higher retrieval precision in its pilot (§2.2.4) and says it did not isolate "
            "their contribution (§4); it reports no effect on answers, so no paper direction is claimed here. Its "
            "retrieval counterpart, precision and recall @ 5 with three kinds of header, is the headers table of "
            "clinical.md.",
            *(line for note in stats_notes(judged, min(n.values())) for line in ("", note)),
        ],
    )  # fmt: skip


def tables(scores: dict[str, Path], s: Settings, header_runs: dict[str, Path] | None = None, headers: dict[str, tuple[str, str]] | None = None) -> list[PaperTable]:
    """``scores``: dataset -> its ``scores.csv`` (``bioasq`` and ``covidqa``); ``s``: what the runs used;
    ``header_runs``: dataset -> its header run's ``scores.csv``, ``headers``: dataset -> the
    chunk.header of its run and of its header run (the ``headers`` table, where given)."""
    runs = {ds: read_scores(path) for ds, path in scores.items()}
    out = [methods_table(runs, s)]
    if "bioasq" in runs:
        out.append(contexts_table(runs["bioasq"], s))
    if header_runs:
        out.append(headers_table(runs, {ds: read_scores(p) for ds, p in header_runs.items()}, headers or {}, s))
    return out
