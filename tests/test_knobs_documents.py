"""The knob cases (tests/knobs.py) of the long-document and classification branches: chunk_docs
and classify."""

from tests.knobs import branch_tests

repo, test_the_knob_changes_what_its_stage_writes, test_an_execution_param_leaves_the_result_as_it_was = branch_tests("documents")
