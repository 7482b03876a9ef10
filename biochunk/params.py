"""A typed, validated view of params.yaml: one dataclass per stage section.

``load`` checks the whole file (every section, ``data.*`` included) the first time a
stage asks for any section, so a user mistake anywhere in params.yaml fails in the first
second of whichever stage runs first, with a one-line message naming the key. Only
checks that need nothing but the file run here (types, ranges, finiteness, names);
whether a model or a mirror folder exists is checked by the stage that uses it, so an
unused optional setting never stops an unrelated stage.

params.yaml is trusted input (it names commands' arguments in dvc.yaml); dataset names
are still held to ``DATASET_NAME`` and ``data.local`` paths to ``LOCAL_PATH`` because DVC
puts them into shell command lines, and the YAML itself is read strictly (no duplicate
keys, anchors or aliases: ``parse_yaml_text``), which scripts/check_params.py also runs
before DVC parses the file in ``make repro``.

The repository's params.yaml (``DEFAULTS``) is the one place a param's default value is
written: the dataclasses below declare each key's type and checks, never its value. A key
(or a whole section) that a params file leaves out takes its value from ``DEFAULTS``, and
``defaults(section)`` gives code without a params file (tests, benchmarks) the same values.
"""

from __future__ import annotations

import copy
import dataclasses
import json
import math
import os
import re
import types
import typing
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

import yaml

# The allowed values of a param come from the module that defines the concept (params is the
# top of the library's layers: it may import any of them; nothing in the library imports it).
from biochunk.chunking import NO_CHUNKING, base
from biochunk.chunking.adaptive import HEADERS, UNITS
from biochunk.chunking.biomedical.entities import ENTITY_MODES
from biochunk.chunking.biomedical.hierarchy import HIERARCHY_ORDERS
from biochunk.chunking.biomedical.selection import SELECTIONS
from biochunk.chunking.sizing import COUNTERS
from biochunk.chunking.structural import DISTANCES as STRUCTURAL_DISTANCES
from biochunk.compute import ENGINES
from biochunk.datasets.qa import BIOASQ_UNITS, QA_DATASETS
from biochunk.datasets.registry import DATASET_NAME, load_registry
from biochunk.errors import UserError
from biochunk.generation.model import QUANTIZE
from biochunk.retrieval.dense import INDEX_KINDS, USE_GPU
from biochunk.retrieval.fusion import AGGREGATIONS
from biochunk.retrieval.rank import QUERIES
from biochunk.retrieval.reshape import RANKS

T = TypeVar("T")

# The repository's params.yaml: every param's default value, and the only place one is written
# (tests/test_params.py fails if a dataclass field gets a default or the file lacks a field).
DEFAULTS = Path(__file__).resolve().parents[1] / "params.yaml"


def defaults_path() -> Path:
    """The params.yaml whose values a partial params file's missing keys take: that of the
    checkout the process runs in, else ``DEFAULTS`` (the one beside this package).

    DVC runs every stage at its repository's root, and a queued or ``--temp`` experiment in
    a copy of it whose params.yaml holds the experiment's ``-S`` values. The package is
    installed in editable mode from the workspace, so ``DEFAULTS`` there names the
    workspace's file: a stage of ``experiments/qa`` (whose files name a few keys each) would
    run on the workspace's values and DVC would record the experiment's."""
    here = Path.cwd()
    if (here / "params.yaml").is_file() and (here / "biochunk" / "params.py").is_file():
        return here / "params.yaml"
    return DEFAULTS


def _between(key: str, value: float | int | None, lo: float | None, hi: float | None) -> None:
    if value is None:
        return
    if (lo is not None and value < lo) or (hi is not None and value > hi):
        lo_s = "-inf" if lo is None else lo
        hi_s = "inf" if hi is None else hi
        raise UserError(f"{key} must be in [{lo_s}, {hi_s}], got {value}")


def _model_name(key: str, value: str) -> None:
    # Whether the model exists is the using stage's check (models.resolve); here only the shape.
    if not value.strip():
        raise UserError(f"{key} must name a model: an offline alias (minilm, smollm2-135m), a hub id or a local path")


def _one_of(key: str, value: str, allowed: typing.Iterable[str]) -> None:
    allowed = sorted(allowed)
    if value not in allowed:
        raise UserError(f"{key}: unknown value {value!r}; allowed: {', '.join(allowed)}")


# A data.local path goes unquoted into the compare stage's shell command (dvc.yaml) and is a
# DVC dependency: only characters that mean nothing to a shell or to DVC pass (an allow-list:
# a deny-list missed `>`, `#`, tabs and newlines). `~` is out too: the shell would expand it
# in the command while DVC checksums a folder literally named `~`.
LOCAL_PATH = re.compile(r"[A-Za-z0-9._/+-]+")


def _local_path(key: str, path: Any) -> None:
    if not isinstance(path, str) or not path.strip():
        raise UserError(f"{key} must be a path to a folder or file, got {path!r}")
    if path.startswith("-"):
        raise UserError(f"{key}: {path!r} starts with '-', which a command reads as an option; write ./{path}")
    bad = next((c for c in path if not LOCAL_PATH.fullmatch(c)), None)
    if bad is not None:
        hint = "write the full path instead of ~" if bad == "~" else "rename or move the corpus to such a path"
        raise UserError(
            f"{key}: {path!r} has {bad!r}; the path goes into a shell command, "
            f"so only letters, digits and . _ / + - may appear ({hint})"
        )


