"""The knob cases (tests/knobs.py) of compare, the stage that compares chunk methods on a user's
corpus (data.local): sizes, BM25, dense and hybrid retrieval with intervals, and a reranker,
which compare_reranker trains."""

from tests.knobs import branch_tests

repo, test_the_knob_changes_what_its_stage_writes, test_an_execution_param_leaves_the_result_as_it_was = branch_tests("compare")
