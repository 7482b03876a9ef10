import numpy as np
import pandas as pd

from biochunk.retrieval.dense import build_index, search
from biochunk.retrieval.rank import rank_inputs


def _unit(v):
    v = np.asarray(v, np.float32)
    return v / np.linalg.norm(v, axis=1, keepdims=True)


def test_search_orders_by_cosine_and_excludes():
    chunks = _unit([[1, 0], [0.9, 0.1], [0, 1]])
    index = build_index(chunks)
    scores, ids = search(index, _unit([[1, 0]]), 2)
    assert ids[0].tolist() == [0, 1] and scores[0, 0] > scores[0, 1]
    _, ids = search(index, _unit([[1, 0]]), 2, exclude=[{0}])
    assert ids[0].tolist() == [1, 2]


def test_training_inputs_never_retrieve_their_own_sentence():
    chunks = _unit([[1, 0], [0.8, 0.2], [0, 1]])
    inputs = pd.DataFrame({"id": ["a", "t"], "split": ["train", "test"]})
    df = rank_inputs(build_index(chunks), inputs, _unit([[1, 0], [1, 0]]), ["a#0", "a#1", "b#0"], ["a", "a", "b"], k=2)
    train = df[df.input_id == "a"]
    assert train.chunk_id.tolist() == ["b#0"]  # only one admissible chunk remains
    assert df[df.input_id == "t"].chunk_id.tolist() == ["a#0", "a#1"]


def test_hybrid_pool_selection_gives_a_proposition_slot_two():
    import json

    from biochunk.retrieval.rank import pool_selector

    meta = [
        json.dumps({"kind": "fixed", "priority": 0}),
        json.dumps({"kind": "fixed", "priority": 0}),
        json.dumps({"kind": "proposition", "priority": 6, "tier": 1, "structural": 0.9}),
    ]
    chunks = _unit([[1, 0], [0.95, 0.05], [0.9, 0.1]])
    inputs = pd.DataFrame({"id": ["q"], "split": ["test"]})
    sel = pool_selector(meta, "bias", top_n=5, k=2)
    df = rank_inputs(build_index(chunks), inputs, _unit([[1, 0]]), ["a", "b", "c"], ["x", "y", "z"], k=2, selector=sel, depth=5)
    assert df.chunk_id.tolist() == ["a", "c"]  # the proposition displaces the second most similar
    plain = rank_inputs(build_index(chunks), inputs, _unit([[1, 0]]), ["a", "b", "c"], ["x", "y", "z"], k=2)
    assert plain.chunk_id.tolist() == ["a", "b"]
    assert pool_selector([json.dumps({})] * 3, "bias", 5, 2) is None  # non-hybrid chunks: dense order stands


def test_cap_per_doc_moves_the_overflow_behind() -> None:
    from biochunk.retrieval.rank import cap_per_doc

    docs = ["a", "a", "b", "a", "c"]
    assert cap_per_doc([0, 1, 2, 3, 4], docs, 1) == [0, 2, 4, 1, 3]
    assert cap_per_doc([0, 1, 2, 3, 4], docs, 2) == [0, 1, 2, 4, 3]
    assert cap_per_doc([3, 1, 0], docs, 1) == [3, 1, 0], "the top-k is never left short"


def test_rank_inputs_caps_chunks_per_source_sentence():
    chunks = _unit([[1, 0], [0.99, 0.01], [0.98, 0.02], [0.5, 0.5]])
    inputs = pd.DataFrame({"id": ["q"], "split": ["test"]})
    args = (build_index(chunks), inputs, _unit([[1, 0]]), ["a#0", "a#1", "a#2", "b#0"], ["a", "a", "a", "b"])
    assert rank_inputs(*args, k=2).chunk_id.tolist() == ["a#0", "a#1"]
    assert rank_inputs(*args, k=2, depth=4, max_per_doc=1).chunk_id.tolist() == ["a#0", "b#0"]
