"""The peer libraries' chunkers behind one signature, for the benchmarks that compare with them.

Needs requirements-bench.txt. A chunker under test maps texts to, per text, a list of
``(start, end, chunk text)`` as the library reports them; ``locate`` checks those offsets
against the text (``text[start:end] == chunk text``) and repairs the ones it can find.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

Spans = list[tuple[int, int, str]]
Run = Callable[[list[str]], list[Spans]]


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
