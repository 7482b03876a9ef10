"""The knob cases (tests/knobs.py) of the QA branch (qa_context, generate_qa, evaluate_qa) and the
retrieval branch's train_reranker."""

from tests.knobs import branch_tests

repo, test_the_knob_changes_what_its_stage_writes, test_an_execution_param_leaves_the_result_as_it_was = branch_tests("qa")
