"""Context reshaping for BioASQ (page ``bioasq-reshaping``): Tables 1, 2 and 5, the t-tests and ICL.

Inputs, per run of ``experiments/bioasq/dvc.yaml`` (``main``: ``params.yaml``; ``icl``:
``icl-params.yaml``; ``paper``: ``paper-params.yaml``; ``icl-paper``: ``icl-paper-params.yaml``, all
beside the pipeline): the per-question scores of the
``evaluate_qa`` stage (``<scores>/<run>/report/scores.csv``, tracked in git), the answers and
contexts the model read (``<run>/answers/answers.parquet``), and the QA stages' outputs
(``<run>/qa/``: the questions with their ideal answers, each arm's context chunks before the
word budget, and ``report.json``: arms, corpus, gold-record hit rates, reshaping counts).
Every arm answers the same questions, so every difference is paired:

- Table 1: no context, unranked topics (5 communities x 4 sentences, discovery order), the gold
  snippets' sentences;
- Table 1 and ICL in the paper's own settings (the ``paper`` and ``icl-paper`` runs): zero-shot
  prompts or typed examples, no context cap below the model's window, unranked topics over every
  community; Table 1's claims judged there, each arm against the project's default, no context
  with the ICL run's examples against none, and the paper's ICL claims and t-test;
- Table 2: 5 / 10 communities x 4 / 10 / 15 sentences per community, ranked by the cross-encoder
  the ``train_reranker`` stage fine-tunes (``reshape.reranker``), and the paired t-tests of the
  paper's pre-specified best setting (10 x 15) and of the best one found against unranked topics;
- Table 5: answer length in words per arm beside the gold (ideal) answers' length, and the
  context the model read before and after the word budget;
- ICL: no context and the ICL run's variant with ``qa.n_examples`` examples of each question's
  own type, paired with the main run's answers.

The paper (``../shared/papers/003_*``) keeps its tables' bodies out of its text (line 72 holds
only their column header), so every paper cell is "—" and cites where the paper puts the
number; the directions its text states (``*_CLAIMS``, cited) are judged from our paired
intervals, each row naming how our setting differs from the paper's (``Settings``).
Beside each table: paired t-tests, Holm-adjusted over the table's differences, and the
smallest difference the table can detect at its sample size.

Intervals: 95% bootstrap over questions (``evaluate.bootstrap`` resamples, ``evaluate.seed``).
No wall time: a pipeline's page must reproduce byte for byte (the stages' reports keep theirs).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import yaml
from scipy.stats import ttest_1samp

from biochunk.errors import UserError
from biochunk.evaluation.papers import (
    Difference,
    Estimate,
    Judged,
    NotRun,
    PaperTable,
    Row,
    Source,
    Sources,
    mean_ci,
    paired_delta,
    holm,
    paired_statistic,
    stats_notes,
)
from biochunk.io import CHUNKS, QA_ANSWERS, QA_CONTEXTS, QA_SAMPLE, atomic_path, read_json, read_table

PAPER = "bioasq-reshaping"  # the page, docs/results/bioasq-reshaping.md
COMMAND = "dvc repro experiments/bioasq/dvc.yaml"
RUNS = ("main", "icl", "paper", "icl-paper", "grid-paper")  # the pipeline's QA runs, in the report stage's --runs order
ICL_PARAMS = "icl-params.yaml"  # the ICL run's params, beside the main run's (--paper-params)
PAPER_PARAMS = "paper-params.yaml"  # the run in the paper's own settings (Table 1, ICL's "without"), beside them
ICL_PAPER_PARAMS = "icl-paper-params.yaml"  # ICL's "with" in the paper's own settings
GRID_PAPER_PARAMS = "grid-paper-params.yaml"  # the rest of Table 2's grid in the paper's own settings
# The sections the grid run must share with the paper run (all but its arms).
GRID_SHARED = ("qa", "reshape", "generate", "embed", "evaluate", "evaluate_qa")
UNRANKED = "reshaped:unranked-5x4"
PAPER_UNRANKED = "reshaped:unranked-all-x4"  # the paper run's unranked topics: every community
TABLE1 = ("none", UNRANKED, "gold")
# The paper's Table 2 grid: top_m communities x keep sentences per community, cross-encoder ranked.
TABLE2 = tuple(f"reshaped:ce-{m}x{k}" for m in (5, 10) for k in (4, 10, 15))
PAPER_BEST = "reshaped:ce-10x15"  # the paper's best setting, named before our run (line 69)
TABLE5_ARM = "reshaped:ce-10x10"  # the setting of the paper's Table 5 (line 71)
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
# The paper's tables' columns (line 72): R2 and BERTScore recall, precision and F1, no ROUGE-SU4.
PAPER_METRICS = ("ROUGE-2 R", "ROUGE-2 P", "ROUGE-2 F1", "BERTScore R", "BERTScore P", "BERTScore F1")
JUDGED = (*PAPER_METRICS, "ROUGE-SU4 F1")  # the metrics of a pair's differences
F1S = ("ROUGE-2 F1", "BERTScore F1")
RELATIVE = " (relative: B/A − 1)"  # metric suffix of a relative change, the form of the paper's ICL figures

# -- the paper's words (../shared/papers/003_*: one paragraph per line; tests/test_citations.py
# finds every quote at its line) --------------------------------------------------------------
TEXT = "003_d1181cdc71defd25.txt"


def _said(where: str, quote: str, figure: str | None = None) -> Source:
    return Source(TEXT, where, quote, figure)


ABSTRACT_CONTEXT = _said(
    "abstract, line 1",
    "We show that incorporating a context grounded on proper literature reshaping afects positively the quality "
    "of generated answers, improving both semantic and lexical metrics.",
)
ABSTRACT_PRECISION = _said("abstract, line 1", "We also show that it has more efects on Precision than on Recall.")
QUERIES_11 = _said("datasets (Section 4.1), line 36", "two distinct collections composed of 327", "327")
QUERIES_12 = _said("datasets (Section 4.1), line 36", "and 340 biomedical queries", "340")
OFFICIAL = _said("evaluation measures, lines 38–39", "ROUGE2 and ROUGE-SU4 (Recall, F1) scores")
MEDLINE = _said(
    "retriever, lines 40–42",
    "We built a sparse retriever using Pyserini, an open-source Python library derived from Anserini which "
    "integrates multiple IR techniques. First, we indexed all MEDLINE citations except those for which the "
    "abstract was unavailable (≈ 25M citations). For each query, we created a list of the thousand most",
)
TEXTRANK = _said(
    "sentence selection, line 50",
    "We implemented the TextRank algorithm and applied it to each cluster to identify their salient sentences "
    "(i.e., 4, 10, or 15 sentences per topic).",
)
GENERATOR = _said(
    "answer generation, line 55",
    "We used the third release of this model in its 8B parameters version3, called llama3.1-8B in the remainder of this paper.",
)
QUANTIZED = _said(
    "answer generation, line 55",
    "we applied model quantization and used 4-bit precision for floating-point representation instead of 32-bit",
)
WINDOW = _said(
    "answer generation, line 55",
    "its powerful tokenizer enables to process a large number of input tokens, which is very important for ICL",
)
NO_CONTEXT_RUN = _said(
    "prompts (Figures 2–4), line 56", "We also ran an experiment without context to evaluate the benefit of adding context."
)
PROMPT_CONTEXT = _said(
    "prompt with context (Figure 2), line 57",
    "I will give a question and several context texts about the question. Based on the context, give a short "
    "answer to the question. QUESTION: *A biomedical query* CONTEXTS: *Sentences extracted from biomedical literature* ANSWER:",
)
PROMPT_NONE = _said(
    "prompt without context (Figure 3), line 59", "I will ask a question and your role is to give a short answer to the question."
)
PROMPT_ICL = _said(
    "prompt with examples (Figure 4), lines 60–61",
    "Moreover I will give you 3 questions and their corresponding answers as examples. User Prompt EXAMPLES: "
    "*A set of 3 questions/answers dependent on the question type*",
)
UNRANKED_DEF = _said(
    "Table 1 results, line 64",
    "Next, we used llama3.1-8B on the same dataset but incorporating context by selecting 4 sentences per cluster "
    "and without applying any topic ranking.",
)
EXACT_DEF = _said(
    "Table 1 results, line 64",
    "Finally, we extracted what we call the “Exact Context”, which corresponds to the relevant snippets provided in BioASQ dataset.",
)
EXACT_MAX = _said(
    "Table 1 results, line 64", "this variant enables us to estimate the maximum scores achievable with this model configuration"
)
TABLE_1 = _said(
    "Table 1 results, line 65", "The scores obtained by these three variants on the BioASQ11 dataset are reported in Table 1."
)
NONE_R_OVER_P = _said(
    "Table 1 results, line 65",
    "We observe that the basic system (without context) performs relatively well in terms of Recall but is very "
    "weak when it comes to Precision, whether semantic (BERT-P) or lexical (R2-P).",
)
CONTEXT_HELPS = _said(
    "Table 1 results, line 65",
    "The incorporation of context without ordering is undeniably beneficial, as it improves the basic system performance.",
)
SEMANTIC_MORE = _said(
    "Table 1 results, line 65", "we note that the highest improvements are primarily observed in the semantic metrics"
)
TABLE_2 = _said("Table 2 results, line 67", "Table 2 presents the scores obtained for these experiments.")
RECALL_DROPS = _said(
    "Table 2 results, line 67",
    "with 4 sentences per topic as in the previous experiments, selecting any number of clusters tends to decrease "
    "both lexical and semantic Recall scores.",
)
TEN_CLUSTERS = _said(
    "Table 2 results, line 67",
    "This loss is outweighed by the gain in Precision when selecting 10 clusters, as evidenced by the improvements in F1 scores.",
)
FEW_MANY = _said("Table 2 results, line 67", "It appears that using too few or too many topics decrease the performance.")
SENTENCES_UP = _said(
    "Table 2 results, line 68", "We observe that each setup achieves higher scores as the number of sentences increases."
)
NOT_REMOVED = _said(
    "Table 2 results, line 68",
    "In this case, we push less relevant topics further away from the query (regarding token distance in the "
    "sequence) without removing them.",
)
BEST = _said(
    "Table 2 results, line 69",
    "best scores for this set of experiments are achieved when using the parameters leading to the highest scores "
    "for each study (e.g., 15 sentences per clusters and 10 clusters)",
)
TTEST = _said(
    "Table 2 results, line 69",
    "The obtained p-values were lower than 0.05 on all metrics, meaning that all the improvements are significant.",
    "0.05",
)
TABLES_3_4 = _said(
    "ICL results, line 70", "Tables 3 and 4 show the scores obtained on the BioASQ11 and BioASQ12 datasets, respectively."
)
ICL_EXAMPLES = _said(
    "ICL results, line 70",
    "For each question type, we randomly extracted 3 examples of (question, answer) pairs from the BioASQ10 dataset.",
)
ICL_RECALL = _said("ICL results, line 71", "adding ICL consistently decreases performance on the two Recall measures")
ICL_R2_R = _said("ICL results, line 71", "on average -5.17% on R2-R", "-5.17%")
ICL_BERT_R = _said("ICL results, line 71", "-0.92% on BERT-R", "-0.92%")
ICL_GAINS = _said(
    "ICL results, line 71", "This slight loss is more than compensated by higher gains in both Precision and F1 scores"
)
ICL_R2_P = _said("ICL results, line 71", "on average +22.34% on R2-P", "+22.34%")
ICL_BERT_P = _said("ICL results, line 71", "+4.32% on BERT-P", "+4.32%")
TABLE_5 = _said(
    "ICL results, line 71",
    "Table 5 shows the mean number of tokens in ground truth and in answers generated with 10 sentences and 10 clusters.",
)
LONGER = _said(
    "ICL results, line 71", "Generated answers are much bigger than the gold standard and ICL tends to reduce answer length."
)
ICL_TTEST = _said("ICL results, line 71", "We ran a t-test between the best variant in Table 3 and our “Unranked Topics” baseline.")
ICL_TTEST_BERT_R = _said(
    "ICL results, line 71",
    "We found that the p-value associated with BERT-R was higher than 0.05, meaning the loss is insignificant.",
    "0.05",
)
ICL_TTEST_REST = _said(
    "ICL results, line 71",
    "All other p-values were lower than 0.05. The gains on Precision metrics are significant, but so is the loss on R2-R.",
    "0.05",
)
LEXICAL_12 = _said("ICL results, line 71", "The scores on lexical metrics are lower on BioASQ12 set.")
PHASE_A = _said(
    "BioASQ 12 comparison, line 72",
    "We compared our results (10 sentences and 10 clusters in Table 4) with other systems submitted in Phase A+ of the BioASQ12 challenge",
)
PHASE_A_F1 = _said(
    "BioASQ 12 comparison, line 72",
    "have significantly lower Precision (R2-F1 ranging from 12.44 to 19.23) than our system (an average of 19.67 over the 4 batches)",
    "19.67",
)
PHASE_A_R = _said("BioASQ 12 comparison, line 72", "achieved by our system (average of 28.60)", "28.60")
HEADER = _said("tables' column header, line 72", "#sentences/cluster #clusters R2-R R2-P R2-F1 BERT-R BERT-P BERT-F1")
CAPTIONS = _said("Table 5 fragments, lines 73–75", "Generation tool BioASQ11 BioASQ12 No ICL With ICL Gold Standard")
CONCL_PRECISION = _said(
    "conclusion, line 75", "We showed that answers generated with contextualized prompts has more influence on Precision than on Recall."
)
CONCL_SEMANTIC = _said("conclusion, line 75", "Moreover, improvements on semantic metrics are more important than on lexical ones")
CONCL_CLUSTERS = _said(
    "conclusion, line 76",
    "It is essential to select enough clusters to capture relevant information, but retrieving too many can "
    "introduce noise and degrade performance.",
)
CONCL_SENTENCES = _said("conclusion, line 76", "In addition, it seems beneficial to increase the number of sentences per cluster.")
CONCL_ICL = _said(
    "conclusion, line 76",
    "Finally, we show that integrating ICL to a RAG pipeline, despite a slight loss on Recall, enables major "
    "improvements in terms of Precision and F1 scores.",
)

# Where each table's paper numbers stand: the paper names the table, whose body is not in its text.
TABLE_CELLS: dict[str, Sources] = {
    "table1": (TABLE_1, HEADER),
    "table2": (TABLE_2, HEADER),
    "icl": (TABLES_3_4, HEADER),
    "table5": (TABLE_5, CAPTIONS),
}

# The directions the paper states, B − A, as (A, B, metrics, sign, sources). A pair's other
# metrics are shown too, with no stated direction.
TABLE1_CLAIMS = [
    # no context is "very weak" on precision, and context "improves the basic system performance"
    ("none", UNRANKED, ("ROUGE-2 P", "ROUGE-2 F1", "BERTScore P", "BERTScore F1"), +1, (CONTEXT_HELPS, NONE_R_OVER_P)),
    ("none", "gold", PAPER_METRICS, +1, (EXACT_DEF, EXACT_MAX)),
    (UNRANKED, "gold", PAPER_METRICS, +1, (EXACT_DEF, EXACT_MAX)),
]
TABLE2_CLAIMS = [
    (UNRANKED, "reshaped:ce-5x4", ("ROUGE-2 R", "BERTScore R"), -1, (RECALL_DROPS,)),
    (UNRANKED, "reshaped:ce-10x4", ("ROUGE-2 R", "BERTScore R"), -1, (RECALL_DROPS,)),
    (UNRANKED, "reshaped:ce-10x4", ("ROUGE-2 P", "BERTScore P", "ROUGE-2 F1", "BERTScore F1"), +1, (TEN_CLUSTERS,)),
    (UNRANKED, PAPER_BEST, PAPER_METRICS, +1, (BEST, TTEST)),
    ("none", PAPER_BEST, F1S, +1, (ABSTRACT_CONTEXT,)),
    # "too few" clusters lose information: 10 above 5 at each number of sentences
    *[(f"reshaped:ce-5x{k}", f"reshaped:ce-10x{k}", F1S, +1, (FEW_MANY, CONCL_CLUSTERS)) for k in (4, 10, 15)],
    # more sentences per community, at 5 and at 10 communities
    *[
        (f"reshaped:ce-{m}x{k0}", f"reshaped:ce-{m}x{k1}", F1S, +1, (SENTENCES_UP, CONCL_SENTENCES))
        for m in (5, 10)
        for k0, k1 in ((4, 10), (10, 15))
    ],
]
# ICL (B: the ICL run, A: the main run, same arm): metric -> (sign, the paper's figure as a
# relative change, sources). The paper's ICL prompt always carries a context (Figure 4), so the
# claims are judged on the ICL run's reshaped arm; its no-context arm is shown unjudged.
ICL_CLAIMS: dict[str, tuple[int, float | None, Sources]] = {
    "ROUGE-2 R": (-1, -0.0517, (ICL_RECALL, ICL_R2_R)),
    "BERTScore R": (-1, -0.0092, (ICL_RECALL, ICL_BERT_R)),
    "ROUGE-2 P": (+1, +0.2234, (ICL_GAINS, ICL_R2_P)),
    "BERTScore P": (+1, +0.0432, (ICL_GAINS, ICL_BERT_P)),
    "ROUGE-2 F1": (+1, None, (ICL_GAINS, CONCL_ICL)),
    "BERTScore F1": (+1, None, (ICL_GAINS, CONCL_ICL)),
}
# The ICL t-test (line 71): the best ICL variant − unranked topics without ICL, per metric.
ICL_TTEST_CLAIMS: dict[str, tuple[int, Sources]] = {
    "ROUGE-2 R": (-1, (ICL_TTEST, ICL_TTEST_REST)),
    "BERTScore R": (-1, (ICL_TTEST, ICL_TTEST_BERT_R)),
    "ROUGE-2 P": (+1, (ICL_TTEST, ICL_TTEST_REST)),
    "BERTScore P": (+1, (ICL_TTEST, ICL_TTEST_REST)),
    "ROUGE-2 F1": (+1, (ICL_TTEST, ICL_TTEST_REST, ICL_GAINS)),
    "BERTScore F1": (+1, (ICL_TTEST, ICL_TTEST_REST, ICL_GAINS)),
}


def check_params(
    main: dict[str, Any], icl: dict[str, Any], paper: dict[str, Any], icl_paper: dict[str, Any], grid: dict[str, Any],
    where: str = "experiments/bioasq",
) -> None:
    """The five runs' params give the tables' arms and answer the same questions; one line otherwise."""
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
    variants = paper["reshape"]["variants"]
    # Unranked topics, ICL's "without" and the paper's pre-specified best (once, if they are one).
    ranked = {"reshaped:" + v["name"]: v for v in [*icl["reshape"]["variants"], *main["reshape"]["variants"]]}
    want = [PAPER_UNRANKED, *dict.fromkeys([icl_names[0], PAPER_BEST])]
    if (
        ["reshaped:" + v["name"] for v in variants] != want
        or variants[0].get("rank") != "none"
        or any(v != ranked[a] for a, v in zip(want[1:], variants[1:]))
    ):
        raise UserError(
            f"{where}/{PAPER_PARAMS}: reshape.variants must be the unranked variant (rank: none) named "
            f"{PAPER_UNRANKED.split(':')[1]}, then {ICL_PARAMS}'s variant and params.yaml's "
            f"{PAPER_BEST.split(':')[1]} as they are there, got {[v['name'] for v in variants]}"
        )
    if sorted(paper["qa"]["contexts"]) != sorted(["none", "gold", "reshaped"]):
        raise UserError(f"{where}/{PAPER_PARAMS}: qa.contexts must be [none, gold, reshaped], got {paper['qa']['contexts']}")
    if paper["qa"]["n_examples"] != 0:
        raise UserError(f"{where}/{PAPER_PARAMS}: qa.n_examples must be 0 (the paper's Table 1 prompts are zero-shot)")
    for key in ("max_questions", "question_splits", "seed", "example_split"):
        if main["qa"][key] != paper["qa"][key]:
            raise UserError(
                f"{where}/{PAPER_PARAMS}: qa.{key} must equal params.yaml's ({main['qa'][key]!r}): the run pairs with the main run's questions"
            )
    if icl_paper["reshape"]["variants"] != icl["reshape"]["variants"] or icl_paper["qa"]["contexts"] != ["reshaped"]:
        raise UserError(
            f"{where}/{ICL_PAPER_PARAMS}: reshape.variants must be {ICL_PARAMS}'s and qa.contexts [reshaped] "
            "(its no-context arm would repeat the ICL run's)"
        )
    for key in ("n_examples", "examples_by_type"):
        if icl_paper["qa"][key] != icl["qa"][key]:
            raise UserError(f"{where}/{ICL_PAPER_PARAMS}: qa.{key} must equal {ICL_PARAMS}'s ({icl['qa'][key]!r})")
    for key in ("max_questions", "question_splits", "seed", "example_split", "corpus", "context_words"):
        if paper["qa"][key] != icl_paper["qa"][key]:
            raise UserError(
                f"{where}/{ICL_PAPER_PARAMS}: qa.{key} must equal {PAPER_PARAMS}'s ({paper['qa'][key]!r}): "
                "the run pairs with the paper-settings run's answers"
            )
    # The grid run is the paper run with the other Table 2 arms: every shared key equal, so the two
    # join question by question into one table.
    held = {"reshaped:" + v["name"] for v in variants}
    rest = [a for a in TABLE2 if a not in held]
    if ["reshaped:" + v["name"] for v in grid["reshape"]["variants"]] != rest or any(
        v != ranked[a] for a, v in zip(rest, grid["reshape"]["variants"])
    ):
        raise UserError(
            f"{where}/{GRID_PAPER_PARAMS}: reshape.variants must be params.yaml's Table 2 variants that {PAPER_PARAMS} "
            f"does not hold, as they are there ({', '.join(a.split(':')[1] for a in rest)}), got "
            f"{[v['name'] for v in grid['reshape']['variants']]}"
        )
    if grid["qa"]["contexts"] != ["reshaped"]:
        raise UserError(f"{where}/{GRID_PAPER_PARAMS}: qa.contexts must be [reshaped] (none and gold are {PAPER_PARAMS}'s)")
    for section in GRID_SHARED:
        for key in sorted({*paper.get(section, {}), *grid.get(section, {})} - {"variants", "contexts"}):
            if paper.get(section, {}).get(key) != grid.get(section, {}).get(key):
                raise UserError(
                    f"{where}/{GRID_PAPER_PARAMS}: {section}.{key} must equal {PAPER_PARAMS}'s "
                    f"({paper.get(section, {}).get(key)!r}): the grid run joins the paper run's answers"
                )
    if main["qa"]["question_splits"] and main["qa"]["question_splits"] != main["retrieve"]["qa_test_splits"]:
        raise UserError(
            f"{where}/params.yaml: qa.question_splits must be retrieve.qa_test_splits (the batches the reranker never saw)"
        )


def label(arm: str) -> str:
    names = {
        "none": "no context", "gold": "exact gold context", UNRANKED: "unranked topics, 5 x 4",
        PAPER_UNRANKED: "unranked topics, every community x 4",
    }  # fmt: skip
    if arm in names:
        return names[arm]
    m, k = arm.split("-")[-1].split("x")
    return f"cross-encoder ranked, {m} communities x {k} sentences"


def shots(n: int, typed: bool) -> str:
    """The in-context examples of a run, in words."""
    if n == 0:
        return "no example"
    return f"{n} example{'s' if n > 1 else ''} " + ("of the question's type" if typed else "(any type)")


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


# -- statistics beside the intervals ----------------------------------------------------------


def relative_change(rows: np.ndarray) -> float:
    """mean(B) / mean(A) − 1 over paired rows (column 0: A, column 1: B): the form of the paper's ICL figures."""
    a = rows[:, 0].mean()
    return float(rows[:, 1].mean() / a - 1) if a else float("nan")


