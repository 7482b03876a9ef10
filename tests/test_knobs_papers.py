"""The knob cases (tests/knobs.py) of the paper pipelines' stages (experiments/<paper>/dvc.yaml):
sample, sample_documents, embed_units, chunk_corpus, search, search_bm25, evaluate_retrieval, the
clinical study's LLM judge (judge_qa), the long-document and document-retrieval reports and the
structural, semchunk, clinical and BioASQ reports (report@<paper>), with the params of params.yaml
and of a paper's own files (paper:sample.*, paper:setting, judge.*, runs:*, and the BioASQ runs'
<file>:<key>)."""

from tests.knobs import branch_tests

repo, test_the_knob_changes_what_its_stage_writes, test_an_execution_param_leaves_the_result_as_it_was = branch_tests("papers")
