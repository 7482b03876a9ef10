"""QA generation and answer evaluation: SU4 and bootstrap on hand-computed cases, prompts,
parsing, ANOVA / Tukey on a toy design, and the QA views of the datasets."""

from __future__ import annotations

import math
import re

import numpy as np
import pandas as pd
import pytest

from biochunk.datasets import qa as qa_data
from biochunk.evaluation import compare
from biochunk.evaluation.answers import declined, rouge_scores, rouge_su4_tokens, su4_units
from biochunk.evaluation.stats import bootstrap_ci
from biochunk.generation.qa import (
    DECLINE_REPLY,
    SYSTEM_QA,
    Turn,
    assemble_context,
    parse_answer,
    parse_yesno,
    prompt_parts,
    qa_user,
    system_qa,
)
from tests.conftest import ROOT

# --- ROUGE-SU4 (hand-computed) ---


def test_su4_units_counts_unigrams_and_skip_bigrams_within_gap():
    # 7 tokens: pairs (i, j) with j - i <= 5 (at most 4 words between): 5+5+4+3+2+1 = 20, plus 7 unigrams.
    units = su4_units(list("abcdefg"))
    assert sum(units.values()) == 27
    assert ("a", "f") in units and ("a", "g") not in units  # 4 words between a and f, 5 between a and g


def test_su4_identical_is_one():
    s = rouge_su4_tokens(["a", "b", "c"], ["a", "b", "c"])
    assert (s.precision, s.recall, s.f1) == (1.0, 1.0, 1.0)


def test_su4_hand_computed_partial_overlap():
    # cand: the, cat, sat, (the,cat), (the,sat), (cat,sat) = 6; ref: the, cat, (the,cat) = 3; overlap 3.
    s = rouge_su4_tokens(["the", "cat", "sat"], ["the", "cat"])
    assert s.precision == pytest.approx(0.5)
    assert s.recall == pytest.approx(1.0)
    assert s.f1 == pytest.approx(2 / 3)


def test_su4_gap_limit_decides_the_skip_bigram():
    # a..g 7 tokens: (a, g) has 5 words between -> not a unit; overlap is the unigrams a, g.
    far = rouge_su4_tokens(["a", "g"], list("abcdefg"))
    assert far.precision == pytest.approx(2 / 3) and far.recall == pytest.approx(2 / 27)
    # a b c d e g: 4 words between a and g -> (a, g) counts; ref units 6 + 15 = 21.
    near = rouge_su4_tokens(["a", "g"], list("abcdeg"))
    assert near.precision == pytest.approx(1.0) and near.recall == pytest.approx(3 / 21)


def test_su4_repeated_units_are_clipped():
    # cand a a: units a x2, (a,a) x1 = 3; ref a: unit a x1; overlap min(2,1) = 1.
    s = rouge_su4_tokens(["a", "a"], ["a"])
    assert s.precision == pytest.approx(1 / 3) and s.recall == pytest.approx(1.0)


def test_rouge_scores_tokenise_and_take_the_best_reference():
    out = rouge_scores(["The cat sat.", "dogs bark", ""], [["the cat", "a dog"], ["cats meow"], ["anything"]])
    assert out["rougesu4_precision"][0] == pytest.approx(0.5)  # as the hand-computed case above
    assert out["rougesu4_recall"][0] == pytest.approx(1.0)
    # ROUGE-2 (rouge-score): bigrams the-cat, cat-sat vs the-cat: P 1/2, R 1.
    assert out["rouge2_precision"][0] == pytest.approx(0.5) and out["rouge2_recall"][0] == pytest.approx(1.0)
    assert out["rouge2_f1"][1] == 0.0 and out["rougesu4_f1"][2] == 0.0  # no overlap; empty answer


# --- bootstrap (hand-computed) ---


def test_bootstrap_constant_data_has_a_point_interval():
    assert bootstrap_ci(np.array([2.0, 2.0, 2.0]), np.mean, 1000, 42) == (2.0, 2.0)


def test_bootstrap_two_points_spans_the_possible_means():
    # Resample means of [0, 1] are 0, 0.5, 1 with probability 1/4, 1/2, 1/4: the 2.5% and
    # 97.5% quantiles of 1,000 resamples are 0 and 1.
    assert bootstrap_ci(np.array([0.0, 1.0]), np.mean, 1000, 42) == (0.0, 1.0)