def icl_change(x: np.ndarray, y: np.ndarray, metric: str, n_boot: int, seed: int) -> tuple[Estimate, str]:
    """B − A of an ICL comparison: recall and precision as relative changes, the form of the
    paper's ICL figures (line 71), F1 absolute; returns (estimate, the metric as shown)."""
    if metric.endswith((" R", " P")):
        return paired_statistic(np.column_stack([x, y]), relative_change, n_boot, seed), metric + RELATIVE
    return paired_delta(x, y, n_boot, seed), metric


def icl_ttest(
    a: Any, b: Any, lbl: str, settings: "Settings", keys: tuple[str, ...], n_boot: int, seed: int
) -> list[Judged]:
    """The paper's ICL t-test pair (line 71): the ICL variant with examples (``b``) − unranked
    topics without (``a``), per metric (``a``, ``b``: score columns by name, the same questions)."""
    out = []
    for m in JUDGED:
        x, y = a[METRICS[m]].to_numpy(), b[METRICS[m]].to_numpy()
        sign, sources = ICL_TTEST_CLAIMS.get(m, (None, ()))
        setting = settings(*keys, *(("bertscore",) if m.startswith("BERTScore") else ())) if sign else ""
        if m == "BERTScore R" and sign:
            setting = "the paper: a loss with p > 0.05, so “not separable” agrees with it; " + setting
        d = Difference(lbl, m, None, paired_delta(x, y, n_boot, seed), claim=sign, sources=sources, setting=setting)
        out.append(Judged(d, y - x))
    return out


