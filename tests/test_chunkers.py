"""Every registered chunker against the chunk contract, plus golden cases per method.

One helper (``verify_chunk_indices``, after chonkie's test helper of that name) checks
the contract for every method through ``pytest.mark.parametrize``: offsets map back
to the text, no empty chunk, the hard maximum holds, n_tokens is the counter's,
chunks come in text order and cover every non-whitespace character. Semantic
chunkers get a deterministic mock encoder (hashed bag of words), so only the tests
marked ``slow`` load anything (the MiniLM tokenizer).
"""

from __future__ import annotations

import itertools
import json
import re
import zlib
from collections import Counter
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from biochunk import params
from biochunk.chunking import Chunk, Chunker, Document, build, chunk_table, get, methods, models_used
from biochunk.chunking.adaptive import AdaptiveChunker
from biochunk.chunking.base import count_words
from biochunk.chunking.breakpoints import GradientChunker, InterquartileChunker, PercentileChunker, StdDevChunker
from biochunk.chunking.cluster import PIECE_SEPARATOR, ClusterChunker, whole_clusters
from biochunk.chunking.proposition import PropositionChunker
from biochunk.chunking.recursive import LANGCHAIN_SEPARATORS, SEPARATORS, RecursiveChunker
from biochunk.chunking.semchunk_chunker import SemchunkChunker
from biochunk.chunking.sizing import fit, make_counter
from biochunk.chunking.structural import FEATURES, StructuralChunker, features
from biochunk.errors import UserError
from biochunk.evaluation.chunking import chunk_pieces, cut_answers, gold_in_hits, judge, merge_pieces, overlaps, span_hits
from biochunk.params import ChunkParams
from biochunk.text.counting import CharSpans, Standalone, WordTable, count_chars, span_counter
from biochunk.text.headers import NO_HEADER, micro_header
from biochunk.text.segment import clause_spans, sentence_spans
from tests.forked import run_python

SHARED = Path(__file__).resolve().parents[2] / "shared" / "datasets"
SEMANTIC = ["adaptive", "percentile", "stddev", "interquartile", "gradient", "structural"]
# Methods that promise to cover every non-whitespace character of their input. All of
# these do: cluster through its runs (one chunk per run of consecutive sentences of a
# cluster), semchunk by dropping only the whitespace it splits at. A method added
# to the registry is checked for everything else until it is listed here.
COVERING = {"fixed", "recursive", "semchunk", "cluster", "proposition", *SEMANTIC}


# -- a deterministic encoder ---------------------------------------------------------


class MockEncoder:
    """Hashed bag of words, L2-normalised: equal texts get equal vectors, no model needed."""

    model_name = "mock"

    def __init__(self, dim: int = 32) -> None:
        self.dim = dim
        self.calls: list[list[str]] = []

    def encode(self, texts) -> np.ndarray:
        self.calls.append(list(texts))
        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        for i, t in enumerate(texts):
            for w in t.lower().split():
                out[i, zlib.crc32(w.encode("utf-8", "surrogatepass")) % self.dim] += 1.0
            n = np.linalg.norm(out[i])
            out[i] = out[i] / n if n else out[i]
        return out


class TableEncoder:
    """Vectors looked up by text: golden cases with distances worked out by hand."""

    def __init__(self, table: dict[str, list[float]]) -> None:
        self.table = table

    def encode(self, texts) -> np.ndarray:
        return np.asarray([self.table[t] for t in texts], dtype=np.float32)


def mock_propose(sentences) -> list[list[str]]:
    """Deterministic stand-in for the generator: clauses as propositions; none for a
    sentence that mentions "mice" (a model that writes nothing usable)."""
    return [[] if "mice" in s else [p.strip() for p in s.split(",") if p.strip()] for s in sentences]


def make(method: str, max_tokens: int | None = None, **overrides) -> Chunker:
    """A chunker for property tests: small sizes so short texts still get split."""
    if method == "semchunk":  # from_params needs the real tokenizer (slow tests); words here
        return SemchunkChunker(chunk_size=max_tokens or 12, counter=count_words)
    if method == "proposition":  # from_params loads the generator (slow test); a mock here
        return PropositionChunker(
            mock_propose, MockEncoder().encode, threshold=overrides.get("threshold", 0.8),
            max_words=overrides.get("max_words", 10), max_tokens=max_tokens,
        )  # fmt: skip
    p = {"method": method, "max_tokens": max_tokens, "chunk_size": 80, "chunk_overlap": 20, "n_clusters": 3, "min_words": 8}
    p.update(overrides)
    # The hybrid chunker reads a dataset's triggers and hierarchy: the embedded one's here.
    return build(params.defaults("chunk", **p), MockEncoder(), dataset="embedded")


# -- the one contract helper ---------------------------------------------------------


def verify_chunk_indices(chunks: list[Chunk], text: str, chunker: Chunker) -> None:
    for c in chunks:
        assert text[c.start : c.end] == c.text, f"offsets do not map back: {c}"
        assert c.text.strip(), f"empty chunk {c}"
        assert c.n_tokens == chunker.counter(c.text)
        assert c.method == chunker.name
        if chunker.max_tokens is not None:
            assert c.n_tokens <= chunker.max_tokens, f"{c.n_tokens} > max_tokens {chunker.max_tokens}: {c.text!r}"
    assert [c.start for c in chunks] == sorted(c.start for c in chunks), "chunks out of text order"
    if chunker.name not in COVERING:
        return
    covered = np.zeros(len(text) + 1, dtype=np.int32)
    for c in chunks:
        covered[c.start] += 1
        covered[c.end] -= 1
    inside = np.cumsum(covered)[: len(text)] > 0
    missed = [i for i, ch in enumerate(text) if not ch.isspace() and not inside[i]]
    assert not missed, f"characters not covered: {[text[i] for i in missed[:10]]} at {missed[:10]}"


# -- texts ---------------------------------------------------------------------------

VOCAB = [
    "the", "cells", "were", "lysed", "E.", "coli", "S.", "aureus", "Fig.", "2", "et", "al.", "TNF-α", "2.5",
    "mM", "patients", "(n", "=", "20)", "i.v.", "Results", "Protein", "for", "until", "within", "dose", "e.g.",
    "IL-6", "μM", "p", "<", "0.05", "Aspirin", "inhibits", "COX-1", "[12]", "vs.", "Table", "1", "mice",
    "antibiotic-resistant", "infection", "immunohistochemistry",
]  # fmt: skip
_sentence = st.builds(
    lambda ws, end: " ".join(ws) + end,
    st.lists(st.sampled_from(VOCAB), min_size=1, max_size=14),
    st.sampled_from([".", ".", "?", "!", "", ";", ","]),
)
_gap = st.sampled_from([" ", " ", " ", "  ", "\n", "\n\n", "\n  \n", "\t"])
PROSE = st.lists(st.tuples(_sentence, _gap), max_size=14).map(lambda xs: "".join(s + g for s, g in xs))
TEXTS = st.one_of(PROSE, PROSE, st.text(max_size=160))

PROPERTY = settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@pytest.mark.parametrize("max_tokens", [None, 7])
@pytest.mark.parametrize("method", methods())
@PROPERTY
@given(text=TEXTS)
def test_contract(method: str, max_tokens: int | None, text: str) -> None:
    chunker = make(method, max_tokens)
    chunks = chunker.chunk(text)
    verify_chunk_indices(chunks, text, chunker)
    assert chunker.chunk(text) == chunks, "a second run differs"
    # Batching changes nothing: each text gets what it gets alone.
    other = "Another text. It is here."
    assert chunker.chunk_batch([text, other, text]) == [chunks, chunker.chunk(other), chunks]


@pytest.mark.parametrize("max_tokens", [None, 7])
@PROPERTY
@given(text=TEXTS)
def test_contract_with_boundary_overlap(max_tokens: int | None, text: str) -> None:
    # The carried words keep every promise: exact offsets, text order, the token bound, coverage.
    chunker = make("adaptive", max_tokens, boundary_overlap=3, unit="sentence", min_words=0)
    chunks = chunker.chunk(text)
    verify_chunk_indices(chunks, text, chunker)
    assert [c.end for c in chunks] == sorted(c.end for c in chunks)


@pytest.mark.parametrize("method", methods())
def test_empty_and_blank_texts(method: str) -> None:
    chunker = make(method)
    assert chunker.chunk_batch(["", "   \n\n  "]) == [[], []]
    assert chunker.chunk_batch([]) == []


def test_registry_lists_every_family() -> None:
    assert set(methods()) >= {
        "fixed", "recursive", "semchunk", "cluster", "percentile", "stddev", "interquartile", "gradient",
        "structural", "adaptive", "proposition",
    }  # fmt: skip
    for m in COVERING:
        assert get(m).__doc__ and "Source" in get(m).__doc__, f"{m}: docstring must name its source"


# -- one encoder call per batch --------------------------------------------------------


@pytest.mark.parametrize("method", SEMANTIC)
def test_semantic_chunkers_embed_each_unit_once_in_one_call(method: str) -> None:
    docs = [
        "Aspirin inhibits COX-1 in platelets. Bleeding risk rises with dose, for example in the elderly.",
        "",
        "Insulin lowers glucose. Metformin reduces hepatic output; it is first line. Exercise helps too!",
    ]
    enc = MockEncoder()
    p = params.defaults("chunk", method=method, unit="sentence" if method == "adaptive" else "clause")
    chunker = build(p, enc)
    out = chunker.chunk_batch(docs)
    assert len(enc.calls) == 1, f"{method} called the encoder {len(enc.calls)} times for one batch"
    segment = clause_spans if method == "adaptive" and p.unit == "clause" else sentence_spans
    expected = [d[s:e] for d in docs for s, e in segment(d)]
    assert Counter(enc.calls[0]) == Counter(expected)
    assert len(enc.calls[0]) == len(set(enc.calls[0])) == 5
    for d, chunks in zip(docs, out):
        verify_chunk_indices(chunks, d, chunker)


def test_adaptive_clause_units_embed_clauses_once() -> None:
    enc = MockEncoder()
    doc = "Aspirin inhibits COX-1, which blocks thromboxane; bleeding rises. Doses vary."
    build(params.defaults("chunk", method="adaptive", unit="clause"), enc).chunk_batch([doc, doc])
    assert len(enc.calls) == 1
    assert enc.calls[0] == [doc[s:e] for s, e in clause_spans(doc)] * 2


# -- recursive: LangChain parity and golden cases ---------------------------------------

