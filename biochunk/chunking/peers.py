"""Peer libraries' chunkers behind this project's ``Chunker`` interface, to compare with.

A paper pipeline's setting ``{method: peer, peer: <name>, max_tokens: N, ...}`` runs one of
them (``semchunk``, ``langchain``: RecursiveCharacterTextSplitter, ``chonkie-recursive``,
``chonkie-semantic``), sized in tokens of the embedder's own tokenizer, so every row of a
comparison counts alike. The libraries are optional (``requirements-bench.txt``) and
imported only when a peer runs. A peer reports offsets of its own; ``locate`` checks them
against the text (``text[start:end] == chunk text``) and repairs what it can find, so the
chunks carry exact offsets like ours, and the counts of repaired and dropped chunks are kept
(``PeerChunker.located``) for the stage's report.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from biochunk.chunking.base import Chunk, Chunker
from biochunk.errors import UserError

Spans = list[tuple[int, int, str]]
Run = Callable[[list[str]], list[Spans]]

PEERS = ("semchunk", "langchain", "chonkie-recursive", "chonkie-semantic")
# Options of a peer setting besides its name: the token budget (every peer), LangChain's
# overlap, chonkie SemanticChunker's similarity threshold and window.
OPTIONS = ("max_tokens", "overlap", "threshold", "window")
DEFAULTS = {"max_tokens": 256, "overlap": 0, "threshold": 0.8, "window": 3}
LABELS = {
    "semchunk": "semchunk 4.1.1 (library)",
    "langchain": "LangChain RecursiveCharacterTextSplitter",
    "chonkie-recursive": "chonkie RecursiveChunker",
    "chonkie-semantic": "chonkie SemanticChunker",
}


def chonkie_recursive(size: int, tokenizer: Any = "character") -> Run:
    from chonkie import RecursiveChunker as Chonkie

    def run(texts: list[str]) -> list[Spans]:
        c = Chonkie(tokenizer=tokenizer, chunk_size=size)
        return [[(k.start_index, k.end_index, k.text) for k in c.chunk(t)] for t in texts]

    return run


def chonkie_semantic(size: int, model: Any, threshold: float = 0.8, window: int = 3) -> Run:
    """chonkie's SemanticChunker on an already loaded sentence-transformers ``model`` (no hub access);
    its sizes are counted by the model's own tokenizer."""
    from chonkie import SemanticChunker
    from chonkie.embeddings import SentenceTransformerEmbeddings

    def run(texts: list[str]) -> list[Spans]:
        c = SemanticChunker(
            embedding_model=SentenceTransformerEmbeddings(model), chunk_size=size, threshold=threshold, similarity_window=window
        )
        return [[(k.start_index, k.end_index, k.text) for k in c.chunk(t)] for t in texts]

    return run


def semchunk_chunker(size: int, counter: Callable[[], Callable[[str], int]]) -> Run:
    import semchunk

    def run(texts: list[str]) -> list[Spans]:
        count = counter()
        fresh = lambda t: count(t)  # (semchunk memoises per function: a new one per pass)
        c = semchunk.chunkerify(fresh, size)
        out = []
        for t in texts:
            chunks, offsets = c(t, offsets=True)
            out.append([(s, e, k) for k, (s, e) in zip(chunks, offsets)])
        # The memo lives in a process-wide table: drop it, or it outlives the pass (and slows what follows).
        semchunk.semchunk._memoized_token_counters.pop(fresh, None)
        return out

    return run


def langchain(size: int, overlap: int, counter: Callable[[], Callable[[str], int]]) -> Run:
    from langchain_text_splitters import RecursiveCharacterTextSplitter

    def run(texts: list[str]) -> list[Spans]:
        lc = RecursiveCharacterTextSplitter(
            chunk_size=size, chunk_overlap=overlap, length_function=counter(), add_start_index=True
        )
        out = []
        for t in texts:
            docs = lc.create_documents([t])
            out.append(
                [(d.metadata["start_index"], d.metadata["start_index"] + len(d.page_content), d.page_content) for d in docs]
            )
        return out

    return run


def locate(text: str, spans: Spans) -> tuple[Spans, int, int]:
    """Spans whose offsets hold their chunk text, with the count of those repaired and of those lost.

    A chunk whose reported offsets do not hold its text is looked for from the end of the
    previous chunk's start on (chunks come in document order), then anywhere; one that is not
    found at all is dropped (it cannot be judged against gold offsets) and counted.
    """
    out: Spans = []
    repaired = lost = 0
    cursor = 0
    for s, e, k in spans:
        if text[s:e] != k:
            i = text.find(k, cursor)
            i = text.find(k) if i < 0 else i
            if i < 0 or not k:
                lost += 1
                continue
            s, e = i, i + len(k)
            repaired += 1
        out.append((s, e, k))
        cursor = s
    return out, repaired, lost


class PeerChunker(Chunker):
    """A peer library's chunker as a ``Chunker``: exact offsets (``locate``), sizes in the
    counter's tokens. ``located`` counts the chunks the library reported, repaired and dropped."""

    name = "peer"

    def __init__(self, peer: str, counter: Any, encoder: Any = None, **options: Any) -> None:
        if peer not in PEERS:
            raise UserError(f"peer: unknown peer chunker {peer!r}; allowed: {', '.join(PEERS)}")
        unknown = sorted(set(options) - set(OPTIONS))
        if unknown:
            raise UserError(f"peer {peer}: unknown option {unknown[0]!r}; allowed: {', '.join(OPTIONS)}")
        o = {**DEFAULTS, **options}
        self.peer, self.counter, self.max_tokens = peer, counter, int(o["max_tokens"])
        self.method = f"peer:{peer}"
        size = self.max_tokens
        if peer == "semchunk":
            self.run = semchunk_chunker(size, lambda: counter)
        elif peer == "langchain":
            self.run = langchain(size, int(o["overlap"]), lambda: counter)
        elif peer == "chonkie-recursive":
            self.run = chonkie_recursive(size, counter.tokenizer)  # the counter's tokenizer, truncation off
        else:  # chonkie embeds on its own, with the encoder's loaded model
            self.run = chonkie_semantic(size, encoder.model, float(o["threshold"]), int(o["window"]))
        self.located = {"reported": 0, "repaired": 0, "dropped": 0}

    def chunk_batch(self, texts: Sequence[str]) -> list[list[Chunk]]:
        out = []
        for text, spans in zip(texts, self.run(list(texts))):
            kept, repaired, lost = locate(text, spans)
            self.located["reported"] += len(spans)
            self.located["repaired"] += repaired
            self.located["dropped"] += lost
            out.append([Chunk(k, s, e, self.counter(k), self.method) for s, e, k in kept])
        return out