def _base(metric: str) -> str:
    return metric.removesuffix(RELATIVE)


def _bullets(notes: list[str]) -> list[str]:
    """Notes as a Markdown list (consecutive lines would run into one paragraph)."""
    return [f"- {x}" for x in notes]


def ttest_note(what: str, judged: list[Judged], a_label: str, b_label: str) -> str:
    """The paired t-tests of one pair, per metric, with the Holm adjustment over these metrics."""
    pair = [j for j in judged if j.diff.label == f"{b_label} − {a_label}" and not j.diff.metric.endswith(RELATIVE)]
    adj = holm([j.p for j in pair])
    parts = []
    for j, a in zip(pair, adj):
        c = j.contrast
        t = float(ttest_1samp(c, 0.0).statistic) if np.std(c) > 0 else float("nan")
        parts.append(f"{j.diff.metric}: t = {t:+.2f}, p = {j.p:.3f} (Holm over these {len(pair)}: {a:.3f})")
    return f"Paired t-test (scipy.stats.ttest_rel, {len(pair[0].contrast) if pair else 0} questions), {what}: " + "; ".join(parts) + "."


# -- how our setting differs from the paper's ---------------------------------------------------


class Settings:
    """Each difference of our setting from the paper's, in a few words with the param that sets
    it (a verdict's row names those that bear on it) and in full (a note under Table 1)."""

    def __init__(
        self, p: dict, gen: dict, ctx: dict, n: int,
        icl_gen: dict | None = None, icl_ctx: dict | None = None, same_icl: int | None = None,
    ):
        q, rs = p["qa"], p["reshape"]
        bert = p["evaluate_qa"]
        # The main run's unranked topics keep the first top_m communities; the paper run's keep all.
        unranked = next((v for v in rs["variants"] if "reshaped:" + v["name"] == UNRANKED), None)
        self.short = {
            "examples": f"qa.n_examples {gen['n_examples']} (paper 0)",
            "cap": f"qa.context_words {gen['context_words']} (paper: no cap)",
            **({"unranked": f"unranked top_m {unranked['top_m']} (paper: all clusters)"} if unranked else {}),
            "prompt": "the project's prompt wording",
            "answers": f"qa.max_new_tokens {gen['max_new_tokens']}",
            "model": f"generate.model {gen['model']} (paper llama3.1-8B)",
            "sample": f"{n} of 327 questions (qa.max_questions {q['max_questions']})",
            "retrieval": f"dense over {ctx['corpus']['documents']} records (paper BM25, MEDLINE)",
            "bertscore": f"BERTScore {bert['bertscore_model']} L{bert['bertscore_layers']}",
            "cut": f"the {gen['context_words']}-word cap cuts what the paper pushes back (line 68)",
            "words": "words, not tokens",
            "posthoc": f"chosen on these {n} questions",
        }
        self.long = {
            "examples": (
                f"every Table 1/2 prompt carries {shots(gen['n_examples'], q['examples_by_type'])} "
                f"(qa.n_examples: {gen['n_examples']}, qa.examples_by_type: {str(q['examples_by_type']).lower()}, "
                f"from split {ctx['example_split']}, qa.example_split: {q['example_split']}); the paper's Tables 1 "
                "and 2 are zero-shot (Figures 2 and 3, lines 57–59)"
            ),
            "cap": (
                f"every context is cut at {gen['context_words']} words (qa.context_words); the paper sets no cap beyond "
                "Llama 3.1's window (line 55)"
            ),
            **(
                {
                    "unranked": (
                        f"unranked topics are the first {unranked['top_m']} communities in discovery order "
                        f"(reshape.variants {unranked['name']}: rank {unranked['rank']}, top_m {unranked['top_m']}, "
                        f"keep {unranked['keep']}); the paper keeps every cluster, unranked (line 64)"
                    )
                }
                if unranked
                else {}
            ),
            "prompt": (
                "the system and user messages are the project's (biochunk/generation/qa.py: “a short answer of one "
                "or two sentences”, yes or no first), not the paper's Figures 2 and 3 wording (lines 57–59)"
            ),
            "answers": f"answers stop at {gen['max_new_tokens']} tokens (qa.max_new_tokens); the paper states no limit",
            "model": (
                f"the generator is {gen['model']} (generate.model, quantize {p['generate']['quantize']}); the paper's "
                "is llama3.1-8B in 4-bit (line 55)"
            ),
            "sample": (
                f"{n} questions (qa.max_questions: {q['max_questions']}, seed {q['seed']}) of the 327 of BioASQ 11 "
                f"(qa.question_splits {', '.join(q['question_splits'])}) that the paper answers (line 36)"
            ),
            "retrieval": (
                f"contexts come from dense search (qa.retriever: {q['retriever']}, {p['embed']['model']}) of the top "
                f"{rs['passages']} (reshape.passages) of the {ctx['corpus']['documents']} PubMed records of the sampled "
                f"questions (qa.corpus: {q['corpus']}), communities at cosine {rs['threshold']} (reshape.threshold); the "
                "paper retrieves 1,000 of ≈ 25M MEDLINE citations with BM25 (lines 40–42) and states no threshold"
            ),
            "bertscore": (
                f"BERTScore with {bert['bertscore_model']} (evaluate_qa.bertscore_model), layer {bert['bertscore_layers']}, "
                "not rescaled; the paper does not name its BERTScore model"
            ),
            "cut": (
                f"the paper's reason for more sentences is that the less relevant topics are pushed back, not removed "
                f"(line 68); the {gen['context_words']}-word cap removes them"
            ),
            "words": "answer lengths are counted in words; the paper's Table 5 counts tokens (line 71)",
            "posthoc": f"the best setting found was chosen on the same {n} questions it is tested on",
        }
        if icl_gen is not None and icl_ctx is not None:
            k = icl_gen["n_examples"]
            self.short |= {
                "icl": f"{k} typed vs {gen['n_examples']} example (paper 3 vs 0)",
                "icl_corpus": f"ICL contexts differ for {n - (same_icl or 0)}/{n} questions",
                "icl_arm": "ICL arm 10 x 4 (paper 10 x 10)",
            }
            self.long |= {
                "icl": (
                    f"the ICL run shows {shots(k, True)} ({ICL_PARAMS}: qa.n_examples {k}, qa.examples_by_type true) "
                    f"against the main run's {shots(gen['n_examples'], False)}; the paper compares 3 per question type "
                    "with none (Figure 4, lines 60–61; line 70), drawn from BioASQ 10 (ours: split "
                    f"{icl_ctx['example_split']})"
                ),
                "icl_corpus": (
                    f"qa.corpus: sampled adds the example candidates' records to the corpus, so the ICL run searches "
                    f"{icl_ctx['corpus']['documents']} records (the run it pairs with: {ctx['corpus']['documents']}) and "
                    f"its reshaped context differs from that run's for {n - (same_icl or 0)} of {n} questions: its ICL "
                    "differences mix examples and context"
                ),
                "icl_arm": "the ICL run's reshaped arm is 10 communities x 4 sentences; the paper's Table 5 reads 10 x 10",
            }

    def __call__(self, *keys: str) -> str:
        return "; ".join(self.short[k] for k in keys)

    def legend(self, *keys: str) -> str:
        """Every difference in full (or those of ``keys``), under the table that names them."""
        return "How our setting differs from the paper's (the last column's short names): " + "; ".join(
            f"{self.short[k]}: {self.long[k]}" for k in (keys or self.short)
        ) + "."


