"""The knob cases (tests/knobs.py) of the triple branch (the default run): chunk, embed, rank,
train_scorer, generate and evaluate."""

from tests.knobs import branch_tests

repo, test_the_knob_changes_what_its_stage_writes, test_an_execution_param_leaves_the_result_as_it_was = branch_tests("triple")
