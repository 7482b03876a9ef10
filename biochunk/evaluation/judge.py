"""An LLM judge of answers on the clinical study's two 3-point scales: a proxy of its clinician ratings.

In the study (``../shared/papers/001_88a13a60ea369314.txt``, §2.3, line 114) two medical
experts rated each answer's medical accuracy and relevance on three-point scales whose anchors
the paper states; ``SCALES`` quotes them word for word (the clinical report cites each quote,
and tests/test_citations.py finds it in the paper). The judge reads the question, the gold
answer (the study's raters judged against authoritative references, line 116) and the answer
to rate, and replies with one digit per scale. A reply without a rating is kept and counted,
its rating left empty: never guessed, never dropped.

Prompts are chats: the scale's rubric is the system message, shared by every answer (so the
generator encodes it once: ``generation.generator.generate``), and the per-answer user turn
is the suffix.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, Sequence

import pandas as pd
import pyarrow as pa

from biochunk.errors import UserError
from biochunk.generation.qa import Turn, prompt_parts


@dataclass(frozen=True)
class Scale:
    """One of the study's rating scales: its name, the paper's anchors for 1, 2 and 3, and the
    paper's sentence that states them (``quote``, §2.3, line 114)."""

    name: str
    anchors: tuple[str, str, str]
    quote: str


# The paper's words, in its order (§2.3, line 114); each anchor is a phrase of its quote.
SCALES = {
    "accuracy": Scale(
        "medical accuracy",
        (
            "content that conflicted with accepted clinical practice",
            "responses that combined correct and incorrect elements",
            "guidance consistent with standard references and routine care",
        ),
        "For medical accuracy, a score of 1 indicated content that conflicted with accepted clinical practice; a score "
        "of 2 reflected responses that combined correct and incorrect elements; and a score of 3 denoted guidance "
        "consistent with standard references and routine care.",
    ),
    "relevance": Scale(
        "clinical relevance",
        (
            "the response content was irrelevant to the question",
            "broadly related answers that lacked specific direction",
            "content that directly addressed the clinical scenario with actionable recommendations",
        ),
        "Similarly, for relevance, 1 signified that the response content was irrelevant to the question, 2 captured "
        "broadly related answers that lacked specific direction, and 3 indicated content that directly addressed the "
        "clinical scenario with actionable recommendations.",
    ),
}
NO_ANSWER = "(no answer)"  # what the judge reads for an empty answer, which it rates like any other
# The judge's turn opens with this cue, so its reply is the digit: without it SmolLM2-135M starts a
# sentence or a numbered list (seen: "1. The median ...", "The answer to the"); a capable model
# replies with the digit either way. The reply parsed is what follows the cue.
CUE = "Rating: "

# One row per (question, arm, scale): the judge's reply as written and the rating read from it
# (null where the reply holds none; the stage's report counts those).
RATINGS = pa.schema(
    [
        ("question_id", pa.string()),
        ("method", pa.string()),
        ("scale", pa.string()),
        ("raw_output", pa.string()),
        ("rating", pa.int64()),
    ]
)


def system_message(scale: Scale) -> str:
    """The rubric: the paper's three anchors of ``scale``, and the reply it wants (one digit)."""
    levels = "\n".join(f"{i}: {a}" for i, a in enumerate(scale.anchors, 1))
    return (
        f"You are a medical expert rating an answer to a medical question. Rate its {scale.name} on a 3-point scale, "
        f"judged against the reference answer:\n{levels}\nReply with one digit: 1, 2 or 3."
    )


def user_message(question: str, references: Sequence[str], answer: str) -> str:
    refs = " | ".join(r.strip() for r in references if r.strip()) or "(none)"
    return f"Question: {question}\nReference answer: {refs}\nAnswer to rate: {answer.strip() or NO_ANSWER}\n\nRating (1, 2 or 3):"


def _cued(prompt: str) -> str:
    return prompt + ("" if prompt.endswith((" ", "\n")) else " ") + CUE


def prompts(tokenizer: Any, scale: Scale, items: pd.DataFrame) -> tuple[str, list[str]]:
    """(shared prefix, one suffix per row of ``items``): the rubric chat of ``scale`` around each
    row's question, references and answer (``items``: see :func:`items`), the judge's turn opened
    with ``CUE``."""
    system = system_message(scale)
    parts = [
        prompt_parts(tokenizer, system, [], Turn(user_message(q, refs, a)))
        for q, refs, a in zip(items["question"], items["references"], items["answer"])
    ]
    prefix = parts[0][0] if parts else ""
    # prompt_parts gives no prefix for a chat template that rewrites earlier turns: then each
    # suffix is its whole prompt, and the prefix must be empty for all of them alike.
    if any(p != prefix for p, _ in parts):
        return "", [_cued(p + s) for p, s in parts]
    return prefix, [_cued(s) for _, s in parts]


