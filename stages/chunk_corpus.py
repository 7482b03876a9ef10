"""Stage chunk_corpus: one setting of a paper pipeline cuts the sampled corpus into chunks.

A setting is a chunk method with ``chunk.*`` overrides (``experiments/<paper>/params.yaml``)
on top of ``retrieve.chunk`` over ``chunk`` (the project's params.yaml); ``none`` keeps each
document whole, as one chunk; ``peer`` runs a peer library's chunker (``chunking.peers``,
sized in the embed model's tokens). The chunker is built as every branch builds it
(``chunking.build``), and the CHUNKS table keeps exact offsets into the documents.
``--report`` writes the chunk count and, for a peer, how many of its reported offsets were
exact, repaired or dropped.
"""

import logging
from pathlib import Path

import pandas as pd

from biochunk import cli, experiments, models, params, vectors
from biochunk.chunking import NO_CHUNKING, Document, build, chunk_table, models_used
from biochunk.chunking.peers import PeerChunker
from biochunk.chunking.sizing import make_counter
from biochunk.embedding import MemoEncoder, SentenceEncoder, VectorLookup
from biochunk.generation.rewrite import Rewriter
from biochunk.errors import UserError
from biochunk.io import CHUNKS, read_json, write_json, write_table
from biochunk.retrieval import collection
from biochunk.text.tokens import embedder_counter

log = logging.getLogger("chunk_corpus")


def whole_documents(docs: pd.DataFrame, counter) -> pd.DataFrame:
    """The ``none`` setting: each document one chunk whose id is the document's."""
    return pd.DataFrame(
        {"doc_id": docs["doc_id"], "chunk_id": docs["doc_id"], "text": docs["text"], "start": 0,
         "end": docs["text"].str.len(), "n_tokens": [counter(t) for t in docs["text"]], "method": NO_CHUNKING,
         "labels": [[] for _ in range(len(docs))], "metadata": "{}"}
    )  # fmt: skip


def main() -> None:
    ap = cli.ArgumentParser(description=__doc__)
    ap.add_argument("--data", required=True, type=Path, help="sampled retrieval folder (the sample stage's output)")
    ap.add_argument("--paper", required=True, type=Path, help="the paper's params file (experiments/<paper>/params.yaml)")
    ap.add_argument("--setting", required=True, help="a key of the paper's settings")
    ap.add_argument("--sample", help="which of the paper's samples (its dataset names the chunkers' domain files)")
    ap.add_argument("--report", type=Path, help="also write the chunk count (and a peer's offset repairs) here (JSON)")
    ap.add_argument("--units", type=Path, help="the embed_units stage's folder: sentence vectors to read instead of embedding")
    ap.add_argument("--out", required=True, type=Path, help="chunks (Parquet, CHUNKS)")
    ap.add_argument("--params", default="params.yaml")
    args = ap.parse_args()
    paper = experiments.load(args.paper)
    setting = experiments.setting(paper, args.setting)
    base = params.section("chunk", args.params)
    rp = params.section("retrieve", args.params)
    ep = params.section("embed", args.params)
    cp = setting.chunk_params(base, rp.chunk)
    dataset = paper.sample_named(args.sample).dataset
    models.require([(ep.model, "embed.model"), *(models_used(cp, ep.model) if cp else [])])
    encoder = MemoEncoder(SentenceEncoder(ep.model, ep.batch_size, ep.device))
    if args.units is not None:
        if read_json(args.units / "identity.json") != encoder.identity():
            raise UserError(f"--units {args.units}: embedded by another encoder than embed.* names now; re-run embed_units")
        encoder = VectorLookup(encoder, *vectors.read(args.units / "vectors.parquet", "unit"))
    peer = None
    if setting.peer:  # built first: a wrong name or option stops the stage before any work
        options = {k: v for k, v in setting.overrides.items() if k != "peer"}
        try:
            peer = PeerChunker(setting.peer, embedder_counter(ep.model), encoder, **options)
        except UserError as e:
            raise UserError(f"{args.paper}: settings.{args.setting}: {e}") from None
    docs = collection.load(args.data, "retrieval").docs
    report = {}
    if peer is not None:
        chunker = peer
        chunks = chunk_table([Document(d, t) for d, t in zip(docs["doc_id"], docs["text"])], chunker)
        report = dict(chunker.located)
    elif cp is None:
        chunks = whole_documents(docs, make_counter(base.counter, encoder))
    else:
        chunker = build(cp, encoder, dataset=dataset, rewriter=Rewriter)
        chunks = chunk_table([Document(d, t) for d, t in zip(docs["doc_id"], docs["text"])], chunker)
    write_table(chunks, args.out, CHUNKS)
    if args.report is not None:
        write_json({"chunks": len(chunks), **report}, args.report)
    missed = f", {encoder.misses} texts not in --units embedded here" if isinstance(encoder, VectorLookup) else ""
    log.info("%s: %d documents -> %d chunks%s", args.setting, len(docs), len(chunks), missed)


if __name__ == "__main__":
    cli.run(main)
