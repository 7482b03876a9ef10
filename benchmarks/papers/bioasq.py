"""Context reshaping for BioASQ (paper key bioasq-reshaping): Tables 1, 2 and 5 and the t-test.

BioASQ comes converted from the datasets pipeline (``dvc repro
experiments/datasets/dvc.yaml``; ``make paper-bioasq`` runs it).

One QA run through the pipeline's own stages (qa_context -> generate_qa -> evaluate_qa) with
a temporary params file, so every arm answers the same questions and generation is shared:

- Table 1: no context, unranked topics (5 communities x 4 sentences, discovery order), the gold
  snippets' sentences;
- Table 2: 5 / 10 communities x 4 / 10 / 15 sentences per community, ranked by the project's
  cross-encoder (``reshape.rank: crossencoder``, ``reshape.reranker``);
- Table 5: answer length in words per arm (and the context words the model read);
- the paired t-test (scipy ``ttest_rel``) and paired bootstrap difference of the best Table 2
  variant against unranked topics.

Every arm is one ``reshape.variants`` entry (or ``gold`` / ``none``) of the same qa_context run.
``--reranker trained`` (the default) ranks with a cross-encoder that the ``train_reranker`` stage
fine-tunes first on the BioASQ batches not held out (``retrieve.qa_test_splits``), and answers
only held-out questions (``qa.question_splits``), so no answered question was trained on;
``--reranker minilm`` is the untrained MiniLM head, another value a hub id or folder.
Sizes are arguments: ``--max-questions 40`` fits two CPU cores; ``--max-questions 0`` (all
held-out questions) with ``--set generate.model=<hub id>`` is the GPU run.

    python benchmarks/papers/bioasq.py --data data/papers/interim/bioasq --out build/paper-bioasq
    python benchmarks/papers/bioasq.py --out build/paper-bioasq --publish-only   # tables again
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import pandas as pd
import yaml
from scipy.stats import ttest_rel

from biochunk import cli, params
from biochunk.errors import UserError
from biochunk.evaluation.papers import Difference, Estimate, PaperTable, Row, mean_ci, paired_delta, publish
from biochunk.io import QA_ANSWERS, read_table

sys.path.insert(0, str(Path(__file__).resolve().parent))  # the sibling helper, also as benchmarks.papers.bioasq
from stage_runner import ROOT, apply_sets, run_stages

PAPER = "bioasq-reshaping"
UNRANKED = "reshaped:unranked-5x4"
TRAINED = "trained"  # --reranker: fine-tune one with the train_reranker stage first
# The paper's grid: (name, rank, top_m communities, keep sentences per community).
VARIANTS = [("unranked-5x4", "none", 5, 4)] + [(f"ce-{m}x{k}", "crossencoder", m, k) for m in (5, 10) for k in (4, 10, 15)]
TABLE2 = [f"reshaped:ce-{m}x{k}" for m in (5, 10) for k in (4, 10, 15)]
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


def run_params(args: argparse.Namespace) -> dict:
    """The committed params with this experiment's settings on top."""
    p = yaml.safe_load(Path(args.params).read_text())
    p["qa"].update(
        contexts=["none", "gold", "reshaped"],
        corpus="sampled",
        max_questions=args.max_questions or None,
        context_words=args.context_words,
        n_examples=args.n_examples,
    )
    p["corpus"]["bioasq_unit"] = "record"
    if args.reranker == TRAINED:
        # The reranker trains on every batch but these; only these are answered.
        p["qa"]["question_splits"] = list(p["retrieve"]["qa_test_splits"])
    p["reshape"].update(
        reranker=str(args.out / "reranker") if args.reranker == TRAINED else args.reranker,
        variants=[{"name": n, "rank": r, "top_m": m, "keep": k} for n, r, m, k in VARIANTS],
    )
    return apply_sets(p, args.set)


