"""semchunk: recursive splitting at the most meaningful splitter, measured in the embedder's tokens."""

from __future__ import annotations

from functools import lru_cache
from typing import Any

from biochunk.chunking.base import Chunker, RewriterFactory, register
from biochunk.chunking.sizing import make_counter
from biochunk.text.counting import TokenCounter, count_words

# semchunk's chunk size when chunk.max_tokens is null: the window of the default
# embedder (all-MiniLM-L6-v2 reads 256 positions).
DEFAULT_CHUNK_SIZE = 256


@register("semchunk")
class SemchunkChunker(Chunker):
    """Chunks of at most ``chunk_size`` tokens from the ``semchunk`` library.

    Source: semchunk (Isaacus, https://github.com/isaacus-dev/semchunk): splits at
    the most structurally meaningful splitter present (newline runs, tabs,
    whitespace runs, sentence terminators, clause punctuation, ... characters) and
    merges the parts back up to the chunk size. Offsets come from semchunk itself
    (``offsets=True``); the whitespace it splits at falls outside every chunk, so
    chunks cover every non-whitespace character but never overlap.

    ``chunk_size`` is also the hard maximum (``max_tokens``). From params the counter
    is always the embedder's tokenizer (``chunk.counter`` does not apply): semchunk's
    point is to fill the embedder's window.
    """

    # Needs the encoder only for its model name (the tokenizer); no weights are loaded.
    needs_encoder = True

    def __init__(self, chunk_size: int = DEFAULT_CHUNK_SIZE, counter: TokenCounter = count_words) -> None:
        super().__init__(counter, chunk_size)
        import semchunk

        # semchunk counts the same pieces many times, so it memoises its counter, but in
        # a process-wide table that outlives the chunker; keep the cache on the instance.
        self._chunker = semchunk.chunkerify(
            counter, chunk_size, max_token_chars=getattr(counter, "max_token_chars", None), memoize=False
        )
        self._chunker.token_counter = lru_cache(maxsize=1 << 16)(self._chunker.token_counter)

    @classmethod
    def from_params(cls, params: Any, encoder: Any = None, rewriter: RewriterFactory | None = None) -> "SemchunkChunker":
        if encoder is None:
            raise ValueError("chunk.method semchunk counts the embedder's tokens, so it needs the encoder (embed.model)")
        size = DEFAULT_CHUNK_SIZE if params.max_tokens is None else params.max_tokens
        return cls(chunk_size=size, counter=make_counter("embedder", encoder))

    def spans(self, text: str) -> list[tuple[int, int, dict[str, Any]]]:
        _, offsets = self._chunker(text, offsets=True)
        return [(s, e, {}) for s, e in offsets]
