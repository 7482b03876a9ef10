import numpy as np
import pandas as pd
import pytest

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
    df = rank_inputs(build_index(chunks), inputs, _unit([[1, 0], [1, 0]]), ["a#0", "a#1", "b#0"], ["a", "a", "b"], depth=2)
    train = df[df.input_id == "a"]
    assert train.chunk_id.tolist() == ["b#0"]  # only one admissible chunk remains
    assert df[df.input_id == "t"].chunk_id.tolist() == ["a#0", "a#1"]


def _pool_fixture():
    """Six memory chunks; the five most similar to the query hold a proposition at rank 4."""
    import json

    kinds = ["fixed", "window", "window", "proposition", "fixed", "proposition"]
    structural = [0.0, 0.1, 0.2, 0.9, 0.0, 1.0]
    meta = [
        json.dumps({"kind": k, "priority": 6 if k == "proposition" else 0, "tier": 1 if k == "proposition" else None, "structural": st})
        for k, st in zip(kinds, structural)
    ]
    angles = np.radians([0, 10, 20, 30, 40, 80])  # cosines 1, .985, .940, .866, .766, .174
    chunks = np.stack([np.cos(angles), np.sin(angles)], axis=1).astype(np.float32)
    ids = ["c1", "c2", "c3", "c4", "c5", "c6"]
    return meta, chunks, ids


@pytest.mark.parametrize(
    "selection, passed_on",
    [
        ("bias", ["c1", "c4"]),  # slot 2: the proposition at cosine rank 4
        ("cosine", ["c1", "c2"]),  # the two most similar; the proposition is not passed on
        # 0.7 cos + 0.3 structural: c4 .876, c1 .700, c2 .720, c3 .718, c5 .536 (c6 is outside the pool)
        ("mixed", ["c4", "c2"]),
    ],
)
def test_selection_decides_the_two_chunks_passed_on(selection, passed_on):
    from biochunk.retrieval.rank import pool_selector

    meta, chunks, ids = _pool_fixture()
    inputs = pd.DataFrame({"id": ["q"], "split": ["test"]})
    sel = pool_selector(meta, selection, top_n=5)
    pool = rank_inputs(build_index(chunks), inputs, _unit([[1, 0]]), ids, ids, depth=5, selector=sel)
    assert len(pool) == 5 and "c6" not in set(pool.chunk_id), "the pool is the five most similar"
    assert pool[pool["rank"] <= 2].chunk_id.tolist() == passed_on
    if selection == "mixed":
        cos = dict(zip(ids, chunks[:, 0]))
        st = dict(zip(ids, [0.0, 0.1, 0.2, 0.9, 0.0, 1.0]))
        mixed = [0.7 * cos[c] + 0.3 * st[c] for c in pool.chunk_id]
        assert mixed == sorted(mixed, reverse=True), "mixed orders the whole pool by 0.7 cos + 0.3 structural"
    # The score column stays the cosine whatever the order, for the scorer to build on.
    assert np.allclose(pool.score, [float(chunks[ids.index(c), 0]) for c in pool.chunk_id], atol=1e-5)


def test_without_hybrid_metadata_the_cosine_order_stands():
    import json

    from biochunk.retrieval.rank import pool_selector

    assert pool_selector([json.dumps({})] * 3, "bias", 5) is None


def test_relation_queries_average_the_gold_definitions_and_fall_back_to_the_sentence():
    from biochunk.retrieval.rank import relation_queries

    sent = _unit([[1, 0, 0], [0, 1, 0]])
    rel = _unit([[0, 0, 1], [0, 1, 1]])
    q, fell_back = relation_queries(["a", "b"], sent, {"a": {"r1", "r2"}, "b": {"unknown"}}, ["r1", "r2"], rel)
    expected = (rel[0] + rel[1]) / np.linalg.norm(rel[0] + rel[1])
    assert np.allclose(q[0], expected) and np.allclose(q[1], sent[1]) and fell_back == 1


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
    assert rank_inputs(*args, depth=2).chunk_id.tolist() == ["a#0", "a#1"]
    assert rank_inputs(*args, depth=2, max_per_doc=1).chunk_id.tolist() == ["a#0", "b#0"]


# -- dense backends: TorchIndex (torch on CPU/CUDA) against FAISS flat ----------------------