ARTICLE = """Background

Antimicrobial resistance is a growing threat to public health. Infections caused by methicillin-resistant S. aureus (MRSA) are associated with higher mortality than those caused by susceptible strains, as reported by Smith et al. in a multicentre cohort. Vancomycin remains the reference treatment, although its nephrotoxicity limits its use in patients with impaired renal function (e.g. those with an eGFR below 30 mL/min).
Several alternatives have been proposed; daptomycin, linezolid and ceftaroline each showed non-inferiority in randomised trials.

Methods

We enrolled 412 adults admitted with bacteraemia between January 2015 and December 2019. Blood cultures were processed with an automated system, and isolates were identified by MALDI-TOF mass spectrometry. Minimum inhibitory concentrations were measured by broth microdilution; an MIC of 2 mg/L or more was considered reduced susceptibility. Patients received 15 mg/kg i.v. every 12 h, with trough levels of 15-20 mg/L as the target. The primary outcome was 30-day mortality, and secondary outcomes were persistent bacteraemia (positive cultures for 7 days or more), acute kidney injury and relapse within 90 days.
Statistical analyses used logistic regression adjusted for age, Charlson index, source of infection and time to appropriate therapy. Two-sided p values below 0.05 were considered significant (Table 1, Fig. 2).

Results

Of the 412 patients, 138 (33.5%) had MRSA and 274 (66.5%) had methicillin-susceptible S. aureus. Thirty-day mortality was 24.6% in the MRSA group vs. 15.3% in the susceptible group (adjusted odds ratio 1.71, 95% CI 1.02-2.86). Persistent bacteraemia was more frequent with vancomycin MIC of 2 mg/L (41% vs. 22%), and acute kidney injury occurred in 18% of patients whose trough exceeded 20 mg/L. A sensitivity analysis restricted to patients without endocarditis gave similar estimates, and the association persisted after excluding deaths within 48 h of the index culture.

Discussion

Our findings agree with earlier meta-analyses and support early switching to an alternative agent when the vancomycin MIC is high. They also suggest that trough-guided dosing alone does not prevent nephrotoxicity; area-under-the-curve guided dosing may be safer. Limitations include the observational design, a single health system and missing data on prior antibiotic exposure for 9% of patients."""

LONG_PARAGRAPH = " ".join(ARTICLE.split())  # one paragraph: splits fall to sentences and words
NO_SPACES = "ACGT" * 700  # no separator at all: character splits

PARITY_TEXTS = [ARTICLE, LONG_PARAGRAPH, ARTICLE.replace("\n\n", "\n"), NO_SPACES, ARTICLE * 3]


def _covidqa_texts(n: int = 8) -> list[str]:
    path = SHARED / "covidqa" / "200423_covidQA.json"
    if not path.is_file():
        pytest.skip(f"real benchmark mirror not found at {path}")
    data = json.loads(path.read_text())
    return [p["context"] for a in data["data"] for p in a["paragraphs"]][:n]


@pytest.mark.parametrize("size,overlap", [(1000, 100), (200, 50), (64, 0)])
def test_recursive_matches_langchain_exactly_in_langchain_mode(size: int, overlap: int) -> None:
    from langchain_text_splitters import RecursiveCharacterTextSplitter

    lc = RecursiveCharacterTextSplitter(chunk_size=size, chunk_overlap=overlap)
    ours = RecursiveChunker(size, overlap, separators=LANGCHAIN_SEPARATORS, keep="start", regex=False, fill_overlap=False)
    for text in PARITY_TEXTS:
        chunks = ours.chunk(text)
        assert [c.text for c in chunks] == lc.split_text(text)
        verify_chunk_indices(chunks, text, ours)


def test_recursive_biomedical_table_matches_langchain_given_the_same_separators() -> None:
    from langchain_text_splitters import RecursiveCharacterTextSplitter

    lc = RecursiveCharacterTextSplitter(
        chunk_size=300, chunk_overlap=60, separators=list(SEPARATORS), is_separator_regex=True, keep_separator="end"
    )
    ours = RecursiveChunker(300, 60, fill_overlap=False)
    for text in PARITY_TEXTS:
        assert [c.text for c in ours.chunk(text)] == lc.split_text(text)


def _assert_filled_overlap_agrees(ours: list[Chunk], theirs: list[str], text: str, overlap: int, size: int) -> None:
    """The documented difference: the same chunks and ends; starts moved back for the overlap.

    A moved start is a word start within ``overlap`` characters before the previous
    chunk's end, and the chunk stays within ``size``.
    """
    assert len(ours) == len(theirs)
    for i, (c, t) in enumerate(zip(ours, theirs)):
        assert c.text.endswith(t), (c.text, t)
        if len(c.text) > len(t):
            assert c.start >= ours[i - 1].end - overlap and len(c.text) <= size
            assert c.start == 0 or text[c.start - 1].isspace()


def test_recursive_default_fills_the_overlap_langchain_drops() -> None:
    """Parity with RecursiveCharacterTextSplitter(chunk_size=1000, chunk_overlap=100).

    Where they differ, and why: LangChain carries over only whole parts no longer
    than the overlap, so once a text is cut at paragraphs or sentences (parts over 100
    characters) neighbouring chunks share nothing. Our default (fill_overlap) starts
    each chunk at the first word within 100 characters before the previous chunk's
    end, while never passing 1000 characters. Agreed part, asserted here: the same
    number of chunks, the same ends, and each of our chunks ends with LangChain's.
    """
    from langchain_text_splitters import RecursiveCharacterTextSplitter

    lc = RecursiveCharacterTextSplitter(chunk_size=1000, chunk_overlap=100)
    ours = RecursiveChunker(1000, 100, separators=LANGCHAIN_SEPARATORS, keep="start", regex=False)
    shared = 0
    for text in PARITY_TEXTS:
        chunks = ours.chunk(text)
        _assert_filled_overlap_agrees(chunks, lc.split_text(text), text, 100, 1000)
        verify_chunk_indices(chunks, text, ours)
        shared += sum(a.end > b.start for a, b in zip(chunks, chunks[1:]))
    assert shared > 0, "the overlap was never applied"


@pytest.mark.slow
def test_recursive_langchain_parity_on_covidqa_articles() -> None:
    from langchain_text_splitters import RecursiveCharacterTextSplitter

    lc = RecursiveCharacterTextSplitter(chunk_size=1000, chunk_overlap=100)
    exact = RecursiveChunker(1000, 100, separators=LANGCHAIN_SEPARATORS, keep="start", regex=False, fill_overlap=False)
    filled = RecursiveChunker(1000, 100, separators=LANGCHAIN_SEPARATORS, keep="start", regex=False)
    for text in _covidqa_texts():
        theirs = lc.split_text(text)
        assert [c.text for c in exact.chunk(text)] == theirs
        _assert_filled_overlap_agrees(filled.chunk(text), theirs, text, 100, 1000)


SMALL = (
    "Aspirin inhibits COX-1. It reduces platelet aggregation.\n\n"
    "Ibuprofen, a propionic acid, inhibits COX-2 (see Fig. 2). Doses vary."
)


def test_recursive_golden() -> None:
    chunks = RecursiveChunker(chunk_size=40, chunk_overlap=12).chunk(SMALL)
    assert [c.text for c in chunks] == [
        "Aspirin inhibits COX-1.",
        "COX-1. It reduces platelet aggregation.",  # overlap applied: "COX-1." repeated
        "Ibuprofen, a propionic acid,",  # no word of the previous chunk fits within 40 characters
        "acid, inhibits COX-2 (see Fig. 2).",  # cut at a clause, never after "Fig."
        "Fig. 2). Doses vary.",
    ]
    assert [(c.start, c.end) for c in chunks][:2] == [(0, 23), (17, 56)]
    lc_mode = RecursiveChunker(chunk_size=40, chunk_overlap=12, fill_overlap=False).chunk(SMALL)
    assert [c.text for c in lc_mode] == [
        "Aspirin inhibits COX-1.",
        "It reduces platelet aggregation.",
        "Ibuprofen, a propionic acid,",
        "inhibits COX-2 (see Fig. 2).",
        "Doses vary.",
    ]


def test_recursive_token_bound_with_word_counter() -> None:
    r = RecursiveChunker(chunk_size=10_000, chunk_overlap=0, counter=count_words, max_tokens=20)
    chunks = r.chunk(ARTICLE)
    verify_chunk_indices(chunks, ARTICLE, r)
    assert all(c.n_tokens <= 20 for c in chunks)
    assert sum(c.n_tokens for c in chunks) / len(chunks) > 10, "chunks far below the bound"


@pytest.mark.parametrize("kwargs,message", [
    ({"chunk_size": 0}, "chunk.chunk_size must be >= 1, got 0"),
    ({"chunk_size": 100, "chunk_overlap": 100}, "chunk.chunk_overlap must be in [0, chunk.chunk_size - 1] = [0, 99], got 100"),
    ({"chunk_overlap": -1}, "chunk.chunk_overlap must be in"),
    ({"keep": "middle"}, "keep must be one of"),
])  # fmt: skip
def test_recursive_rejects_bad_arguments(kwargs: dict, message: str) -> None:
    with pytest.raises(ValueError, match=re.escape(message)):
        RecursiveChunker(**kwargs)


def test_recursive_is_linear() -> None:
    # One text 50x longer must take about as long as 50 runs on the short one; a
    # quadratic step would make it ~50x slower. Best of three against a busy machine.
    import time

    r = RecursiveChunker()
    small, big = ARTICLE, ARTICLE * 50

    def best(f) -> float:
        times = []
        for _ in range(3):
            t0 = time.perf_counter()
            f()
            times.append(time.perf_counter() - t0)
        return min(times)

    t_small = best(lambda: [r.chunk(small) for _ in range(50)])
    t_big = best(lambda: r.chunk(big))
    assert t_big < 4 * t_small + 0.05, (t_big, t_small)


# -- semchunk ----------------------------------------------------------------------------


def test_semchunk_golden() -> None:
    chunks = SemchunkChunker(chunk_size=6).chunk(SMALL)
    assert [c.text for c in chunks] == [
        "Aspirin inhibits COX-1.",
        "It reduces platelet aggregation.",
        "Ibuprofen, a propionic acid,",
        "inhibits COX-2 (see Fig.",  # semchunk knows no abbreviations
        "2). Doses vary.",
    ]
    assert [c.n_tokens for c in chunks] == [3, 4, 4, 4, 3]


def test_semchunk_needs_the_encoder_for_its_tokenizer() -> None:
    assert SemchunkChunker.needs_encoder
    with pytest.raises(ValueError, match="needs the encoder"):
        SemchunkChunker.from_params(params.defaults("chunk", method="semchunk"), None)


# -- cluster -----------------------------------------------------------------------------


