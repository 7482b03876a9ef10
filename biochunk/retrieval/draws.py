"""Samples drawn documents first: a seeded set of whole documents and every query about them.

``collection.subset`` draws queries first (the first n by id and a pool of their judged
documents); a study whose cost grows with the documents chunked (a generator that rewrites
every sentence, or titles every chunk) draws the documents instead, "n articles and their
questions" (``stages/sample_documents.py``).
"""

from __future__ import annotations

from biochunk.retrieval.collection import Collection, seeded_sample


def documents_first(coll: Collection, max_queries: int | None, max_documents: int | None, seed: int) -> Collection:
    """A seeded ``max_documents`` of ``coll``'s documents (``seeded_sample``, document order
    kept) and the queries judged on one of them, the first ``max_queries`` by id; their
    judgements keep the drawn documents only. ``None``: all of each."""
    keep = set(seeded_sample(coll.docs["doc_id"].astype(str).tolist(), max_documents, seed))
    docs = coll.docs[coll.docs["doc_id"].astype(str).isin(keep)].reset_index(drop=True)
    about = {q: {d: r for d, r in judged.items() if d in keep} for q, judged in coll.qrels.items()}
    queries = coll.eval_queries()
    queries = queries[queries["query_id"].astype(str).isin([q for q, r in about.items() if r])]
    queries = queries.sort_values("query_id").head(max_queries).reset_index(drop=True)
    qrels = {q: about[q] for q in queries["query_id"].astype(str)}
    return Collection(docs, queries, qrels, {}, qrels, coll.sources)