def _random_unit(n: int, d: int, seed: int) -> np.ndarray:
    return _unit(np.random.default_rng(seed).standard_normal((n, d)))


def _same_topk(a_s, a_i, b_s, b_i, tol=1e-5):
    """Scores agree to ``tol``; ids agree wherever the score is not tied within ``tol``."""
    np.testing.assert_allclose(a_s, b_s, atol=tol)
    for r in range(len(a_i)):
        for c in range(a_i.shape[1]):
            tied = np.sum(np.abs(a_s[r] - a_s[r, c]) < tol) > 1
            assert tied or a_i[r, c] == b_i[r, c], (r, c)


@pytest.mark.parametrize("block_scores", [1 << 26, 40_000, 7])  # one block, 20 blocks, one query x k scores
def test_torch_index_matches_faiss_flat(block_scores: int) -> None:
    from biochunk.retrieval.dense import TorchIndex

    docs, queries = _random_unit(3_000, 32, 0), _random_unit(257, 32, 1)
    flat = build_index(docs)
    torch_index = TorchIndex(docs, "cpu", block_scores=block_scores)
    assert torch_index.ntotal == flat.ntotal == 3_000
    _same_topk(*torch_index.search(queries, 20), *flat.search(queries, 20))
    # Through the shared search(), with leave-one-out exclusions too.
    exclude = [set(range(r, r + 5)) for r in range(len(queries))]
    _same_topk(*search(torch_index, queries, 10, exclude), *search(flat, queries, 10, exclude))


def test_torch_index_pads_like_faiss_when_k_exceeds_the_memory() -> None:
    from biochunk.retrieval.dense import TorchIndex

    s, i = TorchIndex(_random_unit(3, 8, 0)).search(_random_unit(2, 8, 1), 5)
    assert (i[:, 3:] == -1).all() and np.isneginf(s[:, 3:]).all() and (i[:, :3] >= 0).all()
    assert TorchIndex(_random_unit(3, 8, 0)).search(np.zeros((0, 8), np.float32), 5)[1].shape == (0, 5)


def test_backend_choice_follows_use_gpu(monkeypatch) -> None:
    import torch

    from biochunk.errors import UserError
    from biochunk.retrieval import dense

    monkeypatch.setattr(dense, "_faiss", lambda: None)  # the GPU box: torch, no faiss
    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)
    assert dense.gpu_backend("auto") == dense.gpu_backend("yes") == "torch-cuda"
    assert dense.gpu_backend("no") is None
    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    assert dense.gpu_backend("auto") is None
    with pytest.raises(UserError, match="use_gpu is yes but there is no CUDA device"):
        dense.gpu_backend("yes")
    flat = build_index(_random_unit(10, 4, 0))
    assert dense.to_device(flat, "auto") is flat and dense.backend_of(flat) == "torch-cpu"


def test_flat_search_without_faiss(monkeypatch) -> None:
    from biochunk.errors import UserError
    from biochunk.retrieval import dense

    docs, queries = _random_unit(500, 16, 2), _random_unit(20, 16, 3)
    with_faiss = dense.dense_run(docs, [f"d{i}" for i in range(500)], queries, [f"q{i}" for i in range(20)], 5, use_gpu="no")
    monkeypatch.setattr(dense, "_faiss", lambda: None)
    index = dense.build_index(docs)
    assert isinstance(index, dense.TorchIndex)
    without = dense.dense_run(docs, [f"d{i}" for i in range(500)], queries, [f"q{i}" for i in range(20)], 5, use_gpu="no")
    assert [[d for d, _ in v] for v in without.values()] == [[d for d, _ in v] for v in with_faiss.values()]
    with pytest.raises(UserError, match="needs faiss"):
        dense.build_index(docs, "hnsw")
    with pytest.raises(UserError, match="needs faiss"):
        dense.load_index("chunks.faiss")


def test_a_torch_index_saves_as_a_faiss_flat_file(tmp_path) -> None:
    from biochunk.retrieval.dense import TorchIndex, load_index, save_index

    docs, queries = _random_unit(100, 8, 4), _random_unit(5, 8, 5)
    save_index(TorchIndex(docs), tmp_path / "chunks.faiss")
    _same_topk(*load_index(tmp_path / "chunks.faiss", "no").search(queries, 3), *TorchIndex(docs).search(queries, 3))