@dataclass(frozen=True)
class DataParams:
    # Read by dvc.yaml (foreach), not by a stage: download + convert run for `datasets`,
    # chunk -> evaluate for the triple-extraction datasets in `triples`.
    datasets: list[str]
    triples: list[str]
    # Long-document datasets among `datasets` that chunk_docs chunks with every method.
    documents: list[str]
    # QA datasets (bioasq, covidqa) answered through qa_context -> generate_qa -> evaluate_qa.
    qa: list[str]
    # Classification datasets (ade) answered yes/no through retrieval + generation.
    classification: list[str]
    # Retrieval (scifact) and QA (bioasq) datasets among `datasets` that train_reranker + retrieve run on.
    retrieval: list[str]
    # Your own corpora (docs/your-corpus.md): name -> a folder of documents, a BEIR folder or a
    # SQuAD .json file, each compared by the compare stage (the path is a checksummed dep).
    local: dict[str, str]

    def validate(self, s: str) -> None:
        for name, path in self.local.items():
            if not DATASET_NAME.fullmatch(str(name)):
                raise UserError(f"{s}.local: corpus name {name!r} may use only a-z, 0-9, '_' and '-' (it names outputs)")
            _local_path(f"{s}.local.{name}", path)
        for key in ("datasets", "triples", "documents", "qa", "classification", "retrieval"):
            for i, name in enumerate(getattr(self, key)):
                if not DATASET_NAME.fullmatch(name):
                    raise UserError(
                        f"{s}.{key}[{i}]: dataset name {name!r} may use only a-z, 0-9, '_' and '-' (it goes into shell commands)"
                    )
        registry = load_registry()
        for name in self.datasets:
            _one_of(f"{s}.datasets", name, registry)
        for key, names, tasks, what in (
            ("triples", self.triples, ("triples",), "triple extraction"),
            ("documents", self.documents, ("documents",), "a long-document dataset"),
            ("retrieval", self.retrieval, ("retrieval", "qa"), "a retrieval or QA dataset"),
        ):
            for name in names:
                _one_of(f"{s}.{key}", name, registry)
                if name not in self.datasets:
                    raise UserError(f"{s}.{key}: {name!r} must also be listed in {s}.datasets (it needs download and convert)")
                if registry[name].task not in tasks:
                    raise UserError(f"{s}.{key}: {name!r} is a {registry[name].task} dataset, not {what}")
        for key, names, allowed in (("qa", self.qa, QA_DATASETS), ("classification", self.classification, ["ade"])):
            for name in names:
                _one_of(f"{s}.{key}", name, allowed)
                if name not in self.datasets:
                    raise UserError(f"{s}.{key}: {name!r} must also be listed in {s}.datasets (it needs download and convert)")


@dataclass(frozen=True)
class DownloadParams:
    # A directory laid out like ../shared/datasets; null fetches from the public URLs.
    mirror: str | None
    timeout_s: int

    def validate(self, s: str) -> None:
        _between(f"{s}.timeout_s", self.timeout_s, 1, None)


@dataclass(frozen=True)
class ConvertParams:
    # Skip (and count) malformed lines instead of stopping at the first one.
    skip_malformed: bool


# The chunk.* keys each method reads besides chunk.method: what its chunker's ``from_params``
# takes (adaptive's chunk.generator only for generated headers: ``ChunkParams.reads``). A key
# outside its method's list is inert under that method; the chunk stage warns when one changes
# (``ChunkParams.unread_changes``). tests/test_chunkers.py checks each list against what
# from_params reads. semchunk counts the embedder's tokens whatever chunk.counter says.
_SIZED = ("counter", "max_tokens")
CHUNK_READS: dict[str, tuple[str, ...]] = {
    "fixed": ("window", "overlap", *_SIZED),
    "adaptive": ("threshold", "max_words", "min_words", "unit", "boundary_overlap", "header", *_SIZED),
    "proposition": ("threshold", "max_words", "generator", *_SIZED),
    "recursive": ("chunk_size", "chunk_overlap", *_SIZED),
    "cluster": ("n_clusters", *_SIZED),
    **{m: ("breakpoint_amount", *_SIZED) for m in ("percentile", "stddev", "interquartile", "gradient")},
    "structural": ("alpha", "boundary_percentile", "structural_distance", *_SIZED),
    "semchunk": ("max_tokens",),
    "hybrid": ("entity_windows", "propositions", "tiers", "hierarchy", "hierarchy_order", "entities", *_SIZED),
}