def run_qa(args: argparse.Namespace, params_file: Path, out: Path) -> float:
    # Trained by the main run (again on every run: the params may have changed); the ICL run
    # (out: args.out / "icl") reuses it.
    reranker = args.out / "reranker"
    train = (
        [["train_reranker.py", "--dataset", "bioasq", "--data", str(args.data), "--out", str(reranker)]]
        if args.reranker == TRAINED and (out == args.out or not (reranker / "report.json").is_file())
        else []
    )
    steps = train + [
        ["qa_context.py", "--dataset", "bioasq", "--data", str(args.data), "--out", str(out / "qa")],
        ["generate_qa.py", "--qa", str(out / "qa"), "--out", str(out / "answers")],
        [
            "evaluate_qa.py", "--dataset", "bioasq", "--qa", str(out / "qa"), "--answers", str(out / "answers"),
            "--metrics", str(out / "metrics.json"), "--report", str(out / "report"), "--plots", str(out / "plots"),
        ],
    ]  # fmt: skip
    return run_stages(steps, params_file)


def label(arm: str) -> str:
    names = {"none": "no context", "gold": "exact gold context", UNRANKED: "unranked topics, 5 x 4"}
    if arm in names:
        return names[arm]
    m, k = arm.split("-")[-1].split("x")
    return f"cross-encoder ranked, {m} communities x {k} sentences"


def tables(args: argparse.Namespace, wall_s: float) -> list[PaperTable]:
    scores = pd.read_csv(args.out / "report" / "scores.csv", dtype={"question_id": str})
    answers = read_table(args.out / "answers" / "answers.parquet", QA_ANSWERS)
    p = yaml.safe_load((args.out / "params.yaml").read_text())
    ctx = json.loads((args.out / "qa" / "report.json").read_text())
    gen = json.loads((args.out / "answers" / "report.json").read_text())
    arms = ctx["arms"]
    missing = sorted({"none", "gold", UNRANKED, *TABLE2} - set(arms))
    if missing:
        raise UserError(f"{args.out}: the run has no arm {missing[0]}; rerun without --publish-only")
    n_boot, seed = args.bootstrap, 42
    wide = {c: scores.pivot_table(index="question_id", columns="method", values=c) for c in METRICS.values()}
    n = len(wide["rouge2_f1"])

    def row(arm: str, note: str = "") -> Row:
        ours = {m: mean_ci(wide[c][arm].to_numpy(), n_boot, seed) for m, c in METRICS.items()}
        return Row(label(arm), {m: None for m in METRICS}, ours, note)

    def diffs(a: str, b: str) -> list[Difference]:
        return [
            Difference(
                f"{label(b)} − {label(a)}",
                m,
                None,
                paired_delta(wide[METRICS[m]][a].to_numpy(), wide[METRICS[m]][b].to_numpy(), n_boot, seed),
            )
            for m in TESTED
        ]

    model = p["generate"]["model"]
    q = p["qa"]
    command = f"make paper-bioasq  ({args.command})"
    batches = (
        f"batches {', '.join(q['question_splits'])}, held out of reranker training"
        if q.get("question_splits")
        else f"batches after {ctx['example_split']}"
    )
    sample = (
        f"{n} BioASQ questions (seeded sample, seed {q['seed']}, {batches}; examples from {ctx['example_split']}), "
        f"corpus: the {ctx['corpus']['documents']} PubMed records of the sampled questions; "
        f"{q['n_examples']} in-context example(s); {q['context_words']}-word context budget for every arm"
    )
    rs = p["reshape"]
    models = (
        f"generator {model}; embedder {p['embed']['model']} (search, communities, TextRank); cross-encoder "
        f"{reranker_label(args.out, rs['reranker'])}; BERTScore {p['evaluate_qa']['bertscore_model']}"
    )
    common = {"paper": PAPER, "command": command, "sample": sample, "models": models, "wall_s": wall_s, "metrics": list(METRICS)}
    reshape_note = (
        f"Reshaping: top {rs['passages']} records by dense search, communities at threshold {rs['threshold']}, "
        f"TextRank within each community; communities per question found: "
        f"{ctx['reshape'][UNRANKED]['communities_mean']:.1f} on average."
    )
    t1 = PaperTable(
        section="table1",
        title="Table 1: no context, unranked topics, exact gold context (BioASQ)",
        rows=[row("none"), row(UNRANKED), row("gold")],
        differences=diffs("none", UNRANKED) + diffs("none", "gold") + diffs(UNRANKED, "gold"),
        notes=[NO_PAPER, reshape_note],
        **common,
    )
    best = best_variant(scores)
    tests = []
    for m in TESTED:
        c = METRICS[m]
        r = ttest_rel(wide[c][best], wide[c][UNRANKED])
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
            f"Questions whose context as the model read it ({q['context_words']}-word budget) is identical to "
            f"{label(first)}'s: " + ", ".join(f"{label(a).split(', ')[1]} {v}/{n}" for a, v in same.items()) + ".",
            ranker_note(ctx),
            reshape_note,
        ],
        **common,
    )
    lengths = []
    for arm in arms:
        g = answers[answers["method"] == arm]
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
                f"Context words: as the model read it ({q['context_words']}-word budget, with the [n] passage markers); "
                "sentences kept: reshaped sentences per question before the budget (mean, questions and example candidates)."
            ),
            (
                f"Answers are cut at qa.max_new_tokens = {q['max_new_tokens']} tokens; generation "
                f"{sum(m['seconds'] for m in gen['methods'].values()) / 60:.1f} min of the wall time."
            ),
        ],
        digits=1,
        **{**common, "metrics": ["answer words", "context words", "sentences kept"]},
    )
    return [t1, t2, t5]


