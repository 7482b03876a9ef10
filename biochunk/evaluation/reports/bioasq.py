"""Context reshaping for BioASQ (page ``bioasq-reshaping``): Tables 1, 2 and 5, the t-test and ICL.

Inputs, per run of ``experiments/bioasq/dvc.yaml`` (``main``: ``params.yaml``; ``icl``:
``icl-params.yaml``, both beside the pipeline): the per-question scores of the
``evaluate_qa`` stage (``<scores>/<run>/report/scores.csv``, tracked in git), the answers and
contexts the model read (``<run>/answers/answers.parquet``), and the QA stages' reports
(``<run>/qa/report.json``: arms, corpus, gold-record hit rates, reshaping counts). Every arm
answers the same questions, so every difference is paired:

- Table 1: no context, unranked topics (5 communities x 4 sentences, discovery order), the gold
  snippets' sentences;
- Table 2: 5 / 10 communities x 4 / 10 / 15 sentences per community, ranked by the cross-encoder
  the ``train_reranker`` stage fine-tunes (``reshape.reranker``), and the paired t-test (scipy
  ``ttest_rel``) of the best variant against unranked topics;
- Table 5: answer length in words per arm (and the context words the model read);
- ICL: no context and the ICL run's variant with ``qa.n_examples`` examples of each question's
  own type, paired with the main run's one-example answers.

Intervals: 95% bootstrap over questions (``evaluate.bootstrap`` resamples, ``evaluate.seed``).
No wall time: a pipeline's page must reproduce byte for byte (the stages' reports keep theirs).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pandas as pd
import yaml
from scipy.stats import ttest_rel

from biochunk.errors import UserError
from biochunk.evaluation.papers import Difference, Estimate, PaperTable, Row, mean_ci, paired_delta
from biochunk.io import QA_ANSWERS, read_json, read_table

PAPER = "bioasq-reshaping"  # the page, docs/results/bioasq-reshaping.md
COMMAND = "dvc repro experiments/bioasq/dvc.yaml"
RUNS = ("main", "icl")  # the pipeline's QA runs, in the report stage's --runs order
ICL_PARAMS = "icl-params.yaml"  # the ICL run's params, beside the main run's (--paper-params)
UNRANKED = "reshaped:unranked-5x4"
TABLE1 = ("none", UNRANKED, "gold")
# The paper's Table 2 grid: top_m communities x keep sentences per community, cross-encoder ranked.
TABLE2 = tuple(f"reshaped:ce-{m}x{k}" for m in (5, 10) for k in (4, 10, 15))
# Display name -> evaluate_qa's per-question score column.
METRICS = {
    "ROUGE-2 R": "rouge2_recall",
    "ROUGE-2 P": "rouge2_precision",
    "ROUGE-2 F1": "rouge2_f1",
    "ROUGE-SU4 R": "rougesu4_recall",
    "ROUGE-SU4 P": "rougesu4_precision",
    "ROUGE-SU4 F1": "rougesu4_f1",
    "BERTScore R": "bertscore_recall",
    "BERTScore P": "bertscore_precision",
    "BERTScore F1": "bertscore_f1",
}
TESTED = ["ROUGE-2 F1", "ROUGE-SU4 F1", "BERTScore F1"]
NO_PAPER = (
    "Paper figures: None: the paper's numbers are not in ../shared/docs/references.md, so no "
    "direction can be checked (every difference reads 'no published figure')."
)


def check_params(main: dict[str, Any], icl: dict[str, Any], where: str = "experiments/bioasq") -> None:
    """The two runs' params give the tables' arms and answer the same questions; one line otherwise."""
    names = ["reshaped:" + v["name"] for v in main["reshape"]["variants"]]
    want = [UNRANKED, *TABLE2]
    if names != want:
        raise UserError(
            f"{where}/params.yaml: reshape.variants must name {', '.join(a.split(':')[1] for a in want)} in that order, got {names}"
        )
    if sorted(main["qa"]["contexts"]) != sorted(["none", "gold", "reshaped"]):
        raise UserError(f"{where}/params.yaml: qa.contexts must be [none, gold, reshaped], got {main['qa']['contexts']}")
    icl_names = ["reshaped:" + v["name"] for v in icl["reshape"]["variants"]]
    if len(icl_names) != 1 or icl_names[0] not in TABLE2:
        raise UserError(f"{where}/{ICL_PARAMS}: reshape.variants must name one Table 2 variant, got {icl_names}")
    if sorted(icl["qa"]["contexts"]) != ["none", "reshaped"]:
        raise UserError(f"{where}/{ICL_PARAMS}: qa.contexts must be [none, reshaped], got {icl['qa']['contexts']}")
    for key in ("max_questions", "question_splits", "seed", "example_split", "corpus", "context_words"):
        if main["qa"][key] != icl["qa"][key]:
            raise UserError(
                f"{where}/{ICL_PARAMS}: qa.{key} must equal params.yaml's ({main['qa'][key]!r}): the ICL run pairs with the main run's questions"
            )
    if main["qa"]["question_splits"] and main["qa"]["question_splits"] != main["retrieve"]["qa_test_splits"]:
        raise UserError(
            f"{where}/params.yaml: qa.question_splits must be retrieve.qa_test_splits (the batches the reranker never saw)"
        )


def label(arm: str) -> str:
    names = {"none": "no context", "gold": "exact gold context", UNRANKED: "unranked topics, 5 x 4"}
    if arm in names:
        return names[arm]
    m, k = arm.split("-")[-1].split("x")
    return f"cross-encoder ranked, {m} communities x {k} sentences"


def best_variant(scores: pd.DataFrame) -> str:
    """The Table 2 arm with the highest mean ROUGE-2 F1."""
    return str(scores[scores["method"].isin(TABLE2)].groupby("method")["rouge2_f1"].mean().idxmax())


def read_scores(path: Path) -> pd.DataFrame:
    if not path.is_file():
        raise UserError(f"{path}: no per-question scores; run the evaluate_qa stage (dvc repro {COMMAND.split()[-1]})")
    return pd.read_csv(path, dtype={"question_id": str})


def wide(scores: pd.DataFrame) -> dict[str, pd.DataFrame]:
    """Per score column: questions x arms, rows sorted by question id (so arms pair)."""
    return {c: scores.pivot_table(index="question_id", columns="method", values=c).sort_index() for c in METRICS.values()}


def reranker_label(reranker: str) -> str:
    """What ranked the communities, in words (the trained one with its training run)."""
    if reranker == "minilm":
        return "minilm (MiniLM with a fresh seeded head: untrained, a weak ranker)"
    report = Path(reranker) / "report.json"
    if report.is_file():
        r = read_json(report)
        if r.get("reranking"):
            return (
                f"MiniLM fine-tuned by the train_reranker stage ({r['steps']} steps, {r['groups']} question groups "
                f"of the batches not held out, BM25 hard negatives)"
            )
    return reranker


def ranker_note(ctx: dict) -> str:
    """How often the first community, and any community, comes from a gold record: what the
    ranker itself achieves, before the generator (qa_context's gold-document hit rates)."""
    hits = ctx["gold_document_hits"]
    arms = [UNRANKED, *(a for a in TABLE2 if a.endswith("x4"))]  # the hit rates depend on top_m, not keep
    return (
        "Share of questions whose first community / any of the top m communities comes from a gold record: "
        + "; ".join(
            f"{label(a).replace(' x 4 sentences', '').replace(', 5 x 4', '')} "
            f"{hits[a]['gold_doc_hit@1']:.3f} / {hits[a]['gold_doc_hit@k']:.3f}"
            for a in arms
        )
        + "."
    )


def _contexts(answers: pd.DataFrame, arm: str) -> pd.Series:
    return answers[answers["method"] == arm].set_index("question_id")["context"].sort_index()


def tables(paper_params: Path, scores_dir: Path, runs: list[Path]) -> list[PaperTable]:
    """Tables 1, 2, 5 and ICL from the tracked scores under ``scores_dir/<run>/report`` and the
    runs' stage outputs (``runs``: the main run's folder, then the ICL run's)."""
    if len(runs) != len(RUNS):
        raise UserError(f"--runs: give one folder per run ({', '.join(RUNS)}), in that order")
    p = yaml.safe_load(paper_params.read_text())
    pi = yaml.safe_load((paper_params.parent / ICL_PARAMS).read_text())
    check_params(p, pi, paper_params.parent.as_posix())
    main_dir, icl_dir = runs
    scores = read_scores(scores_dir / "main" / "report" / "scores.csv")
    answers = read_table(main_dir / "answers" / "answers.parquet", QA_ANSWERS)
    ctx = read_json(main_dir / "qa" / "report.json")
    gen = read_json(main_dir / "answers" / "report.json")
    arms = ctx["arms"]
    missing = sorted({*TABLE1, *TABLE2} - set(arms))
    if missing:
        raise UserError(f"{main_dir}: the run has no arm {missing[0]}; check experiments/bioasq/params.yaml and re-run")
    n_boot, seed = p["evaluate"]["bootstrap"], p["evaluate"]["seed"]
    w = wide(scores)
    n = len(w["rouge2_f1"])

    def row(arm: str, note: str = "") -> Row:
        ours = {m: mean_ci(w[c][arm].to_numpy(), n_boot, seed) for m, c in METRICS.items()}
        return Row(label(arm), {m: None for m in METRICS}, ours, note)

    def diffs(a: str, b: str) -> list[Difference]:
        return [
            Difference(
                f"{label(b)} − {label(a)}",
                m,
                None,
                paired_delta(w[METRICS[m]][a].to_numpy(), w[METRICS[m]][b].to_numpy(), n_boot, seed),
            )
            for m in TESTED
        ]

    q, rs = p["qa"], p["reshape"]
    batches = (
        f"batches {', '.join(q['question_splits'])}, held out of reranker training"
        if q.get("question_splits")
        else f"batches after {ctx['example_split']}"
    )
    sample = (
        f"{n} BioASQ questions (seeded sample, seed {q['seed']}, {batches}; examples from {ctx['example_split']}), "
        f"corpus: the {ctx['corpus']['documents']} PubMed records of the sampled questions; "
        f"{gen['n_examples']} in-context example(s); {gen['context_words']}-word context budget for every arm"
    )
    models = (
        f"generator {gen['model']}; embedder {p['embed']['model']} (search, communities, TextRank); cross-encoder "
        f"{reranker_label(rs['reranker'])}; BERTScore {p['evaluate_qa']['bertscore_model']}"
    )
    common = {"paper": PAPER, "command": COMMAND, "sample": sample, "models": models, "wall_s": None, "metrics": list(METRICS)}
    reshape_note = (
        f"Reshaping: top {rs['passages']} records by dense search, communities at threshold {rs['threshold']}, "
        f"TextRank within each community; communities per question found: "
        f"{ctx['reshape'][UNRANKED]['communities_mean']:.1f} on average."
    )
    t1 = PaperTable(
        section="table1",
        title="Table 1: no context, unranked topics, exact gold context (BioASQ)",
        rows=[row(a) for a in TABLE1],
        differences=diffs("none", UNRANKED) + diffs("none", "gold") + diffs(UNRANKED, "gold"),
        notes=[NO_PAPER, reshape_note],
        **common,
    )
    best = best_variant(scores)
    tests = []
    for m in TESTED:
        c = METRICS[m]
        r = ttest_rel(w[c][best], w[c][UNRANKED])
        tests.append(f"{m}: t = {r.statistic:+.2f}, p = {r.pvalue:.3f}")
    # Within the word budget, more communities or sentences can leave the text read unchanged.
    first = TABLE2[0]
    same = {a: int((_contexts(answers, a) == _contexts(answers, first)).sum()) for a in TABLE2[1:]}
    t2 = PaperTable(
        section="table2",
        title="Table 2: communities x sentences per community, cross-encoder ranked (BioASQ)",
        rows=[row(UNRANKED, "reference")] + [row(a) for a in TABLE2],
        differences=[d for a in TABLE2 for d in diffs(UNRANKED, a)[:1]] + diffs(UNRANKED, best)[1:],
        notes=[
            NO_PAPER,
            f"Best Table 2 variant by mean ROUGE-2 F1: {label(best)}, chosen on these same {n} questions "
            f"(so its difference from unranked topics is biased upwards). Paired t-test "
            f"(scipy.stats.ttest_rel, {n} questions), best variant vs unranked topics: " + "; ".join(tests) + ".",
            f"Questions whose context as the model read it ({gen['context_words']}-word budget) is identical to "
            f"{label(first)}'s: " + ", ".join(f"{label(a).split(', ')[1]} {v}/{n}" for a, v in same.items()) + ".",
            ranker_note(ctx),
            reshape_note,
        ],
        **common,
    )
    lengths = []
    for arm in arms:
        g = answers[answers["method"] == arm].sort_values("question_id")
        lengths.append(
            Row(
                label(arm),
                {"answer words": None, "context words": None, "sentences kept": None},
                {
                    "answer words": mean_ci(g["answer"].str.split().str.len().to_numpy(), n_boot, seed),
                    "context words": mean_ci(g["context"].str.split().str.len().fillna(0).to_numpy(), n_boot, seed),
                    # before the word budget; a mean over the questions and example candidates
                    **({"sentences kept": Estimate(ctx["reshape"][arm]["sentences_kept_mean"])} if arm in ctx["reshape"] else {}),
                },
            )
        )
    t5 = PaperTable(
        section="table5",
        title="Table 5: answer length per context (words)",
        rows=lengths,
        notes=[
            NO_PAPER,
            (
                f"Context words: as the model read it ({gen['context_words']}-word budget, with the [n] passage markers); "
                "sentences kept: reshaped sentences per question before the budget (mean, questions and example candidates)."
            ),
            f"Answers are cut at qa.max_new_tokens = {gen['max_new_tokens']} tokens.",
        ],
        digits=1,
        **{**common, "metrics": ["answer words", "context words", "sentences kept"]},
    )
    return [
        t1,
        t2,
        t5,
        icl_table(
            pi,
            scores,
            read_scores(scores_dir / "icl" / "report" / "scores.csv"),
            read_json(icl_dir / "answers" / "report.json"),
            best,
            n_boot,
            seed,
        ),
    ]


def icl_table(pi: dict, one: pd.DataFrame, many: pd.DataFrame, gen: dict, best: str, n_boot: int, seed: int) -> PaperTable:
    """No context and the ICL run's variant: the ICL run's typed examples against the main run's one."""
    arm = "reshaped:" + pi["reshape"]["variants"][0]["name"]
    k = gen["n_examples"]
    rows, diffs = [], []
    for a_ in ("none", arm):
        a = one[one["method"] == a_].set_index("question_id").sort_index()
        b = many[many["method"] == a_].set_index("question_id").reindex(a.index)
        if b[METRICS["ROUGE-2 F1"]].isna().any() or len(b) != len(many[many["method"] == a_]):
            raise UserError(
                "the ICL run did not answer the same questions as the main run (qa.* of experiments/bioasq/icl-params.yaml)"
            )
        for shots, t in (("1 example (any type)", a), (f"{k} examples of the question's type", b)):
            ours = {m: mean_ci(t[METRICS[m]].to_numpy(), n_boot, seed) for m in TESTED}
            rows.append(Row(f"{label(a_)}, {shots}", {m: None for m in TESTED}, ours))
        for m in TESTED:
            c = METRICS[m]
            diffs.append(
                Difference(
                    f"{label(a_)}: {k} typed examples − 1 example",
                    m,
                    None,
                    paired_delta(a[c].to_numpy(), b[c].to_numpy(), n_boot, seed),
                )
            )
    chosen = (
        f"The ICL variant ({label(arm)}, reshape.variants of experiments/bioasq/{ICL_PARAMS}) is the best Table 2 variant of this run; it was chosen there."
        if arm == best
        else f"The ICL variant ({label(arm)}, reshape.variants of experiments/bioasq/{ICL_PARAMS}) is not this run's best Table 2 variant ({label(best)}): name that one there and re-run."
    )
    return PaperTable(
        paper=PAPER,
        section="icl",
        title=f"In-context learning: {k} examples per question type, no context and the best Table 2 variant",
        command=COMMAND,
        sample=f"the same {one['question_id'].nunique()} questions as Tables 1, 2 and 5 (paired); examples from split 7B1, "
        f"{k} of the answered question's type (qa.examples_by_type), each with its own context of the arm",
        models=f"generator {gen['model']}; cross-encoder {reranker_label(pi['reshape']['reranker'])} (as Table 2)",
        wall_s=None,
        metrics=TESTED,
        rows=rows,
        differences=diffs,
        notes=[NO_PAPER, "The 1-example rows are Tables 1 and 2's answers. " + chosen],
    )