@dataclass(frozen=True)
class ChunkParams:
    method: str
    window: int  # fixed: words per window
    overlap: int  # fixed: words shared by neighbouring windows
    threshold: float  # adaptive: cosine similarity needed to keep growing a chunk
    max_words: int  # adaptive: word cap per chunk; proposition: words of propositions per chunk
    min_words: int  # adaptive: shorter chunks are merged forward (0: off)
    unit: str  # adaptive: sentence | clause
    boundary_overlap: int  # adaptive: counter tokens of the previous chunk's end repeated at a chunk's start (study: 30)
    header: str  # adaptive micro-headers: phrase (noun phrase) | generator (a title by chunk.generator) | none
    generator: str  # proposition, header generator: the causal LM (alias, hub id or local path)
    chunk_size: int  # recursive: characters per chunk
    chunk_overlap: int  # recursive: characters shared by neighbouring chunks
    n_clusters: int  # cluster: k of k-means (fewer sentences: one cluster each)
    breakpoint_amount: float | None  # percentile|stddev|interquartile|gradient (null: 95, 3, 1.5, 95)
    alpha: float  # structural: weight of the semantic distance in the fusion
    boundary_percentile: float  # structural: cut where the fused distance exceeds this percentile
    structural_distance: str  # structural D_struct: euclidean (z-scored features) | similarity (authors' code)
    counter: str  # unit of max_tokens / n_tokens: words | chars | embedder (semchunk always: embedder)
    max_tokens: int | None  # hard maximum in the counter's tokens (null: none; semchunk: 256)
    # hybrid (configurable semantic chunking): switches of the ablation ladder
    entity_windows: bool  # entity-aware 8/3 windows that never split an entity
    propositions: bool  # proposition-first extraction around triggers
    tiers: bool  # tiered trigger bonuses (3/2/1) and trigger-centred windows
    hierarchy: bool  # relation hierarchy weights in the proposition priority
    hierarchy_order: str  # the hierarchy's weights as configured | flat (all equal) | inverted
    entities: str  # entity detector: regex | ner (spaCy)

    def validate(self, s: str) -> None:
        _one_of(f"{s}.method", self.method, base.methods())
        _between(f"{s}.window", self.window, 1, None)
        _between(f"{s}.overlap", self.overlap, 0, self.window - 1)
        _between(f"{s}.threshold", self.threshold, 0.0, 1.0)
        _between(f"{s}.max_words", self.max_words, 1, None)
        _between(f"{s}.min_words", self.min_words, 0, None)
        _one_of(f"{s}.unit", self.unit, UNITS)
        _between(f"{s}.boundary_overlap", self.boundary_overlap, 0, None)
        _one_of(f"{s}.header", self.header, HEADERS)
        _model_name(f"{s}.generator", self.generator)
        _between(f"{s}.chunk_size", self.chunk_size, 1, None)
        _between(f"{s}.chunk_overlap", self.chunk_overlap, 0, self.chunk_size - 1)
        _between(f"{s}.n_clusters", self.n_clusters, 1, None)
        # A percentile can not exceed 100; the other breakpoint rules take any multiple.
        percent = self.method in ("percentile", "gradient")
        _between(f"{s}.breakpoint_amount", self.breakpoint_amount, 0, 100 if percent else None)
        _between(f"{s}.alpha", self.alpha, 0.0, 1.0)
        _between(f"{s}.boundary_percentile", self.boundary_percentile, 0.0, 100.0)
        _one_of(f"{s}.structural_distance", self.structural_distance, STRUCTURAL_DISTANCES)
        _one_of(f"{s}.counter", self.counter, COUNTERS)
        _between(f"{s}.max_tokens", self.max_tokens, 1, None)
        _one_of(f"{s}.entities", self.entities, ENTITY_MODES)
        _one_of(f"{s}.hierarchy_order", self.hierarchy_order, HIERARCHY_ORDERS)
        self._relations(s)
        if not self.hierarchy and self.hierarchy_order != "paper":
            raise UserError(f"{s}.hierarchy_order: {self.hierarchy_order} orders the hierarchy, but {s}.hierarchy is false; set it true")

    def reads(self) -> frozenset[str]:
        """The chunk.* keys (without the prefix) whose values decide what ``method`` cuts."""
        keys = {"method", *CHUNK_READS[self.method]}
        if self.method == "adaptive" and self.header == "generator":
            keys.add("generator")  # the titles' model
        return frozenset(keys)

    def unread_changes(
        self,
        before: dict[str, Any],
        methods: Sequence[str] | None = None,
        methods_param: str = "chunk.method",
        replaced: Mapping[str, Any] | None = None,
        replaced_by: str = "",
    ) -> list[str]:
        """One line per chunk.* key whose value differs from ``before`` (``recorded()``: the
        last run's) while the stage does not read it: DVC re-runs the stage for such a change,
        and the chunks come out as they were.

        A stage that runs a list of methods in place of chunk.method (``methods``, the param
        ``methods_param`` names) reads a key when one of them does. ``replaced``: the values the
        stage takes from elsewhere (``replaced_by``: retrieve.chunk), so their chunk.* values are
        never read there (and what the methods read is decided with them: a replaced header).
        """
        replaced = replaced or {}
        runs = [self.method] if methods is None else list(methods)
        effective = dataclasses.replace(self, **replaced)
        read = set().union(*(dataclasses.replace(effective, method=m).reads() for m in runs))
        if methods is not None:
            read.discard("method")
        out = []
        for key in sorted(f.name for f in dataclasses.fields(self)):
            new = getattr(self, key)
            old = before.get(f"chunk.{key}", new)
            if old == new or (key in read and key not in replaced):
                continue
            readers = [m for m in CHUNK_READS if key in CHUNK_READS[m]]
            if key == "generator":
                readers.append("adaptive with chunk.header generator")
            if key in replaced:
                why, readers = f"{replaced_by} replaces it in this stage", []
            elif key == "method":
                why, readers = f"{methods_param} ({', '.join(runs)}) replaces it in this stage", []
            elif methods is None:
                why = f"chunk.method {self.method} does not read it"
            else:
                why = f"no method of {methods_param} ({', '.join(runs)}) reads it"
            by = f" (read by: {', '.join(readers)})" if readers else ""
            out.append(
                f"chunk.{key} changed since this stage last ran ({old!r} -> {new!r}), but {why}: "
                f"that change alone leaves the chunks as they were{by}"
            )
        return out

    def _relations(self, s: str) -> None:
        # Sizes that contradict each other (each within its own range). Checked whatever the
        # method: chunk_docs and qa run every method with these same settings. (overlap <
        # window and chunk_overlap < chunk_size are the ranges above.) Each concerns adaptive's
        # keys, so under another chunk.method the message says why it is checked at all.
        why = (
            "" if self.method == "adaptive"
            else f" ({s}.min_words and {s}.boundary_overlap are adaptive's, checked under chunk.method {self.method} too "
            "because chunk_docs, qa and retrieve can run adaptive with these settings)"
        )  # fmt: skip
        if self.min_words > self.max_words:
            raise UserError(
                f"{s}.min_words ({self.min_words}) is above {s}.max_words ({self.max_words}): no chunk could be both; "
                f"lower {s}.min_words or raise {s}.max_words{why}"
            )
        if self.max_tokens is not None and self.counter == "words" and self.min_words > self.max_tokens:
            raise UserError(
                f"{s}.min_words ({self.min_words}) is above {s}.max_tokens ({self.max_tokens} words): no chunk could be both; "
                f"lower {s}.min_words or raise {s}.max_tokens{why}"
            )
        # The repeated start of a chunk must leave room for new text inside the chunk's cap.
        cap, cap_key = (self.max_tokens, "max_tokens") if self.max_tokens is not None else (self.max_words, "max_words")
        if self.boundary_overlap and (self.max_tokens is not None or self.counter == "words") and self.boundary_overlap >= cap:
            raise UserError(
                f"{s}.boundary_overlap ({self.boundary_overlap}) must be below {s}.{cap_key} ({cap}): "
                f"a chunk would hold nothing but the previous chunk's end{why}"
            )


@dataclass(frozen=True)
class ChunkDocsParams:
    # Every method is run with the chunk.* settings, chunk.method replaced.
    methods: list[str]
    max_documents: int | None  # the first n documents only (null: all), for quick runs

    def validate(self, s: str) -> None:
        if not self.methods:
            raise UserError(f"{s}.methods must name at least one chunk method; allowed: {', '.join(base.methods())}")
        for m in self.methods:
            _one_of(f"{s}.methods", m, base.methods())
        repeated = sorted({m for m in self.methods if self.methods.count(m) > 1})
        if repeated:
            raise UserError(f"{s}.methods lists {', '.join(repeated)} more than once")
        _between(f"{s}.max_documents", self.max_documents, 1, None)


# The devices the encoder (sentence-transformers through models.pick_device) is given.
DEVICE = re.compile(r"auto|cpu|cuda|cuda:[0-9]+|mps")


def _device_present(key: str, device: str) -> None:
    """One line now, not a traceback when the first model loads after the stage's reading."""
    if not device.startswith(("cuda", "mps")):
        return
    import torch

    if device == "mps":
        if not torch.backends.mps.is_available():
            raise UserError(f"{key} is mps but torch sees no Apple GPU here; set {key}: auto (or cpu)")
        return
    count = torch.cuda.device_count() if torch.cuda.is_available() else 0
    index = int(device.partition(":")[2] or 0)
    if count == 0:
        raise UserError(f"{key} is {device} but torch sees no CUDA device here; set {key}: auto (or cpu)")
    if index >= count:
        raise UserError(
            f"{key} is {device} but torch sees {count} CUDA device(s) (cuda:0 to cuda:{count - 1}); pick one of them or auto"
        )


@dataclass(frozen=True)
class EmbedParams:
    model: str  # alias of an offline package, a hub id or a local path
    batch_size: int
    device: str  # auto picks cuda when present; cpu | cuda | cuda:N | mps

    def validate(self, s: str) -> None:
        _model_name(f"{s}.model", self.model)
        _between(f"{s}.batch_size", self.batch_size, 1, None)
        if not DEVICE.fullmatch(self.device):
            raise UserError(f"{s}.device: unknown device {self.device!r}; allowed: auto, cpu, cuda, cuda:N (N = 0, 1, ...), mps")