def test_bootstrap_is_seeded_and_covers_the_mean():
    x = np.random.default_rng(0).normal(size=200)
    a, b = bootstrap_ci(x, np.mean, 1000, 7), bootstrap_ci(x, np.mean, 1000, 7)
    assert a == b
    assert a[0] < x.mean() < a[1]
    # The normal-theory interval for comparison: mean ± 1.96 sd/sqrt(n).
    half = 1.96 * x.std(ddof=1) / math.sqrt(len(x))
    assert a[0] == pytest.approx(x.mean() - half, abs=0.05) and a[1] == pytest.approx(x.mean() + half, abs=0.05)


def test_bootstrap_of_nothing_is_nan():
    lo, hi = bootstrap_ci(np.array([]), np.mean, 1000, 42)
    assert math.isnan(lo) and math.isnan(hi)


# --- ANOVA + Tukey HSD (hand-computed) ---


def _toy_scores():
    values = {"a": [1, 2, 3], "b": [2, 3, 4], "c": [5, 6, 7]}
    return pd.DataFrame(
        [{"question_id": f"q{i}", "method": m, "f1": float(v)} for m, vs in values.items() for i, v in enumerate(vs)]
    )


def test_anova_matches_the_hand_computation():
    # Grand mean 11/3; SSB = 3 * ((2-11/3)^2 + (3-11/3)^2 + (6-11/3)^2) = 26, df 2 -> 13;
    # SSW = 2 + 2 + 2 = 6, df 6 -> 1; F = 13.
    a = compare.anova(_toy_scores(), "f1")
    assert a["F"] == pytest.approx(13.0)
    assert (a["df_between"], a["df_within"]) == (2, 6)
    assert 0 < a["p"] < 0.01


def test_tukey_separates_only_the_far_group():
    # HSD = q(0.05; 3, 6) * sqrt(MSW / n) = 4.34 * sqrt(1/3) = 2.51: a-c (4) and b-c (3) differ, a-b (1) not.
    rows = {(t["a"], t["b"]): t for t in compare.tukey(_toy_scores(), "f1")}
    assert rows[("a", "b")]["mean_diff"] == pytest.approx(1.0) and not rows[("a", "b")]["reject"]
    assert rows[("a", "c")]["reject"] and rows[("b", "c")]["reject"]
    assert rows[("a", "c")]["ci_low"] == pytest.approx(4 - 4.339 * math.sqrt(1 / 3), abs=0.01)


def test_effect_sizes_match_the_hand_computation():
    # η² = SSB / (SSB + SSW) = 26 / 32. Paired differences c − a are 4, 4, 4 (no spread: d_z
    # undefined); make them 3, 4, 5: mean 4, sd 1, d_z = 4.
    assert compare.anova(_toy_scores(), "f1")["eta_sq"] == pytest.approx(26 / 32)
    s = _toy_scores()
    s.loc[(s["method"] == "c") & (s["question_id"] == "q0"), "f1"] = 4.0
    s.loc[(s["method"] == "c") & (s["question_id"] == "q2"), "f1"] = 8.0
    rows = {(t["a"], t["b"]): t for t in compare.tukey(s, "f1")}
    assert rows[("a", "c")]["cohen_dz"] == pytest.approx(4.0)
    assert math.isnan(rows[("a", "b")]["cohen_dz"])  # b − a is 1 for every question: no spread
    from scipy.stats import ttest_rel

    # d_z * sqrt(n) is the paired t statistic.
    t = ttest_rel(s[s["method"] == "c"]["f1"].to_numpy(), s[s["method"] == "a"]["f1"].to_numpy()).statistic
    assert rows[("a", "c")]["cohen_dz"] * math.sqrt(3) == pytest.approx(t)


def test_comparison_report_markdown_lists_anova_and_tukey():
    report = compare.compare(_toy_scores(), ["f1"], n_boot=100, seed=1)
    md = compare.to_markdown(report, "toy")
    assert "One-way ANOVA: F(2, 6) = 13.000" in md
    assert "| a | c | +4.0000 |" in md
    assert report["metrics"]["f1"]["methods"]["c"]["mean"] == pytest.approx(6.0)