def test_cluster_golden_runs_carry_their_cluster() -> None:
    text = (
        "Aspirin inhibits platelets. Aspirin inhibits platelets strongly. Insulin lowers glucose. "
        "Insulin lowers blood glucose. Aspirin inhibits platelets again."
    )
    chunks = ClusterChunker(n_clusters=2).chunk(text)
    assert [(c.text, c.metadata) for c in chunks] == [
        ("Aspirin inhibits platelets. Aspirin inhibits platelets strongly.", {"cluster": 0}),
        ("Insulin lowers glucose. Insulin lowers blood glucose.", {"cluster": 1}),
        ("Aspirin inhibits platelets again.", {"cluster": 0}),
    ]


def test_cluster_k_is_capped_by_the_number_of_sentences() -> None:
    text = "Alpha beta gamma. Delta epsilon zeta. Eta theta iota."
    chunks = ClusterChunker(n_clusters=6).chunk(text)
    assert [c.metadata["cluster"] for c in chunks] == [0, 1, 2]
    assert [c.text for c in ClusterChunker(n_clusters=1).chunk(text)] == [text]
    # No word of two letters: TF-IDF has no vocabulary, everything is one cluster.
    assert [c.text for c in ClusterChunker().chunk("A b. C d. E f.")] == ["A b. C d. E f."]


def test_whole_clusters_golden() -> None:
    text = (
        "Aspirin inhibits platelets. Aspirin inhibits platelets strongly. Insulin lowers glucose. "
        "Insulin lowers blood glucose. Aspirin inhibits platelets again."
    )
    whole = whole_clusters(chunk_table([Document("d", text)], ClusterChunker(n_clusters=2)))
    assert whole["text"].tolist() == [
        "Aspirin inhibits platelets. Aspirin inhibits platelets strongly. Aspirin inhibits platelets again.",
        "Insulin lowers glucose. Insulin lowers blood glucose.",
    ]
    assert json.loads(whole["metadata"][0])["spans"] == [[0, 64], [text.index("Aspirin inhibits platelets again."), len(text)]]
    assert (whole["start"][0], whole["end"][0], whole["chunk_id"][1]) == (0, len(text), "d#c1")


@pytest.mark.parametrize("max_tokens", [None, 7])
@PROPERTY
@given(text=TEXTS)
def test_whole_clusters_pieces_rebuild_text_and_runs(max_tokens: int | None, text: str) -> None:
    runs = chunk_table([Document("d", text), Document("e", "Other text here. And more.")], ClusterChunker(3, max_tokens=max_tokens))
    whole = whole_clusters(runs)
    assert len(whole) == len({(d, json.loads(m)["cluster"]) for d, m in zip(runs["doc_id"], runs["metadata"])})
    docs = {"d": text, "e": "Other text here. And more."}
    pieces = []
    for doc_id, t, s, e, m in zip(whole["doc_id"], whole["text"], whole["start"], whole["end"], whole["metadata"]):
        spans = json.loads(m)["spans"]
        assert t == PIECE_SEPARATOR.join(docs[doc_id][a:b] for a, b in spans)
        assert (s, e) == (spans[0][0], spans[-1][1]) and all(a < b for a, b in spans)
        assert spans == sorted(spans)
        pieces += [(doc_id, a, b) for a, b in spans]
    # Every run is a piece of exactly one whole cluster: nothing lost, nothing doubled.
    assert sorted(pieces) == sorted(zip(runs["doc_id"], runs["start"], runs["end"]))


# -- breakpoints ---------------------------------------------------------------------------

FIVE = "Alpha one. Alpha two. Alpha three. Beta one. Beta two."
E0, E1 = [1.0, 0.0], [0.0, 1.0]
FIVE_VECS = TableEncoder(
    {"Alpha one.": E0, "Alpha two.": E0, "Alpha three.": E0, "Beta one.": E1, "Beta two.": E1}
)  # distances between neighbours: [0, 0, 1, 0]


@pytest.mark.parametrize("cls,amount,expected", [
    # 95th percentile of [0, 0, 1, 0] is 0.85: cut after "Alpha three."
    (PercentileChunker, None, ["Alpha one. Alpha two. Alpha three.", "Beta one. Beta two."]),
    # mean 0.25 + 3 sd (0.433) = 1.55: no cut; with 1 sd (0.68) the cut appears.
    (StdDevChunker, None, [FIVE]),
    (StdDevChunker, 1.0, ["Alpha one. Alpha two. Alpha three.", "Beta one. Beta two."]),
    # mean 0.25 + 1.5 IQR (0.25) = 0.625: cut.
    (InterquartileChunker, None, ["Alpha one. Alpha two. Alpha three.", "Beta one. Beta two."]),
    # gradient of [0, 0, 1, 0] is [0, 0.5, 0, -0.5], 95th percentile 0.425: LangChain
    # then cuts after the gap where the distance starts rising (after "Alpha two.").
    (GradientChunker, None, ["Alpha one. Alpha two.", "Alpha three. Beta one. Beta two."]),
])  # fmt: skip
def test_breakpoint_golden(cls, amount, expected) -> None:
    chunker = cls(FIVE_VECS.encode, amount)
    chunks = chunker.chunk(FIVE)
    assert [c.text for c in chunks] == expected
    verify_chunk_indices(chunks, FIVE, chunker)


def test_breakpoint_small_inputs_follow_langchain() -> None:
    two = "Alpha one. Beta one."
    assert [c.text for c in PercentileChunker(FIVE_VECS.encode).chunk(two)] == [two]
    # LangChain's gradient rule cannot take a gradient of one distance and cuts instead.
    assert [c.text for c in GradientChunker(FIVE_VECS.encode).chunk(two)] == ["Alpha one.", "Beta one."]
    assert [c.text for c in PercentileChunker(FIVE_VECS.encode).chunk("Alpha one.")] == ["Alpha one."]


def test_breakpoint_amount_defaults_and_ranges() -> None:
    kinds = (PercentileChunker, StdDevChunker, InterquartileChunker, GradientChunker)
    assert [c(MockEncoder().encode).amount for c in kinds] == [95.0, 3.0, 1.5, 95.0]
    with pytest.raises(ValueError, match=r"chunk.breakpoint_amount for percentile must be in \[0, 100.0\]"):
        PercentileChunker(MockEncoder().encode, 120)
    with pytest.raises(ValueError, match="chunk.breakpoint_amount for stddev"):
        StdDevChunker(MockEncoder().encode, -1)


# -- structural ----------------------------------------------------------------------------


def test_structural_alpha_one_is_the_percentile_rule() -> None:
    s = StructuralChunker(FIVE_VECS.encode, alpha=1.0)
    assert [c.text for c in s.chunk(FIVE)] == [c.text for c in PercentileChunker(FIVE_VECS.encode).chunk(FIVE)]


def test_structural_alpha_zero_cuts_at_the_layout_change() -> None:
    text = (
        "Aa bb. Cc dd. Ee ff.\n\n"
        "The 2019 cohort included 1234 patients with 5678 visits. The 2020 cohort included 2345 patients with 6789 visits."
    )
    vecs = MockEncoder()
    chunks = StructuralChunker(vecs.encode, alpha=0.0).chunk(text)
    assert [c.text for c in chunks] == ["Aa bb. Cc dd. Ee ff.", text[22:]]


def test_structural_features_are_per_sentence() -> None:
    text = "Short.\n\n  A longer sentence with 12 digits 345."
    f = features(text, sentence_spans(text))
    assert f.shape == (2, len(FEATURES))
    row = dict(zip(FEATURES, f[1]))
    assert row["paragraph_break"] == 1.0 and row["newlines_before"] == 2 and row["leading_whitespace"] == 2
    assert row["length"] == len("A longer sentence with 12 digits 345.")
    assert dict(zip(FEATURES, f[0]))["paragraph_break"] == 0.0


@pytest.mark.parametrize(
    "kwargs,message", [({"alpha": 1.5}, r"chunk.alpha must be in \[0, 1\]"), ({"boundary_percentile": 101}, "percentile")]
)
def test_structural_rejects_bad_arguments(kwargs, message) -> None:
    with pytest.raises(ValueError, match=message):
        StructuralChunker(MockEncoder().encode, **kwargs)


# -- adaptive ------------------------------------------------------------------------------

ADAPTIVE_VECS = TableEncoder(
    {
        "Aspirin blocks COX-1.": [1.0, 0.0, 0.0],
        "Aspirin thins blood.": [0.95, 0.312, 0.0],
        "For this reason bleeding rises.": [0.0, 0.0, 1.0],  # off topic, but a linker
        "Insulin lowers glucose.": [0.0, 1.0, 0.0],
        "Insulin acts fast.": [0.0, 0.95, 0.312],
    }
)
ADAPTIVE_TEXT = (
    "Aspirin blocks COX-1. Aspirin thins blood. For this reason bleeding rises. Insulin lowers glucose. Insulin acts fast."
)


def test_adaptive_golden_linker_and_topics() -> None:
    a = AdaptiveChunker(ADAPTIVE_VECS.encode, threshold=0.8, unit="sentence", min_words=0)
    chunks = a.chunk(ADAPTIVE_TEXT)
    assert [c.text for c in chunks] == [
        "Aspirin blocks COX-1. Aspirin thins blood. For this reason bleeding rises.",  # linker stays
        "Insulin lowers glucose. Insulin acts fast.",
    ]
    assert all(c.metadata["header"] for c in chunks)
    verify_chunk_indices(chunks, ADAPTIVE_TEXT, a)


def test_adaptive_needs_both_last_unit_and_centroid() -> None:
    # Each step turns by ~35 degrees: similar to the last unit (0.82), not to the centroid.
    ang = np.deg2rad([0, 35, 70, 105])
    enc = TableEncoder({f"Unit {i}.": [np.cos(t), np.sin(t)] for i, t in enumerate(ang)})
    text = "Unit 0. Unit 1. Unit 2. Unit 3."
    chunks = AdaptiveChunker(enc.encode, threshold=0.8, unit="sentence", min_words=0).chunk(text)
    assert [c.text for c in chunks] == ["Unit 0. Unit 1.", "Unit 2. Unit 3."]