@dataclass(frozen=True)
class RankParams:
    # The selection rule of configurable semantic chunking (docs/hybrid.md, "Selection"): the
    # top_n chunks most similar to the query form the pool; `selection` orders it; the first
    # top_k go on to the chunk scorer, which re-orders them for the generator.
    top_k: int  # chunks passed on to the scorer (the paper's two slots)
    top_n: int  # pool depth: the N most similar chunks (bias: a proposition among them takes slot 2)
    selection: str  # bias | mixed | cosine; chunks without the hybrid chunker's metadata: cosine
    query: str  # sentence | relation (an oracle: the gold relations' definitions)
    use_gpu: str  # auto | yes | no: faiss-gpu when installed, else torch on CUDA (retrieval.dense)
    max_per_doc: int | None  # at most this many chunks of one source document in the pool (null: no cap)

    def validate(self, s: str) -> None:
        _between(f"{s}.top_k", self.top_k, 1, 1000)
        _between(f"{s}.top_n", self.top_n, 1, 1000)
        _one_of(f"{s}.selection", self.selection, SELECTIONS)
        _one_of(f"{s}.query", self.query, QUERIES)
        _between(f"{s}.max_per_doc", self.max_per_doc, 1, None)
        _one_of(f"{s}.use_gpu", self.use_gpu, USE_GPU)


@dataclass(frozen=True)
class RetrieveParams:
    # Chunk methods run under each retriever; `none` indexes whole documents. Dense (and the
    # hybrid of BM25 and dense) runs only for dense_methods: embedding every chunk is the
    # slow part on a CPU.
    bm25_methods: list[str]
    dense_methods: list[str]
    # chunk.* values replaced for retrieval (the triple pipeline's 5-word windows suit sentences,
    # not abstracts); every other chunk.* key keeps its value.
    chunk: dict[str, Any]
    depth: int  # hits retrieved per query (chunks, before mapping to documents)
    aggregate: str  # chunk -> document score: max (best chunk) | sum
    k1: float  # BM25 (Pyserini / Anserini defaults)
    b: float
    index: str  # FAISS index: flat (exact) | hnsw (approximate)
    use_gpu: str  # auto | yes | no: faiss-gpu when installed, else torch on CUDA (retrieval.dense)
    rrf_k: int  # reciprocal-rank fusion constant
    ks: list[int]  # cut-offs of recall@k, P@k, F1@k
    save_depth: int  # documents per query written to runs.parquet
    rerank_depth: int  # BM25 documents per query that the cross-encoder reorders
    # QA datasets: batches held out of reranker training; reranking and reshaping use them.
    qa_test_splits: list[str]
    reshape_questions: int | None  # held-out questions given reshaped contexts (null: all; settings: reshape.*)
    seed: int

    def validate(self, s: str) -> None:
        # hybrid reads a per-dataset trigger lexicon and relation hierarchy (triple datasets only).
        allowed = [NO_CHUNKING, *(m for m in base.methods() if m != "hybrid")]
        for key in ("bm25_methods", "dense_methods"):
            names = getattr(self, key)
            for m in names:
                _one_of(f"{s}.{key}", m, allowed)
            repeated = sorted({m for m in names if names.count(m) > 1})
            if repeated:
                raise UserError(f"{s}.{key} lists {', '.join(repeated)} more than once")
        fields_ = {f.name for f in dataclasses.fields(ChunkParams)}
        unknown = sorted(set(self.chunk) - fields_)
        if unknown:
            raise UserError(f"{s}.chunk.{unknown[0]}: not a chunk.* key; allowed: {', '.join(sorted(fields_ - {'method'}))}")
        if "method" in self.chunk:
            raise UserError(f"{s}.chunk.method: set the methods in {s}.bm25_methods / {s}.dense_methods instead")
        parse(ChunkParams, dict(self.chunk), f"{s}.chunk")  # over params.yaml's chunk.* (DEFAULTS)
        _between(f"{s}.depth", self.depth, 1, 100_000)
        _one_of(f"{s}.aggregate", self.aggregate, AGGREGATIONS)
        _between(f"{s}.k1", self.k1, 0.0, None)
        _between(f"{s}.b", self.b, 0.0, 1.0)
        _one_of(f"{s}.index", self.index, INDEX_KINDS)
        _one_of(f"{s}.use_gpu", self.use_gpu, USE_GPU)
        _between(f"{s}.rrf_k", self.rrf_k, 0, None)
        if not self.ks:
            raise UserError(f"{s}.ks must list at least one cut-off, e.g. [5, 10, 100]")
        for k in self.ks:
            _between(f"{s}.ks", k, 1, self.depth)
        _between(f"{s}.save_depth", self.save_depth, 1, self.depth)
        _between(f"{s}.rerank_depth", self.rerank_depth, 0, self.depth)
        _between(f"{s}.reshape_questions", self.reshape_questions, 0, None)

    def chunk_params(self, chunk: "ChunkParams", method: str) -> "ChunkParams":
        """``chunk`` with this section's overrides and ``method`` in place (validated)."""
        values = {f.name: getattr(chunk, f.name) for f in dataclasses.fields(ChunkParams)}
        return parse(ChunkParams, {**values, **self.chunk, "method": method}, "retrieve.chunk")


@dataclass(frozen=True)
class RerankerParams:
    # The offline alias is fine-tuned here; any other value is a ready cross-encoder (hub id or
    # local folder, e.g. cross-encoder/ms-marco-MiniLM-L-6-v2), used without training.
    model: str
    steps: int
    batch_size: int  # training queries per step, each with its positive and negatives
    negatives: int  # hard negatives per positive: BM25's top unjudged documents
    lr: float  # encoder
    head_lr: float  # the new one-logit head (random at the start: it needs a larger step)
    max_length: int  # query + passage tokens
    seed: int

    def validate(self, s: str) -> None:
        _model_name(f"{s}.model", self.model)
        _between(f"{s}.steps", self.steps, 0, None)
        _between(f"{s}.batch_size", self.batch_size, 1, None)
        _between(f"{s}.negatives", self.negatives, 1, 100)
        _between(f"{s}.lr", self.lr, 0.0, 1.0)
        _between(f"{s}.head_lr", self.head_lr, 0.0, 1.0)
        _between(f"{s}.max_length", self.max_length, 16, 4096)