# --- prompts ---


class ChatMLTokenizer:
    """A stand-in for a chat tokenizer (SmolLM2's ChatML template) that needs no model files."""

    chat_template = "chatml"

    def apply_chat_template(self, msgs, tokenize=False, add_generation_prompt=False):
        text = "".join(f"<|im_start|>{m['role']}\n{m['content']}<|im_end|>\n" for m in msgs)
        return text + ("<|im_start|>assistant\n" if add_generation_prompt else "")


def test_prompt_has_system_role_examples_and_question_with_shared_prefix():
    ex = [Turn(qa_user("Is water wet?", "[1] Water is wet."), "yes")]
    prefix, suffix = prompt_parts(ChatMLTokenizer(), SYSTEM_QA, ex, Turn(qa_user("What is BRCA1?", "[1] BRCA1 is a gene.")))
    assert prefix.startswith(f"<|im_start|>system\n{SYSTEM_QA}<|im_end|>")
    assert (
        "<|im_start|>user\nContext:\n[1] Water is wet.\n\nQuestion: Is water wet?<|im_end|>\n<|im_start|>assistant\nyes<|im_end|>"
        in prefix
    )
    assert (
        suffix
        == "<|im_start|>user\nContext:\n[1] BRCA1 is a gene.\n\nQuestion: What is BRCA1?<|im_end|>\n<|im_start|>assistant\n"
    )
    # Another question under the same examples shares the prefix exactly (one KV cache per method).
    assert prompt_parts(ChatMLTokenizer(), SYSTEM_QA, ex, Turn("other"))[0] == prefix


def test_prompt_without_examples_or_chat_template():
    class Plain:
        chat_template = None

    prefix, suffix = prompt_parts(Plain(), "SYS", [], Turn("Question: q?"))
    assert prefix + suffix == "System: SYS\n\nUser: Question: q?\n\nAssistant:"
    assert qa_user("q?", "") == "Question: q?"


def test_context_budget_is_the_same_for_every_chunk_size():
    ctx = assemble_context(["one two three", "", "four five six seven", "eight"], budget_words=5)
    assert ctx == "[1] one two three\n[2] four five …"
    assert assemble_context(["a b c d e f"], budget_words=2) == "[1] a b …"  # the first passage is always there
    assert assemble_context([], 5) == ""


# --- parsing ---


@pytest.mark.parametrize(
    "raw, answer",
    [
        (" Answer: PD-L1 status.\n\nMore text", "PD-L1 status."),
        ("1) restriction of viral entry\n2) restriction of viral entry", "restriction of viral entry"),
        ("\n\nThe answer is 4-7 days<|im_end|>junk", "4-7 days"),
        ("- BRCA1\n- BRCA2", "BRCA1"),
        ("1933, when the virus was isolated.", "1933, when the virus was isolated."),
        ("", ""),
    ],
)
def test_parse_answer(raw, answer):
    assert parse_answer(raw) == answer


@pytest.mark.parametrize(
    "raw, strict, anywhere",
    [
        ("Yes, it does.", "yes", "yes"),
        (" no.", "no", "no"),
        ("Answer: NO", "no", "no"),
        ("The sentence reports no event.", "", "no"),
        ("Nobody knows", "", ""),
        ("maybe", "", ""),
        ("The sentence does not", "", "no"),
        ("The sentence doesn't report one", "", "no"),
        ("The sentence does report", "", "yes"),
        ("It reports an adverse event", "", "yes"),
    ],
)
def test_parse_yesno(raw, strict, anywhere):
    assert parse_yesno(raw) == strict
    assert parse_yesno(raw, anywhere=True) == anywhere


@pytest.mark.parametrize(
    "answer, is_decline",
    [
        (DECLINE_REPLY, True),  # the reply qa.decline asks for
        ("", True),
        ("   ", True),
        ("The context does not mention the incubation period.", True),
        ("The passages do not provide this.", True),
        ("The dose is not stated in the text.", True),
        ("There is not enough information to answer.", True),
        ("I don't know.", True),
        ("This cannot be determined from the passages.", True),
        ("I am unable to answer that.", True),
        ("5 days", False),
        ("No, ivermectin is not effective against SARS-CoV-2.", False),  # a "no" answer is an answer
        ("Probably the ACE2 receptor.", False),
        ("It is not known to cause liver damage.", False),  # "not known" here is the answer's content
        ("No information is given on this.", True),
    ],
)
def test_declined_counts_empty_answers_and_declines_only(answer, is_decline):
    assert declined(answer) is is_decline