def test_adaptive_merges_short_chunks_forward_and_respects_max_words() -> None:
    # Topical chunks of 11 and 6 words. Under 12 words the first merges forward; under
    # 8 words only the last is short and, having no successor, joins its predecessor.
    for min_words in (12, 8):
        a = AdaptiveChunker(ADAPTIVE_VECS.encode, threshold=0.8, unit="sentence", min_words=min_words)
        assert [c.text for c in a.chunk(ADAPTIVE_TEXT)] == [ADAPTIVE_TEXT]
    spans = [(0, 1, 3), (2, 3, 10), (4, 5, 2), (6, 7, 10)]  # (start, end, words)
    assert AdaptiveChunker(ADAPTIVE_VECS.encode, min_words=5)._merge_short("x" * 8, spans) == [(0, 3), (4, 7)]
    capped = AdaptiveChunker(ADAPTIVE_VECS.encode, threshold=0.0, unit="sentence", max_words=7, min_words=100)
    assert all(c.n_tokens <= 7 for c in capped.chunk(ADAPTIVE_TEXT))


class _Reading:
    """ChunkParams that records which keys are read."""

    def __init__(self, p: ChunkParams) -> None:
        self._p, self.read = p, set()

    def __getattr__(self, key: str):
        self.read.add(key)
        return getattr(self._p, key)


@pytest.mark.parametrize("method,extra", [(m, {}) for m in methods()] + [("adaptive", {"header": "generator"})])
def test_each_method_reads_exactly_the_keys_params_says_it_reads(method, extra) -> None:
    # params.CHUNK_READS is what the chunk stage's warning about an unread change trusts:
    # it must be what the chunker's from_params takes, no more, no less.
    from types import SimpleNamespace

    from biochunk.embedding import SentenceEncoder

    cp = params.defaults("chunk", method=method, **extra)
    proxy = _Reading(cp)
    # semchunk takes the embedder's tokenizer (no weights are loaded); the rest hash words.
    encoder = SentenceEncoder("minilm") if method == "semchunk" else MockEncoder()
    rewriter = lambda name, **kw: SimpleNamespace(propositions=lambda texts: [], titles=lambda texts: [])  # noqa: E731
    kwargs = {"dataset": "embedded"} if get(method).needs_dataset else {}
    get(method).from_params(proxy, encoder, rewriter, **kwargs)
    get(method).needs_rewriter(proxy)
    assert proxy.read | {"method"} == set(cp.reads()), method


def test_adaptive_from_params_reads_the_new_keys() -> None:
    a = build(params.defaults("chunk", method="adaptive", min_words=3, unit="sentence"), MockEncoder())
    assert isinstance(a, AdaptiveChunker) and a.min_words == 3 and a.unit == "sentence"
    with pytest.raises(ValueError, match="chunk.min_words must be >= 0"):
        AdaptiveChunker(MockEncoder().encode, min_words=-1)


def test_micro_headers() -> None:
    text = (
        "Tumour necrosis factor alpha drives inflammation. Blocking tumour necrosis factor alpha "
        "reduces joint damage in rheumatoid arthritis."
    )
    assert micro_header(text) == "Tumour necrosis factor"
    assert micro_header("Levels of TNF rose. TNF was high.") == "TNF rose"
    assert micro_header("It was so. We did it.") == NO_HEADER
    assert micro_header("") == NO_HEADER


# -- sizing --------------------------------------------------------------------------------


@settings(max_examples=40, deadline=None)
@given(text=TEXTS, limit=st.integers(1, 9))
def test_fit_cuts_to_the_bound_and_covers(text: str, limit: int) -> None:
    parts = fit(text, 0, len(text), count_words, limit)
    assert all(n == count_words(text[a:b]) and (n <= limit) for a, b, n in parts)
    kept = "".join(text[a:b] for a, b, _ in parts)
    assert "".join(kept.split()) == "".join(text.split())


def test_embedder_counter_needs_an_encoder() -> None:
    with pytest.raises(ValueError, match="chunk.counter: embedder"):
        make_counter("embedder", None)
    assert make_counter("words") is count_words


# -- segmentation --------------------------------------------------------------------------


@pytest.mark.parametrize("text,expected", [
    ("Smith et al. reported this. Then we left.", ["Smith et al. reported this.", "Then we left."]),
    ("Smith et al. (2019) showed it. Then we left.", ["Smith et al. (2019) showed it.", "Then we left."]),
    ("This was shown by Jones et al. The next study agreed.", ["This was shown by Jones et al.", "The next study agreed."]),
    ("As shown in Fig. 2, the rate rose. It fell.", ["As shown in Fig. 2, the rate rose.", "It fell."]),
    ("Drugs, e.g. Aspirin, help. Others do not.", ["Drugs, e.g. Aspirin, help.", "Others do not."]),
    ("Mice got 5 mg/kg i.v. daily. Controls got saline.", ["Mice got 5 mg/kg i.v. daily.", "Controls got saline."]),
    ("Mice got 5 mg/kg i.v. Controls got saline.", ["Mice got 5 mg/kg i.v.", "Controls got saline."]),
    ("Mice got 5 mg/kg i.v. (n = 5). Controls got saline.", ["Mice got 5 mg/kg i.v. (n = 5).", "Controls got saline."]),
    ("The buffer had 2.5 mM NaCl. It was fresh.", ["The buffer had 2.5 mM NaCl.", "It was fresh."]),
    ("E. coli and S. aureus grew. Both grew.", ["E. coli and S. aureus grew.", "Both grew."]),
    ("We used E. coli. S. aureus was not used.", ["We used E. coli.", "S. aureus was not used."]),
    ("Cultures of S. aureus. The strain was resistant.", ["Cultures of S. aureus.", "The strain was resistant."]),
    ("Deficiency of vitamin D. The patients were treated.", ["Deficiency of vitamin D.", "The patients were treated."]),
    ("Described by J. Smith and A. B. Jones in 2001, it works.", ["Described by J. Smith and A. B. Jones in 2001, it works."]),
    ("The U.S. FDA approved it. It sold in the U.S. Prices fell.", ["The U.S. FDA approved it.", "It sold in the U.S.", "Prices fell."]),  # noqa: E501
    ("Cells were lysed.[12] Protein was measured.", ["Cells were lysed.[12]", "Protein was measured."]),
    ("Growth was slow (see Fig. 3). The end.", ["Growth was slow (see Fig. 3).", "The end."]),
    ("It worked! Did it? Yes.", ["It worked!", "Did it?", "Yes."]),
    ("Patients (n = 20) were enrolled. Dr. Smith led it.", ["Patients (n = 20) were enrolled.", "Dr. Smith led it."]),
    ("A title without a period\n\nThe first paragraph.", ["A title without a period", "The first paragraph."]),
    ("Values rose vs. Controls. They fell.", ["Values rose vs. Controls.", "They fell."]),
])  # fmt: skip
def test_sentence_spans_biomedical_cases(text: str, expected: list[str]) -> None:
    assert [text[s:e] for s, e in sentence_spans(text)] == expected


@settings(max_examples=60, deadline=None)
@given(text=TEXTS)
def test_sentence_and_clause_spans_tile_the_text(text: str) -> None:
    for spans in (sentence_spans(text), clause_spans(text)):
        assert all(0 <= s < e <= len(text) and text[s:e] == text[s:e].strip() for s, e in spans)
        assert all(a[1] <= b[0] for a, b in zip(spans, spans[1:]))
        assert "".join("".join(text[s:e].split()) for s, e in spans) == "".join(text.split())


# -- params ----------------------------------------------------------------------------------


def test_chunk_params_defaults() -> None:
    p = params.parse(ChunkParams, {}, "chunk")
    assert (p.chunk_size, p.chunk_overlap, p.n_clusters, p.breakpoint_amount) == (1000, 100, 6, None)
    assert (p.alpha, p.boundary_percentile, p.min_words, p.counter) == (0.5, 95.0, 60, "words")
    root = Path(__file__).resolve().parents[1]
    from_yaml = params.section("chunk", root / "params.yaml")
    keys = ("chunk_size", "chunk_overlap", "n_clusters", "breakpoint_amount", "alpha", "boundary_percentile", "min_words")
    for key in (*keys, "counter"):
        assert getattr(from_yaml, key) == getattr(p, key), f"params.yaml chunk.{key} differs from the default"


@pytest.mark.parametrize("raw,message", [
    ({"chunk_size": 0}, "chunk.chunk_size must be in [1, inf], got 0"),
    ({"chunk_size": 100, "chunk_overlap": 100}, "chunk.chunk_overlap must be in [0, 99], got 100"),
    ({"chunk_overlap": -5}, "chunk.chunk_overlap must be in [0, 999], got -5"),
    ({"n_clusters": 0}, "chunk.n_clusters must be in [1, inf], got 0"),
    ({"alpha": 1.5}, "chunk.alpha must be in [0.0, 1.0], got 1.5"),
    ({"boundary_percentile": -1}, "chunk.boundary_percentile must be in [0.0, 100.0], got -1.0"),
    ({"breakpoint_amount": -0.5}, "chunk.breakpoint_amount must be in [0, inf], got -0.5"),
    ({"method": "percentile", "breakpoint_amount": 150}, "chunk.breakpoint_amount must be in [0, 100], got 150.0"),
    ({"min_words": -1}, "chunk.min_words must be in [0, inf], got -1"),
    ({"counter": "bytes"}, "chunk.counter: unknown value 'bytes'; allowed: chars, embedder, words"),
    ({"chunk_size": "big"}, "chunk.chunk_size must be an integer, got 'big'"),
])  # fmt: skip
def test_chunk_params_validation(raw: dict, message: str) -> None:
    with pytest.raises(UserError) as e:
        params.parse(ChunkParams, raw, "chunk")
    assert str(e.value) == message


def test_chunk_params_accept_valid_values() -> None:
    p = params.parse(ChunkParams, {"method": "stddev", "breakpoint_amount": 250, "counter": "embedder", "alpha": 0}, "chunk")
    assert p.breakpoint_amount == 250.0 and p.counter == "embedder" and p.alpha == 0.0


# -- slow: the real MiniLM tokenizer -----------------------------------------------------------


@pytest.mark.slow
def test_embedder_counter_counts_without_truncation_and_gives_offsets() -> None:
    from biochunk.text.tokens import embedder_counter

    c = embedder_counter("minilm")
    long = ARTICLE * 2
    n = c(long)
    assert n > 600, "the tokenizer still truncates at 128"
    assert c("") == 0 and c("Hello") == 1
    offs = c.token_offsets(ARTICLE)
    assert len(offs) == c(ARTICLE)
    assert all(0 <= a < b <= len(ARTICLE) for a, b in offs) and offs == sorted(offs)
    assert ARTICLE[offs[0][0] : offs[0][1]].lower() == "background"