@dataclass(frozen=True)
class ScorerParams:
    model: str
    steps: int
    batch_size: int  # training inputs per step (each with all its candidates)
    lr: float
    lora_r: int
    max_length: int
    # Training inputs re-scored for the generator's fine-tuning evidence (a seeded sample;
    # null: all). Re-scoring every GM-CIHT training input costs more than training the scorer.
    rescore_train: int | None
    seed: int

    def validate(self, s: str) -> None:
        _model_name(f"{s}.model", self.model)
        _between(f"{s}.steps", self.steps, 0, None)
        _between(f"{s}.rescore_train", self.rescore_train, 0, None)
        _between(f"{s}.batch_size", self.batch_size, 1, None)
        _between(f"{s}.lr", self.lr, 0.0, 1.0)
        _between(f"{s}.lora_r", self.lora_r, 1, 256)
        _between(f"{s}.max_length", self.max_length, 16, 4096)


@dataclass(frozen=True)
class GenerateParams:
    model: str
    train_steps: int  # LoRA fine-tuning steps on the training split; 0: prompting only
    batch_size: int  # training examples per fine-tuning step
    gen_batch_size: int  # prompts decoded together
    lr: float
    lora_r: int
    n_examples: int  # in-context examples from the training split
    n_chunks: int  # re-scored chunks placed in the prompt (at most rank.top_k exist)
    max_new_tokens: int
    max_inputs: int | None  # cap on test inputs (null: all), for quick runs
    quantize: str  # auto: 4-bit NF4 when CUDA is present, else fp32
    seed: int

    def validate(self, s: str) -> None:
        _model_name(f"{s}.model", self.model)
        _between(f"{s}.train_steps", self.train_steps, 0, None)
        _between(f"{s}.batch_size", self.batch_size, 1, None)
        _between(f"{s}.gen_batch_size", self.gen_batch_size, 1, None)
        _between(f"{s}.lr", self.lr, 0.0, 1.0)
        _between(f"{s}.lora_r", self.lora_r, 1, 256)
        _between(f"{s}.n_examples", self.n_examples, 0, 10)
        _between(f"{s}.n_chunks", self.n_chunks, 0, 20)
        _between(f"{s}.max_new_tokens", self.max_new_tokens, 1, 2048)
        _between(f"{s}.max_inputs", self.max_inputs, 1, None)
        _one_of(f"{s}.quantize", self.quantize, QUANTIZE)


@dataclass(frozen=True)
class EvaluateParams:
    bootstrap: int
    seed: int

    def validate(self, s: str) -> None:
        _between(f"{s}.bootstrap", self.bootstrap, 0, None)


@dataclass(frozen=True)
class QAParams:
    # Chunk methods compared (each with the chunk.* settings, chunk.method replaced).
    methods: list[str]
    retriever: str  # how contexts are found (QA_CONTEXTS is the seam for other retrievers)
    corpus: str  # pooled: every question's gold passages / all articles; sampled: only the sampled questions'
    top_k: int  # chunks retrieved per question and method
    context_words: int  # words of retrieved text in a prompt (the same for every method)
    max_questions: int | None  # questions answered (a seeded sample; null: all)
    example_split: str  # split the in-context examples come from (auto: BioASQ 7B1, COVID-QA dev)
    # Splits the answered questions come from ([]: every split but example_split); e.g. the
    # batches held out of reranker training (retrieve.qa_test_splits) for a trained reranker.
    question_splits: list[str]
    n_examples: int  # in-context examples: 0, 1 or 3 in the papers
    examples_by_type: bool  # n_examples of the answered question's own type (BioASQ yesno/factoid/list/summary)
    max_new_tokens: int
    # The system prompt lets the model reply "The context does not say." instead of guessing;
    # evaluate_qa counts non-responses (``declined``) either way.
    decline: bool
    # What the model reads, one arm each: retrieved (one arm per chunk method of `methods`),
    # reshaped (reshape.*), gold (the gold passages), none (no context).
    contexts: list[str]
    seed: int

    def validate(self, s: str) -> None:
        # Imported here, not at the top: retrieval.contexts pulls in torch (through the
        # cross-encoder), a second of start-up that every stage and CLI paid before its first
        # params error. tests/test_params.py checks that `import biochunk.params` stays torch-free.
        from biochunk.retrieval.contexts import CONTEXT_MODES, RETRIEVERS

        if not self.contexts:
            raise UserError(f"{s}.contexts must name at least one context; allowed: {', '.join(CONTEXT_MODES)}")
        for c in self.contexts:
            _one_of(f"{s}.contexts", c, CONTEXT_MODES)
        if len(set(self.contexts)) != len(self.contexts):
            raise UserError(f"{s}.contexts lists a context more than once")
        if not self.methods:
            raise UserError(f"{s}.methods must name at least one chunk method; allowed: {', '.join(base.methods())}")
        for m in self.methods:
            _one_of(f"{s}.methods", m, base.methods())
        if len(set(self.methods)) != len(self.methods):
            raise UserError(f"{s}.methods lists a method more than once")
        _one_of(f"{s}.retriever", self.retriever, RETRIEVERS)
        _one_of(f"{s}.corpus", self.corpus, ["pooled", "sampled"])
        _between(f"{s}.top_k", self.top_k, 1, 1000)
        _between(f"{s}.context_words", self.context_words, 1, 4000)
        _between(f"{s}.max_questions", self.max_questions, 1, None)
        if len(set(self.question_splits)) != len(self.question_splits):
            raise UserError(f"{s}.question_splits lists a split more than once")
        if self.example_split in self.question_splits:
            raise UserError(f"{s}.question_splits: {self.example_split} is {s}.example_split; examples are never answered")
        _between(f"{s}.n_examples", self.n_examples, 0, 10)
        _between(f"{s}.max_new_tokens", self.max_new_tokens, 1, 2048)


@dataclass(frozen=True)
class CorpusParams:
    # BioASQ's gold snippets as documents, the same for retrieval and QA (datasets.qa.bioasq_corpus).
    bioasq_unit: str  # record: one document per PubMed record | snippet: one per distinct snippet text

    def validate(self, s: str) -> None:
        _one_of(f"{s}.bioasq_unit", self.bioasq_unit, BIOASQ_UNITS)


