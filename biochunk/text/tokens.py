"""Token counting in the embedder's own tokens, with character offsets.

A chunk that must fit an embedder's window is measured in that embedder's tokens.
Measuring many candidate spans of one document must not tokenise them again and
again. Tokenising the whole document once and bisecting the token offsets is not
enough either: on 2 CPU cores one ``encode`` of the 122 PLOS articles alone takes
longer than a whole recursive chunker is allowed (``benchmarks/chunking_speed.py``).
For the tokenizers of BERT-family embedders (MiniLM, PubMedBERT, MedCPT, BGE) every
whitespace-separated word is tokenised on its own, so a document's count is the sum
of its words' counts: each distinct word is tokenised once (cached across
documents), and ``biochunk.text.counting.WordTable`` counts any span by bisecting
the word offsets. Other tokenizers count each span on its own.
"""

from __future__ import annotations

import json
import re
from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING, Callable

from biochunk.errors import UserError
from biochunk.models import offline_mode, resolve
from biochunk.text.counting import SpanCounter, Standalone, WordTable

if TYPE_CHECKING:
    import tokenizers

# Pre-tokenizers that cut at every whitespace character and add nothing around a
# word (no "Ġ" or "▁" prefix, unlike byte-level BPE and SentencePiece), and
# normalizers that work character by character: together they tokenise each
# whitespace-separated word independently of its neighbours.
SEPARABLE_PRE_TOKENIZERS = {"BertPreTokenizer", "Whitespace", "WhitespaceSplit"}
SPLITS_FURTHER = {"Punctuation", "Digits"}  # may follow a whitespace splitter in a Sequence
PER_CHARACTER_NORMALIZERS = {"BertNormalizer", "Lowercase", "StripAccents", "NFD", "NFKD", "NFC", "NFKC"}
# Control characters that str.split treats as whitespace but BERT's normalizer deletes
# (joining their neighbours): a document containing one is counted span by span.
_AMBIGUOUS = re.compile("[\x0b\x0c\x1c-\x1f\x85]")
# Distinct words kept; the cache starts over beyond this (~40 MB).
WORD_CACHE_SIZE = 1 << 18


def separable(tokenizer: "tokenizers.Tokenizer") -> bool:
    """Whether the tokenizer tokenises whitespace-separated words independently."""
    cfg = json.loads(tokenizer.to_str())

    def types(node: dict | None, key: str) -> list[str]:
        if node is None:
            return []
        return [t for sub in node[key] for t in types(sub, key)] if node["type"] == "Sequence" else [node["type"]]

    pre = types(cfg.get("pre_tokenizer"), "pretokenizers")
    norm = types(cfg.get("normalizer"), "normalizers")
    # An added token that contains whitespace would join words (matched before pre-tokenization).
    added = [t.get("content", "") for t in cfg.get("added_tokens") or []]
    return (
        bool(pre)
        and pre[0] in SEPARABLE_PRE_TOKENIZERS
        and set(pre) <= SEPARABLE_PRE_TOKENIZERS | SPLITS_FURTHER
        and set(norm) <= PER_CHARACTER_NORMALIZERS
        and not any(len(t.split()) != 1 for t in added)
    )


class _WordCounts(dict):
    """word -> tokens; a missing word is tokenised once."""

    def __init__(self, count: Callable[[str], int]) -> None:
        super().__init__()
        self._count = count

    def __missing__(self, word: str) -> int:
        if len(self) >= WORD_CACHE_SIZE:
            self.clear()
        n = self[word] = self._count(word)
        return n


class EmbedderCounter:
    """A ``TokenCounter``: the number of tokens the embedder sees, without special tokens.

    [CLS] and [SEP] are left out, as semchunk and chonkie count, so a chunk of
    ``n`` tokens occupies ``n + 2`` positions of a BERT-style encoder's window.
    """

    def __init__(self, tokenizer: "tokenizers.Tokenizer", name: str = "") -> None:
        # The MiniLM package's tokenizer.json truncates and pads to 128: without these
        # two calls every text counts as 128 tokens (see docs/offline-models.md).
        tokenizer.no_truncation()
        tokenizer.no_padding()
        self.tokenizer = tokenizer
        self.name = name
        self.separable = separable(tokenizer)
        self.words = _WordCounts(self)

    def for_document(self, text: str) -> SpanCounter:
        """A ``SpanCounter`` of ``text``: exact counts of any span, tokenising each distinct word once."""
        if self.separable and not _AMBIGUOUS.search(text):
            return WordTable(text, self.words)
        return Standalone(self, text)

    def __call__(self, text: str) -> int:
        return len(self.tokenizer.encode(text, add_special_tokens=False).ids)

    def __repr__(self) -> str:
        return f"EmbedderCounter({self.name!r})"

    def token_offsets(self, text: str) -> list[tuple[int, int]]:
        """``(start, end)`` character offsets of each token of ``text``, in order."""
        return self.tokenizer.encode(text, add_special_tokens=False).offsets

    @property
    def max_token_chars(self) -> int:
        """Characters in the longest vocabulary entry (semchunk uses it to skip long counts)."""
        return max(len(t) for t in self.tokenizer.get_vocab())


@lru_cache(maxsize=8)
def embedder_counter(model: str = "minilm", param: str = "embed.model") -> EmbedderCounter:
    """The token counter of an embedder: an offline alias (``minilm``), a local path or a hub id.

    Loads only the tokenizer (``tokenizer.json``, milliseconds), never the weights.
    """
    offline_mode()
    import tokenizers

    where = resolve(model, param)
    path = Path(where)
    file = path if path.is_file() else path / "tokenizer.json"
    if file.is_file():
        return EmbedderCounter(tokenizers.Tokenizer.from_file(str(file)), model)
    try:
        from transformers import AutoTokenizer

        tok = AutoTokenizer.from_pretrained(where)
    except (OSError, ValueError) as e:
        raise UserError(f"{param}: cannot load a tokenizer for {model!r}: {e}".replace("\n", " ")) from None
    backend = getattr(tok, "backend_tokenizer", None)
    if backend is None:
        raise UserError(f"{param}: {model!r} has no fast tokenizer; token counting with offsets needs one")
    return EmbedderCounter(tokenizers.Tokenizer.from_str(backend.to_str()), model)
