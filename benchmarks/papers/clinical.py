"""The clinical decision-support chunking study, reproduced on COVID-QA: retrieval P / R / F1 @ k.

    python benchmarks/papers/clinical.py --data data/papers/interim/covidqa [--settings fixed,cluster,...]
        [--retrievers dense,bm25] [--max-questions N] [--cache data/cache/embeddings]

(``make paper-clinical`` downloads and converts COVID-QA first when it is missing.) Every
question of COVID-QA asks about one article; all articles' chunks are pooled into one index,
each question retrieves its top k, and a retrieved chunk counts as relevant when it overlaps
the question's gold answer span (``biochunk.evaluation.chunking.span_hits`` defines P, R, F1).
Each setting is the ``chunk:`` section of ``--params`` with the setting's keys replaced, so the
project's defaults and the paper's settings sit in one table, each named. Dense retrieval is
the project's one dense search (``embed_search``, ``embed.model``; vectors cached per text in
``--cache``), BM25 is Pyserini with the paper's k1 / b, reported in its own table. Writes
docs/results/clinical.md (the marked blocks) and docs/results/data/clinical-*.json.

Three more parts (``--parts``) need the generator, so they run on samples sized for two CPU cores:
``proposition`` runs the four-way comparison of the project defaults with proposition chunks on
``--proposition-articles`` articles (the generator rewrites every sentence); ``headers``
compares adaptive chunks with the project's noun-phrase micro-header, a 5-15-word title written
by ``chunk.generator`` and none, on ``--header-articles`` articles (one generator call per
chunk); ``non-response`` answers ``--answer-questions`` questions through the pipeline's QA
stages (qa_context -> generate_qa -> evaluate_qa, ``qa.decline: true``) with each chunk method's
context, the gold passage and none, and reports the share of answers that decline.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import logging
import os
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import pandas as pd
import yaml

from biochunk import chunking, cli, params
from biochunk.chunking.cluster import whole_clusters
from biochunk.chunking.runs import documents
from biochunk.datasets import qa
from biochunk.embedding import CountingEncoder, SentenceEncoder
from biochunk.errors import UserError
from biochunk.evaluation import compare
from biochunk.evaluation.chunking import span_hits
from biochunk.evaluation.papers import Difference, PaperTable, Row, mean_ci, paired_delta, publish
from biochunk.generation.rewrite import Rewriter
from biochunk.retrieval import bm25
from biochunk.retrieval.cache import CachedEncoder
from biochunk.retrieval.dense import embed_search
from biochunk.text.segment import sentence_spans

sys.path.insert(0, str(Path(__file__).resolve().parent))  # the sibling helper, also as benchmarks.papers.clinical
from stage_runner import apply_sets, run_stages

log = logging.getLogger("paper-clinical")

METRICS = ["precision@5", "recall@5", "f1@5"]
# Retrieval P / R / F1 of the paper (30 questions, k = 5).
PAPER = {
    "fixed": (0.17, 0.40, 0.24),
    "semantic": (0.33, 0.75, 0.46),
    "proposition": (0.38, 0.71, 0.49),
    "adaptive": (0.50, 0.88, 0.64),
}
# The paper's BM25 parameters (Pyserini's own defaults are 0.9 / 0.4).
BM25_K1, BM25_B = 1.2, 0.75


@dataclasses.dataclass(frozen=True)
class Setting:
    label: str  # the row's name in the table
    chunk: dict  # chunk.* keys replaced in the params file's chunk section
    paper: str  # the paper's row it stands against (a PAPER key)
    note: str
    whole_clusters: bool = False  # one chunk per cluster (chunking.cluster.whole_clusters)


REPAIR_WORDS = 25
# Every setting the script knows, in table order; --settings picks some.
SETTINGS = {
    "fixed": Setting("fixed", {"method": "fixed"}, "fixed", "project default: chunk.window-word windows"),
    "cluster": Setting("cluster", {"method": "cluster"}, "semantic", "project default: one chunk per run of a cluster"),
    "adaptive": Setting(
        "adaptive", {"method": "adaptive"}, "adaptive", "project default: clause units, min_words, phrase header"
    ),
    "fixed-250": Setting("fixed 250/50", {"method": "fixed", "window": 250, "overlap": 50}, "fixed", "paper sweep, in words"),
    "fixed-400": Setting("fixed 400/50", {"method": "fixed", "window": 400, "overlap": 50}, "fixed", "paper sweep, in words"),
    "fixed-600": Setting("fixed 600/50", {"method": "fixed", "window": 600, "overlap": 50}, "fixed", "paper sweep, in words"),
    "cluster-whole": Setting(
        "cluster whole",
        {"method": "cluster"},
        "semantic",
        "paper form: one chunk per cluster",
        whole_clusters=True,
    ),
    "adaptive-sentence": Setting(
        "adaptive sentence",
        {"method": "adaptive", "unit": "sentence", "min_words": 0},
        "adaptive",
        "paper form: sentence units, no minimum",
    ),
    # The study's ≤ 30-token overlap, in the project's words: spaCy gives 1.22 tokens per word on COVID-QA.
    "adaptive-repair": Setting(
        "adaptive sentence + repair",
        {"method": "adaptive", "unit": "sentence", "min_words": 0, "boundary_overlap": REPAIR_WORDS},
        "adaptive",
        f"paper form: sentence units, no minimum, boundary-repair overlap of ≤ {REPAIR_WORDS} words (≈ 30 spaCy tokens)",
    ),
    "proposition": Setting("proposition", {"method": "proposition"}, "proposition", "chunk.generator rewrites each sentence"),
}
DEFAULT_SETTINGS = [
    "fixed", "cluster", "adaptive", "fixed-250", "fixed-400", "fixed-600", "cluster-whole", "adaptive-sentence", "adaptive-repair",
]  # fmt: skip
# The four-way comparisons (ANOVA + Tukey), each among the settings present: the project's
# defaults, and the paper's forms (fixed: the sweep's 250 words, the nearest to what MiniLM reads).
GROUPS = {
    "project defaults": ["fixed", "cluster", "proposition", "adaptive"],
    "paper forms": ["fixed-250", "cluster-whole", "proposition", "adaptive-repair"],
}
# Published differences B − A (SETTINGS keys), within each group; pairs with a missing setting are skipped.
DIFFERENCES = [(a, b) for g in GROUPS.values() for a, b in [(g[0], g[3]), (g[0], g[1]), (g[1], g[3]), (g[0], g[2]), (g[2], g[3])]]
RETRIEVERS = ("dense", "bm25")


def spacy_tokens_per_word(docs) -> float | None:
    """spaCy's English tokens (no whitespace tokens) per whitespace word over ``docs``; None without spaCy."""
    try:
        import spacy
    except ImportError:
        return None
    tok = spacy.blank("en").tokenizer
    tokens = sum(sum(not t.is_space for t in tok(d.text)) for d in docs)
    return tokens / max(1, sum(len(d.text.split()) for d in docs))


