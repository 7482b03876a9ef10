"""Token counting in the embedder's own tokens, with character offsets.

A chunk that must fit an embedder's window is measured in that embedder's tokens.
Fast (Rust) tokenizers also return each token's character offsets, so a chunker
can tokenise a document once and measure any span of it by bisecting the offsets
instead of tokenising every candidate span again.
"""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING

from biochunk.errors import UserError
from biochunk.models import offline_mode, resolve

if TYPE_CHECKING:
    import tokenizers


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