def test_decline_instruction_names_the_reply_the_detector_counts():
    assert system_qa(False) == SYSTEM_QA
    assert system_qa(True).startswith(SYSTEM_QA) and system_qa(True).endswith(DECLINE_REPLY)
    assert declined(system_qa(True).rsplit(": ", 1)[1])


# --- QA views of the datasets ---


def _items():
    return pd.DataFrame(
        {
            "id": [f"q{i}" for i in range(8)],
            "split": ["7B1", "7B1", "7B1", "8B1", "8B1", "10B1", "10B1", "10B1"],
            "type": "factoid",
            "question": [f"question {i}" for i in range(8)],
            "references": [["short answer"]] * 8,
            "doc_ids": [["d"]] * 8,
            "exact": "",
        }
    )


def test_examples_come_from_another_split_than_the_answered_questions():
    items = _items()
    source = qa_data.example_split(items, "auto")
    assert source == "7B1"  # batches sort by year: 7B1 < 8B1 < 10B1
    s = qa_data.sample(items, source, max_questions=3, n_examples=1, seed=0)
    answered, examples = s[s["role"] == "answer"], s[s["role"] == "example"]
    assert len(answered) == 3 and len(examples) >= 1
    assert set(examples["split"]) == {"7B1"} and "7B1" not in set(answered["split"])
    assert qa_data.example_split(items, "10B1") == "10B1"


def test_question_splits_restrict_the_answered_questions_to_those_splits():
    items = _items()
    s = qa_data.sample(items, "7B1", max_questions=None, n_examples=1, seed=0, question_splits=["10B1"])
    answered = s[s["role"] == "answer"]
    assert list(answered["split"].unique()) == ["10B1"] and len(answered) == 3
    assert set(s.loc[s["role"] == "example", "split"]) == {"7B1"}  # examples unchanged
    default = qa_data.sample(items, "7B1", max_questions=None, n_examples=1, seed=0)
    assert set(default.loc[default["role"] == "answer", "split"]) == {"8B1", "10B1"}


def test_question_splits_naming_an_unknown_or_the_example_split_is_a_user_error():
    from biochunk.errors import UserError

    with pytest.raises(UserError, match="qa.question_splits: unknown split '12B1'; allowed: 8B1, 10B1"):
        qa_data.sample(_items(), "7B1", None, 1, 0, question_splits=["12B1"])
    with pytest.raises(UserError, match="qa.question_splits: 7B1 is the example split"):
        qa_data.sample(_items(), "7B1", None, 1, 0, question_splits=["7B1"])


def test_unknown_or_single_example_split_is_a_user_error():
    from biochunk.errors import UserError

    with pytest.raises(UserError, match="qa.example_split: unknown split '12B1'"):
        qa_data.example_split(_items(), "12B1")
    with pytest.raises(UserError, match="single split"):
        qa_data.example_split(_items().assign(split="all"), "auto")


def _snippets() -> pd.DataFrame:
    return pd.DataFrame(
        {
            "question_id": ["q1", "q1", "q2", "q2"],
            "snippet_id": ["a", "b", "c", "d"],
            "text": ["Abstract sentence two.", "Title here", "sentence two", "Other record."],
            "document": [
                "http://www.ncbi.nlm.nih.gov/pubmed/1",
                "http://www.ncbi.nlm.nih.gov/pubmed/1",
                "http://www.ncbi.nlm.nih.gov/pubmed/1",
                "http://www.ncbi.nlm.nih.gov/pubmed/2",
            ],
            "begin_section": ["abstract", "title", "abstract", "abstract"],
            "end_section": ["abstract", "title", "abstract", "abstract"],
            "offset_begin": [0, 0, 9, 0],
            "offset_end": [22, 10, 21, 13],
        }
    )


def test_bioasq_snippets_regroup_by_record_without_contained_spans():
    docs = qa_data.snippet_documents(_snippets()).set_index("doc_id")["text"].to_dict()
    assert docs == {"1": "Title here\nAbstract sentence two.", "2": "Other record."}