def chunk_setting(docs, cp, s: Setting, encoder) -> pd.DataFrame:
    p = dataclasses.replace(cp, **s.chunk)
    p.validate("chunk")
    chunks = chunking.chunk_table(docs, chunking.build(p, encoder, rewriter=Rewriter))
    return whole_clusters(chunks) if s.whole_clusters else chunks


def scores_of(chunks: pd.DataFrame, hits: np.ndarray, qids: list[str], gold: pd.DataFrame) -> pd.DataFrame:
    return span_hits(chunks, hits, qids, gold).rename(columns={"precision": METRICS[0], "recall": METRICS[1], "f1": METRICS[2]})


def bm25_hits(chunks: pd.DataFrame, questions: list[str], qids: list[str], k: int, work: Path) -> np.ndarray:
    run = bm25.bm25_run(chunks["chunk_id"].tolist(), chunks["text"].tolist(), questions, qids, k, work / "index", BM25_K1, BM25_B)
    pos = {c: i for i, c in enumerate(chunks["chunk_id"])}
    hits = np.full((len(qids), k), -1, np.int64)
    for r, q in enumerate(qids):
        ids = [pos[d] for d, _ in run.get(q, [])][:k]
        hits[r, : len(ids)] = ids
    return hits


def table(
    section: str, title: str, retriever: str, scores: dict, settings: list[str], args, sample: str, models: str, wall: float
) -> PaperTable:
    rows = []
    for key in settings:
        s = SETTINGS[key]
        df = scores[(retriever, key)]
        ours = {m: mean_ci(df[m].to_numpy(), args.bootstrap, args.seed) for m in METRICS}
        rows.append(Row(s.label, dict(zip(METRICS, PAPER[s.paper])), ours, f"{s.note}; vs paper {s.paper}"))
    diffs = []
    for a, b in DIFFERENCES:
        if (retriever, a) not in scores or (retriever, b) not in scores:
            continue
        pa, pb = PAPER[SETTINGS[a].paper], PAPER[SETTINGS[b].paper]
        for i, m in enumerate(METRICS):
            x, y = scores[(retriever, a)][m].to_numpy(), scores[(retriever, b)][m].to_numpy()
            diffs.append(
                Difference(
                    f"{SETTINGS[b].label} − {SETTINGS[a].label}",
                    m,
                    round(pb[i] - pa[i], 10),
                    paired_delta(x, y, args.bootstrap, args.seed),
                )
            )
    return PaperTable(
        paper="clinical",
        section=section,
        title=title,
        command=args.command,
        sample=sample,
        models=models,
        wall_s=wall,
        metrics=METRICS,
        rows=rows,
        differences=diffs,
        notes=repair_note(retriever, scores, args) + anova_notes(retriever, scores, settings, args),
    )


