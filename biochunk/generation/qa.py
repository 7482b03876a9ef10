"""QA and yes/no classification prompts through the chat template, and parsing of the replies.

A prompt is a chat: a system message (the task), then each in-context example as a
user turn (its context and question) and an assistant turn (its reference answer),
then the question's own user turn. Everything before the last user turn is the same
for every question of a run, so the generator encodes it once (``prompt_parts``
returns it as the shared prefix). Examples come from another split than the
questions answered (``biochunk.datasets.qa.sample``).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, Sequence

import pandas as pd

SYSTEM_QA = (
    "You are a biomedical expert. Answer the question from the context passages. "
    "Reply with a short answer of one or two sentences; for a yes/no question, start with yes or no."
)
# qa.decline: the model may say the context lacks the answer instead of guessing (the
# clinical study's non-response rate counts such replies; evaluation.answers.declined).
DECLINE_REPLY = "The context does not say."
DECLINE_INSTRUCTION = f" If the context passages do not contain the answer, reply only: {DECLINE_REPLY}"


def system_qa(decline: bool = False) -> str:
    """The QA system message, with the permission to decline when ``decline``."""
    return SYSTEM_QA + (DECLINE_INSTRUCTION if decline else "")


SYSTEM_CLASSIFY = (
    "You are a biomedical expert. Decide whether the sentence reports an adverse drug event: "
    "a harmful effect caused by a drug. Similar labelled sentences are given as evidence. Reply with yes or no."
)


@dataclass(frozen=True)
class Turn:
    """One question (or sentence) with its context, and the answer when it is an example."""

    user: str
    answer: str = ""


def assemble_context(passages: Sequence[str], budget_words: int) -> str:
    """Numbered passages in rank order, within ``budget_words`` words in total.

    The passage that crosses the budget is cut at a word boundary, so every chunk
    method gets the same amount of text, however large its chunks; the first passage
    is always present (cut if it alone exceeds the budget).
    """
    out, used = [], 0
    for text in passages:
        words = text.split()
        if not words:
            continue
        room = budget_words - used
        if room <= 0:
            break
        if len(words) > room:
            words = words[:room] + ["…"]
        out.append(f"[{len(out) + 1}] {' '.join(words)}")
        used += min(len(text.split()), room)
    return "\n".join(out)


def context_texts(contexts: pd.DataFrame, chunks: pd.DataFrame, budget_words: int) -> dict[tuple[str, str], str]:
    """(question_id, method) -> the assembled context passage text (``contexts``: QA_CONTEXTS
    rows, ``chunks``: their CHUNKS rows, from ``retrieval.contexts``)."""
    text = dict(zip(chunks["chunk_id"], chunks["text"]))
    out = {}
    for (qid, method), g in contexts.sort_values("rank").groupby(["question_id", "method"], sort=False):
        out[(str(qid), str(method))] = assemble_context([text[c] for c in g["chunk_id"]], budget_words)
    return out


def qa_user(question: str, context: str) -> str:
    return f"Context:\n{context}\n\nQuestion: {question}" if context else f"Question: {question}"


def example_turns(pool: Any, texts: dict[tuple[str, str], str], arm: str, n_examples: int, types: Any = None) -> list[Turn]:
    """The first ``n_examples`` example candidates (``pool``: QA_SAMPLE rows) as turns of ``arm``.

    An example shows the prompt shape of its arm: with its own context (candidates without
    one are skipped), or none for the ``none`` arm. ``types``: only candidates of these
    question types (qa.examples_by_type), so a question is shown examples of its own type.
    """
    if types is not None:
        pool = pool[pool["type"].isin(set(types))]
    return [
        Turn(qa_user(q, texts.get((i, arm), "")), refs[0].strip())
        for i, q, refs in zip(pool["id"], pool["question"], pool["references"])
        if arm == "none" or (i, arm) in texts
    ][:n_examples]


def classify_user(sentence: str, evidence: Sequence[tuple[str, bool]]) -> str:
    lines = [f'Evidence: "{t}" (adverse drug event: {"yes" if y else "no"})' for t, y in evidence]
    return "\n".join(lines + [f"Sentence: {sentence}", "Does the sentence report an adverse drug event?"])


def messages(system: str, examples: Sequence[Turn], turn: Turn) -> list[dict[str, str]]:
    msgs = [{"role": "system", "content": system}]
    for ex in examples:
        msgs += [{"role": "user", "content": ex.user}, {"role": "assistant", "content": ex.answer}]
    return msgs + [{"role": "user", "content": turn.user}]


def render(tokenizer: Any, msgs: list[dict[str, str]], generation_prompt: bool) -> str:
    if getattr(tokenizer, "chat_template", None):
        return tokenizer.apply_chat_template(msgs, tokenize=False, add_generation_prompt=generation_prompt)
    # A base model without a chat template: the same turns as plain labelled text.
    text = "".join(f"{m['role'].capitalize()}: {m['content']}\n\n" for m in msgs)
    return text + ("Assistant:" if generation_prompt else "")


def prompt_parts(tokenizer: Any, system: str, examples: Sequence[Turn], turn: Turn) -> tuple[str, str]:
    """(shared prefix, per-question suffix) of the rendered chat; prefix + suffix is the prompt."""
    head = messages(system, examples, turn)[:-1]
    prefix = render(tokenizer, head, False)
    full = render(tokenizer, head + [{"role": "user", "content": turn.user}], True)
    if not full.startswith(prefix):  # a template that rewrites earlier turns: no sharing
        return "", full
    return prefix, full[len(prefix) :]


_LEAD = re.compile(r"^\s*(?:(?:the\s+)?(?:short\s+)?answer(?:\s+is)?\s*[:\-]?|a\s*:)\s*", re.IGNORECASE)
_YESNO = re.compile(r"^\W*(yes|no)\b", re.IGNORECASE)
_YESNO_ANY = re.compile(r"\b(yes|no)\b", re.IGNORECASE)


_ITEM = re.compile(r"^\s*(?:\d{1,2}[.)]|[-*•])\s+")


def parse_answer(raw: str) -> str:
    """The answer: the first non-empty line, without an "Answer:" lead-in or a list
    marker. Small models keep writing after a short answer (a numbered list repeating
    itself, a new chat turn); the first line is the answer they were asked for."""
    for marker in ("<|im_end|>", "<|im_start|>"):
        raw = raw.split(marker, 1)[0]
    line = next((x for x in raw.splitlines() if x.strip()), "")
    return _LEAD.sub("", _ITEM.sub("", line, count=1).strip(), count=1).strip()


# A verdict written out instead of yes/no ("The sentence does not report ...").
_NEGATED = re.compile(r"\b(?:not|never|n't)\b|n't\b", re.IGNORECASE)
_AFFIRMED = re.compile(r"\b(?:does|do|did)\s+report\b|\breports?\s+an?\b|\bis\s+an?\s+adverse\b", re.IGNORECASE)


def parse_yesno(raw: str, anywhere: bool = False) -> str:
    """``yes`` or ``no`` when the reply starts with one, else ``""`` (not parsable; counted
    by the caller). ``anywhere``: else the first yes/no in the reply, else a written-out
    verdict (a negation reads no, "does report" reads yes)."""
    text = parse_answer(raw)
    m = _YESNO.match(text)
    if m or not anywhere:
        return m.group(1).lower() if m else ""
    m = _YESNO_ANY.search(text)
    if m:
        return m.group(1).lower()
    if _NEGATED.search(text):
        return "no"
    return "yes" if _AFFIRMED.search(text) else ""