@dataclass(frozen=True)
class ReshapeParams:
    # Context reshaping (retrieval.reshape), for retrieve's BioASQ contexts and qa.contexts: reshaped.
    passages: int  # retrieved passages split into sentences per question
    threshold: float  # community detection: cosine to a community's centre
    keep: int  # TextRank sentences kept per community (paper: 4, 10, 15)
    top_m: int  # communities kept, best first (paper: 5, 10)
    # Community order before the top_m cut: cosine (to the question) | crossencoder (reranker
    # below) | none (discovery order, largest first: the paper's "unranked topics").
    rank: str
    # rank crossencoder: minilm = the offline MiniLM with a fresh seeded head (untrained, a weak
    # ranker); or a train_reranker output folder or a hub cross-encoder id.
    reranker: str
    # Named settings, each one arm `reshaped:<name>` of qa.contexts (replaces the one `reshaped`
    # arm): a name and any of VARIANT_KEYS, the rest from this section. QA only.
    variants: list[dict[str, Any]]

    VARIANT_KEYS = ("passages", "threshold", "keep", "top_m", "rank", "reranker")

    def validate(self, s: str) -> None:
        _between(f"{s}.passages", self.passages, 1, 1000)
        _between(f"{s}.threshold", self.threshold, 0.0, 1.0)
        _between(f"{s}.keep", self.keep, 1, None)
        _between(f"{s}.top_m", self.top_m, 1, None)
        _one_of(f"{s}.rank", self.rank, RANKS)
        _model_name(f"{s}.reranker", self.reranker)
        names = []
        for i, v in enumerate(self.variants):
            key = f"{s}.variants[{i}]"
            name = v.get("name")
            if not isinstance(name, str) or not re.fullmatch(r"[A-Za-z0-9._-]+", name):
                raise UserError(f"{key}.name must be a short name (letters, digits, . _ -), got {name!r}")
            unknown = sorted(set(v) - {"name", *self.VARIANT_KEYS})
            if unknown:
                raise UserError(f"{key}.{unknown[0]}: not a variant key; allowed: name, {', '.join(self.VARIANT_KEYS)}")
            self._variant(v, key)
            names.append(name)
        repeated = sorted({n for n in names if names.count(n) > 1})
        if repeated:
            raise UserError(f"{s}.variants names {', '.join(repeated)} more than once")

    def expand(self) -> list[tuple[str, ReshapeParams]]:
        """(arm, settings) of every reshaped arm: ``reshaped`` itself, or one per variant."""
        if not self.variants:
            return [("reshaped", self)]
        return [(f"reshaped:{v['name']}", self._variant(v, f"reshape.variants[{i}]")) for i, v in enumerate(self.variants)]

    def _variant(self, v: dict[str, Any], key: str) -> ReshapeParams:
        values = {f.name: getattr(self, f.name) for f in dataclasses.fields(self) if f.name != "variants"}
        return parse(ReshapeParams, {**values, **{k: x for k, x in v.items() if k != "name"}, "variants": []}, key)


@dataclass(frozen=True)
class EvaluateQAParams:
    bertscore_model: str  # offline all-MiniLM-L6-v2; or a hub id / local path (e.g. roberta-large)
    bertscore_layers: int  # the layer whose token embeddings BERTScore compares
    bertscore_batch_size: int

    def validate(self, s: str) -> None:
        _model_name(f"{s}.bertscore_model", self.bertscore_model)
        _between(f"{s}.bertscore_layers", self.bertscore_layers, 1, 100)
        _between(f"{s}.bertscore_batch_size", self.bertscore_batch_size, 1, None)


@dataclass(frozen=True)
class ClassifyParams:
    # The memory: training sentences chunked by chunk.method; n_chunks retrieved per input.
    n_chunks: int
    n_examples: int  # in-context examples from the training split (a balanced seeded pick)
    max_inputs: int | None  # test sentences answered (a seeded sample; null: all)
    max_new_tokens: int
    seed: int

    def validate(self, s: str) -> None:
        _between(f"{s}.n_chunks", self.n_chunks, 0, 50)
        _between(f"{s}.n_examples", self.n_examples, 0, 10)
        _between(f"{s}.max_inputs", self.max_inputs, 1, None)
        _between(f"{s}.max_new_tokens", self.max_new_tokens, 1, 256)


# Where a Dask scheduler may be reached (distributed's own schemes for TCP and TLS).
SCHEDULER_ADDRESS = re.compile(r"(tcp|tls)://[^\s/]+:[0-9]{1,5}")


@dataclass(frozen=True)
class ComputeParams:
    """Where chunk and embed run their per-document / per-chunk work, and chunk_docs, qa_context
    and retrieve their embedding (biochunk.compute, docs/scale.md).

    ``engine``, ``address``, ``workers`` and ``threads_per_worker`` say *where* the work runs and
    cannot change what it computes (the same partitions run the same code); ``partition_rows``
    decides the partitions (and the output's Parquet row groups), so it is an input of the result.
    """

    engine: str  # local: in this process | dask: partitions on a Dask cluster
    address: str | None  # dask: an existing scheduler (tcp://host:8786); null starts a LocalCluster
    workers: int  # dask, no address: LocalCluster worker processes (each loads the model once)
    threads_per_worker: int  # dask: threads of each worker (and its torch thread count)
    partition_rows: int | None  # rows (documents / chunks) per partition; null: the whole input as one

    def validate(self, s: str) -> None:
        _one_of(f"{s}.engine", self.engine, ENGINES)
        if self.address is not None and not SCHEDULER_ADDRESS.fullmatch(self.address):
            raise UserError(f"{s}.address must be a scheduler address like tcp://10.0.0.5:8786 (or null), got {self.address!r}")
        port = None if self.address is None else int(self.address.rpartition(":")[2])
        if port is not None and not 1 <= port <= 65535:
            raise UserError(f"{s}.address: port {port} is not a TCP port (1 to 65535); the scheduler's is usually 8786")
        if self.address is not None and self.engine != "dask":
            raise UserError(f"{s}.address is set but {s}.engine is {self.engine!r}; set {s}.engine: dask to use the scheduler")
        _between(f"{s}.workers", self.workers, 1, 4096)
        _between(f"{s}.threads_per_worker", self.threads_per_worker, 1, 1024)
        _between(f"{s}.partition_rows", self.partition_rows, 1, None)
        if self.engine == "dask" and self.partition_rows is None:
            raise UserError(f"{s}.partition_rows must be set (e.g. 4096) when {s}.engine is dask: one partition runs on one worker")


SECTIONS: dict[str, type] = {
    "data": DataParams,
    "download": DownloadParams,
    "convert": ConvertParams,
    "chunk": ChunkParams,
    "chunk_docs": ChunkDocsParams,
    "embed": EmbedParams,
    "rank": RankParams,
    "retrieve": RetrieveParams,
    "train_reranker": RerankerParams,
    "train_scorer": ScorerParams,
    "generate": GenerateParams,
    "evaluate": EvaluateParams,
    "qa": QAParams,
    "corpus": CorpusParams,
    "reshape": ReshapeParams,
    "evaluate_qa": EvaluateQAParams,
    "classify": ClassifyParams,
    "compute": ComputeParams,
}


# A params file is a few KB of plain nested mappings. Bounds nothing legitimate comes near,
# so that a broken or hostile file fails in one line instead of hanging (DVC walks every
# value of params.yaml) or overflowing the stack (PyYAML composes nested nodes recursively).
MAX_PARAMS_BYTES = 1 << 20
MAX_PARAMS_DEPTH = 32