def repair_note(retriever: str, scores: dict, args) -> list[str]:
    """The boundary-repair overlap's own effect: the same sentence chunks with and without it."""
    a, b = (retriever, "adaptive-sentence"), (retriever, "adaptive-repair")
    if a not in scores or b not in scores:
        return []
    parts = []
    for m in METRICS:
        d = paired_delta(scores[a][m].to_numpy(), scores[b][m].to_numpy(), args.bootstrap, args.seed)
        parts.append(f"{m} {d.fmt(signed=True)}")
    return [
        f"Boundary-repair overlap alone ({SETTINGS['adaptive-repair'].label} − {SETTINGS['adaptive-sentence'].label}, paired): "
        + "; ".join(parts)
        + "."
    ]


def anova_notes(retriever: str, scores: dict, settings: list[str], args) -> list[str]:
    """One-way ANOVA + Tukey HSD on per-question F1 within each of GROUPS, with effect sizes."""
    out = []
    for name, group in GROUPS.items():
        present = [k for k in group if (retriever, k) in scores]
        if len(present) >= 2:
            out += anova_note(name, [(SETTINGS[k].label, scores[(retriever, k)]) for k in present])
    return out


def anova_note(name: str, groups: list[tuple[str, pd.DataFrame]]) -> list[str]:
    long = pd.concat([df.assign(method=label) for label, df in groups], ignore_index=True)
    m = METRICS[2]
    a, tk = compare.anova(long, m), compare.tukey(long, m)
    out = [
        "",
        (
            f"{name}, {m}: one-way ANOVA across {', '.join(label for label, _ in groups)}: F({a['df_between']}, {a['df_within']}) = "
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


PARTS = ("retrieval", "proposition", "headers", "non-response")
# Generator-written micro-headers against the project's: adaptive (project defaults) with each
# chunk.header, on a seeded sample of articles (one generator call per chunk).
HEADERS = [
    ("phrase", "project default: a noun-phrase micro-header"),
    ("generator", "a title of 5–15 words written by chunk.generator (the paper: a BART summariser)"),
    ("none", "no header"),
]
# The non-response rate: the QA stages answer with each chunk method's retrieved context
# (qa.methods: the project defaults of the study's methods but proposition), the gold passage and
# none; qa.decline lets the model say the context lacks the answer.
ANSWER_METHODS = ["fixed", "cluster", "adaptive"]
ANSWER_ARMS = {
    "fixed": "fixed (project default, retrieved)",
    "cluster": "cluster (project default, retrieved)",
    "adaptive": "adaptive (project default, retrieved)",
    "gold": "gold passage",
    "none": "no context",
}
ANSWER_METRICS = {"non-response": "declined", "context holds the answer": "context_has_answer", "ROUGE-2 F1": "rouge2_f1"}


def article_sample(data: qa.QAData, n: int, seed: int) -> tuple[list, pd.DataFrame]:
    """A seeded sample of ``n`` articles and every question whose gold span lies in one of them."""
    docs = documents(data.corpus)
    rng = np.random.default_rng(seed)
    keep = set(rng.choice(sorted(d.doc_id for d in docs), size=min(n, len(docs)), replace=False).tolist())
    asked = set(data.gold.loc[data.gold["doc_id"].astype(str).isin(keep), "question_id"].astype(str))
    return [d for d in docs if d.doc_id in keep], data.items[data.items["id"].astype(str).isin(asked)]


def headers_table(args, data: qa.QAData, cp, ep, encoder: CachedEncoder) -> PaperTable:
    """Dense P / R / F1 @ k of adaptive chunks with each kind of micro-header (paired over questions)."""
    t0 = time.perf_counter()
    docs, items = article_sample(data, args.header_articles, args.seed)
    qids, questions = items["id"].astype(str).tolist(), items["question"].astype(str).tolist()
    qvecs = encoder.encode(questions)
    scores, sizes, titles = {}, {}, {}
    for header, _ in HEADERS:
        s = Setting(header, {"method": "adaptive", "header": header}, "adaptive", "")
        chunks = chunk_setting(docs, cp, s, encoder)
        _, hits = embed_search(encoder, chunks, qvecs, args.k, use_gpu="auto")
        scores[header] = scores_of(chunks, hits, qids, data.gold)
        sizes[header] = len(chunks)
        titles[header] = [json.loads(m).get("header", "") for m in chunks["metadata"].head(3)]
        log.info(
            "header %s: %d chunks, F1 %.3f (%.0f s)",
            header,
            len(chunks),
            scores[header][METRICS[2]].mean(),
            time.perf_counter() - t0,
        )
    rows = [
        Row(
            f"adaptive, {header} header",
            dict(zip(METRICS, PAPER["adaptive"])),
            {m: mean_ci(scores[header][m].to_numpy(), args.bootstrap, args.seed) for m in METRICS},
            note,
        )
        for header, note in HEADERS
    ]
    diffs = [
        Difference(
            f"{b} header − {a} header",
            m,
            None,
            paired_delta(scores[a][m].to_numpy(), scores[b][m].to_numpy(), args.bootstrap, args.seed),
        )
        for a, b in [("phrase", "generator"), ("none", "generator"), ("none", "phrase")]
        for m in METRICS
    ]
    return PaperTable(
        paper="clinical",
        section="headers",
        title="Micro-headers: generator-written titles against the project's, dense P / R / F1 @ 5, COVID-QA",
        command=args.command,
        sample=(
            f"{len(qids)} COVID-QA questions about a seeded sample of {len(docs)} articles (--header-articles), their chunks "
            f"pooled in one index; k = {args.k}; {sizes['phrase']:,} adaptive chunks (the same cuts in every row)"
        ),
        models=f"embedder {ep.model} (embed.model); header writer {cp.generator} (chunk.generator)",
        wall_s=time.perf_counter() - t0,
        metrics=METRICS,
        rows=rows,
        differences=diffs,
        notes=[
            (
                "The paper's figures are its adaptive row (with BART micro-headers); the paper reports no header ablation, "
                "so no difference has a published direction. A header is embedded with its chunk and is outside the chunk's "
                "offsets, so the rows differ only in what the embedder reads."
            ),
            "",
            "The first three chunks' headers, generator: "
            + "; ".join(f"“{t}”" for t in titles["generator"])
            + "; noun phrase: "
            + "; ".join(f"“{t}”" for t in titles["phrase"]),
        ],
    )


def proposition_table(args, data: qa.QAData, cp, ep, encoder: CachedEncoder) -> PaperTable:
    """The four-way comparison of the project defaults with proposition, dense P / R / F1 @ k, on a
    seeded sample of articles: proposition has the generator rewrite every sentence."""
    t0 = time.perf_counter()
    docs, items = article_sample(data, args.proposition_articles, args.seed)
    qids, questions = items["id"].astype(str).tolist(), items["question"].astype(str).tolist()
    qvecs = encoder.encode(questions)
    keys = GROUPS["project defaults"]
    scores, sizes, fallback, written = {}, {}, 0, 0
    for key in keys:
        chunks = chunk_setting(docs, cp, SETTINGS[key], encoder)
        _, hits = embed_search(encoder, chunks, qvecs, args.k, use_gpu="auto")
        scores[("dense", key)] = scores_of(chunks, hits, qids, data.gold)
        sizes[key] = (len(chunks), float(chunks["n_tokens"].mean()))
        if key == "proposition":
            metas = [json.loads(m) for m in chunks["metadata"]]
            fallback = sum(m.get("fallback", 0) for m in metas)
            written = sum(len(m.get("propositions", [])) for m in metas)
        log.info(
            "%s: %d chunks, F1 %.3f (%.0f s)",
            key,
            len(chunks),
            scores[("dense", key)][METRICS[2]].mean(),
            time.perf_counter() - t0,
        )
    sentences = sum(len(sentence_spans(d.text)) for d in docs)
    sample = (
        f"{len(qids)} COVID-QA questions about a seeded sample of {len(docs)} articles (--proposition-articles; "
        f"{sentences:,} sentences), their chunks pooled in one index; k = {args.k}. Chunks: "
        + ", ".join(f"{SETTINGS[k].label} {n:,} (mean {m:.0f} words)" for k, (n, m) in sizes.items())
    )
    t = table(
        "proposition",
        "Retrieval P / R / F1 @ 5 with proposition, dense (MiniLM), COVID-QA sample",
        "dense",
        scores,
        keys,
        args,
        sample,
        f"embedder {ep.model} (embed.model); proposition writer {cp.generator} (chunk.generator, temperature 0.2, "
        "≤ 256 new tokens per sentence)",
        time.perf_counter() - t0,
    )
    t.notes = [
        (
            f"The generator wrote {written:,} propositions; {fallback:,} sentences got none usable and stand for "
            'themselves (`metadata["fallback"]`). The same articles and questions in every row, so the differences '
            "are paired; the full-corpus rows above lack proposition."
        ),
        "",
    ] + t.notes
    return t


def answer_params(args) -> dict:
    """The committed params with the non-response run's settings on top."""
    p = yaml.safe_load(Path(args.params).read_text())
    p["qa"].update(
        methods=ANSWER_METHODS,
        contexts=["retrieved", "gold", "none"],
        corpus="sampled",
        max_questions=args.answer_questions,
        decline=True,
    )
    return p


def non_response_table(args) -> PaperTable:
    """Answers through qa_context -> generate_qa -> evaluate_qa; the share that decline, per arm."""
    out, pf = args.answers_out, args.answers_out / "params.yaml"
    done = out / "wall_s.json"
    if args.publish_only:  # the table again from a finished run
        if not done.is_file():
            raise UserError(f"{out}: no finished non-response run here (no wall_s.json); run without --publish-only first")
    else:
        out.mkdir(parents=True, exist_ok=True)
        pf.write_text(yaml.safe_dump(answer_params(args), sort_keys=False))
        params.load(pf)  # one clear error line before any work
        wall = run_stages(
            [
                ["qa_context.py", "--dataset", "covidqa", "--data", str(args.data), "--out", str(out / "qa")],
                ["generate_qa.py", "--qa", str(out / "qa"), "--out", str(out / "answers")],
                [
                    "evaluate_qa.py", "--dataset", "covidqa", "--qa", str(out / "qa"), "--answers", str(out / "answers"),
                    "--metrics", str(out / "metrics.json"), "--report", str(out / "report"), "--plots", str(out / "plots"),
                ],
            ],
            pf,
        )  # fmt: skip
        done.write_text(json.dumps({"wall_s": wall}))
    wall = json.loads(done.read_text())["wall_s"]
    p = params.load(pf)
    scores = pd.read_csv(out / "report" / "scores.csv", dtype={"question_id": str}).sort_values(["method", "question_id"])
    by = {m: g for m, g in scores.groupby("method")}
    rows = [
        Row(
            label, {}, {name: mean_ci(by[arm][col].to_numpy(), args.bootstrap, args.seed) for name, col in ANSWER_METRICS.items()}
        )
        for arm, label in ANSWER_ARMS.items()
        if arm in by
    ]
    diffs = [
        Difference(
            f"{b} − {a}",
            "non-response",
            None,
            paired_delta(by[a]["declined"].to_numpy(), by[b]["declined"].to_numpy(), args.bootstrap, args.seed),
        )
        for a, b in [
            ("fixed", "adaptive"),
            ("fixed", "cluster"),
            ("cluster", "adaptive"),
            ("gold", "adaptive"),
            ("none", "adaptive"),
        ]
        if a in by and b in by
    ]
    gen = json.loads((out / "answers" / "report.json").read_text())
    n = len(next(iter(by.values())))
    return PaperTable(
        paper="clinical",
        section="non-response",
        title="Non-response rate: answers that decline, per chunk method, COVID-QA",
        command=args.command,
        sample=(
            f"{n} COVID-QA questions (a seeded sample, --answer-questions; qa.corpus: sampled, i.e. the articles of the "
            f"sampled questions pooled), top {p['qa'].top_k} chunks within {p['qa'].context_words} words per prompt, "
            f"{p['qa'].n_examples} in-context example; every arm answers the same questions"
        ),
        models=f"generator {gen['model']} (generate.model), greedy, ≤ {p['qa'].max_new_tokens} new tokens; embedder {p['embed'].model}",
        wall_s=wall,
        metrics=list(ANSWER_METRICS),
        rows=rows,
        differences=diffs,
        notes=[
            (
                'Non-response: the answer is empty or declines (`biochunk.evaluation.answers.declined`: "the context does not '
                'say / mention ...", "not mentioned / stated ...", "no / not enough information", "I don\'t know", '
                '"cannot be answered / determined"). The system prompt allows it (`qa.decline: true`): "If the context '
                'passages do not contain the answer, reply only: The context does not say." The paper gives no figure to '
                "compare with (not in ../shared/docs/references.md)."
            ),
            "",
            (
                "Context holds the answer: the gold answer span appears whole in the context the model read. ROUGE-2 F1: "
                "against the gold span. Per-question scores: "
                f"`{out / 'report' / 'scores.csv'}`; generation took "
                f"{sum(m['seconds'] for m in gen['methods'].values()) / 60:.1f} min of the wall time."
            ),
        ],
    )


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--data", required=True, type=Path, help="converted COVID-QA folder (documents + answers)")
    ap.add_argument("--params", default="params.yaml")
    ap.add_argument("--settings", default=",".join(DEFAULT_SETTINGS), help=f"comma-separated; known: {', '.join(SETTINGS)}")
    ap.add_argument("--retrievers", default="dense,bm25")
    ap.add_argument("--k", type=int, default=5)
    ap.add_argument("--max-questions", type=int, default=None, help="a seeded sample of the questions (default: all)")
    ap.add_argument("--cache", type=Path, default=Path("data/cache/embeddings"), help="embedding cache folder")
    ap.add_argument("--out", type=Path, default=Path("docs/results"))
    ap.add_argument("--scores", type=Path, default=None, help="also write every per-question score here (CSV)")
    ap.add_argument("--bootstrap", type=int, default=1000)
    ap.add_argument("--seed", type=int, default=42)
    ap.add_argument("--threads", type=int, default=None, help="torch threads (default: torch's choice)")
    ap.add_argument("--command", default="make paper-clinical", help="the command written into the tables")
    ap.add_argument("--parts", default=",".join(PARTS), help=f"comma-separated; known: {', '.join(PARTS)}")
    ap.add_argument(
        "--proposition-articles", type=int, default=2, help="proposition: a seeded sample of articles (every sentence rewritten)"
    )
    ap.add_argument("--header-articles", type=int, default=30, help="headers: a seeded sample of articles")
    ap.add_argument("--answer-questions", type=int, default=100, help="non-response: a seeded sample of questions answered")
    ap.add_argument(
        "--answers-out", type=Path, default=Path("build/paper-clinical"), help="non-response: the QA stages' run folder"
    )
    ap.add_argument(
        "--publish-only", action="store_true", help="non-response: the table again from the finished run in --answers-out"
    )
    ap.add_argument(
        "--set",
        action="append",
        default=[],
        help="section.key=value on top of --params (e.g. generate.model=..., chunk.generator=...)",
    )
    args = ap.parse_args()
    settings = [s for s in args.settings.split(",") if s]
    retrievers = [r for r in args.retrievers.split(",") if r]
    for s in settings:
        if s not in SETTINGS:
            raise UserError(f"--settings: unknown setting {s!r}; known: {', '.join(SETTINGS)}")
    parts = [p for p in args.parts.split(",") if p]
    for part in parts:
        if part not in PARTS:
            raise UserError(f"--parts: unknown part {part!r}; known: {', '.join(PARTS)}")
    for flag in ("proposition_articles", "header_articles", "answer_questions"):
        if getattr(args, flag) < 1:
            raise UserError(f"--{flag.replace('_', '-')} must be >= 1, got {getattr(args, flag)}")
    for r in retrievers:
        if r not in RETRIEVERS:
            raise UserError(f"--retrievers: unknown retriever {r!r}; known: {', '.join(RETRIEVERS)}")
    if args.k != 5:
        raise UserError("--k: the paper's figures are at k = 5; the table's metric names say so")
    if args.max_questions is not None and args.max_questions < 1:
        raise UserError(f"--max-questions must be >= 1, got {args.max_questions}")
    if not (args.data / "documents.parquet").is_file():
        raise UserError(f"--data: no documents.parquet in {args.data}; convert COVID-QA first (make paper-clinical does)")
    if args.set:  # --set reaches every part: the params with the overrides, checked before any work
        args.answers_out.mkdir(parents=True, exist_ok=True)
        merged = args.answers_out / "params-set.yaml"
        merged.write_text(yaml.safe_dump(apply_sets(yaml.safe_load(Path(args.params).read_text()), args.set), sort_keys=False))
        params.load(merged)
        args.params = merged
    cp = params.section("chunk", args.params)
    ep = params.section("embed", args.params)
    if args.threads:
        import torch

        torch.set_num_threads(args.threads)
    data = qa.load("covidqa", args.data, seed=args.seed)
    # One embedder for every part (loaded once); vectors cached per text in --cache. The
    # counter is read by the retrieval part, which runs first.
    counting = CountingEncoder(SentenceEncoder(ep.model, ep.batch_size, ep.device))
    encoder = CachedEncoder(counting, args.cache)
    if "retrieval" in parts:
        retrieval(args, settings, retrievers, data, cp, ep, encoder, counting)
    if "proposition" in parts:
        publish(proposition_table(args, data, cp, ep, encoder), args.out)
    if "headers" in parts:
        publish(headers_table(args, data, cp, ep, encoder), args.out)
    if "non-response" in parts:
        publish(non_response_table(args), args.out)
    log.info("published in %s", args.out)


def retrieval(
    args, settings: list[str], retrievers: list[str], data: qa.QAData, cp, ep, encoder: CachedEncoder, counting: CountingEncoder
) -> None:
    """The four-way comparison: every setting's chunks of all articles, dense and BM25 top k."""
    t_start = time.perf_counter()
    items = data.items
    if args.max_questions is not None and len(items) > args.max_questions:
        items = items.sample(n=args.max_questions, random_state=args.seed)
    qids, questions = items["id"].astype(str).tolist(), items["question"].astype(str).tolist()
    docs = documents(data.corpus)
    qvecs = encoder.encode(questions) if "dense" in retrievers else None
    scores: dict[tuple[str, str], pd.DataFrame] = {}
    sizes = {}
    with tempfile.TemporaryDirectory(prefix="clinical-bm25-") as tmp:
        for key in settings:
            t0 = time.perf_counter()
            chunks = chunk_setting(docs, cp, SETTINGS[key], encoder)
            sizes[key] = (len(chunks), float(chunks["n_tokens"].mean()))
            log.info("%s: %d chunks in %.0f s", key, len(chunks), time.perf_counter() - t0)
            if "dense" in retrievers:
                _, hits = embed_search(encoder, chunks, qvecs, args.k, use_gpu="auto")
                scores[("dense", key)] = scores_of(chunks, hits, qids, data.gold)
            if "bm25" in retrievers:
                hits = bm25_hits(chunks, questions, qids, args.k, Path(tmp) / key)
                scores[("bm25", key)] = scores_of(chunks, hits, qids, data.gold)
            log.info(
                "%s: done in %.0f s: %s",
                key,
                time.perf_counter() - t0,
                {r: scores[(r, key)][METRICS[2]].mean() for r in retrievers},
            )
    wall = time.perf_counter() - t_start
    if args.scores:
        pd.concat([df.assign(retriever=r, setting=k) for (r, k), df in scores.items()]).to_csv(args.scores, index=False)
    sample = (
        f"{len(qids)} COVID-QA questions ({'all' if args.max_questions is None else 'a seeded sample'}; the paper: 30), "
        f"each with one gold answer span; the chunks of all {len(docs)} articles pooled in one index; k = {args.k}. "
        + "Chunks: "
        + ", ".join(f"{SETTINGS[k].label} {n:,} (mean {m:.0f} words)" for k, (n, m) in sizes.items())
    )
    models = f"embedder {ep.model} (embed.model); no generator"
    not_run = (
        []
        if "proposition" in settings
        else [
            (
                "proposition (paper 0.38 / 0.71 / 0.49)",
                (
                    "the generator rewrites every sentence (14,798 in COVID-QA; SmolLM2-135M rewrote 0.44 sentences/s "
                    "on two free cores, about 9 h): on a GPU, add it with `--settings fixed,cluster,proposition,adaptive`; on a sample of "
                    "articles: the proposition table"
                ),
            ),
            (
                "proposition in the ANOVA + Tukey",
                "the four-way comparisons lack proposition (above); the three-way ones are below, a four-way one on a sample in the proposition table",
            ),
        ]
    )
    not_run += [
        (SETTINGS[k].label, "left out of this run (`--settings`); the command without `--settings` runs it")
        for k in DEFAULT_SETTINGS
        if k not in settings
    ]
    not_run += [
        (
            "adaptive: BART micro-headers",
            "no BART summariser ships offline; the rows use the noun-phrase header (generator headers: their own table)",
        ),
    ]
    sweep = [k for k in settings if k.startswith("fixed-")]
    notes = [
        (
            f"This run embedded {counting.texts:,} texts and read the others from the embedding cache ({args.cache}); "
            "the wall time above is this run's."
        )
    ]
    if sweep:
        ratio = spacy_tokens_per_word(docs)
        per = (
            "spaCy is not installed here"
            if ratio is None
            else f"on COVID-QA spaCy's English tokenizer gives {ratio:.2f} tokens per word"
        )
        notes.append(
            "The paper's fixed windows count spaCy tokens; this project's fixed windows count whitespace words "
            f"(chunk.window / chunk.overlap), and {per}."
        )
    if "dense" in retrievers:
        seq = getattr(encoder.model, "max_seq_length", None)
        notes.append(
            f"The embedder reads the first {seq} word pieces of a chunk (its max_seq_length); the rest of a longer chunk is not embedded."
        )
    if "dense" in retrievers:
        t = table(
            "retrieval",
            "Retrieval P / R / F1 @ 5, dense (MiniLM), COVID-QA",
            "dense",
            scores,
            settings,
            args,
            sample,
            models,
            wall,
        )
        t.not_run = not_run
        t.notes = [line for n in notes for line in (n, "")] + t.notes
        publish(t, args.out)
    if "bm25" in retrievers:
        t = table(
            "bm25",
            f"Retrieval P / R / F1 @ 5, BM25 (k1 {BM25_K1}, b {BM25_B}), COVID-QA",
            "bm25",
            scores,
            settings,
            args,
            sample,
            f"BM25 (Pyserini, k1 {BM25_K1}, b {BM25_B}); the paper's figures are for its own retriever",
            wall,
        )
        publish(t, args.out)


if __name__ == "__main__":
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
    cli.run(main)