def _claims(spec: list) -> dict[tuple[str, str, str], tuple[int, Sources]]:
    """(A, B, metric) -> (sign, sources), merged over ``spec`` (a pair stated twice keeps both sources)."""
    out: dict[tuple[str, str, str], tuple[int, Sources]] = {}
    for a, b, metrics, sign, sources in spec:
        for m in metrics:
            old = out.get((a, b, m))
            if old and old[0] != sign:
                raise ValueError(f"the paper's claims disagree on {b} − {a} ({m})")
            out[(a, b, m)] = (sign, tuple(dict.fromkeys((*(old[1] if old else ()), *sources))))
    return out


def _keys(a: str, b: str, metric: str, base: tuple[str, ...]) -> tuple[str, ...]:
    """The setting differences that bear on B − A in ``metric``."""
    keys = list(base)
    if UNRANKED in (a, b):
        keys.append("unranked")
    if any(x.startswith("reshaped:") for x in (a, b)):
        keys.append("retrieval")
    if metric.startswith("BERTScore"):
        keys.append("bertscore")
    return tuple(keys)


COMMON = ("examples", "prompt", "cap", "answers", "model", "sample")
# The paper run differs from the paper in these only (its examples, cap and unranked topics are the paper's).
PAPER_BASE = ("prompt", "answers", "model", "sample")


def pair_order(keys: list[tuple[str, str, str]]) -> list[tuple[str, str, str]]:
    """(A, B, metric) keys without repeats, each pair's metrics together in JUDGED order, the pairs
    in order of first appearance."""
    pairs = list(dict.fromkeys((a, b) for a, b, _ in keys))
    keys = list(dict.fromkeys(keys))
    return [k for ab in pairs for k in sorted((k for k in keys if k[:2] == ab), key=lambda k: JUDGED.index(k[2]))]


def judge(
    w: dict[str, pd.DataFrame], a: str, b: str, metric: str, claims: dict, settings: Settings,
    base: tuple[str, ...], n_boot: int, seed: int, extra: tuple[str, ...] = (),
) -> Judged:
    """B − A in ``metric`` over one run's questions, judged where the paper states a direction."""
    x, y = w[METRICS[metric]][a].to_numpy(), w[METRICS[metric]][b].to_numpy()
    sign, sources = claims.get((a, b, metric), (None, ()))
    setting = settings(*_keys(a, b, metric, base), *extra) if sign else ""
    d = Difference(f"{label(b)} − {label(a)}", metric, None, paired_delta(x, y, n_boot, seed), claim=sign, sources=sources, setting=setting)
    return Judged(d, y - x)


def composite(
    lbl: str, metric: str, contrast: np.ndarray, sources: Sources, setting: str, n_boot: int, seed: int
) -> Judged:
    """A qualitative claim judged as the mean of a per-question contrast (stated direction: +)."""
    return Judged(Difference(lbl, metric, None, mean_ci(contrast, n_boot, seed), claim=1, sources=sources, setting=setting), contrast)


def table1_judged(
    w: dict[str, pd.DataFrame], unranked: str, settings: Settings, base: tuple[str, ...], n_boot: int, seed: int
) -> list[Judged]:
    """Table 1's differences in one run (``unranked``: its unranked-topics arm): the pairs of the
    paper's Table 1 claims, then its qualitative claims as per-question contrasts."""
    swap = lambda arm: unranked if arm == UNRANKED else arm  # noqa: E731
    claims = _claims([(swap(a), swap(b), ms, sign, src) for a, b, ms, sign, src in TABLE1_CLAIMS])
    pairs = (("none", unranked), ("none", "gold"), (unranked, "gold"))
    out = [judge(w, a, b, m, claims, settings, base, n_boot, seed) for a, b in pairs for m in JUDGED]

    def col(metric: str, arm: str) -> np.ndarray:
        return w[METRICS[metric]][arm].to_numpy()

    gain = {m: col(m, unranked) - col(m, "none") for m in METRICS}
    out += [
        composite(
            "no context: recall − precision", f"{m} R − P", col(f"{m} R", "none") - col(f"{m} P", "none"),
            (NONE_R_OVER_P,), settings(*_keys("none", "none", m, tuple(k for k in base if k != "cap"))), n_boot, seed,
        )
        for m in ("ROUGE-2", "BERTScore")
    ]
    out += [
        composite(
            f"{label(unranked)} − {label('none')}: precision gain − recall gain", f"{m} ΔP − ΔR",
            gain[f"{m} P"] - gain[f"{m} R"], (ABSTRACT_PRECISION, CONCL_PRECISION),
            settings(*_keys("none", unranked, m, base)), n_boot, seed,
        )
        for m in ("ROUGE-2", "BERTScore")
    ]
    out.append(
        composite(
            f"{label(unranked)} − {label('none')}: semantic gain − lexical gain", "ΔBERTScore F1 − ΔROUGE-2 F1",
            gain["BERTScore F1"] - gain["ROUGE-2 F1"], (SEMANTIC_MORE, CONCL_SEMANTIC),
            settings(*_keys("none", unranked, "BERTScore", base)), n_boot, seed,
        )
    )
    return out


