"""Answer metrics: ROUGE-2 (rouge-score), ROUGE-SU4 (here), BERTScore (bert-score).

ROUGE-SU4 is what the BioASQ challenge reports beside ROUGE-2: skip-bigrams whose two
words are at most 4 words apart in between (ROUGE-1.5.5 ``-2 4 -u``), plus unigrams.
rouge-score does not offer it, so it is counted here with rouge-score's own tokenizer
(lower-cased, punctuation dropped, Porter-stemmed), so that both ROUGE variants see the
same tokens.

Several references per question (BioASQ ideal answers): ROUGE takes the reference
with the best F1, as rouge-score's ``score_multi`` does; bert-score takes the maximum
of each of P, R and F1 over the references.
"""

from __future__ import annotations

import logging
import re
from collections import Counter
from dataclasses import dataclass
from typing import Sequence

import numpy as np

log = logging.getLogger(__name__)

SU4_MAX_GAP = 4  # words allowed between the two words of a skip-bigram

# A non-response in the model's own words: the context (or the model) lacks the answer; the
# reply qa.decline asks for (generation.qa.DECLINE_REPLY) is one. Written for the replies
# small chat models give; an answer that hedges but still answers ("probably X") is an answer.
_DECLINE = re.compile(
    r"\bthe (?:context|passages?|text) (?:does|do) not (?:say|mention|state|provide|contain|specify|include|give|answer)"
    r"|\b(?:is|are|was|were) not (?:mentioned|stated|provided|given|specified|discussed|addressed)\b"
    r"|\b(?:no|not enough|insufficient) information\b"
    r"|\bi (?:do not|don't|cannot|can't|am unable to) (?:know|answer|determine|find|tell)\b"
    r"|\b(?:cannot|can't|unable to) (?:be )?(?:answer|determin)",
    re.IGNORECASE,
)


def declined(answer: str) -> bool:
    """A non-response: an empty answer, or one saying the context (or the model) lacks it.

    The clinical study's non-response rate is the share of such answers per chunk method.
    """
    return not answer.strip() or bool(_DECLINE.search(answer))


@dataclass(frozen=True)
class PRF:
    precision: float
    recall: float
    f1: float


def _prf(overlap: int, n_cand: int, n_ref: int) -> PRF:
    p = overlap / n_cand if n_cand else 0.0
    r = overlap / n_ref if n_ref else 0.0
    f = 2 * p * r / (p + r) if p + r else 0.0
    return PRF(p, r, f)


def _tokenizer():
    from rouge_score import tokenizers

    return tokenizers.DefaultTokenizer(use_stemmer=True)


def tokenize(text: str) -> list[str]:
    return _tokenizer().tokenize(text)


def su4_units(tokens: Sequence[str], max_gap: int = SU4_MAX_GAP) -> Counter:
    """Unigrams plus skip-bigrams ``(w_i, w_j)``, ``i < j``, with at most ``max_gap`` words between."""
    units: Counter = Counter((t,) for t in tokens)
    for i in range(len(tokens)):
        for j in range(i + 1, min(len(tokens), i + max_gap + 2)):
            units[(tokens[i], tokens[j])] += 1
    return units


def rouge_su4_tokens(candidate: Sequence[str], reference: Sequence[str], max_gap: int = SU4_MAX_GAP) -> PRF:
    c, r = su4_units(candidate, max_gap), su4_units(reference, max_gap)
    overlap = sum((c & r).values())
    return _prf(overlap, sum(c.values()), sum(r.values()))


def _best(scores: Sequence[PRF]) -> PRF:
    return max(scores, key=lambda s: s.f1) if scores else PRF(0.0, 0.0, 0.0)


def rouge_scores(candidates: Sequence[str], references: Sequence[Sequence[str]]) -> dict[str, np.ndarray]:
    """Per-answer ROUGE-2 and ROUGE-SU4 precision / recall / F1 (best reference each).

    Returns arrays keyed ``rouge2_precision``, ..., ``rougesu4_f1``, one value per answer.
    """
    from rouge_score import rouge_scorer

    if len(candidates) != len(references):
        raise ValueError(f"{len(candidates)} candidates but {len(references)} reference lists")
    tok = _tokenizer()
    scorer = rouge_scorer.RougeScorer(["rouge2"], use_stemmer=True)
    out: dict[str, list[float]] = {f"{m}_{k}": [] for m in ("rouge2", "rougesu4") for k in ("precision", "recall", "f1")}
    for cand, refs in zip(candidates, references):
        refs = [r for r in refs if r.strip()]
        r2 = _best([PRF(*scorer.score(ref, cand)["rouge2"]) for ref in refs])
        ct = tok.tokenize(cand)
        su4 = _best([rouge_su4_tokens(ct, tok.tokenize(ref)) for ref in refs])
        for name, s in (("rouge2", r2), ("rougesu4", su4)):
            out[f"{name}_precision"].append(s.precision)
            out[f"{name}_recall"].append(s.recall)
            out[f"{name}_f1"].append(s.f1)
    return {k: np.asarray(v, dtype=np.float64) for k, v in out.items()}


def bertscore(
    candidates: Sequence[str], references: Sequence[Sequence[str]], model_path: str, num_layers: int, batch_size: int = 64
) -> dict[str, np.ndarray]:
    """Per-answer BERTScore P/R/F1; with several references bert-score keeps the best of each.

    ``model_path``: a local folder (the offline MiniLM) or a hub id; ``num_layers``: the
    layer whose embeddings are compared. No baseline rescaling: bert-score ships no
    baseline file for a local model. An empty answer scores 0 (BERTScore of an empty
    string is undefined; bert-score would warn and return 0 as well).
    """
    import bert_score

    n = len(candidates)
    out = {k: np.zeros(n) for k in ("bertscore_precision", "bertscore_recall", "bertscore_f1")}
    keep = [i for i in range(n) if candidates[i].strip() and any(r.strip() for r in references[i])]
    if not keep:
        return out
    cands = [candidates[i] for i in keep]
    refs = [[r for r in references[i] if r.strip()] for i in keep]
    p, r, f = bert_score.score(
        cands, refs, model_type=model_path, num_layers=num_layers, lang="en", batch_size=batch_size, verbose=False
    )
    for name, t in (("bertscore_precision", p), ("bertscore_recall", r), ("bertscore_f1", f)):
        out[name][keep] = t.numpy()
    return out
