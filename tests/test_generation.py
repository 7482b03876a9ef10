from biochunk.generation.prompts import Evidence, Example, build_prompt, parse_triples

RELS = ["TREATS", "INHIBITS"]


def test_parse_triples_canonicalises_relations_and_stops_at_prose():
    raw = " metformin | treats | type 2 diabetes\nwarfarin|INHIBITS|vitamin K\nThis means that...\nx | y | z"
    assert parse_triples(raw, RELS) == [("metformin", "TREATS", "type 2 diabetes"), ("warfarin", "INHIBITS", "vitamin K")]


def test_parse_keeps_unknown_relation_and_rejects_garbage():
    assert parse_triples("a | BINDS | b", RELS) == [("a", "BINDS", "b")]
    assert parse_triples("no triple here", RELS) == []
    assert parse_triples("a | b", RELS) == []


def test_prompt_has_shared_prefix_and_input_last():
    ex = Example("Metformin treats diabetes.", (Evidence("Metformin treats", ("TREATS",)),), (("Metformin", "TREATS", "diabetes"),))
    p1 = build_prompt("Aspirin inhibits COX-2.", [Evidence("Aspirin inhibits COX-2", ("INHIBITS",))], [ex], RELS)
    p2 = build_prompt("Other sentence.", [], [ex], RELS)
    prefix = p1[: p1.index("Sentence: Aspirin")]
    assert p2.startswith(prefix)
    assert "Relations: TREATS, INHIBITS" in prefix
    assert 'Evidence: "Aspirin inhibits COX-2" (relation: INHIBITS)' in p1
    assert p1.endswith("Triples:")
    assert "Triples: Metformin | TREATS | diabetes" in prefix