# A rating: a digit 1-3 at the start of the reply, after markup and an optional label
# ("Rating: 3", "**2**", "Score = 1/3"); not the start of a longer number ("2.5", "10"), nor a
# list marker with text after it ("1. The median ...": small models start a numbered list).
_LABEL = r"(?:(?:the\s+)?(?:rating|score|(?:medical\s+)?accuracy|(?:clinical\s+)?relevance)\s*(?:is|:|=|-)?\s*)?"
_RATING = re.compile(r"^[\s*_\"'`(\[]*" + _LABEL + r"[\s*_\"'`(\[]*([1-3])(?!\.?\d)(?![.)]\s*\w)", re.IGNORECASE)


def parse_rating(raw: str) -> int | None:
    """The rating a reply gives, or None: a reply that does not open with 1, 2 or 3 (after
    markup and a label) gives none, so a sentence, a numbered list or a longer number is not
    read as one."""
    m = _RATING.match(raw)
    return int(m.group(1)) if m else None


def items(questions: pd.DataFrame, answers: pd.DataFrame, arms: Sequence[str]) -> pd.DataFrame:
    """Every arm's answer to every answered question, in ``arms`` order then question id:
    question_id, method, question, references, answer. ``questions``: qa_context's QA_SAMPLE rows
    (role ``answer`` are the ones asked); ``answers``: generate_qa's QA_ANSWERS rows."""
    asked = questions[questions["role"] == "answer"].set_index("id")
    unknown = sorted(set(answers["question_id"]) - set(asked.index))
    if unknown:
        raise UserError(f"answers name {len(unknown)} questions that qa_context did not ask (e.g. {unknown[0]!r}); re-run generate_qa")
    other = sorted(set(answers["method"]) - set(arms))
    if other:
        raise UserError(f"answers of arm {other[0]!r}, which qa_context did not build (its arms: {', '.join(arms)}); re-run generate_qa")
    twice = answers.duplicated(["question_id", "method"])
    if twice.any():
        first = answers[twice].iloc[0]
        raise UserError(f"two answers of arm {first['method']!r} to question {first['question_id']!r}; re-run generate_qa")
    order = {a: i for i, a in enumerate(arms)}
    df = answers.assign(_arm=answers["method"].map(order)).sort_values(["_arm", "question_id"], kind="stable")
    return pd.DataFrame(
        {
            "question_id": df["question_id"].astype(str).to_numpy(),
            "method": df["method"].astype(str).to_numpy(),
            "question": [asked.at[q, "question"] for q in df["question_id"]],
            "references": [list(asked.at[q, "references"]) for q in df["question_id"]],
            "answer": df["answer"].fillna("").astype(str).to_numpy(),
        }
    )


def ratings(rated: pd.DataFrame, raw: dict[str, Sequence[str]]) -> pd.DataFrame:
    """The RATINGS rows of ``rated`` (:func:`items`) and the judge's replies per scale."""
    frames = []
    for name, replies in raw.items():
        if len(replies) != len(rated):
            raise ValueError(f"{name}: {len(replies)} replies for {len(rated)} answers")
        frames.append(
            pd.DataFrame(
                {
                    "question_id": rated["question_id"].to_numpy(),
                    "method": rated["method"].to_numpy(),
                    "scale": name,
                    "raw_output": list(replies),
                    "rating": pd.array([parse_rating(r) for r in replies], dtype="Int64"),
                }
            )
        )
    return pd.concat(frames, ignore_index=True)[RATINGS.names] if frames else pd.DataFrame(columns=RATINGS.names)


def counts(table: pd.DataFrame) -> dict[str, dict[str, dict[str, int]]]:
    """arm -> scale -> rated / unparseable: the replies that gave a rating, and those that did not."""
    out: dict[str, dict[str, dict[str, int]]] = {}
    for (method, scale), g in table.groupby(["method", "scale"], sort=False):
        n_rated = int(g["rating"].notna().sum())
        out.setdefault(str(method), {})[str(scale)] = {"rated": n_rated, "unparseable": int(len(g) - n_rated)}
    return out
