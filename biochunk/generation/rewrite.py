"""The generator as a text rewriter for chunkers: sentences into propositions, chunks into titles.

Both are chat prompts whose instruction is a shared prefix (its key/value cache is
computed once, see ``generator.generate``) and whose input is the suffix. The model
is loaded on the first call, so building a chunker costs nothing until it runs.
"""

from __future__ import annotations

import logging
import re
from typing import Sequence

from biochunk.generation.generator import generate
from biochunk.generation.model import LoadedLM, load_causal_lm

log = logging.getLogger(__name__)

PROPOSITION_SYSTEM = "You rewrite biomedical text into simple statements."
# One worked example: small instruction-tuned models otherwise tend to describe the
# sentence instead of rewriting it. It sits in the shared prefix, so it costs one prefill.
EXAMPLE_SENTENCE = "Metformin, a first-line drug for type 2 diabetes, lowers blood glucose and may reduce weight."
EXAMPLE_PROPOSITIONS = (
    "Metformin is a first-line drug for type 2 diabetes.",
    "Metformin lowers blood glucose.",
    "Metformin may reduce weight.",
)
PROPOSITION_INSTRUCTION = (
    "Decompose the sentence into atomic propositions: short, self-contained statements that each state one "
    "fact, with pronouns replaced by what they refer to. Write one proposition per line, each starting with "
    '"- ".\n\n'
    f"Sentence: {EXAMPLE_SENTENCE}\n" + "".join(f"- {p}\n" for p in EXAMPLE_PROPOSITIONS) + "\nSentence: "
)
# Lines that are not propositions of the input: the worked example echoed back, and
# remarks about the sentence itself ("The sentence is a self-contained statement ...").
_NOT_PROPOSITIONS = frozenset([EXAMPLE_SENTENCE, *EXAMPLE_PROPOSITIONS])
_META = re.compile(r"^(?:the|this) (?:sentence|statement|proposition)s?\b", re.IGNORECASE)
_LABEL = re.compile(r"^(?:sentence|proposition)s?\s*:\s*", re.IGNORECASE)
HEADER_SYSTEM = "You write short titles for passages of biomedical text."
# The clinical study's micro-headers are 5-15 words (there from a BART summariser).
HEADER_MAX_WORDS = 15
_TITLE_LABEL = re.compile(
    r"^(?:(?:the|a) )?(?:suggested )?title\b(?: (?:of|for) (?:the|this) passage)?(?:\s*:|\s+is\b:?)\s*", re.IGNORECASE
)
HEADER_INSTRUCTION = "Write a title of 5 to 15 words for the passage. Answer with the title only.\n\nPassage: "

_MARK = "\u0000INPUT\u0000"
# A list marker at the start of a line: "-", "*", "•", "1.", "2)".
_BULLET = re.compile(r"^\s*(?:[-*\u2022]+|\d+[.)])\s*")


def chat_parts(tokenizer: object, system: str, instruction: str) -> tuple[str, str]:
    """(prefix, suffix template) of a one-turn chat whose user message ends with the input.

    The chat template is rendered once around a marker and split there, so the prefix
    is identical for every input. A tokenizer without a chat template gets plain text.
    """
    messages = [{"role": "system", "content": system}, {"role": "user", "content": instruction + _MARK}]
    try:
        rendered = tokenizer.apply_chat_template(messages, tokenize=False, add_generation_prompt=True)  # type: ignore[attr-defined]
    except (AttributeError, ValueError):  # no chat template: instruction, input, answer cue
        rendered = f"{system}\n\n{instruction}{_MARK}\n\nAnswer:\n"
    prefix, after = rendered.split(_MARK)
    return prefix, "{}" + after


def parse_propositions(raw: str) -> list[str]:
    """One proposition per non-empty line, list markers and labels stripped; repeats, the
    echoed worked example and remarks about "the sentence" dropped."""
    out: list[str] = []
    for line in raw.splitlines():
        text = _BULLET.sub("", _LABEL.sub("", _BULLET.sub("", line).strip())).strip()
        if text and text not in out and text not in _NOT_PROPOSITIONS and not _META.match(text):
            out.append(text)
    return out


def parse_title(raw: str) -> str:
    """The first non-empty line, without quotes, list markers or a title label ("Title:", "The
    title of the passage is:"), cut to ``HEADER_MAX_WORDS`` words (small models run on)."""
    for line in raw.splitlines():
        text = _BULLET.sub("", line).strip().strip("\"'*").strip()
        text = _TITLE_LABEL.sub("", text).strip().strip("\"'*").strip()
        if text:
            return " ".join(text.split()[:HEADER_MAX_WORDS])
    return ""


class Rewriter:
    """Sentences -> propositions, and passages -> titles, with one lazily loaded LM."""

    def __init__(
        self,
        model: str = "smollm2-135m",
        param: str = "chunk.generator",
        batch_size: int = 16,
        temperature: float = 0.2,
        seed: int = 42,
    ) -> None:
        self.model_name = model
        self.param = param
        self.batch_size = batch_size
        self.temperature = temperature
        self.seed = seed
        self._lm: LoadedLM | None = None

    @property
    def lm(self) -> LoadedLM:
        if self._lm is None:
            self._lm = load_causal_lm(self.model_name, self.param)
        return self._lm

    def _run(self, system: str, instruction: str, inputs: Sequence[str], max_new_tokens: int, temperature: float) -> list[str]:
        if not inputs:
            return []
        prefix, template = chat_parts(self.lm.tokenizer, system, instruction)
        suffixes = [template.format(x) for x in inputs]
        return generate(self.lm, prefix, suffixes, max_new_tokens, self.batch_size, temperature=temperature, seed=self.seed)

    def propositions(self, sentences: Sequence[str], max_new_tokens: int = 256) -> list[list[str]]:
        """Each sentence's propositions (possibly none, when the model writes nothing usable)."""
        raw = self._run(PROPOSITION_SYSTEM, PROPOSITION_INSTRUCTION, sentences, max_new_tokens, self.temperature)
        return [parse_propositions(r) for r in raw]

    def titles(self, passages: Sequence[str], max_new_tokens: int = 32, max_words: int = 200) -> list[str]:
        """A short title per passage (greedy); passages are cut to their first ``max_words`` words."""
        cut = [" ".join(p.split()[:max_words]) for p in passages]
        return [parse_title(r) for r in self._run(HEADER_SYSTEM, HEADER_INSTRUCTION, cut, max_new_tokens, 0.0)]