def load_yaml(path: str | Path = "params.yaml") -> dict[str, Any]:
    """The params file as plain data; refused in one line when it is not valid YAML, holds
    a duplicate key, an anchor or alias, nesting beyond ``MAX_PARAMS_DEPTH`` or more than
    ``MAX_PARAMS_BYTES`` (see ``parse_yaml_text``)."""
    p = Path(path)
    if not p.exists():
        raise UserError(f"params file not found: {p} (run from the repository root)")
    if not p.is_file():
        raise UserError(f"params file {p} is not a file; give the path of a YAML file such as params.yaml")
    size = p.stat().st_size
    if size > MAX_PARAMS_BYTES:
        raise UserError(f"{p}: {size:,} bytes; a params file is a few KB (at most {MAX_PARAMS_BYTES:,}): is it the right file?")
    try:
        text = p.read_text(encoding="utf-8")
    except OSError as e:
        raise UserError(f"{p}: cannot be read ({e.strerror or e})") from None
    except UnicodeDecodeError as e:
        raise UserError(f"{p}: not valid YAML: {e}".replace("\n", " ")) from None
    try:
        data = parse_yaml_text(text, str(p)) or {}
    except yaml.YAMLError as e:
        raise UserError(f"{p}: not valid YAML: {e}".replace("\n", " ")) from None
    if not isinstance(data, dict):
        raise UserError(f"{p}: expected a mapping of sections, got {type(data).__name__}")
    return data


def parse_yaml_text(text: str, name: str) -> Any:
    """``yaml.safe_load(text)`` without its three hazards, each a one-line UserError naming ``name``:

    - an alias (``*x``) repeats an anchored (``&x``) value: nine lines of aliases make a
      billion values, which DVC then walks forever ("billion laughs"); anchors and aliases
      are refused outright (params.yaml needs neither), before anything is built;
    - a duplicate key silently replaces the earlier value: refused, naming both lines;
    - deep nesting exhausts the stack: refused beyond ``MAX_PARAMS_DEPTH`` levels.
    """
    depth = 0
    # Events first: a flat stream, so neither an alias nor deep nesting is ever expanded.
    for event in yaml.parse(text, Loader=yaml.SafeLoader):
        line = event.start_mark.line + 1
        if isinstance(event, yaml.AliasEvent) or getattr(event, "anchor", None) is not None:
            mark = f"*{event.anchor}" if isinstance(event, yaml.AliasEvent) else f"&{event.anchor}"
            raise UserError(
                f"{name}:{line}: YAML anchors and aliases ({mark}) are not allowed in a params file "
                "(aliases can expand into billions of values); write the value out"
            )
        if isinstance(event, yaml.CollectionStartEvent):
            depth += 1
            if depth > MAX_PARAMS_DEPTH:
                raise UserError(f"{name}:{line}: nested more than {MAX_PARAMS_DEPTH} levels deep; a params file needs a few")
        elif isinstance(event, yaml.CollectionEndEvent):
            depth -= 1
    node = yaml.compose(text, Loader=yaml.SafeLoader)
    if node is None:
        return None
    _no_duplicate_keys(node, name, "")
    loader = yaml.SafeLoader("")
    try:
        return loader.construct_document(node)
    finally:
        loader.dispose()


def _no_duplicate_keys(node: yaml.Node, name: str, where: str) -> None:
    if isinstance(node, yaml.MappingNode):
        seen: dict[str, int] = {}
        for key, value in node.value:
            label = str(key.value) if isinstance(key, yaml.ScalarNode) else f"<{key.id} key>"
            dotted = f"{where}.{label}" if where else label
            line = key.start_mark.line + 1
            if label in seen:
                raise UserError(f"{name}:{line}: {dotted} is given twice (also at line {seen[label]}); keep one")
            seen[label] = line
            _no_duplicate_keys(value, name, dotted)
    elif isinstance(node, yaml.SequenceNode):
        for i, item in enumerate(node.value):
            _no_duplicate_keys(item, name, f"{where}[{i}]")


_LOADED: dict[tuple, dict[str, Any]] = {}


def load(path: str | Path = "params.yaml") -> dict[str, Any]:
    """Every section of the params file, parsed and validated: section name -> dataclass.

    Stages call it (through ``section``) before reading any input. Sections and keys the
    file lacks take their values from the repository's params.yaml (``defaults_path``); unknown
    sections are refused. Where a dvc.yaml lies beside the file, every key it lists under a
    stage's ``params:`` must be present, because DVC stops a stage whose listed param is
    missing only when that stage's turn comes.
    """
    p = Path(path)
    try:
        st, d = p.stat(), defaults_path()
        dst = d.stat()
        # The defaults are part of the result: a process that moves to another checkout reads again.
        key = (str(p.resolve()), st.st_mtime_ns, st.st_size, str(d), dst.st_mtime_ns, dst.st_size)
    except OSError:
        key = None
    if key is not None and key in _LOADED:
        return _LOADED[key]
    data = load_yaml(p)
    unknown = sorted(set(data) - set(SECTIONS))
    if unknown:
        raise UserError(f"{p}: {unknown[0]}: unknown section; allowed sections: {', '.join(SECTIONS)}")
    _require_dvc_params(p, data)
    loaded = {name: parse(cls, _raw_section(data, name), name) for name, cls in SECTIONS.items()}
    # On a remote Dask cluster (compute.address) the workers encode, and their GPUs are not this machine's.
    if loaded["compute"].address is None:
        _device_present("embed.device", loaded["embed"].device)
    if key is not None:
        _LOADED[key] = loaded
    return loaded


def _raw_section(data: dict[str, Any], name: str) -> Any:
    raw = data.get(name)
    return {} if raw is None else raw


def _require_dvc_params(path: Path, data: dict[str, Any]) -> None:
    dvc_yaml = path.parent / "dvc.yaml"
    if not dvc_yaml.is_file():
        return
    try:
        stages = (yaml.safe_load(dvc_yaml.read_text(encoding="utf-8")) or {}).get("stages") or {}
    except (yaml.YAMLError, UnicodeDecodeError, AttributeError):
        return  # DVC itself reports a broken dvc.yaml, with more context than we could
    for stage, spec in stages.items():
        body = (spec or {}).get("do", spec) or {}
        for entry in body.get("params") or []:
            if not isinstance(entry, str):
                continue  # {other_file.yaml: [...]}: not this file
            head, _, leaf = entry.partition(".")
            section_ = data.get(head)
            present = head in data and (not leaf or (isinstance(section_, dict) and leaf in section_))
            if present:
                continue
            hint = ""
            default = _default_data().get(head)
            if head in SECTIONS and leaf and isinstance(default, dict) and leaf in default:
                hint = f" (e.g. `{leaf}: {json.dumps(default[leaf])}` under `{head}:`)"
            raise UserError(f"{path}: {entry} is missing; {dvc_yaml.name} lists it for stage {stage}, add it{hint}")


