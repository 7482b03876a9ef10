"""Biomedical chunking (issue 4): entity-aware windows, tiered triggers, relation hierarchy,
propositions, and the hybrid chunk pool with its selection rule.

Modules, each usable alone:

- ``words``: whitespace words with offsets, the suffix normaliser, function words
- ``entities``: entity spans (pattern rules, or spaCy NER)
- ``windows``: 8-word / stride-3 windows that never cut an entity
- ``triggers``: the per-dataset trigger lexicon (``configs/triggers/<dataset>.yaml``)
- ``hierarchy``: relation weights (``configs/hierarchy/<dataset>.yaml``)
- ``propositions``: trigger + nearest arguments, with priorities
- ``hybrid``: the ``hybrid`` chunker (the candidate pool)
- ``selection``: the order in which a retrieved pool is used
- ``induce``: a trigger lexicon induced from a training split
"""