def reranker_label(out: Path, reranker: str) -> str:
    """What ranked the communities, in words (the trained one with its training run)."""
    if reranker == "minilm":
        return "minilm (MiniLM with a fresh seeded head: untrained, a weak ranker)"
    report = Path(reranker) / "report.json"
    if Path(reranker).resolve() == (out / "reranker").resolve() and report.is_file():
        r = json.loads(report.read_text())
        return (
            f"MiniLM fine-tuned by the train_reranker stage ({r['steps']} steps, {r['groups']} question groups "
            f"of the batches not held out, BM25 hard negatives; {r['seconds'] / 60:.1f} min)"
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


def best_variant(scores: pd.DataFrame) -> str:
    """The Table 2 arm with the highest mean ROUGE-2 F1."""
    return str(scores[scores["method"].isin(TABLE2)].groupby("method")["rouge2_f1"].mean().idxmax())


def icl_params(args: argparse.Namespace, best: str) -> dict:
    """The ICL run: no context and the best variant, n examples of each question's own type."""
    p = run_params(args)
    name = best.split(":", 1)[1]
    p["qa"].update(contexts=["none", "reshaped"], n_examples=args.icl_examples, examples_by_type=True)
    p["reshape"]["variants"] = [v for v in p["reshape"]["variants"] if v["name"] == name]
    return p


def icl_table(args: argparse.Namespace, best: str, wall_s: float, command: str) -> PaperTable:
    one = pd.read_csv(args.out / "report" / "scores.csv", dtype={"question_id": str})
    many = pd.read_csv(args.out / "icl" / "report" / "scores.csv", dtype={"question_id": str})
    k = args.icl_examples
    rows, diffs = [], []
    for arm in ("none", best):
        a = one[one["method"] == arm].set_index("question_id").sort_index()
        b = many[many["method"] == arm].set_index("question_id").reindex(a.index)
        if b[METRICS["ROUGE-2 F1"]].isna().any():
            raise UserError(f"{args.out}/icl: the ICL run did not answer the same questions as the main run")
        for shots, t in (("1 example (any type)", a), (f"{k} examples of the question's type", b)):
            ours = {m: mean_ci(t[METRICS[m]].to_numpy(), args.bootstrap, 42) for m in TESTED}
            rows.append(Row(f"{label(arm)}, {shots}", {m: None for m in TESTED}, ours))
        for m in TESTED:
            c = METRICS[m]
            d = paired_delta(a[c].to_numpy(), b[c].to_numpy(), args.bootstrap, 42)
            diffs.append(Difference(f"{label(arm)}: {k} typed examples − 1 example", m, None, d))
    p = yaml.safe_load((args.out / "icl" / "params.yaml").read_text())
    return PaperTable(
        paper=PAPER,
        section="icl",
        title=f"In-context learning: {k} examples per question type, no context and the best Table 2 variant",
        command=f"make paper-bioasq  ({command})",
        sample=f"the same {len(a)} questions as Tables 1, 2 and 5 (paired); examples from split 7B1, "
        f"{k} of the answered question's type (qa.examples_by_type), each with its own context of the arm",
        models=f"generator {p['generate']['model']}; cross-encoder {reranker_label(args.out, p['reshape']['reranker'])} (as Table 2)",
        wall_s=wall_s,
        metrics=TESTED,
        rows=rows,
        differences=diffs,
        notes=[NO_PAPER, "The 1-example rows are Tables 1 and 2's answers; the best variant was chosen there."],
    )


def _contexts(answers: pd.DataFrame, arm: str) -> pd.Series:
    return answers[answers["method"] == arm].set_index("question_id")["context"].sort_index()


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--data", type=Path, default=Path("data/papers/interim/bioasq"), help="converted BioASQ folder")
    ap.add_argument("--out", type=Path, default=Path("build/paper-bioasq"), help="run folder (stage outputs, params.yaml)")
    ap.add_argument("--params", type=Path, default=ROOT / "params.yaml", help="the params the run starts from")
    ap.add_argument("--max-questions", type=int, default=40, help="seeded sample of held-out questions (0: all)")
    ap.add_argument("--context-words", type=int, default=300, help="qa.context_words for every arm")
    ap.add_argument("--n-examples", type=int, default=1, help="qa.n_examples (in-context examples)")
    ap.add_argument(
        "--reranker",
        default=TRAINED,
        help="reshape.reranker: trained (train_reranker first, held-out questions only), minilm (untrained), a folder or a hub id",
    )
    ap.add_argument("--icl-examples", type=int, default=0, help="then ICL: this many examples of each question's type (0: skip)")
    ap.add_argument("--set", action="append", default=[], help="section.key=value on top (e.g. generate.model=...)")
    ap.add_argument("--bootstrap", type=int, default=1000)
    ap.add_argument("--results", type=Path, default=ROOT / "docs" / "results")
    ap.add_argument("--publish-only", action="store_true", help="tables from an earlier run in --out")
    args = ap.parse_args()
    if args.max_questions < 0:
        raise UserError(f"--max-questions must be >= 0 (0: all), got {args.max_questions}")
    if not args.publish_only and not (args.data / "questions.parquet").is_file():
        raise UserError(f"--data {args.data}: no converted BioASQ; run `dvc repro experiments/datasets/dvc.yaml:convert@bioasq` first")
    wall_file = args.out / "wall_s.json"
    if args.publish_only:
        if not wall_file.is_file():
            raise UserError(f"{args.out}: no finished run here (no wall_s.json); run without --publish-only first")
        done = json.loads(wall_file.read_text())
        wall, args.command = done["wall_s"], done["command"]
    else:
        args.out.mkdir(parents=True, exist_ok=True)
        pf = args.out / "params.yaml"
        pf.write_text(yaml.safe_dump(run_params(args), sort_keys=False))
        params.load(pf)  # one clear error line before any work
        wall = run_qa(args, pf, args.out)
        args.command = " ".join(["python", "benchmarks/papers/bioasq.py", *sys.argv[1:]])
        wall_file.write_text(json.dumps({"wall_s": wall, "command": args.command}))
    out = tables(args, wall)
    if args.icl_examples:
        best = best_variant(pd.read_csv(args.out / "report" / "scores.csv", dtype={"question_id": str}))
        icl_dir, icl_wall = args.out / "icl", args.out / "icl" / "wall_s.json"
        if not (args.publish_only and icl_wall.is_file()):
            icl_dir.mkdir(parents=True, exist_ok=True)
            pf = icl_dir / "params.yaml"
            pf.write_text(yaml.safe_dump(icl_params(args, best), sort_keys=False))
            params.load(pf)
            icl_wall.write_text(
                json.dumps(
                    {
                        "wall_s": run_qa(args, pf, icl_dir),
                        "command": " ".join(["python", "benchmarks/papers/bioasq.py", *sys.argv[1:]]),
                    }
                )
            )
        done = json.loads(icl_wall.read_text())
        out.append(icl_table(args, best, done["wall_s"], done["command"]))
    for t in out:
        md, js = publish(t, args.results)
        print(f"wrote {md} ({t.section}) and {js}")


if __name__ == "__main__":
    cli.run(main)
