"""The one cross-encoder and its one training loop, as the reranker and as the chunk scorer:
training lowers the listwise loss and moves the gold passage up on held-out lists."""

import numpy as np
import pytest

from biochunk.models import resolve
from biochunk.scoring import crossencoder
from biochunk.scoring.crossencoder import CrossEncoder, Group, Listwise
from biochunk.scoring.lora_scorer import Candidates, ChunkScorer, score
from biochunk.scoring.lora_scorer import train as train_scorer

ENZYMES = ["CYP3A4", "MAO-B", "COX-2", "ACE", "HMG-CoA reductase", "PDE5", "DPP-4", "xanthine oxidase",
           "carbonic anhydrase", "thrombin", "aromatase", "topoisomerase II"]  # fmt: skip
DRUGS = ["ketoconazole", "selegiline", "celecoxib", "lisinopril", "atorvastatin", "sildenafil", "sitagliptin",
         "allopurinol", "acetazolamide", "dabigatran", "letrozole", "etoposide"]  # fmt: skip


def _list(i: int) -> tuple[str, list[str]]:
    """A question and four passages; the first (the gold) says the drug inhibits the enzyme."""
    e, d = ENZYMES[i], DRUGS[i]
    other = DRUGS[(i + 5) % len(DRUGS)]
    return f"Which drug inhibits {e}?", [
        f"{d} inhibits {e} in human liver microsomes.",
        f"{e} expression was measured in {other}-treated patients.",
        f"{d} was given orally once a day for two weeks.",
        f"Patients on {other} reported headache and nausea.",
    ]


TRAIN, HELD_OUT = range(8), range(8, 12)


def _gold_rank(scores: list[np.ndarray]) -> float:
    """Mean rank (1 = first) of the gold passage, which is passage 0 of every list."""
    return float(np.mean([1 + int((s > s[0]).sum()) for s in scores]))


@pytest.fixture(scope="module")
def minilm() -> str:
    return resolve("minilm", "train_reranker.model")


@pytest.mark.slow
def test_as_reranker_training_lowers_the_loss_and_raises_the_gold(minilm):
    ce = crossencoder.load("minilm", max_length=64, seed=0)
    assert isinstance(ce, CrossEncoder)

    def ranks() -> float:
        out = []
        for i in HELD_OUT:
            q, ps = _list(i)
            out.append(crossencoder.predict(ce, [(q, p) for p in ps]))
        return _gold_rank(out)

    before = ranks()
    groups = [Group(q, ps[0], tuple(ps[1:])) for q, ps in map(_list, TRAIN)]
    losses = crossencoder.train_reranker(ce, groups, steps=40, batch_size=4, lr=1e-4, seed=0, head_lr=3e-3)
    assert np.mean(losses[-5:]) < np.mean(losses[:5]) - 0.3, losses
    after = ranks()
    assert after < before and after <= 1.5, (before, after)


@pytest.mark.slow
def test_as_chunk_scorer_an_untrained_model_keeps_the_prior_and_training_moves_the_gold_up(minilm):
    scorer = ChunkScorer("minilm", lora_r=8, max_length=64, seed=0)

    def cands(idx) -> list[Candidates]:
        # The dense prior prefers the wrong passage (index 1): the scorer has to learn to overrule it.
        return [Candidates(q, ps, [0.50, 0.55, 0.45, 0.40], [True, False, False, False]) for q, ps in map(_list, idx)]

    untrained = score(scorer, cands(HELD_OUT))
    prior = np.array([0.50, 0.55, 0.45, 0.40], np.float32) / 0.1
    assert all(np.allclose(s, prior) for s in untrained), "a zero head adds nothing to the cosine"
    stats = train_scorer(scorer, cands(TRAIN), steps=40, batch_size=4, lr=2e-3, seed=0)
    assert stats["last_loss"] < stats["first_loss"] - 0.3, stats
    assert _gold_rank(score(scorer, cands(HELD_OUT))) < _gold_rank(untrained) == 2.0


def test_one_training_loop_serves_both():
    # The scorer's lists carry a prior and a spread target; the reranker's a one-hot target.
    (lst,) = crossencoder.group_lists([Group("q", "p", ("n1", "n2"))])
    assert lst == Listwise("q", ("p", "n1", "n2"), (1.0, 0.0, 0.0))
    with pytest.raises(ValueError, match="no training lists"):
        crossencoder.train(None, [], 1, 1, 1e-3)  # type: ignore[arg-type]