@pytest.mark.parametrize("unit, n_docs", [("record", 2), ("snippet", 4)])
def test_one_bioasq_corpus_builder_places_every_gold_snippet_exactly(unit, n_docs):
    corpus = qa_data.bioasq_corpus(_snippets(), unit)
    text = dict(zip(corpus.docs["doc_id"], corpus.docs["text"]))
    assert len(text) == n_docs and corpus.unplaced == 0
    snippet_text = dict(zip(_snippets()["snippet_id"], _snippets()["text"]))
    for sid, d, a, b in zip(corpus.gold["snippet_id"], corpus.gold["doc_id"], corpus.gold["start"], corpus.gold["end"]):
        assert text[d][a:b] == snippet_text[sid]  # "sentence two" sits inside record 1's abstract
        assert sid in corpus.sources[d]
    # Retrieval and QA read the same documents: the collection's and the QA view's ids agree.
    qa = qa_data._bioasq(_questions(), _snippets(), unit)
    assert set(qa.corpus["doc_id"]) == set(text) and set(qa.gold["doc_id"]) <= set(text)


def _questions() -> pd.DataFrame:
    return pd.DataFrame(
        {"id": ["q1", "q2"], "split": ["7B1", "8B1"], "type": ["summary", "summary"], "body": ["Q one?", "Q two?"],
         "ideal_answer": [["One."], ["Two."]], "exact_answer": [[], []]}
    )  # fmt: skip


# --- ADE through the RAG flow ---


def test_binary_prf_hand_computed():
    from biochunk.evaluation import classify

    y = np.array([1, 1, 1, 0, 0, 0])
    p = np.array([1, 1, 0, 1, 0, 0])  # tp 2, fp 1, fn 1
    m = classify.prf(y, p)
    assert (m["tp"], m["fp"], m["fn"]) == (2, 1, 1)
    assert m["precision"] == pytest.approx(2 / 3) and m["recall"] == pytest.approx(2 / 3) and m["f1"] == pytest.approx(2 / 3)
    assert m["accuracy"] == pytest.approx(4 / 6)


def test_unparsed_replies_count_as_no_and_intervals_bracket_the_score():
    from biochunk.evaluation import classify

    y = [1, 1, 0, 0] * 10
    p = [1, -1, 0, 1] * 10  # -1 (unparsable) is scored as "no"
    s = classify.scores(y, p, n_boot=500, seed=3)
    assert s["precision"] == pytest.approx(0.5) and s["recall"] == pytest.approx(0.5)
    assert s["f1_ci_low"] <= s["f1"] <= s["f1_ci_high"]
    assert classify.scores(y, p, n_boot=500, seed=3) == s  # seeded


def test_evidence_vote_and_balanced_examples():
    from biochunk.generation import classify

    assert classify.vote([("a", True), ("b", True), ("c", False)]) == 1
    assert classify.vote([("a", True), ("b", False)]) == 0  # a tie is no
    assert classify.vote([]) == 0
    train = pd.DataFrame({"id": [f"s{i}" for i in range(10)], "text": [f"t{i}" for i in range(10)], "label": [1, 0] * 5})
    ex = classify.pick_examples(train, 3, seed=0)
    assert list(ex["label"]) == [1, 0, 1] and ex["id"].is_unique


# --- params ---


@pytest.mark.parametrize(
    "section, raw, message",
    [
        ("data", {"datasets": ["embedded"], "qa": ["bioasq"]}, "data.qa: 'bioasq' must also be listed in data.datasets"),
        ("data", {"datasets": ["embedded", "plos"], "qa": ["plos"]}, "data.qa: unknown value 'plos'; allowed: bioasq, covidqa"),
        (
            "data",
            {"datasets": ["embedded", "scifact"], "classification": ["scifact"]},
            "data.classification: unknown value 'scifact'",
        ),
        ("qa", {"methods": ["fixed", "nope"]}, "qa.methods: unknown value 'nope'"),
        ("qa", {"methods": []}, "qa.methods must name at least one chunk method"),
        ("qa", {"corpus": "all"}, "qa.corpus: unknown value 'all'; allowed: pooled, sampled"),
        ("qa", {"retriever": "bm25"}, "qa.retriever: unknown value 'bm25'; allowed: dense"),
        ("qa", {"context_words": 0}, "qa.context_words must be in [1, 4000], got 0"),
        ("evaluate_qa", {"bertscore_layers": 0}, "evaluate_qa.bertscore_layers must be in [1, 100], got 0"),
        ("classify", {"max_inputs": 0}, "classify.max_inputs must be in [1, inf], got 0"),
    ],
)
def test_bad_qa_params_name_the_key(section, raw, message):
    from biochunk import params
    from biochunk.errors import UserError

    with pytest.raises(UserError, match=re.escape(message)):
        params.parse(params.SECTIONS[section], raw, section)