@pytest.mark.slow
def test_semchunk_from_params_fills_the_embedder_window() -> None:
    from biochunk.embedding import SentenceEncoder
    from biochunk.text.tokens import embedder_counter

    enc = SentenceEncoder("minilm")  # only its name is used: no weights are loaded
    chunker = build(params.defaults("chunk", method="semchunk"), enc)
    assert chunker.max_tokens == 256
    text = ARTICLE * 4
    chunks = chunker.chunk(text)
    verify_chunk_indices(chunks, text, chunker)
    assert max(c.n_tokens for c in chunks) > 200
    assert chunker.counter is embedder_counter("minilm")
    assert "model" not in enc.__dict__, "building semchunk loaded the encoder's weights"


@pytest.mark.slow
@pytest.mark.parametrize("size,budget", [(10**9, 256), (1000, 64)])
def test_recursive_token_bound_with_the_embedder_tokenizer(size: int, budget: int) -> None:
    from biochunk.text.tokens import embedder_counter

    c = embedder_counter("minilm")
    r = RecursiveChunker(chunk_size=size, chunk_overlap=min(100, size - 1), counter=c, max_tokens=budget)
    for text in (ARTICLE * 3, NO_SPACES, LONG_PARAGRAPH):
        chunks = r.chunk(text)
        verify_chunk_indices(chunks, text, r)
        assert max(ch.n_tokens for ch in chunks) <= budget


@pytest.mark.slow
def test_counter_embedder_through_params() -> None:
    from biochunk.embedding import SentenceEncoder

    r = build(params.defaults("chunk", method="recursive", counter="embedder", max_tokens=128), SentenceEncoder("minilm"))
    chunks = r.chunk(ARTICLE)
    verify_chunk_indices(chunks, ARTICLE, r)
    assert all(ch.n_tokens <= 128 for ch in chunks)


# -- span counters (issue 5): exact counts of any span of one document ------------------------

WEIRD = st.text(alphabet=st.sampled_from(list("ab .,;(-)\n\t\u00a0\u2009\u3000\x0b\x1c\u0301éßΩ中文°±μ_|\u200b")), max_size=80)
SPAN_TEXTS = st.one_of(PROSE, WEIRD, st.text(max_size=80))


def _cuts(text: str, data) -> tuple[int, int]:
    """A span whose ends fall at whitespace boundaries (as chunks do), or anywhere."""
    if data.draw(st.booleans()):
        bounds = sorted({0, len(text), *(i for i in range(1, len(text)) if text[i - 1].isspace() != text[i].isspace())})
        a, b = sorted(data.draw(st.lists(st.sampled_from(bounds), min_size=2, max_size=2)))
    else:
        a, b = sorted(data.draw(st.lists(st.integers(0, len(text)), min_size=2, max_size=2)))
    return a, b


@settings(max_examples=150, deadline=None)
@given(text=SPAN_TEXTS, data=st.data())
def test_span_counters_equal_standalone_counts(text: str, data) -> None:
    a, b = _cuts(text, data)
    assert WordTable(text).count(a, b) == count_words(text[a:b])
    assert span_counter(count_chars, text).count(a, b) == len(text[a:b])
    assert isinstance(span_counter(count_chars, text), CharSpans)


def test_word_table_long_documents_use_the_same_words() -> None:
    # Above 4,096 characters the word bounds come from numpy, below from a regular expression.
    text = (ARTICLE + " \u00a0x\u3000y\x1cz\u2028") * 3
    assert len(text) > 4096
    t = WordTable(text)
    assert [text[s:e] for s, e in zip(t.starts, t.ends)] == text.split()
    for a, b in [(0, len(text)), (5, 2000), (17, 4100), (1000, 1001)]:
        assert t.count(a, b) == count_words(text[a:b])


def test_chars_counter() -> None:
    assert make_counter("chars") is count_chars and count_chars("a b\n") == 4
    assert params.parse(ChunkParams, {"counter": "chars"}, "chunk").counter == "chars"
    r = build(params.defaults("chunk", method="recursive", counter="chars", chunk_size=1000, chunk_overlap=100, max_tokens=300))
    chunks = r.chunk(ARTICLE)
    verify_chunk_indices(chunks, ARTICLE, r)
    assert all(c.n_tokens == len(c.text) <= 300 for c in chunks) and max(c.n_tokens for c in chunks) > 250
    # Without a bound the chunks are the character chunks of counter words; only n_tokens differs.
    plain = build(params.defaults("chunk", method="recursive", counter="chars")).chunk(ARTICLE)
    assert [(c.start, c.end) for c in plain] == [(c.start, c.end) for c in RecursiveChunker().chunk(ARTICLE)]
    assert [c.n_tokens for c in plain] == [len(c.text) for c in plain]


@settings(max_examples=150, deadline=None)
@given(text=SPAN_TEXTS, data=st.data())
def test_embedder_span_counter_equals_standalone_tokenisation(text: str, data) -> None:
    from biochunk.text.tokens import embedder_counter

    c = embedder_counter("minilm")
    a, b = _cuts(text, data)
    assert c.for_document(text).count(a, b) == c(text[a:b])


def test_embedder_counter_uses_the_word_table_only_where_it_is_exact() -> None:
    import tokenizers

    from biochunk.text.tokens import EmbedderCounter, embedder_counter, separable

    c = embedder_counter("minilm")
    assert c.separable and isinstance(c.for_document(ARTICLE), WordTable)
    # BERT deletes \x0b (a control character) where str.split sees whitespace.
    assert isinstance(c.for_document("ab\x0bcd"), Standalone)
    byte_level = tokenizers.Tokenizer(tokenizers.models.BPE())
    byte_level.pre_tokenizer = tokenizers.pre_tokenizers.ByteLevel()
    assert not separable(byte_level)
    assert isinstance(EmbedderCounter(byte_level).for_document(ARTICLE), Standalone)


@pytest.mark.parametrize("text", [ARTICLE * 4, LONG_PARAGRAPH * 3, NO_SPACES, "ß" * 300 + " x" * 300])
def test_recursive_token_bound_holds_for_the_embedder_on_its_own(text: str) -> None:
    # Every chunk, tokenised on its own as the embedder sees it, fits; n_tokens is that count.
    from biochunk.text.tokens import embedder_counter

    c = embedder_counter("minilm")
    r = RecursiveChunker(chunk_size=10**9, chunk_overlap=0, counter=c, max_tokens=64)
    chunks = r.chunk(text)
    verify_chunk_indices(chunks, text, r)
    assert all(c(ch.text) == ch.n_tokens <= 64 for ch in chunks)
    assert sum(ch.n_tokens for ch in chunks) / len(chunks) > 24, "chunks far below the bound"


# -- chunk_docs: answers kept whole, params ---------------------------------------------------


def test_cut_answers_on_a_toy_document() -> None:
    import pandas as pd

    # doc "d": chunks [0, 10), [8, 20), [20, 30); doc "e" has no chunk at all.
    chunks = pd.DataFrame({"doc_id": ["d", "d", "d"], "start": [20, 0, 8], "end": [30, 10, 20]})
    answers = pd.DataFrame(
        {
            "doc_id": ["d", "d", "d", "d", "d", "e"],
            "start": [0, 8, 9, 18, 25, 0],
            "end": [10, 20, 11, 22, 30, 3],
        }
    )  # whole, whole, whole (inside the overlap [8, 10)), cut across 20, whole, no chunk
    assert cut_answers(chunks, answers) == {"answers": 6, "cut_answers": 2, "cut_answer_share": 2 / 6}
    assert cut_answers(chunks, answers.iloc[:0])["answers"] == 0


def test_gold_in_hits_on_a_hand_made_article() -> None:
    import pandas as pd

    text = "Alpha beta. The virus binds ACE2 receptors. Gamma delta epsilon."
    a0 = text.index("ACE2")  # the gold answer "ACE2 receptors"
    gold = pd.DataFrame({"question_id": ["inside", "straddle", "other", "missed", "two"],
                         "doc_id": ["d", "d", "d", "d", "d"],
                         "start": [a0] * 5, "end": [a0 + 14] * 5})  # fmt: skip
    gold = pd.concat([gold, pd.DataFrame({"question_id": ["two"], "doc_id": ["d"], "start": [0], "end": [5]})])
    hits = pd.DataFrame(
        {
            "question_id": ["inside", "straddle", "other", "two"],
            "doc_id": ["d", "d", "e", "d"],  # "other": the same span, but in another article
            "start": [12, a0 + 5, 12, 0],
            "end": [len(text), len(text), len(text), 11],  # "straddle" starts inside the answer
        }
    )  # "missed" retrieved nothing; "two" holds its second gold span ("Alpha") whole
    got = gold_in_hits(hits, gold).set_index("question_id")
    assert got.loc["inside"].tolist() == [1, 1]
    assert got.loc["straddle"].tolist() == [0, 1]
    assert got.loc["other"].tolist() == [0, 0]
    assert got.loc["missed"].tolist() == [0, 0]
    assert got.loc["two"].tolist() == [1, 1]
    assert list(got.index) == ["inside", "straddle", "other", "missed", "two"]


@given(st.integers(0, 50), st.integers(0, 20), st.integers(0, 50), st.integers(0, 20))
def test_gold_in_hits_agrees_with_cut_answers(cs: int, cl: int, gs: int, gl: int) -> None:
    """A retrieved chunk holds an answer whole exactly when, as the only chunk, it leaves the answer uncut."""
    import pandas as pd

    chunk = pd.DataFrame({"question_id": ["q"], "doc_id": ["d"], "start": [cs], "end": [cs + cl]})
    gold = pd.DataFrame({"question_id": ["q"], "doc_id": ["d"], "start": [gs], "end": [gs + gl]})
    got = gold_in_hits(chunk, gold).iloc[0]
    assert got["whole"] == 1 - cut_answers(chunk, gold)["cut_answers"]
    assert got["overlaps"] >= got["whole"]