_DEFAULT_DATA: dict[tuple[str, int, int], dict[str, Any]] = {}


def _default_data() -> dict[str, Any]:
    """``defaults_path()``'s file as plain data, read once (again only if the path or the file changes)."""
    path = defaults_path()
    try:
        st = path.stat()
    except OSError:
        raise UserError(
            f"default params file not found: {path}; biochunk reads every param's default from the repository's params.yaml"
        ) from None
    key = (str(path), st.st_mtime_ns, st.st_size)
    if key not in _DEFAULT_DATA:
        _DEFAULT_DATA.clear()
        _DEFAULT_DATA[key] = load_yaml(path)
    return _DEFAULT_DATA[key]


def _default_raw(cls: type) -> dict[str, Any]:
    """The ``DEFAULTS`` section of ``cls`` as plain data (a copy: parsed objects never share it)."""
    name = next((n for n, c in SECTIONS.items() if c is cls), None)
    raw = _default_data().get(name) if name is not None else None
    return copy.deepcopy(raw) if isinstance(raw, dict) else {}


def defaults(name: str, **overrides: Any) -> Any:
    """Section ``name`` as the repository's params.yaml sets it, with ``overrides`` replacing
    keys, for code that has no params file (tests, benchmarks).

    Like calling the dataclass itself, ``overrides`` are neither coerced nor checked (a test
    may build a chunker from sizes a params file could not hold); ``section(name, data=...)``
    checks them as a params file's.
    """
    base = parse(SECTIONS[name], {}, name)
    return dataclasses.replace(base, **overrides) if overrides else base


def section(name: str, path: str | Path = "params.yaml", data: dict[str, Any] | None = None) -> Any:
    """One validated section as its dataclass.

    From a file, the whole file is validated first (``load``); ``data`` (tests, tools)
    parses only the named section.
    """
    if data is None:
        return load(path)[name]
    return parse(SECTIONS[name], _raw_section(data, name), name)


def recorded(out: str | Path) -> dict[str, Any]:
    """The params (``section.key`` -> value) that dvc.lock recorded when DVC last ran the stage
    now running, which wrote ``out``: DVC names the stage in ``DVC_STAGE`` (``name``, or
    ``<dir>/dvc.yaml:name`` relative to where dvc was started) and the repository in ``DVC_ROOT``.

    {} outside DVC, before the stage's first run, or where the lock entry is not found or does
    not list ``out`` (dvc started in a subfolder): it serves warnings only, never the outputs.
    """
    stage, root = os.environ.get("DVC_STAGE"), os.environ.get("DVC_ROOT")
    if not stage or not root:
        return {}
    where, _, name = stage.rpartition(":")
    lock = Path(root) / Path(where).parent / "dvc.lock"
    try:
        # libyaml's loader where built: a paper pipeline's lock takes 0.9 s in pure Python.
        entry = yaml.load(lock.read_text(), Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader))["stages"][name]
        outs = {Path(o["path"]) for o in entry.get("outs", [])}
        files = entry.get("params") or {}
    except (OSError, yaml.YAMLError, KeyError, TypeError):
        return {}
    if Path(out) not in outs:
        return {}
    flat: dict[str, Any] = {}
    for values in files.values():
        for key, value in values.items():
            # A whole section is recorded as a mapping under its name, single keys dotted.
            if "." not in key and isinstance(value, dict):
                flat.update({f"{key}.{k}": v for k, v in value.items()})
            else:
                flat[key] = value
    return flat


# Keys that moved to another section: a params.yaml written before the move gets told where.
MOVED = {
    "chunk.ranking": "rank.selection",
    "chunk.top_n": "rank.top_n",
    **{f"retrieve.reshape_{k}": f"reshape.{k}" for k in ("passages", "threshold", "keep", "top_m")},
}


def parse(cls: type[T], raw: dict[str, Any], prefix: str) -> T:
    if not isinstance(raw, dict):
        raise UserError(f"{prefix} must be a mapping, got {raw!r}")
    fields = {f.name: f for f in dataclasses.fields(cls)}  # type: ignore[arg-type]
    unknown = sorted(set(raw) - set(fields))
    for key in unknown:
        if f"{prefix}.{key}" in MOVED:
            raise UserError(f"{prefix}.{key}: moved to {MOVED[prefix + '.' + key]}; rename it in params.yaml")
    if unknown:
        raise UserError(f"{prefix}.{unknown[0]}: unknown key; allowed keys: {', '.join(sorted(fields))}")
    # Keys the file leaves out: the repository's params.yaml (DEFAULTS), the one place defaults are written.
    merged = {**_default_raw(cls), **raw}
    absent = [k for k in fields if k not in merged]
    if absent:
        raise UserError(f"{prefix}.{absent[0]} is missing and {defaults_path()} does not set it either; add it there")
    hints = typing.get_type_hints(cls)
    # The file's own keys first, in its order: the first bad one is the one named.
    values = {k: _coerce(f"{prefix}.{k}", merged[k], hints[k]) for k in [*raw, *(k for k in fields if k not in raw)]}
    obj = cls(**values)
    if hasattr(obj, "validate"):
        obj.validate(prefix)
    return obj


def _coerce(key: str, value: Any, hint: Any) -> Any:
    origin = typing.get_origin(hint)
    args = typing.get_args(hint)
    if origin in (typing.Union, types.UnionType):
        if value is None and type(None) in args:
            return None
        (hint,) = [a for a in args if a is not type(None)]
        origin, args = typing.get_origin(hint), typing.get_args(hint)
    if origin is dict and not isinstance(value, dict):
        raise UserError(f"{key} must be a mapping, got {value!r}")
    if origin is list:
        if not isinstance(value, list):
            raise UserError(f"{key} must be a list, got {value!r}")
        return [_coerce(f"{key}[{i}]", v, args[0]) for i, v in enumerate(value)]
    if hint is bool:
        if not isinstance(value, bool):
            raise UserError(f"{key} must be true or false, got {value!r}")
        return value
    if hint is int:
        if isinstance(value, float) and not math.isfinite(value):
            raise UserError(f"{key} must be a finite integer, got {value!r}")
        if isinstance(value, bool) or not isinstance(value, int):
            raise UserError(f"{key} must be an integer, got {value!r}")
        return value
    if hint is float:
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise UserError(f"{key} must be a number, got {value!r}")
        # NaN passes every range check (each comparison is False) and inf is never a usable setting.
        if not math.isfinite(value):
            raise UserError(f"{key} must be a finite number, got {value!r}")
        return float(value)
    if hint is str:
        if not isinstance(value, str):
            raise UserError(f"{key} must be a string, got {value!r}")
        return value
    return value
