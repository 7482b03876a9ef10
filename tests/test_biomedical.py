"""Biomedical chunking (issue 4): entities, windows, triggers, hierarchy, propositions,
the hybrid pool and the selection rule.

Golden cases are the paper's examples, worked out by hand against the shipped GM-CIHT
configuration; the properties run on generated sentences full of multi-word and
hyphenated names. The spaCy NER tests load the small model once (module fixture).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from biochunk.chunking import base, build
from biochunk.chunking.biomedical import entities as ent
from biochunk.chunking.biomedical.hierarchy import (
    FLAT,
    HIERARCHY_ORDERS,
    Hierarchy,
    dataset_hierarchy,
    load_hierarchy,
    reorder,
)
from biochunk.chunking.biomedical.hybrid import HybridChunker
from biochunk.chunking.biomedical.induce import count, render, tiered
from biochunk.chunking.biomedical.propositions import Proposition, Scoring, extract, outside_entities
from biochunk.chunking.biomedical.selection import select
from biochunk.chunking.biomedical.triggers import (
    TRIGGER_DIR,
    Lexicon,
    dataset_lexicon,
    dataset_relations,
    find_triggers,
    load_lexicon,
)
from biochunk.chunking.biomedical.windows import entity_ranges, entity_windows, window_ranges
from biochunk.chunking.biomedical.words import normalise, tokens
from biochunk.chunking.windows import FixedWindowChunker
from biochunk.errors import UserError
from biochunk.params import ChunkParams, defaults, parse

EMBEDDED = Path(__file__).resolve().parents[1] / "biochunk" / "datasets" / "embedded"
PAPER = "Aspirin therapy reduces inflammation by inhibiting COX-2 expression"
DATASETS = ["gm-ciht", "ddi", "chemprot", "ade", "embedded"]
PROPERTY = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@pytest.fixture(scope="module")
def gm() -> tuple[Lexicon, Hierarchy]:
    return dataset_lexicon("gm-ciht"), dataset_hierarchy("gm-ciht")


def propositions(text: str, lexicon: Lexicon, hierarchy: Hierarchy = FLAT, tiers: bool = True) -> list[Proposition]:
    words = tokens(text)
    ranges = entity_ranges([(w.start, w.end) for w in words], ent.regex_entities(text))
    hits = outside_entities(find_triggers(words, lexicon), ranges)
    return extract(words, ranges, hits, lexicon, Scoring(hierarchy, tiers))


def cuts(span: tuple[int, int], entity: tuple[int, int]) -> bool:
    """A boundary of ``span`` falls strictly inside ``entity``."""
    return any(entity[0] < b < entity[1] for b in span)


# -- the paper's examples -----------------------------------------------------------------


def test_paper_example_gives_two_propositions_with_priorities_3_and_6(gm) -> None:
    props = propositions(PAPER, *gm)
    assert [(p.trigger, p.relation, p.tier, p.priority) for p in props] == [
        ("reduces", "AFFECTS", 3, 3),  # AFFECTS weight 2 + tertiary bonus 1
        ("inhibiting", "INHIBITS", 1, 6),  # INHIBITS weight 3 + primary bonus 3
    ]
    reduces, inhibiting = props
    assert (PAPER[slice(*reduces.head)], PAPER[slice(*reduces.tail)]) == ("Aspirin therapy", "inflammation")
    assert (PAPER[slice(*inhibiting.head)], PAPER[slice(*inhibiting.tail)]) == ("inflammation", "COX-2 expression")
    assert all(p.pattern == "infix" and not p.passive and not p.negated and not p.hedged for p in props)


def test_paper_example_in_the_hybrid_pool(gm) -> None:
    chunker = HybridChunker(*gm)
    pool = chunker.chunk(PAPER)
    props = [c for c in pool if c.metadata["kind"] == "proposition"]
    assert sorted(c.metadata["priority"] for c in props) == [3, 6]
    assert {c.metadata["relation_hint"] for c in props} == {"AFFECTS", "INHIBITS"}
    # Everything else is not a proposition and has priority 0.
    assert all(c.metadata["priority"] == 0 for c in pool if c.metadata["kind"] != "proposition")


def test_receptor_complex_is_never_split(gm) -> None:
    text = "It was observed that T-cell receptor-complex stimulates dihydrofolate reductase within 12 hours of exposure."
    entity = (text.index("receptor-complex"), text.index("receptor-complex") + len("receptor-complex"))
    assert entity in ent.regex_entities(text)
    pool = HybridChunker(*gm).chunk(text)
    assert not [c for c in pool if cuts((c.start, c.end), entity)]
    words = [(w.start, w.end) for w in tokens(text)]
    assert not [w for w in entity_windows(words, [entity]) if cuts(w, entity)]
    assert any(c.start <= entity[0] and entity[1] <= c.end for c in pool if c.metadata["kind"] == "entity_window")


@pytest.mark.parametrize(
    "text,head,tail,pattern",
    [
        ("COX-2 was inhibited by aspirin", "aspirin", "COX-2", "infix"),
        ("Aspirin inhibits COX-2", "Aspirin", "COX-2", "infix"),
        ("Patients were treated with metformin for two years.", "metformin", "Patients", "infix"),
        ("Inhibition of COX-2 by aspirin was complete.", "aspirin", "COX-2", "prefix"),
    ],
)
def test_passive_trigger_with_by_or_with_makes_the_agent_the_head(gm, text: str, head: str, tail: str, pattern: str) -> None:
    (p,) = propositions(text, *gm)
    assert (text[slice(*p.head)], text[slice(*p.tail)], p.pattern) == (head, tail, pattern)
    assert p.passive == (head != text.split()[0])


def test_postfix_pattern_and_no_arguments(gm) -> None:
    text = "Warfarin and aspirin interact."
    (p,) = propositions(text, *gm)
    assert (p.pattern, p.relation, text[slice(*p.head)], text[slice(*p.tail)]) == ("postfix", "INTERACTS_WITH", "Warfarin", "aspirin")
    assert propositions("It inhibits.", *gm) == []  # one argument only


def test_negation_and_hedge_stay_inside_and_are_flagged(gm) -> None:
    text = "In this trial aspirin did not prevent stroke, and statins may possibly reduce risk."
    props = {p.trigger: p for p in propositions(text, *gm)}
    assert props["prevent"].negated and not props["prevent"].hedged
    assert "not" in text[props["prevent"].start : props["prevent"].end]
    assert props["reduce"].hedged


def test_overlapping_propositions_keep_the_highest_priority(gm) -> None:
    # "inhibits and reduces": both triggers read the same two arguments; INHIBITS (P 6) wins.
    (p,) = propositions("Aspirin inhibits and reduces COX-2 activity.", *gm)
    assert (p.trigger, p.priority) == ("inhibits", 6)


def test_ties_in_priority_go_to_the_better_tier() -> None:
    lex = Lexicon(
        triggers={("alpha",): _trigger("alpha", 3, "A"), ("beta",): _trigger("beta", 1, "B")},
        negations=frozenset(),
        hedges=frozenset(),
    )
    hier = Hierarchy({"A": 3, "B": 1})  # alpha: 3 + 1 = 4, beta: 1 + 3 = 4
    (p,) = propositions("cox alpha beta lox", lex, hier)
    assert (p.trigger, p.priority, p.tier) == ("beta", 4, 1)


def _trigger(word: str, tier: int, relation: str):
    from biochunk.chunking.biomedical.triggers import Trigger

    return Trigger(word, tier, (relation,))


def test_switches_change_priorities(gm) -> None:
    untiered = propositions(PAPER, *gm, tiers=False)
    assert [(p.priority, p.tier) for p in untiered] == [(2 + 2, None), (3 + 2, None)]
    flat = propositions(PAPER, gm[0], FLAT)
    assert [p.priority for p in flat] == [1 + 1, 1 + 3]


# -- entities ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "text,expected",
    [
        ("Patients took [aspirin] daily.", ["[aspirin]"]),
        ("Levels of [tumor necrosis factor] rose [12].", ["[tumor necrosis factor]"]),  # [12]: a citation
        ("the effect of [  dance therapy  ] on {  hypertension  }", ["[  dance therapy  ]", "{  hypertension  }"]),
        ("The Tumor Necrosis Factor level rose.", ["Tumor Necrosis Factor"]),  # leading "The" trimmed
        ("Aspirin works.", []),  # one capitalised word: a sentence opener
        ("alpha-ketoglutarate and the receptor-complex bind COX-2.", ["alpha-ketoglutarate", "receptor-complex", "COX-2"]),
        ("Doses of 10-12 mg were given.", []),  # a number range is not a name
        ("The Tumor Necrosis Factor-alpha gene", ["Tumor Necrosis Factor-alpha"]),  # overlapping rules merge
        ("T-cell receptor-complex", ["T-cell", "receptor-complex"]),  # neighbours stay apart
    ],
)
def test_regex_entities(text: str, expected: list[str]) -> None:
    assert [text[s:e] for s, e in ent.regex_entities(text)] == expected


def test_merge_spans() -> None:
    assert ent.merge_spans([(5, 9), (0, 3), (2, 4), (9, 12)]) == [(0, 4), (5, 9), (9, 12)]
    assert ent.merge_spans([]) == []


def test_unknown_entity_mode_is_rejected(gm) -> None:
    with pytest.raises(ValueError, match="chunk.entities must be one of regex, ner"):
        ent.detect(["x"], "spacy")
    with pytest.raises(ValueError, match="chunk.entities"):
        HybridChunker(*gm, entities="gazetteer")


@pytest.fixture(scope="module")
def ner_ready() -> None:
    pytest.importorskip(ent.NER_MODEL)
    ent.detect(["warm-up"], "ner")  # loads the model once for the module


@pytest.mark.slow
def test_ner_entities_map_back_to_the_text(ner_ready) -> None:
    texts = ["The World Health Organization tested aspirin in Boston in 2019.", "no names here"]
    spans = ent.detect(texts, "ner")
    assert [texts[0][s:e] for s, e in spans[0]] == ["The World Health Organization", "Boston"]  # 2019: a date, left out
    assert spans[1] == []


@pytest.mark.slow
def test_hybrid_with_ner_entities_keeps_offsets(ner_ready, gm) -> None:
    chunker = HybridChunker(*gm, entities="ner")
    texts = [PAPER, "The World Health Organization recommends that patients receive insulin."]
    for text, chunks in zip(texts, chunker.chunk_batch(texts)):
        assert chunks and all(text[c.start : c.end] == c.text for c in chunks)


# -- windows -------------------------------------------------------------------------------


def test_windows_without_entities_are_8_words_every_3() -> None:
    assert window_ranges(20, []) == [(0, 8), (3, 11), (6, 14), (9, 17), (12, 20)]
    assert window_ranges(3, []) == [(0, 3)]  # a short sentence is one window


def test_window_end_inside_an_entity_extends_and_start_inside_moves_past() -> None:
    # Entity on words 6..9: the first window's end (8) falls inside it and extends to 10.
    assert window_ranges(20, [(6, 10)])[:2] == [(0, 10), (3, 11)]
    # Entity on words 2..6: the nominal starts 3 and 6 fall inside it and move past it, to 7;
    # the two windows starting at 7 (ends 12 and 14) are kept as the longer one.
    assert window_ranges(20, [(2, 7)])[:3] == [(0, 8), (7, 14), (9, 17)]


def test_a_long_entity_makes_a_window_longer_than_12() -> None:
    # Words 5..19 are one name: the first window's end (8) extends to 19 (19 words).
    first = window_ranges(25, [(5, 19)])[0]
    assert first == (0, 19)


WORDS = ["the", "levels", "in", "patients", "inhibits", "was", "reduced", "by", "and", "of", "expression", "with"]
NAMES = ["receptor-complex", "alpha-ketoglutarate", "COX-2", "T-cell", "Tumor Necrosis Factor", "[aspirin]",
         "[tumor necrosis factor]", "Small Cell Lung Cancer", "IL-1 Beta Converting Enzyme"]  # fmt: skip
SENTENCES = st.lists(st.one_of(st.sampled_from(WORDS), st.sampled_from(NAMES)), min_size=1, max_size=45).map(" ".join)


@PROPERTY
@given(text=SENTENCES)
def test_entity_windows_never_split_an_entity_and_cover_each(text: str) -> None:
    words = [(w.start, w.end) for w in tokens(text)]
    found = ent.regex_entities(text)
    ranges = entity_ranges(words, found)
    windows = window_ranges(len(words), ranges)
    assert windows and windows[0][0] == 0 and windows[-1][1] == len(words)
    for i, j in windows:
        assert not [r for r in ranges if r[0] < i < r[1] or r[0] < j < r[1]], "a window cuts an entity"
        if j - i < 5:
            assert j == len(words), "short window before the sentence ends"
        if j - i > 12:
            assert any(b == j for _, b in ranges), "long window not forced by an entity"
    for a, b in ranges:
        assert any(i <= a and b <= j for i, j in windows), "an entity is in no window whole"
    assert [i for i, _ in windows] == sorted(i for i, _ in windows)
    # The same in characters, for the detected spans.
    for span in entity_windows(words, found):
        assert not [e for e in found if cuts(span, e)]


@PROPERTY
@given(text=SENTENCES)
def test_hybrid_pool_contract_on_generated_sentences(text: str) -> None:
    chunker = HybridChunker(dataset_lexicon("gm-ciht"), dataset_hierarchy("gm-ciht"))
    pool = chunker.chunk(text)
    found = ent.regex_entities(text)
    assert pool, "the pool is never empty"
    for c in pool:
        assert text[c.start : c.end] == c.text
        assert 0.0 <= c.metadata["structural"] <= 1.0
        if set(c.metadata["kinds"]) != {"fixed"}:  # fixed windows are BioMedRAG's baseline: they may cut
            assert not [e for e in found if cuts((c.start, c.end), e)], c.metadata["kind"]
        if c.metadata["kind"] == "proposition":
            for a, b in (c.metadata["head"], c.metadata["tail"]):
                assert c.start <= a < b <= c.end
    fixed = {(s, e) for s, e, _ in FixedWindowChunker(size=5).spans(text)}
    assert fixed <= {(c.start, c.end) for c in pool if "fixed" in c.metadata["kinds"]}


# -- triggers --------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "forms",
    [
        "inhibit inhibits inhibited inhibiting inhibition inhibitor inhibitors inhibitory",
        "treat treats treated treating treatment treatments",
        "cause causes caused causing",
        "stimulate stimulates stimulated stimulating stimulation stimulatory",
        "reduce reduces reduced reducing",
        "use uses used using",
        "modify modifies modified",
    ],
)
def test_normaliser_folds_variants(forms: str) -> None:
    assert len({normalise(w) for w in forms.split()}) == 1


def test_trigger_variants_match(gm) -> None:
    lexicon = gm[0]
    for text in ["aspirin inhibits it", "inhibition by aspirin", "an inhibitor of", "was inhibited"]:
        assert [h.trigger.word for h in find_triggers(tokens(text), lexicon)] == ["inhibit"], text
    assert [h.trigger.word for h in find_triggers(tokens("a reduction of pain"), lexicon)] == ["reduce"]  # listed variant
    hits = find_triggers(tokens("edema due to sepsis"), lexicon)
    assert [(h.trigger.word, h.j - h.i) for h in hits] == [("due to", 2)]  # a phrase
    hits = find_triggers(tokens("it was not effective in pain"), lexicon)
    assert [h.trigger.relation for h in hits] == ["DOES_NOT_TREAT"]  # the longest match wins


@pytest.mark.parametrize("dataset", DATASETS)
def test_shipped_configs_load(dataset: str) -> None:
    lexicon = dataset_lexicon(dataset)
    relations = set(dataset_relations(dataset))
    assert lexicon.triggers and lexicon.relations <= relations
    assert lexicon.negations and lexicon.hedges
    assert set(dataset_hierarchy(dataset).weights) <= relations


@pytest.mark.parametrize("dataset", ["gm-ciht", "ddi", "chemprot", "embedded"])
def test_induced_files_are_valid_lexicons(dataset: str) -> None:
    lexicon = load_lexicon(TRIGGER_DIR / f"{dataset}.induced.yaml", dataset_relations(dataset))
    assert {t.tier for t in lexicon.triggers.values()} <= {1, 2, 3}


GOOD = "triggers:\n  inhibit: {tier: 1, relations: [INHIBITS]}\nnegations: [not]\nhedges: [may]\n"


@pytest.mark.parametrize(
    "content,message",
    [
        ("triggers:\n  inhibit: {tier: 1, relations: [INHIBIT]}\n", r"triggers\.inhibit: unknown relation 'INHIBIT'"),
        ("triggers:\n  inhibit: {tier: 4, relations: [INHIBITS]}\n", r"triggers\.inhibit: tier must be 1 \(primary\), 2 .* got 4"),
        ("triggers:\n  inhibit: {tier: 1, relations: [INHIBITS]\n", r"not valid YAML"),
        (GOOD.replace("negations", "  inhibit: {tier: 2, relations: [INHIBITS]}\nnegations"), r"'inhibit' is given twice"),
        ("triggers:\n  inhibit: {tier: 1, relations: [INHIBITS]}\n  inhibition: {tier: 2, relations: [INHIBITS]}\n",
         r"triggers\.inhibition: 'inhibition' matches the same words as triggers\.inhibit"),
        ("triggers:\n  with: {tier: 1, relations: [INHIBITS]}\n", r"triggers\.with: 'with' is a function word"),
        ("triggers:\n  inhibit: {tier: 1, relations: [INHIBITS], weight: 3}\n", r"triggers\.inhibit: unknown key 'weight'"),
        (GOOD.replace("[not]", "[not, no]"), r"negations\[1\]: expected a word or phrase, got False"),
        ("- just a list\n", r"expected a mapping at the top level"),
    ],
)  # fmt: skip
def test_trigger_file_errors_name_the_file_and_entry(tmp_path: Path, content: str, message: str) -> None:
    path = tmp_path / "bad.yaml"
    path.write_text(content)
    with pytest.raises(UserError, match=message) as err:
        load_lexicon(path, {"INHIBITS", "TREATS"})
    assert str(path) in str(err.value)


def test_good_trigger_file_loads(tmp_path: Path) -> None:
    path = tmp_path / "ok.yaml"
    path.write_text(GOOD)
    lexicon = load_lexicon(path, {"INHIBITS"})
    assert lexicon.triggers[("inhibit",)].bonus == 3 and lexicon.negations == {("not",)}


@pytest.mark.parametrize(
    "content,message",
    [
        ("weights: {TREAT: 4}\n", r"weights\.TREAT: unknown relation"),
        ("weights: {TREATS: 0}\n", r"weights\.TREATS: a weight must be an integer >= 1, got 0"),
        ("default: 1.5\nweights: {TREATS: 2}\n", r"default: a weight must be an integer"),
        ("weights: {TREATS: 2\n", r"not valid YAML"),
    ],
)
def test_hierarchy_file_errors(tmp_path: Path, content: str, message: str) -> None:
    path = tmp_path / "h.yaml"
    path.write_text(content)
    with pytest.raises(UserError, match=message):
        load_hierarchy(path, {"TREATS"})


def test_gm_ciht_hierarchy_is_the_papers() -> None:
    h = dataset_hierarchy("gm-ciht")
    assert h.weight("TREATS") == 4
    assert {h.weight(r) for r in ["INHIBITS", "STIMULATES", "CAUSES", "PREVENTS"]} == {3}
    assert {h.weight(r) for r in ["AFFECTS", "INTERACTS_WITH"]} == {2}
    assert h.weight("COEXISTS_WITH") == 1 and h.weight("PROCESS_OF") == 1


# -- induction -------------------------------------------------------------------------------


def test_induction_counts_words_near_the_pair_and_tiers_them(tmp_path: Path) -> None:
    rows = (
        [(f"drug{i} strongly inhibits gene{i} in cells", f"drug{i}", "INHIBITS", f"gene{i}") for i in range(8)]
        + [(f"drug{i} inhibits and treats disease{i}", f"drug{i}", "TREATS", f"disease{i}") for i in range(2)]
        + [(f"drug{i} treats disease{i} in patients of the clinic", f"drug{i}", "TREATS", f"disease{i}") for i in range(8)]
    )  # fmt: skip
    c = count(rows)
    assert c.per_word["inhibit"] == {"INHIBITS": 8, "TREATS": 2}
    assert "clinic" not in c.per_word  # 4 words past the tail: outside the +-3 window
    entries = tiered(c, min_count=3)
    assert entries["inhibits"] == {"tier": 1, "relations": ["INHIBITS"], "count": 10, "share": 0.8}
    assert entries["treats"]["tier"] == 1 and entries["treats"]["relations"] == ["TREATS"]
    path = tmp_path / "induced.yaml"
    path.write_text(render(entries, "test"))
    assert load_lexicon(path, {"INHIBITS", "TREATS"}).triggers[("inhibit",)].tier == 1


# -- selection ---------------------------------------------------------------------------------

SIMS = [0.9, 0.8, 0.7, 0.6, 0.5, 0.4]
KINDS = ["fixed", "fixed", "proposition", "proposition", "fixed", "proposition"]
PRIOS = [0, 0, 3, 6, 0, 7]
TIERS = [None, None, 3, 1, None, 1]


def test_bias_puts_the_best_proposition_of_the_top_n_second() -> None:
    # Index 5 (P 7) is outside the top 5 by similarity: index 3 (P 6) takes slot 2.
    assert select(SIMS, KINDS, PRIOS, TIERS) == [0, 3, 1, 2, 4, 5]
    assert select(SIMS, KINDS, PRIOS, TIERS, k=3) == [0, 3, 1]
    assert select(SIMS, KINDS, PRIOS, TIERS, top_n=6) == [0, 5, 1, 2, 3, 4]


def test_bias_without_a_proposition_in_the_top_n_is_cosine() -> None:
    assert select(SIMS, KINDS, PRIOS, TIERS, top_n=2) == [0, 1, 2, 3, 4, 5]
    assert select([0.1, 0.5, 0.3], ["fixed"] * 3, [0] * 3, [None] * 3) == [1, 2, 0]


def test_bias_ties_go_to_the_better_tier_then_similarity() -> None:
    kinds = ["fixed", "proposition", "proposition", "proposition"]
    assert select([0.9, 0.8, 0.7, 0.6], kinds, [0, 5, 5, 5], [None, 2, 1, 1]) == [0, 2, 1, 3]


def test_slot_one_is_the_most_similar_even_when_it_is_a_proposition() -> None:
    kinds = ["proposition", "fixed", "proposition"]
    assert select([0.9, 0.8, 0.7], kinds, [2, 0, 6], [3, None, 1]) == [0, 2, 1]


def test_mixed_ranking_blends_cosine_and_structural() -> None:
    # 0.7 * cos + 0.3 * structural: [0.7*0.9, 0.7*0.8 + 0.3, 0.7*0.5 + 0.3*0.5] = [0.63, 0.86, 0.5]
    kinds = ["fixed", "proposition", "entity_window"]
    assert select([0.9, 0.8, 0.5], kinds, [0, 6, 0], [None, 1, None], ranking="mixed", structural=[0.0, 1.0, 0.5]) == [1, 0, 2]
    # Without structural scores, priorities / their maximum: [0, 1, 0.5].
    assert select([0.9, 0.8, 0.5], ["fixed"] * 3, [0, 6, 3], [None] * 3, ranking="mixed") == [1, 0, 2]
    assert select([0.9, 0.8, 0.5], ["fixed"] * 3, [0, 6, 3], [None] * 3, ranking="cosine") == [0, 1, 2]


@pytest.mark.parametrize(
    "kwargs,message",
    [
        ({"ranking": "best"}, "rank.selection must be one of bias, mixed, cosine"),
        ({"top_n": 0}, r"rank.top_n must be >= 1"),
        ({"k": 0}, "k must be >= 1"),
        ({"priorities": [1]}, "priorities has 1 entries, similarities 6"),
        ({"structural": [2.0] * 6, "ranking": "mixed"}, r"structural scores must lie in \[0, 1\]"),
    ],
)
def test_select_rejects_bad_arguments(kwargs: dict, message: str) -> None:
    args = {"similarities": SIMS, "kinds": KINDS, "priorities": PRIOS, "tiers": TIERS, **kwargs}
    with pytest.raises(ValueError, match=message):
        select(**args)


# -- the hybrid pool ----------------------------------------------------------------------------

REAL = [
    "In female rats, neonatal quinpirole treatment enhanced amphetamine locomotor sensitization compared with "
    "quinpirole-free controls.",
    "Down-regulation of prostate-specific antigen (PSA) expression, an AR-target gene, by estramustine was accompanied "
    "by the blockade of the mutated androgen receptor.",
    "the development of  cerebral edema  after experimental  subarachnoid hemorrhage  (sah) was studied in cats.",
    "Aspirin may not reduce the risk of stroke. Patients were treated with metformin.",
]


@pytest.mark.parametrize("text", REAL)
def test_hybrid_pool_on_real_sentences(gm, text: str) -> None:
    chunker = HybridChunker(*gm)
    pool = chunker.chunk(text)
    assert all(text[c.start : c.end] == c.text and c.method == "hybrid" for c in pool)
    kinds = {k for c in pool for k in c.metadata["kinds"]}
    assert "fixed" in kinds and "entity_window" in kinds
    fixed = {(s, e) for s, e, _ in FixedWindowChunker(size=5).spans(text)}
    assert fixed <= {(c.start, c.end) for c in pool}, "the 5-word fallback is always in the pool"
    assert len({(c.start, c.end) for c in pool}) == len(pool), "one chunk per span"
    for c in pool:
        m = c.metadata
        assert set(m) >= {"kind", "kinds", "priority", "tier", "relation_hint", "structural", "entities"}
        assert 0 <= m["structural"] <= 1
        assert (m["priority"] > 0) == (m["kind"] == "proposition")


def test_hybrid_switches(gm) -> None:
    text = REAL[1]
    kinds = lambda ch: {k for c in ch.chunk(text) for k in c.metadata["kinds"]}  # noqa: E731
    assert kinds(HybridChunker(*gm)) == {"fixed", "entity_window", "trigger_window", "proposition"}
    assert "entity_window" not in kinds(HybridChunker(*gm, entity_windows=False))
    assert "proposition" not in kinds(HybridChunker(*gm, propositions=False))
    assert "trigger_window" not in kinds(HybridChunker(*gm, tiers=False))  # trigger windows come with tiers
    assert "trigger_window" in kinds(HybridChunker(*gm, tiers=False, trigger_windows=True))
    bare = HybridChunker(*gm, entity_windows=False, propositions=False, tiers=False)
    assert [(c.start, c.end) for c in bare.chunk(text)] == [(s, e) for s, e, _ in FixedWindowChunker(size=5).spans(text)]


def test_hybrid_is_built_from_typed_params_and_its_dataset() -> None:
    chunker = build(defaults("chunk", method="hybrid"), dataset="embedded")
    assert isinstance(chunker, HybridChunker) and chunker.lexicon.source.endswith("embedded.yaml")
    params = defaults("chunk", method="hybrid", entity_windows=False, propositions=True, tiers=False, hierarchy=False)
    chunker = build(params, dataset="gm-ciht")
    assert chunker.lexicon.source.endswith("gm-ciht.yaml") and not chunker.entity_windows
    assert not chunker.trigger_windows and chunker.scoring == Scoring(FLAT, tiers=False)
    # chunk.counter reaches the hybrid chunker too (it used to count words whatever was set).
    assert build(defaults("chunk", method="hybrid", counter="chars"), dataset="embedded").counter("ab cd") == 5
    with pytest.raises(UserError, match="no trigger lexicon for dataset 'scifact'"):
        build(defaults("chunk", method="hybrid"), dataset="scifact")
    # No dataset, no silent stand-in: another dataset's triggers would be used without a word.
    with pytest.raises(UserError, match="chunk.method hybrid reads a dataset's trigger lexicon"):
        build(defaults("chunk", method="hybrid"))


def test_hybrid_is_registered() -> None:
    assert "hybrid" in base.methods() and base.get("hybrid") is HybridChunker


def test_hybrid_batch_equals_single_and_oversize_chunks_are_dropped(gm) -> None:
    chunker = HybridChunker(*gm, max_tokens=6)
    assert chunker.chunk_batch(REAL) == [chunker.chunk(t) for t in REAL]
    assert all(c.n_tokens <= 6 for t in REAL for c in chunker.chunk(t))
    assert chunker.dropped_oversize > 0


# -- chunk.hierarchy_order (the paper's ordering ablation) ---------------------------------


def test_reorder_flat_and_inverted() -> None:
    h = Hierarchy({"TREATS": 4, "AFFECTS": 2, "COEXISTS_WITH": 1}, default=1)
    assert reorder(h, "paper") is h
    assert reorder(h, "flat") == FLAT
    assert reorder(h, "inverted") == Hierarchy({"TREATS": 1, "AFFECTS": 3, "COEXISTS_WITH": 4}, default=4)
    with pytest.raises(ValueError, match="chunk.hierarchy_order must be one of paper, flat, inverted"):
        reorder(h, "reversed")


def test_hierarchy_order_is_checked_where_params_enter() -> None:
    with pytest.raises(UserError, match="chunk.hierarchy_order: unknown value 'reversed'; allowed: flat, inverted, paper"):
        parse(ChunkParams, {"hierarchy_order": "reversed"}, "chunk")
    with pytest.raises(UserError, match="chunk.hierarchy is false"):
        parse(ChunkParams, {"hierarchy": False, "hierarchy_order": "inverted"}, "chunk")


def test_hierarchy_order_changes_priorities_and_selection() -> None:
    # Two primary-tier propositions: TREATS (weight 4) and DIAGNOSES (1) on the embedded data's
    # hierarchy; the diagnosis chunk is the more similar one. Slot 2 of the bias selection goes to
    # the higher priority: the treatment under the paper's order, the diagnosis under the
    # inverted one, and (a tie) the more similar diagnosis when flat.
    text = "Metformin treats type 2 diabetes and the MRI scan detects the lesion."
    picked, prios = {}, {}
    for order in HIERARCHY_ORDERS:
        chunker = build(defaults("chunk", method="hybrid", hierarchy_order=order), dataset="embedded")
        props = {c.metadata["relation_hint"]: c for c in chunker.chunk(text) if c.metadata["kind"] == "proposition"}
        assert set(props) == {"TREATS", "DIAGNOSES"}
        prios[order] = (props["TREATS"].metadata["priority"], props["DIAGNOSES"].metadata["priority"])
        pool = [props["TREATS"], props["DIAGNOSES"]]
        sims, kinds = [0.9, 0.5, 0.8], ["fixed", "proposition", "proposition"]
        p = [0] + [c.metadata["priority"] for c in pool]
        t = [None] + [c.metadata["tier"] for c in pool]
        picked[order] = ["-", "TREATS", "DIAGNOSES"][select(sims, kinds, p, t, k=2)[1]]
    assert prios == {"paper": (4 + 3, 1 + 3), "flat": (1 + 3, 1 + 3), "inverted": (1 + 3, 4 + 3)}
    assert picked == {"paper": "TREATS", "flat": "DIAGNOSES", "inverted": "DIAGNOSES"}


def test_hierarchy_order_changes_the_embedded_memory() -> None:
    texts = [json.loads(line)["SENTENCE"] for line in (EMBEDDED / "train.jsonl").read_text().splitlines()]
    structural = {}
    for order in HIERARCHY_ORDERS:
        chunker = build(defaults("chunk", method="hybrid", hierarchy_order=order), dataset="embedded")
        structural[order] = [round(c.metadata["structural"], 6) for t in texts for c in chunker.chunk(t)]
    assert len({len(s) for s in structural.values()}) == 1  # the same chunks, scored differently
    assert structural["paper"] != structural["flat"] != structural["inverted"] != structural["paper"]