def test_span_hits_precision_recall_f1_by_hand() -> None:
    import json

    import numpy as np
    import pandas as pd

    # doc "d": chunks 0 [0, 10), 1 [10, 20), 2 [20, 30) and a two-piece chunk 3 over [0, 5) + [25, 30);
    # doc "e": chunk 4 [0, 10), the same offsets as chunk 0 but another article.
    chunks = pd.DataFrame(
        {
            "doc_id": ["d", "d", "d", "d", "e"],
            "start": [0, 10, 20, 0, 0],
            "end": [10, 20, 30, 30, 10],
            "metadata": ["{}", "{}", "{}", json.dumps({"spans": [[0, 5], [25, 30]]}), "{}"],
        }
    )
    gold = pd.DataFrame({"question_id": ["q1", "q2", "q3"], "doc_id": ["d", "d", "d"], "start": [8, 12, 10], "end": [12, 15, 20]})
    hits = np.array([[0, 1, 4, -1], [3, 2, 0, -1], [-1, -1, -1, -1]])
    got = span_hits(chunks, hits, ["q1", "q2", "q3"], gold).set_index("question_id")
    # q1: [8, 12) overlaps chunks 0 and 1; chunk 4 has the offsets but the wrong article: P 2/3, R 1.
    assert got.loc["q1", "precision"] == pytest.approx(2 / 3) and got.loc["q1", "recall"] == 1.0
    assert got.loc["q1", "f1"] == pytest.approx(0.8)
    # q2: [12, 15) lies in the hull of chunk 3 but in none of its pieces: nothing overlaps.
    assert (got.loc["q2", "tp"], got.loc["q2", "recall"], got.loc["q2", "f1"]) == (0, 0.0, 0.0)
    # q3: nothing retrieved: precision 0, recall 0.
    assert (got.loc["q3", "retrieved"], got.loc["q3", "precision"], got.loc["q3", "recall"]) == (0, 0.0, 0.0)
    # Touching is not overlapping: [10, 20) and a chunk ending at 10.
    assert not overlaps([(0, 10)], 10, 20) and overlaps([(0, 11)], 10, 20)


# -- one judgement of gold spans against chunk pieces (evaluation.chunking.judge) --------------

PIECES = st.lists(st.tuples(st.integers(0, 30), st.integers(0, 8)), min_size=1, max_size=4).map(
    lambda xs: [(a, a + n) for a, n in xs]
)
GOLD = st.tuples(st.integers(0, 40), st.integers(0, 10)).map(lambda x: (x[0], x[0] + x[1]))


def by_characters(pieces: list[tuple[int, int]], start: int, end: int) -> tuple[bool, bool]:
    """judge's rule from its definition, on sets of character positions (empty spans: by position)."""
    shown = set().union(*(range(a, b) for a, b in pieces))
    gold = set(range(start, end))
    whole = gold <= shown if gold else any(a <= start <= b for a, b in pieces)
    empty_inside = any(start < a == b < end for a, b in pieces)  # an empty piece strictly inside the span
    return whole, whole or bool(gold & shown) or empty_inside


def span_chunk(doc_id: str, pieces: list[tuple[int, int]]) -> dict:
    """A CHUNKS-like row: one piece plain, several as ``metadata["spans"]`` with the hull as start/end."""
    meta = json.dumps({"spans": [list(p) for p in sorted(pieces)]}) if len(pieces) > 1 else "{}"
    return {"doc_id": doc_id, "start": min(a for a, _ in pieces), "end": max(b for _, b in pieces), "metadata": meta}


@given(PIECES, GOLD, st.randoms(use_true_random=False))
def test_judge_is_the_character_set_rule(pieces, gold, rnd) -> None:
    got = judge(pieces, *gold)
    assert got == by_characters(pieces, *gold)
    assert got[1] >= got[0]  # whole implies overlaps
    # Only the characters count, not how the pieces are written down.
    shuffled = rnd.sample(pieces, len(pieces))
    assert judge(shuffled, *gold) == judge(merge_pieces(pieces), *gold) == got
    assert overlaps(pieces, *gold) == got[1]
    if len(pieces) == 1:  # one piece: the plain rule cut_answers and gold_in_hits always had
        (a, b), (s, e) = pieces[0], gold
        assert got == (a <= s and e <= b, (a < e and s < b) or (a <= s and e <= b))


@settings(max_examples=60, deadline=None)
@given(
    st.lists(st.tuples(st.sampled_from("de"), PIECES), min_size=1, max_size=5),
    st.lists(st.tuples(st.sampled_from("de"), GOLD), min_size=1, max_size=4),
    st.data(),
)
def test_cut_answers_gold_in_hits_and_span_hits_apply_judge(chunk_specs, gold_specs, data) -> None:
    """All three judge every (chunk, gold span) pair by ``judge`` on the chunk's pieces."""
    import pandas as pd

    chunks = pd.DataFrame([span_chunk(d, p) for d, p in chunk_specs])
    pieces = chunk_pieces(chunks)
    assert pieces == [sorted(p) for _, p in chunk_specs]  # the spans back, or the one piece
    qids = [f"q{i}" for i in range(len(gold_specs))]
    gold = pd.DataFrame(
        [(q, d, s, e) for q, (d, (s, e)) in zip(qids, gold_specs)], columns=["question_id", "doc_id", "start", "end"]
    )
    docs = chunks["doc_id"].tolist()

    def judged(j: int, d: str, s: int, e: int) -> tuple[bool, bool]:
        return judge(pieces[j], s, e) if docs[j] == d else (False, False)

    # cut_answers: an answer is whole when some chunk of its document holds it whole.
    cut = sum(not any(judged(j, d, s, e)[0] for j in range(len(chunks))) for _, d, s, e in gold.itertuples(index=False))
    assert cut_answers(chunks, gold[["doc_id", "start", "end"]])["cut_answers"] == cut

    # Each question retrieves some of the chunks.
    retrieved = [data.draw(st.lists(st.integers(0, len(chunks) - 1), max_size=3, unique=True)) for _ in qids]
    hits = pd.DataFrame(
        [{"question_id": q, **chunks.iloc[j].to_dict()} for q, js in zip(qids, retrieved) for j in js],
        columns=["question_id", "doc_id", "start", "end", "metadata"],
    )
    got = gold_in_hits(hits, gold).set_index("question_id")
    for q, js, (d, (s, e)) in zip(qids, retrieved, gold_specs):
        want = [judged(j, d, s, e) for j in js]
        assert got.loc[q].tolist() == [int(any(w for w, _ in want)), int(any(o for _, o in want))]

    padded = np.array([js + [-1] * (3 - len(js)) for js in retrieved])
    spans = span_hits(chunks, padded, qids, gold).set_index("question_id")
    for q, js, (d, (s, e)) in zip(qids, retrieved, gold_specs):
        tp = sum(judged(j, d, s, e)[1] for j in js)
        assert (spans.loc[q, "retrieved"], spans.loc[q, "tp"]) == (len(js), tp)
        assert spans.loc[q, "found"] == int(tp > 0)


def test_judge_reads_the_pieces_of_a_whole_cluster() -> None:
    """A chunk that joins pieces holds what its pieces show: not its hull, and not one piece only."""
    import pandas as pd

    text = (
        "Aspirin inhibits platelets. Aspirin inhibits platelets strongly. Insulin lowers glucose. "
        "Insulin lowers blood glucose. Aspirin inhibits platelets again."
    )
    whole = whole_clusters(chunk_table([Document("d", text)], ClusterChunker(n_clusters=2)))
    a0 = text.index("Insulin lowers glucose")
    gold = pd.DataFrame({"question_id": ["q"], "doc_id": ["d"], "start": [a0], "end": [a0 + 22]})
    aspirin = whole.iloc[[0]].assign(question_id="q")  # hull: the whole text; pieces: the aspirin sentences
    assert (aspirin["start"].iloc[0], aspirin["end"].iloc[0]) == (0, len(text))
    assert gold_in_hits(aspirin, gold).iloc[0].tolist() == ["q", 0, 0]  # the hull would have said whole
    assert gold_in_hits(aspirin.drop(columns="metadata"), gold).iloc[0].tolist() == ["q", 1, 1]  # the hull's judgement
    assert gold_in_hits(whole.iloc[[1]].assign(question_id="q"), gold).iloc[0].tolist() == ["q", 1, 1]
    assert cut_answers(whole.iloc[[0]], gold)["cut_answers"] == 1 and cut_answers(whole, gold)["cut_answers"] == 0
    # Across a gap between two pieces: overlapped, not whole. Across two touching pieces: whole.
    assert judge([(0, 10), (20, 30)], 5, 25) == (False, True)
    assert judge([(0, 10), (20, 30)], 12, 18) == (False, False)  # inside the hull, in no piece
    assert judge([(0, 5), (5, 10)], 3, 7) == judge([(0, 10)], 3, 7) == (True, True)


@pytest.mark.parametrize("raw,message", [
    ({"methods": ["recursive", "nope"]}, "chunk_docs.methods: unknown value 'nope'; allowed: "),
    ({"methods": []}, "chunk_docs.methods must name at least one chunk method"),
    ({"methods": ["fixed", "recursive", "fixed"]}, "chunk_docs.methods lists fixed more than once"),
    ({"max_documents": 0}, "chunk_docs.max_documents must be in [1, inf], got 0"),
    ({"methods": "recursive"}, "chunk_docs.methods must be a list, got 'recursive'"),
])  # fmt: skip
def test_chunk_docs_params_validation(raw: dict, message: str) -> None:
    with pytest.raises(UserError) as e:
        params.section("chunk_docs", data={"chunk_docs": raw})
    assert str(e.value).startswith(message)


@pytest.mark.parametrize("raw,message", [
    ({"datasets": ["covidqa"], "documents": ["plos"]}, "data.documents: 'plos' must also be listed in data.datasets"),
    ({"datasets": ["embedded"], "documents": ["embedded"]}, "data.documents: 'embedded' is a triples dataset"),
    ({"datasets": ["embedded"], "documents": ["pubmed"]}, "data.documents: unknown value 'pubmed'"),
])  # fmt: skip
def test_data_documents_validation(raw: dict, message: str) -> None:
    with pytest.raises(UserError) as e:
        params.section("data", data={"data": {"triples": [], **raw}})
    assert str(e.value).startswith(message)


def test_chunk_docs_defaults_run_every_family() -> None:
    p = params.section("chunk_docs", data={})
    assert set(p.methods) == {"recursive", "semchunk", "cluster", "adaptive", *SEMANTIC, "fixed"} and p.max_documents is None
    assert params.section("data", data={"data": {"datasets": ["covidqa", "plos"], "triples": [], "documents": ["covidqa", "plos"]}})


def _toy_documents(tmp_path: Path) -> Path:
    import pandas as pd

    from biochunk.io import ANSWERS, DOCUMENTS, write_table

    data = tmp_path / "interim"
    docs = pd.DataFrame({"doc_id": ["a", "b"], "title": ["A", "B"], "text": [ARTICLE, SMALL], "sections": [[], []], "paragraphs": [[], []]})
    write_table(docs, data / "documents.parquet", DOCUMENTS)
    i = ARTICLE.index("412 adults")
    answers = pd.DataFrame({"question_id": ["q"], "doc_id": ["a"], "question": ["How many?"], "answer_text": ["412 adults"], "start": [i], "end": [i + 10]})
    write_table(answers, data / "answers.parquet", ANSWERS)
    return data