def test_default_params_keep_qa_and_classification_off():
    from biochunk import params

    data = params.section("data", ROOT / "params.yaml")
    assert data.qa == [] and data.classification == []
    assert params.section("qa", ROOT / "params.yaml").methods == ["fixed", "recursive", "adaptive", "cluster"]


def test_context_holds_the_whole_extractive_answer_only():
    from biochunk.evaluation.qa import context_holds

    context = "[1] The incubation period is 4-7\ndays in most cases.\n[2] Other …"  # as the model read it
    assert context_holds(context, ["4-7 days"])  # line breaks and case do not matter
    assert not context_holds(context, ["Remdesivir blocks the polymerase"])
    assert not context_holds(context, ["in most cases. Other"])  # spans two passages
    assert not context_holds("", ["4-7 days"])  # the none arm


def test_every_param_that_dvc_yaml_lists_exists_in_params_yaml():
    import yaml

    stages = yaml.safe_load((ROOT / "dvc.yaml").read_text())["stages"]
    params = yaml.safe_load((ROOT / "params.yaml").read_text())
    for name, stage in stages.items():
        for key in stage.get("do", stage).get("params", []):
            node = params
            for part in key.split("."):
                assert isinstance(node, dict) and part in node, f"stage {name}: param {key} is not in params.yaml"
                node = node[part]
    for name in ("qa_context", "generate_qa", "evaluate_qa"):
        assert stages[name]["foreach"] == "${data.qa}"
    assert stages["classify"]["foreach"] == "${data.classification}"


def test_examples_by_type_gives_every_question_type_its_own_candidates():
    items = _items()
    items.loc[2, "type"] = "yesno"  # one yes/no example candidate among three factoid-heavy 7B1 items
    items = pd.concat([items, items.iloc[:2].assign(id=["q8", "q9"])], ignore_index=True)  # more factoid candidates
    plain = qa_data.sample(items, "7B1", max_questions=3, n_examples=1, seed=0)
    typed = qa_data.sample(items, "7B1", max_questions=3, n_examples=1, seed=0, by_type=True)
    ex_plain, ex_typed = plain[plain["role"] == "example"], typed[typed["role"] == "example"]
    assert len(ex_plain) == 3 and len(ex_typed) == 4  # 3 factoid spares + the yes/no one
    assert set(ex_typed["type"]) == {"factoid", "yesno"}
    # The answered questions do not depend on how examples are chosen (arms stay paired).
    assert list(plain.loc[plain["role"] == "answer", "id"]) == list(typed.loc[typed["role"] == "answer", "id"])


def test_example_turns_match_the_question_type_when_asked():
    from biochunk.generation.qa import example_turns

    pool = pd.DataFrame(
        {
            "id": ["e1", "e2", "e3"],
            "type": ["factoid", "yesno", "yesno"],
            "question": ["Which gene?", "Is it safe?", "Does it work?"],
            "references": [["BRCA1"], ["Yes"], ["No"]],
        }
    )
    texts = {("e1", "arm"): "ctx 1", ("e3", "arm"): "ctx 3"}
    assert [t.answer for t in example_turns(pool, texts, "arm", 3)] == ["BRCA1", "No"]  # e2 has no context: skipped
    assert [t.answer for t in example_turns(pool, texts, "arm", 3, ["yesno"])] == ["No"]
    assert [t.answer for t in example_turns(pool, {}, "none", 2, ["yesno"])] == ["Yes", "No"]
    assert "ctx 3" in example_turns(pool, texts, "arm", 1, ["yesno"])[0].user