def grid_plot(runs: list[tuple[str, dict[str, pd.DataFrame], str]], n_boot: int, seed: int, path: Path) -> None:
    """Table 2's grid in each setting of ``runs`` ((legend, scores, its unranked-topics arm)): the
    F1 means with their 95% intervals per ranked setting, the unranked topics dashed."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    x = np.arange(len(TABLE2))
    fig, axes = plt.subplots(1, len(F1S), figsize=(8.4, 4.2), dpi=90)
    for ax, metric in zip(axes, F1S):
        col = METRICS[metric]
        for i, (name, w, unranked) in enumerate(runs):
            est = [mean_ci(w[col][a].to_numpy(), n_boot, seed) for a in TABLE2]
            v, lo, hi = (np.array([getattr(e, f) for e in est]) for f in ("value", "lo", "hi"))
            ax.errorbar(x + (i - 0.5) * 0.22, v, yerr=[v - lo, hi - v], fmt="o", ms=4, capsize=2, color=f"C{i}", label=name)
            ax.axhline(w[col][unranked].mean(), color=f"C{i}", linestyle="--", linewidth=0.8)
        ax.set_xticks(x, [a.removeprefix("reshaped:ce-").replace("x", " x ") for a in TABLE2], fontsize=8)
        ax.set_xlabel("communities x sentences, cross-encoder ranked", fontsize=8)
        ax.set_title(f"{metric}: mean, 95% interval ({len(w[col])} questions)", fontsize=9)
    handles, names = axes[0].get_legend_handles_labels()
    fig.legend(handles, names, fontsize=7, loc="lower center", ncol=1, frameon=False)
    fig.tight_layout(rect=(0, 0.13, 1, 1))  # room for the legend below the panels
    with atomic_path(path) as tmp:
        fig.savefig(tmp, format="png", metadata={"Software": None})  # no version stamp: the file must reproduce
    plt.close(fig)


def tables(paper_params: Path, scores_dir: Path, runs: list[Path], plot: Path) -> list[PaperTable]:
    """Tables 1, 2, 5 and ICL, and Tables 1, 2 and ICL in the paper's own settings, from the tracked
    scores under ``scores_dir/<run>/report`` and the runs' stage outputs (``runs``: the main run's
    folder, the ICL run's, the paper-settings run's, its ICL counterpart's, then the grid run's);
    writes Table 2's grid in both settings to ``plot``."""
    if len(runs) != len(RUNS):
        raise UserError(f"--runs: give one folder per run ({', '.join(RUNS)}), in that order")
    p = yaml.safe_load(paper_params.read_text())
    pi = yaml.safe_load((paper_params.parent / ICL_PARAMS).read_text())
    pp = yaml.safe_load((paper_params.parent / PAPER_PARAMS).read_text())
    ipp = yaml.safe_load((paper_params.parent / ICL_PAPER_PARAMS).read_text())
    gpp = yaml.safe_load((paper_params.parent / GRID_PAPER_PARAMS).read_text())
    check_params(p, pi, pp, ipp, gpp, paper_params.parent.as_posix())
    main_dir, icl_dir, paper_dir, icl_paper_dir, grid_dir = runs
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
    icl_arm = "reshaped:" + pi["reshape"]["variants"][0]["name"]
    icl_answers = read_table(icl_dir / "answers" / "answers.parquet", QA_ANSWERS)
    icl_ctx, icl_gen = read_json(icl_dir / "qa" / "report.json"), read_json(icl_dir / "answers" / "report.json")
    same_icl = int((_contexts(answers, icl_arm) == _contexts(icl_answers, icl_arm)).sum())
    settings = Settings(p, gen, ctx, n, icl_gen, icl_ctx, same_icl)

    def cells(section: str, metrics: list[str], in_paper: bool = True) -> tuple[dict, dict]:
        """The paper cells of a row: — (the body of the paper's table is not in its text), cited."""
        return {m: None for m in metrics}, ({m: TABLE_CELLS[section] for m in metrics} if in_paper else {})

    def row(arm: str, section: str, note: str = "") -> Row:
        ours = {m: mean_ci(w[c][arm].to_numpy(), n_boot, seed) for m, c in METRICS.items()}
        paper, sources = cells(section, list(METRICS))
        return Row(label(arm), paper, ours, note, sources)

    q, rs = p["qa"], p["reshape"]
    batches = (
        f"batches {', '.join(q['question_splits'])}, held out of reranker training"
        if q.get("question_splits")
        else f"batches after {ctx['example_split']}"
    )
    sample = (
        f"{n} BioASQ questions (seeded sample, seed {q['seed']}, {batches}; examples from {ctx['example_split']}), "
        f"corpus: the {ctx['corpus']['documents']} PubMed records of the sampled questions; "
        f"{shots(gen['n_examples'], q['examples_by_type'])} in every prompt; {gen['context_words']}-word context budget for every arm"
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
    cells_note = (
        f"Paper cells: the paper's tables are not in its text: line 72 keeps only their columns (“{HEADER.quote}”) "
        f"and lines 73–75 fragments of Table 5's rows (“{CAPTIONS.quote}”), so every paper cell is — and cites where "
        "the paper puts the number; no cell can be checked against its table, and no text–table disagreement can be "
        "seen in this text. The paper's directions are judged from its words (the differences with a stated direction)."
    )

    # -- Table 1 ----------------------------------------------------------------------------
    t1j = table1_judged(w, UNRANKED, settings, COMMON, n_boot, seed)
    t1 = PaperTable(
        section="table1",
        title="Table 1: no context, unranked topics, exact gold context (BioASQ)",
        rows=[row(a, "table1") for a in TABLE1],
        differences=[j.diff for j in t1j],
        not_run=not_run_main(settings, ctx, q, gen),
        notes=_bullets([
            cells_note,
            (
                f"ROUGE-SU4: BioASQ's official measure beside ROUGE-2 (“{OFFICIAL.quote}”, {OFFICIAL.where}); the "
                "paper's tables have no ROUGE-SU4 column (line 72), so its SU4 cells and differences have no paper "
                "counterpart. Recall and precision are evaluate_qa's per question: ROUGE against the ideal answer with "
                "the best F1, BERTScore the best of each over the ideal answers."
            ),
            (
                "The qualitative claims are judged as per-question contrasts: recall − precision within no context; "
                "(the gain in precision) − (the gain in recall) and (the BERTScore F1 gain) − (the ROUGE-2 F1 gain) of "
                "unranked topics over no context, each on the metric's own 0–1 scale."
            ),
            *stats_notes(t1j, n, group=_base),
            settings.legend(),
            reshape_note,
        ]),
        **common,
    )

    # -- Table 2 ----------------------------------------------------------------------------
    best = best_variant(scores)
    claims2 = _claims(TABLE2_CLAIMS)
    order: list[tuple[str, str, str]] = []
    for v in TABLE2:
        order += [(UNRANKED, v, m) for m in (JUDGED if v in (PAPER_BEST, best) else F1S)]
    order = pair_order(order + list(claims2))

    def extra2(a: str, b: str) -> tuple[str, ...]:
        out = ()
        grid = [x.split("-")[-1].split("x") for x in (a, b) if x.startswith("reshaped:ce-")]
        if len(grid) == 2 and grid[0][0] == grid[1][0]:
            out += ("cut",)  # more sentences at the same number of communities
        if b == best and best != PAPER_BEST and a == UNRANKED:
            out += ("posthoc",)
        return out

    t2j = [judge(w, a, b, m, claims2, settings, COMMON, n_boot, seed, extra2(a, b)) for a, b, m in order]
    # Within the word budget, more communities or sentences can leave the text read unchanged.
    first = TABLE2[0]
    same = {a: int((_contexts(answers, a) == _contexts(answers, first)).sum()) for a in TABLE2[1:]}
    t2 = PaperTable(
        section="table2",
        title="Table 2: communities x sentences per community, cross-encoder ranked (BioASQ)",
        rows=[row(UNRANKED, "table1", "reference, Table 1's")] + [row(a, "table2") for a in TABLE2],
        differences=[j.diff for j in t2j],
        not_run=[
            NotRun(
                "more than 10 communities (the paper's “too many topics”)",
                "the paper's text names only 5 and 10 clusters (line 68) and its table's body is not in the text; "
                "our grid stops at 10.",
                "add e.g. `{name: ce-20x4, rank: crossencoder, top_m: 20, keep: 4}` to reshape.variants of "
                "experiments/bioasq/params.yaml, let `bioasq.check_params` accept variants beyond the grid "
                "(it asks for exactly these eight), then `dvc repro experiments/bioasq/dvc.yaml`.",
                (FEW_MANY, CONCL_CLUSTERS),
            )
        ],
        notes=_bullets([
            cells_note.split(" The paper's directions")[0],
            (
                f"The paper's best setting is named in its text before any of our runs: 10 clusters x 15 sentences "
                f"(“{BEST.quote}”, {BEST.where}). Its Table 5 and its BioASQ 12 comparison use 10 x 10 instead "
                f"(“{TABLE_5.quote}”, {TABLE_5.where}; “{PHASE_A.quote}”, {PHASE_A.where}): the text does not say "
                "why. Both are judged here: 10 x 15 as the pre-specified best, and our best found."
            ),
            ttest_note("the paper's pre-specified best, 10 x 15, vs unranked topics", t2j, label(UNRANKED), label(PAPER_BEST)),
            *(
                [
                    ttest_note(
                        f"our best found ({label(best)}, by mean ROUGE-2 F1 on these {n} questions, so biased upwards) "
                        "vs unranked topics", t2j, label(UNRANKED), label(best),
                    )
                ]
                if best != PAPER_BEST
                else []
            ),
            f"Best Table 2 variant by mean ROUGE-2 F1 here: {label(best)}.",
            f"Questions whose context as the model read it ({gen['context_words']}-word budget) is identical to "
            f"{label(first)}'s: " + ", ".join(f"{label(a).split(', ')[1]} {v}/{n}" for a, v in same.items()) + ".",
            ranker_note(ctx),
            *stats_notes(t2j, n, group=_base),
            reshape_note,
        ]),
        **common,
    )

    # -- Table 5 ----------------------------------------------------------------------------
    t5, _ = length_table(p, main_dir, answers, icl_answers, scores, ctx, gen, icl_gen, icl_arm, settings, n_boot, seed, common)
    many = read_scores(scores_dir / "icl" / "report" / "scores.csv")
    icl = icl_table(pi, scores, many, gen, icl_gen, best, settings, n_boot, seed)
    own = paper_table(
        pp, paper_dir, icl_paper_dir, grid_dir,
        {r: read_scores(scores_dir / r / "report" / "scores.csv") for r in ("paper", "icl-paper", "grid-paper")},
        scores, many, gen, icl_gen, common, plot,
    )
    return [t1, own, t2, t5, icl]


def not_run_main(settings: Settings, ctx: dict, q: dict, gen: dict) -> list[NotRun]:
    """The paper's settings this run does not measure, each with the command that would."""
    exp = "experiments/bioasq"
    # Every run answers the same questions with the same generator, so such keys change in all five files.
    files = ("params.yaml", ICL_PARAMS, PAPER_PARAMS, ICL_PAPER_PARAMS, GRID_PAPER_PARAMS)
    all_runs = lambda key: " ".join(f"-S '{exp}/{f}:{key}'" for f in files)  # noqa: E731
    splits12 = "[12B1,12B2,12B3,12B4]"
    return [
        NotRun(
            "the paper's prompt wording (Figures 2–4)",
            "every run, the paper-settings ones included, asks with the project's system and user messages "
            "(biochunk/generation/qa.py); the paper's own settings otherwise (zero-shot, no cap, every community, "
            "the whole Table 2 grid with both t-tests, ICL with against without examples) are measured in the next "
            "table, while Table 2 and the ICL table keep the project's "
            f"{shots(gen['n_examples'], q['examples_by_type'])} and {gen['context_words']}-word cap.",
            "none in this project yet: generate_qa has no prompt-template param (adding one changes the stage every "
            "QA pipeline runs, so each of their answers is generated again).",
            (PROMPT_NONE, PROMPT_CONTEXT, PROMPT_ICL),
        ),
        NotRun(
            "every question of BioASQ 11 (327, the paper's sample)",
            f"the sample is {q['max_questions']} questions (qa.max_questions): about 26 min of generation for the "
            "main run's 9 arms on 2 CPU cores, so about 3.5 h for 327.",
            f"`dvc exp run {exp}/dvc.yaml {all_runs('qa.max_questions=null')}`.",
            (QUERIES_11,),
        ),
        NotRun(
            "the paper's generator, llama3.1-8B in 4-bit",
            "an 8B generator needs a GPU (and its weights, which are not offline here); SmolLM2-135M runs on the CPU.",
            f"on a CUDA machine with the weights: `dvc exp run {exp}/dvc.yaml "
            f"{all_runs('generate.model=meta-llama/Llama-3.1-8B-Instruct')} {all_runs('qa.max_questions=null')}` "
            "(generate.quantize: auto loads it in 4-bit NF4 on CUDA).",
            (GENERATOR, QUANTIZED),
        ),
        NotRun(
            "the paper's retrieval: BM25 over ≈ 25M MEDLINE citations, 1,000 per question",
            "no MEDLINE index or mirror here; contexts come from dense search over the sampled questions' PubMed records.",
            "none in this project (no MEDLINE corpus or converter; qa.retriever offers dense only).",
            (MEDLINE,),
        ),
        NotRun(
            "BioASQ 12 (340 questions: the paper's Table 4, its ICL results and its Phase A+ comparison)",
            "the datasets mirror (../shared/datasets/bioasq) holds Task 7B–11B only; BioASQ 12b's gold batches come "
            "from the BioASQ participants' area. (The comparison's text calls R2-F1 “Precision”, line 72.)",
            f"add Task12B/12B1–12B4_golden.json to `bioasq` in configs/datasets.yaml (path, url, sha256) and to the "
            f"mirror, `dvc repro experiments/datasets/dvc.yaml`, then `dvc exp run {exp}/dvc.yaml "
            f"{all_runs(f'qa.question_splits={splits12}')} -S '{exp}/params.yaml:retrieve.qa_test_splits={splits12}'`.",
            (QUERIES_12, TABLES_3_4, PHASE_A_F1, PHASE_A_R, LEXICAL_12),
        ),
    ]


def _words(texts: pd.Series) -> np.ndarray:
    return texts.fillna("").str.split().str.len().to_numpy(dtype=float)


def length_table(
    p: dict, main_dir: Path, answers: pd.DataFrame, icl_answers: pd.DataFrame, scores: pd.DataFrame, ctx: dict,
    gen: dict, icl_gen: dict, icl_arm: str, settings: Settings, n_boot: int, seed: int, common: dict,
) -> tuple[PaperTable, list[Judged]]:
    """Table 5: answer words per arm beside the gold (ideal) answers' words, and the context
    read, before and after the word budget (qa_context's chunks, as the model would have read them)."""
    qids = sorted(scores["question_id"].unique())
    questions = read_table(main_dir / "qa" / "questions.parquet", QA_SAMPLE).set_index("id")
    # A question's gold length: the mean over its ideal answers (several per question in BioASQ).
    gold = np.array([np.mean([len(r.split()) for r in questions.at[i, "references"]]) for i in qids])
    first_gold = np.array([len(questions.at[i, "references"][0].split()) for i in qids])
    found = read_table(main_dir / "qa" / "contexts.parquet", QA_CONTEXTS)
    chunks = read_table(main_dir / "qa" / "chunks.parquet", CHUNKS)
    chunk_words = dict(zip(chunks["chunk_id"], chunks["text"].str.split().str.len()))
    found = found[found["question_id"].isin(qids)]
    uncapped = found.assign(words=found["chunk_id"].map(chunk_words)).groupby(["method", "question_id"])["words"].sum()
    cap = gen["context_words"]
    metrics = ["answer words", "context words read", "context words uncapped", "questions cut by the cap", "sentences kept"]

    def answer_words(df: pd.DataFrame, arm: str) -> np.ndarray:
        return _words(df[df["method"] == arm].set_index("question_id")["answer"].reindex(qids))

    rows = [
        Row(
            "gold standard (BioASQ ideal answers, mean per question)",
            {"answer words": None}, {"answer words": mean_ci(gold, n_boot, seed)}, "",
            {"answer words": TABLE_CELLS["table5"]},
        ),
        Row("gold standard, first ideal answer only", {}, {"answer words": mean_ci(first_gold, n_boot, seed)}),
    ]  # fmt: skip
    lengths = {}
    for arm in ctx["arms"]:
        lengths[arm] = answer_words(answers, arm)
        before = uncapped.get(arm, pd.Series(dtype=float)).reindex(qids).fillna(0).to_numpy(dtype=float)
        read = _contexts(answers, arm).reindex(qids)
        ours = {
            "answer words": mean_ci(lengths[arm], n_boot, seed),
            "context words read": mean_ci(_words(read), n_boot, seed),
            **(
                {"context words uncapped": mean_ci(before, n_boot, seed), "questions cut by the cap": Estimate(float((before > cap).sum()))}
                if arm != "none"
                else {}
            ),
            # before the word budget; a mean over the questions and example candidates
            **({"sentences kept": Estimate(ctx["reshape"][arm]["sentences_kept_mean"])} if arm in ctx["reshape"] else {}),
        }  # fmt: skip
        in_paper = arm == TABLE5_ARM
        rows.append(
            Row(
                label(arm) + f", {shots(gen['n_examples'], False)}",
                {"answer words": None} if in_paper else {}, ours, "the paper's “No ICL” row" if in_paper else "",
                {"answer words": TABLE_CELLS["table5"]} if in_paper else {},
            )
        )
    k = icl_gen["n_examples"]
    icl_len = {arm: answer_words(icl_answers, arm) for arm in ("none", icl_arm)}
    for arm in ("none", icl_arm):
        in_paper = arm == icl_arm
        rows.append(
            Row(
                f"{label(arm)}, {shots(k, True)} (ICL run)",
                {"answer words": None} if in_paper else {}, {"answer words": mean_ci(icl_len[arm], n_boot, seed)},
                "the paper's “With ICL” row is 10 x 10" if in_paper else "",
                {"answer words": TABLE_CELLS["table5"]} if in_paper else {},
            )
        )
    base = ("words", "prompt", "answers", "model", "sample")

    def diff(lbl: str, a: np.ndarray, b: np.ndarray, claim: int | None, sources: Sources, keys: tuple[str, ...]) -> Judged:
        return Judged(
            Difference(
                lbl, "answer words", None, paired_delta(a, b, n_boot, seed),
                claim=claim, sources=sources, setting=settings(*keys) if claim else "",
            ),
            b - a,
        )

    gold_label = "gold standard"
    judged = [
        diff(f"{label(TABLE5_ARM)} − {gold_label}", gold, lengths[TABLE5_ARM], 1, (TABLE_5, LONGER), (*base, "examples", "cap")),
        diff(f"{label(TABLE5_ARM)} − {gold_label}, first ideal answer only", first_gold, lengths[TABLE5_ARM], None, (), ()),
        diff(f"{label('none')} − {gold_label}", gold, lengths["none"], None, (), ()),
        diff(f"{label(icl_arm)}, {k} typed examples − {gold_label}", gold, icl_len[icl_arm], 1, (LONGER,), (*base, "icl", "icl_arm")),
        diff(f"{label(icl_arm)}: {k} typed examples − {gen['n_examples']} example", lengths[icl_arm], icl_len[icl_arm], -1, (LONGER,),
             (*base, "icl", "icl_corpus", "icl_arm")),
        diff(f"{label('none')}: {k} typed examples − {gen['n_examples']} example", lengths["none"], icl_len["none"], None, (), ()),
    ]
    n = len(qids)
    table = PaperTable(
        section="table5",
        title="Table 5: answer length per context (words), beside the gold answers'",
        rows=rows,
        differences=[j.diff for j in judged],
        notes=_bullets([
            (
                f"Paper cells: the paper's Table 5 (“{TABLE_5.quote}”, {TABLE_5.where}) is not in its text beyond "
                f"fragments of its rows (“{CAPTIONS.quote}”, {CAPTIONS.where}); its numbers are tokens, ours words. "
                "Rows without a citation are not in the paper's Table 5."
            ),
            (
                f"Gold standard: the words of each question's ideal answers (evaluate_qa scores against the best of "
                f"them), averaged per question, then over the {n} questions (a question has "
                f"{min(map(len, questions.loc[qids, 'references']))}–{max(map(len, questions.loc[qids, 'references']))} ideal "
                "answers; the first alone is shorter, the row below it); the per-question differences pair each answer with "
                "its own question's mean gold length."
            ),
            (
                f"Context words read: as the model read it ({cap}-word budget, with the [n] passage markers); uncapped: "
                f"the words of the same context chunks (qa_context) before the budget; questions cut by the cap: of {n}, "
                "those whose uncapped context exceeds it; sentences kept: reshaped sentences per question before the "
                "budget (mean, questions and example candidates)."
            ),
            (
                f"Answers are cut at qa.max_new_tokens = {gen['max_new_tokens']} tokens (the paper states no limit); an "
                f"answer is the first line of the reply (parse_answer): at most {int(max(v.max() for v in lengths.values()))} "
                f"words here, while the gold answers average {gold.mean():.1f}."
            ),
            *stats_notes(judged, n, digits=1, group=_base),
        ]),
        digits=1,
        **{**common, "metrics": metrics},
        metric_digits={"questions cut by the cap": 0},
    )
    return table, judged


def icl_table(
    pi: dict, one: pd.DataFrame, many: pd.DataFrame, gen: dict, icl_gen: dict, best: str, settings: Settings, n_boot: int, seed: int
) -> PaperTable:
    """No context and the ICL run's variant: the ICL run's typed examples against the main run's,
    and the paper's ICL t-test (its best ICL variant against unranked topics without ICL)."""
    arm = "reshaped:" + pi["reshape"]["variants"][0]["name"]
    k, k1 = icl_gen["n_examples"], gen["n_examples"]
    base = ("icl", "prompt", "cap", "answers", "model", "sample")
    rows, judged = [], []
    unranked = one[one["method"] == UNRANKED].set_index("question_id").sort_index()
    for a_ in ("none", arm):
        a = one[one["method"] == a_].set_index("question_id").sort_index()
        b = many[many["method"] == a_].set_index("question_id").reindex(a.index)
        if b[METRICS["ROUGE-2 F1"]].isna().any() or len(b) != len(many[many["method"] == a_]):
            raise UserError(
                "the ICL run did not answer the same questions as the main run (qa.* of experiments/bioasq/icl-params.yaml)"
            )
        for s, t, section in ((shots(k1, False), a, "table1" if a_ == "none" else "table2"), (shots(k, True), b, "icl")):
            in_paper = section != "icl" or a_ != "none"  # the paper's ICL prompt always has a context
            ours = {m: mean_ci(t[METRICS[m]].to_numpy(), n_boot, seed) for m in METRICS}
            rows.append(
                Row(
                    f"{label(a_)}, {s}", {m: None for m in METRICS} if in_paper else {}, ours,
                    "" if in_paper else "not in the paper (its ICL prompt has a context, Figure 4)",
                    {m: TABLE_CELLS[section] for m in METRICS} if in_paper else {},
                )
            )
        for m in JUDGED:
            x, y = a[METRICS[m]].to_numpy(), b[METRICS[m]].to_numpy()
            sign, figure, sources = ICL_CLAIMS.get(m, (None, None, ())) if a_ == arm else (None, None, ())
            keys = (*base, "icl_corpus", "retrieval") if a_ == arm else base
            lbl = f"{label(a_)}: {k} typed examples − {k1} example"
            est, metric = icl_change(x, y, m, n_boot, seed)
            d = Difference(lbl, metric, figure, est, claim=sign, sources=sources,
                           setting=settings(*keys, *(("bertscore",) if m.startswith("BERTScore") else ())) if sign else "")  # fmt: skip
            judged.append(Judged(d, y - x))
    # The paper's ICL t-test: the best ICL variant against unranked topics without ICL.
    b = many[many["method"] == arm].set_index("question_id").reindex(unranked.index)
    judged += icl_ttest(unranked, b, f"{label(arm)}, {k} typed examples − {label(UNRANKED)}, {k1} example", settings,
                        (*base, "unranked", "icl_corpus", "retrieval"), n_boot, seed)  # fmt: skip
    which = f"The ICL variant ({label(arm)}, reshape.variants of experiments/bioasq/{ICL_PARAMS})"
    chosen = (
        f"{which} is the best Table 2 variant of this run; it was chosen there."
        if arm == best
        else f"{which} is not this run's best Table 2 variant ({label(best)}): name that one there and re-run."
    )
    n = len(unranked)
    return PaperTable(
        paper=PAPER,
        section="icl",
        title=f"In-context learning: {k} examples per question type, no context and the best Table 2 variant",
        command=COMMAND,
        sample=f"the same {one['question_id'].nunique()} questions as Tables 1, 2 and 5 (paired); examples from split 7B1, "
        f"{k} of the answered question's type (qa.examples_by_type), each with its own context of the arm",
        models=f"generator {icl_gen['model']}; cross-encoder {reranker_label(pi['reshape']['reranker'])} (as Table 2)",
        wall_s=None,
        metrics=list(METRICS),
        rows=rows,
        differences=[j.diff for j in judged],
        not_run=[
            NotRun(
                "in-context examples from BioASQ 10, as the paper draws them",
                "examples come from split 7B1 (qa.example_split: auto), never answered and never in the answered batches.",
                "`dvc exp run experiments/bioasq/dvc.yaml -S experiments/bioasq/params.yaml:qa.example_split=10B1 "
                f"-S experiments/bioasq/{ICL_PARAMS}:qa.example_split=10B1` (one batch of BioASQ 10).",
                (ICL_EXAMPLES,),
            )
        ],
        notes=_bullets([
            (
                f"The 1-example rows are Tables 1 and 2's answers. {chosen} The paper's ICL figures are changes “on "
                "average” over its settings, read here as relative changes (B/A − 1) of one arm: the recall and "
                "precision differences are relative, the F1 differences absolute. Read as percentage points instead, "
                "−5.17% would be −0.0517 on our 0–1 scale; the sign, and so the verdict, is the same."
            ),
            (
                f"The paper's ICL t-test (“{ICL_TTEST.quote}”, {ICL_TTEST.where}) is the last block: the ICL run's "
                f"{label(arm)} with {k} typed examples against the main run's unranked topics with {shots(k1, False)} "
                "(the paper's: without ICL)."
            ),
            ttest_note(
                f"the ICL variant vs the main run's unranked topics ({shots(k1, False)}; the paper's: without ICL)",
                judged, f"{label(UNRANKED)}, {k1} example", f"{label(arm)}, {k} typed examples",
            ),
            *stats_notes(judged, n, group=_base),
        ]),
    )


def paper_table(
    pp: dict, paper_dir: Path, icl_paper_dir: Path, grid_dir: Path, own_scores: dict[str, pd.DataFrame], main: pd.DataFrame,
    icl: pd.DataFrame, gen: dict, icl_gen: dict, common: dict, plot: Path,
) -> PaperTable:
    """Tables 1 and 2 and ICL in the paper's own settings (the ``paper`` run: zero-shot prompts, no
    cap below the model's window, unranked topics over every community, the ICL variant and
    10 x 15; the ``grid-paper`` run: the rest of Table 2's grid, joined to it question by question;
    the ``icl-paper`` run: the ICL variant with typed examples): Tables 1 and 2's claims judged
    there with both of Table 2's t-tests (the pre-specified best and the best found), each arm
    against the project's default (the main run's), no context with the ICL run's typed examples
    against none, and the paper's ICL claims and t-test with against without examples. Draws
    Table 2's grid in both settings (``plot``)."""
    ctx, pgen = read_json(paper_dir / "qa" / "report.json"), read_json(paper_dir / "answers" / "report.json")
    gctx = read_json(grid_dir / "qa" / "report.json")
    icl_arm = "reshaped:" + pp["reshape"]["variants"][1]["name"]
    missing = sorted({"none", "gold", PAPER_UNRANKED, icl_arm, PAPER_BEST} - set(ctx["arms"]))
    if missing:
        raise UserError(f"{paper_dir}: the run has no arm {missing[0]}; check experiments/bioasq/{PAPER_PARAMS} and re-run")
    missing = sorted(set(TABLE2) - set(ctx["arms"]) - set(gctx["arms"]))
    if missing:
        raise UserError(f"{grid_dir}: the run has no arm {missing[0]}; check experiments/bioasq/{GRID_PAPER_PARAMS} and re-run")
    both = pd.concat([own_scores["paper"], own_scores["grid-paper"]], ignore_index=True)
    w, wm = wide(both), wide(main)
    if list(w["rouge2_f1"].index) != list(wm["rouge2_f1"].index) or w["rouge2_f1"].isna().any().any():
        raise UserError(
            f"the paper-settings runs did not answer the same questions as the main run "
            f"(qa.* of experiments/bioasq/{PAPER_PARAMS} and {GRID_PAPER_PARAMS})"
        )
    with_icl = own_scores["icl-paper"]
    with_icl = with_icl[with_icl["method"] == icl_arm].set_index("question_id").sort_index()
    if list(with_icl.index) != list(w["rouge2_f1"].index):
        raise UserError(
            f"the ICL run in the paper's settings did not answer the same questions as the paper-settings run "
            f"(qa.* of experiments/bioasq/{ICL_PAPER_PARAMS})"
        )
    n_boot, seed = pp["evaluate"]["bootstrap"], pp["evaluate"]["seed"]
    n = len(w["rouge2_f1"])
    grid_plot(
        [
            (f"the project's default: {shots(gen['n_examples'], False)}, {gen['context_words']}-word cap; dashed: {label(UNRANKED)}", wm, UNRANKED),
            (f"the paper's settings: {shots(pgen['n_examples'], False)}, no cap; dashed: {label(PAPER_UNRANKED)}", w, PAPER_UNRANKED),
        ],
        n_boot, seed, plot,
    )
    answers = pd.concat(
        [read_table(d / "answers" / "answers.parquet", QA_ANSWERS) for d in (paper_dir, grid_dir)], ignore_index=True
    )
    icl_answers = read_table(icl_paper_dir / "answers" / "answers.parquet", QA_ANSWERS)
    ictx, ipgen = read_json(icl_paper_dir / "qa" / "report.json"), read_json(icl_paper_dir / "answers" / "report.json")
    same = int((_contexts(answers, icl_arm) == _contexts(icl_answers, icl_arm)).sum())
    settings = Settings(pp, pgen, ctx, n, ipgen, ictx, same)
    # Each arm of the paper runs and the same arm in the project's default (the main run).
    pairs = [*zip(("none", PAPER_UNRANKED, "gold"), TABLE1), *((a, a) for a in TABLE2)]
    best = best_variant(both)
    # The file whose run answered the arm: the paper run's, or the grid run's for the rest of Table 2.
    own_label = lambda arm: f"zero-shot, no cap (the paper's settings; {PAPER_PARAMS if arm in ctx['arms'] else GRID_PAPER_PARAMS})"  # noqa: E731
    k = ipgen["n_examples"]
    rows = []

    def own_row(text: str, scores: Any, section: str) -> Row:
        return Row(
            text, {m: None for m in METRICS}, {m: mean_ci(scores[c].to_numpy(), n_boot, seed) for m, c in METRICS.items()}, "",
            {m: TABLE_CELLS[section] for m in METRICS},
        )

    for arm, default in pairs:
        table = "table1" if default in TABLE1 else "table2"
        rows.append(own_row(f"{label(arm)}, {own_label(arm)}", {c: w[c][arm] for c in METRICS.values()}, table))
        rows.append(
            Row(
                f"{label(default)}, {shots(gen['n_examples'], False)}, {gen['context_words']}-word cap "
                f"(the project's default, {'Table 1' if table == 'table1' else 'Table 2'})", {},
                {m: mean_ci(wm[c][default].to_numpy(), n_boot, seed) for m, c in METRICS.items()},
                "not the paper's setting",
            )
        )
    rows.append(own_row(f"{label(icl_arm)}, {shots(k, True)}, no cap (the paper's settings; {ICL_PAPER_PARAMS})", with_icl, "icl"))
    judged = table1_judged(w, PAPER_UNRANKED, settings, PAPER_BASE, n_boot, seed)
    # Table 2's claims, unranked topics over every community in place of the first five: the
    # pre-specified best (its t-test, line 69) and the best found on every metric, then the rest.
    swap = lambda arm: PAPER_UNRANKED if arm == UNRANKED else arm  # noqa: E731
    claims2 = _claims([(swap(a), swap(b), ms, sign, src) for a, b, ms, sign, src in TABLE2_CLAIMS])
    order = pair_order([(PAPER_UNRANKED, v, m) for v in dict.fromkeys([PAPER_BEST, best]) for m in JUDGED] + list(claims2))
    posthoc = lambda a, b: ("posthoc",) if (a, b) == (PAPER_UNRANKED, best) and best != PAPER_BEST else ()  # noqa: E731
    judged += [judge(w, a, b, m, claims2, settings, PAPER_BASE, n_boot, seed, posthoc(a, b)) for a, b, m in order]
    # What the paper's settings change, arm by arm (no stated direction: the paper runs only its own).
    for arm, default in pairs:
        for m in TESTED:
            x, y = wm[METRICS[m]][default].to_numpy(), w[METRICS[m]][arm].to_numpy()
            d = Difference(f"{label(arm)}, the paper's settings − {label(default)}, the project's default", m, None, paired_delta(x, y, n_boot, seed))
            judged.append(Judged(d, y - x))

    # Examples with no context: the ICL run's typed examples against none. The paper's ICL prompt
    # always carries a context (Figure 4), so no claim of its is judged here.
    many = icl[icl["method"] == "none"].set_index("question_id").sort_index()
    if list(many.index) != list(w["rouge2_f1"].index):
        raise UserError("the ICL run did not answer the same questions as the paper-settings run (qa.* of experiments/bioasq/icl-params.yaml)")
    for m in JUDGED:
        x, y = w[METRICS[m]]["none"].to_numpy(), many[METRICS[m]].to_numpy()
        est, metric = icl_change(x, y, m, n_boot, seed)
        judged.append(Judged(Difference(f"{label('none')}: {icl_gen['n_examples']} typed examples − none", metric, None, est), y - x))
    # The paper's ICL comparison: the same variant with and without examples, both uncapped.
    icl_keys = (*PAPER_BASE, "icl_corpus", "retrieval")
    for m in JUDGED:
        x, y = w[METRICS[m]][icl_arm].to_numpy(), with_icl[METRICS[m]].to_numpy()
        sign, figure, sources = ICL_CLAIMS.get(m, (None, None, ()))
        est, metric = icl_change(x, y, m, n_boot, seed)
        setting = settings(*icl_keys, *(("bertscore",) if m.startswith("BERTScore") else ())) if sign else ""
        d = Difference(f"{label(icl_arm)}: {k} typed examples − zero-shot", metric, figure, est, claim=sign, sources=sources, setting=setting)
        judged.append(Judged(d, y - x))
    # The paper's ICL t-test: the ICL variant with examples against unranked topics without.
    unranked = {c: w[c][PAPER_UNRANKED] for c in METRICS.values()}
    judged += icl_ttest(unranked, with_icl, f"{label(icl_arm)}, {k} typed examples − {label(PAPER_UNRANKED)}, zero-shot",
                        settings, icl_keys, n_boot, seed)  # fmt: skip
    read = {label(a): _words(_contexts(answers, a)) for a in ("gold", PAPER_UNRANKED, *TABLE2)}
    read[f"{label(icl_arm)} with examples"] = _words(_contexts(icl_answers, icl_arm))
    cap = pgen["context_words"]
    cut = sum(int((v >= cap).sum()) for v in read.values())
    lengths = "; ".join(f"{a} mean {v.mean():.0f}, longest {v.max():.0f}" for a, v in read.items())
    reached = f"{cut} of the {n * len(read)} contexts reach it" if cut else "no context reaches it"
    return PaperTable(
        section="table1-paper",
        title=(
            "Tables 1 and 2 and ICL in the paper's own settings: zero-shot or typed examples, "
            "no context cap, unranked topics over every community (BioASQ)"
        ),
        rows=rows,
        differences=[j.diff for j in judged],
        not_run=[],
        notes=_bullets([
            (
                f"The paper run (experiments/bioasq/{PAPER_PARAMS}) answers the main run's {n} questions with the "
                f"paper's Table 1 prompts and contexts: {shots(pgen['n_examples'], False)} (qa.n_examples 0; the "
                f"paper: “{PROMPT_NONE.quote}”, {PROMPT_NONE.where}), a {cap:,}-word budget ({reached}; words "
                f"read: {lengths}; the paper: no cap below Llama 3.1's window, {WINDOW.where}) and unranked topics over every community found "
                f"({ctx['reshape'][PAPER_UNRANKED]['communities_mean']:.2f} per question on average, 4 TextRank "
                f"sentences each; “{UNRANKED_DEF.quote}”, {UNRANKED_DEF.where}). It also answers with the paper's "
                f"pre-specified best Table 2 setting, {label(PAPER_BEST)} (“{BEST.quote}”, {BEST.where}), for the "
                f"paper's t-test (“{TTEST.quote}”, {TTEST.where}), and with the ICL "
                f"run's variant, {label(icl_arm)}, zero-shot; the grid run (experiments/bioasq/{GRID_PAPER_PARAMS}, "
                f"the paper run's settings) answers the same questions with the rest of Table 2's grid "
                f"({', '.join(label(a).split(', ')[1] for a in TABLE2 if a not in ctx['arms'])}), so the six ranked "
                f"settings and both arms of every Table 2 claim are in the paper's settings; the ICL run in the paper's settings "
                f"(experiments/bioasq/{ICL_PAPER_PARAMS}) answers with the same variant, {shots(k, True)} "
                f"(“{PROMPT_ICL.quote}”, {PROMPT_ICL.where}), under the same budget: the paper's “with and without ICL”."
            ),
            (
                "Six blocks of differences: Table 1's claims judged within the paper run (as in Table 1, each row "
                "naming what still differs from the paper); Table 2's claims, unranked topics over every community "
                "in place of the first five (the pre-specified best and the best found against unranked topics, on "
                "every metric, first); each arm in the paper's settings against the same arm "
                "in the project's default (Tables 1 and 2's answers: what the settings change, no stated direction); "
                f"no context with the ICL run's {icl_gen['n_examples']} examples of the question's type against none "
                "(no claim judged: the paper's ICL prompt always carries a context); the paper's ICL claims, the ICL "
                f"variant with {k} typed examples against zero-shot; and the paper's ICL t-test, that variant with "
                "examples against unranked topics without. Recall and precision of the ICL blocks are relative "
                "changes, as in the ICL table."
            ),
            ttest_note(
                "the paper's pre-specified best, 10 x 15, vs unranked topics over every community, both zero-shot and "
                "uncapped (the paper's Table 2 t-test in its own settings)", judged, label(PAPER_UNRANKED), label(PAPER_BEST),
            ),
            *(
                [
                    ttest_note(
                        f"the best found in the paper's settings ({label(best)}, by mean ROUGE-2 F1 on these {n} "
                        "questions, so biased upwards) vs unranked topics over every community", judged,
                        label(PAPER_UNRANKED), label(best),
                    )
                ]
                if best != PAPER_BEST
                else []
            ),
            f"Best Table 2 variant by mean ROUGE-2 F1 in the paper's settings: {label(best)}.",
            ttest_note(
                f"the ICL variant with {k} typed examples vs unranked topics zero-shot, both uncapped (the paper's ICL t-test)",
                judged, f"{label(PAPER_UNRANKED)}, zero-shot", f"{label(icl_arm)}, {k} typed examples",
            ),
            *stats_notes(judged, n, group=_base),
            settings.legend(*PAPER_BASE, "icl_corpus", "retrieval", "bertscore"),
        ]),
        **{
            **common,
            "sample": (
                f"the main run's {n} BioASQ questions (paired), corpus: the {ctx['corpus']['documents']} PubMed records "
                f"of the sampled questions; {shots(pgen['n_examples'], False)} in any prompt; {cap:,}-word budget: "
                f"{reached}"
            ),
            "models": (
                f"generator {pgen['model']}; embedder {pp['embed']['model']} (search, communities, TextRank); "
                f"cross-encoder {reranker_label(pp['reshape']['reranker'])} (the ranked variants, as Table 2); "
                f"BERTScore {pp['evaluate_qa']['bertscore_model']}"
            ),
        },
    )