def _docs_stage(tmp_path: Path, script: str, *flags: str):
    import sys

    root = Path(__file__).resolve().parents[1]
    return run_python([sys.executable, str(root / "stages" / script), "--dataset", "toy", *flags], tmp_path)


EVALUATE_DOCS = ("--data", "interim", "--chunks", "out/chunks.parquet", "--runs", "out/runs.json", "--metrics", "m.json", "--plots", "plots")


def test_chunk_docs_then_evaluate_docs_on_a_toy_dataset(tmp_path) -> None:
    import pandas as pd
    import yaml

    _toy_documents(tmp_path)
    (tmp_path / "params.yaml").write_text(yaml.safe_dump({"chunk_docs": {"methods": ["recursive", "fixed"]}}))
    chunk = ("--data", "interim", "--out", "out/chunks.parquet", "--runs", "out/runs.json", "--timing", "t.json", "--params", "params.yaml")
    r = _docs_stage(tmp_path, "chunk_docs.py", *chunk)
    assert r.returncode == 0, r.stderr[-2000:]
    # What evaluate_docs measures with comes from chunk_docs' record, not from params.
    record = json.loads((tmp_path / "out" / "runs.json").read_text())
    assert record == {"documents": 2, "embed_model": "minilm", "methods": [{"counter": "words", "method": "recursive"}, {"counter": "words", "method": "fixed"}]}
    e = _docs_stage(tmp_path, "evaluate_docs.py", *EVALUATE_DOCS)
    assert e.returncode == 0, e.stderr[-2000:]
    metrics = json.loads((tmp_path / "m.json").read_text())
    assert set(metrics) == {"recursive", "fixed", "corpus"} and metrics["corpus"]["answers"] == 1
    assert metrics["fixed"]["documents"] == 2 and metrics["fixed"]["tokens_max"] == 5 and 0 <= metrics["fixed"]["cut_answer_share"] <= 1
    # Wall time goes apart, so the metrics (tracked in git by experiments/documents) are the same
    # bytes on every run.
    timing = json.loads((tmp_path / "t.json").read_text())
    assert set(timing) == set(metrics) and timing["fixed"]["seconds"] >= 0 and "encoder_load_seconds" in timing["corpus"]
    assert not any(k in values for values in metrics.values() for k in ("seconds", "mb_per_s", "chunks_per_s", "encoder_load_seconds"))
    first = (tmp_path / "m.json").read_bytes()
    again = _docs_stage(tmp_path, "chunk_docs.py", *chunk)
    assert again.returncode == 0, again.stderr[-2000:]
    assert _docs_stage(tmp_path, "evaluate_docs.py", *EVALUATE_DOCS).returncode == 0
    assert (tmp_path / "m.json").read_bytes() == first
    chunks = pd.read_parquet(tmp_path / "out" / "chunks.parquet")
    assert set(chunks["method"]) == {"recursive", "fixed"}
    sizes = pd.read_csv(tmp_path / "plots" / "sizes.csv")
    assert list(sizes.columns) == ["method", "n_tokens"] and len(sizes) == len(chunks)
    assert (tmp_path / "plots" / "sizes.png").stat().st_size > 1000


@pytest.mark.parametrize(
    "record, message",
    [
        ({"documents": 2, "methods": []}, r"out/runs.json: not a chunk_docs --runs file \(KeyError: 'embed_model'\); re-run chunk_docs"),
        ({"documents": 2, "embed_model": "minilm", "methods": [{"method": "fixed", "counter": "words"}]},
         r"out/chunks.parquet: chunks of recursive, which out/runs.json does not list; re-run chunk_docs"),
        ({"documents": 5, "embed_model": "minilm", "methods": [{"method": m, "counter": "words"} for m in ("fixed", "recursive")]},
         r"out/runs.json: chunk_docs chunked 5 documents, interim has 2; re-run chunk_docs on this dataset"),
        ({"documents": 1, "embed_model": "minilm", "methods": [{"method": m, "counter": "words"} for m in ("fixed", "recursive")]},
         r"out/chunks.parquet: chunks of document 'b', not among the 1 of interim that chunk_docs chunked; re-run chunk_docs on this dataset"),
    ],
)  # fmt: skip
def test_evaluate_docs_refuses_chunks_that_its_record_does_not_describe(tmp_path, record, message) -> None:
    import pandas as pd

    from biochunk.io import CHUNKS, write_table

    _toy_documents(tmp_path)
    rows = [("a", "fixed", 0, 5), ("b", "recursive", 0, 5)]
    chunks = pd.DataFrame(
        [{"doc_id": d, "chunk_id": f"{d}-{m}", "text": "x" * (e - s), "start": s, "end": e, "n_tokens": 1, "method": m, "labels": [], "metadata": "{}"} for d, m, s, e in rows]
    )  # fmt: skip
    write_table(chunks, tmp_path / "out" / "chunks.parquet", CHUNKS)
    (tmp_path / "out" / "runs.json").write_text(json.dumps(record))
    r = _docs_stage(tmp_path, "evaluate_docs.py", *EVALUATE_DOCS)
    assert r.returncode != 0 and re.search(message, r.stderr), r.stderr[-2000:]
    assert "Traceback" not in r.stderr and not (tmp_path / "m.json").exists()


# -- proposition chunks and generator headers ----------------------------------------------


def test_proposition_golden_groups_and_falls_back() -> None:
    text = "Aspirin reduces pain, and it lowers fever. The mice were treated. Ibuprofen acts, too."
    calls: list[list[str]] = []

    def propose(sentences):
        calls.append(list(sentences))
        return mock_propose(sentences)

    embeds: list[list[str]] = []

    def embed(texts):
        embeds.append(list(texts))
        return np.ones((len(texts), 3))  # all on one topic: only the size decides here

    chunker = PropositionChunker(propose, embed, max_words=8)
    chunks = chunker.chunk_batch([text, text])
    assert len(calls) == 1 and len(calls[0]) == 6, "every sentence of the batch goes to the generator in one call"
    assert len(embeds) == 1 and len(embeds[0]) == 10, "every proposition (or fallback sentence) of the batch in one encoder call"
    a, b = chunks[0]
    # 3 + 3 words of propositions, then the fallback sentence (4 words) would make 10 > 8.
    assert (a.text, b.text) == ("Aspirin reduces pain, and it lowers fever.", "The mice were treated. Ibuprofen acts, too.")
    assert a.metadata == {"propositions": [["Aspirin reduces pain", 0, 42], ["and it lowers fever.", 0, 42]], "fallback": 0}
    assert b.metadata["fallback"] == 1
    assert b.metadata["propositions"][0] == ["The mice were treated.", 43, 65]
    for c in a, b:
        for _, s, e in c.metadata["propositions"]:
            assert c.start <= s < e <= c.end, "each proposition keeps the offsets of its source sentence"


def test_proposition_unrelated_sentence_starts_a_new_chunk() -> None:
    """The study's rule (§2.2.3): an unrelated proposition starts a new chunk, however much room
    is left; related ones keep joining. Topic = which keyword a proposition names."""
    text = "Aspirin eases pain. Aspirin thins blood. Rhinoplasty needs rest. Rhinoplasty swelling fades."

    def embed(texts):
        return np.array([[1.0, 0.0] if "Aspirin" in t else [0.0, 1.0] for t in texts])

    def propose(sentences):
        return [[s] for s in sentences]

    chunks = PropositionChunker(propose, embed, threshold=0.8, max_words=500).chunk_batch([text])[0]
    assert [c.text for c in chunks] == ["Aspirin eases pain. Aspirin thins blood.", "Rhinoplasty needs rest. Rhinoplasty swelling fades."]
    # threshold -1: everything is related, so only the 500-word cap splits: one chunk.
    assert len(PropositionChunker(propose, embed, threshold=-1.0, max_words=500).chunk_batch([text])[0]) == 1


def test_proposition_chunks_are_embedded_as_their_propositions() -> None:
    from biochunk.vectors import embedding_text

    meta = json.dumps({"propositions": [["A inhibits B.", 0, 20], ["B is a kinase.", 0, 20]], "header": "A and B"})
    assert embedding_text("A, a drug, inhibits B (a kinase).", meta) == "A and B\nA inhibits B.\nB is a kinase."
    assert embedding_text("plain", "{}") == "plain"


def test_adaptive_header_modes() -> None:
    text = "Aspirin inhibits COX-1 in platelets. Aspirin inhibits COX-1 in platelets again."
    titles: list[list[str]] = []

    def headers(chunk_texts):
        titles.append(list(chunk_texts))
        return ["" for _ in chunk_texts]

    off = AdaptiveChunker(MockEncoder().encode, threshold=0.0, min_words=0, header="none").chunk(text)
    assert off and all("header" not in c.metadata for c in off)
    gen = AdaptiveChunker(MockEncoder().encode, threshold=0.0, min_words=0, header="generator", headers=headers)
    out = gen.chunk_batch([text, text])
    assert len(titles) == 1 and len(titles[0]) == 2, "one generator call per batch"
    assert all(c.metadata["header"] == NO_HEADER for cs in out for c in cs), "an empty title becomes the fallback"
    with pytest.raises(ValueError, match="needs a title writer"):
        AdaptiveChunker(MockEncoder().encode, header="generator")


REWRITERS_MADE: list[tuple[str, dict]] = []


class FakeRewriter:
    """A ``RewriterFactory`` that records how chunkers build their rewriter; loads no model."""

    def __init__(self, model: str, **kwargs) -> None:
        REWRITERS_MADE.append((model, kwargs))

    def propositions(self, sentences):
        return mock_propose(sentences)

    def titles(self, passages):
        return ["A title" for _ in passages]


def test_rewriting_chunkers_get_their_rewriter_from_the_builder() -> None:
    # chunking never imports the generator: the builder passes a factory (the stages pass
    # biochunk.generation.rewrite.Rewriter), called with chunk.generator as before.
    REWRITERS_MADE.clear()
    prop = build(params.defaults("chunk", method="proposition", generator="my/lm"), MockEncoder(), rewriter=FakeRewriter)
    assert REWRITERS_MADE == [("my/lm", {"temperature": 0.2, "seed": 42})]
    assert prop.chunk("Aspirin lowers fever, and it eases pain.")[0].metadata["propositions"][0][0] == "Aspirin lowers fever"
    with pytest.raises(ValueError, match="chunk.method proposition rewrites sentences .* must be built with a rewriter"):
        build(params.defaults("chunk", method="proposition"), MockEncoder())
    with pytest.raises(ValueError, match="chunk.method proposition needs an encoder"):
        build(params.defaults("chunk", method="proposition"), rewriter=FakeRewriter)
    p = params.defaults("chunk", method="adaptive", header="generator", min_words=0, threshold=0.0)
    adaptive = build(p, MockEncoder(), rewriter=FakeRewriter)
    assert REWRITERS_MADE[-1] == ("smollm2-135m", {})
    assert {c.metadata["header"] for c in adaptive.chunk("Aspirin inhibits COX-1. It lowers fever.")} == {"A title"}
    with pytest.raises(ValueError, match="chunk.header: generator .* must be built with a rewriter"):
        build(p, MockEncoder())
    build(params.defaults("chunk", method="adaptive"), MockEncoder())  # phrase headers: no rewriter needed
    # The generator is a model the stages resolve first exactly when a rewriter is needed.
    needs = {m: get(m).needs_rewriter(p) for m in methods()}
    assert {m for m, n in needs.items() if n} == {"adaptive", "proposition"}
    assert ("smollm2-135m", "chunk.generator") in models_used(p, "minilm")
    assert ("smollm2-135m", "chunk.generator") not in models_used(params.defaults("chunk", method="adaptive"), "minilm")


