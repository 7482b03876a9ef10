"""biochunk/chunking/peers.py: a peer's reported offsets are checked against the text and repaired."""

from __future__ import annotations

from biochunk.chunking.peers import locate


def test_locate_keeps_exact_repairs_shifted_and_drops_unfound() -> None:
    text = "Alpha beta. Gamma delta. Alpha beta."
    spans = [
        (0, 11, "Alpha beta."),  # exact
        (11, 23, "Gamma delta."),  # one character early: found from the previous start on
        (0, 11, "Alpha beta."),  # reported at the first copy, but the chunks run in order: kept as reported
        (20, 30, "lowercased text"),  # a decoded chunk that is not in the text
        (0, 5, "Alpha beta."),  # wrong end: looked for from the previous start on
    ]
    kept, repaired, lost = locate(text, spans)
    assert kept == [(0, 11, "Alpha beta."), (12, 24, "Gamma delta."), (0, 11, "Alpha beta."), (0, 11, "Alpha beta.")]
    assert (repaired, lost) == (2, 1)
    assert all(text[s:e] == k for s, e, k in kept)