def test_rewrite_parsing_and_plain_prompt() -> None:
    from biochunk.generation.rewrite import chat_parts, parse_propositions, parse_title

    assert parse_propositions("- A inhibits B.\n\n* B is a kinase.\n2) A inhibits B.\n•  C.") == [
        "A inhibits B.", "B is a kinase.", "C."
    ]  # fmt: skip
    assert parse_propositions("") == []
    echo = "- Metformin lowers blood glucose.\nThe sentence is a self-contained statement.\nSentence: 1. A binds B."
    assert parse_propositions(echo) == ["A binds B."], "echoed example, remarks and labels are not propositions"
    assert parse_title('\n Title: "COX-2 inhibition"\nmore') == "COX-2 inhibition"
    assert parse_title("   \n") == ""
    assert parse_title('The title of the passage is: "DC-SIGNR and HIV-1 transmission"') == "DC-SIGNR and HIV-1 transmission"
    assert parse_title("Title for this passage: A B") == "A B" and parse_title("Titles of drugs") == "Titles of drugs"
    assert parse_title("Title drug") == "Title drug" and parse_title("The title is COX-2") == "COX-2"
    assert parse_title(" ".join(f"w{i}" for i in range(30))) == " ".join(f"w{i}" for i in range(15))  # 5-15 words asked
    prefix, template = chat_parts(object(), "SYS", "Do it: ")  # no chat template: plain text
    assert prefix == "SYS\n\nDo it: " and template.format("x") == "x\n\nAnswer:\n"


def test_chunk_params_header_and_generator() -> None:
    p = params.parse(ChunkParams, {"header": "generator", "generator": "my/model"}, "chunk")
    assert (p.header, p.generator) == ("generator", "my/model")
    with pytest.raises(UserError, match="chunk.header: unknown value 'title'; allowed: generator, none, phrase"):
        params.parse(ChunkParams, {"header": "title"}, "chunk")
    with pytest.raises(UserError, match="chunk.generator must name a model"):
        params.parse(ChunkParams, {"generator": " "}, "chunk")


@pytest.mark.slow
def test_proposition_from_params_with_the_offline_generator() -> None:
    from biochunk.generation.rewrite import Rewriter

    chunker = build(params.defaults("chunk", method="proposition"), MockEncoder(), rewriter=Rewriter)
    text = "Aspirin reduces inflammation and lowers fever."
    first = chunker.chunk(text)
    assert [c.text for c in first] == [text]
    props = first[0].metadata["propositions"]
    assert props and all(p[0].strip() and (p[1], p[2]) == (0, len(text)) for p in props)
    assert chunker.chunk(text) == first, "seeded sampling (temperature 0.2) gives the same propositions again"


def test_memo_encoder_embeds_each_distinct_text_once() -> None:
    from biochunk.embedding import MemoEncoder

    inner = MockEncoder()
    memo = MemoEncoder(inner)
    first = memo.encode(["a b", "c", "a b"])
    again = memo.encode(["c", "d"])
    assert inner.calls == [["a b", "c"], ["d"]], "repeats within and across calls are not embedded again"
    np.testing.assert_array_equal(first[0], first[2])
    np.testing.assert_array_equal(again[0], first[1])
    assert memo.model_name == "mock" and memo.encode([]).shape == (0, 32)


def test_adaptive_cuts_a_single_unit_over_max_words() -> None:
    text = "one " * 25 + "end. Short tail here."  # a 26-word unit, then a short one
    chunker = AdaptiveChunker(MockEncoder().encode, threshold=0.0, max_words=10, min_words=0, unit="sentence")
    chunks = chunker.chunk(text)
    verify_chunk_indices(chunks, text, chunker)
    assert max(count_words(c.text) for c in chunks) <= 10


def test_dense_qa_contexts_embed_chunks_as_the_embed_stage_does() -> None:
    import pandas as pd

    from biochunk.retrieval.contexts import dense_contexts

    meta = json.dumps({"propositions": [["A inhibits B.", 0, 12]], "header": "A and B"})
    chunks = pd.DataFrame({"chunk_id": ["p:d#0"], "doc_id": ["d"], "text": ["A, B: inhibits"], "method": ["proposition"], "metadata": [meta]})
    class Encoder(MockEncoder):
        def encode(self, texts, progress=False):
            return super().encode(texts)

    enc = Encoder()
    out = dense_contexts(chunks, pd.DataFrame({"id": ["q"], "question": ["What inhibits B?"]}), enc, top_k=1)
    assert enc.calls[-1] == ["A and B\nA inhibits B."], "header and propositions, not the raw span"
    assert out.chunk_id.tolist() == ["p:d#0"]


def test_structural_similarity_of_identical_sentences_is_the_weight_sum() -> None:
    # The authors' weights sum to 0.82: two identical sentences sit 0.18 apart, not 0.
    from biochunk.chunking.structural import SIMILARITY_WEIGHTS, similarity_record, structural_similarity

    r = similarity_record("The 2019 cohort included 1234 patients, aged 40-60.")
    assert structural_similarity(r, r) == pytest.approx(sum(SIMILARITY_WEIGHTS.values())) == pytest.approx(0.82)
    other = similarity_record("Yes.")
    assert structural_similarity(r, other) < structural_similarity(r, r)


def test_structural_distance_similarity_is_one_minus_the_weighted_similarity() -> None:
    from biochunk.chunking.structural import similarity_distances, similarity_record, structural_similarity

    text = "Aa bb. Cc dd, ee; ff.\n\nThe 2019 cohort included 1234 patients."
    spans = sentence_spans(text)
    d = similarity_distances(text, spans)
    recs = [similarity_record(text[s:e]) for s, e in spans]
    assert d.tolist() == pytest.approx([1 - structural_similarity(*pair) for pair in itertools.pairwise(recs)])
    # the number-heavy third sentence is structurally further from the second than the first two are apart
    assert d[1] > d[0]


def test_structural_distance_changes_the_chunks_on_the_embedded_data() -> None:
    # chunk.structural_distance reaches the output: the embedded dataset's sentences, ten to a
    # document, cut with the authors' alpha under each D_struct form.
    root = Path(__file__).resolve().parents[1] / "biochunk" / "datasets" / "embedded"
    sents = [json.loads(line)["SENTENCE"] for line in (root / "train.jsonl").read_text().splitlines()]
    docs = [" ".join(sents[i : i + 10]) for i in range(0, len(sents), 10)]

    def cut(form: str) -> list[list[str]]:
        chunker = build(params.defaults("chunk", method="structural", alpha=0.05, structural_distance=form), MockEncoder())
        return [[c.text for c in cs] for cs in chunker.chunk_batch(docs)]

    assert cut("euclidean") != cut("similarity")
    assert params.section("chunk", root.parents[2] / "params.yaml").structural_distance == "euclidean"


def test_structural_distance_is_validated() -> None:
    with pytest.raises(UserError, match="chunk.structural_distance: unknown value 'cosine'"):
        params.parse(ChunkParams, {"structural_distance": "cosine"}, "chunk")
    with pytest.raises(ValueError, match="chunk.structural_distance must be one of euclidean, similarity"):
        StructuralChunker(MockEncoder().encode, structural_distance="cosine")


def test_boundary_overlap_repeats_the_previous_chunks_last_words_within_the_bound() -> None:
    text = " ".join(f"Sentence {i} talks about topic{i} alone here." for i in range(12))
    plain = AdaptiveChunker(MockEncoder().encode, threshold=0.99, unit="sentence", min_words=0).chunk(text)
    chunks = AdaptiveChunker(MockEncoder().encode, threshold=0.99, unit="sentence", min_words=0, boundary_overlap=3).chunk(text)
    assert len(plain) == len(chunks) > 2
    assert [c.end for c in chunks] == [c.end for c in plain]  # ends never move
    assert chunks[0].start == plain[0].start
    for prev, c, p in zip(chunks, chunks[1:], plain[1:]):
        assert text[c.start : c.end] == c.text  # exact offsets
        carried = text[c.start : p.start].split()
        assert carried == text[prev.start : prev.end].split()[-3:]  # the last 3 words of the predecessor


def test_boundary_overlap_respects_the_word_cap() -> None:
    text = " ".join(f"Topic{i} one two three four five." for i in range(8))
    chunks = AdaptiveChunker(MockEncoder().encode, threshold=0.99, max_words=6, unit="sentence", min_words=0, boundary_overlap=30).chunk(text)
    assert all(len(c.text.split()) <= 6 for c in chunks)


def test_boundary_overlap_changes_the_chunks_on_the_embedded_data() -> None:
    # chunk.boundary_overlap reaches the output: the embedded sentences, ten to a document.
    root = Path(__file__).resolve().parents[1] / "biochunk" / "datasets" / "embedded"
    sents = [json.loads(line)["SENTENCE"] for line in (root / "train.jsonl").read_text().splitlines()]
    docs = [" ".join(sents[i : i + 10]) for i in range(0, len(sents), 10)]

    def cut(overlap: int) -> list[list[tuple[int, int]]]:
        chunker = build(params.defaults("chunk", method="adaptive", unit="sentence", min_words=0, boundary_overlap=overlap), MockEncoder())
        return [[(c.start, c.end) for c in cs] for cs in chunker.chunk_batch(docs)]

    plain, repaired = cut(0), cut(30)
    assert plain != repaired
    assert [[e for _, e in d] for d in plain] == [[e for _, e in d] for d in repaired]
    assert params.section("chunk", root.parents[2] / "params.yaml").boundary_overlap == 0
    with pytest.raises(UserError, match="chunk.boundary_overlap"):
        params.parse(ChunkParams, {"boundary_overlap": -1}, "chunk")
